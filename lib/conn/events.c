/* SPDX-License-Identifier: Apache-2.0 */
/* What the engine's events do to a connection. The callbacks run inside
 * adbc_session_recv with the lock held and only record: data goes to the
 * stream's buffer, state changes wake waiting callers. Then, once per batch
 * of input, conn_after_input does the protocol's next step in the same
 * thread: a window that opened takes the stream's waiting bytes, received
 * data the stream can hold is acknowledged, and the packets this queued go
 * out at once. So a transfer's round trip (OKAY in, next WRTE out; WRTE in,
 * OKAY out) never waits for another thread to wake. */
#include "conn/conn_int.h"
#include "session/session_conn.h"

#include <string.h>

adbc_stream *conn_find_stream(adbc_conn *c, uint32_t id)
{
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i]->id == id)
            return c->streams[i];
    return NULL;
}

static int cb_sign(void *user, unsigned index, const uint8_t *token, size_t token_len,
                   uint8_t *sig, size_t *sig_len)
{
    adbc_conn *c = user;
    if (!c->keys || index >= adbc_keyring_count(c->keys))
        return ADBC_ENOTFOUND;
    return adbc_key_sign_token(sig, sig_len, adbc_keyring_get(c->keys, index), token, token_len);
}

static const char *cb_pubkey(void *user)
{
    adbc_conn *c = user;
    if (!c->pubkey && c->keys && adbc_keyring_count(c->keys) > 0)
        adbc_key_public_line(&c->pubkey, adbc_keyring_get(c->keys, 0), NULL);
    return c->pubkey;
}

static void cb_wake(void *user)
{
    adbc_conn *c = user;
    conn_notify(c);
}

static void cb_prompt(void *user)
{
    adbc_conn *c = user;
    c->prompt_seen = 1;
    conn_notify(c);
}

int conn_grow_streams(adbc_conn *c)
{
    if (c->nstreams < c->cap)
        return 0;
    size_t ncap = c->cap ? c->cap * 2 : 8;
    adbc_stream **n = core_realloc(c->streams, ncap * sizeof *n);
    if (!n)
        return ADBC_ENOMEM;
    c->streams = n;
    c->cap = ncap;
    return 0;
}

/* The device opened a stream (reverse forwarding). Refused unless the
 * caller asked for such streams and accepts this destination. */
static int cb_open(void *user, uint32_t id, const char *service)
{
    adbc_conn *c = user;
    if (!c->opts.on_device_open || c->stopping || c->status)
        return 1;
    if (c->npending >= sizeof c->pending / sizeof c->pending[0])
        return 1;
    if (c->opts.on_device_open(c->opts.device_open_user, service) != 1)
        return 1;
    adbc_stream *st = core_calloc(1, sizeof *st);
    if (!st || conn_grow_streams(c) < 0 || !(st->service = core_strdup(service))) {
        core_free(st);
        return 1; /* out of memory: the device sees a refusal */
    }
    st->c = c;
    st->id = id;
    st->ready = 1;
    c->streams[c->nstreams++] = st;
    c->pending[c->npending++] = st;
    conn_notify(c);
    return 0;
}

static void cb_ready(void *user, uint32_t id)
{
    adbc_conn *c = user;
    adbc_stream *st = conn_find_stream(c, id);
    if (st)
        st->ready = 1;
    conn_notify(c);
}

