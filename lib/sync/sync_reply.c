/* SPDX-License-Identifier: Apache-2.0 */
/* The host's side of the sync: codec: an incremental decoder of what a
 * device sends back (stat, listing, file contents, status). No I/O, no
 * allocation; fuzzed by fuzz/fuzz_sync_reply.c. Layouts in sync_proto.h. */
#include "sync/sync_proto.h"
#include "core/internal.h"

#include <string.h>

static void get_v2_fields(const uint8_t *p, uint32_t *error, adbc_sync_statbuf *st)
{
    memset(st, 0, sizeof *st);
    *error = core_rd32(p);
    st->dev = core_rd64(p + 4);
    st->ino = core_rd64(p + 12);
    st->mode = core_rd32(p + 20);
    st->nlink = core_rd32(p + 24);
    st->uid = core_rd32(p + 28);
    st->gid = core_rd32(p + 32);
    st->size = core_rd64(p + 36);
    st->atime = (int64_t)core_rd64(p + 44);
    st->mtime = (int64_t)core_rd64(p + 52);
    st->ctime = (int64_t)core_rd64(p + 60);
    st->v2 = 1;
}

/* ---- reply decoder (host side) ---- */

enum { P_ID = 0, P_HDR, P_TEXT, P_DATA };

static const char *expect_name(adbc_sync_expect x)
{
    switch (x) {
    case ADBC_SYNC_X_STAT_V1: return "a STAT request";
    case ADBC_SYNC_X_STAT_V2: return "a STA2/LST2 request";
    case ADBC_SYNC_X_LIST_V1: return "a LIST request";
    case ADBC_SYNC_X_LIST_V2: return "a LIS2 request";
    case ADBC_SYNC_X_RECV: return "a RECV request";
    case ADBC_SYNC_X_STATUS: return "the end of a SEND";
    default: return "nothing (no request pending)";
    }
}

void sync_rdec_expect(adbc_sync_rdec *d, adbc_sync_expect x, uint32_t want_id)
{
    d->expect = x;
    d->want_id = want_id;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
    d->left = 0;
    d->tlen = 0;
}

static int bad_reply(const adbc_sync_rdec *d, const char *what)
{
    char name[16];
    return core_fail(ADBC_EPROTO,
                     "sync protocol error: the device sent %s (message '%s') in reply to %s; "
                     "its sync service is broken or this is not adbd",
                     what, sync_id_name(d->id, name), expect_name(d->expect));
}

