/*
 * tests/test_torch_rules.c — PyTorch's caching-allocator size rules
 * (sim/torch_rules.h), shared by the caching policy and the snapshot
 * rewinder.  The expected values are worked out by hand from PyTorch's
 * round_size / roundup_power2_next_division / get_allocation_size /
 * should_split (CUDACachingAllocator.cpp); the law test checks the
 * rounding against a second formulation (enumerating the d' equal steps
 * between two powers of two, d' the power of two at or below d).  The
 * settings tests decode each form PyTorch gives them in (the
 * PYTORCH_CUDA_ALLOC_CONF string as c10/core/AllocatorConfig.cpp parses
 * it, the snapshot's recorded dict as torch/csrc/cuda/Module.cpp writes
 * it), bad input included.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>

#include "gmsim/json.h"
#include "sim/torch_rules.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static void fill(uint32_t div[GM_TORCH_INTERVALS], uint32_t d)
{
    for (int i = 0; i < GM_TORCH_INTERVALS; i++)
        div[i] = d;
}

static uint64_t round_all(uint64_t size, uint32_t d)
{
    uint32_t div[GM_TORCH_INTERVALS];
    fill(div, d);
    return gm__torch_round(size, div);
}

Test(torch_rules, interval_boundaries)
{
    cr_assert_eq(gm__torch_interval(1), 0);
    cr_assert_eq(gm__torch_interval(MiB - 1), 0);
    cr_assert_eq(gm__torch_interval(MiB), 0);
    cr_assert_eq(gm__torch_interval(2 * MiB - 1), 0);
    cr_assert_eq(gm__torch_interval(2 * MiB), 1);
    cr_assert_eq(gm__torch_interval(4 * MiB - 1), 1);
    cr_assert_eq(gm__torch_interval(4 * MiB), 2);
    cr_assert_eq(gm__torch_interval(32 * GiB - 1), 14);
    cr_assert_eq(gm__torch_interval(32 * GiB), 15);
    cr_assert_eq(gm__torch_interval(64 * GiB), 15);
    cr_assert_eq(gm__torch_interval(UINT64_MAX), 15);
}

/* No divisions (NULL, 0 or 1): 512 B minimum, then multiples of 512. */
Test(torch_rules, round_plain)
{
    for (uint32_t d = 0; d <= 1; d++) {
        cr_assert_eq(round_all(0, d), 512);
        cr_assert_eq(round_all(1, d), 512);
        cr_assert_eq(round_all(511, d), 512);
        cr_assert_eq(round_all(512, d), 512);
        cr_assert_eq(round_all(513, d), 1024);
        cr_assert_eq(round_all(2049, d), 2560);
        cr_assert_eq(round_all(MiB + 1, d), MiB + 512);
        cr_assert_eq(round_all(100 * MiB + 1, d), 100 * MiB + 512);
    }
    cr_assert_eq(gm__torch_round(1, NULL), 512);
    cr_assert_eq(gm__torch_round(2049, NULL), 2560);
    cr_assert_eq(gm__torch_round(MiB + 1, NULL), MiB + 512);
}

/* d = 2: on above 1024 B; steps of half the power of two below. */
Test(torch_rules, round_two)
{
    cr_assert_eq(round_all(1024, 2), 1024);
    cr_assert_eq(round_all(1025, 2), 1536);
    cr_assert_eq(round_all(2049, 2), 3072); /* 512-rounding would give 2560 */
    cr_assert_eq(round_all(MiB + 1, 2), MiB + MiB / 2);
    cr_assert_eq(round_all(3 * MiB, 2), 3 * MiB);
    cr_assert_eq(round_all(3 * MiB + 1, 2), 4 * MiB);
    cr_assert_eq(round_all(4 * MiB - 1, 2), 4 * MiB);
    cr_assert_eq(round_all(4 * MiB, 2), 4 * MiB);
}

/* d = 4: on above 2048 B; quarters. */
Test(torch_rules, round_four)
{
    cr_assert_eq(round_all(1200, 4), 1536); /* 1200 <= 512*4: plain rounding */
    cr_assert_eq(round_all(2048, 4), 2048);
    cr_assert_eq(round_all(2049, 4), 2560);
    cr_assert_eq(round_all(4097, 4), 5120); /* 512-rounding would give 4608 */
    cr_assert_eq(round_all(5 * MiB + 1, 4), 6 * MiB);
    cr_assert_eq(round_all(10 * MiB, 4), 10 * MiB);
    cr_assert_eq(round_all(10 * MiB + 1, 4), 12 * MiB);
    cr_assert_eq(round_all(16 * MiB, 4), 16 * MiB);
}

