#ifndef C_TETHER_ALLOCATION_COUNTER_H
#define C_TETHER_ALLOCATION_COUNTER_H

#include <stdint.h>

/// What the process allocated and freed while counting was on, on every thread.
typedef struct {
    int64_t allocations;
    int64_t frees;
    int64_t bytes;
} tether_allocation_counts;

/// 1 when this process's malloc family is the counting one (Linux, glibc), else 0: counts are then always zero.
int tether_allocation_counter_is_installed(void);

/// Sets the counters to zero and starts counting (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign,
/// valloc, free) on every thread.
void tether_allocation_counting_start(void);

/// Stops counting and returns what was counted since the last start.
tether_allocation_counts tether_allocation_counting_stop(void);

#endif
