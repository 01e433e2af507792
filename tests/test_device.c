/*
 * tests/test_device.c — the simulated device: rounding, capacity, addresses,
 * cost accounting, and the size parser/formatter.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

static gm_device_t make_device(uint64_t capacity, uint64_t granularity)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = capacity;
    if (granularity)
        cfg.granularity = granularity;
    gm_device_t dev;
    gm_device_init(&dev, &cfg);
    return dev;
}

Test(device, defaults)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cr_expect_eq(cfg.capacity, 0);
    cr_expect_eq(cfg.granularity, 512);
    cr_expect_gt(cfg.cost.malloc_base_ns, 0);
    cr_expect_gt(cfg.cost.malloc_per_gib_ns, 0);
    cr_expect_gt(cfg.cost.free_base_ns, 0);
    cr_expect_geq(cfg.cost.free_per_gib_ns, 0);
    gm_device_t dev;
    gm_device_init(&dev, &cfg);
    cr_expect_eq(dev.reserved, 0);
    cr_expect_eq(dev.peak_reserved, 0);
    cr_expect_eq(dev.mallocs, 0);
    cr_expect_eq(dev.frees, 0);
    cr_expect_eq(dev.failed, 0);
    cr_expect_eq(dev.time_ns, 0.0);
    cr_expect_neq(dev.next_addr, 0, "address 0 is never handed out");
}

Test(device, bad_granularity_is_sanitized)
{
    gm_device_t dev = make_device(0, 1000);
    cr_expect_eq(dev.cfg.granularity, 1024);
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.granularity = 0;
    gm_device_init(&dev, &cfg);
    cr_expect_eq(dev.cfg.granularity, 512);
}

Test(device, rounding)
{
    gm_device_t dev = make_device(0, 0);
    cr_expect_eq(gm_device_round(&dev, 0), 0);
    cr_expect_eq(gm_device_round(&dev, 1), 512);
    cr_expect_eq(gm_device_round(&dev, 512), 512);
    cr_expect_eq(gm_device_round(&dev, 513), 1024);
    cr_expect_eq(gm_device_round(&dev, GiB - 1), GiB);
    cr_expect_eq(gm_device_round(&dev, UINT64_MAX), UINT64_MAX, "saturates");
    cr_expect_eq(gm_device_round(&dev, UINT64_MAX - 100), UINT64_MAX);

    uint64_t addr, got;
    cr_assert_eq(gm_device_malloc(&dev, 1000, 0, &addr, &got), 0);
    cr_expect_eq(got, 1024);
    cr_expect_eq(addr % 512, 0);
    cr_expect_eq(dev.reserved, 1024);
    cr_assert_eq(gm_device_malloc(&dev, 0, 0, &addr, &got), 0, "size 0 gets a granule");
    cr_expect_eq(got, 512);

    gm_device_t one = make_device(0, 1);
    cr_expect_eq(gm_device_round(&one, 7), 7);
    cr_assert_eq(gm_device_malloc(&one, 7, 0, &addr, &got), 0);
    cr_expect_eq(got, 7);
}

Test(device, alignment)
{
    gm_device_t dev = make_device(0, 0);
    uint64_t addr, got;
    cr_assert_eq(gm_device_malloc(&dev, 512, 0, &addr, &got), 0);
    cr_assert_eq(gm_device_malloc(&dev, 512, GiB, &addr, &got), 0);
    cr_expect_eq(addr % GiB, 0);
    cr_expect_eq(got, 512, "alignment padding is not reserved");
    cr_expect_eq(dev.reserved, 1024);
    cr_assert_eq(gm_device_malloc(&dev, 4 * KiB, 3000, &addr, &got), 0);
    cr_expect_eq(addr % 4096, 0, "a non-power-of-two alignment rounds up");
    cr_assert_eq(gm_device_malloc(&dev, 512, 64, &addr, &got), 0);
    cr_expect_eq(addr % 512, 0, "never below the granularity");
    cr_assert_eq(gm_device_malloc(&dev, 64 * GiB, UINT64_C(1) << 48, &addr, &got), 0);
    cr_expect_eq(addr % (UINT64_C(1) << 48), 0);
}

Test(device, capacity_oom)
{
    gm_device_t dev = make_device(4 * KiB, 0);
    uint64_t addr = 7, got = 9;
    cr_assert_eq(gm_device_malloc(&dev, 3 * KiB, 0, &addr, &got), 0);
    gm_device_t before = dev;
    uint64_t a2 = 7, g2 = 9;
    cr_expect_eq(gm_device_malloc(&dev, 1025, 0, &a2, &g2), GM_DEVICE_OOM);
    cr_expect_eq(a2, 7, "outputs untouched on OOM");
    cr_expect_eq(g2, 9);
    cr_expect_eq(dev.failed, 1);
    cr_expect_eq(dev.reserved, before.reserved);
    cr_expect_eq(dev.mallocs, before.mallocs);
    cr_expect_eq(dev.next_addr, before.next_addr);
    cr_expect_eq(dev.peak_reserved, before.peak_reserved);
    cr_assert_eq(gm_device_malloc(&dev, 1024, 0, &a2, &g2), 0, "exactly full is fine");
    cr_expect_eq(dev.reserved, 4 * KiB);
    cr_expect_eq(gm_device_malloc(&dev, 1, 0, &a2, &g2), GM_DEVICE_OOM);
    cr_expect_eq(gm_device_malloc(&dev, UINT64_MAX, 0, &a2, &g2), GM_DEVICE_OOM);
    cr_expect_eq(dev.failed, 3);
    gm_device_free(&dev, addr, got);
    cr_expect_eq(dev.reserved, KiB);
    cr_expect_eq(dev.peak_reserved, 4 * KiB);
    cr_expect_eq(gm_device_malloc(&dev, 3 * KiB, 0, &a2, &g2), 0, "freed space is usable");
}

Test(device, overflow_safe)
{
    gm_device_t dev = make_device(0, 0);
    uint64_t addr, got;
    cr_expect_eq(gm_device_malloc(&dev, UINT64_MAX, 0, &addr, &got), GM_DEVICE_OOM);
    cr_expect_eq(gm_device_malloc(&dev, UINT64_MAX - GiB, 0, &addr, &got), GM_DEVICE_OOM);
    cr_expect_eq(gm_device_malloc(&dev, 512, (UINT64_C(1) << 63) + 1, &addr, &got), GM_DEVICE_OOM);
    cr_expect_eq(dev.reserved, 0);
    cr_expect_eq(dev.failed, 3);
    /* Exhaust the address space with huge aligned blocks: OOM, never a wrap. */
    int ok = 0, oom = 0;
    uint64_t last_end = 0;
    for (int i = 0; i < 40; i++) {
        int rc = gm_device_malloc(&dev, UINT64_C(1) << 62, UINT64_C(1) << 62, &addr, &got);
        if (rc == 0) {
            ok++;
            cr_expect_geq(addr, last_end);
            last_end = addr + got;
            cr_expect_geq(last_end, addr, "no wrap");
        } else {
            oom++;
        }
    }
    cr_expect_gt(ok, 0);
    cr_expect_gt(oom, 0);
}

