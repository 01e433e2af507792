/*
 * capture/capture.c — libgmsim_capture.so: records the device
 * allocations and frees of a running program into a spool file
 * (spool_format.h), without changing what the program sees.  This file
 * is the recorder (the slots, the spool, start, exit, fork and signals,
 * gm__cap_emit); the interposed CUDA entry points are in hooks.c, the
 * PyTorch pluggable allocator and NVTX in torch_nvtx.c, the CUPTI
 * subscriber in cupti.c.
 *
 * Entry points (LD_PRELOAD): the CUDA runtime and driver allocation calls,
 * cuGetProcAddress[_v2] and cudaGetDriverEntryPoint[ByVersion] (which hand
 * out our wrappers for the names we record, so that driver entry points
 * obtained by name are seen too), the NVTX v2 range calls, NVTX v3
 * injection (InitializeInjectionNvtx2, NVTX_INJECTION64_PATH), and the
 * PyTorch pluggable-allocator pair gmsim_torch_alloc/gmsim_torch_free.
 * Each wrapper resolves the real function lazily (dlsym(RTLD_NEXT), then
 * any already-loaded library that defines it, for runtimes loaded with
 * RTLD_LOCAL), forwards the call unchanged and records it.
 *
 * Recording (the hot path takes no lock and allocates nothing): each
 * thread owns a slot, a fixed 16 KiB block in a static array claimed on
 * its first record.  A record is appended to the slot; the owning thread
 * itself writes the whole block, checksummed, with one write(2) to the
 * process's spool file (O_APPEND) when it is full or when its oldest
 * record is older than the flush interval (GMSIM_CAPTURE_FLUSH_MS, default
 * 50).  Once per interval one recording thread also sweeps the other
 * slots and writes those whose records are older than the interval (the
 * slot state word is the only shared datum: IDLE → BUSY by its owner,
 * IDLE → FLUSH by a sweeper, each a compare-and-swap that does not
 * contend in the common case).
 *
 * Consistency: exit() and a normal return write every slot (a destructor)
 * and switch to writing each later record at once (static destructors of
 * the CUDA runtime still free memory); a thread's exit writes its slot
 * (a pthread key destructor); fatal signals (SEGV, BUS, FPE, ILL, ABRT,
 * TERM, INT, HUP, QUIT, unless ignored) write every slot and then chain to
 * the previous handler or the default action; fork gives the child a spool
 * of its own (pthread_atfork) and drops the parent's pending records in
 * it.  _exit() and SIGKILL run no code of ours: what was written survives,
 * so at most the records of the last flush interval of each thread are
 * lost (plus those of a thread idle since, until some thread records
 * again), and every complete block is recoverable.  A block written twice
 * (a signal arriving while its owner writes it) carries the same sequence
 * number and is read once.
 *
 * Failures (no spool directory, a write error, more threads than slots is
 * not one: those write each record at once): recording stops, one message
 * goes to stderr, and the program runs on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "capture/capture.h"

#define CAP_SLOTS 256
#define CAP_BLOCK_BYTES 16384
#define CAP_PAYLOAD (CAP_BLOCK_BYTES - SPOOL_HDR_BYTES)

enum { SLOT_FREE = 0, SLOT_IDLE, SLOT_BUSY, SLOT_FLUSH };

typedef struct cap_slot {
    atomic_int state;
    /* nrec << 32 | payload bytes, one word: a signal handler on the owning
     * thread reads a count and a length that agree */
    _Atomic uint64_t fill;
    uint32_t tid;     /* the owner's thread id */
    uint64_t seq;     /* the block's sequence number, taken at its first record */
    uint64_t base_ts; /* time of its first record (records count from it) */
    _Alignas(64) unsigned char block[CAP_BLOCK_BYTES];
} cap_slot_t;

__thread gm__cap_tls_t gm__cap_tls __attribute__((tls_model("initial-exec")));
atomic_int gm__cap_hooks_on = 1;
_Atomic uint64_t gm__cap_tsc_mult;
uint64_t gm__cap_tsc0, gm__cap_mono0;
atomic_int gm__cap_cupti_fallback;

