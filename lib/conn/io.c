/* SPDX-License-Identifier: Apache-2.0 */
/* The connection's two threads. The reader feeds everything the transport
 * delivers into the engine and then does what that input calls for
 * (conn_after_input: next WRTEs, OKAYs, sent from this thread). It
 * never waits for a consumer, so a stream nobody reads cannot stall the
 * others. The writer only sends what could not go out without blocking
 * (see send.c). */
#include "conn/conn_int.h"
#include "adbc/tls.h"
#include "transport/fd_int.h"

#include <stdio.h>

/* Large enough to take many packets per read: a legacy device's 4 KiB
 * packets arrive several at a time when the host was busy. And half a
 * modern 1 MiB packet: a plain pull is written to its file straight from
 * this buffer, one write and one OKAY per read, and 128 MiB loopback pulls
 * took 0.1225 s (median of 12 interleaved rounds) with 256 KiB reads,
 * 0.115 s with 512 KiB or 1 MiB, 0.110 s for the floor. */
#define READ_CHUNK (512 * 1024)

/* The device answered CNXN with STLS (wireless debugging). Called by the
 * reader with the lock held: once our STLS is sent, run TLS over the same
 * transport (bytes already read past the STLS packet belong to it), swap in
 * the TLS transport, and let the handshake continue inside it. */
static void tls_upgrade(adbc_conn *c, const uint8_t *preread, size_t len)
{
    c->stls = 1;
    conn_kick(c);
    int64_t deadline = core_deadline(c->opts.connect_timeout_ms);
    /* Our STLS must be on the wire, and nobody else writing, while the
     * transport changes hands. */
    c->send_waiters++;
    while ((adbc_session_send_queued(c->s) > 0 || c->sending) && !c->status && !c->stopping)
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            conn_set_error(c, ADBC_ETIMEDOUT, "could not send STLS to the device");
            break;
        }
    c->send_waiters--;
    if (c->status || c->stopping)
        return;
    adbc_transport *t = c->t;
    pthread_mutex_unlock(&c->mu);
    int rc = adbc_tls_client_upgrade_ex(&t, c->keys, preread, len, c->opts.connect_timeout_ms);
    char msg[512];
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s", adbc_last_error());
    pthread_mutex_lock(&c->mu);
    if (rc < 0) {
        conn_set_error(c, rc, msg);
        return;
    }
    c->t = t;
    c->try_write = transport_can_try_write(t);
    rc = adbc_session_tls_done(c->s);
    if (rc < 0)
        conn_set_error(c, rc, adbc_last_error());
}