/* d = 8: on above 4096 B; eighths. */
Test(torch_rules, round_eight)
{
    cr_assert_eq(round_all(4096, 8), 4096);
    cr_assert_eq(round_all(4097, 8), 4608);
    cr_assert_eq(round_all(8193, 8), 9216); /* 512-rounding would give 8704 */
    cr_assert_eq(round_all(100 * MiB + 1, 8), 104 * MiB);
    cr_assert_eq(round_all(120 * MiB + 1, 8), 128 * MiB);
}

/* d = 3: PyTorch steps by 2^floor(log2 size) >> floor(log2 3), i.e. halves
 * as d = 2 does, with the switch-on threshold 512*3 = 1536 B.  Dividing by
 * 3 instead would give 2728 and 1398100 below: not multiples of 512. */
Test(torch_rules, round_three_is_halves)
{
    cr_assert_eq(round_all(1536, 3), 1536);
    cr_assert_eq(round_all(1537, 3), 2048);
    cr_assert_eq(round_all(2049, 3), 3072);
    cr_assert_eq(round_all(MiB + 1, 3), MiB + MiB / 2);
    cr_assert_eq(round_all(3 * MiB + 1, 3), 4 * MiB);
    for (uint64_t s = 1537; s < 64 * MiB; s = s * 3 / 2 + 1)
        cr_assert_eq(round_all(s, 3), round_all(s, 2), "size %llu", (unsigned long long)s);
}

/* d = 5: quarters, as d = 4, threshold 2560 B. */
Test(torch_rules, round_five_is_quarters)
{
    cr_assert_eq(round_all(2560, 5), 2560);
    cr_assert_eq(round_all(2561, 5), 3072);
    cr_assert_eq(round_all(4097, 5), 5120);
    cr_assert_eq(round_all(3 * MiB + 1, 5), 3 * MiB + MiB / 2); /* /5 would give 3355440 */
    cr_assert_eq(round_all(10 * MiB + 1, 5), 12 * MiB);
    for (uint64_t s = 2561; s < 64 * MiB; s = s * 3 / 2 + 1)
        cr_assert_eq(round_all(s, 5), round_all(s, 4), "size %llu", (unsigned long long)s);
}

/* Each interval has its own divisions. */
Test(torch_rules, round_per_interval)
{
    uint32_t div[GM_TORCH_INTERVALS] = {0};
    div[1] = 4; /* [2 MiB, 4 MiB) */
    div[15] = 2; /* 32 GiB and up */
    cr_assert_eq(gm__torch_round(2 * MiB - 1, div), 2 * MiB);
    cr_assert_eq(gm__torch_round(MiB + 1, div), MiB + 512);
    cr_assert_eq(gm__torch_round(2 * MiB + 1, div), 2 * MiB + MiB / 2);
    cr_assert_eq(gm__torch_round(4 * MiB - 1, div), 4 * MiB);
    cr_assert_eq(gm__torch_round(4 * MiB + 1, div), 4 * MiB + 512);
    cr_assert_eq(gm__torch_round(32 * GiB - 1, div), 32 * GiB);
    cr_assert_eq(gm__torch_round(32 * GiB + 1, div), 48 * GiB);
    cr_assert_eq(gm__torch_round(100 * GiB, div), 128 * GiB); /* floor 64 GiB: halves */
}

Test(torch_rules, next_division)
{
    cr_assert_eq(gm__torch_next_division(1200, 4), 1280); /* PyTorch's own example */
    cr_assert_eq(gm__torch_next_division(4096, 8), 4096);  /* a power of two stays */
    cr_assert_eq(gm__torch_next_division(3 * MiB, 2), 3 * MiB);
    cr_assert_eq(gm__torch_next_division(3000, 3), 3072);
    cr_assert_eq(gm__torch_next_division(2500, 5), 2560);
    cr_assert_eq(gm__torch_next_division(1000, 1024), 1024); /* step 0: the power-of-two ceiling */
    cr_assert_eq(gm__torch_next_division(1000, 1), 1024);
}

/* Law: with d > 1 and size > 512*d, the result is the smallest of the
 * points p + k*(p/d'), k = 0..d', p = 2^floor(log2 size), d' the power of
 * two at or below d, that is >= size; it is a multiple of 512. */
