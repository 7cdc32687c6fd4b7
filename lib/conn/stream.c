/* SPDX-License-Identifier: Apache-2.0 */
/* Streams on a connection: open, read, write, flush, close. Every call
 * takes the connection's lock, acts on the engine, sends what it queued
 * from the calling thread (send.c) and waits on the condition variable
 * until its deadline. */
#include "conn/conn_int.h"
#include "session/session_conn.h"

#include <string.h>

/* conn_stream_read_swap trades buffers from this much buffered data on;
 * below it a copy costs less than the caller's buffer growing again. */
#define STREAM_SWAP_MIN (64 * 1024)

static int stream_open(adbc_stream **out, adbc_conn *c, const char *name, size_t len,
                       int timeout_ms);

int adbc_stream_open(adbc_stream **out, adbc_conn *c, const char *service, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c || !service || !*service)
        return core_fail(ADBC_EINVAL, "adbc_stream_open: need a connection and a service name");
    return stream_open(out, c, service, strlen(service), timeout_ms);
}

int adbc_stream_open_bytes(adbc_stream **out, adbc_conn *c, const void *service, size_t len,
                           int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c || !service || len == 0)
        return core_fail(ADBC_EINVAL,
                         "adbc_stream_open_bytes: need a connection and a service name");
    return stream_open(out, c, service, len, timeout_ms);
}

/* The stream keeps the name for messages and adbc_stream_destination with
 * each NUL byte (abb_exec:'s argument separator) shown as a space. */
static int stream_open(adbc_stream **out, adbc_conn *c, const char *name, size_t len,
                       int timeout_ms)
{
    char *service = core_strndup(name, len);
    if (!service)
        return core_fail(ADBC_ENOMEM, "out of memory opening a stream");
    for (size_t i = 0; i < len; i++)
        if (service[i] == '\0')
            service[i] = ' ';
    adbc_stream *st = core_calloc(1, sizeof *st);
    if (!st) {
        core_free(service);
        return core_fail(ADBC_ENOMEM, "out of memory opening a stream");
    }
    st->c = c;
    st->service = service;
    int64_t deadline = core_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    int rc;
    if (c->status) {
        rc = conn_raise(c);
        goto out;
    }
    if (conn_grow_streams(c) < 0) {
        rc = core_fail(ADBC_ENOMEM, "out of memory opening a stream");
        goto out;
    }
    rc = adbc_session_open_bytes(&st->id, c->s, name, len);
    if (rc < 0)
        goto out;
    c->streams[c->nstreams++] = st;
    conn_kick(c);
    while (!st->ready && !st->closed && !c->status) {
        if (c->interrupted) {
            rc = conn_cancelled();
            break;
        }
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = core_fail(ADBC_ETIMEDOUT,
                           "the device did not answer the request to open \"%.100s\" within %d "
                           "ms",
                           service, timeout_ms);
            break;
        }
    }
    if (rc == 0 && st->ready) {
        *out = st;
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    if (rc == 0 && st->closed)
        rc = core_fail(ADBC_EREFUSED,
                       "the device refused \"%.100s\": the service does not exist there or "
                       "failed to start",
                       service);
    else if (rc == 0)
        rc = conn_raise(c);
    adbc_session_close_stream(c->s, st->id);
    conn_kick(c);
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i] == st) {
            c->streams[i] = c->streams[--c->nstreams];
            break;
        }
out:
    pthread_mutex_unlock(&c->mu);
    core_free(st->service);
    core_free(st);
    return rc;
}

