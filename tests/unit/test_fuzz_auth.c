/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/auth/ through the
 * fuzz harness fuzz/fuzz_auth.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "auth"
#include "../../fuzz/fuzz_auth.c"
#include "../../fuzz/replay_main.c"
