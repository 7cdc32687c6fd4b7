/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/shellv2/ through the
 * fuzz harness fuzz/fuzz_shellv2.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "shellv2"
#include "../../fuzz/fuzz_shellv2.c"
#include "../../fuzz/replay_main.c"
