/*
 * formats/spool.c — the reader of capture spools (gmsim/capture.h; format in
 * formats/spool_format.h).
 *
 * A spool is read whole.  Blocks are checked one by one (magic, version,
 * bounds, checksum); one that fails is skipped and the reader resynchronizes
 * on the next byte position where a whole block starts (blocks of several
 * threads are appended to one file, so a torn block may sit between whole
 * ones), and a last block cut short is dropped: both are counted, never
 * fatal.  A block number seen twice keeps the copy with more records (a
 * signal handler may have written a block its owner wrote again later).
 * Records of every kept block are then sorted by time stamp (block number
 * and position breaking ties: the order one thread wrote them).
 *
 * Pass 1 walks the sorted records and gives each one its trace: an
 * allocation goes to its device (a live address map pairs frees with it,
 * whatever device was current at the free), physical-memory handles and
 * mappings likewise; NVTX range edges go to every trace.  Frees of unknown
 * addresses (freed memory allocated before recording, or by a path not
 * recorded) and failed calls are counted and dropped; a failed allocation
 * with an out-of-memory result becomes a MARK "oom".  Pass 2 writes each
 * device's trace in turn through the import target (one trace at a time),
 * numbering allocations per trace.
 *
 * Mapping to the event model: allocation calls → ALLOC (addr, size, stream),
 * free calls → FREE, cuMemCreate/cuMemRelease → SEG_ALLOC/SEG_FREE (size,
 * no address: physical memory has none), cuMemMap/cuMemUnmap →
 * SEG_MAP/SEG_UNMAP (address range), NVTX push/start → MARK "nvtx:NAME",
 * pop/end → MARK "nvtx_end:NAME".  Time stamps are ns since the process's
 * first record.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gmsim/attrs.h"
#include "gmsim/capture.h"
#include "formats/spool_format.h"
#include "base/bits.h"
#include "base/idmap.h"
#include "store/store.h"
#include "base/vec.h"

#define SPOOL_MAX_DEVICES 1024
#define SPOOL_DEV_SKIP (-1)
#define SPOOL_DEV_ALL (-2)
#define SPOOL_OOM 2 /* cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY */

static const struct {
    const char *name;
    char kind;
} spool_ops[SPOOL_OP_COUNT] = {
    {NULL, 0},
#define SPOOL__OP_INFO(e, name, kind) {name, kind},
    SPOOL_OPS(SPOOL__OP_INFO)
#undef SPOOL__OP_INFO
};

typedef struct spool_item {
    uint64_t ts;
    uint64_t seq;
    uint32_t idx;      /* position in its block */
    size_t off;        /* byte offset of the record in the file */
    uint32_t blk;      /* its block (index into spool_t.blks) */
    int32_t dev;       /* its trace: a device, SPOOL_DEV_SKIP or SPOOL_DEV_ALL */
    uint32_t aux_size; /* SEG_FREE: index into sizes (see pass 1) */
    const char *tag;   /* MARK: the range name (points into the data) */
} spool_item_t;

typedef struct spool_blk {
    size_t off;
    uint64_t seq, base_ts;
    uint32_t nrec, len, tid;
} spool_blk_t;

typedef struct spool {
    const unsigned char *data;
    size_t len;
    const char *file;
    /* header */
    char host[80], pid[24], ppid[24], rank[24], local_rank[24], world_size[24], mode[32];
    char exe[1024];
    uint64_t t0_mono, t0_real;
    /* recovery counts */
    uint64_t damaged, truncated, dup_blocks, blocks;
    /* blocks kept and their records */
    spool_blk_t *blks;
    size_t nblks;
    spool_item_t *items;
    size_t n;
    uint64_t *sizes; /* SEG_FREE sizes, indexed by items[].aux_size */
    size_t nsizes;
    /* pass 1 */
    uint8_t used[SPOOL_MAX_DEVICES];
    uint64_t unmatched, failed, reused, ooms, marks;
    uint64_t calls[SPOOL_OP_COUNT];
} spool_t;

static void spool_release(spool_t *sp)
{
    free(sp->blks);
    free(sp->items);
    free(sp->sizes);
}

