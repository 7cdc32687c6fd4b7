/* SPDX-License-Identifier: Apache-2.0 */
/* The shell v2 demultiplexer: [u8 id][u32 le length][data] in any split.
 * Checks that fragments reassemble to exactly the announced lengths. */
#include "fuzz.h"
#include "services/shell_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t split = fuzz_u8(&in);
    size_t chunk = split ? split : (in.len ? in.len : 1);
    adbc_shellv2_demux d = {0};
    while (in.len > 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        const uint8_t *p = in.p;
        size_t left = n;
        int guard = 0;
        while (left > 0 || guard == 0) {
            size_t used = 0, dlen = 0;
            int id = -1, last = 0;
            const uint8_t *frag = NULL;
            int rc = shellv2_next(&d, p, left, &used, &id, &frag, &dlen, &last);
            FUZZ_ASSERT(used <= left);
            if (rc < 0)
                return 0;
            p += used;
            left -= used;
            if (rc == 1) {
                FUZZ_ASSERT(id >= 0 && id <= 5);
                FUZZ_ASSERT(dlen == 0 || (frag >= in.p && frag + dlen <= in.p + n));
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
