/*
 * tests/test_vec.c — the growable array and the byte buffer (base/vec.h),
 * and large buffers (base/bulk.h).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/error.h"
#include "base/bulk.h"
#include "base/vec.h"

Test(vec, reserve_doubles_from_first_and_keeps_the_items)
{
    uint32_t *a = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        cr_assert_eq(GM_VEC_RESERVE(a, cap, n + 1, 16), 0);
        a[n++] = i * 7;
    }
    cr_assert_eq(cap, 1024, "16 doubled to hold 1000: %zu", cap);
    for (uint32_t i = 0; i < 1000; i++)
        cr_assert_eq(a[i], i * 7);
    /* room already there: nothing moves */
    uint32_t *before = a;
    cr_assert_eq(GM_VEC_RESERVE(a, cap, 1024, 16), 0);
    cr_assert_eq(a, before);
    /* a jump well past twice the capacity doubles until it holds it */
    cr_assert_eq(GM_VEC_RESERVE(a, cap, 5000, 16), 0);
    cr_assert_eq(cap, 8192);
    cr_assert_eq(a[999], 999 * 7);
    free(a);
}

Test(vec, a_size_past_the_address_space_is_refused_untouched)
{
    uint64_t *a = NULL;
    size_t cap = 0;
    cr_assert_eq(GM_VEC_RESERVE(a, cap, 4, 4), 0);
    a[3] = 42;
    uint64_t *before = a;
    cr_assert_eq(GM_VEC_RESERVE(a, cap, SIZE_MAX / 4, 4), GM_ENOMEM);
    cr_assert_eq(GM_VEC_RESERVE(a, cap, SIZE_MAX, 4), GM_ENOMEM);
    cr_assert_eq(a, before);
    cr_assert_eq(cap, 4);
    cr_assert_eq(a[3], 42);
    free(a);
}

Test(vec, buffer_appends_and_stays_terminated)
{
    gm__buf_t b = {0};
    gm__buf_str(&b, "{");
    for (int i = 0; i < 100; i++)
        gm__buf_add(&b, "ab", 2);
    gm__buf_str(&b, "}");
    cr_assert_eq(b.oom, 0);
    cr_assert_eq(b.n, 202);
    cr_assert_eq(strlen(b.p), 202);
    cr_assert_eq(b.p[0], '{');
    cr_assert_eq(b.p[200], 'b');
    cr_assert_eq(b.p[201], '}');
    cr_assert_geq(b.cap, 203);
    gm__buf_release(&b);
    cr_assert_null(b.p);
}

Test(vec, buffer_failure_is_sticky)
{
    gm__buf_t b = {0};
    gm__buf_str(&b, "kept");
    cr_assert_eq(gm__buf_room(&b, SIZE_MAX - 2), -1);
    cr_assert_eq(b.oom, 1);
    gm__buf_str(&b, "lost");
    cr_assert_eq(b.n, 4);
    cr_assert_str_eq(b.p, "kept");
    cr_assert_eq(gm__buf_room(&b, 1), -1);
    gm__buf_release(&b);
}

Test(vec, bulk_buffers_small_and_huge_are_writable)
{
    size_t sizes[] = {1, 4096, GM__BULK_HUGE - 1, GM__BULK_HUGE, 3 * GM__BULK_HUGE + 5};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        gm__bulk_t b;
        cr_assert_eq(gm__bulk_alloc(&b, sizes[k]), 0);
        cr_assert_not_null(b.p);
        cr_assert_eq(b.size, sizes[k]);
        cr_assert_eq((uintptr_t)b.p % 16, 0);
        memset(b.p, 0xa5, sizes[k]);
        cr_assert_eq(((unsigned char *)b.p)[sizes[k] - 1], 0xa5);
        gm__bulk_release(&b);
        cr_assert_null(b.p);
    }
}
