/* SPDX-License-Identifier: Apache-2.0 */
/* The shell v2 framing, [u8 id][u32 le length][data], as a sans-IO
 * demultiplexer (adbc/shell.h): it hands out one fragment of one packet at
 * a time without copying, so any split of the byte stream works and large
 * packets stream through. Used by adbc_shell_read(), by adbc-snap's front
 * end, by the test device and by the fuzzer. */
#include "adbc/shell.h"

#include "adbc/error.h"
#include "core/internal.h"

#include <string.h>

#define DEMUX_MAGIC 0x73763264u /* "sv2d" */

int adbc_shellv2_init(adbc_shellv2_demux *d, unsigned flags)
{
    if (!d)
        return core_fail(ADBC_EINVAL, "adbc_shellv2_init: d is NULL (pass the state to set up)");
    if (flags & ~ADBC_SHELLV2_LENIENT)
        return core_fail(ADBC_EINVAL,
                         "adbc_shellv2_init: unknown flags 0x%x (0 or ADBC_SHELLV2_LENIENT)",
                         flags & ~ADBC_SHELLV2_LENIENT);
    memset(d, 0, sizeof *d);
    d->magic = DEMUX_MAGIC;
    d->flags = flags;
    return 0;
}

static int demux_check(const adbc_shellv2_demux *d, const char *fn)
{
    if (!d)
        return core_fail(ADBC_EINVAL, "%s: d is NULL", fn);
    if (d->magic != DEMUX_MAGIC)
        return core_fail(ADBC_EINVAL, "%s: the demultiplexer was not set up: call "
                                      "adbc_shellv2_init() first", fn);
    return 0;
}

int adbc_shellv2_header(uint8_t out[ADBC_SHELLV2_HEADER], int id, uint32_t len)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_shellv2_header: out is NULL");
    if (id < 0 || id > 255)
        return core_fail(ADBC_EINVAL, "adbc_shellv2_header: packet id %d is not 0..255", id);
    out[0] = (uint8_t)id;
    core_wr32(out + 1, len);
    return 0;
}

int adbc_shellv2_next(adbc_shellv2_frag *out, size_t *consumed, adbc_shellv2_demux *d,
                      const void *in_, size_t len)
{
    int rc = demux_check(d, "adbc_shellv2_next");
    if (rc)
        return rc;
    if (!out || !consumed || (!in_ && len))
        return core_fail(ADBC_EINVAL, "adbc_shellv2_next: %s is NULL",
                         !out ? "out" : !consumed ? "consumed" : "in (with len > 0)");
    const uint8_t *in = in_;
    size_t used = 0;
    int fresh = 0;
    d->given = 0;
    if (d->remaining == 0 && d->hdrlen < ADBC_SHELLV2_HEADER) {
        size_t take = ADBC_SHELLV2_HEADER - d->hdrlen;
        if (take > len)
            take = len;
        if (take)
            memcpy(d->hdr + d->hdrlen, in, take);
        d->hdrlen += take;
        used += take;
        if (d->hdrlen < ADBC_SHELLV2_HEADER) {
            *consumed = used;
            return 0;
        }
        d->id = d->hdr[0];
        if (d->id > ADBC_SHELL_WINDOW_SIZE && !(d->flags & ADBC_SHELLV2_LENIENT)) {
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
    out->id = d->id;
    out->data = in + used;
    out->len = take;
    d->remaining -= (uint32_t)take;
    out->last = d->remaining == 0;
    if (d->remaining == 0)
        d->hdrlen = 0;
    d->given = take;
    *consumed = used + take;
    return 1;
}

int adbc_shellv2_unread(adbc_shellv2_demux *d, size_t n)
{
    int rc = demux_check(d, "adbc_shellv2_unread");
    if (rc)
        return rc;
    if (n > d->given)
        return core_fail(ADBC_EINVAL,
                         "adbc_shellv2_unread: %zu bytes given back, but the last fragment "
                         "handed out had %zu", n, d->given);
    if (n == 0)
        return 0;
    d->given -= n;
    d->remaining += (uint32_t)n;
    d->hdrlen = ADBC_SHELLV2_HEADER; /* mid-packet again, even if it had just ended */
    return 0;
}

int adbc_shellv2_finish(const adbc_shellv2_demux *d)
{
    int rc = demux_check(d, "adbc_shellv2_finish");
    if (rc)
        return rc;
    if (d->remaining > 0 || (d->hdrlen > 0 && d->hdrlen < ADBC_SHELLV2_HEADER))
        return core_fail(ADBC_EPROTO, "protocol violation: the shell v2 stream ended inside a "
                                      "packet (%s)", d->remaining ? "its data" : "its header");
    return 0;
}
