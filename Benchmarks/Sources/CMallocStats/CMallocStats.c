// The functions are in include/CMallocStats.h (static inline); a C target needs one source file.
#include "CMallocStats.h"