static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    adbc_conn *c = user;
    adbc_stream *st = conn_find_stream(c, id);
    if (!st)
        return;
    if (st->sink && st->len == 0) {
        /* Nothing waits before it: straight to the sink, acknowledged
         * after this batch of input (conn_after_input). */
        long k = st->sink(st->sink_user, data, len);
        if (k > 0) {
            data += k;
            len -= (size_t)k;
            st->owed += (size_t)k;
        }
        if (len == 0)
            return;
    }
    if (st->head + st->len + len > st->cap && st->lent && !st->lent_old) {
        /* Part of the buffer is lent to a reader outside the lock: copy
         * into a new one and free the old one when it comes back. */
        size_t ncap = st->cap ? st->cap : 64 * 1024;
        while (ncap < st->len + len)
            ncap *= 2;
        uint8_t *nb = core_malloc(ncap);
        if (!nb) {
            conn_set_error(c, ADBC_ENOMEM, "out of memory buffering stream data");
            return;
        }
        memcpy(nb, st->buf + st->head, st->len);
        st->lent_old = st->buf;
        st->buf = nb;
        st->cap = ncap;
        st->head = 0;
    } else if (st->head + st->len + len > st->cap) {
        if (st->head > 0) { /* compact first */
            memmove(st->buf, st->buf + st->head, st->len);
            st->head = 0;
        }
        if (st->len + len > st->cap) {
            size_t ncap = st->cap ? st->cap : 64 * 1024;
            while (ncap < st->len + len)
                ncap *= 2;
            uint8_t *nb = core_realloc(st->buf, ncap);
            if (!nb) {
                conn_set_error(c, ADBC_ENOMEM, "out of memory buffering stream data");
                return;
            }
            st->buf = nb;
            st->cap = ncap;
        }
    }
    memcpy(st->buf + st->head + st->len, data, len);
    st->len += len;
    st->owed += len;
    conn_stream_wake(st); /* the sink left it: its reader must come */
    if (c->try_write && !adbc_session_delayed_ack(c->s) &&
        len == adbc_session_max_payload(c->s) && st->len < ADBC_CONN_WAKE_BATCH) {
        st->unwoken = 1;
        c->deferred = 1;
        return;
    }
    st->unwoken = 0;
    conn_notify(c);
}

void conn_wake_deferred(adbc_conn *c)
{
    if (!c->deferred)
        return;
    c->deferred = 0;
    int wake = 0;
    for (size_t i = 0; i < c->nstreams; i++) {
        wake |= c->streams[i]->unwoken;
        c->streams[i]->unwoken = 0;
    }
    if (wake)
        pthread_cond_broadcast(&c->cond);
}

int conn_deferred(adbc_conn *c)
{
    if (!c->deferred)
        return 0;
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i]->unwoken)
            return 1;
    c->deferred = 0; /* each was woken, or its reader took the data itself */
    return 0;
}

static void cb_writable(void *user, uint32_t id)
{
    /* conn_after_input moves waiting bytes into the window; a caller
     * waits only for room, which sending makes (conn_sent). A stream
     * that just became writable with nothing waiting needs no wake-up. */
    (void)user;
    (void)id;
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    adbc_conn *c = user;
    adbc_stream *st = conn_find_stream(c, id);
    if (st) {
        st->closed = 1;
        st->close_reason = reason;
        /* A CLSE processed after the connection failed (say, stream data was
         * dropped for lack of memory) must not read as a clean end. */
        st->torn = c->status != 0;
        /* Bytes still waiting for a window will never go. */
        st->out_head = st->out_len = 0;
        st->owed = 0;
        /* Everything before the end went to the sink: tell it now, in this
         * thread, rather than through a wake-up of the stream's reader. */
        if (st->sink && st->len == 0 && !st->torn && reason == 0)
            st->sink(st->sink_user, NULL, 0);
        else
            conn_stream_wake(st);
    }
    conn_notify(c);
}

const adbc_session_callbacks conn_callbacks = {
    .size = sizeof(adbc_session_callbacks),
    .auth_sign = cb_sign,
    .auth_public_key = cb_pubkey,
    .auth_prompt = cb_prompt,
    .on_online = cb_wake,
    .on_open = cb_open,
    .on_ready = cb_ready,
    .on_data = cb_data,
    .on_writable = cb_writable,
    .on_closed = cb_closed,
};

