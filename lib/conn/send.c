/* SPDX-License-Identifier: Apache-2.0 */
/* Who writes to the transport. Whichever thread queues a packet sends it
 * at once, without blocking, while it still holds the work in its hands:
 * the caller its OPEN or first WRTE, the reader the WRTE an OKAY allowed
 * or the OKAY for data it buffered. One thread at a time writes (the one
 * that set c->sending; others leave their packets to it). Only when the
 * transport takes no more without waiting (the socket buffer is full) or
 * cannot write without blocking at all (USB, TLS) does the writer thread
 * take over, blocking with the I/O timeout. */
#include "conn/conn_int.h"
#include "transport/fd_int.h"

#include <stdio.h>

#define IOV_MAX_SEND 64

int conn_wait(adbc_conn *c, pthread_cond_t *cv, int64_t deadline)
{
    if (deadline >= 0 && core_remaining(deadline) == 0)
        return ADBC_ETIMEDOUT;
    core_cond_wait(cv, &c->mu, deadline); /* a wait that times out: the caller looks again */
    return 0;
}

void conn_sent(adbc_conn *c)
{
    int empty = adbc_session_send_queued(c->s) == 0;
    int wake = c->send_waiters > 0 && empty;
    for (size_t i = 0; i < c->nstreams && !wake; i++) {
        adbc_stream *st = c->streams[i];
        if (st->room_want > 0 && conn_room(c, st) >= st->room_want)
            wake = 1;
        if (st->draining && empty && st->out_len == 0)
            wake = 1;
    }
    if (wake)
        conn_notify(c);
}

void conn_notify(adbc_conn *c)
{
    if (c->in_batch)
        c->wake_owed = 1;
    else
        pthread_cond_broadcast(&c->cond);
}

void conn_kick(adbc_conn *c)
{
    if (c->sending || adbc_session_send_queued(c->s) == 0 || c->status || c->stopping)
        return;
    if (!c->try_write) {
        pthread_cond_signal(&c->send_cond);
        return;
    }
    c->sending = 1;
    adbc_transport *t = c->t;
    int progress = 0;
    for (;;) {
        struct iovec iov[IOV_MAX_SEND];
        int n = adbc_session_peek_send(c->s, iov, IOV_MAX_SEND);
        if (n == 0)
            break;
        /* The segments stay put while the lock is released: only the
         * sending thread takes packets off the queue. */
        pthread_mutex_unlock(&c->mu);
        long w = transport_try_writev(t, iov, n);
        char msg[512];
        if (w < 0)
            snprintf(msg, sizeof msg, "%s", adbc_last_error());
        pthread_mutex_lock(&c->mu);
        if (w < 0) {
            if (!c->stopping)
                conn_set_error(c, (int)w, msg);
            break;
        }
        if (w == 0)
            break; /* the socket is full: the writer waits for it */
        adbc_session_sent(c->s, (size_t)w);
        progress = 1;
        if (c->status || c->stopping)
            break;
    }
    c->sending = 0;
    if (adbc_session_send_queued(c->s) > 0 && !c->status)
        pthread_cond_signal(&c->send_cond);
    if (progress)
        conn_sent(c);
    else if (c->send_waiters > 0) /* tls_upgrade waits for the write side */
        pthread_cond_broadcast(&c->cond);
}