int adbc_conn_accept(adbc_stream **out, adbc_conn *c, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_conn_accept: no connection");
    if (!c->opts.on_device_open)
        return core_fail(ADBC_EINVAL, "adbc_conn_accept: the connection refuses device-opened "
                                      "streams (set on_device_open in its options)");
    int64_t deadline = core_deadline(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->npending > 0) {
            *out = c->pending[0];
            memmove(c->pending, c->pending + 1, --c->npending * sizeof c->pending[0]);
            break;
        }
        if (c->status) {
            rc = conn_raise(c);
            break;
        }
        if (c->stopping) {
            rc = core_fail(ADBC_ECLOSED, "the connection is closing");
            break;
        }
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = core_fail(ADBC_ETIMEDOUT, "the device opened no stream within %d ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

const char *adbc_stream_destination(const adbc_stream *st)
{
    if (!st)
        return "";
    return st->service ? st->service : "";
}

static int orphaned(void)
{
    return core_fail(ADBC_ECLOSED, "the stream's connection was closed");
}

/* Lock held: wait until the stream has data (1), ended cleanly (0), or the
 * connection failed or the deadline passed (an error, raised). */
static int wait_readable(adbc_conn *c, adbc_stream *st, int64_t deadline, int timeout_ms)
{
    for (;;) {
        if (c->interrupted)
            return conn_cancelled();
        if (st->len > 0)
            return 1;
        if (st->closed && !st->torn)
            return 0;
        if (c->status)
            return conn_raise(c);
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT)
            return core_fail(ADBC_ETIMEDOUT, "no data from the device within %d ms", timeout_ms);
    }
}

/* Lock held: bytes left the stream's buffer; acknowledge what it owes if
 * it now holds little enough (the reader thread acknowledged the rest at
 * once), and send that OKAY from this thread. */
static void taken(adbc_conn *c, adbc_stream *st)
{
    st->unwoken = 0; /* its reader came for the data without a wake-up */
    conn_ack(c, st);
    conn_kick(c);
}

ssize_t adbc_stream_read(adbc_stream *st, void *buf, size_t len, int timeout_ms)
{
    if (!st || (!buf && len))
        return core_null(__func__, !st ? "the stream" : "buf");
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    if (len == 0)
        return 0;
    int64_t deadline = core_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    ssize_t rc = wait_readable(c, st, deadline, timeout_ms);
    if (rc > 0) {
        size_t n = st->len < len ? st->len : len;
        memcpy(buf, st->buf + st->head, n);
        st->head += n;
        st->len -= n;
        if (st->len == 0)
            st->head = 0;
        taken(c, st);
        rc = (ssize_t)n;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

ssize_t conn_stream_read_to(adbc_stream *st, long (*sink)(void *user, const uint8_t *p, size_t n),
                            void *user, int *ended, int timeout_ms)
{
    adbc_conn *c = st->c;
    *ended = 0;
    if (!c)
        return orphaned();
    int64_t deadline = core_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    ssize_t rc = wait_readable(c, st, deadline, timeout_ms);
    if (rc == 0)
        *ended = 1;
    if (rc > 0) {
        const uint8_t *p = st->buf + st->head;
        size_t n = st->len;
        st->lent = 1;
        pthread_mutex_unlock(&c->mu);
        long k = sink(user, p, n);
        pthread_mutex_lock(&c->mu);
        st->lent = 0;
        core_free(st->lent_old); /* the lent bytes were copied to the front of buf */
        st->lent_old = NULL;
        if (k > 0) {
            st->head += (size_t)k;
            st->len -= (size_t)k;
            if (st->len == 0)
                st->head = 0;
            taken(c, st);
        }
        rc = k;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void conn_stream_set_source(adbc_stream *st, size_t max,
                            long (*source)(void *user, uint8_t *p, size_t cap), void *user)
{
    adbc_conn *c = st->c;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    st->source = source;
    st->source_user = user;
    st->source_max = max;
    pthread_mutex_unlock(&c->mu);
}

void conn_stream_set_sink(adbc_stream *st, long (*sink)(void *user, const uint8_t *p, size_t n),
                          void *user)
{
    adbc_conn *c = st->c;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    st->sink = sink;
    st->sink_user = user;
    pthread_mutex_unlock(&c->mu);
}

void conn_stream_set_wake(adbc_stream *st, void (*wake)(void *user), void *user)
{
    adbc_conn *c = st->c;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    st->wake = wake;
    st->wake_user = user;
    /* An end that came before the sink was set was not told to it. */
    if (wake && (st->len > 0 || st->closed || c->status || c->interrupted || c->stopping))
        wake(user);
    pthread_mutex_unlock(&c->mu);
}

void conn_stream_wake(adbc_stream *st)
{
    if (st->wake)
        st->wake(st->wake_user);
}

void conn_wake_streams(adbc_conn *c)
{
    for (size_t i = 0; i < c->nstreams; i++)
        conn_stream_wake(c->streams[i]);
}

ssize_t conn_stream_read_swap(adbc_stream *st, uint8_t **buf, size_t *cap, size_t *off,
                              int timeout_ms)
{
    adbc_conn *c = st->c;
    *off = 0;
    if (!c)
        return orphaned();
    int64_t deadline = core_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    ssize_t rc = wait_readable(c, st, deadline, timeout_ms);
    if (rc > 0) {
        size_t n = st->len;
        if (n >= STREAM_SWAP_MIN || n > *cap) {
            /* Trade buffers: the caller's (empty) one takes the stream's
             * next data, and the stream's, full, goes to the caller. */
            uint8_t *mine = st->buf;
            size_t mine_cap = st->cap;
            st->buf = *buf;
            st->cap = *cap;
            *buf = mine;
            *cap = mine_cap;
            *off = st->head;
        } else {
            memcpy(*buf, st->buf + st->head, n);
        }
        st->head = st->len = 0;
        taken(c, st);
        rc = (ssize_t)n;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int adbc_stream_read_full(adbc_stream *st, void *buf, size_t len, int timeout_ms)
{
    int64_t deadline = core_deadline(timeout_ms);
    size_t got = 0;
    while (got < len) {
        ssize_t n = adbc_stream_read(st, (uint8_t *)buf + got, len - got, core_remaining(deadline));
        if (n < 0)
            return (int)n;
        if (n == 0)
            return core_fail(ADBC_ECLOSED,
                             "the device closed the stream after %zu of %zu expected bytes", got,
                             len);
        got += (size_t)n;
    }
    return 0;
}

/* Lock held: append to the stream's bytes waiting for the window. */
static int stash(adbc_stream *st, const uint8_t *p, size_t n)
{
    if (st->out_head > 0 && st->out_head + st->out_len + n > st->out_cap) {
        memmove(st->out, st->out + st->out_head, st->out_len);
        st->out_head = 0;
    }
    if (st->out_len + n > st->out_cap) {
        size_t ncap = st->out_cap ? st->out_cap : 16 * 1024;
        while (ncap < st->out_len + n)
            ncap *= 2;
        uint8_t *nb = core_realloc(st->out, ncap);
        if (!nb)
            return core_fail(ADBC_ENOMEM, "out of memory queueing %zu bytes to send", n);
        st->out = nb;
        st->out_cap = ncap;
    }
    memcpy(st->out + st->out_head + st->out_len, p, n);
    st->out_len += n;
    return 0;
}

/* Lock held: take n bytes (n <= conn_room): into the window as far
 * as it is open, the rest into the stream's queue; then send. */
static int put(adbc_conn *c, adbc_stream *st, const uint8_t *p, size_t n)
{
    if (st->out_len == 0) { /* straight into an open window: one copy */
        long k = adbc_session_write(c->s, st->id, p, n);
        if (k < 0)
            return (int)k;
        p += k;
        n -= (size_t)k;
    }
    if (n > 0) {
        int rc = stash(st, p, n);
        if (rc < 0)
            return rc;
        conn_pump(c, st); /* in case the window opened meanwhile */
    }
    conn_kick(c);
    return 0;
}

/* Lock held: wait for room (at least want bytes, or half the bound). */
/* Lock held: why nothing more can be written to st (cancelled, the
 * connection failed, the device closed the stream) as an error code with
 * its message, or 0. */
static int unwritable(adbc_conn *c, adbc_stream *st)
{
    if (c->interrupted)
        return conn_cancelled();
    if (c->status)
        return conn_raise(c);
    if (st->closed)
        return core_fail(ADBC_ECLOSED, "the device closed the stream");
    return 0;
}

static int wait_room(adbc_conn *c, adbc_stream *st, size_t want, int64_t deadline)
{
    /* A long write wakes once per batch rather than once per packet. */
    size_t half = conn_high_water(c) / 2;
    st->room_want = want < half ? want : half;
    int w = conn_wait(c, &c->cond, deadline);
    st->room_want = 0;
    return w;
}

int adbc_stream_write(adbc_stream *st, const void *buf, size_t len, int timeout_ms)
{
    if (!st || (!buf && len))
        return core_null(__func__, !st ? "the stream" : "buf");
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    int64_t deadline = core_deadline(timeout_ms);
    const uint8_t *p = buf;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    /* The bytes go into the window when it is open, and otherwise wait in
     * the stream's own queue, so the thread that receives the OKAY sends
     * them at once. Both together stay under the high-water bound
     * (conn_room), so memory does not grow with a transfer. */
    while (len > 0) {
        if ((rc = unwritable(c, st)) < 0)
            break;
        size_t room = conn_room(c, st);
        if (room > 0) {
            size_t n = len < room ? len : room;
            rc = put(c, st, p, n);
            if (rc < 0)
                break;
            p += n;
            len -= n;
            continue;
        }
        if (wait_room(c, st, len, deadline) == ADBC_ETIMEDOUT) {
            rc = core_fail(ADBC_ETIMEDOUT,
                           "the device took no more data on this stream for %d ms (flow "
                           "control window closed)",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

long conn_stream_write_some(adbc_stream *st, const void *buf, size_t len, int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    if (len == 0)
        return 0;
    int64_t deadline = core_deadline(timeout_ms);
    long rc;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if ((rc = unwritable(c, st)) < 0)
            break;
        size_t room = conn_room(c, st);
        if (room > 0) {
            size_t n = len < room ? len : room;
            rc = put(c, st, buf, n);
            if (rc == 0)
                rc = (long)n;
            break;
        }
        if (wait_room(c, st, len, deadline) == ADBC_ETIMEDOUT) {
            rc = core_fail(ADBC_ETIMEDOUT, "the device took no data on this stream for %d ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

long conn_stream_write_from(adbc_stream *st, size_t max,
                            long (*fill)(void *user, uint8_t *p, size_t cap), void *user,
                            int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    int64_t deadline = core_deadline(timeout_ms);
    long rc;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if ((rc = unwritable(c, st)) < 0)
            break;
        /* Bytes an earlier write left waiting for the window go first. */
        size_t room = st->out_len ? 0 : conn_room(c, st);
        if (room > max)
            room = max;
        size_t cap = 0;
        uint8_t *p = room ? session_write_reserve(c->s, st->id, room, &cap) : NULL;
        if (p) {
            st->filling = 1; /* the reader thread leaves the source alone */
            pthread_mutex_unlock(&c->mu);
            long k = fill(user, p, cap);
            pthread_mutex_lock(&c->mu);
            st->filling = 0;
            ssize_t q = session_write_commit(c->s, st->id, p, k > 0 ? (size_t)k : 0);
            rc = q < 0 ? (long)q : k;
            if (q > 0)
                conn_kick(c);
            break;
        }
        if (room && cap == 0 && adbc_session_writable(c->s, st->id) > 0) {
            rc = ADBC_ENOMEM; /* session_write_reserve said why */
            break;
        }
        /* Wait for the queue to drain (conn_sent) or the window to open
         * (conn_after_input). */
        st->window_want = room > 0;
        int w = room ? conn_wait(c, &c->cond, deadline)
                     : wait_room(c, st, conn_high_water(c), deadline);
        st->window_want = 0;
        if (w == ADBC_ETIMEDOUT) {
            rc = core_fail(ADBC_ETIMEDOUT, "the device took no data on this stream for %d ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Lock held: wait until the stream's bytes and everything queued before
 * them are handed to the transport. */
static int drain(adbc_conn *c, adbc_stream *st, int64_t deadline)
{
    int rc = 0;
    st->draining = 1;
    while ((st->out_len > 0 || adbc_session_send_queued(c->s) > 0) && !c->status && !st->closed) {
        if (c->interrupted) {
            rc = ADBC_ECANCELED;
            break;
        }
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = ADBC_ETIMEDOUT;
            break;
        }
    }
    st->draining = 0;
    return rc;
}

int adbc_stream_flush(adbc_stream *st, int timeout_ms)
{
    if (!st)
        return core_null(__func__, "the stream");
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    int64_t deadline = core_deadline(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    int d = drain(c, st, deadline);
    if (d == ADBC_ECANCELED)
        rc = conn_cancelled();
    else if (d == ADBC_ETIMEDOUT)
        rc = core_fail(ADBC_ETIMEDOUT, "could not send queued data within %d ms", timeout_ms);
    if (rc == 0 && c->status)
        rc = conn_raise(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void adbc_stream_close(adbc_stream *st)
{
    if (!st)
        return;
    adbc_conn *c = st->c;
    if (c) {
        pthread_mutex_lock(&c->mu);
        /* Bytes written but still waiting for the window go before the
         * CLSE, as they did when every write waited for the window. */
        if (st->out_len > 0 && !st->closed && !c->status)
            drain(c, st, core_deadline(c->opts.io_timeout_ms));
        if (!st->closed)
            adbc_session_close_stream(c->s, st->id);
        conn_kick(c);
        for (size_t i = 0; i < c->nstreams; i++)
            if (c->streams[i] == st) {
                c->streams[i] = c->streams[--c->nstreams];
                break;
            }
        pthread_mutex_unlock(&c->mu);
    }
    core_free(st->service);
    core_free(st->buf);
    core_free(st->lent_old);
    core_free(st->out);
    core_free(st);
}

adbc_conn *adbc_stream_conn(adbc_stream *st)
{
    if (!st)
        return NULL;
    return st->c;
}
