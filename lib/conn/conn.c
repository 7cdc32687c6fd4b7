/* A connection: transport + session engine + a reader and a writer thread.
 *
 * The reader feeds everything the transport delivers into the engine, which
 * calls back into this file to queue stream data; it never waits for a
 * consumer, so a stream nobody reads cannot stall the others (its buffer is
 * bounded by the flow-control window). The writer sends whatever the engine
 * has queued. API calls take the lock, act on the engine, and wait on a
 * condition variable with their deadline. */
#include "conn/conn_int.h"
#include "adbc/tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define READ_CHUNK (256 * 1024)
/* adbc_stream_read_swap trades buffers from this much buffered data on;
 * below it a copy costs less than the caller's buffer growing again. */
#define STREAM_SWAP_MIN (64 * 1024)

void adbc_conn_opts_init_sized(adbc_conn_opts *out, size_t size)
{
    adbc_conn_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->connect_timeout_ms = 10000;
    o->auth_timeout_ms = 60000;
    o->io_timeout_ms = 30000;
    adbc_abi_give(out, size, &d, sizeof d);
}

void adbc_conn_set_error(adbc_conn *c, int code, const char *msg)
{
    if (c->status == 0) {
        c->status = code;
        snprintf(c->errmsg, sizeof c->errmsg, "%s", msg);
    }
    pthread_cond_broadcast(&c->cond);
    pthread_cond_broadcast(&c->send_cond);
}

int adbc_conn_raise(adbc_conn *c)
{
    return adbc_fail(c->status ? c->status : ADBC_EIO, "%s", c->errmsg);
}

void adbc_conn_kick(adbc_conn *c)
{
    if (adbc_session_send_queued(c->s) > 0)
        pthread_cond_signal(&c->send_cond);
}

static adbc_stream *find_stream(adbc_conn *c, uint32_t id)
{
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i]->id == id)
            return c->streams[i];
    return NULL;
}

/* Wait on the connection's condition until deadline; ETIMEDOUT when it passed. */
static int wait_until(adbc_conn *c, pthread_cond_t *cv, int64_t deadline)
{
    if (deadline < 0) {
        pthread_cond_wait(cv, &c->mu);
        return 0;
    }
    int left = adbc_remaining(deadline);
    if (left == 0)
        return ADBC_ETIMEDOUT;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (long)(left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, &c->mu, &ts);
    return 0;
}

/* ---- engine callbacks (lock held: they run inside adbc_session_recv) ---- */

static int cb_sign(void *user, unsigned index, const uint8_t *token, size_t token_len,
                   uint8_t *sig, size_t *sig_len)
{
    adbc_conn *c = user;
    if (!c->keys || index >= adbc_keyring_count(c->keys))
        return ADBC_ENOTFOUND;
    return adbc_key_sign_token(adbc_keyring_get(c->keys, index), token, token_len, sig, sig_len);
}

static const char *cb_pubkey(void *user)
{
    adbc_conn *c = user;
    if (!c->pubkey && c->keys && adbc_keyring_count(c->keys) > 0)
        adbc_key_public_line(adbc_keyring_get(c->keys, 0), NULL, &c->pubkey);
    return c->pubkey;
}

static void cb_prompt(void *user)
{
    adbc_conn *c = user;
    pthread_cond_broadcast(&c->cond);
}

static void cb_online(void *user)
{
    adbc_conn *c = user;
    pthread_cond_broadcast(&c->cond);
}

/* Lock held: room for one more stream handle in the table. */
static int grow_streams(adbc_conn *c)
{
    if (c->nstreams < c->cap)
        return 0;
    size_t ncap = c->cap ? c->cap * 2 : 8;
    adbc_stream **n = adbc_realloc(c->streams, ncap * sizeof *n);
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
    adbc_stream *st = adbc_calloc(1, sizeof *st);
    if (!st || grow_streams(c) < 0 || !(st->service = adbc_strdup(service))) {
        adbc_free(st);
        return 1; /* out of memory: the device sees a refusal */
    }
    st->c = c;
    st->id = id;
    st->ready = 1;
    c->streams[c->nstreams++] = st;
    c->pending[c->npending++] = st;
    pthread_cond_broadcast(&c->cond);
    return 0;
}