/* Decode an item's record (checked when the block was taken). */
static spool_rec_t spool_rec_at(const spool_t *sp, const spool_item_t *it)
{
    spool_rec_t r;
    const spool_blk_t *b = &sp->blks[it->blk];
    size_t end = b->off + SPOOL_HDR_BYTES + b->len;
    if (spool_decode(sp->data + it->off, end - it->off, b->base_ts, &r) == 0)
        memset(&r, 0, sizeof r);
    return r;
}

/* A whole, valid block at pos: 1 and *h filled, else 0 (*cut = 1 when the
 * block runs past the end of the data). */
static int spool_block_ok(const spool_t *sp, size_t pos, spool_hdr_t *h, int *cut)
{
    *cut = 0;
    if (sp->len - pos < SPOOL_HDR_BYTES) {
        *cut = 1;
        return 0;
    }
    memcpy(h, sp->data + pos, sizeof *h);
    if (h->magic != SPOOL_MAGIC || h->version != SPOOL_VERSION || h->len % 8 != 0 ||
        h->len > SPOOL_PAYLOAD_MAX ||
        (h->type != SPOOL_BLOCK_HEADER && h->type != SPOOL_BLOCK_RECORDS))
        return 0;
    if (sp->len - pos - SPOOL_HDR_BYTES < h->len) {
        *cut = 1;
        return 0;
    }
    return spool_sum(sp->data + pos, sp->data + pos + SPOOL_HDR_BYTES, h->len) == h->sum &&
           h->zero == 0;
}

/* Copy the value of `key=` from the header text into dst ("" if absent). */
static void spool_hdr_value(const char *text, size_t len, const char *key, char *dst,
                            size_t cap)
{
    size_t klen = strlen(key);
    dst[0] = '\0';
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        if (e - i > klen && memcmp(text + i, key, klen) == 0 && text[i + klen] == '=') {
            size_t v = i + klen + 1, n = e - v;
            if (n >= cap)
                n = cap - 1;
            memcpy(dst, text + v, n);
            dst[n] = '\0';
            return;
        }
        i = e + 1;
    }
}

static int spool_is_uint(const char *s)
{
    if (*s == '\0' || strlen(s) > 19)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static int spool_parse_header(spool_t *sp, gm_error_t *err)
{
    spool_hdr_t h;
    int cut;
    if (!spool_block_ok(sp, 0, &h, &cut) || h.type != SPOOL_BLOCK_HEADER)
        return gm_error_set(err, GM_EFORMAT, "'%s': byte 0: not a gmsim capture spool%s",
                            sp->file, cut && sp->len >= 4 ? " (its header is cut short)" : "");
    const char *text = (const char *)sp->data + SPOOL_HDR_BYTES;
    size_t tlen = strnlen(text, h.len);
    char ver[24], t0[24], t0r[24];
    spool_hdr_value(text, tlen, "gmsim_spool", ver, sizeof ver);
    spool_hdr_value(text, tlen, "host", sp->host, sizeof sp->host);
    spool_hdr_value(text, tlen, "pid", sp->pid, sizeof sp->pid);
    spool_hdr_value(text, tlen, "ppid", sp->ppid, sizeof sp->ppid);
    spool_hdr_value(text, tlen, "rank", sp->rank, sizeof sp->rank);
    spool_hdr_value(text, tlen, "local_rank", sp->local_rank, sizeof sp->local_rank);
    spool_hdr_value(text, tlen, "world_size", sp->world_size, sizeof sp->world_size);
    spool_hdr_value(text, tlen, "mode", sp->mode, sizeof sp->mode);
    spool_hdr_value(text, tlen, "exe", sp->exe, sizeof sp->exe);
    spool_hdr_value(text, tlen, "t0_mono_ns", t0, sizeof t0);
    spool_hdr_value(text, tlen, "t0_real_ns", t0r, sizeof t0r);
    if (strcmp(ver, "1") != 0)
        return gm_error_set(err, GM_EFORMAT, "'%s': byte %d: unsupported spool version '%s'",
                            sp->file, SPOOL_HDR_BYTES, ver);
    int host_ok = sp->host[0] != '\0';
    for (const char *p = sp->host; *p; p++)
        host_ok &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= '0' && *p <= '9') || *p == '-' || *p == '_';
    if (!host_ok || !spool_is_uint(sp->pid) || !spool_is_uint(t0))
        return gm_error_set(err, GM_EFORMAT,
                            "'%s': byte %d: spool header lacks a valid host, pid or start time",
                            sp->file, SPOOL_HDR_BYTES);
    if (sp->rank[0] && !spool_is_uint(sp->rank))
        sp->rank[0] = '\0';
    if (sp->local_rank[0] && !spool_is_uint(sp->local_rank))
        sp->local_rank[0] = '\0';
    if (sp->world_size[0] && !spool_is_uint(sp->world_size))
        sp->world_size[0] = '\0';
    if (!spool_is_uint(sp->ppid))
        sp->ppid[0] = '\0';
    sp->t0_mono = strtoull(t0, NULL, 10);
    sp->t0_real = spool_is_uint(t0r) ? strtoull(t0r, NULL, 10) : 0;
    return (int)(SPOOL_HDR_BYTES + h.len);
}

