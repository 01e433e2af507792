/*
 * base/bulk.c — large short-lived buffers (base/bulk.h says why).
 */
#include "base/bulk.h"

#include <stdint.h>
#include <stdlib.h>

#include "gmsim/error.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/* A mapping of size bytes aligned to GM__BULK_HUGE with huge pages asked
 * for; 0, or -1 (b untouched) when the system refuses the mapping. */
static int bulk_map(gm__bulk_t *b, size_t size)
{
    const size_t huge = GM__BULK_HUGE;
    if (size > SIZE_MAX - 2 * huge)
        return -1;
    size_t len = (size + huge - 1) & ~(huge - 1);
    size_t map_size = len + huge; /* room to align the start */
    void *m = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    uintptr_t at = ((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1);
    /* advice only: where it is refused the pages are small ones */
    madvise((void *)at, len, MADV_HUGEPAGE);
    b->p = (void *)at;
    b->size = size;
    b->map = m;
    b->map_size = map_size;
    return 0;
}
#endif

int gm__bulk_alloc(gm__bulk_t *b, size_t size)
{
    b->p = b->map = NULL;
    b->size = b->map_size = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= GM__BULK_HUGE && bulk_map(b, size) == 0)
        return 0;
#endif
    if ((b->p = malloc(size ? size : 1)) == NULL)
        return GM_ENOMEM;
    b->size = size;
    return 0;
}

void gm__bulk_release(gm__bulk_t *b)
{
#if defined(__linux__)
    if (b->map != NULL)
        munmap(b->map, b->map_size);
    else
#endif
        free(b->p);
    b->p = b->map = NULL;
    b->size = b->map_size = 0;
}