static void cb_ready(void *user, uint32_t id)
{
    adbc_conn *c = user;
    adbc_stream *st = find_stream(c, id);
    if (st)
        st->ready = 1;
    pthread_cond_broadcast(&c->cond);
}

static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    adbc_conn *c = user;
    adbc_stream *st = find_stream(c, id);
    if (!st)
        return;
    if (st->head + st->len + len > st->cap) {
        if (st->head > 0) { /* compact first */
            memmove(st->buf, st->buf + st->head, st->len);
            st->head = 0;
        }
        if (st->len + len > st->cap) {
            size_t ncap = st->cap ? st->cap : 64 * 1024;
            while (ncap < st->len + len)
                ncap *= 2;
            uint8_t *nb = adbc_realloc(st->buf, ncap);
            if (!nb) {
                adbc_conn_set_error(c, ADBC_ENOMEM, "out of memory buffering stream data");
                return;
            }
            st->buf = nb;
            st->cap = ncap;
        }
    }
    memcpy(st->buf + st->head + st->len, data, len);
    st->len += len;
    pthread_cond_broadcast(&c->cond);
}

static void cb_writable(void *user, uint32_t id)
{
    (void)id;
    adbc_conn *c = user;
    pthread_cond_broadcast(&c->cond);
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    adbc_conn *c = user;
    adbc_stream *st = find_stream(c, id);
    if (st) {
        st->closed = 1;
        st->close_reason = reason;
        /* A CLSE processed after the connection failed (say, stream data was
         * dropped for lack of memory) must not read as a clean end. */
        st->torn = c->status != 0;
    }
    pthread_cond_broadcast(&c->cond);
}

/* ---- I/O threads ---- */

/* The device answered CNXN with STLS (wireless debugging). Called by the
 * reader with the lock held: once the writer has sent our STLS, run TLS over
 * the same transport (bytes already read past the STLS packet belong to it),
 * swap in the TLS transport, and let the handshake continue inside it. */
static void tls_upgrade(adbc_conn *c, const uint8_t *preread, size_t len)
{
    c->stls = 1;
    adbc_conn_kick(c);
    int64_t deadline = adbc_deadline(c->opts.connect_timeout_ms);
    while (adbc_session_send_queued(c->s) > 0 && !c->status && !c->stopping)
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            adbc_conn_set_error(c, ADBC_ETIMEDOUT, "could not send STLS to the device");
            return;
        }
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
        adbc_conn_set_error(c, rc, msg);
        return;
    }
    c->t = t;
    rc = adbc_session_tls_done(c->s);
    if (rc < 0)
        adbc_conn_set_error(c, rc, adbc_last_error());
}

