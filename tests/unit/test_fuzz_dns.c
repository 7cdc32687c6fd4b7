/* SPDX-License-Identifier: Apache-2.0 */
/* Replays the seed and regression corpus fixtures/fuzz/dns/ through the
 * fuzz harness fuzz/fuzz_dns.c, as an ordinary test (no libFuzzer). */
#define FUZZ_NAME "dns"
#include "../../fuzz/fuzz_dns.c"
#include "../../fuzz/replay_main.c"
