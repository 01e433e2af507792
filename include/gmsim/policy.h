/*
 * gmsim/policy.h — the allocator policy interface and registry.
 *
 * A policy is a const gm_policy_ops_t table.  Each sim/<name>.c keeps
 * everything static and exports its table alone; sim/registry.c lists them
 * (GM_POLICY_LIST) so that `gmsim policies` shows every one.
 *
 * Policies take memory only from their gm_device_t.  The replay engine owns
 * the device, calls alloc/free in trace order, keeps each live block
 * (address and size as returned by alloc) and hands it back to free.  The
 * engine does the allocated-bytes accounting from the returned block sizes;
 * reserved bytes are the device's.
 *
 * Implementations embed gm_policy_t as their first member and downcast with
 * a check of p->ops (see GM_POLICY_DOWNCAST).  Callers reach a policy
 * through gm_policy_alloc, gm_policy_stats and the rest ("calling a
 * policy" below, sim/policy.c), never through its table: the layer fills
 * what every policy would compute alike, answers for an optional
 * operation a policy leaves out, and in a debug build checks the policy's
 * invariants as it goes.
 */
#ifndef GMSIM_POLICY_H
#define GMSIM_POLICY_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/device.h"
#include "gmsim/error.h"
#include "gmsim/layout.h"

GM_API_BEGIN

/* ---- parameters ---------------------------------------------------------- */

typedef enum gm_param_type {
    GM_PARAM_SIZE,   /* bytes, with KiB/MiB/GiB/TiB suffixes (gm_parse_size), or
                        "none"/"unlimited": UINT64_MAX, no limit */
    GM_PARAM_INT,    /* signed 64-bit integer */
    GM_PARAM_DOUBLE, /* real number */
    GM_PARAM_BOOL,   /* true/false, 1/0, yes/no, on/off */
    GM_PARAM_ENUM,   /* one of `choices` ("never|empty"); value is its index */
    GM_PARAM_STRING, /* free text */
} gm_param_type_t;

typedef struct gm_param_spec {
    const char *name;    /* key in --param POLICY.KEY=VALUE */
    gm_param_type_t type;
    const char *def;     /* default, as text in the same syntax */
    const char *help;    /* one line */
    const char *choices; /* GM_PARAM_ENUM: "a|b|c"; GM_PARAM_SIZE whose 0 means
                            no limit: the words that mean it ("none|unlimited"),
                            parsed to 0, so the setting has one value */
} gm_param_spec_t;

typedef union gm_param_value {
    uint64_t size; /* GM_PARAM_SIZE */
    int64_t i;     /* GM_PARAM_INT */
    double d;      /* GM_PARAM_DOUBLE */
    int b;         /* GM_PARAM_BOOL */
    int e;         /* GM_PARAM_ENUM: index into choices */
    const char *s; /* GM_PARAM_STRING: owned by the gm_params_t */
} gm_param_value_t;

/* ---- what a policy may know of the trace --------------------------------- */

/* One allocation's lifetime, indexed by allocation id: the event indices of
 * its ALLOC and FREE (GM_LIFETIME_OPEN when never freed), and their
 * timestamps (ts_ns; for a placement instance its lower and upper), which
 * a planner may use to order its search: event indices say which
 * lifetimes overlap, times how long each one is.  Times all 0: unknown. */
#define GM_LIFETIME_OPEN UINT64_MAX
typedef struct gm_lifetime {
    uint64_t size;
    uint64_t start;    /* event index of the ALLOC */
    uint64_t end;      /* event index of the FREE, or GM_LIFETIME_OPEN */
    uint64_t start_ns; /* the ALLOC's ts_ns */
    uint64_t end_ns;   /* the FREE's ts_ns (0 when never freed) */
} gm_lifetime_t;

/*
 * Given to a policy's prepare before the first event of a trace.  Every
 * field may be absent (NULL / 0): a policy must replay without a context.
 */
