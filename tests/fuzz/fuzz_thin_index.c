/* libFuzzer target: one dm-thin metadata block of this kind replaced by the input (see
 * fuzz_thin_common.h). */
#define FUZZ_KIND KIND_INDEX
#include "fuzz_thin_common.h"