void *conn_reader_main(void *arg)
{
    adbc_conn *c = arg;
    uint8_t *buf = core_malloc(READ_CHUNK);
    if (!buf) {
        pthread_mutex_lock(&c->mu);
        conn_set_error(c, ADBC_ENOMEM, "out of memory starting the connection reader");
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    adbc_transport *t = c->t;
    pthread_mutex_unlock(&c->mu);
    int alarm = 0; /* the transport's read alarm is set (transport_fd_alarm) */
    for (;;) {
        int n = t->ops->read(t, buf, READ_CHUNK, -1);
        pthread_mutex_lock(&c->mu);
        if (c->stopping) {
            pthread_mutex_unlock(&c->mu);
            break;
        }
        if (n == ADBC_ETIMEDOUT && alarm) {
            /* Nothing completed the batch in time: wake its reader. */
            alarm = 0;
            conn_wake_deferred(c);
            pthread_mutex_unlock(&c->mu);
            continue;
        }
        if (n < 0) {
            /* The transport's own message says what happened. */
            char msg[512];
            const char *m = adbc_last_error();
            if (*m)
                snprintf(msg, sizeof msg, "%s", m);
            else
                snprintf(msg, sizeof msg, "%s: the connection ended (%s)", t->desc,
                         adbc_strerror(n));
            conn_set_error(c, n, msg);
            pthread_mutex_unlock(&c->mu);
            break;
        }
        /* adbc_conn_open is still loading the key the device's AUTH
         * needs: hold the input until it is there (or the open failed). */
        while (c->keys_loading && !c->stopping)
            pthread_cond_wait(&c->cond, &c->mu);
        if (c->stopping) {
            pthread_mutex_unlock(&c->mu);
            break;
        }
        /* The engine's events and what they call for form one batch: the
         * callers they wake are woken once, after the unlock below. */
        c->in_batch = 1;
        int rc = adbc_session_recv(c->s, buf, (size_t)n);
        if (rc < 0) {
            conn_set_error(c, rc, adbc_session_error(c->s));
        } else if (adbc_session_state_get(c->s) == ADBC_SESSION_TLS) {
            /* tls_upgrade waits for the writer: no wake-up may wait for it. */
            c->in_batch = 0;
            if (c->wake_owed) {
                c->wake_owed = 0;
                pthread_cond_broadcast(&c->cond);
            }
            tls_upgrade(c, buf + rc, (size_t)(n - rc));
            c->in_batch = 1;
        }
        if (!c->status)
            conn_after_input(c);
        c->in_batch = 0;
        int wake = c->wake_owed;
        c->wake_owed = 0;
        int deferred = conn_deferred(c);
        int stop = c->status != 0;
        if (c->t != t) {
            t = c->t; /* TLS now: no deferred wake-ups (they need a try_write transport) */
            alarm = 0;
        }
        /* A deferred wake-up must come within ADBC_CONN_WAKE_MS: the alarm
         * is set once for the batch and cleared when the batch's last
         * packet woke the reader, so no read of the batch pays for a timer
         * of its own. */
        if (deferred && !alarm && !stop) {
            if (transport_fd_alarm(t, ADBC_CONN_WAKE_MS) == 0)
                alarm = 1;
            else
                conn_wake_deferred(c); /* no timer: do not defer */
        }
        pthread_mutex_unlock(&c->mu);
        if (wake) /* after the unlock: see in_batch */
            pthread_cond_broadcast(&c->cond);
        if (stop)
            break;
        if (!deferred && alarm) {
            transport_fd_alarm(t, 0);
            alarm = 0;
        }
    }
    core_free(buf);
    pthread_mutex_lock(&c->mu);
    t = c->t;
    pthread_mutex_unlock(&c->mu);
    t->ops->shutdown(t);
    return NULL;
}

void *conn_writer_main(void *arg)
{
    adbc_conn *c = arg;
    struct iovec iov[32];
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->stopping && c->status == 0 &&
               (c->sending || adbc_session_send_queued(c->s) == 0))
            pthread_cond_wait(&c->send_cond, &c->mu);
        if (c->stopping || c->status != 0)
            break;
        c->sending = 1;
        int n;
        size_t total = 0;
        adbc_transport *t = c->t;
        if (t->ops->writev && !t->packet_mode) {
            n = adbc_session_peek_send(c->s, iov, 32);
        } else {
            /* One segment per transfer (USB), or no writev. */
            const uint8_t *seg;
            iov[0].iov_len = adbc_session_next_send(&seg, c->s);
            iov[0].iov_base = (void *)seg;
            n = 1;
        }
        for (int i = 0; i < n; i++)
            total += iov[i].iov_len;
        /* The queued segments stay put while other threads append packets:
         * only the sending thread removes them. */
        pthread_mutex_unlock(&c->mu);
        int rc = n > 1 ? t->ops->writev(t, iov, n, c->opts.io_timeout_ms)
                       : t->ops->write(t, iov[0].iov_base, iov[0].iov_len, c->opts.io_timeout_ms);
        char msg[512];
        if (rc < 0)
            snprintf(msg, sizeof msg, "%s", adbc_last_error());
        pthread_mutex_lock(&c->mu);
        c->sending = 0;
        if (rc < 0) {
            if (!c->stopping)
                conn_set_error(c, rc, msg);
            break;
        }
        adbc_session_sent(c->s, total);
        conn_sent(c);
        /* tls_upgrade may wait for the write side to be free */
        pthread_cond_broadcast(&c->cond);
    }
    adbc_transport *t = c->t;
    pthread_mutex_unlock(&c->mu);
    t->ops->shutdown(t);
    return NULL;
}
