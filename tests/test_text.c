/*
 * tests/test_text.c — the text helpers the library and the command line
 * share (gmsim/text.h): the strict unsigned 64-bit number rule, and errno
 * text lowercased; and "did you mean" (base/text.h): the edit distance and
 * the suggestion rules.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "gmsim/text.h"
#include "base/text.h"
#include "util.h"

Test(text, parse_u64_accepts_decimal_and_hex)
{
    static const struct {
        const char *text;
        uint64_t want;
    } cases[] = {
        {"0", 0}, {"007", 7}, {"42", 42}, {"0x0", 0}, {"0x7f0010", 0x7f0010},
        {"0XaBcD", 0xabcd}, {"18446744073709551615", UINT64_MAX},
        {"0xffffffffffffffff", UINT64_MAX}, {"0x0000000000000000001", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 1234;
        cr_expect_eq(gm_parse_u64(cases[i].text, &v), 0, "%s", cases[i].text);
        cr_expect_eq(v, cases[i].want, "%s", cases[i].text);
    }
}

Test(text, parse_u64_is_strict)
{
    static const char *const bad[] = {
        "", "0x", "0X", " 1", "1 ", "\t1", "+1", "-1", "0x-1", "0x+1", "0x 1", "0x0x10",
        "1e3", "12a", "0xg", "x10", "1.0", "١",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 1234;
        cr_expect_eq(gm_parse_u64(bad[i], &v), GM_U64_INVALID, "'%s'", bad[i]);
        cr_expect_eq(v, 1234, "'%s' leaves *out alone", bad[i]);
    }
    static const char *const big[] = {
        "18446744073709551616", "99999999999999999999999", "0x10000000000000000",
        "0x1ffffffffffffffff",
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        uint64_t v = 1234;
        cr_expect_eq(gm_parse_u64(big[i], &v), GM_U64_RANGE, "'%s'", big[i]);
        cr_expect_eq(v, 1234);
    }
}

Test(text, strerror_is_lowercase)
{
    char buf[128];
    const char *s = gm_errno_text(ENOENT, buf, sizeof buf);
    cr_expect_eq(s, buf);
    cr_expect(s[0] < 'A' || s[0] > 'Z', "%s", s);
    cr_expect_eq(strcasecmp(s, strerror(ENOENT)), 0);
    char tiny[4];
    gm_errno_text(ENOENT, tiny, sizeof tiny);
    cr_expect_eq(strlen(tiny), 3, "truncated and terminated");
}

Test(text, strerror_of_every_gm_code_is_its_own_text)
{
    /* A GM_E* code given where an errno is expected reads as its own
     * description, never "unknown error -3". */
    char buf[128];
    for (int code = GM_EINVAL; code >= GM_EINCOMPLETE; code--) {
        gm_errno_text(code, buf, sizeof buf);
        cr_expect(strstr(buf, "nknown") == NULL, "%d: %s", code, buf);
        cr_expect_str_eq(buf, gm_strerror(code), "%d", code);
    }
    cr_expect_str_eq(gm_errno_text(GM_EIO, buf, sizeof buf), "input/output error");
}