Test(torch_rules, round_law)
{
    static const uint32_t ds[] = {2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 100, 1024};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        uint64_t d = ds[i], dp = 1;
        while (dp * 2 <= d)
            dp *= 2;
        for (uint64_t s = 512 * d + 1; s < 2 * GiB; s += s / 7 + 511) {
            uint64_t p = 1;
            while (p * 2 <= s)
                p *= 2;
            uint64_t want = 0;
            for (uint64_t k = 0; k <= dp && want == 0; k++)
                if (p + k * (p / dp) >= s)
                    want = p + k * (p / dp);
            uint64_t got = round_all(s, (uint32_t)d);
            cr_assert_eq(got, want, "d %llu size %llu: %llu, want %llu", (unsigned long long)d,
                         (unsigned long long)s, (unsigned long long)got, (unsigned long long)want);
            cr_assert_eq(got % 512, 0, "d %llu size %llu", (unsigned long long)d,
                         (unsigned long long)s);
        }
    }
}

Test(torch_rules, pool_boundary)
{
    cr_assert(gm__torch_is_small(512));
    cr_assert(gm__torch_is_small(MiB));
    cr_assert(!gm__torch_is_small(MiB + 512));
    cr_assert(gm__torch_is_small(gm__torch_round(MiB, NULL)));
    cr_assert(!gm__torch_is_small(gm__torch_round(MiB + 1, NULL)));
}

Test(torch_rules, segment_size)
{
    cr_assert_eq(gm__torch_segment_size(512), 2 * MiB);
    cr_assert_eq(gm__torch_segment_size(MiB), 2 * MiB);
    cr_assert_eq(gm__torch_segment_size(MiB + 512), 20 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB - 512), 20 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB), 10 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB + 512), 12 * MiB);
    cr_assert_eq(gm__torch_segment_size(12 * MiB), 12 * MiB);
    cr_assert_eq(gm__torch_segment_size(GiB + 512), GiB + 2 * MiB);
}

Test(torch_rules, should_split)
{
    /* small pool or expandable: remainder >= 512 */
    cr_assert(!gm__torch_should_split(512, 0, 1, UINT64_MAX));
    cr_assert(!gm__torch_should_split(512, 511, 1, UINT64_MAX));
    cr_assert(gm__torch_should_split(512, 512, 1, UINT64_MAX));
    cr_assert(gm__torch_should_split(200 * MiB, 512, 1, 100 * MiB)); /* max_split ignored */
    /* large pool: request < max_split_size and remainder > 1 MiB */
    cr_assert(!gm__torch_should_split(2 * MiB, MiB, 0, UINT64_MAX));
    cr_assert(gm__torch_should_split(2 * MiB, MiB + 512, 0, UINT64_MAX));
    cr_assert(gm__torch_should_split(100 * MiB - 512, 2 * MiB, 0, 100 * MiB));
    cr_assert(!gm__torch_should_split(100 * MiB, 2 * MiB, 0, 100 * MiB));
    cr_assert(!gm__torch_should_split(100 * MiB, 64 * KiB, 0, UINT64_MAX));
}

Test(torch_rules, page_size)
{
    cr_assert_eq(gm__torch_page_size(1), 2 * MiB);
    cr_assert_eq(gm__torch_page_size(0), 20 * MiB);
}

/* ---- the settings ------------------------------------------------------------ */

static void want_div(const uint32_t div[GM_TORCH_INTERVALS],
                     const uint32_t want[GM_TORCH_INTERVALS], const char *what)
{
    for (int i = 0; i < GM_TORCH_INTERVALS; i++)
        cr_assert_eq(div[i], want[i], "%s: interval %d has %u divisions, want %u", what, i, div[i],
                     want[i]);
}

static void divisions_ok(const char *text, const uint32_t want[GM_TORCH_INTERVALS])
{
    uint32_t div[GM_TORCH_INTERVALS];
    memset(div, 0xff, sizeof div);
    gm_error_t err = {0};
    cr_assert_eq(gm__torch_divisions_parse(div, text, &err), 0, "'%s': %s", text, err.msg);
    want_div(div, want, text);
}

static void divisions_bad(const char *text, const char *says)
{
    uint32_t div[GM_TORCH_INTERVALS] = {7};
    gm_error_t err = {0};
    cr_assert_eq(gm__torch_divisions_parse(div, text, &err), GM_EINVAL, "'%s' accepted", text);
    cr_assert(strstr(err.msg, says) != NULL, "'%s': message '%s' lacks '%s'", text, err.msg, says);
    cr_assert(strstr(err.msg, text) != NULL, "'%s': message '%s' does not name it", text,
              err.msg);
    cr_assert_eq(div[0], 7, "'%s': refused, yet changed", text);
}

