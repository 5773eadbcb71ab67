// Declarations only: the symbols come from libFuzzer, linked by -sanitize=fuzzer.
#include "CLibFuzzer.h"
