/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/pair/ through the
 * fuzz harness fuzz/fuzz_pair.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "pair"
#include "../../fuzz/fuzz_pair.c"
#include "../../fuzz/replay_main.c"
