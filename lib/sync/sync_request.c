/* SPDX-License-Identifier: Apache-2.0 */
/* The device's side of the sync: codec: an incremental decoder of what a
 * host sends (requests, SEND's DATA and DONE). No I/O, no allocation; the
 * test device serves sync: with it. Fuzzed by fuzz/fuzz_sync_request.c.
 * Layouts in sync_proto.h. */
#include "sync/sync_proto.h"
#include "core/internal.h"

#include <string.h>

/* ---- request decoder (device side) ---- */

enum { Q_REQ = 0, Q_PATH, Q_SETUP, Q_BODY, Q_DATA };

void sync_qdec_init(adbc_sync_qdec *d)
{
    memset(d, 0, sizeof *d);
}

/* The path (and for v2 the setup) is in: the REQUEST event. */
static void request_event(adbc_sync_qdec *d, adbc_sync_event *ev, uint32_t flags, uint32_t mode)
{
    memset(ev, 0, sizeof *ev);
    ev->type = ADBC_SYNC_EV_REQUEST;
    ev->id = d->id;
    ev->text = d->path;
    ev->text_len = d->plen;
    ev->arg = flags;
    ev->st.mode = mode;
    d->phase = d->id == ADBC_SYNC_SEND || d->id == ADBC_SYNC_SND2 ? Q_BODY : Q_REQ;
}

int sync_qdec_next(adbc_sync_qdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < len) {
        if (d->phase == Q_REQ || d->phase == Q_BODY) {
            size_t n = ADBC_SYNC_HDR - d->have;
            if (n > len - pos)
                n = len - pos;
            memcpy(d->hdr + d->have, in + pos, n);
            d->have += n;
            pos += n;
            if (d->have < ADBC_SYNC_HDR)
                break;
            d->have = 0;
            d->id = core_rd32(d->hdr);
            d->left = core_rd32(d->hdr + 4);
            if (d->phase == Q_REQ) {
                /* adbd's own checks and replies, in its order. */
                if (d->left > ADBC_SYNC_PATH_MAX) {
                    rc = core_fail(ADBC_EPROTO, "path too long");
                    break;
                }
                d->plen = 0;
                d->phase = Q_PATH;
                if (d->left > 0)
                    continue;
            } else if (d->id == ADBC_SYNC_DATA) {
                if (d->left > ADBC_SYNC_DATA_MAX) {
                    rc = core_fail(ADBC_EPROTO, "oversize data message");
                    break;
                }
                d->phase = d->left ? Q_DATA : Q_BODY;
                continue;
            } else if (d->id == ADBC_SYNC_DONE) {
                memset(ev, 0, sizeof *ev);
                ev->type = ADBC_SYNC_EV_DONE;
                ev->id = ADBC_SYNC_DONE;
                ev->arg = d->left;
                d->phase = Q_REQ;
                rc = 1;
                break;
            } else {
                rc = core_fail(ADBC_EPROTO, "invalid data message");
                break;
            }
        }
        if (d->phase == Q_PATH) {
            size_t n = d->left < len - pos ? d->left : len - pos;
            memcpy(d->path + d->plen, in + pos, n);
            d->plen += n;
            d->left -= (uint32_t)n;
            pos += n;
            if (d->left > 0)
                break;
            d->path[d->plen] = '\0';
            if (d->id == ADBC_SYNC_SND2 || d->id == ADBC_SYNC_RCV2) {
                /* v2: a setup message follows the path, [id][mode][flags] or
                 * [id][flags]; adbd reads it without looking at its id. */
                d->have = 0;
                d->phase = Q_SETUP;
                continue;
            }
            request_event(d, ev, 0, 0);
            rc = 1;
            break;
        }
        if (d->phase == Q_SETUP) {
            size_t want = d->id == ADBC_SYNC_SND2 ? ADBC_SYNC_SEND2_SETUP : ADBC_SYNC_RECV2_SETUP;
            size_t n = want - d->have;
            if (n > len - pos)
                n = len - pos;
            memcpy(d->hdr + d->have, in + pos, n);
            d->have += n;
            pos += n;
            if (d->have < want)
                break;
            d->have = 0;
            if (d->id == ADBC_SYNC_SND2)
                request_event(d, ev, core_rd32(d->hdr + 8), core_rd32(d->hdr + 4));
            else
                request_event(d, ev, core_rd32(d->hdr + 4), 0);
            rc = 1;
            break;
        }
        /* Q_DATA */
        size_t n = d->left < len - pos ? d->left : len - pos;
        memset(ev, 0, sizeof *ev);
        ev->type = ADBC_SYNC_EV_DATA;
        ev->id = ADBC_SYNC_DATA;
        ev->data = in + pos;
        ev->len = n;
        d->left -= (uint32_t)n;
        pos += n;
        ev->last = d->left == 0;
        if (ev->last)
            d->phase = Q_BODY;
        rc = 1;
        break;
    }
    *used = pos;
    return rc;
}
