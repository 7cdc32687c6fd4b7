/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/jread/ through the
 * fuzz harness fuzz/fuzz_jread.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "jread"
#include "../../fuzz/fuzz_jread.c"
#include "../../fuzz/replay_main.c"