static int spool_item_cmp(const void *a, const void *b)
{
    const spool_item_t *x = a, *y = b;
    return gm__cmp_u64_keys((const uint64_t[]){x->ts, x->seq, x->idx},
                            (const uint64_t[]){y->ts, y->seq, y->idx}, 3);
}

/* Check every record of kept block bi and append them to the items. */
static int spool_take_block(spool_t *sp, uint32_t bi, size_t *cap, gm_error_t *err)
{
    const spool_blk_t *b = &sp->blks[bi];
    size_t p = b->off + SPOOL_HDR_BYTES, end = p + b->len;
    for (uint32_t k = 0; k < b->nrec; k++) {
        spool_rec_t r;
        size_t l = spool_decode(sp->data + p, end - p, b->base_ts, &r);
        if (l == 0)
            return gm_error_set(err, GM_EFORMAT, "'%s': byte %zu: malformed record %u of %u",
                                sp->file, p, k, b->nrec);
        if (r.op == SPOOL_OP_NONE || r.op >= SPOOL_OP_COUNT)
            return gm_error_set(err, GM_EFORMAT, "'%s': byte %zu: unknown call %u", sp->file, p,
                                r.op);
        if (r.device >= SPOOL_MAX_DEVICES || r.device < -1)
            return gm_error_set(err, GM_EFORMAT, "'%s': byte %zu: device %d out of range",
                                sp->file, p, (int)r.device);
        if (GM_VEC_RESERVE(sp->items, *cap, sp->n + 1, 1024))
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        spool_item_t *it = &sp->items[sp->n++];
        memset(it, 0, sizeof *it);
        it->ts = r.ts;
        it->seq = b->seq;
        it->idx = k;
        it->off = p;
        it->blk = bi;
        p += l;
    }
    if (p != end)
        return gm_error_set(err, GM_EFORMAT, "'%s': byte %zu: %zu bytes after the block's records",
                            sp->file, p, end - p);
    return 0;
}

