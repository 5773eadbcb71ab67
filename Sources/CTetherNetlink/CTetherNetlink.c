// Everything CTetherNetlink offers is static inline in the header; this file only gives the target a source.
#include "CTetherNetlink.h"
