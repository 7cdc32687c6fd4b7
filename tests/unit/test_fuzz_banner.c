/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/banner/ through the
 * fuzz harness fuzz/fuzz_banner.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "banner"
#include "../../fuzz/fuzz_banner.c"
#include "../../fuzz/replay_main.c"
