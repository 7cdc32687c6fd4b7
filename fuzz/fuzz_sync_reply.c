/* SPDX-License-Identifier: Apache-2.0 */
/* The host's sync reply decoder: what a device answers to STAT/LIST/RECV/
 * SEND, in any split. The first byte picks what the decoder expects; after
 * each reply ends the next input byte picks again, as a client would. */
#include "fuzz.h"
#include "sync/sync_proto.h"

static void expect_from(adbc_sync_rdec *d, uint8_t b)
{
    static const uint32_t v2ids[2] = {ADBC_SYNC_STA2, ADBC_SYNC_LST2};
    sync_rdec_expect(d, (adbc_sync_expect)(1 + b % 6), v2ids[(b >> 3) & 1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t split = fuzz_u8(&in);
    size_t chunk = split ? split : (in.len ? in.len : 1);
    adbc_sync_rdec d;
    expect_from(&d, fuzz_u8(&in));
    while (in.len > 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        const uint8_t *p = in.p;
        size_t left = n;
        while (left > 0) {
            size_t used = 0;
            adbc_sync_event ev;
            int rc = sync_rdec_next(&d, p, left, &used, &ev);
            FUZZ_ASSERT(used <= left);
            if (rc < 0)
                return 0;
            p += used;
            left -= used;
            if (rc == 0) {
                FUZZ_ASSERT(left == 0);
                break;
            }
            switch (ev.type) {
            case ADBC_SYNC_EV_DATA:
                FUZZ_ASSERT(ev.len <= ADBC_SYNC_DATA_MAX);
                FUZZ_ASSERT(ev.len == 0 || (ev.data >= in.p && ev.data + ev.len <= in.p + n));
                break;
            case ADBC_SYNC_EV_FAIL:
            case ADBC_SYNC_EV_DENT:
                FUZZ_ASSERT(ev.text != NULL && ev.text[ev.text_len] == '\0');
                FUZZ_ASSERT(ev.text_len <= ADBC_SYNC_TEXT_MAX);
                break;
            default:
                break;
            }
            if (ev.type == ADBC_SYNC_EV_STAT || ev.type == ADBC_SYNC_EV_LIST_END ||
                ev.type == ADBC_SYNC_EV_DONE || ev.type == ADBC_SYNC_EV_OKAY ||
                ev.type == ADBC_SYNC_EV_FAIL)
                expect_from(&d, (uint8_t)(ev.type * 7 + n));
        }
        in.p += n;
        in.len -= n;
    }
    return 0;
}
