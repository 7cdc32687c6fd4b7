/* SPDX-License-Identifier: Apache-2.0 */
/* Shell v2 framing: see shell_proto.h. */
#include "services/shell_proto.h"

#include "adbc/shell.h"
#include "core/internal.h"

#include <string.h>

void shellv2_header(uint8_t out[5], int id, uint32_t len)
{
    out[0] = (uint8_t)id;
    core_wr32(out + 1, len);
}

int shellv2_next(adbc_shellv2_demux *d, const uint8_t *in, size_t len, size_t *consumed,
                      int *id, const uint8_t **data, size_t *dlen, int *last)
{
    size_t used = 0;
    int fresh = 0;
    if (d->remaining == 0 && d->hdrlen < 5) {
        size_t take = 5 - d->hdrlen;
        if (take > len)
            take = len;
        memcpy(d->hdr + d->hdrlen, in, take);
        d->hdrlen += take;
        used += take;
        if (d->hdrlen < 5) {
            *consumed = used;
            return 0;
        }
        d->id = d->hdr[0];
        if (d->id > ADBC_SHELL_WINDOW_SIZE && !d->lenient) {
            *consumed = used;
            return core_fail(ADBC_EPROTO,
                             "protocol violation: shell v2 packet with unknown id %d (length %u)",
                             d->id, core_rd32(d->hdr + 1));
        }
        d->remaining = core_rd32(d->hdr + 1);
        fresh = 1;
    }
    size_t avail = len - used;
    size_t take = d->remaining < avail ? d->remaining : avail;
    if (take == 0 && !(fresh && d->remaining == 0)) {
        *consumed = used;
        return 0;
    }
    *id = d->id;
    *data = in + used;
    *dlen = take;
    d->remaining -= (uint32_t)take;
    *last = d->remaining == 0;
    if (d->remaining == 0)
        d->hdrlen = 0;
    *consumed = used + take;
    return 1;
}

void shellv2_unread(adbc_shellv2_demux *d, size_t n)
{
    if (n == 0)
        return;
    d->remaining += (uint32_t)n;
    d->hdrlen = 5; /* mid-packet again, even if it had just ended */
}
