/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/sync_request/ through the
 * fuzz harness fuzz/fuzz_sync_request.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "sync_request"
#include "../../fuzz/fuzz_sync_request.c"
#include "../../fuzz/replay_main.c"
