/*
 * tests/test_text.c — the text helpers the library and the command line
 * share (gmsim/text.h): the strict unsigned 64-bit number rule, and errno
 * text lowercased.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "gmsim/text.h"
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
