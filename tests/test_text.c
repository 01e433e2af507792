/*
 * tests/test_text.c — the text helpers the library and the command line
 * share (replay/text.h): the strict unsigned 64-bit number rule, and errno
 * text lowercased.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "replay/text.h"
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
        cr_expect_eq(gm__parse_u64(cases[i].text, &v), 0, "%s", cases[i].text);
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
        cr_expect_eq(gm__parse_u64(bad[i], &v), GM__U64_INVALID, "'%s'", bad[i]);
        cr_expect_eq(v, 1234, "'%s' leaves *out alone", bad[i]);
    }
    static const char *const big[] = {
        "18446744073709551616", "99999999999999999999999", "0x10000000000000000",
        "0x1ffffffffffffffff",
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        uint64_t v = 1234;
        cr_expect_eq(gm__parse_u64(big[i], &v), GM__U64_RANGE, "'%s'", big[i]);
        cr_expect_eq(v, 1234);
    }
}

Test(text, strerror_is_lowercase)
{
    char buf[128];
    const char *s = gm__strerror(ENOENT, buf, sizeof buf);
    cr_expect_eq(s, buf);
    cr_expect(s[0] < 'A' || s[0] > 'Z', "%s", s);
    cr_expect_eq(strcasecmp(s, strerror(ENOENT)), 0);
    char tiny[4];
    gm__strerror(ENOENT, tiny, sizeof tiny);
    cr_expect_eq(strlen(tiny), 3, "truncated and terminated");
}
