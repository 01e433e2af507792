/*
 * base/bulk.h — memory for a large buffer that is filled at once and freed
 * soon after: the pickle decoder's arena blocks and a snapshot file read
 * whole.  Such a buffer is first touched page by page, and on Linux each
 * 4 KiB page is a fault of its own (about 0.5 µs of kernel time: a 12 MiB
 * buffer cost 6-7 ms of CPU, as much as decoding the pickle in it).  From
 * GM__BULK_HUGE bytes on, the buffer is an anonymous mapping aligned to
 * 2 MiB with transparent huge pages asked for (madvise MADV_HUGEPAGE, which
 * most systems leave to the program): one fault per 2 MiB (the same 12 MiB:
 * 1.1 ms).  Smaller buffers, other systems, and a refused mapping use malloc.
 */
#ifndef GM_BASE_BULK_H
#define GM_BASE_BULK_H

#include <stddef.h>

#define GM__BULK_HUGE ((size_t)2 << 20)

typedef struct gm__bulk {
    void *p;         /* size bytes, 16-aligned; NULL when empty */
    size_t size;
    void *map;       /* the mapping p lies in, NULL when p is malloc's */
    size_t map_size;
} gm__bulk_t;

/* b->p becomes size bytes (size > 0, uninitialized).  0, or GM_ENOMEM with
 * b empty. */
int gm__bulk_alloc(gm__bulk_t *b, size_t size);

/* Free b->p (nothing when empty) and leave b empty. */
void gm__bulk_release(gm__bulk_t *b);

#endif
