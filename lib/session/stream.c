/* SPDX-License-Identifier: Apache-2.0 */
/* Streams on a session: the table, OPEN/OKAY/WRTE/CLSE handling, and flow
 * control in both modes.
 *
 * Legacy mode: one WRTE in flight per direction; the receiver's OKAY (sent
 * once the consumer has used the whole packet) allows the next.
 * delayed_ack mode: OPEN's arg1 and the first OKAY's 4-byte payload grant
 * initial windows; later OKAYs carry the number of bytes consumed. adbd
 * sends while its balance is positive, so it may overshoot the window by up
 * to one packet; adbc as a sender never exceeds it. */
#include "session/session_int.h"

#include <string.h>

#define CREDIT_CAP ((int64_t)1 << 40)

adbc_sstream *session_stream_find(adbc_session *s, uint32_t local)
{
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].local == local)
            return &s->streams[i];
    return NULL;
}

adbc_sstream *session_stream_add(adbc_session *s, uint32_t local, uint32_t remote, int state)
{
    if (s->nstreams == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 8;
        adbc_sstream *n = core_realloc(s->streams, ncap * sizeof *n);
        if (!n)
            return NULL;
        s->streams = n;
        s->cap = ncap;
    }
    adbc_sstream *st = &s->streams[s->nstreams++];
    memset(st, 0, sizeof *st);
    st->local = local;
    st->remote = remote;
    st->state = state;
    return st;
}

void session_stream_remove(adbc_session *s, uint32_t local)
{
    for (size_t i = 0; i < s->nstreams; i++) {
        if (s->streams[i].local == local) {
            s->streams[i] = s->streams[--s->nstreams];
            return;
        }
    }
}

size_t adbc_session_stream_count(const adbc_session *s)
{
    if (!s)
        return 0;
    return s->nstreams;
}

/* An id we handed out earlier (the stream is closed now) as opposed to one
 * that was never opened. */
static int was_ours(const adbc_session *s, uint32_t id)
{
    return id != 0 && id < s->next_id;
}

static int unknown_stream(adbc_session *s, const char *what, uint32_t id)
{
    return session_fail(s, ADBC_EPROTO,
                             "protocol violation: %s for stream %u, which was never opened", what,
                             id);
}

int session_handle_open(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    if (h->arg0 == 0)
        return session_fail(s, ADBC_EPROTO, "protocol violation: OPEN with remote id 0");
    if ((s->role == ADBC_ROLE_HOST && !s->accept_opens) ||
        (h->arg1 != 0) != (s->delayed_ack != 0))
        /* A host serves nothing unless it asked for device-opened streams
         * (reverse forwarding); a window that does not match the negotiated
         * mode is refused as adbd refuses it. */
        return sq_push(s, ADBC_A_CLSE, 0, h->arg0, NULL, 0);
    /* The name is the payload less its trailing NULs, as adbd takes it (a
     * string_view): abb_exec: separates its arguments with NUL bytes, so
     * only a callee that takes the length (on_open_bytes) sees a name that
     * holds one; to on_open such a name is refused. */
    size_t n = h->data_length;
    while (n > 0 && data[n - 1] == '\0')
        n--;
    if (n == 0 || (!s->cb.on_open_bytes && memchr(data, '\0', n)))
        return sq_push(s, ADBC_A_CLSE, 0, h->arg0, NULL, 0);
    char *service = core_strndup((const char *)data, n); /* kept whole: strndup copies n bytes */
    if (!service)
        return session_fail(s, ADBC_ENOMEM, "out of memory for an OPEN");
    uint32_t id = s->next_id++;
    adbc_sstream *st = session_stream_add(s, id, h->arg0, ST_ACCEPTING);
    if (!st) {
        core_free(service);
        return session_fail(s, ADBC_ENOMEM, "out of memory for a stream");
    }
    st->ready = 1;
    st->credit = h->arg1;
    int refuse = s->cb.on_open_bytes ? s->cb.on_open_bytes(s->user, id, (const uint8_t *)service, n)
                 : s->cb.on_open ? s->cb.on_open(s->user, id, service)
                                 : 1;
    core_free(service);
    st = session_stream_find(s, id); /* the callback may have grown the table */
    if (!st) /* closed from inside the callback: the OPEN still needs an answer */
        return sq_push(s, ADBC_A_CLSE, 0, h->arg0, NULL, 0);
    if (refuse) {
        session_stream_remove(s, id);
        return sq_push(s, ADBC_A_CLSE, 0, h->arg0, NULL, 0);
    }
    uint8_t win[4];
    core_wr32(win, s->window);
    int rc = sq_push(s, ADBC_A_OKAY, id, h->arg0, win, s->delayed_ack ? 4 : 0);
    if (rc < 0)
        return session_fail(s, rc, "%s", adbc_last_error());
    st->state = ST_OPEN;
    if (s->cb.on_writable)
        s->cb.on_writable(s->user, id);
    return 0;
}