Test(text, esc_makes_control_bytes_visible)
{
    char buf[256];
    cr_expect_str_eq(gm_text_escape("plain name.pid42", buf, sizeof buf), "plain name.pid42");
    cr_expect_str_eq(gm_text_escape("a\x1b[31mred\x07\n\t\x7f", buf, sizeof buf),
                     "a\\x1b[31mred\\x07\\x0a\\x09\\x7f");
    /* UTF-8 passes; a C1 control (U+009B, CSI) and invalid bytes do not. */
    cr_expect_str_eq(gm_text_escape("\xc2\xb5s \xe2\x82\xac", buf, sizeof buf), "\xc2\xb5s \xe2\x82\xac");
    cr_expect_str_eq(gm_text_escape("x\xc2\x9b" "2J", buf, sizeof buf), "x\\xc2\\x9b2J");
    cr_expect_str_eq(gm_text_escape("\xff\xc3", buf, sizeof buf), "\\xff\\xc3");
    cr_expect_str_eq(gm_text_escape(NULL, buf, sizeof buf), "");
    /* Too long: cut between escapes, "..." at the end, always terminated. */
    char small[12];
    cr_expect_str_eq(gm_text_escape("\x1b\x1b\x1b\x1b", small, sizeof small), "\\x1b\\x1b...");
    cr_expect_str_eq(gm_text_escape("abcdefghijk", small, sizeof small), "abcdefghijk");
    cr_expect_str_eq(gm_text_escape("abcdefghijkl", small, sizeof small), "abcdefgh...");
    for (size_t len = 1; len < 12; len++) {
        gm_text_escape("\x01zz\x02\xc2\xb5", small, len);
        cr_expect(strlen(small) < len, "len %zu", len);
    }
}

/* ---- did you mean ---------------------------------------------------------- */