/* Read the blocks and sort the records. */
static int spool_parse(spool_t *sp, gm_error_t *err)
{
    int first = spool_parse_header(sp, err);
    if (first < 0)
        return first;
    spool_blk_t *blks = NULL;
    size_t nb = 0, cb = 0;
    gm__idmap_t seen; /* seq → index in blks */
    gm__idmap_init(&seen);
    int rc = 0;
    size_t pos = (size_t)first;
    while (pos < sp->len) {
        spool_hdr_t h;
        int cut;
        if (!spool_block_ok(sp, pos, &h, &cut)) {
            /* Torn or cut: find the next whole block. */
            size_t q = pos + 1;
            for (; q + SPOOL_HDR_BYTES <= sp->len; q++) {
                int c2;
                spool_hdr_t h2;
                if (memcmp(sp->data + q, &(uint32_t){SPOOL_MAGIC}, 4) == 0 &&
                    spool_block_ok(sp, q, &h2, &c2))
                    break;
            }
            if (q + SPOOL_HDR_BYTES > sp->len) {
                sp->truncated += sp->len - pos;
                break;
            }
            sp->damaged += q - pos;
            pos = q;
            continue;
        }
        size_t here = pos;
        pos += SPOOL_HDR_BYTES + h.len;
        if (h.type != SPOOL_BLOCK_RECORDS) {
            sp->damaged += pos - here; /* a second header: not ours to read */
            continue;
        }
        sp->blocks++;
        uint64_t prev;
        if (gm__idmap_get(&seen, h.seq, &prev)) {
            sp->dup_blocks++;
            if (h.nrec > blks[prev].nrec)
                blks[prev] = (spool_blk_t){here, h.seq, h.base_ts, h.nrec, h.len, h.tid};
            continue;
        }
        if (GM_VEC_RESERVE(blks, cb, nb + 1, 256)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
        if (h.seq == GM__IDMAP_EMPTY || gm__idmap_put(&seen, h.seq, nb) != 0) {
            rc = h.seq == GM__IDMAP_EMPTY
                     ? gm_error_set(err, GM_EFORMAT, "'%s': byte %zu: bad block number",
                                    sp->file, here)
                     : gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
        blks[nb++] = (spool_blk_t){here, h.seq, h.base_ts, h.nrec, h.len, h.tid};
    }
    sp->blks = blks;
    sp->nblks = nb;
    blks = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < nb && rc == 0; i++)
        rc = spool_take_block(sp, (uint32_t)i, &cap, err);
    if (rc == 0 && sp->n > 1)
        qsort(sp->items, sp->n, sizeof *sp->items, spool_item_cmp);
out:
    free(blks);
    gm__idmap_release(&seen);
    return rc;
}

/* ---- pass 1: a trace for every record ----------------------------------------- */

typedef struct spool_stack {
    uint32_t tid;
    const char **names;
    size_t n, cap;
} spool_stack_t;

static const char *spool_text(const spool_t *sp, const spool_item_t *it)
{
    spool_rec_t r = spool_rec_at(sp, it);
    return r.text != NULL ? r.text : "";
}

/* The item goes to device dev's trace, which then exists. */
static void spool_assign_dev(spool_t *sp, spool_item_t *it, int32_t dev)
{
    it->dev = dev;
    sp->used[dev] = 1;
}

/* A free of an address (r->addr) that `m` maps to its device, the live
 * allocations or the mappings: the item is that device's; a failed call,
 * or an address that was never given, is counted. */
static void spool_assign_free(spool_t *sp, gm__idmap_t *m, const spool_rec_t *r, spool_item_t *it)
{
    uint64_t v;
    if (r->result != 0)
        sp->failed++;
    else if (gm__idmap_remove(m, r->addr, &v))
        it->dev = (int32_t)v;
    else
        sp->unmatched++;
}

static int spool_assign(spool_t *sp, gm_error_t *err)
{
    gm__idmap_t live, handles, maps, ranges;
    gm__idmap_init(&live);    /* addr → device */
    gm__idmap_init(&handles); /* handle → device << 32 | size index */
    gm__idmap_init(&maps);    /* mapped addr → device */
    gm__idmap_init(&ranges);  /* nvtx range id → item index of its start */
    spool_stack_t *stacks = NULL;
    size_t nstacks = 0;
    int rc = 0;
    sp->sizes = malloc((sp->n + 1) * sizeof *sp->sizes);
    if (sp->sizes == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < sp->n && rc == 0; i++) {
        spool_item_t *it = &sp->items[i];
        spool_rec_t r = spool_rec_at(sp, it);
        uint32_t tid = sp->blks[it->blk].tid;
        char kind = spool_ops[r.op].kind;
        int32_t dev = r.device >= 0 ? r.device : 0;
        uint64_t v;
        it->dev = SPOOL_DEV_SKIP;
        sp->calls[r.op]++;
        switch (kind) {
        case 'A':
            if (r.result != 0 || r.addr == 0) {
                if (r.result == SPOOL_OOM) {
                    spool_assign_dev(sp, it, dev);
                    it->tag = "oom";
                    sp->ooms++;
                } else {
                    sp->failed++;
                }
                break;
            }
            if (r.addr == GM__IDMAP_EMPTY)
                break;
            int ins = gm__idmap_insert(&live, r.addr, (uint64_t)dev);
            if (ins == 1) {
                sp->reused++; /* its free was not seen: the new one replaces it */
                ins = gm__idmap_put(&live, r.addr, (uint64_t)dev);
            }
            if (ins < 0) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            spool_assign_dev(sp, it, dev);
            break;
        case 'F':
            spool_assign_free(sp, &live, &r, it);
            break;
        case 'C':
            if (r.result != 0 || r.aux == GM__IDMAP_EMPTY) {
                sp->failed++;
                break;
            }
            sp->sizes[sp->nsizes] = r.size;
            if (gm__idmap_put(&handles, r.aux, (uint64_t)dev << 32 | sp->nsizes) != 0) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            sp->nsizes++;
            spool_assign_dev(sp, it, dev);
            break;
        case 'R':
            if (r.result != 0) {
                sp->failed++;
                break;
            }
            if (gm__idmap_remove(&handles, r.aux, &v)) {
                it->dev = (int32_t)(v >> 32);
                it->aux_size = (uint32_t)v;
            } else {
                sp->unmatched++;
            }
            break;
        case 'M':
            if (r.result != 0) {
                sp->failed++;
                break;
            }
            if (gm__idmap_get(&handles, r.aux, &v))
                dev = (int32_t)(v >> 32);
            if (r.addr == GM__IDMAP_EMPTY ||
                gm__idmap_put(&maps, r.addr, (uint64_t)dev) != 0) {
                rc = r.addr == GM__IDMAP_EMPTY ? 0 : gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            spool_assign_dev(sp, it, dev);
            break;
        case 'U':
            spool_assign_free(sp, &maps, &r, it);
            break;
        case 'P':
        case 'p': {
            size_t k = 0;
            while (k < nstacks && stacks[k].tid != tid)
                k++;
            if (k == nstacks) {
                spool_stack_t *ns = realloc(stacks, (nstacks + 1) * sizeof *ns);
                if (ns == NULL) {
                    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                    break;
                }
                stacks = ns;
                stacks[nstacks++] = (spool_stack_t){tid, NULL, 0, 0};
            }
            spool_stack_t *st = &stacks[k];
            if (kind == 'P') {
                if (GM_VEC_RESERVE(st->names, st->cap, st->n + 1, 16)) {
                    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                    break;
                }
                it->tag = st->names[st->n++] = spool_text(sp, it);
            } else if (st->n > 0) {
                it->tag = st->names[--st->n];
            } else {
                sp->unmatched++;
                break;
            }
            it->dev = SPOOL_DEV_ALL;
            sp->marks++;
            break;
        }
        case 'S':
            if (r.aux != GM__IDMAP_EMPTY && gm__idmap_put(&ranges, r.aux, i) != 0) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            it->tag = spool_text(sp, it);
            it->dev = SPOOL_DEV_ALL;
            sp->marks++;
            break;
        case 'E':
            if (gm__idmap_remove(&ranges, r.aux, &v)) {
                it->tag = sp->items[v].tag;
                it->dev = SPOOL_DEV_ALL;
                sp->marks++;
            } else {
                sp->unmatched++;
            }
            break;
        default: break; /* notes */
        }
    }
out:
    for (size_t k = 0; k < nstacks; k++)
        free(stacks[k].names);
    free(stacks);
    gm__idmap_release(&live);
    gm__idmap_release(&handles);
    gm__idmap_release(&maps);
    gm__idmap_release(&ranges);
    return rc;
}

/* ---- pass 2: one trace per device ----------------------------------------------- */

static int spool_attrs(const spool_t *sp, gm_writer_t *w, int dev, gm_error_t *err)
{
    char buf[1024];
    int rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "capture", err);
    if (rc == 0)
        rc = gm_writer_attr_str(w, "mode", sp->mode[0] ? sp->mode : "preload", err);
    if (rc == 0)
        rc = gm_writer_attr_str(w, "host", sp->host, err);
    if (rc == 0)
        rc = gm_writer_attr_json(w, "pid", sp->pid, err);
    if (rc == 0 && sp->ppid[0])
        rc = gm_writer_attr_json(w, "ppid", sp->ppid, err);
    if (rc == 0 && sp->rank[0])
        rc = gm_writer_attr_json(w, "rank", sp->rank, err);
    if (rc == 0 && sp->local_rank[0])
        rc = gm_writer_attr_json(w, "local_rank", sp->local_rank, err);
    if (rc == 0 && sp->world_size[0])
        rc = gm_writer_attr_json(w, "world_size", sp->world_size, err);
    if (rc == 0)
        rc = gm_writer_attr_int(w, GM_ATTR_DEVICE, dev, err);
    if (rc == 0 && sp->exe[0])
        rc = gm_writer_attr_str(w, "exe", sp->exe, err);
    if (rc == 0 && sp->t0_real)
        rc = gm_writer_attr_int(w, "start_unix_ns", (int64_t)(sp->t0_real & INT64_MAX), err);
    if (rc == 0) {
        snprintf(buf, sizeof buf,
                 "{\"blocks\": %llu, \"damaged_bytes\": %llu, \"truncated_bytes\": %llu, "
                 "\"duplicate_blocks\": %llu}",
                 (unsigned long long)sp->blocks, (unsigned long long)sp->damaged,
                 (unsigned long long)sp->truncated, (unsigned long long)sp->dup_blocks);
        rc = gm_writer_attr_json(w, "recovery", buf, err);
    }
    if (rc == 0)
        rc = gm_writer_attr_int(w, "unmatched_frees", (int64_t)sp->unmatched, err);
    if (rc == 0)
        rc = gm_writer_attr_int(w, "failed_calls", (int64_t)sp->failed, err);
    if (rc == 0)
        rc = gm_writer_attr_int(w, "reused_without_free", (int64_t)sp->reused, err);
    if (rc == 0) {
        size_t n = (size_t)snprintf(buf, sizeof buf, "{");
        for (int op = 1; op < SPOOL_OP_COUNT && n < sizeof buf - 64; op++)
            if (sp->calls[op] && op != SPOOL_OP_NOTE)
                n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": %llu",
                                      n > 1 ? ", " : "", spool_ops[op].name,
                                      (unsigned long long)sp->calls[op]);
        snprintf(buf + n, sizeof buf - n, "}");
        rc = gm_writer_attr_json(w, "calls", buf, err);
    }
    return rc;
}