static cap_slot_t cap_slots[CAP_SLOTS];

/* A slot's fill, read and set by its user.  The signal fences keep the
 * record's bytes before the store that counts it, as a signal handler on
 * the same thread sees them. */
#define CAP_FILL(s) atomic_load_explicit(&(s)->fill, memory_order_relaxed)
#define CAP_SET_FILL(s, v)                                 \
    do {                                                   \
        atomic_signal_fence(memory_order_seq_cst);         \
        atomic_store_explicit(&(s)->fill, (v), memory_order_relaxed); \
        atomic_signal_fence(memory_order_seq_cst);         \
    } while (0)
atomic_int gm__cap_state;
static atomic_int cap_sync;       /* 1 after the exit flush: write each record at once */
static atomic_int cap_said;       /* the one failure message was printed */
static atomic_uint_fast64_t cap_seq = 1;
static atomic_uint_fast64_t cap_last_sweep;
static atomic_uint cap_next_slot;
static int cap_fd = -1;
static uint64_t cap_flush_ns = 50000000u;
static pthread_key_t cap_key;
static int cap_once_done; /* key, atfork and signal handlers set up (once per image) */

/* ---- messages -------------------------------------------------------------- */

void gm__cap_say(const char *msg)
{
    char buf[512];
    size_t n = 0;
    const char *parts[3] = {"gmsim capture: ", msg, "\n"};
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && n < sizeof buf; p++)
            buf[n++] = *p;
    ssize_t w = write(2, buf, n);
    (void)w;
}

/* Stop recording for good, saying why once. */
static void cap_fail(const char *what, int e)
{
    atomic_store(&gm__cap_state, CAP_STOPPED);
    if (atomic_exchange(&cap_said, 1))
        return;
    char msg[4400];
    snprintf(msg, sizeof msg, "%.4200s%s%s; recording stopped, the program runs on", what,
             e ? ": " : "", e ? strerror(e) : "");
    gm__cap_say(msg);
}

int gm__cap_wanted(void)
{
    const char *dir = getenv("GMSIM_CAPTURE_DIR");
    return dir != NULL && dir[0] != '\0';
}

/* ---- writing blocks ---------------------------------------------------------- */

/* Write one block (header filled here) with one write(2).  Safe in a
 * signal handler.  On failure recording stops. */
static void cap_write_block(unsigned char *blk, uint16_t type, uint32_t used, uint32_t nrec,
                            uint32_t tid, uint64_t seq, uint64_t base_ts)
{
    spool_hdr_t h = {SPOOL_MAGIC, SPOOL_VERSION, type, used, nrec, tid, 0, seq, base_ts, 0};
    memcpy(blk, &h, 40);
    h.sum = spool_sum(blk, blk + SPOOL_HDR_BYTES, used);
    memcpy(blk + 40, &h.sum, 8);
    size_t len = SPOOL_HDR_BYTES + used, off = 0;
    int fd = cap_fd;
    if (fd < 0)
        return;
    while (off < len) {
        ssize_t w = write(fd, blk + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            cap_fail("cannot write the spool file", w < 0 ? errno : ENOSPC);
            return;
        }
        off += (size_t)w;
    }
}

/* Write a slot's pending block and empty it; the caller owns the slot. */
static void cap_slot_flush(cap_slot_t *s)
{
    uint64_t f = CAP_FILL(s);
    if (f >> 32)
        cap_write_block(s->block, SPOOL_BLOCK_RECORDS, (uint32_t)f, (uint32_t)(f >> 32), s->tid,
                        s->seq, s->base_ts);
    CAP_SET_FILL(s, 0);
}

/* Take a slot that is IDLE (spinning while someone flushes it); spins at
 * most `tries` rounds (0: no limit).  1 when taken. */