int session_handle_okay(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    adbc_sstream *st = session_stream_find(s, h->arg1);
    if (!st) {
        if (!was_ours(s, h->arg1) || h->arg0 == 0)
            return unknown_stream(s, "OKAY", h->arg1);
        /* We closed it while the OPEN was in flight: close the peer's end. */
        return sq_push(s, ADBC_A_CLSE, h->arg1, h->arg0, NULL, 0);
    }
    int32_t delta = 0;
    if (h->data_length == 4)
        delta = (int32_t)core_rd32(data);
    else if (h->data_length != 0)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: OKAY on stream %u with a %u-byte payload "
                                 "(expected 0 or 4)",
                                 st->local, h->data_length);
    if (s->delayed_ack && h->data_length != 4)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: OKAY on stream %u without a window update "
                                 "although delayed_ack was negotiated",
                                 st->local);
    if (st->state == ST_OPENING) {
        if (h->arg0 == 0)
            return session_fail(s, ADBC_EPROTO, "protocol violation: OKAY with remote id 0");
        st->remote = h->arg0;
        st->state = ST_OPEN;
        st->ready = 1;
        st->credit = s->delayed_ack ? delta : 0;
        uint32_t id = st->local;
        if (s->cb.on_ready)
            s->cb.on_ready(s->user, id);
        if (s->cb.on_writable && session_stream_find(s, id))
            s->cb.on_writable(s->user, id);
        return 0;
    }
    if (h->arg0 != st->remote)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: OKAY(%u, %u) but stream %u is bound to "
                                 "remote id %u",
                                 h->arg0, h->arg1, st->local, st->remote);
    if (s->delayed_ack) {
        st->credit += delta;
        if (st->credit > CREDIT_CAP)
            st->credit = CREDIT_CAP;
        if (delta > 0) /* a negative update shrinks the window; it acknowledges nothing */
            st->inflight -= delta;
        if (st->inflight < 0)
            st->inflight = 0;
    } else {
        st->ready = 1;
    }
    if (s->cb.on_writable && adbc_session_writable(s, st->local) > 0)
        s->cb.on_writable(s->user, st->local);
    return 0;
}

int session_wrte_begin(adbc_session *s, const adbc_header *h, int *deliver)
{
    *deliver = 0;
    adbc_sstream *st = session_stream_find(s, h->arg1);
    if (!st) {
        if (!was_ours(s, h->arg1))
            return unknown_stream(s, "WRTE", h->arg1);
        return 0; /* data for a stream we closed: dropped */
    }
    if (st->state != ST_OPEN)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: WRTE on stream %u before its OKAY",
                                 st->local);
    if (h->arg0 != st->remote)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: WRTE(%u, %u) but stream %u is bound to "
                                 "remote id %u",
                                 h->arg0, h->arg1, st->local, st->remote);
    if (s->delayed_ack) {
        st->unacked += h->data_length;
        if (st->unacked > (uint64_t)s->window + s->max_payload)
            return session_fail(s, ADBC_EPROTO,
                                     "protocol violation: WRTE on stream %u brings unacknowledged "
                                     "data to %llu bytes, beyond the %u-byte window",
                                     st->local, (unsigned long long)st->unacked, s->window);
    } else {
        /* The host role holds a device to one WRTE in flight. The device
         * role accepts more, as adbd does (it checks nothing here), since
         * adb's server may send a second WRTE before our OKAY: the bytes add
         * up and one OKAY answers once all of them are consumed. */
        if (st->unacked > 0 && s->role == ADBC_ROLE_HOST)
            return session_fail(s, ADBC_EPROTO,
                                     "protocol violation: second WRTE on stream %u before our "
                                     "OKAY (legacy flow control allows one)",
                                     st->local);
        st->unacked += h->data_length;
    }
    if (h->data_length == 0)
        return sq_push(s, ADBC_A_OKAY, st->local, st->remote, (const uint8_t *)"\0\0\0\0",
                            s->delayed_ack ? 4 : 0);
    *deliver = 1;
    return 0;
}

int session_handle_wrte(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    int deliver;
    int rc = session_wrte_begin(s, h, &deliver);
    if (rc < 0)
        return rc;
    if (deliver && s->cb.on_data)
        s->cb.on_data(s->user, h->arg1, data, h->data_length);
    return 0;
}

int session_handle_clse(adbc_session *s, const adbc_header *h)
{
    adbc_sstream *st = session_stream_find(s, h->arg1);
    if (!st) {
        if (!was_ours(s, h->arg1))
            return unknown_stream(s, "CLSE", h->arg1);
        return 0; /* both sides closed at once */
    }
    if (st->state == ST_OPEN && h->arg0 != 0 && h->arg0 != st->remote)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: CLSE(%u, %u) but stream %u is bound to "
                                 "remote id %u",
                                 h->arg0, h->arg1, st->local, st->remote);
    int reason = st->state == ST_OPENING ? ADBC_EREFUSED : 0;
    uint32_t id = st->local;
    session_stream_remove(s, id);
    if (s->cb.on_closed)
        s->cb.on_closed(s->user, id, reason);
    return 0;
}

