/*
 * formats/spool_format.h — the capture spool file, shared by the
 * capture library (the writer, capture/capture.c) and the reader
 * (formats/spool.c).  Header-only, no dependency beyond <stdint.h>: the
 * capture library links nothing of libgmsim.
 *
 * A spool file is a sequence of blocks, each written by one write(2) of
 * the whole block to a file opened O_APPEND, so that blocks of different
 * threads never interleave and a killed process leaves every block it
 * wrote whole (at most the last one is cut short):
 *
 *   block header (48 bytes, host byte order)
 *     u32 magic    SPOOL_MAGIC
 *     u16 version  SPOOL_VERSION
 *     u16 type     SPOOL_BLOCK_HEADER (the first block: "key=value\n" text)
 *                  or SPOOL_BLOCK_RECORDS
 *     u32 len      payload bytes (a multiple of 8, at most SPOOL_PAYLOAD_MAX)
 *     u32 nrec     records in the payload
 *     u32 tid      the thread that recorded them (one thread per block)
 *     u32 zero
 *     u64 seq      block number, unique in the process (a global counter):
 *                  a block written twice (a signal handler flushing a
 *                  buffer its owner was writing) is read once
 *     u64 base_ts  CLOCK_MONOTONIC ns the records' times count from
 *     u64 sum      spool_sum() of the header's first 40 bytes and the payload
 *   payload: records, each a multiple of 8 bytes:
 *     u32 dts      ns since base_ts
 *     u8  op       enum spool_op
 *     u8  flags    which optional words follow (SPOOL_F_*)
 *     i16 device   device ordinal, −1 when unknown
 *     then, each only when its flag is set, one u64 word: addr, size,
 *     stream, aux, result (i64); then for SPOOL_F_TEXT a u64 byte count
 *     (NUL included, at most SPOOL_TEXT_MAX) and the NUL-terminated text
 *     padded with NULs to 8 bytes.
 *
 * Fields that are zero are left out, so that an allocation takes 24 bytes
 * and a free 16: the writer's cost is mostly the bytes it copies.  The
 * checksum is a multiply-xor hash over 64-bit words (cheap enough to run on
 * every block written from an application thread, strong enough to tell a
 * torn or overwritten block from a whole one).  Allocation-like calls are
 * stamped when the call has returned, free-like calls when it is entered,
 * so that across threads a free always sorts before the allocation that
 * reuses its address.
 */
#ifndef GM_FORMATS_SPOOL_FORMAT_H
#define GM_FORMATS_SPOOL_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SPOOL_MAGIC 0x42534d47u /* "GMSB" */
#define SPOOL_VERSION 1
#define SPOOL_BLOCK_HEADER 1
#define SPOOL_BLOCK_RECORDS 2
#define SPOOL_HDR_BYTES 48
#define SPOOL_PAYLOAD_MAX (1u << 20) /* the reader refuses larger blocks */
#define SPOOL_TEXT_MAX 256           /* longest text kept, NUL included */
#define SPOOL_REC_MAX (8 + 6 * 8 + SPOOL_TEXT_MAX)
#define SPOOL_DTS_MAX UINT32_MAX      /* a block spans at most 4.29 s */

/*
 * X(ENUM, name, kind) — the calls a record stands for.  kind: 'A' allocates
 * (addr, size), 'F' frees (addr), 'C' creates physical memory (aux = handle,
 * size, device), 'R' releases it (aux = handle), 'M' maps (addr, size,
 * aux = handle), 'U' unmaps (addr, size), 'P' pushes a range (text),
 * 'p' pops one, 'S' starts a range (aux = id, text), 'E' ends one (aux = id),
 * 'N' a note of the library itself (text).  Numbers are part of the format:
 * append only.
 */