typedef struct gm_trace_context {
    const char *name;          /* the trace's name */
    const char *attrs;         /* its attributes: a JSON object text */
    const gm_layout_t *layout; /* the recorded starting layout, or NULL */
    /* Every allocation's lifetime (nlifetimes = ALLOC count), for policies
     * with GM_POLICY_NEEDS_LIFETIMES only; NULL otherwise. */
    const gm_lifetime_t *lifetimes;
    size_t nlifetimes;
    uint64_t events;           /* the trace's event count (0 when unknown) */
    /* Bit i set: parameter i was given explicitly (--param), not defaulted,
     * so that it overrides what the trace records. */
    uint64_t params_set;
} gm_trace_context_t;

/* ---- a planner's plan ---------------------------------------------------- */

/* How good a planner's plan is known to be (gm_plan_info_t.status). */
typedef enum gm_plan_status {
    GM_PLAN_GREEDY = 0,   /* from the heuristics; no search improved it, none proved it */
    GM_PLAN_FEASIBLE = 1, /* found by the exact search, not proved optimal */
    GM_PLAN_OPTIMAL = 2,  /* proved: no plan needs fewer bytes */
} gm_plan_status_t;

/* "greedy", "feasible", "optimal" ("?" for anything else). */
const char *gm_plan_status_name(int status);

typedef struct gm_plan_info {
    int status;             /* gm_plan_status_t */
    uint64_t peak;          /* arena bytes the plan needs */
    uint64_t lower_bound;   /* proved: no plan needs fewer bytes (≤ peak) */
    uint64_t capacity;      /* the capacity it was asked to fit (0: none) */
    uint64_t work;          /* work units spent planning */
    size_t n;               /* allocations planned */
    const uint64_t *offset; /* by allocation id: its offset in the arena */
    const uint64_t *size;   /* by allocation id: its bytes there (rounded) */
} gm_plan_info_t;

/* How far the plan may be above the optimum, as a fraction of the proved
 * lower bound: (peak - lower_bound) / lower_bound; 0 when it is at the
 * bound (or no bound is known). */
double gm_plan_gap(const gm_plan_info_t *pi);

/* ---- the interface ------------------------------------------------------- */

/* gm_policy_ops_t.flags */
#define GM_POLICY_NEEDS_LIFETIMES 0x1u /* plans ahead: prepare needs ctx->lifetimes */
/* stats is costly (it walks the live set): the engine asks for it at t*
 * only before the state next changes other than by an ALLOC.  Set it only
 * where alloc never gives device memory back and a failed alloc changes
 * nothing, so that the state at t* is still there to ask about. */
#define GM_POLICY_LAZY_STATS 0x2u
/* Its device memory may lie anywhere, in any order (its check walker
 * assumes no address order): the replay engine then places its segments
 * at the trace's recorded segment addresses (gm_device_hint), which a
 * policy that breaks ties by address, as PyTorch's best fit does, needs to
 * follow the recorded run.  The other policies keep the device's rising
 * addresses, which their walkers check. */
#define GM_POLICY_RECORDED_ADDRESSES 0x4u

/* gm_policy_ops_t.role: what a policy's runs are when runs are compared
 * (compare's winner, the report's groups, the PyTorch advice).  Exactly one
 * policy is the baseline; test_policy checks the roles against the ops. */
typedef enum gm_policy_role {
    GM_ROLE_CONTENDER = 0, /* an online allocator: its best run may win */
    GM_ROLE_BASELINE,      /* a contender whose defaults are the baseline of
                              every saving (PyTorch's caching allocator) */
    GM_ROLE_REFERENCE,     /* caches nothing (a device call per request, at
                              load by construction): shown, not a contender */
    GM_ROLE_BOUND          /* plans with the whole future (needs lifetimes):
                              a bound to measure against, not a contender */
} gm_policy_role_t;

#define GM_ALLOC_OOM 1 /* alloc result: the request failed after recovery */