static int cap_slot_take(cap_slot_t *s, int to, long tries)
{
    for (long i = 0;; i++) {
        int expect = SLOT_IDLE;
        if (atomic_compare_exchange_weak_explicit(&s->state, &expect, to, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
        if (expect == SLOT_FREE)
            return 0;
        if (tries != 0 && i >= tries)
            return 0;
        if ((i & 63) == 63)
            sched_yield();
    }
}

/* Write every slot whose block is older than min_age ns (0: all); the
 * caller's own slot is skipped when skip != NULL.  A slot in use waits
 * `tries` rounds for its user (a periodic sweep, tries < 0, passes it by). */
static void cap_sweep(uint64_t now, uint64_t min_age, const cap_slot_t *skip, long tries)
{
    for (int i = 0; i < CAP_SLOTS; i++) {
        cap_slot_t *s = &cap_slots[i];
        int st = atomic_load_explicit(&s->state, memory_order_relaxed);
        if (s == skip || st == SLOT_FREE || (tries < 0 && st != SLOT_IDLE))
            continue;
        if (!cap_slot_take(s, SLOT_FLUSH, tries))
            continue;
        if ((CAP_FILL(s) >> 32) && (min_age == 0 || now - s->base_ts >= min_age))
            cap_slot_flush(s);
        atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
    }
}

/* ---- start, exit, fork, signals --------------------------------------------- */

static void cap_thread_exit(void *v)
{
    cap_slot_t *s = v;
    if (s == NULL)
        return;
    if (cap_slot_take(s, SLOT_FLUSH, 0)) {
        cap_slot_flush(s);
        atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    }
    if (gm__cap_tls.slot == s)
        gm__cap_tls.slot = NULL;
}

static void cap_fork_child(void)
{
    /* The parent writes its own pending records; the child starts afresh
     * with a spool of its own at its first record. */
    if (cap_fd >= 0)
        close(cap_fd);
    cap_fd = -1;
    for (int i = 0; i < CAP_SLOTS; i++) {
        CAP_SET_FILL(&cap_slots[i], 0);
        atomic_store(&cap_slots[i].state, SLOT_FREE);
    }
    gm__cap_tls.slot = NULL;
    gm__cap_tls.tid = 0;
    if (cap_once_done)
        pthread_setspecific(cap_key, NULL);
    int st = atomic_load(&gm__cap_state);
    if (st == CAP_ON || st == CAP_STARTING)
        atomic_store(&gm__cap_state, CAP_IDLE);
    atomic_store(&cap_sync, 0);
}

#define CAP_NSIGS 9
static const int cap_sigs[CAP_NSIGS] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                        SIGTERM, SIGINT, SIGHUP, SIGQUIT};
static struct sigaction cap_prev[CAP_NSIGS];

/* Write everything that can be written, from a signal handler. */
static void cap_flush_all_signal(void)
{
    cap_slot_t *own = gm__cap_tls.slot;
    if (own != NULL && atomic_load(&own->state) == SLOT_BUSY) {
        /* Interrupted inside our own append: the records the fill counts
         * are whole; write them without emptying the slot (if the program goes
         * on, the block is written again, whole, under the same number). */
        uint64_t f = CAP_FILL(own);
        if (f >> 32)
            cap_write_block(own->block, SPOOL_BLOCK_RECORDS, (uint32_t)f, (uint32_t)(f >> 32),
                            own->tid, own->seq, own->base_ts);
    }
    cap_sweep(0, 0, own && atomic_load(&own->state) == SLOT_BUSY ? own : NULL, 200000);
}

static void cap_on_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved = errno;
    if (atomic_load(&gm__cap_state) == CAP_ON)
        cap_flush_all_signal();
    int k = 0;
    while (k < CAP_NSIGS && cap_sigs[k] != sig)
        k++;
    errno = saved;
    if (k == CAP_NSIGS)
        return;
    struct sigaction *p = &cap_prev[k];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction != NULL) {
            p->sa_sigaction(sig, info, ctx);
            return;
        }
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    } else if (p->sa_handler == SIG_IGN) {
        return;
    }
    /* The default action: restore it and deliver the signal again; it is
     * blocked in here, so it arrives as the handler returns (a synchronous
     * fault would also fault anew). */
    sigaction(sig, p, NULL);
    raise(sig);
}