#define SPOOL_OPS(X)                                   \
    X(CUDA_MALLOC, "cudaMalloc", 'A')                  \
    X(CUDA_FREE, "cudaFree", 'F')                      \
    X(CUDA_MALLOC_ASYNC, "cudaMallocAsync", 'A')       \
    X(CUDA_FREE_ASYNC, "cudaFreeAsync", 'F')           \
    X(CUDA_MALLOC_POOL, "cudaMallocFromPoolAsync", 'A') \
    X(CUDA_MALLOC_MANAGED, "cudaMallocManaged", 'A')   \
    X(CUDA_MALLOC_PITCH, "cudaMallocPitch", 'A')       \
    X(CU_MEM_ALLOC, "cuMemAlloc_v2", 'A')              \
    X(CU_MEM_FREE, "cuMemFree_v2", 'F')                \
    X(CU_MEM_ALLOC_ASYNC, "cuMemAllocAsync", 'A')      \
    X(CU_MEM_FREE_ASYNC, "cuMemFreeAsync", 'F')        \
    X(CU_MEM_ALLOC_MANAGED, "cuMemAllocManaged", 'A')  \
    X(CU_MEM_CREATE, "cuMemCreate", 'C')               \
    X(CU_MEM_RELEASE, "cuMemRelease", 'R')             \
    X(CU_MEM_MAP, "cuMemMap", 'M')                     \
    X(CU_MEM_UNMAP, "cuMemUnmap", 'U')                 \
    X(TORCH_ALLOC, "gmsim_torch_alloc", 'A')           \
    X(TORCH_FREE, "gmsim_torch_free", 'F')             \
    X(RANGE_PUSH, "nvtxRangePush", 'P')                \
    X(RANGE_POP, "nvtxRangePop", 'p')                  \
    X(RANGE_START, "nvtxRangeStart", 'S')              \
    X(RANGE_END, "nvtxRangeEnd", 'E')                  \
    X(NOTE, "note", 'N')

enum spool_op {
    SPOOL_OP_NONE = 0,
#define SPOOL__OP_ENUM(e, name, kind) SPOOL_OP_##e,
    SPOOL_OPS(SPOOL__OP_ENUM)
#undef SPOOL__OP_ENUM
    SPOOL_OP_COUNT
};

/* Record flags: the optional words present. */
#define SPOOL_F_ADDR 0x01u
#define SPOOL_F_SIZE 0x02u
#define SPOOL_F_STREAM 0x04u
#define SPOOL_F_AUX 0x08u
#define SPOOL_F_RESULT 0x10u
#define SPOOL_F_TEXT 0x20u
#define SPOOL_F_CUPTI 0x40u /* seen through a CUPTI callback (no word) */
#define SPOOL_F_KNOWN 0x7fu

/* A record, decoded. */
typedef struct spool_rec {
    uint64_t ts;     /* CLOCK_MONOTONIC ns */
    uint64_t addr;   /* device address (0 when none) */
    uint64_t size;   /* bytes */
    uint64_t stream; /* stream handle (0: the default stream) */
    uint64_t aux;    /* a handle, a range id or a pool, by op */
    int64_t result;  /* the call's return code (0: success) */
    int32_t device;  /* −1 when unknown */
    uint8_t op, flags;
    const char *text; /* SPOOL_F_TEXT: points into the block */
} spool_rec_t;

typedef struct spool_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t len;
    uint32_t nrec;
    uint32_t tid;
    uint32_t zero;
    uint64_t seq;
    uint64_t base_ts;
    uint64_t sum;
} spool_hdr_t;

_Static_assert(sizeof(spool_hdr_t) == SPOOL_HDR_BYTES, "spool header layout");

/*
 * Encode one record at dst (room for SPOOL_REC_MAX bytes); returns its
 * length.  text may be NULL; it is cut to SPOOL_TEXT_MAX − 1 bytes.
 * xflags adds flags without a word (SPOOL_F_CUPTI).
 */
