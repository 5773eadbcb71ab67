#include "CTetherNetlink.h"
