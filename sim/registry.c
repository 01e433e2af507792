/*
 * sim/registry.c — the list of policies.
 *
 * GM_POLICY_LIST is the one place a policy is registered: adding
 * `X(caching)` declares `gm__policy_caching` (defined in sim/caching/caching.c) and
 * puts it in the table, in list order, which is the order `gmsim policies`
 * prints and the contract tests run.
 */
#include "gmsim/policy.h"

#include <string.h>

#define GM_POLICY_LIST(X) \
    X(native)             \
    X(caching)            \
    X(bfc)                \
    X(pool)               \
    X(binning)            \
    X(async)              \
    X(buddy)              \
    X(tlsf)               \
    X(offline)

#define GM__POLICY_DECLARE(name) extern const gm_policy_ops_t gm__policy_##name;
GM_POLICY_LIST(GM__POLICY_DECLARE)
#undef GM__POLICY_DECLARE

static const gm_policy_ops_t *const registry_table[] = {
#define GM__POLICY_ENTRY(name) &gm__policy_##name,
    GM_POLICY_LIST(GM__POLICY_ENTRY)
#undef GM__POLICY_ENTRY
};

#define REGISTRY_COUNT (sizeof registry_table / sizeof registry_table[0])

size_t gm_policy_count(void) { return REGISTRY_COUNT; }

/* NULL when i is out of range. */
const gm_policy_ops_t *gm_policy_at(size_t i)
{
    return i < REGISTRY_COUNT ? registry_table[i] : NULL;
}

/* Exact, case-sensitive match on the policy's name; NULL if unknown. */
const gm_policy_ops_t *gm_policy_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < REGISTRY_COUNT; i++)
        if (strcmp(registry_table[i]->name, name) == 0)
            return registry_table[i];
    return NULL;
}

double gm_plan_gap(const gm_plan_info_t *pi)
{
    if (pi->lower_bound == 0 || pi->peak <= pi->lower_bound)
        return 0.0;
    return (double)(pi->peak - pi->lower_bound) / (double)pi->lower_bound;
}

const char *gm_plan_status_name(int status)
{
    switch (status) {
    case GM_PLAN_GREEDY: return "greedy";
    case GM_PLAN_FEASIBLE: return "feasible";
    case GM_PLAN_OPTIMAL: return "optimal";
    default: return "?";
    }
}