typedef struct gm_policy_ops gm_policy_ops_t;
typedef struct gm_check gm_check_t; /* a check's report (below) */

typedef struct gm_policy {
    const gm_policy_ops_t *ops;
    gm_device_t *dev;
    uint64_t calls; /* calls that may change the state, counted by the
                       layer for its debug-build checks (sim/policy.c) */
} gm_policy_t;

typedef struct gm_request {
    uint64_t size;   /* bytes the application asked for, 1 ≤ size ≤ GM_SIZE_LIMIT */
    uint64_t id;     /* allocation ordinal (for policies that plan ahead) */
    uint32_t stream; /* interned stream index */
    uint32_t flags;  /* the ALLOC event's GM_EVENT_* flags (GM_EVENT_PREEXISTING) */
} gm_request_t;

typedef struct gm_block {
    uint64_t addr; /* address inside the policy's device memory */
    uint64_t size; /* bytes handed out (≥ the request, after rounding) */
} gm_block_t;

typedef struct gm_policy_stats {
    uint64_t allocated;    /* sum of live block sizes, by the policy's own count */
    uint64_t largest_free; /* largest block the policy could hand out now
                              without a device malloc (0 when none) */
    uint64_t free_bytes;   /* reserved bytes not in live blocks: filled by
                              gm_policy_stats, not by the policy */
} gm_policy_stats_t;

/* One block of one segment, as a policy's walk shows it. */
typedef struct gm_walk_block {
    uint64_t seg_addr, seg_size; /* the segment (device malloc, region,
                                    expandable range: its mapped bytes) */
    uint32_t stream;             /* the stream the segment serves, or
                                    GM_WALK_ANY_STREAM */
    int pool;                    /* the policy's pool (caching: 0 large,
                                    1 small); -1 when it has none */
    uint64_t addr, size;         /* the block */
    int allocated;               /* 1: handed out; 0: free, cached */
} gm_walk_block_t;

/* gm_walk_block_t.stream of a segment whose free blocks serve a request on
 * any stream (bfc has no streams; RMM's pool takes a block from another
 * stream's list after waiting on that stream). */
#define GM_WALK_ANY_STREAM UINT32_MAX

typedef void (*gm_walk_fn)(void *ctx, const gm_walk_block_t *b);

struct gm_policy_ops {
    const char *name;
    const char *help; /* one line */
    const gm_param_spec_t *params;
    size_t nparams; /* at most 64 */
    unsigned flags; /* GM_POLICY_* */
    gm_policy_role_t role;

    /* Create a policy on dev with values resolved in params order.  Returns
     * 0, or a negative code with err filled. */
    int (*create)(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                  gm_error_t *err);

    /* Serve a request: 0 with *out filled; GM_ALLOC_OOM when the device is
     * full after the policy's own recovery; negative on an internal error. */
    int (*alloc)(gm_policy_t *p, const gm_request_t *req, gm_block_t *out);

    /* Release a block alloc returned (with the request's stream).  0, or a
     * negative code if blk is not a live block of this policy. */
    int (*free)(gm_policy_t *p, const gm_block_t *blk, uint32_t stream);

    /* allocated and largest_free into *out (zeroed by the caller); the
     * layer fills free_bytes. */
    void (*stats)(gm_policy_t *p, gm_policy_stats_t *out);

    /* Walk every structure and report each violated invariant into ck
     * (gm_check_fail), which the layer began; return ck->bad. */
    int (*check)(gm_policy_t *p, gm_check_t *ck);

    void (*destroy)(gm_policy_t *p);

    /* Optional (NULL when the policy caches nothing): give cached memory
     * back to the device, as torch.cuda.empty_cache() does. */
    void (*empty_cache)(gm_policy_t *p);

    /* Optional: learn the trace before its first event (recorded settings,
     * starting layout, lifetimes).  ctx's pointers are valid during the
     * call only.  0, or a negative code with err filled (the replay fails:
     * for example a planner given no lifetimes). */
    int (*prepare)(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err);

