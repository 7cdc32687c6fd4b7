/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/sync_reply/ through the
 * fuzz harness fuzz/fuzz_sync_reply.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "sync_reply"
#include "../../fuzz/fuzz_sync_reply.c"
#include "../../fuzz/replay_main.c"