/* The single-number form: every interval; PyTorch takes a power of two
 * only (not 0), read by stoi (so at most 2^30). */
Test(torch_rules, divisions_single_number)
{
    uint32_t w[GM_TORCH_INTERVALS];
    fill(w, 4);
    divisions_ok("4", w);
    fill(w, 1);
    divisions_ok("1", w);
    fill(w, UINT32_C(1) << 30);
    divisions_ok("1073741824", w);
    fill(w, 0);
    divisions_ok("", w);
    divisions_ok(NULL, w);
    divisions_bad("0", "must be a power of two");
    divisions_bad("3", "must be a power of two");
    divisions_bad("2147483648", "must be a power of two up to 2^30");
    divisions_bad("-4", "must be a power of two");
    divisions_bad("4x", "must be a power of two");
    divisions_bad("4,8", "unexpected ','");
}

/* The per-interval list: the first start also fills every interval below
 * it; ">" fills from the last named interval, that one included (so in
 * [256:1,512:2,>:4] the 512 MiB interval gets 4, as in PyTorch); a start
 * beyond the last interval is the last. */
Test(torch_rules, divisions_per_interval_list)
{
    uint32_t w[GM_TORCH_INTERVALS];
    for (int i = 0; i < GM_TORCH_INTERVALS; i++)
        w[i] = i <= 8 ? 1 : 4;
    divisions_ok("[256:1,512:2,>:4]", w);
    divisions_ok(" [ 256 : 1 , 512 : 2 , > : 4 ] ", w);
    fill(w, 8);
    divisions_ok("[>:8]", w);
    fill(w, 0);
    w[0] = 2;
    w[2] = 8;
    divisions_ok("[1:2,4:8]", w);
    fill(w, 2);
    divisions_ok("[65536:2]", w);
    fill(w, 0);
    w[3] = 0;
    divisions_ok("[8:0]", w);
    for (int i = 0; i < GM_TORCH_INTERVALS; i++)
        w[i] = i < 4 ? 16 : (i == 4 ? 16 : 0);
    w[5] = 0;
    divisions_ok("[16:16,32:0]", w);
}

Test(torch_rules, divisions_bad_lists)
{
    divisions_bad("[300:2]", "interval '300' must be a power of two (MiB)");
    divisions_bad("[256:3]", "divisions '3' must be 0 or a power of two");
    divisions_bad("[256:1,", "missing ']'");
    divisions_bad("[256:1", "missing ']'");
    divisions_bad("[256:1]x", "unexpected 'x'");
    divisions_bad("[256 1]", "expected 'interval:divisions' at '2561'");
    divisions_bad("[256:1;512:2]", "divisions '1;512' must be 0 or a power of two");
    divisions_bad("[:2]", "expected 'interval:divisions' at ':'");
    divisions_bad("[0:2]", "interval '0' must be a power of two");
    divisions_bad("[256:1 512:2]", "divisions '1512' must be 0 or a power of two");
    divisions_bad("[256:1,,512:2]", "expected 'interval:divisions' at ','");
    divisions_bad("[256:18446744073709551616]", "must be 0 or a power of two");
    divisions_bad("[abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz:2]", "item too long");
}

static void conf_ok(const char *text, gm__torch_settings_t *s)
{
    gm__torch_settings_default(s);
    gm_error_t err = {0};
    cr_assert_eq(gm__torch_conf_apply(s, text, &err), 0, "'%s': %s", text, err.msg);
}

static void conf_bad(const char *text, const char *says)
{
    gm__torch_settings_t s;
    gm__torch_settings_default(&s);
    gm_error_t err = {0};
    cr_assert_eq(gm__torch_conf_apply(&s, text, &err), GM_EINVAL, "'%s' accepted", text);
    cr_assert(strncmp(err.msg, "conf '", 6) == 0 && strstr(err.msg, says) != NULL,
              "'%s': message '%s' lacks '%s'", text, err.msg, says);
}