size_t conn_high_water(adbc_conn *c)
{
    /* Two packets and 64 KiB, and at least 256 KiB: memory does not grow
     * with a transfer even when the device grants a huge window, a legacy
     * device's next packets are always there when its OKAY comes, and a
     * writer waiting for room (woken at half of this) wakes once per 32
     * of a legacy device's 4 KiB packets, not once per 9. */
    size_t high_water = 2 * (size_t)adbc_session_max_payload(c->s) + 64 * 1024;
    return high_water > 256 * 1024 ? high_water : 256 * 1024;
}

size_t conn_room(adbc_conn *c, adbc_stream *st)
{
    size_t high_water = conn_high_water(c);
    size_t used = adbc_session_send_queued(c->s) + st->out_len;
    return used < high_water ? high_water - used : 0;
}

void conn_pump(adbc_conn *c, adbc_stream *st)
{
    while (st->out_len > 0 && !st->closed && !c->status) {
        size_t w = adbc_session_writable(c->s, st->id);
        if (w == 0)
            return;
        size_t n = st->out_len < w ? st->out_len : w;
        long k = adbc_session_write(c->s, st->id, st->out + st->out_head, n);
        if (k < 0) {
            conn_set_error(c, (int)k, adbc_last_error());
            return;
        }
        if (k == 0)
            return;
        st->out_head += (size_t)k;
        st->out_len -= (size_t)k;
    }
    if (st->out_len == 0)
        st->out_head = 0;
}

void conn_ack(adbc_conn *c, adbc_stream *st)
{
    if (st->owed == 0 || st->closed)
        return;
    /* What was read is always acknowledged; what is still unread only
     * without delayed_ack, up to the read-ahead bound. With delayed_ack the
     * window already lets the device run ahead of the reader, and a caller
     * that set a small window expects no more than that buffered. */
    size_t limit = adbc_session_delayed_ack(c->s) ? 0 : ADBC_CONN_READAHEAD;
    size_t n = st->owed;
    if (st->len > limit)
        n = st->owed > st->len ? st->owed - st->len : 0;
    if (n == 0)
        return;
    st->owed -= n;
    /* Returning credit can fail only for lack of memory; the window would
     * then never reopen, so fail the connection instead of letting the
     * transfer stall until its timeout. */
    if (adbc_session_consume(c->s, st->id, n) < 0)
        conn_set_error(c, ADBC_ENOMEM, "out of memory acknowledging received data");
}

/* Lock held: the window of a stream whose writer waits for it opened.
 * With a source the next packet is filled here, as the stream's waiting
 * bytes are sent from here: no wake-up of the writer per window update.
 * The writer is woken when the window is still open after that, when the
 * source has nothing (to wait for more on its own) or failed (to see
 * why). */
static void conn_source(adbc_conn *c, adbc_stream *st)
{
    long k = 0;
    if (st->source && !st->filling) {
        size_t room = conn_room(c, st), cap = 0;
        if (room > st->source_max)
            room = st->source_max;
        uint8_t *p = room ? session_write_reserve(c->s, st->id, room, &cap) : NULL;
        if (p) {
            k = st->source(st->source_user, p, cap);
            if (session_write_commit(c->s, st->id, p, k > 0 ? (size_t)k : 0) < 0)
                k = 0;
        }
    }
    if (k > 0 && adbc_session_writable(c->s, st->id) == 0)
        return; /* the writer still waits: the next window update fills again */
    st->window_want = 0;
    conn_notify(c);
}

void conn_after_input(adbc_conn *c)
{
    for (size_t i = 0; i < c->nstreams && !c->status; i++) {
        adbc_stream *st = c->streams[i];
        if (st->out_len > 0)
            conn_pump(c, st);
        if (st->owed > 0)
            conn_ack(c, st);
        if (st->window_want && st->out_len == 0 && adbc_session_writable(c->s, st->id) > 0)
            conn_source(c, st);
    }
    conn_kick(c);
}
