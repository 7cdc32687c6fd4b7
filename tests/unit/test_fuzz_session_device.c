/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/session_device/ through the
 * fuzz harness fuzz/fuzz_session_device.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "session_device"
#include "../../fuzz/fuzz_session_device.c"
#include "../../fuzz/replay_main.c"
