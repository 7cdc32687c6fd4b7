/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/ui/ through the
 * fuzz harness fuzz/fuzz_ui.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "ui"
#include "../../fuzz/fuzz_ui.c"
#include "../../fuzz/replay_main.c"
