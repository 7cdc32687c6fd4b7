/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/pair_machine/ through the
 * fuzz harness fuzz/fuzz_pair_machine.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "pair_machine"
#include "../../fuzz/fuzz_pair_machine.c"
#include "../../fuzz/replay_main.c"