static void *reader_main(void *arg)
{
    adbc_conn *c = arg;
    uint8_t *buf = adbc_malloc(READ_CHUNK);
    if (!buf) {
        pthread_mutex_lock(&c->mu);
        adbc_conn_set_error(c, ADBC_ENOMEM, "out of memory starting the connection reader");
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    for (;;) {
        int n = c->t->ops->read(c->t, buf, READ_CHUNK, -1);
        pthread_mutex_lock(&c->mu);
        if (c->stopping) {
            pthread_mutex_unlock(&c->mu);
            break;
        }
        if (n < 0) {
            /* The transport's own message says what happened. */
            char msg[512];
            const char *m = adbc_last_error();
            if (*m)
                snprintf(msg, sizeof msg, "%s", m);
            else
                snprintf(msg, sizeof msg, "%s: the connection ended (%s)", c->t->desc,
                         adbc_strerror(n));
            adbc_conn_set_error(c, n, msg);
            pthread_mutex_unlock(&c->mu);
            break;
        }
        int rc = adbc_session_recv(c->s, buf, (size_t)n);
        if (rc < 0)
            adbc_conn_set_error(c, rc, adbc_session_error(c->s));
        else if (adbc_session_state_get(c->s) == ADBC_SESSION_TLS)
            tls_upgrade(c, buf + rc, (size_t)(n - rc));
        adbc_conn_kick(c);
        int stop = c->status != 0;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            break;
    }
    adbc_free(buf);
    c->t->ops->shutdown(c->t);
    return NULL;
}

static void *writer_main(void *arg)
{
    adbc_conn *c = arg;
    struct iovec iov[32];
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->stopping && c->status == 0 && adbc_session_send_queued(c->s) == 0)
            pthread_cond_wait(&c->send_cond, &c->mu);
        if (c->stopping || c->status != 0)
            break;
        int n;
        size_t total = 0;
        if (c->t->ops->writev && !c->t->packet_mode) {
            n = adbc_session_peek_send(c->s, iov, 32);
        } else {
            const uint8_t *seg;
            iov[0].iov_len = adbc_session_next_send(c->s, &seg);
            iov[0].iov_base = (void *)seg;
            n = 1;
        }
        for (int i = 0; i < n; i++)
            total += iov[i].iov_len;
        /* The queued segments stay put while other threads append packets:
         * only this thread removes them. The transport only changes (TLS
         * upgrade) while nothing is queued. */
        adbc_transport *t = c->t;
        pthread_mutex_unlock(&c->mu);
        int rc = n > 1 ? t->ops->writev(t, iov, n, c->opts.io_timeout_ms)
                       : t->ops->write(t, iov[0].iov_base, iov[0].iov_len, c->opts.io_timeout_ms);
        char msg[512];
        if (rc < 0)
            snprintf(msg, sizeof msg, "%s", adbc_last_error());
        pthread_mutex_lock(&c->mu);
        if (rc < 0) {
            if (!c->stopping)
                adbc_conn_set_error(c, rc, msg);
            break;
        }
        adbc_session_sent(c->s, total);
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->mu);
    c->t->ops->shutdown(c->t);
    return NULL;
}

/* ---- connection lifetime ---- */

