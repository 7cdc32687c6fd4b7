/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/session_host/ through the
 * fuzz harness fuzz/fuzz_session_host.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "session_host"
#include "../../fuzz/fuzz_session_host.c"
#include "../../fuzz/replay_main.c"
