/*
 * tests/fuzz/fuzz_json.c — fuzz target for the JSON reader (trace
 * attributes and stored results come from files a user may have edited).
 * Each input is parsed and checked (gm__json_check, which must not pass a
 * text the reader refuses); a parsed tree is walked completely.  Any result is
 * fine; a crash, a sanitizer report or a leak is the bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfmt.h"
#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t fuzz_walk(const gm_jv_t *v, int depth)
{
    size_t n = 1;
    uint64_t u;
    int64_t i;
    (void)gm_jv_u64(v, &u);
    (void)gm_jv_i64(v, &i);
    (void)gm_jv_num(v);
    if (gm_jv_str(v) != NULL && strlen(gm_jv_str(v)) > gm_jv_strlen(v))
        abort();
    for (size_t k = 0; k < gm_jv_len(v); k++) {
        const char *key = gm_jv_key_at(v, k);
        if (key != NULL && gm_jv_get(v, key) == NULL)
            abort();
        n += fuzz_walk(gm_jv_at(v, k), depth + 1);
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_error_t err = {0};
    gm_jv_t *v;
    /* the store's check is the tree reader's grammar: what it passes parses */
    int checked = gm__json_check((const char *)data, size, GM_JSON_MAX_DEPTH);
    int rc = gm_json_parse((const char *)data, size, &v, &err);
    if (checked && rc != 0 && rc != GM_ENOMEM)
        abort();
    if (rc == 0) {
        fuzz_walk(v, 0);
        gm_jv_free(v);
    } else if (err.msg[0] == '\0') {
        abort(); /* an error must say what */
    }
    return 0;
}

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    static const char *texts[] = {
        ("{\"allocator_settings\": {\"expandable_segments\": true, \"max_split_size\": -1},"
         " \"recorded\": {\"peak_reserved\": 123456789}, \"block_pad\": 32}"),
        "[1, -2.5e10, \"\\u00e9\\ud83d\\ude00\", true, false, null, [], {}]",
        "{\"a\": [{\"b\": [[[\"c\"]]]}], \"k\": 18446744073709551615}",
    };
    size_t n = sizeof texts / sizeof texts[0];
    gm_fuzz_seed_t *s = calloc(n, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        s[i].len = strlen(texts[i]);
        s[i].data = malloc(s[i].len);
        memcpy(s[i].data, texts[i], s[i].len);
    }
    *out = s;
    return n;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
