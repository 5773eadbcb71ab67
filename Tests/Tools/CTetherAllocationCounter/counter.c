// The malloc family of the allocation harness (TetherAllocations): each function is defined here, in the executable,
// so that the dynamic linker binds every library's calls to it; it counts (when counting is on) and calls glibc's own
// implementation through its `__libc_*` entry points, which need no dlsym and so cannot recurse. Counting is one
// relaxed atomic flag and three relaxed atomic counters: cheap enough to leave every call hooked.
#include "CTetherAllocationCounter.h"

#if defined(__linux__) && defined(__GLIBC__)

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_bool counting = false;
static atomic_llong allocations = 0;
static atomic_llong frees = 0;
static atomic_llong bytes = 0;

static inline void count_allocation(size_t size) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes, (long long)size, memory_order_relaxed);
    }
}

static inline void count_free(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) {
    count_allocation(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) {
        count_allocation(size);
    } else if (size == 0) {
        count_free();
    } else {
        // A move or a resize in place: counted as one allocation and one free, as SwiftNIO's counter does.
        count_allocation(size);
        count_free();
    }
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL) {
        count_free();
    }
    __libc_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
        return EINVAL;
    }
    count_allocation(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation(size);
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation(size);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count_allocation(size);
    return __libc_memalign(4096, size);
}

int tether_allocation_counter_is_installed(void) {
    tether_allocation_counting_start();
    // Through a volatile pointer: the compiler may not remove a malloc/free pair it can see.
    void *(*volatile allocate)(size_t) = malloc;
    void *pointer = allocate(16);
    free(pointer);
    tether_allocation_counts counts = tether_allocation_counting_stop();
    return counts.allocations >= 1 && counts.frees >= 1;
}

void tether_allocation_counting_start(void) {
    atomic_store_explicit(&allocations, 0, memory_order_relaxed);
    atomic_store_explicit(&frees, 0, memory_order_relaxed);
    atomic_store_explicit(&bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&counting, true, memory_order_seq_cst);
}

tether_allocation_counts tether_allocation_counting_stop(void) {
    atomic_store_explicit(&counting, false, memory_order_seq_cst);
    tether_allocation_counts counts = {
        .allocations = atomic_load_explicit(&allocations, memory_order_relaxed),
        .frees = atomic_load_explicit(&frees, memory_order_relaxed),
        .bytes = atomic_load_explicit(&bytes, memory_order_relaxed),
    };
    return counts;
}

#else

int tether_allocation_counter_is_installed(void) { return 0; }

void tether_allocation_counting_start(void) {}

tether_allocation_counts tether_allocation_counting_stop(void) {
    tether_allocation_counts counts = {0, 0, 0};
    return counts;
}

#endif