Test(device, addresses_never_overlap_or_repeat)
{
    gm_device_t dev = make_device(0, 0);
    uint64_t state = 42;
    enum { N = 4000 };
    uint64_t *addr = calloc(N, sizeof *addr), *size = calloc(N, sizeof *size);
    int *live = calloc(N, sizeof *live);
    uint64_t prev_end = 0, sum = 0;
    for (int i = 0; i < N; i++) {
        uint64_t s = 1 + gt_rand(&state) % (8 * MiB);
        uint64_t align = (gt_rand(&state) % 4 == 0) ? UINT64_C(1) << (gt_rand(&state) % 31) : 0;
        cr_assert_eq(gm_device_malloc(&dev, s, align, &addr[i], &size[i]), 0);
        cr_assert_geq(size[i], s);
        cr_assert_geq(addr[i], prev_end, "bump pointer: block %d starts below the last end", i);
        if (align > 512)
            cr_assert_eq(addr[i] % align, 0);
        prev_end = addr[i] + size[i];
        live[i] = 1;
        sum += size[i];
        /* free some earlier block: its address must never come back */
        if (i > 0 && gt_rand(&state) % 2) {
            int j = (int)(gt_rand(&state) % (uint64_t)i);
            if (live[j]) {
                gm_device_free(&dev, addr[j], size[j]);
                live[j] = 0;
                sum -= size[j];
            }
        }
        cr_assert_eq(dev.reserved, sum);
        cr_assert_geq(dev.peak_reserved, dev.reserved);
    }
    free(addr);
    free(size);
    free(live);
}

