#ifndef C_MALLOC_STATS_H
#define C_MALLOC_STATS_H

#include <malloc.h>
#include <stddef.h>

/// The bytes glibc's allocator has handed out and not had back (in its arenas and in mmapped chunks): the live heap,
/// without the memory it keeps for reuse.
static inline size_t c_malloc_stats_live_heap(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

#endif