Test(text, distance_counts_edits_and_swaps)
{
    static const struct {
        const char *a, *b;
        size_t want;
    } cases[] = {
        {"", "", 0}, {"replay", "replay", 0}, {"REPLAY", "replay", 0}, /* case ignored */
        {"replai", "replay", 1},               /* substitution */
        {"polcy", "policy", 1},                /* insertion */
        {"llama7b", "llama-7b", 1},            /* insertion */
        {"rtx-4090", "rtx4090", 1},            /* deletion */
        {"expandable_segment", "expandable_segments", 1},
        {"cahcing", "caching", 1},             /* a swap of neighbours is one edit */
        {"ab", "ba", 1},
        {"kitten", "sitting", 3},              /* Levenshtein's example */
        {"ca", "abc", 3},                      /* OSA, not full Damerau (which says 2) */
        {"", "abc", 3}, {"abc", "", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(gm__text_distance(cases[i].a, cases[i].b, 10), cases[i].want, "%s / %s",
                     cases[i].a, cases[i].b);
        cr_expect_eq(gm__text_distance(cases[i].b, cases[i].a, 10), cases[i].want,
                     "symmetric: %s / %s", cases[i].b, cases[i].a);
    }
}

Test(text, distance_is_capped)
{
    /* Anything beyond the cap reads cap + 1, whatever the true distance. */
    cr_expect_eq(gm__text_distance("kitten", "sitting", 2), 3);
    cr_expect_eq(gm__text_distance("kitten", "sitting", 1), 2);
    cr_expect_eq(gm__text_distance("a", "abcdefgh", 2), 3); /* the lengths alone */
    cr_expect_eq(gm__text_distance("kitten", "sitting", 3), 3);
    /* Too long to compare: only an equal string is near. */
    char a[GM__SUGGEST_MAX_LEN + 2], b[GM__SUGGEST_MAX_LEN + 2];
    memset(a, 'x', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof b);
    cr_expect_eq(gm__text_distance(a, b, 2), 0);
    b[0] = 'y';
    cr_expect_eq(gm__text_distance(a, b, 2), 3);
}

/* The suggestion for word among the NULL-terminated names ("" for none). */
static const char *text_suggest(const char *word, const char *const *names, char *buf,
                                size_t len)
{
    gm__suggest_t s;
    gm__suggest_init(&s, word);
    for (size_t i = 0; names[i]; i++)
        gm__suggest_add(&s, names[i]);
    gm__suggest_text(&s, buf, len);
    return buf;
}

Test(text, suggest_names_the_nearest)
{
    static const char *const verbs[] = {"import", "capture", "export", "info", "synth",
                                        "replay", "compare", "sweep", "merge", "report",
                                        "policies", "estimate", "fit", "scale", "devices",
                                        "calibrate", NULL};
    char buf[256];
    cr_expect_str_eq(text_suggest("replai", verbs, buf, sizeof buf), "'replay'");
    cr_expect_str_eq(text_suggest("RePlai", verbs, buf, sizeof buf), "'replay'");
    cr_expect_str_eq(text_suggest("comapre", verbs, buf, sizeof buf), "'compare'");
    cr_expect_str_eq(text_suggest("polices", verbs, buf, sizeof buf), "'policies'");
    /* Nothing near: no suggestion rather than a far one. */
    cr_expect_str_eq(text_suggest("frobnicate", verbs, buf, sizeof buf), "");
    /* Two edits are the most for a word of four letters or more; one for
     * three letters or less ("fix" is one from "fit"; "fxx" two). */
    cr_expect_str_eq(text_suggest("fix", verbs, buf, sizeof buf), "'fit'");
    cr_expect_str_eq(text_suggest("fxx", verbs, buf, sizeof buf), "");
    cr_expect_str_eq(text_suggest("swxxp", verbs, buf, sizeof buf), "'sweep'");
    cr_expect_str_eq(text_suggest("sxxxp", verbs, buf, sizeof buf), "");
    /* The word itself is no suggestion. */
    cr_expect_str_eq(text_suggest("replay", verbs, buf, sizeof buf), "");
}

Test(text, suggest_lists_ties_and_takes_a_clear_prefix)
{
    static const char *const names[] = {"max_split_size", "max_non_split_rounding", "pad",
                                        "conf", "start", "settings", NULL};
    char buf[256];
    /* A clear prefix: the start of one name alone. */
    cr_expect_str_eq(text_suggest("max_split", names, buf, sizeof buf), "'max_split_size'");
    /* The start of two names is no clear prefix. */
    cr_expect_str_eq(text_suggest("max_", names, buf, sizeof buf), "");
    /* Too short to be a prefix ("st" starts two names, "se" one). */
    cr_expect_str_eq(text_suggest("se", names, buf, sizeof buf), "");
    /* Names at the same distance are all given, in the order added. */
    static const char *const cards[] = {"a100-40gb", "a100-80gb", "h100-80gb", NULL};
    cr_expect_str_eq(text_suggest("a100-60gb", cards, buf, sizeof buf), "'a100-40gb' or 'a100-80gb'");
    static const char *const three[] = {"abcx", "abcy", "abcz", "abcx", NULL};
    cr_expect_str_eq(text_suggest("abcw", three, buf, sizeof buf), "'abcx', 'abcy' or 'abcz'");
    /* A nearer name replaces the ones before it. */
    static const char *const nearer[] = {"abxx", "abcx", NULL};
    cr_expect_str_eq(text_suggest("abcd", nearer, buf, sizeof buf), "'abcx'");
}

Test(text, suggest_append_asks_once)
{
    static const char *const flags[] = {"--policy", "--param", "--json", NULL};
    gm__suggest_t s;
    gm__suggest_init(&s, "--polcy");
    for (size_t i = 0; flags[i]; i++)
        gm__suggest_add(&s, flags[i]);
    char msg[128] = "unknown option '--polcy'";
    cr_expect_str_eq(gm__suggest_append(&s, msg, sizeof msg),
                     "unknown option '--polcy'; did you mean '--policy'?");
    gm__suggest_init(&s, "--zzzzzz");
    for (size_t i = 0; flags[i]; i++)
        gm__suggest_add(&s, flags[i]);
    char msg2[128] = "unknown option '--zzzzzz'";
    cr_expect_str_eq(gm__suggest_append(&s, msg2, sizeof msg2), "unknown option '--zzzzzz'");
    /* A message with no room left stays whole and terminated. */
    char tiny[8] = "abcdefg";
    gm__suggest_init(&s, "--polcy");
    gm__suggest_add(&s, "--policy");
    cr_expect_str_eq(gm__suggest_append(&s, tiny, sizeof tiny), "abcdefg");
}
