// Everything else CTetherNetlink offers is static inline in the header.
#ifdef __linux__
#define _GNU_SOURCE  // pipe2; only in this file, so that the header's types stay those of Swift's Glibc module
#include <fcntl.h>
#include <unistd.h>
#endif

#include "CTetherNetlink.h"

#ifdef __linux__
int tether_pipe_cloexec_nonblocking(int ends[2]) { return pipe2(ends, O_CLOEXEC | O_NONBLOCK); }
#endif
