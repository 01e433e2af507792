/*
 * tests/test_gpus.c — the device presets (gmsim/gpus.h): unique names,
 * every MIG slice under an existing card and no larger than it, each
 * capacity a little under its nominal size (the runtime's total is below
 * the marketing figure, never above), lookups case-insensitive with
 * aliases, and a clear error for an unknown name.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/gpus.h"
#include "util.h"

#define GIB 1073741824.0

/* The nominal GB in a name: "a100-80gb" → 80, "h200:3g.71gb" → 71; the
 * card's table entries without a size in the name use the description. */
static double nominal(const gm_gpu_preset_t *g)
{
    const char *s = strchr(g->name, ':');
    s = s ? strchr(s, '.') + 1 : NULL;
    if (s == NULL) {
        const char *p = g->desc;
        for (; *p; p++) /* the first "NNGB" in the description */
            if (*p >= '0' && *p <= '9' && (p == g->desc || p[-1] == ' ')) {
                char *end;
                double v = strtod(p, &end);
                if (strncmp(end, "GB", 2) == 0)
                    return v;
            }
        return 0;
    }
    return strtod(s, NULL);
}

Test(gpus, table_is_consistent)
{
    size_t n = gm_gpu_count();
    cr_assert_geq(n, 20);
    cr_assert_null(gm_gpu_at(n));
    for (size_t i = 0; i < n; i++) {
        const gm_gpu_preset_t *g = gm_gpu_at(i);
        cr_assert(g->name && g->desc && g->source && g->capacity > 0);
        for (size_t k = 0; k < i; k++)
            cr_assert_str_neq(g->name, gm_gpu_at(k)->name, "duplicate %s", g->name);
        cr_assert_eq(gm_gpu_find(g->name), g, "%s", g->name);
        cr_assert_eq(g->capacity % (1u << 20), 0, "%s: not whole MiB", g->name);
        double nom = nominal(g);
        cr_assert_gt(nom, 0, "%s: no nominal size", g->name);
        double r = (double)g->capacity / GIB / nom;
        /* MI250X: one of its two 64 GB dies */
        if (strcmp(g->name, "mi250x") == 0)
            r = (double)g->capacity / GIB / 64;
        cr_assert(r > 0.88 && r <= 1.0, "%s: %.2f GiB for %.0f GB nominal", g->name,
                  (double)g->capacity / GIB, nom);
        if (g->parent) {
            const gm_gpu_preset_t *p = gm_gpu_find(g->parent);
            cr_assert_not_null(p, "%s: no card %s", g->name, g->parent);
            cr_assert_null(p->parent);
            cr_assert_leq(g->capacity, p->capacity, "%s larger than its card", g->name);
            cr_assert_eq(strncmp(g->name, p->name, strlen(p->name)), 0);
        }
    }
}

Test(gpus, lookup)
{
    uint64_t cap = 0;
    gm_error_t err = {0};
    cr_assert_eq(gm_gpu_capacity("A100-80GB", &cap, &err), 0);
    cr_assert_eq(cap, UINT64_C(81050) << 20);
    cr_assert_eq(gm_gpu_find("h100"), gm_gpu_find("h100-80gb"));
    cr_assert_eq(gm_gpu_find("a100:1g.10gb"), gm_gpu_find("a100-80gb:1g.10gb"));
    cr_assert_not_null(gm_gpu_find("h200:3g.71gb"));
    cr_assert_null(gm_gpu_find("a100-80gb:9g.99gb"));
    cr_assert_null(gm_gpu_find(NULL));
    cr_assert_eq(gm_gpu_capacity("h900", &cap, &err), GM_ENOTFOUND);
    cr_assert(strstr(err.msg, "'h900'") && strstr(err.msg, "gmsim devices"), "%s", err.msg);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_assert_null(gm_gpu_find(longname));
}
