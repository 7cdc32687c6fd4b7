/* SPDX-License-Identifier: Apache-2.0 */
/* One relayed connection: a local socket and an ADB stream, one thread,
 * and a second one only when it is needed.
 *
 * The relay's own thread opens the device stream (forward) and moves "up"
 * (socket -> stream). Stream -> socket ("down") goes from the connection's
 * reader thread straight into the socket as the data arrives (the stream's
 * sink, a send that does not block), and the device's clean end shuts the
 * socket's sending side there too. Only when that is not enough (the
 * socket is full, data came before the sink was set, the stream or the
 * connection failed, an interrupt) is the "down" thread started
 * (conn_stream_set_wake), which then reads the stream as before. A short
 * command's answer, which the socket takes whole, needs no thread of its
 * own: one less to start and schedule per shell command.
 *
 * Each direction blocks only on its own receiver: the up thread waits for
 * the stream's window, the down thread for the socket's buffer, while the
 * device's unread data is bounded by the stream window. Up reads the socket
 * straight into the packets that carry the bytes to the device
 * (conn_stream_write_from), at most opts.buffer_size at once, and only as
 * far as flow control takes them: the rest waits in the socket, as in adb's
 * server. Down sends straight from the stream's buffer
 * (conn_stream_read_to). Neither needs a buffer of its own.
 *
 * Endings:
 *  - the local peer's end of file: what came before it is on the stream;
 *    then, as adb does, the stream is closed, or with opts.half_close the
 *    device's answer is still delivered until the device closes;
 *  - the device closes the stream: deliver what came before, shut down
 *    our sending side of the socket, read and drop what the local peer
 *    still sends until it closes (closing with unread input would reset
 *    the connection and could destroy the delivered tail), bounded;
 *  - an error on either side: both directions stop, the stream is closed
 *    (CLSE) and the socket too.
 * Both threads wake at least every WAKE_MS to see a stop request. */
#include "services/forward_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WAKE_MS 200
#define DRAIN_MS 2000 /* after the device closed: wait this long for the peer's close */

void relays_init(fwd_relays *r, const adbc_forward_opts *opts)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    if (opts)
        r->opts = *opts;
    else
        adbc_forward_opts_init(&r->opts);
    if (r->opts.open_timeout_ms == 0)
        r->opts.open_timeout_ms = 10000;
    if (r->opts.buffer_size < 4096)
        r->opts.buffer_size = r->opts.buffer_size ? 4096 : 256 * 1024;
    if (r->opts.max_connections == 0)
        r->opts.max_connections = 256;
    r->next_id = 1;
}

void adbc_forward_opts_init_sized(adbc_forward_opts *out, size_t size)
{
    adbc_forward_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->open_timeout_ms = 10000;
    o->buffer_size = 256 * 1024;
    o->max_connections = 256;
    core_abi_give(out, size, &d, sizeof d);
}

static void emit(relay *rl, adbc_forward_event_kind kind)
{
    const adbc_forward_opts *o = &rl->owner->opts;
    if (!o->on_event)
        return;
    adbc_forward_event ev = {
        .kind = kind,
        .id = rl->id,
        .peer = rl->peer,
        .destination = rl->dest,
        /* up is socket -> stream, down stream -> socket, and the stream
         * goes to the device in both directions of forwarding. */
        .bytes_to_device = rl->up,
        .bytes_from_device = rl->down,
        .error = rl->err,
        .message = rl->msg,
    };
    o->on_event(o->user, &ev);
}

/* First error wins; it stops both directions. */
static void relay_fail(relay *rl, int code, const char *msg)
{
    pthread_mutex_lock(&rl->err_mu);
    if (!rl->err) {
        rl->err = code;
        snprintf(rl->msg, sizeof rl->msg, "%s", msg);
    }
    pthread_mutex_unlock(&rl->err_mu);
    rl->stop = 1;
}