static int spool_write_device(const spool_t *sp, gm_writer_t *w, int dev, gm_error_t *err)
{
    gm__idmap_t ids; /* addr → allocation ordinal */
    gm__idmap_init(&ids);
    uint64_t next = 0;
    int rc = spool_attrs(sp, w, dev, err);
    char tagbuf[SPOOL_TEXT_MAX + 16];
    for (size_t i = 0; i < sp->n && rc == 0; i++) {
        const spool_item_t *it = &sp->items[i];
        if (it->dev != dev && it->dev != SPOOL_DEV_ALL)
            continue;
        spool_rec_t r = spool_rec_at(sp, it);
        gm_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.ts_ns = r.ts > sp->t0_mono ? r.ts - sp->t0_mono : 0;
        ev.device = (uint16_t)dev;
        char kind = spool_ops[r.op].kind;
        uint64_t v;
        if (it->tag != NULL) {
            ev.op = GM_OP_MARK;
            if (kind == 'A')
                snprintf(tagbuf, sizeof tagbuf, "oom");
            else
                snprintf(tagbuf, sizeof tagbuf, "%s:%s",
                         kind == 'P' || kind == 'S' ? "nvtx" : "nvtx_end", it->tag);
            rc = gm_writer_tag(w, tagbuf, &ev.tag, err);
        } else if (kind == 'A') {
            ev.op = GM_OP_ALLOC;
            ev.id = next++;
            ev.size = r.size;
            ev.addr = r.addr;
            rc = gm_writer_stream(w, r.stream, &ev.stream, err);
            if (rc == 0 && gm__idmap_put(&ids, r.addr, ev.id) != 0)
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        } else if (kind == 'F') {
            if (!gm__idmap_remove(&ids, r.addr, &v))
                continue; /* cannot happen: pass 1 paired it */
            ev.op = GM_OP_FREE;
            ev.id = v;
            ev.addr = r.addr;
            rc = gm_writer_stream(w, r.stream, &ev.stream, err);
        } else if (kind == 'C' || kind == 'R') {
            ev.op = kind == 'C' ? GM_OP_SEG_ALLOC : GM_OP_SEG_FREE;
            ev.size = kind == 'C' ? r.size : sp->sizes[it->aux_size];
        } else if (kind == 'M' || kind == 'U') {
            ev.op = kind == 'M' ? GM_OP_SEG_MAP : GM_OP_SEG_UNMAP;
            ev.addr = r.addr;
            ev.size = r.size;
        } else {
            continue;
        }
        if (rc == 0)
            rc = gm_writer_add(w, &ev, err);
    }
    gm__idmap_release(&ids);
    return rc;
}

