/*
 * base/text.h — the internal half of base/text.c: the fields of a separated
 * list (gm__text_field), an export's last check (gm__text_flushed), and
 * "did you mean" for every name a user types (verbs, long options, model
 * and device presets, policy names, policy parameters,
 * PYTORCH_CUDA_ALLOC_CONF keys).
 *
 * The distance is Damerau–Levenshtein in its optimal-string-alignment form
 * (insertions, deletions, substitutions and swaps of two neighbours cost
 * one each; Damerau 1964, Levenshtein 1966), compared without case, as git's
 * help.c does for its verbs.  A candidate is suggested when it is within
 * GM__SUGGEST_MAX_EDITS of the word (1 for a word of 3 characters or less,
 * so that "bfx" does not become "tlsf"), or when the word is the start of
 * that one candidate alone (a clear prefix, 3 characters or more).  The
 * nearest wins; candidates at the same distance are all named (up to
 * GM__SUGGEST_KEEP), so an ambiguous word gets a list, not a guess.
 */
#ifndef GM_BASE_TEXT_H
#define GM_BASE_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "gmsim/error.h"

#define GM__SUGGEST_MAX_EDITS 2
#define GM__SUGGEST_KEEP 4
#define GM__SUGGEST_MAX_LEN 64 /* longer words and candidates are never near */

/*
 * The optimal-string-alignment distance between a and b, ignoring ASCII
 * case, capped: any distance above `cap` is returned as cap + 1 (so the
 * work stops early).  Strings longer than GM__SUGGEST_MAX_LEN are cap + 1
 * away from everything but an equal string.
 */
size_t gm__text_distance(const char *a, const char *b, size_t cap);

/* A search for the names nearest to one word: init, add each candidate,
 * then read the result.  Candidates are borrowed (they must outlive the
 * search); the same text added twice counts once. */
typedef struct gm__suggest {
    const char *word;
    size_t limit;                           /* the most edits suggested */
    size_t best;                            /* distance of best[]; limit + 1: none */
    size_t nbest;
    const char *near[GM__SUGGEST_KEEP];     /* nearest, in the order added */
    size_t nprefix;                         /* candidates the word starts */
    const char *prefix;                     /* the first of them */
} gm__suggest_t;

void gm__suggest_init(gm__suggest_t *s, const char *word);
void gm__suggest_add(gm__suggest_t *s, const char *candidate);

/*
 * The suggestion, "'a'" or "'a' or 'b'" or "'a', 'b' or 'c'", written into
 * buf (len > 0) and returned; NULL (buf "") when nothing is near enough.
 * An exact match (distance 0) is no suggestion either: the caller knew it.
 */
const char *gm__suggest_text(const gm__suggest_t *s, char *buf, size_t len);

/* The one way a message asks: "; did you mean 'X'?" appended to the
 * message in msg (NUL-terminated, room len), when s has a suggestion.
 * Returns msg. */
char *gm__suggest_append(const gm__suggest_t *s, char *msg, size_t len);

/* The idx-th (from 0) of the sep-separated fields of list ("a|b|c", a
 * policy's choices; "x,y", a sweep's values) into buf (len > 0), cut to
 * fit; "" when list is NULL or has fewer fields. */
void gm__text_field(const char *list, char sep, size_t idx, char *buf, size_t len);

/* The end of an export to out: 0 when everything written reached it
 * (flushed, no stream error), else GM_EIO "cannot write WHAT: REASON"
 * (errno's text, or "output error"). */
int gm__text_flushed(FILE *out, const char *what, gm_error_t *err);

#endif
