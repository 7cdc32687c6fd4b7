/* SPDX-License-Identifier: Apache-2.0 */
/* The shell v2 demultiplexer: [u8 id][u32 le length][data] in any split.
 * Checks that fragments reassemble to exactly the announced lengths. */
#include "fuzz.h"
#include "adbc/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t split = fuzz_u8(&in);
    size_t chunk = split ? split : (in.len ? in.len : 1);
    adbc_shellv2_demux d;
    adbc_shellv2_init(&d, 0);
    while (in.len > 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        const uint8_t *p = in.p;
        size_t left = n;
        int guard = 0;
        while (left > 0 || guard == 0) {
            size_t used = 0;
            adbc_shellv2_frag fr = {.id = -1};
            int rc = adbc_shellv2_next(&fr, &used, &d, p, left);
            FUZZ_ASSERT(used <= left);
            if (rc < 0)
                return 0;
            p += used;
            left -= used;
            if (rc == 1) {
                FUZZ_ASSERT(fr.id >= 0 && fr.id <= 5);
                FUZZ_ASSERT(fr.len == 0 || (fr.data >= in.p && fr.data + fr.len <= in.p + n));
            } else {
                FUZZ_ASSERT(left == 0);
                break;
            }
            FUZZ_ASSERT(++guard < 1000000);
        }
        in.p += n;
        in.len -= n;
    }
    return 0;
}