    /* Optional: the device synchronized (a MARK tagged "synchronize"): a
     * stream-ordered pool may release memory above its threshold. */
    void (*sync)(gm_policy_t *p);

    /* Optional (planners): the plan prepare made, valid until destroy.  0
     * with *out filled, or GM_ESTATE when nothing is planned yet. */
    int (*plan)(gm_policy_t *p, gm_plan_info_t *out);

    /* Optional (policies that carve segments into blocks: caching, bfc,
     * pool): visit every block of every segment held from the device,
     * each segment's blocks consecutively in address order (unmapped
     * parts of an expandable range left out).  Read only; used to explain
     * an OOM (gm_oom_explain). */
    void (*walk)(gm_policy_t *p, gm_walk_fn fn, void *ctx);
};

/* The part of a policy's table every policy fills alike, from the prefix
 * its statics share: the parameter table prefix_params and the six
 * operations prefix_create ... prefix_destroy.  Inside the initializer:
 *   const gm_policy_ops_t gm__policy_tlsf = {
 *       .name = "tlsf", .help = "...", GM_POLICY_OPS(tlsf), .empty_cache = ...};
 * (A static initializer: a function cannot do it.) */
#define GM_POLICY_OPS(prefix)                                                  \
    .params = prefix##_params,                                                 \
    .nparams = sizeof prefix##_params / sizeof prefix##_params[0],             \
    .create = prefix##_create, .alloc = prefix##_alloc, .free = prefix##_free, \
    .stats = prefix##_stats, .check = prefix##_check, .destroy = prefix##_destroy

/* For a policy's create: its object, `size` bytes (a struct whose first
 * member is gm_policy_t) zeroed, of the policy whose table is ops, on dev;
 * NULL with err filled (GM_ENOMEM, naming the policy) when out of memory. */
void *gm_policy_new(size_t size, const gm_policy_ops_t *ops, gm_device_t *dev, gm_error_t *err);

/* Checked downcast: NULL if p is not of the policy whose table is `ops`. */
#define GM_POLICY_DOWNCAST(type, p, table) \
    ((p) != NULL && (p)->ops == &(table) ? (type *)(void *)(p) : (type *)NULL)

/* ---- a check's report ---------------------------------------------------- */

/*
 * What a policy's check op writes through: it counts the violated
 * invariants and keeps the first one's reason.  The layer begins one
 * (gm_check_begin: why cleared) and hands it to the check op, which calls
 * gm_check_fail for each violation, each reason naming the invariant and
 * where ("arena 0x1000: blocks cover 4096 of 8192 bytes"), and returns
 * ck->bad (which gm_check_fail returns too, for a violation that ends the
 * walk).  A policy built on another (binning on pool) reports the inner
 * one's violations into the same report, through the inner op.
 */
struct gm_check {
    char *why;     /* the first reason, or NULL: only count */
    size_t whylen;
    int bad;       /* violations so far */
};

void gm_check_begin(gm_check_t *ck, char *why, size_t whylen);
/* Count a violation (its reason kept when it is the first); the count. */
int gm_check_fail(gm_check_t *ck, const char *fmt, ...) GM_PRINTF(2, 3);

/* ---- calling a policy ---------------------------------------------------- */

/*
 * Every caller goes through these.  They fill what every policy would
 * compute alike (stats' free_bytes), answer for the optional operations a
 * policy leaves NULL (empty_cache and sync: nothing; prepare: 0; plan:
 * GM_ESTATE; walk: GM_EUNSUPPORTED), and in a debug build (NDEBUG not
 * defined) check the policy's invariants after the calls that may change
 * its state: after each of the first GM_POLICY_ASSERT_FIRST such calls,
 * then after every GM_POLICY_ASSERT_EVERY-th, so a long replay pays a
 * check's walk per that many operations (and a replay that makes many
 * short-lived policies, as defragmentation does, pays the first calls'
 * checks once per policy: hence the smaller first window).  A violation aborts with the
 * policy's name, the call and the invariant its check names.  A release
 * build compiles the checks out: gm_policy_alloc and gm_policy_free are
 * then the table's calls and nothing more.
 */