static void cap_install_signals(void)
{
    for (int k = 0; k < CAP_NSIGS; k++) {
        struct sigaction old;
        if (sigaction(cap_sigs[k], NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue; /* ignored on purpose (nohup): leave it */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = cap_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        cap_prev[k] = old;
        sigaction(cap_sigs[k], &sa, NULL);
    }
}

__attribute__((destructor)) static void cap_fini(void)
{
    if (atomic_load(&gm__cap_state) != CAP_ON)
        return;
    atomic_store(&cap_sync, 1);
    cap_sweep(0, 0, NULL, 1000000);
    cap_slot_t *own = gm__cap_tls.slot;
    if (own != NULL && cap_slot_take(own, SLOT_BUSY, 1000000)) {
        cap_slot_flush(own);
        atomic_store(&own->state, SLOT_IDLE);
    }
}

/* Copy src into dst as a name component: letters, digits, '-', '_'. */
static void cap_component(char *dst, size_t len, const char *src)
{
    size_t n = 0;
    for (; *src && *src != '.' && n + 1 < len; src++)
        dst[n++] = ((*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z') ||
                    (*src >= '0' && *src <= '9') || *src == '-' || *src == '_')
                       ? *src
                       : '_';
    if (n == 0 && len > 1)
        dst[n++] = 'x';
    dst[n] = '\0';
}

/* 1 for a decimal integer. */
static int cap_is_int(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static unsigned char cap_hdr_block[SPOOL_HDR_BYTES + 4096] __attribute__((aligned(8)));

/* Open the spool and write its header block; 0, or −1 with recording
 * stopped. */
static int cap_open_spool(void)
{
    const char *dir = getenv("GMSIM_CAPTURE_DIR");
    const char *ms = getenv("GMSIM_CAPTURE_FLUSH_MS");
    if (ms != NULL && cap_is_int(ms) && strlen(ms) < 5) /* at most 4 s: a block's span */
        cap_flush_ns = (uint64_t)atol(ms) * 1000000u;
    char host[256], hostc[80];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "host");
    host[sizeof host - 1] = '\0';
    cap_component(hostc, sizeof hostc, host);
    const char *rank = getenv("RANK"), *lrank = getenv("LOCAL_RANK"), *ws = getenv("WORLD_SIZE");
    char path[4096], rankpart[40] = "";
    if (cap_is_int(rank) && strlen(rank) < 12)
        snprintf(rankpart, sizeof rankpart, ".rank%s", rank);
    pid_t pid = getpid();
    int fd = -1;
    for (int k = 0; k < 100 && fd < 0; k++) {
        char extra[16] = "";
        if (k > 0)
            snprintf(extra, sizeof extra, "-%d", k);
        if ((size_t)snprintf(path, sizeof path, "%s/%s.%ld%s%s.spool", dir, hostc, (long)pid,
                             extra, rankpart) >= sizeof path) {
            cap_fail("the spool directory name is too long", 0);
            return -1;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        char what[4160];
        snprintf(what, sizeof what, "cannot create the spool file '%s'", path);
        cap_fail(what, errno);
        return -1;
    }
    cap_fd = fd;
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    uint64_t mono = gm__cap_now();
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    for (char *p = exe; *p; p++)
        if (*p == '\n')
            *p = '?';
    const char *mode = getenv("GMSIM_CAPTURE_MODE");
    if (mode == NULL || strlen(mode) >= 16)
        mode = "preload";
    char modebuf[32];
    if (atomic_load(&gm__cap_cupti_fallback) && strncmp(mode, "cupti", 5) == 0) {
        snprintf(modebuf, sizeof modebuf, "cupti-fallback%s", mode + 5);
        mode = modebuf;
    }
    char *text = (char *)cap_hdr_block + SPOOL_HDR_BYTES;
    int len = snprintf(text, 4096,
                       "gmsim_spool=%d\nhost=%s\npid=%ld\nppid=%ld\nrank=%s\nlocal_rank=%s\n"
                       "world_size=%s\nmode=%s\nt0_mono_ns=%llu\nt0_real_ns=%llu\n"
                       "flush_ms=%llu\nexe=%s\n",
                       SPOOL_VERSION, hostc, (long)pid, (long)getppid(),
                       cap_is_int(rank) ? rank : "", cap_is_int(lrank) ? lrank : "",
                       cap_is_int(ws) ? ws : "", mode,
                       (unsigned long long)mono,
                       (unsigned long long)real.tv_sec * 1000000000ull +
                           (unsigned long long)real.tv_nsec,
                       (unsigned long long)(cap_flush_ns / 1000000u), exe);
    if (len < 0 || len >= 4096 - 8)
        len = 4096 - 8;
    size_t padded = ((size_t)len + 1 + 7) & ~(size_t)7;
    memset(text + len, 0, padded - (size_t)len);
    cap_write_block(cap_hdr_block, SPOOL_BLOCK_HEADER, (uint32_t)padded, 0, 0,
                    atomic_fetch_add(&cap_seq, 1), 0);
    return atomic_load(&gm__cap_state) == CAP_STOPPED ? -1 : 0;
}

/* Switch gm__cap_now() to the TSC where that is safe (see capture.h). */
static void cap_calibrate(void)
{
#if defined(__x86_64__)
    const char *clk = getenv("GMSIM_CAPTURE_CLOCK");
    if (atomic_load(&gm__cap_tsc_mult) != 0 || (clk != NULL && strcmp(clk, "mono") == 0))
        return;
    char src[32] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, src, sizeof src - 1);
        src[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    if (strncmp(src, "tsc", 3) != 0 || (src[3] != '\n' && src[3] != '\0'))
        return; /* the kernel does not trust the TSC: neither do we */
    uint64_t t0 = __rdtsc(), m0 = gm__cap_mono(), t1, m1;
    do {
        t1 = __rdtsc();
        m1 = gm__cap_mono();
    } while (m1 - m0 < 500000);
    if (t1 <= t0)
        return;
    uint64_t mult = (uint64_t)(((unsigned __int128)(m1 - m0) << 32) / (t1 - t0));
    if (mult == 0)
        return;
    gm__cap_tsc0 = t1;
    gm__cap_mono0 = m1;
    atomic_store_explicit(&gm__cap_tsc_mult, mult, memory_order_release);
#endif
}

/* Bring recording up (first record of the process, or of a fork child).
 * Returns 1 when recording. */
static int cap_start(void)
{
    for (;;) {
        int st = atomic_load(&gm__cap_state);
        if (st == CAP_ON)
            return 1;
        if (st == CAP_STOPPED)
            return 0;
        if (st == CAP_STARTING) {
            sched_yield();
            continue;
        }
        int expect = CAP_IDLE;
        if (atomic_compare_exchange_strong(&gm__cap_state, &expect, CAP_STARTING))
            break;
    }
    int saved = errno;
    if (!gm__cap_wanted()) {
        atomic_store(&gm__cap_state, CAP_STOPPED);
        errno = saved;
        return 0;
    }
    if (!cap_once_done) {
        if (pthread_key_create(&cap_key, cap_thread_exit) != 0) {
            cap_fail("cannot create a thread key", errno);
            errno = saved;
            return 0;
        }
        pthread_atfork(NULL, NULL, cap_fork_child);
        cap_install_signals();
        cap_once_done = 1;
    }
    cap_calibrate();
    int ok = cap_open_spool() == 0;
    if (ok) {
        int expect = CAP_STARTING;
        atomic_compare_exchange_strong(&gm__cap_state, &expect, CAP_ON);
        ok = atomic_load(&gm__cap_state) == CAP_ON;
    }
    errno = saved;
    return ok;
}

/* Claim a free slot for this thread; NULL when all are taken. */
static cap_slot_t *cap_claim(void)
{
    unsigned start = atomic_fetch_add(&cap_next_slot, 1);
    for (unsigned i = 0; i < CAP_SLOTS; i++) {
        cap_slot_t *s = &cap_slots[(start + i) % CAP_SLOTS];
        int expect = SLOT_FREE;
        if (atomic_load_explicit(&s->state, memory_order_relaxed) == SLOT_FREE &&
            atomic_compare_exchange_strong(&s->state, &expect, SLOT_BUSY)) {
            CAP_SET_FILL(s, 0);
            s->tid = gm__cap_tls.tid;
            atomic_store(&s->state, SLOT_IDLE);
            gm__cap_tls.slot = s;
            pthread_setspecific(cap_key, s);
            return s;
        }
    }
    return NULL;
}

/* ---- the record path --------------------------------------------------------- */

void gm__cap_emit(uint8_t op, uint64_t ts, uint64_t addr, uint64_t size, uint64_t stream,
                  uint64_t aux, int32_t result, int32_t device, uint8_t flags, const char *text)
{
    if (atomic_load_explicit(&gm__cap_state, memory_order_acquire) != CAP_ON && !cap_start())
        return;
    int saved = errno;
    if (gm__cap_tls.tid == 0)
        gm__cap_tls.tid = (uint32_t)syscall(SYS_gettid);
    cap_slot_t *s = gm__cap_tls.slot;
    if (s != NULL && !cap_slot_take(s, SLOT_BUSY, 0))
        s = gm__cap_tls.slot = NULL; /* released meanwhile (thread exit) */
    if (s == NULL && (s = cap_claim()) != NULL)
        cap_slot_take(s, SLOT_BUSY, 0);
    if (s == NULL) {
        /* More threads than slots: this record goes out alone, from the stack. */
        _Alignas(8) unsigned char lone[SPOOL_HDR_BYTES + SPOOL_REC_MAX];
        size_t len = spool_encode(lone + SPOOL_HDR_BYTES, ts, ts, op, flags, device, addr, size,
                                  stream, aux, result, text);
        cap_write_block(lone, SPOOL_BLOCK_RECORDS, (uint32_t)len, 1, gm__cap_tls.tid,
                        atomic_fetch_add(&cap_seq, 1), ts);
        errno = saved;
        return;
    }
    /* A new block when this one is full or spans the flush interval (its
     * records' times count from its first in 32 bits). */
    size_t need = text != NULL ? SPOOL_REC_MAX : 48;
    uint64_t f = CAP_FILL(s);
    if ((f >> 32) && (CAP_PAYLOAD - (uint32_t)f < need || ts - s->base_ts >= cap_flush_ns ||
                      ts < s->base_ts)) {
        cap_slot_flush(s);
        f = 0;
    }
    if ((f >> 32) == 0) {
        s->seq = atomic_fetch_add_explicit(&cap_seq, 1, memory_order_relaxed);
        s->base_ts = ts;
    }
    size_t len = spool_encode(s->block + SPOOL_HDR_BYTES + (uint32_t)f, s->base_ts, ts, op,
                              flags, device, addr, size, stream, aux, result, text);
    CAP_SET_FILL(s, f + (UINT64_C(1) << 32) + len);
    if (cap_flush_ns == 0 || atomic_load_explicit(&cap_sync, memory_order_relaxed))
        cap_slot_flush(s);
    atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
    /* Once per interval, one thread writes the others' old blocks. */
    uint64_t last = atomic_load_explicit(&cap_last_sweep, memory_order_relaxed);
    if (ts - last >= cap_flush_ns &&
        atomic_compare_exchange_strong(&cap_last_sweep, &last, ts))
        cap_sweep(ts, cap_flush_ns, s, -1);
    errno = saved;
}