static inline size_t spool_encode(unsigned char *dst, uint64_t base_ts, uint64_t ts, uint8_t op,
                                  uint8_t xflags, int32_t device, uint64_t addr, uint64_t size,
                                  uint64_t stream, uint64_t aux, int64_t result, const char *text)
{
    size_t n = 8;
    uint8_t flags = (uint8_t)(xflags & SPOOL_F_CUPTI);
    /* The words in flag order (SPOOL_F_ADDR is bit 0), as spool_decode
     * reads them: a word that is 0 is left out. */
    const uint64_t word[5] = {addr, size, stream, aux, (uint64_t)result};
    for (int i = 0; i < 5; i++)
        if (word[i]) {
            flags |= (uint8_t)(1u << i);
            memcpy(dst + n, &word[i], 8);
            n += 8;
        }
    if (text != NULL) {
        uint64_t tl = strnlen(text, SPOOL_TEXT_MAX - 1);
        uint64_t nb = tl + 1, words = (nb + 7) / 8;
        flags |= SPOOL_F_TEXT;
        memcpy(dst + n, &nb, 8);
        memset(dst + n + 8 + (words - 1) * 8, 0, 8);
        memcpy(dst + n + 8, text, tl);
        n += 8 + words * 8;
    }
    uint64_t d = ts > base_ts ? ts - base_ts : 0;
    uint32_t dts = d > SPOOL_DTS_MAX ? SPOOL_DTS_MAX : (uint32_t)d;
    int16_t dev = (int16_t)(device < -1 ? -1 : device > INT16_MAX ? INT16_MAX : device);
    memcpy(dst, &dts, 4);
    dst[4] = op;
    dst[5] = flags;
    memcpy(dst + 6, &dev, 2);
    return n;
}

/* Decode the record at p (avail bytes left in the block); its length, or
 * 0 when it is malformed (cut short, unknown flags, unterminated text). */
static inline size_t spool_decode(const unsigned char *p, size_t avail, uint64_t base_ts,
                                  spool_rec_t *r)
{
    if (avail < 8)
        return 0;
    uint32_t dts;
    int16_t dev;
    memcpy(&dts, p, 4);
    memcpy(&dev, p + 6, 2);
    memset(r, 0, sizeof *r);
    r->ts = base_ts + dts;
    r->op = p[4];
    r->flags = p[5];
    r->device = dev;
    if (r->flags & ~SPOOL_F_KNOWN)
        return 0;
    size_t n = 8;
    uint64_t *fields[5] = {&r->addr, &r->size, &r->stream, &r->aux, (uint64_t *)&r->result};
    for (int i = 0; i < 5; i++)
        if (r->flags & (1u << i)) {
            if (avail - n < 8)
                return 0;
            memcpy(fields[i], p + n, 8);
            n += 8;
        }
    if (r->flags & SPOOL_F_TEXT) {
        uint64_t nb;
        if (avail - n < 8)
            return 0;
        memcpy(&nb, p + n, 8);
        n += 8;
        if (nb == 0 || nb > SPOOL_TEXT_MAX || (nb + 7) / 8 * 8 > avail - n ||
            p[n + nb - 1] != '\0')
            return 0;
        r->text = (const char *)p + n;
        n += (size_t)(nb + 7) / 8 * 8;
    }
    return n;
}

/* Checksum of a block: the header's first 40 bytes, then the payload
 * (len bytes, a multiple of 8).  The parts are passed apart so that a
 * reader need not copy. */
static inline uint64_t spool_sum(const void *hdr40, const void *payload, size_t len)
{
    const uint64_t k = UINT64_C(0x9e3779b97f4a7c15);
    uint64_t a = UINT64_C(0x243f6a8885a308d3), b = 0, w;
    const unsigned char *p = hdr40;
    for (size_t i = 0; i < 40; i += 8) {
        memcpy(&w, p + i, 8);
        a = (a ^ w) * k;
        b += a;
    }
    p = payload;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        memcpy(&w, p + i, 8);
        a = (a ^ w) * k;
        b += a ^ (a >> 29);
    }
    return a ^ (b * k) ^ (b >> 31);
}

#endif
