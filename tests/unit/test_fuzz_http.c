/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/http/ through the
 * fuzz harness fuzz/fuzz_http.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "http"
#include "../../fuzz/fuzz_http.c"
#include "../../fuzz/replay_main.c"