static int spool_write(spool_t *sp, gm_import_target_t *t, int always, gm_error_t *err)
{
    int any = 0;
    for (int d = 0; d < SPOOL_MAX_DEVICES; d++)
        any |= sp->used[d];
    if (!any) {
        if (!always)
            return 0;
        sp->used[0] = 1;
    }
    for (int d = 0; d < SPOOL_MAX_DEVICES; d++) {
        if (!sp->used[d])
            continue;
        char suffix[16];
        snprintf(suffix, sizeof suffix, "dev%d", d);
        gm_writer_t *w;
        int rc = gm_import_begin(t, suffix, &w, err);
        if (rc == 0)
            rc = spool_write_device(sp, w, d, err);
        if (rc == 0)
            rc = gm_import_end(t, err);
        if (rc != 0) {
            if (err != NULL && strstr(err->msg, sp->file) == NULL)
                gm_error_prefix(err, "'%s'", sp->file);
            return rc;
        }
    }
    return 1;
}

int gm_spool_import_buffer(const void *data, size_t len, const char *filename,
                           gm_import_target_t *t, gm_error_t *err)
{
    spool_t sp;
    memset(&sp, 0, sizeof sp);
    sp.data = data;
    sp.len = len;
    sp.file = filename ? filename : "spool";
    int rc = spool_parse(&sp, err);
    if (rc == 0)
        rc = spool_assign(&sp, err);
    if (rc == 0)
        rc = spool_write(&sp, t, 1, err);
    spool_release(&sp);
    return rc < 0 ? rc : 0;
}

