/* SPDX-License-Identifier: Apache-2.0 */
/* The device side's sync request decoder (what the test device runs on
 * whatever a host sends), and the SEND "<path>,<mode>" parser. */
#include <string.h>

#include "fuzz.h"
#include "sync/sync_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t split = fuzz_u8(&in);
    size_t chunk = split ? split : (in.len ? in.len : 1);
    adbc_sync_qdec d;
    sync_qdec_init(&d);
    while (in.len > 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        const uint8_t *p = in.p;
        size_t left = n;
        while (left > 0) {
            size_t used = 0;
            adbc_sync_event ev;
            int rc = sync_qdec_next(&d, p, left, &used, &ev);
            FUZZ_ASSERT(used <= left);
            if (rc < 0)
                return 0;
            p += used;
            left -= used;
            if (rc == 0) {
                FUZZ_ASSERT(left == 0);
                break;
            }
            if (ev.type == ADBC_SYNC_EV_REQUEST) {
                FUZZ_ASSERT(ev.text && ev.text_len <= ADBC_SYNC_PATH_MAX);
                FUZZ_ASSERT(ev.text[ev.text_len] == '\0');
                if (ev.id == ADBC_SYNC_SEND) {
                    size_t plen = 0;
                    uint32_t mode = 0;
                    if (sync_parse_send_spec(ev.text, ev.text_len, &plen, &mode) == 0)
                        FUZZ_ASSERT(plen < ev.text_len);
                }
            } else if (ev.type == ADBC_SYNC_EV_DATA) {
                FUZZ_ASSERT(ev.len <= ADBC_SYNC_DATA_MAX);
            }
        }
        in.p += n;
        in.len -= n;
    }
    return 0;
}