/* The first 4 bytes are in: decide how long the fixed part is. */
static int classify(adbc_sync_rdec *d)
{
    uint32_t id = d->id;
    if (id == ADBC_SYNC_FAIL) {
        d->need = ADBC_SYNC_HDR;
        return 0;
    }
    switch (d->expect) {
    case ADBC_SYNC_X_STAT_V1:
        if (id == ADBC_SYNC_STAT) {
            d->need = ADBC_SYNC_STAT_V1_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_STAT_V2:
        /* adb accepts either v2 id for either request; so does adbc. */
        if (id == ADBC_SYNC_STA2 || id == ADBC_SYNC_LST2) {
            d->need = ADBC_SYNC_STAT_V2_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_LIST_V1:
        if (id == ADBC_SYNC_DENT || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_DENT_V1_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_LIST_V2:
        if (id == ADBC_SYNC_DNT2 || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_DENT_V2_SIZE;
            return 0;
        }
        break;
    case ADBC_SYNC_X_RECV:
        if (id == ADBC_SYNC_DATA || id == ADBC_SYNC_DONE) {
            d->need = ADBC_SYNC_HDR;
            return 0;
        }
        break;
    case ADBC_SYNC_X_STATUS:
        if (id == ADBC_SYNC_OKAY) {
            d->need = ADBC_SYNC_HDR;
            return 0;
        }
        break;
    default:
        return core_fail(ADBC_EPROTO,
                         "sync protocol error: the device sent data when no reply was due");
    }
    return bad_reply(d, "an unexpected message");
}

static void finish(adbc_sync_rdec *d)
{
    d->expect = ADBC_SYNC_X_NONE;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
}

static int text_done(adbc_sync_rdec *d, adbc_sync_event *ev);

/* The fixed part is complete: produce an event (1), move on to a payload
 * (0), or fail. */
static int header_done(adbc_sync_rdec *d, adbc_sync_event *ev)
{
    const uint8_t *h = d->hdr;
    uint32_t id = d->id;
    memset(ev, 0, sizeof *ev);
    ev->id = id;
    if (id == ADBC_SYNC_FAIL) {
        uint32_t n = core_rd32(h + 4);
        if (n > ADBC_SYNC_TEXT_MAX)
            return bad_reply(d, "an oversize FAIL message");
        d->left = n;
        d->tlen = 0;
        d->phase = P_TEXT;
        return n == 0 ? text_done(d, ev) : 0;
    }
    switch (d->expect) {
    case ADBC_SYNC_X_STAT_V1:
        ev->type = ADBC_SYNC_EV_STAT;
        ev->st.mode = core_rd32(h + 4);
        ev->st.size = core_rd32(h + 8);
        ev->st.mtime = core_rd32(h + 12);
        finish(d);
        return 1;
    case ADBC_SYNC_X_STAT_V2:
        ev->type = ADBC_SYNC_EV_STAT;
        get_v2_fields(h + 4, &ev->error, &ev->st);
        finish(d);
        return 1;
    case ADBC_SYNC_X_LIST_V1:
    case ADBC_SYNC_X_LIST_V2: {
        int v2 = d->expect == ADBC_SYNC_X_LIST_V2;
        if (id == ADBC_SYNC_DONE) {
            ev->type = ADBC_SYNC_EV_LIST_END;
            finish(d);
            return 1;
        }
        uint32_t namelen;
        if (v2) {
            get_v2_fields(h + 4, &d->error, &d->st);
            namelen = core_rd32(h + 72);
        } else {
            memset(&d->st, 0, sizeof d->st);
            d->error = 0;
            d->st.mode = core_rd32(h + 4);
            d->st.size = core_rd32(h + 8);
            d->st.mtime = core_rd32(h + 12);
            namelen = core_rd32(h + 16);
        }
        if (namelen == 0)
            return bad_reply(d, "a directory entry with an empty name");
        if (namelen > ADBC_SYNC_NAME_MAX)
            return bad_reply(d, "a directory entry with an oversize name (over 255 bytes)");
        d->left = namelen;
        d->tlen = 0;
        d->phase = P_TEXT;
        return 0;
    }
    case ADBC_SYNC_X_RECV:
        if (id == ADBC_SYNC_DONE) {
            ev->type = ADBC_SYNC_EV_DONE;
            ev->arg = core_rd32(h + 4);
            finish(d);
            return 1;
        }
        d->left = core_rd32(h + 4);
        if (d->left > ADBC_SYNC_DATA_MAX)
            return bad_reply(d, "an oversize DATA chunk (over 64 KiB)");
        d->phase = d->left ? P_DATA : P_ID;
        d->have = 0;
        d->need = 4;
        return 0;
    case ADBC_SYNC_X_STATUS:
        /* OKAY's length "can be ignored" (SYNC.TXT); adbd sends 0 and adb
         * reads nothing after it. */
        ev->type = ADBC_SYNC_EV_OKAY;
        finish(d);
        return 1;
    default:
        return bad_reply(d, "an unexpected message");
    }
}

/* A directory entry name must be usable as one path component: a device
 * that sends "../x" or "a/b" must not steer a tree pull outside its target. */
static int name_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '\0')
            return 0;
    return 1;
}

/* A name or message is complete: the DENT or FAIL event. */
static int text_done(adbc_sync_rdec *d, adbc_sync_event *ev)
{
    d->text[d->tlen] = '\0';
    memset(ev, 0, sizeof *ev);
    ev->id = d->id;
    ev->text = d->text;
    ev->text_len = d->tlen;
    if (d->id == ADBC_SYNC_FAIL) {
        /* The message goes into error text: keep it printable. */
        for (size_t i = 0; i < d->tlen; i++)
            if ((unsigned char)d->text[i] < 0x20 || d->text[i] == 0x7f)
                d->text[i] = '?';
        ev->type = ADBC_SYNC_EV_FAIL;
        finish(d);
        return 1;
    }
    if (!name_ok(d->text, d->tlen))
        return bad_reply(d, "a directory entry name containing '/' or NUL");
    ev->type = ADBC_SYNC_EV_DENT;
    ev->st = d->st;
    ev->error = d->error;
    d->phase = P_ID;
    d->have = 0;
    d->need = 4;
    return 1;
}

int sync_rdec_next(adbc_sync_rdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < len) {
        if (d->phase == P_ID || d->phase == P_HDR) {
            size_t n = d->need - d->have;
            if (n > len - pos)
                n = len - pos;
            memcpy(d->hdr + d->have, in + pos, n);
            d->have += n;
            pos += n;
            if (d->have < d->need)
                break;
            if (d->phase == P_ID) {
                d->id = core_rd32(d->hdr);
                if ((rc = classify(d)) < 0)
                    break;
                d->phase = P_HDR;
                if (d->have < d->need)
                    continue;
            }
            rc = header_done(d, ev);
            if (rc != 0)
                break;
            continue;
        }
        if (d->phase == P_DATA) {
            size_t n = d->left < len - pos ? d->left : len - pos;
            memset(ev, 0, sizeof *ev);
            ev->type = ADBC_SYNC_EV_DATA;
            ev->id = ADBC_SYNC_DATA;
            ev->data = in + pos;
            ev->len = n;
            d->left -= (uint32_t)n;
            pos += n;
            ev->last = d->left == 0;
            if (ev->last) {
                d->phase = P_ID;
                d->have = 0;
                d->need = 4;
            }
            rc = 1;
            break;
        }
        /* P_TEXT */
        size_t n = d->left < len - pos ? d->left : len - pos;
        memcpy(d->text + d->tlen, in + pos, n);
        d->tlen += n;
        d->left -= (uint32_t)n;
        pos += n;
        if (d->left > 0)
            break;
        rc = text_done(d, ev);
        break;
    }
    *used = pos;
    return rc;
}