Test(device, cost_accounting)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = 3 * GiB;
    cfg.cost = (gm_cost_model_t){.malloc_base_ns = 1000,
                                 .malloc_per_gib_ns = 500,
                                 .free_base_ns = 100,
                                 .free_per_gib_ns = 50};
    gm_device_t dev;
    gm_device_init(&dev, &cfg);
    uint64_t a1, g1, a2, g2;
    cr_assert_eq(gm_device_malloc(&dev, GiB, 0, &a1, &g1), 0);
    cr_expect_float_eq(dev.time_ns, 1500.0, 1e-9);
    cr_assert_eq(gm_device_malloc(&dev, GiB / 2, 0, &a2, &g2), 0);
    cr_expect_float_eq(dev.time_ns, 1500.0 + 1250.0, 1e-9);
    gm_device_free(&dev, a1, g1);
    cr_expect_float_eq(dev.time_ns, 2750.0 + 150.0, 1e-9);
    uint64_t a3, g3;
    cr_expect_eq(gm_device_malloc(&dev, 8 * GiB, 0, &a3, &g3), GM_DEVICE_OOM);
    cr_expect_float_eq(dev.time_ns, 2900.0 + 1000.0, 1e-9, "a refused malloc costs its base");
    gm_device_free(&dev, a2, g2);
    cr_expect_float_eq(dev.time_ns, 3900.0 + 125.0, 1e-9);
    cr_expect_eq(dev.mallocs, 2);
    cr_expect_eq(dev.frees, 2);
    cr_expect_eq(dev.failed, 1);
    cr_expect_eq(dev.reserved, 0);
    cr_expect_eq(dev.peak_reserved, GiB + GiB / 2);
}

/* ---- gm_parse_size ---------------------------------------------------------- */

typedef struct {
    const char *text;
    uint64_t want;
} size_case_t;

