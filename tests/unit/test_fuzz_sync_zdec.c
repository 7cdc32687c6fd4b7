/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/sync_zdec/ through the
 * fuzz harness fuzz/fuzz_sync_zdec.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "sync_zdec"
#include "../../fuzz/fuzz_sync_zdec.c"
#include "../../fuzz/replay_main.c"
