/*
 * synth/scale_names.c — the sizes a capture's name states, as people name
 * their snapshots (gm_scale_sizes_from_name; docs/validation.md).
 *
 * A name is cut into tokens: runs of letters and digits, a '.' between two
 * digits kept ("2.7b").  A sequence length is a keyword glued to a number
 * or followed by one ("ctx512", "seq_1024", "seqlen2048", "cl2048", "sl256",
 * "len512", "context-4096"); a batch size likewise ("bs8", "b4", "batch_16",
 * "bsz32", "mbs2").  Two keywords of one dimension that disagree state
 * nothing.  Without a sequence keyword, a bare number ("_512_") is taken
 * as the sequence length only when it is the name's one number-like token
 * besides model sizes ("2.7b", "7b", "125m", "lm2.7b"), precisions
 * ("fp32", "bf16") and batch tokens, and from 16 to 2^24: "gpt2_512" or
 * "run3_512" state nothing, "lmmedium_512_train" states seq 512.  Being
 * wrong is worse than saying nothing: the caller can always give --at.
 */
#include "synth/scale_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define SN_TOKEN 64

/* 1 if tok (lowercase) is in the NULL-terminated list. */
static int sn_in(const char *tok, const char *const *list)
{
    for (size_t i = 0; list[i] != NULL; i++)
        if (strcmp(tok, list[i]) == 0)
            return 1;
    return 0;
}

static const char *const sn_seq_words[] = {"ctx", "context", "seq", "seqlen", "cl", "sl", "len",
                                           NULL};
static const char *const sn_batch_words[] = {"bs", "b", "batch", "bsz", "mbs", NULL};
static const char *const sn_precisions[] = {"fp32", "fp16", "bf16", "fp8", "fp64", "tf32",
                                            "int8", "int4", "e4m3", "e5m2", NULL};

/* The number that tok (all digits, at most 12 of them) spells; 0 if not. */
static uint64_t sn_number(const char *tok)
{
    size_t n = strlen(tok);
    if (n == 0 || n > 12)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)tok[i]))
            return 0;
        v = v * 10 + (uint64_t)(tok[i] - '0');
    }
    return v;
}

/* Split tok into a keyword (its leading letters) and the number after it:
 * the number, or 0 when tok is not letters then digits. */
static uint64_t sn_split(const char *tok, char *word, size_t len)
{
    size_t i = 0;
    while (tok[i] && isalpha((unsigned char)tok[i]))
        i++;
    if (i == 0 || i >= len)
        return 0;
    memcpy(word, tok, i);
    word[i] = '\0';
    return sn_number(tok + i);
}

/* A model size: letters (optional), digits, optionally '.' and digits,
 * then one of k m b t ("7b", "2.7b", "lm2.7b", "125m"). */
static int sn_model_size(const char *tok)
{
    size_t i = 0, n = strlen(tok);
    while (i < n && isalpha((unsigned char)tok[i]))
        i++;
    size_t d = i;
    while (i < n && (isdigit((unsigned char)tok[i]) || tok[i] == '.'))
        i++;
    return i > d && i + 1 == n && strchr("kmbt", tok[n - 1]) != NULL;
}

typedef struct sn_found {
    uint64_t v;
    int conflict;
    char tok[SN_TOKEN];
} sn_found_t;

static void sn_take(sn_found_t *f, uint64_t v, const char *tok, const char *next)
{
    if (v == 0 || v > (UINT64_C(1) << 40))
        return;
    if (f->v != 0 && f->v != v)
        f->conflict = 1;
    if (f->v == 0) {
        f->v = v;
        snprintf(f->tok, sizeof f->tok, "%s%s%s", tok, next ? "_" : "", next ? next : "");
    }
}

void gm_scale_sizes_from_name(const char *name, uint64_t *seq, uint64_t *batch, char *seq_tok,
                              char *batch_tok)
{
    *seq = *batch = 0;
    if (seq_tok)
        seq_tok[0] = '\0';
    if (batch_tok)
        batch_tok[0] = '\0';
    if (name == NULL)
        return;
    /* the tokens */
    enum { SN_MAX = 32 };
    char toks[SN_MAX][SN_TOKEN];
    size_t nt = 0;
    for (size_t i = 0; name[i] && nt < SN_MAX;) {
        if (!isalnum((unsigned char)name[i])) {
            i++;
            continue;
        }
        size_t j = 0;
        while (name[i] && j + 1 < SN_TOKEN &&
               (isalnum((unsigned char)name[i]) ||
                (name[i] == '.' && i > 0 && isdigit((unsigned char)name[i - 1]) &&
                 isdigit((unsigned char)name[i + 1]))))
            toks[nt][j++] = (char)tolower((unsigned char)name[i++]);
        toks[nt][j] = '\0';
        while (name[i] && isalnum((unsigned char)name[i])) /* an overlong token: cut */
            i++;
        nt++;
    }
    sn_found_t fs = {0}, fb = {0}, bare = {0};
    size_t numberlike = 0, nbare = 0;
    for (size_t t = 0; t < nt; t++) {
        const char *tok = toks[t];
        char word[SN_TOKEN];
        uint64_t v = sn_split(tok, word, sizeof word);
        const char *next = t + 1 < nt ? toks[t + 1] : NULL;
        if (v && sn_in(word, sn_seq_words)) {
            sn_take(&fs, v, tok, NULL);
        } else if (v && sn_in(word, sn_batch_words)) {
            sn_take(&fb, v, tok, NULL);
        } else if (sn_in(tok, sn_seq_words) && next && sn_number(next)) {
            sn_take(&fs, sn_number(next), tok, next);
            t++;
        } else if (sn_in(tok, sn_batch_words) && next && sn_number(next)) {
            sn_take(&fb, sn_number(next), tok, next);
            t++;
        } else if (sn_number(tok)) {
            nbare++;
            sn_take(&bare, sn_number(tok), tok, NULL);
        } else if (strpbrk(tok, "0123456789") && !sn_model_size(tok) &&
                   !sn_in(tok, sn_precisions)) {
            numberlike++;
        }
    }
    if (fs.v && !fs.conflict) {
        *seq = fs.v;
        if (seq_tok)
            snprintf(seq_tok, GM_SCALE_TOKEN, "%s", fs.tok);
    } else if (!fs.v && nbare == 1 && numberlike == 0 && bare.v >= 16 &&
               bare.v <= (UINT64_C(1) << 24)) {
        *seq = bare.v;
        if (seq_tok)
            snprintf(seq_tok, GM_SCALE_TOKEN, "%s", bare.tok);
    }
    if (fb.v && !fb.conflict) {
        *batch = fb.v;
        if (batch_tok)
            snprintf(batch_tok, GM_SCALE_TOKEN, "%s", fb.tok);
    }
}