/* Read a whole stream into a malloc'd buffer. */
static int spool_slurp(FILE *in, const char *filename, unsigned char **out, size_t *len,
                       gm_error_t *err)
{
    /* A regular file is read into one buffer of its size (+1, to see the
     * end); a stream grows one by doubling. */
    struct stat st;
    size_t cap = 1 << 16, n = 0;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX - 1)
        cap = (size_t)st.st_size + 1;
    unsigned char *buf = malloc(cap);
    if (buf == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (;;) {
        if (GM_VEC_RESERVE(buf, cap, n + 1, 1)) {
            free(buf);
            return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", filename);
        }
        size_t k = fread(buf + n, 1, cap - n, in);
        n += k;
        if (k == 0)
            break;
    }
    if (ferror(in)) {
        free(buf);
        return gm_error_set(err, GM_EIO, "cannot read '%s': %s", filename, strerror(errno));
    }
    *out = buf;
    *len = n;
    return 0;
}

int gm_spool_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    unsigned char *buf;
    size_t len;
    int rc = spool_slurp(in, filename, &buf, &len, err);
    if (rc != 0)
        return rc;
    rc = gm_spool_import_buffer(buf, len, filename, t, err);
    free(buf);
    return rc;
}

int gm_spool_sniff(const void *head, size_t len)
{
    spool_hdr_t h;
    if (len < SPOOL_HDR_BYTES)
        return 0;
    memcpy(&h, head, sizeof h);
    return h.magic == SPOOL_MAGIC && h.type == SPOOL_BLOCK_HEADER;
}

/* ---- a spool directory ---------------------------------------------------------- */

void gm_spool_dir_result_release(gm_spool_dir_result_t *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    memset(r, 0, sizeof *r);
}