/* The down direction's sink: send without blocking (0 when the socket is
 * full). Called by the down thread with what the stream lends it, and by
 * the connection's reader thread with data as it arrives while nothing is
 * buffered, and at the stream's clean end (conn_stream_set_sink): never
 * both at once, as the reader only calls it when the stream holds nothing
 * and the down thread only while it has bytes lent. */
static long send_lent(void *user, const uint8_t *p, size_t n)
{
    relay *rl = user;
    if (n == 0) {
        /* The reader thread's word that the device ended the stream and
         * every byte before it is in the socket: the peer sees the end now,
         * not after the down thread wakes (which then does the same). */
        rl->device_eof = 1;
        shutdown(rl->fd, SHUT_WR);
        return 0;
    }
    for (;;) {
        ssize_t w = send(rl->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) {
            rl->down += (uint64_t)w;
            return (long)w;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        rl->send_errno = errno;
        return ADBC_ECLOSED;
    }
}

/* Stream -> socket: straight from the stream's buffer (no copy, no buffer
 * of our own); the stream's window bounds what waits there. */
static void *down_main(void *arg)
{
    relay *rl = arg;
    while (!rl->stop) {
        int ended;
        ssize_t n = conn_stream_read_to(rl->st, send_lent, rl, &ended, WAKE_MS);
        if (n == ADBC_ETIMEDOUT)
            continue;
        if (n < 0) {
            if (rl->send_errno) {
                char m[160];
                snprintf(m, sizeof m, "the local peer went away: %s", strerror(rl->send_errno));
                relay_fail(rl, ADBC_ECLOSED, m);
            } else {
                relay_fail(rl, (int)n, adbc_last_error());
            }
            break;
        }
        if (ended) {
            rl->device_eof = 1;
            shutdown(rl->fd, SHUT_WR);
            break;
        }
        if (n == 0) { /* the socket is full: wait for the peer to read */
            struct pollfd pf = {.fd = rl->fd, .events = POLLOUT};
            poll(&pf, 1, WAKE_MS);
        }
    }
    return NULL;
}

/* The up direction's source: read the local socket without blocking
 * straight into the packet that carries the bytes to the device. Called by
 * the relay's thread (conn_stream_write_from) and by the connection's
 * reader thread as the window opens (conn_stream_set_source), never both
 * at once. 0: nothing to read now, or the peer's end of file (peer_eof);
 * -1: the socket failed (recv_errno). */
static long recv_fill(void *user, uint8_t *p, size_t cap)
{
    relay *rl = user;
    for (;;) {
        ssize_t n = recv(rl->fd, p, cap, MSG_DONTWAIT);
        if (n > 0) {
            rl->up += (uint64_t)n;
            return (long)n;
        }
        if (n == 0) {
            rl->peer_eof = 1;
            return 0;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        rl->recv_errno = errno;
        return -1;
    }
}

/* Socket -> stream, in the relay's own thread: read when the stream takes
 * data (no buffer of our own); wait on the socket only when nothing is
 * there. */
static void up_loop(relay *rl)
{
    int64_t drain_end = -1;
    for (;;) {
        if (rl->stop)
            return;
        if (rl->recv_errno) {
            char m[160];
            snprintf(m, sizeof m, "the local peer reset the connection: %s",
                     strerror(rl->recv_errno));
            relay_fail(rl, ADBC_ECLOSED, m);
            return;
        }
        if (rl->peer_eof) {
            /* With half_close the device side may still answer; without,
             * adb's behaviour: the local end closing ends the stream. */
            if (!rl->owner->opts.half_close)
                rl->stop = 1;
            return;
        }
        if (rl->device_eof) {
            /* Nowhere to send it: read and drop until the peer closes. */
            if (drain_end < 0)
                drain_end = core_deadline(DRAIN_MS);
            if (core_remaining(drain_end) == 0)
                return;
            uint8_t junk[4096];
            ssize_t n = recv(rl->fd, junk, sizeof junk, MSG_DONTWAIT);
            if (n == 0)
                rl->peer_eof = 1;
            else if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
                rl->recv_errno = errno;
            else if (n < 0 && errno != EINTR) {
                struct pollfd pf = {.fd = rl->fd, .events = POLLIN};
                poll(&pf, 1, WAKE_MS);
            }
            continue;
        }
        long k = conn_stream_write_from(rl->st, rl->owner->opts.buffer_size, recv_fill, rl,
                                        WAKE_MS);
        if (k > 0 || k == ADBC_ETIMEDOUT || (k == -1 && rl->recv_errno))
            continue;
        if (k == 0) {
            if (!rl->peer_eof) { /* nothing there: wait for the peer */
                struct pollfd pf = {.fd = rl->fd, .events = POLLIN};
                poll(&pf, 1, WAKE_MS);
            }
            continue;
        }
        if (k == ADBC_ECLOSED)
            rl->device_eof = 1; /* the device closed; down delivers the rest */
        else
            relay_fail(rl, (int)k, adbc_last_error());
    }
}

/* Start the down thread unless it runs already (or ran): from the stream's
 * wake (the reader thread, or whichever thread failed or interrupted the
 * connection, with its lock held) or from relay_main. */
static void start_down(relay *rl)
{
    pthread_mutex_lock(&rl->down_mu);
    if (!rl->down_started) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (pthread_create(&rl->down_th, &attr, down_main, rl) == 0)
            rl->down_started = 1;
        else
            relay_fail(rl, ADBC_ENOMEM, "cannot start a relay thread");
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&rl->down_mu);
}

static void wake_down(void *user)
{
    start_down(user);
}

static void *relay_main(void *arg)
{
    relay *rl = arg;
    fwd_relays *r = rl->owner;
    if (!rl->st) {
        int rc = adbc_stream_open(&rl->st, rl->c, rl->dest, r->opts.open_timeout_ms);
        if (rc < 0) {
            relay_fail(rl, rc, adbc_last_error());
            emit(rl, ADBC_FWD_REFUSED);
            close(rl->fd);
            rl->fd = -1;
            rl->finished = 1;
            return NULL;
        }
    }
    emit(rl, ADBC_FWD_OPENED);
    conn_stream_set_sink(rl->st, send_lent, rl);
    conn_stream_set_source(rl->st, r->opts.buffer_size, recv_fill, rl);
    conn_stream_set_wake(rl->st, wake_down, rl); /* at once if data came before the sink */
    up_loop(rl);
    /* Half-closed by the local peer: the device side still answers, and
     * the down thread waits for its end. */
    if (!rl->stop && !rl->device_eof)
        start_down(rl);
    conn_stream_set_wake(rl->st, NULL, NULL); /* no thread is started after this */
    pthread_mutex_lock(&rl->down_mu);
    int joined = rl->down_started;
    pthread_mutex_unlock(&rl->down_mu);
    if (joined)
        pthread_join(rl->down_th, NULL);
    conn_stream_set_sink(rl->st, NULL, NULL); /* before the socket closes */
    conn_stream_set_source(rl->st, 0, NULL, NULL);
    adbc_stream_close(rl->st);
    rl->st = NULL;
    close(rl->fd);
    rl->fd = -1;
    emit(rl, ADBC_FWD_CLOSED);
    rl->finished = 1;
    return NULL;
}

static void relay_free(relay *rl)
{
    if (rl->fd >= 0)
        close(rl->fd);
    if (rl->st)
        adbc_stream_close(rl->st);
    core_free(rl->dest);
    pthread_mutex_destroy(&rl->err_mu);
    pthread_mutex_destroy(&rl->down_mu);
    core_free(rl);
}

int relay_start(fwd_relays *r, adbc_conn *c, int fd, adbc_stream *st, char *dest,
                     const char *peer)
{
    relay *rl = core_calloc(1, sizeof *rl);
    if (!rl) {
        close(fd);
        if (st)
            adbc_stream_close(st);
        core_free(dest);
        return core_fail(ADBC_ENOMEM, "out of memory for a relayed connection");
    }
    pthread_mutex_init(&rl->err_mu, NULL);
    pthread_mutex_init(&rl->down_mu, NULL);
    rl->owner = r;
    rl->c = c;
    rl->fd = fd;
    rl->st = st;
    rl->dest = dest;
    snprintf(rl->peer, sizeof rl->peer, "%s", peer);
    pthread_mutex_lock(&r->mu);
    rl->id = r->next_id++;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int rc = pthread_create(&rl->th, &attr, relay_main, rl);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_mutex_unlock(&r->mu);
        relay_free(rl);
        return core_fail(ADBC_ENOMEM, "cannot start a relay thread");
    }
    rl->next = r->list;
    r->list = rl;
    r->active++;
    pthread_mutex_unlock(&r->mu);
    return 0;
}