int adbc_session_open(uint32_t *id, adbc_session *s, const char *service)
{
    if (!id || !s || !service)
        return core_null(__func__, !id ? "id" : !s ? "the session" : "service");
    return adbc_session_open_bytes(id, s, service, strlen(service));
}

int adbc_session_open_bytes(uint32_t *id, adbc_session *s, const void *service, size_t n)
{
    if (!id || !s || !service)
        return core_null(__func__, !id ? "id" : !s ? "the session" : "service");
    if (s->state != ADBC_SESSION_ONLINE)
        return core_fail(ADBC_EOFFLINE, "cannot open \"%.*s\": the session is not online",
                         (int)strnlen(service, n > 100 ? 100 : n), (const char *)service);
    if (n > 0 && ((const uint8_t *)service)[n - 1] == '\0')
        return core_fail(ADBC_EINVAL, "a service name may not end in a NUL byte (the device "
                         "strips trailing NULs, so the name would arrive shorter)");
    if (n == 0 || n + 1 > s->max_payload)
        return core_fail(ADBC_EINVAL, "service name of %zu bytes does not fit in one packet", n);
    uint32_t lid = s->next_id;
    adbc_sstream *st = session_stream_add(s, lid, 0, ST_OPENING);
    if (!st)
        return core_fail(ADBC_ENOMEM, "out of memory opening a stream");
    /* adbd expects the service name NUL-terminated (older ones need it). */
    char *name = core_strndup(service, n);
    int rc = name ? sq_push(s, ADBC_A_OPEN, lid, s->delayed_ack ? s->window : 0,
                            (const uint8_t *)name, n + 1)
                  : core_fail(ADBC_ENOMEM, "out of memory opening a stream");
    core_free(name);
    if (rc < 0) {
        session_stream_remove(s, lid);
        return rc;
    }
    s->next_id++;
    *id = lid;
    return 0;
}

size_t adbc_session_writable(const adbc_session *s, uint32_t id)
{
    if (!s)
        return 0;
    adbc_sstream *st = session_stream_find((adbc_session *)s, id);
    if (!st || st->state != ST_OPEN || s->state != ADBC_SESSION_ONLINE)
        return 0;
    if (s->delayed_ack) {
        int64_t w = st->credit;
        if (s->send_ahead && (int64_t)s->send_ahead - st->inflight < w)
            w = (int64_t)s->send_ahead - st->inflight;
        return w > 0 ? (size_t)w : 0;
    }
    return st->ready ? s->max_payload : 0;
}

ssize_t adbc_session_write(adbc_session *s, uint32_t id, const uint8_t *data, size_t len)
{
    if (!s || (!data && len))
        return core_null(__func__, !s ? "the session" : "data");
    adbc_sstream *st = session_stream_find(s, id);
    if (!st)
        return core_fail(ADBC_ECLOSED, "stream %u is closed", id);
    size_t allowed = adbc_session_writable(s, id);
    if (len > allowed)
        len = allowed;
    if (len > 0x40000000)
        len = 0x40000000;
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done;
        if (chunk > s->max_payload)
            chunk = s->max_payload;
        int rc = sq_push(s, ADBC_A_WRTE, st->local, st->remote, data + done, chunk);
        if (rc < 0)
            return done ? (ssize_t)done : rc;
        done += chunk;
        session_wrote(s, st, chunk);
    }
    return (ssize_t)done;
}

void session_wrote(adbc_session *s, adbc_sstream *st, size_t n)
{
    if (s->delayed_ack) {
        st->credit -= (int64_t)n;
        st->inflight += (int64_t)n;
    } else
        st->ready = 0;
}

int adbc_session_consume(adbc_session *s, uint32_t id, size_t n)
{
    if (!s)
        return core_null(__func__, "the session");
    adbc_sstream *st = session_stream_find(s, id);
    if (!st)
        return 0; /* closed meanwhile: nothing to acknowledge */
    uint64_t room = st->unacked - st->consumed;
    if (n > room)
        n = (size_t)room;
    st->consumed += n;
    if (!s->delayed_ack) {
        if (st->unacked > 0 && st->consumed == st->unacked) {
            st->unacked = st->consumed = 0;
            return sq_push(s, ADBC_A_OKAY, st->local, st->remote, NULL, 0);
        }
        return 0;
    }
    if (st->consumed > 0 && (st->consumed == st->unacked || st->consumed >= s->window / 4)) {
        uint8_t win[4];
        core_wr32(win, (uint32_t)st->consumed);
        st->unacked -= st->consumed;
        st->consumed = 0;
        return sq_push(s, ADBC_A_OKAY, st->local, st->remote, win, 4);
    }
    return 0;
}

int adbc_session_close_stream(adbc_session *s, uint32_t id)
{
    if (!s)
        return core_null(__func__, "the session");
    adbc_sstream *st = session_stream_find(s, id);
    if (!st)
        return 0;
    int rc = 0;
    if (st->state == ST_OPEN && s->state == ADBC_SESSION_ONLINE)
        rc = sq_push(s, ADBC_A_CLSE, st->local, st->remote, NULL, 0);
    session_stream_remove(s, id);
    return rc;
}