#define GM_POLICY_ASSERT_FIRST 128u
#define GM_POLICY_ASSERT_EVERY 1024u

/* In a debug build: count a state-changing call of p (op: "alloc", "free",
 * ...) and, when the schedule above says so, check p's invariants;
 * aborts on a violation.  Compiled in always (tests call it); the calls
 * below make it only where NDEBUG is not defined. */
void gm_policy_assert(gm_policy_t *p, const char *op);
#ifdef NDEBUG
#define GM_POLICY_ASSERT(p, op) ((void)0)
#else
#define GM_POLICY_ASSERT(p, op) gm_policy_assert((p), (op))
#endif

/* ops->create; *out's call count starts at 0. */
int gm_policy_create(const gm_policy_ops_t *ops, gm_device_t *dev, const gm_param_value_t *values,
                     gm_policy_t **out, gm_error_t *err);
void gm_policy_destroy(gm_policy_t *p); /* NULL: nothing */

static inline int gm_policy_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    int rc = p->ops->alloc(p, req, out);
    GM_POLICY_ASSERT(p, "alloc");
    return rc;
}

static inline int gm_policy_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    int rc = p->ops->free(p, blk, stream);
    GM_POLICY_ASSERT(p, "free");
    return rc;
}

/* *out zeroed, the policy's figures, then free_bytes = the device's
 * reserved bytes less allocated (0 when allocated is more). */
void gm_policy_stats(gm_policy_t *p, gm_policy_stats_t *out);
/* ops->check on a report begun here: the number of violated invariants,
 * the first one's reason in why (cleared when none; why may be NULL). */
int gm_policy_check(gm_policy_t *p, char *why, size_t whylen);
void gm_policy_empty_cache(gm_policy_t *p);
void gm_policy_sync(gm_policy_t *p);
int gm_policy_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err);
int gm_policy_plan(gm_policy_t *p, gm_plan_info_t *out);
int gm_policy_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx);

/* ---- registry ------------------------------------------------------------ */

size_t gm_policy_count(void);
const gm_policy_ops_t *gm_policy_at(size_t i);
const gm_policy_ops_t *gm_policy_find(const char *name); /* NULL if unknown */

/* ---- parameter sets ------------------------------------------------------ */

/*
 * Values for one policy: defaults, then "KEY=VALUE" settings applied in
 * order.  Unknown keys and bad values are GM_EINVAL with a message naming
 * the policy, key and text.
 */
typedef struct gm_params {
    const gm_policy_ops_t *ops;
    gm_param_value_t *values; /* ops->nparams entries */
    char **strings;           /* owned copies for GM_PARAM_STRING */
    uint64_t set;             /* bit i: parameter i was set by gm_params_set */
} gm_params_t;

int gm_params_init(gm_params_t *p, const gm_policy_ops_t *ops, gm_error_t *err);
int gm_params_set(gm_params_t *p, const char *key, const char *value, gm_error_t *err);
void gm_params_release(gm_params_t *p);

/* Parse one value of spec's type from text. */
int gm_param_parse(const gm_param_spec_t *spec, const char *text, gm_param_value_t *out,
                   gm_error_t *err);

/* For a policy's create: a value that parsed but breaks one of the
 * policy's rules.  GM_EINVAL, with err "invalid value 'V' for POLICY.KEY:
 * WHY" (POLICY the name in ops). */
int gm_param_invalid(gm_error_t *err, const gm_policy_ops_t *ops, const char *key, uint64_t v,
                     const char *why);

/* Format a value as JSON (number, bool, or quoted string) into buf. */
void gm_param_json(const gm_param_spec_t *spec, gm_param_value_t v, char *buf, size_t len);

GM_API_END

#endif