Test(torch_rules, conf_string)
{
    gm__torch_settings_t s;
    conf_ok("", &s);
    cr_assert_eq(s.max_split, UINT64_MAX);
    cr_assert_eq(s.max_nsr, 20 * MiB);
    cr_assert(s.gc == 0.0 && s.align == 0 && s.expandable == 0 && s.div[0] == 0);
    conf_ok("max_split_size_mb:128,max_non_split_rounding_mb:40,garbage_collection_threshold:0.6,"
            "expandable_segments:True,roundup_power2_divisions:[256:1,>:4],base_addr_aligned_kb:16,"
            "backend:native,release_lock_on_cudamalloc:False,pinned_num_register_threads:8,"
            "pinned_reserve_segment_size_mb:64,pinned_use_cuda_host_register:True",
            &s);
    cr_assert_eq(s.max_split, 128 * MiB);
    cr_assert_eq(s.max_nsr, 40 * MiB);
    cr_assert(s.gc == 0.6);
    cr_assert_eq(s.expandable, 1);
    cr_assert_eq(s.align, 16 * KiB);
    /* 256 MiB is interval 8: 0 to 7 get 1, and ">" fills from 8 on */
    cr_assert(s.div[0] == 1 && s.div[7] == 1 && s.div[8] == 4 && s.div[15] == 4);
    /* the single form inside the string; a huge max_split_size_mb is SIZE_MAX / 1 MiB */
    conf_ok("roundup_power2_divisions:2", &s);
    cr_assert(s.div[0] == 2 && s.div[15] == 2);
    conf_ok("max_split_size_mb:18446744073709551615", &s);
    cr_assert_eq(s.max_split, UINT64_MAX / MiB * MiB);

    conf_bad("foo:1", "unknown option 'foo'");
    conf_bad("expandable:True", "did you mean 'expandable_segments'?");
    conf_bad("max_split_size_mb:10", "max_split_size_mb must be >= 20");
    conf_bad("max_split_size_mb:abc", "takes a number of MiB, not 'abc'");
    conf_bad("max_split_size_mb:99999999999999999999", "takes a number of MiB");
    conf_bad("garbage_collection_threshold:1.5", "must be in (0, 1)");
    conf_bad("garbage_collection_threshold:0", "must be in (0, 1)");
    conf_bad("expandable_segments:yes", "expandable_segments takes True or False");
    conf_bad("expandable_segments", "expected ':' after 'expandable_segments'");
    conf_bad("expandable_segments:True,", "trailing ','");
    conf_bad("expandable_segments:True max_split_size_mb:20", "takes True or False");
    conf_bad("roundup_power2_divisions:0", "divisions '0' must be a power of two");
    conf_bad("roundup_power2_divisions:", "needs a value");
    conf_bad("backend:cudaMallocAsync", "native only");
    conf_bad("base_addr_aligned_kb:32", "takes 0 to 16");
    conf_bad("pinned_num_register_threads:3", "power of two up to 128");
    conf_bad("pinned_num_register_threads:256", "power of two up to 128");
    conf_bad("pinned_reserve_segment_size_mb:0", "above 0");
}

static int read_json(const char *json, gm__torch_settings_t *s, gm_error_t *err)
{
    gm_jv_t *v;
    cr_assert_eq(gm_json_parse(json, strlen(json), &v, err), 0, "%s: %s", json, err->msg);
    gm__torch_settings_default(s);
    int rc = gm__torch_settings_read(v, s, err);
    gm_jv_free(v);
    return rc;
}