Test(device, parse_size_good)
{
    static const size_case_t cases[] = {
        {"0", 0},
        {"512", 512},
        {"1048576", MiB},
        {"4K", 4 * KiB},
        {"4k", 4 * KiB},
        {"4KB", 4 * KiB},
        {"4kib", 4 * KiB},
        {"4KiB", 4 * KiB},
        {"2MB", 2 * MiB},
        {"2M", 2 * MiB},
        {"2MiB", 2 * MiB},
        {"80GiB", 80 * GiB},
        {"80 GiB", 80 * GiB},
        {"80gib", 80 * GiB},
        {"80G", 80 * GiB},
        {"1T", TiB},
        {"2PiB", UINT64_C(2) << 50},
        {"15.5 EiB", UINT64_C(31) << 59},
        {"2 TiB", 2 * TiB},
        {"1.5GiB", GiB + GiB / 2},
        {"1.5 GiB", GiB + GiB / 2},
        {"0.5K", 512},
        {"1.50 KiB", 1536},
        {"512 B", 512},
        {"512b", 512},
        {"1.25M", MiB + MiB / 4},
        {"0.1K", 102},  /* 102.4 rounds to 102 */
        {"0.3K", 307},  /* 307.2 */
        {"0.0005K", 1}, /* 0.512 rounds up */
        {"1.5", 2},     /* whole bytes: 1.5 rounds to 2 */
        {"0001", 1},
        {"16777215T", UINT64_C(16777215) << 40},
        {"18446744073709551615", UINT64_MAX},
        {"0.00000000000000000000001T", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        gm_error_t err = {0};
        int rc = gm_parse_size(cases[i].text, &v, &err);
        cr_expect_eq(rc, 0, "'%s': %s", cases[i].text, err.msg);
        cr_expect_eq(v, cases[i].want, "'%s' gave %llu, want %llu", cases[i].text,
                     (unsigned long long)v, (unsigned long long)cases[i].want);
    }
}

Test(device, parse_size_bad)
{
    static const char *const bad[] = {
        "",      "-1",     "-1K",   "+5",      " 512",   "512 ",   "abc",     "K",
        "1.",    ".5",     "1..5",  "1.5.3",   "12Q",    "4KK",    "4KiBs",   "4 K B",
        "4Ki",   "4iB",    "1e9",   "0x100",   "5 5",    "1,024",  "1_000",   "GiB",
        "18446744073709551616", "16777216TiB", "16777216T", "99999999999999999999", "17179869184G",
        "18446744073709551615.9", "nan", "inf", "4ZiB", "1\n", "16EiB",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 777;
        gm_error_t err = {0};
        cr_expect_eq(gm_parse_size(bad[i], &v, &err), GM_EINVAL, "'%s' was accepted", bad[i]);
        cr_expect_eq(v, 777, "'%s' changed the output", bad[i]);
        char want[128];
        snprintf(want, sizeof want, "invalid size '%s'", bad[i]);
        cr_expect_str_eq(err.msg, want);
        cr_expect_eq(err.code, GM_EINVAL);
    }
    uint64_t v;
    cr_expect_eq(gm_parse_size(NULL, &v, NULL), GM_EINVAL, "NULL text, NULL err");
}

Test(device, parse_format_round_trip)
{
    uint64_t state = 7;
    for (int i = 0; i < 2000; i++) {
        uint64_t bytes = gt_rand(&state) >> (gt_rand(&state) % 64);
        char buf[32];
        gm_format_size(bytes, buf, sizeof buf);
        uint64_t back;
        cr_assert_eq(gm_parse_size(buf, &back, NULL), 0, "'%s' does not parse", buf);
        /* two decimals: within 0.5 % of the value */
        double diff = (double)back - (double)bytes;
        cr_assert_leq(diff < 0 ? -diff : diff, (double)bytes * 0.005 + 0.5, "'%s' for %llu", buf,
                      (unsigned long long)bytes);
    }
}

/* ---- gm_format_size ----------------------------------------------------------- */

Test(device, format_size)
{
    static const struct {
        uint64_t bytes;
        const char *want;
    } cases[] = {
        {0, "0 B"},
        {1, "1 B"},
        {512, "512 B"},
        {1023, "1023 B"},
        {1024, "1.00 KiB"},
        {1536, "1.50 KiB"},
        {MiB, "1.00 MiB"},
        {MiB - 1, "1.00 MiB"}, /* 1023.999 KiB moves up a unit */
        {GiB + GiB / 2, "1.50 GiB"},
        {80 * GiB, "80.00 GiB"},
        {TiB, "1.00 TiB"},
        {UINT64_C(1) << 50, "1.00 PiB"},
        {UINT64_MAX, "16.00 EiB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        gm_format_size(cases[i].bytes, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].want);
    }
    char small[5];
    gm_format_size(80 * GiB, small, sizeof small);
    cr_expect_str_eq(small, "80.0", "truncated, still terminated");
    gm_format_size(80 * GiB, small, 0); /* writes nothing */
}

/* gm_device_hint: the next malloc or virtual range of the hinted size takes
 * the hinted address when that range is free and aligned; one of another
 * size leaves the hint pending; an overlapping, misaligned or bump-region
 * hint falls back to the bump pointer, which steps over placed ranges; a
 * placed range freed whole can be placed again.  Without cfg.hints the
 * hint is ignored. */
Test(device, hints_place_at_recorded_addresses)
{
    const uint64_t M = UINT64_C(1) << 20, base = UINT64_C(1) << 40;
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    gm_device_t d;
    gm_device_init(&d, &cfg);
    uint64_t a, got;
    gm_device_hint(&d, 0x40000000, 20 * M);
    cr_assert_eq(gm_device_malloc(&d, 20 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base, "hints are off by default");
    gm_device_release(&d);

    cfg.hints = 1;
    gm_device_init(&d, &cfg);
    gm_device_hint(&d, 0x40000000, 20 * M);
    cr_assert_eq(gm_device_malloc(&d, 2 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base, "another size: bump, the hint stays");
    cr_assert_eq(gm_device_malloc(&d, 20 * M, 0, &a, &got), 0);
    cr_assert_eq(a, 0x40000000);
    cr_assert_eq(gm_device_malloc(&d, 20 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base + 2 * M, "the hint was consumed");
    gm_device_hint(&d, 0x40000000 + 10 * M, 20 * M); /* overlaps the live one */
    cr_assert_eq(gm_device_malloc(&d, 20 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base + 22 * M);
    gm_device_hint(&d, 0x30000000, 20 * M); /* below it: free */
    uint64_t low;
    cr_assert_eq(gm_device_malloc(&d, 20 * M, 0, &low, &got), 0);
    cr_assert_eq(low, 0x30000000);
    gm_device_hint(&d, 0x30000000 + 512, 2 * M);
    cr_assert_eq(gm_device_malloc(&d, 2 * M, 4096, &a, &got), 0);
    cr_assert_eq(a, base + 42 * M, "misaligned for the call: bump");
    gm_device_hint(&d, base + M, 2 * M); /* in the bump region */
    cr_assert_eq(gm_device_malloc(&d, 2 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base + 44 * M);
    /* a range placed above the bump pointer: the bump steps over it */
    gm_device_hint(&d, base + 46 * M, 4 * M);
    cr_assert_eq(gm_device_reserve_va(&d, 4 * M, 0, &a), 0);
    cr_assert_eq(a, base + 46 * M);
    cr_assert_eq(gm_device_malloc(&d, 4 * M, 0, &a, &got), 0);
    cr_assert_eq(a, base + 50 * M, "stepped over the placed range");
    /* freed whole, the low range can be placed again */
    gm_device_free(&d, low, 20 * M);
    gm_device_hint(&d, 0x30000000 + 4 * M, 8 * M);
    cr_assert_eq(gm_device_malloc(&d, 8 * M, 0, &a, &got), 0);
    cr_assert_eq(a, 0x30000000 + 4 * M);
    cr_assert_eq(d.nplaced, 3);
    gm_device_release(&d);
}