static void reap(fwd_relays *r, int all)
{
    for (;;) {
        relay *done = NULL;
        pthread_mutex_lock(&r->mu);
        for (relay **pp = &r->list; *pp; pp = &(*pp)->next) {
            if (all)
                (*pp)->stop = 1;
            if (all || (*pp)->finished) {
                done = *pp;
                *pp = done->next;
                r->active--;
                break;
            }
        }
        pthread_mutex_unlock(&r->mu);
        if (!done)
            return;
        pthread_join(done->th, NULL);
        relay_free(done);
    }
}

void relays_reap(fwd_relays *r)
{
    reap(r, 0);
}

void relays_stop_all(fwd_relays *r)
{
    pthread_mutex_lock(&r->mu);
    for (relay *rl = r->list; rl; rl = rl->next)
        rl->stop = 1;
    pthread_mutex_unlock(&r->mu);
    reap(r, 1);
    pthread_mutex_destroy(&r->mu);
}

size_t relays_active(fwd_relays *r)
{
    pthread_mutex_lock(&r->mu);
    size_t n = r->active;
    pthread_mutex_unlock(&r->mu);
    return n;
}

int adbc_forward_splice(adbc_stream *st, int fd, const adbc_forward_opts *opts)
{
    if (!st || fd < 0) {
        if (fd >= 0)
            close(fd);
        if (st)
            adbc_stream_close(st);
        return core_fail(ADBC_EINVAL, "adbc_forward_splice: need an open stream and a "
                                      "connected socket");
    }
    adbc_forward_opts own;
    adbc_forward_opts_init(&own);
    if (core_abi_take(&own, sizeof own, opts, "adbc_forward_opts") < 0) {
        close(fd);
        adbc_stream_close(st);
        return ADBC_EINVAL;
    }
    /* One relay, run in this thread as relay_main runs in its own. */
    fwd_relays r;
    relays_init(&r, &own);
    relay rl;
    memset(&rl, 0, sizeof rl);
    pthread_mutex_init(&rl.err_mu, NULL);
    pthread_mutex_init(&rl.down_mu, NULL);
    rl.owner = &r;
    rl.c = adbc_stream_conn(st);
    rl.fd = fd;
    rl.st = st;
    rl.dest = core_strdup(adbc_stream_destination(st)); /* the stream's own ends with it */
    snprintf(rl.peer, sizeof rl.peer, "splice");
    relay_main(&rl);
    int rc = rl.err;
    char msg[sizeof rl.msg];
    snprintf(msg, sizeof msg, "%s", rl.msg);
    core_free(rl.dest);
    pthread_mutex_destroy(&rl.err_mu);
    pthread_mutex_destroy(&rl.down_mu);
    pthread_mutex_destroy(&r.mu);
    return rc < 0 ? core_fail(rc, "%s", msg) : 0;
}