/* The dict PyTorch records: every member, divisions by interval start. */
Test(torch_rules, recorded_settings)
{
    gm__torch_settings_t s;
    gm_error_t err = {0};
    cr_assert_eq(read_json("{\"PYTORCH_CUDA_ALLOC_CONF\": \"\", \"max_split_size\": -1, "
                           "\"garbage_collection_threshold\": 0, \"expandable_segments\": false, "
                           "\"pinned_num_register_threads\": 1, \"release_lock_on_cudamalloc\": "
                           "false, \"pinned_use_cuda_host_register\": false, "
                           "\"roundup_power2_divisions\": {\"1\": 0, \"2\": 0, \"4\": 0, \"8\": 0, "
                           "\"16\": 0, \"32\": 0, \"64\": 0, \"128\": 0, \"256\": 0, \"512\": 0, "
                           "\"1024\": 0, \"2048\": 0, \"4096\": 0, \"8192\": 0, \"16384\": 0, "
                           "\"32768\": 0}}",
                           &s, &err),
                 0, "%s", err.msg);
    cr_assert_eq(s.max_split, UINT64_MAX);
    cr_assert(s.gc == 0.0 && s.expandable == 0);
    uint32_t w[GM_TORCH_INTERVALS] = {0};
    want_div(s.div, w, "all off");

    cr_assert_eq(read_json("{\"max_split_size\": 134217728, \"garbage_collection_threshold\": 0.8,"
                           " \"expandable_segments\": true, \"max_non_split_rounding_size\": "
                           "41943040, \"roundup_power2_divisions\": {\"1\": 4, \"256\": 2, "
                           "\"512\": 131072, \"65536\": 8}}",
                           &s, &err),
                 0, "%s", err.msg);
    cr_assert_eq(s.max_split, 128 * MiB);
    cr_assert_eq(s.max_nsr, 40 * MiB);
    cr_assert(s.gc == 0.8 && s.expandable == 1);
    w[0] = 4;
    w[8] = 2;
    w[9] = 131072; /* a start beyond the last interval ("65536") names none */
    want_div(s.div, w, "by start");
    /* SIZE_MAX printed as itself: unlimited too */
    cr_assert_eq(read_json("{\"max_split_size\": 18446744073709551615}", &s, &err), 0);
    cr_assert_eq(s.max_split, UINT64_MAX);
    /* a list by interval, a bare number; a non-power-of-two count is kept */
    cr_assert_eq(read_json("{\"roundup_power2_divisions\": [3, 0, 8]}", &s, &err), 0, "%s",
                 err.msg);
    memset(w, 0, sizeof w);
    w[0] = 3;
    w[2] = 8;
    want_div(s.div, w, "list");
    cr_assert_eq(read_json("{\"roundup_power2_divisions\": 4}", &s, &err), 0, "%s", err.msg);
    fill(w, 4);
    want_div(s.div, w, "number");
    /* members not named are left as they were */
    s.max_split = 77;
    gm_jv_t *v;
    cr_assert_eq(gm_json_parse("{}", 2, &v, &err), 0);
    cr_assert_eq(gm__torch_settings_read(v, &s, &err), 0);
    cr_assert_eq(s.max_split, 77);
    cr_assert_eq(s.div[3], 4);
    gm_jv_free(v);
}

Test(torch_rules, recorded_settings_bad)
{
    static const struct {
        const char *json, *says;
    } bad[] = {
        {"[]", "allocator_settings: not a dict"},
        {"{\"roundup_power2_divisions\": {\"3\": 2}}",
         "roundup_power2_divisions: key '3' is not an interval start"},
        {"{\"roundup_power2_divisions\": {\"0\": 2}}", "key '0' is not an interval start"},
        {"{\"roundup_power2_divisions\": {\"x\": 2}}", "key 'x' is not an interval start"},
        {"{\"roundup_power2_divisions\": {\"1\": -1}}", "'1' is not a count of divisions"},
        {"{\"roundup_power2_divisions\": {\"2\": 1.5}}", "'2' is not a count of divisions"},
        {"{\"roundup_power2_divisions\": {\"1\": null}}", "'1' is not a count of divisions"},
        {"{\"roundup_power2_divisions\": {\"1\": \"4\"}}", "'1' is not a count of divisions"},
        {"{\"roundup_power2_divisions\": {\"1\": 2147483648}}", "'1' is not a count of divisions"},
        {"{\"roundup_power2_divisions\": [1, true]}", "element 1 is not a count of divisions"},
        {"{\"roundup_power2_divisions\": -4}", "roundup_power2_divisions: not a count"},
        {"{\"roundup_power2_divisions\": \"4\"}",
         "neither a dict by interval, a list nor a number"},
        {"{\"max_split_size\": \"128MiB\"}", "max_split_size is not a number"},
        {"{\"max_non_split_rounding_size\": -5}",
         "max_non_split_rounding_size is not a byte count"},
        {"{\"garbage_collection_threshold\": 1.5}", "garbage_collection_threshold is not a number"},
        {"{\"garbage_collection_threshold\": \"0.5\"}", "garbage_collection_threshold is not a"},
        {"{\"expandable_segments\": 1}", "expandable_segments is not true or false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gm__torch_settings_t s;
        gm_error_t err = {0};
        cr_assert_eq(read_json(bad[i].json, &s, &err), GM_EFORMAT, "%s accepted", bad[i].json);
        cr_assert(strstr(err.msg, bad[i].says) != NULL, "%s: message '%s' lacks '%s'", bad[i].json,
                  err.msg, bad[i].says);
        cr_assert(strncmp(err.msg, "allocator_settings", 18) == 0, "%s: '%s'", bad[i].json,
                  err.msg);
    }
}