static int handshake(adbc_conn *c)
{
    int64_t deadline = adbc_deadline(c->opts.connect_timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    rc = adbc_session_start(c->s);
    if (rc == 0)
        adbc_conn_kick(c);
    while (rc == 0) {
        if (c->status) {
            rc = adbc_conn_raise(c);
            break;
        }
        adbc_session_state st = adbc_session_state_get(c->s);
        if (st == ADBC_SESSION_ONLINE)
            break;
        if (st == ADBC_SESSION_AUTH_PROMPT && !c->prompted) {
            c->prompted = 1;
            deadline = adbc_deadline(c->opts.auth_timeout_ms);
            if (c->opts.on_auth_prompt) {
                pthread_mutex_unlock(&c->mu);
                c->opts.on_auth_prompt(c->opts.user,
                                       "the device is asking to allow USB debugging for this "
                                       "computer's key: accept the prompt on its screen");
                pthread_mutex_lock(&c->mu);
            }
            continue;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            if (c->prompted)
                rc = adbc_fail(ADBC_EUNAUTHORIZED,
                               "device unauthorized: nobody accepted the \"Allow USB debugging?\" "
                               "prompt on the device within %d ms; accept it (tick \"Always "
                               "allow\") and retry",
                               c->opts.auth_timeout_ms);
            else if (c->stls && adbc_session_peer(c->s) == NULL)
                rc = adbc_fail(ADBC_ETIMEDOUT,
                               "%s: the device asked for TLS (STLS: wireless debugging) and then "
                               "%s within %d ms: it may be stuck, or not adbd",
                               c->t->desc,
                               adbc_session_state_get(c->s) == ADBC_SESSION_TLS
                                   ? "did not complete the TLS handshake"
                                   : "sent no CNXN over TLS",
                               c->opts.connect_timeout_ms);
            else if (adbc_session_peer(c->s) == NULL && c->keys &&
                     adbc_keyring_count(c->keys) > 0 && c->s && adbc_session_send_queued(c->s) == 0)
                rc = adbc_fail(ADBC_ETIMEDOUT,
                               "%s: no answer to the ADB handshake within %d ms: the device is "
                               "offline or this is not an adbd port",
                               c->t->desc, c->opts.connect_timeout_ms);
            else
                rc = adbc_fail(ADBC_ETIMEDOUT, "%s: ADB handshake timed out after %d ms",
                               c->t->desc, c->opts.connect_timeout_ms);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int adbc_conn_open(adbc_conn **out, adbc_transport *t, const adbc_conn_opts *opts)
{
    *out = NULL;
    adbc_conn *c = adbc_calloc(1, sizeof *c);
    if (!c) {
        adbc_transport_free(t);
        return adbc_fail(ADBC_ENOMEM, "out of memory creating a connection");
    }
    adbc_conn_opts_init(&c->opts);
    if (adbc_abi_take(&c->opts, sizeof c->opts, opts, "adbc_conn_opts") < 0 ||
        (t && t->size != sizeof *t &&
         adbc_fail(ADBC_EINVAL, "adbc_transport.size is %zu, not %zu: set it to sizeof(adbc_transport)",
                   t->size, sizeof *t) < 0) ||
        (t && t->ops && t->ops->size < sizeof(size_t) + sizeof(void *) * 5 &&
         adbc_fail(ADBC_EINVAL, "adbc_transport_ops.size is %zu: set it to sizeof(adbc_transport_ops)",
                   t->ops->size) < 0)) {
        adbc_free(c);
        adbc_transport_free(t);
        return ADBC_EINVAL;
    }
    if (c->opts.io_timeout_ms == 0)
        c->opts.io_timeout_ms = 30000;
    c->t = t;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cond, NULL);
    pthread_cond_init(&c->send_cond, NULL);
    int rc;
    if (c->opts.keys) {
        c->keys = c->opts.keys;
    } else {
        rc = adbc_keyring_load_default(&c->keys, 1);
        if (rc < 0)
            goto fail;
        c->own_keys = 1;
    }
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.features = c->opts.features;
    cfg.accept_opens = c->opts.on_device_open != NULL;
    if (c->opts.max_payload)
        cfg.max_payload = c->opts.max_payload;
    if (c->opts.window)
        cfg.window = c->opts.window;
    static const adbc_session_callbacks cbs = {
        .size = sizeof(adbc_session_callbacks), .auth_sign = cb_sign,
        .auth_public_key = cb_pubkey,
        .auth_prompt = cb_prompt,
        .on_online = cb_online,
        .on_open = cb_open,
        .on_ready = cb_ready,
        .on_data = cb_data,
        .on_writable = cb_writable,
        .on_closed = cb_closed,
    };
    rc = adbc_session_new(&c->s, &cfg, &cbs, c);
    if (rc < 0)
        goto fail;
    if (pthread_create(&c->reader, NULL, reader_main, c) != 0) {
        rc = adbc_fail(ADBC_ENOMEM, "cannot start the connection's reader thread");
        goto fail;
    }
    c->threads = 1;
    if (pthread_create(&c->writer, NULL, writer_main, c) != 0) {
        rc = adbc_fail(ADBC_ENOMEM, "cannot start the connection's writer thread");
        goto fail;
    }
    c->threads = 2;
    rc = handshake(c);
    if (rc < 0)
        goto fail;
    *out = c;
    return 0;
fail:
    adbc_conn_close(c);
    return adbc_fail_keep(rc);
}

int adbc_connect(adbc_conn **out, const char *addr, const adbc_conn_opts *opts)
{
    *out = NULL;
    adbc_conn_opts def;
    if (!opts) {
        adbc_conn_opts_init(&def);
        opts = &def;
    }
    adbc_transport *t;
    int rc = adbc_transport_tcp(&t, addr, opts->connect_timeout_ms);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, opts);
}

void adbc_conn_close(adbc_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_cond_broadcast(&c->send_cond);
    adbc_transport *t = c->t;
    pthread_mutex_unlock(&c->mu);
    if (t)
        t->ops->shutdown(t);
    if (c->threads >= 1)
        pthread_join(c->reader, NULL);
    if (c->threads >= 2)
        pthread_join(c->writer, NULL);
    for (size_t i = 0; i < c->nstreams; i++) {
        c->streams[i]->c = NULL; /* handles still held by the caller are orphaned */
    }
    for (size_t i = 0; i < c->npending; i++) { /* never handed out: ours to free */
        adbc_free(c->pending[i]->service);
        adbc_free(c->pending[i]->buf);
        adbc_free(c->pending[i]);
    }
    adbc_free(c->streams);
    adbc_session_free(c->s);
    adbc_transport_free(c->t);
    if (c->own_keys)
        adbc_keyring_free(c->keys);
    adbc_free(c->pubkey);
    pthread_cond_destroy(&c->cond);
    pthread_cond_destroy(&c->send_cond);
    pthread_mutex_destroy(&c->mu);
    adbc_free(c);
}

const adbc_banner *adbc_conn_banner(const adbc_conn *c)
{
    return adbc_session_peer(c->s);
}

int adbc_conn_has_feature(const adbc_conn *c, const char *feature)
{
    return adbc_banner_has_feature(adbc_session_peer(c->s), feature);
}

uint32_t adbc_conn_version(const adbc_conn *c)
{
    return adbc_session_version(c->s);
}

uint32_t adbc_conn_max_payload(const adbc_conn *c)
{
    return adbc_session_max_payload(c->s);
}

int adbc_conn_delayed_ack(const adbc_conn *c)
{
    return adbc_session_delayed_ack(c->s);
}

const char *adbc_conn_desc(const adbc_conn *c)
{
    return c->t->desc;
}

int adbc_conn_status(const adbc_conn *c)
{
    return c->status;
}

/* ---- streams ---- */

int adbc_stream_open(adbc_stream **out, adbc_conn *c, const char *service, int timeout_ms)
{
    *out = NULL;
    if (!c || !service || !*service)
        return adbc_fail(ADBC_EINVAL, "adbc_stream_open: need a connection and a service name");
    adbc_stream *st = adbc_calloc(1, sizeof *st);
    if (!st)
        return adbc_fail(ADBC_ENOMEM, "out of memory opening a stream");
    st->c = c;
    int64_t deadline = adbc_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    int rc;
    if (c->status) {
        rc = adbc_conn_raise(c);
        goto out;
    }
    if (grow_streams(c) < 0 || !(st->service = adbc_strdup(service))) {
        rc = adbc_fail(ADBC_ENOMEM, "out of memory opening a stream");
        goto out;
    }
    rc = adbc_session_open(c->s, service, &st->id);
    if (rc < 0)
        goto out;
    c->streams[c->nstreams++] = st;
    adbc_conn_kick(c);
    while (!st->ready && !st->closed && !c->status) {
        if (c->interrupted) {
            rc = adbc_conn_cancelled();
            break;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = adbc_fail(ADBC_ETIMEDOUT,
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
        rc = adbc_fail(ADBC_EREFUSED,
                       "the device refused \"%.100s\": the service does not exist there or "
                       "failed to start",
                       service);
    else if (rc == 0)
        rc = adbc_conn_raise(c);
    adbc_session_close_stream(c->s, st->id);
    adbc_conn_kick(c);
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i] == st) {
            c->streams[i] = c->streams[--c->nstreams];
            break;
        }
out:
    pthread_mutex_unlock(&c->mu);
    adbc_free(st->service);
    adbc_free(st);
    return rc;
}

int adbc_conn_accept(adbc_conn *c, adbc_stream **out, int timeout_ms)
{
    *out = NULL;
    if (!c)
        return adbc_fail(ADBC_EINVAL, "adbc_conn_accept: no connection");
    if (!c->opts.on_device_open)
        return adbc_fail(ADBC_EINVAL, "adbc_conn_accept: the connection refuses device-opened "
                                      "streams (set on_device_open in its options)");
    int64_t deadline = adbc_deadline(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->npending > 0) {
            *out = c->pending[0];
            memmove(c->pending, c->pending + 1, --c->npending * sizeof c->pending[0]);
            break;
        }
        if (c->status) {
            rc = adbc_conn_raise(c);
            break;
        }
        if (c->stopping) {
            rc = adbc_fail(ADBC_ECLOSED, "the connection is closing");
            break;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = adbc_fail(ADBC_ETIMEDOUT, "the device opened no stream within %d ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

const char *adbc_stream_destination(const adbc_stream *st)
{
    return st->service ? st->service : "";
}

static int orphaned(void)
{
    return adbc_fail(ADBC_ECLOSED, "the stream's connection was closed");
}

/* Lock held: wait until the stream has data (1), ended cleanly (0), or the
 * connection failed or the deadline passed (an error, raised). */
static int wait_readable(adbc_conn *c, adbc_stream *st, int64_t deadline, int timeout_ms)
{
    for (;;) {
        if (c->interrupted)
            return adbc_conn_cancelled();
        if (st->len > 0)
            return 1;
        if (st->closed && !st->torn)
            return 0;
        if (c->status)
            return adbc_conn_raise(c);
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT)
            return adbc_fail(ADBC_ETIMEDOUT, "no data from the device within %d ms", timeout_ms);
    }
}

/* Lock held: n bytes left the stream's buffer; return their credit. */
static void taken(adbc_conn *c, adbc_stream *st, size_t n)
{
    /* Returning credit can fail only for lack of memory; the window would
     * then never reopen, so fail the connection instead of letting the
     * transfer stall until its timeout. */
    if (!st->closed && adbc_session_consume(c->s, st->id, n) < 0)
        adbc_conn_set_error(c, ADBC_ENOMEM, "out of memory acknowledging received data");
    adbc_conn_kick(c);
}

ssize_t adbc_stream_read(adbc_stream *st, void *buf, size_t len, int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    if (len == 0)
        return 0;
    int64_t deadline = adbc_deadline(timeout_ms);
    pthread_mutex_lock(&c->mu);
    ssize_t rc = wait_readable(c, st, deadline, timeout_ms);
    if (rc > 0) {
        size_t n = st->len < len ? st->len : len;
        memcpy(buf, st->buf + st->head, n);
        st->head += n;
        st->len -= n;
        if (st->len == 0)
            st->head = 0;
        taken(c, st, n);
        rc = (ssize_t)n;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

ssize_t adbc_stream_read_swap(adbc_stream *st, uint8_t **buf, size_t *cap, size_t *off,
                              int timeout_ms)
{
    adbc_conn *c = st->c;
    *off = 0;
    if (!c)
        return orphaned();
    int64_t deadline = adbc_deadline(timeout_ms);
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
        taken(c, st, n);
        rc = (ssize_t)n;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int adbc_stream_read_full(adbc_stream *st, void *buf, size_t len, int timeout_ms)
{
    int64_t deadline = adbc_deadline(timeout_ms);
    size_t got = 0;
    while (got < len) {
        ssize_t n = adbc_stream_read(st, (uint8_t *)buf + got, len - got, adbc_remaining(deadline));
        if (n < 0)
            return (int)n;
        if (n == 0)
            return adbc_fail(ADBC_ECLOSED,
                             "the device closed the stream after %zu of %zu expected bytes", got,
                             len);
        got += (size_t)n;
    }
    return 0;
}

int adbc_stream_write(adbc_stream *st, const void *buf, size_t len, int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    int64_t deadline = adbc_deadline(timeout_ms);
    const uint8_t *p = buf;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    /* Bound what sits in the output queue so memory does not grow with the
     * size of a transfer, even when the device grants a huge window. */
    size_t high_water = 2 * (size_t)adbc_session_max_payload(c->s) + 64 * 1024;
    while (len > 0) {
        if (c->interrupted) {
            rc = adbc_conn_cancelled();
            break;
        }
        if (c->status) {
            rc = adbc_conn_raise(c);
            break;
        }
        if (st->closed) {
            rc = adbc_fail(ADBC_ECLOSED, "the device closed the stream");
            break;
        }
        size_t queued = adbc_session_send_queued(c->s);
        size_t w = adbc_session_writable(c->s, st->id);
        if (w > 0 && queued < high_water) {
            size_t room = high_water - queued;
            size_t n = len;
            if (n > w)
                n = w;
            if (n > room)
                n = room;
            long k = adbc_session_write(c->s, st->id, p, n);
            if (k < 0) {
                rc = (int)k;
                break;
            }
            p += k;
            len -= (size_t)k;
            adbc_conn_kick(c);
            continue;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = adbc_fail(ADBC_ETIMEDOUT,
                           "the device took no more data on this stream for %d ms (flow "
                           "control window closed)",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

long adbc_stream_write_some(adbc_stream *st, const void *buf, size_t len, int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    if (len == 0)
        return 0;
    int64_t deadline = adbc_deadline(timeout_ms);
    long rc;
    pthread_mutex_lock(&c->mu);
    size_t high_water = 2 * (size_t)adbc_session_max_payload(c->s) + 64 * 1024;
    for (;;) {
        if (c->status) {
            rc = adbc_conn_raise(c);
            break;
        }
        if (st->closed) {
            rc = adbc_fail(ADBC_ECLOSED, "the device closed the stream");
            break;
        }
        size_t queued = adbc_session_send_queued(c->s);
        size_t w = adbc_session_writable(c->s, st->id);
        if (w > 0 && queued < high_water) {
            size_t n = len;
            if (n > w)
                n = w;
            if (n > high_water - queued)
                n = high_water - queued;
            rc = adbc_session_write(c->s, st->id, buf, n);
            adbc_conn_kick(c);
            break;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = adbc_fail(ADBC_ETIMEDOUT, "the device took no data on this stream for %d ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int adbc_stream_flush(adbc_stream *st, int timeout_ms)
{
    adbc_conn *c = st->c;
    if (!c)
        return orphaned();
    int64_t deadline = adbc_deadline(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    while (adbc_session_send_queued(c->s) > 0 && !c->status && !st->closed) {
        if (c->interrupted) {
            rc = adbc_conn_cancelled();
            break;
        }
        if (wait_until(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            rc = adbc_fail(ADBC_ETIMEDOUT, "could not send queued data within %d ms", timeout_ms);
            break;
        }
    }
    if (rc == 0 && c->status)
        rc = adbc_conn_raise(c);
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
        if (!st->closed)
            adbc_session_close_stream(c->s, st->id);
        adbc_conn_kick(c);
        for (size_t i = 0; i < c->nstreams; i++)
            if (c->streams[i] == st) {
                c->streams[i] = c->streams[--c->nstreams];
                break;
            }
        pthread_mutex_unlock(&c->mu);
    }
    adbc_free(st->service);
    adbc_free(st->buf);
    adbc_free(st);
}

adbc_conn *adbc_stream_conn(adbc_stream *st)
{
    return st->c;
}