static int spool_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 if a trace named "<base>.<something>" was imported already. */
static int spool_base_taken(const gm_spool_dir_result_t *res, const char *base)
{
    size_t l = strlen(base);
    for (size_t i = 0; i < res->n; i++)
        if (strncmp(res->names[i], base, l) == 0 && res->names[i][l] == '.')
            return 1;
    return 0;
}

/* Import one file of the directory under its header's base name. */
static int spool_import_one(gm_store_t *s, const char *path, unsigned flags,
                            gm_spool_dir_result_t *res, gm_error_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return gm_error_set(err, GM_EIO, "cannot open '%s': %s", path, strerror(errno));
    unsigned char *buf;
    size_t len;
    int rc = spool_slurp(f, path, &buf, &len, err);
    fclose(f);
    if (rc != 0)
        return rc;
    spool_t sp;
    memset(&sp, 0, sizeof sp);
    sp.data = buf;
    sp.len = len;
    sp.file = path;
    gm_import_target_t *t = NULL;
    rc = spool_parse(&sp, err);
    if (rc == 0)
        rc = spool_assign(&sp, err);
    if (rc == 0) {
        char base[200], stem[160];
        if (sp.rank[0])
            snprintf(stem, sizeof stem, "%s.%s.rank%s", sp.host, sp.pid, sp.rank);
        else
            snprintf(stem, sizeof stem, "%s.%s", sp.host, sp.pid);
        /* The same pid twice (an exec'd image, pid reuse): "-1", "-2"… */
        snprintf(base, sizeof base, "%s", stem);
        for (int k = 1; spool_base_taken(res, base); k++)
            snprintf(base, sizeof base, "%s-%d", stem, k);
        rc = gm_import_target_create(s, base, flags, &t, err);
    }
    if (rc == 0) {
        rc = spool_write(&sp, t, 0, err);
        if (rc == 0)
            res->skipped++;
    }
    for (size_t i = 0; rc > 0 && t != NULL && i < gm_import_count(t); i++) {
        char **nn = realloc(res->names, (res->n + 1) * sizeof *nn);
        if (nn == NULL || (nn[res->n] = strdup(gm_import_name(t, i))) == NULL) {
            if (nn != NULL)
                res->names = nn;
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        res->names = nn;
        res->n++;
    }
    if (rc >= 0 && t != NULL)
        rc = gm_import_commit(t, err);
    else
        gm_import_abort(t);
    spool_release(&sp);
    free(buf);
    return rc < 0 ? rc : 0;
}

int gm_spool_import_dir(gm_store_t *s, const char *dir, unsigned flags,
                        gm_spool_dir_result_t *out, gm_error_t *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (d == NULL)
        return gm_error_set(err, GM_EIO, "cannot read the directory '%s': %s", dir,
                            strerror(errno));
    char **files = NULL;
    size_t nf = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 6 || strcmp(e->d_name + l - 6, ".spool") != 0 || e->d_name[0] == '.')
            continue;
        char **nf2 = realloc(files, (nf + 1) * sizeof *nf2);
        size_t plen = strlen(dir) + l + 2;
        char *p = nf2 ? malloc(plen) : NULL;
        if (p == NULL) {
            if (nf2)
                files = nf2;
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        files = nf2;
        snprintf(p, plen, "%s/%s", dir, e->d_name);
        files[nf++] = p;
    }
    closedir(d);
    if (rc == 0 && nf == 0)
        rc = gm_error_set(err, GM_ENOTFOUND, "no spool file ('*.spool') in '%s'", dir);
    int outer = 0; /* one transaction around every file's import: all or nothing */
    if (rc == 0)
        rc = gm__store_import_begin(s, &outer, err);
    if (rc == 0)
        qsort(files, nf, sizeof *files, spool_name_cmp);
    for (size_t i = 0; i < nf && rc == 0; i++) {
        out->files++;
        rc = spool_import_one(s, files[i], flags, out, err);
    }
    if (outer) {
        int r = gm__store_import_end(s, rc == 0, err);
        if (rc == 0)
            rc = r;
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    if (rc != 0)
        gm_spool_dir_result_release(out);
    return rc;
}
