/* SPDX-License-Identifier: Apache-2.0 */
/* A connection: transport + session engine + a reader and a writer
 * thread (io.c), with the engine's events (events.c), the send path
 * (send.c) and the stream calls (stream.c) in their own files. This one
 * holds its lifetime: open, handshake, close, and what it reports. */
#include "conn/conn_int.h"
#include "transport/fd_int.h"

#include <stdio.h>
#include <string.h>

void adbc_conn_opts_init_sized(adbc_conn_opts *out, size_t size)
{
    adbc_conn_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->connect_timeout_ms = 10000;
    o->auth_timeout_ms = 60000;
    o->io_timeout_ms = 30000;
    core_abi_give(out, size, &d, sizeof d);
}

void conn_set_error(adbc_conn *c, int code, const char *msg)
{
    if (c->status == 0) {
        c->status = code;
        snprintf(c->errmsg, sizeof c->errmsg, "%s", msg);
        conn_wake_streams(c);
    }
    pthread_cond_broadcast(&c->cond);
    pthread_cond_broadcast(&c->send_cond);
}

int conn_raise(adbc_conn *c)
{
    return core_fail(c->status ? c->status : ADBC_EIO, "%s", c->errmsg);
}

static int handshake(adbc_conn *c)
{
    int64_t deadline = core_deadline(c->opts.connect_timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    while (rc == 0) {
        if (c->status) {
            rc = conn_raise(c);
            break;
        }
        adbc_session_state st = adbc_session_state_get(c->s);
        /* A device that accepts the key at once may be online before this
         * loop sees the prompt state: the prompt still happened. */
        if ((st == ADBC_SESSION_AUTH_PROMPT || c->prompt_seen) && !c->prompted) {
            c->prompted = 1;
            deadline = core_deadline(c->opts.auth_timeout_ms);
            if (c->opts.on_auth_prompt) {
                char m[256];
                snprintf(m, sizeof m, "the device is asking whether to allow debugging from this "
                         "computer's key: accept the prompt on the device (waiting up to %d s)",
                         (c->opts.auth_timeout_ms + 999) / 1000);
                pthread_mutex_unlock(&c->mu);
                c->opts.on_auth_prompt(c->opts.user, m);
                pthread_mutex_lock(&c->mu);
            }
            continue;
        }
        if (st == ADBC_SESSION_ONLINE)
            break;
        if (conn_wait(c, &c->cond, deadline) == ADBC_ETIMEDOUT) {
            if (c->prompted)
                rc = core_fail(ADBC_EUNAUTHORIZED,
                               "device unauthorized: nobody accepted the prompt on the device to "
                               "allow debugging from this computer's key within the %d ms "
                               "waited; accept it (tick \"Always allow\") and retry",
                               c->opts.auth_timeout_ms);
            else if (c->stls && adbc_session_peer(c->s) == NULL)
                rc = core_fail(ADBC_ETIMEDOUT,
                               "%s: the device asked for TLS (STLS: wireless debugging) and then "
                               "%s within %d ms: it may be stuck, or not adbd",
                               c->t->desc,
                               adbc_session_state_get(c->s) == ADBC_SESSION_TLS
                                   ? "did not complete the TLS handshake"
                                   : "sent no CNXN over TLS",
                               c->opts.connect_timeout_ms);
            else if (adbc_session_peer(c->s) == NULL && c->keys &&
                     adbc_keyring_count(c->keys) > 0 && c->s && adbc_session_send_queued(c->s) == 0)
                rc = core_fail(ADBC_ETIMEDOUT,
                               "%s: no answer to the ADB handshake within %d ms: the device is "
                               "offline or this is not an adbd port",
                               c->t->desc, c->opts.connect_timeout_ms);
            else
                rc = core_fail(ADBC_ETIMEDOUT, "%s: ADB handshake timed out after %d ms",
                               c->t->desc, c->opts.connect_timeout_ms);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int adbc_conn_open(adbc_conn **out, adbc_transport *t, const adbc_conn_opts *opts)
{
    if (!out) {
        adbc_transport_free(t);
        return core_fail(ADBC_EINVAL, "adbc_conn_open: out is NULL");
    }
    *out = NULL;
    if (!t)
        return core_fail(ADBC_EINVAL, "adbc_conn_open: the transport is NULL");
    adbc_conn *c = core_calloc(1, sizeof *c);
    if (!c) {
        adbc_transport_free(t);
        return core_fail(ADBC_ENOMEM, "out of memory creating a connection");
    }
    adbc_conn_opts_init(&c->opts);
    if (core_abi_take(&c->opts, sizeof c->opts, opts, "adbc_conn_opts") < 0 ||
        (t && t->size != sizeof *t &&
         core_fail(ADBC_EINVAL, "adbc_transport.size is %zu, not %zu: set it to sizeof(adbc_transport)",
                   t->size, sizeof *t) < 0) ||
        (t && t->ops && t->ops->size < sizeof(size_t) + sizeof(void *) * 5 &&
         core_fail(ADBC_EINVAL, "adbc_transport_ops.size is %zu: set it to sizeof(adbc_transport_ops)",
                   t->ops->size) < 0)) {
        core_free(c);
        adbc_transport_free(t);
        return ADBC_EINVAL;
    }
    if (c->opts.io_timeout_ms == 0)
        c->opts.io_timeout_ms = 30000;
    c->t = t;
    c->try_write = transport_can_try_write(t);
    pthread_mutex_init(&c->mu, NULL);
    core_cond_init(&c->cond);
    core_cond_init(&c->send_cond);
    int rc;
    c->keys = c->opts.keys;
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.features = c->opts.features;
    cfg.accept_opens = c->opts.on_device_open != NULL;
    if (c->opts.max_payload)
        cfg.max_payload = c->opts.max_payload;
    if (c->opts.window)
        cfg.window = c->opts.window;
    cfg.send_ahead = c->opts.send_ahead;
    if (c->opts.local_window || c->opts.local_send_ahead) {
        adbc_transport_link link;
        adbc_transport_link_get(&link, t);
        if (link.local && c->opts.local_window)
            cfg.window = c->opts.local_window;
        if (link.local && c->opts.local_send_ahead)
            cfg.send_ahead = c->opts.local_send_ahead;
    }
    rc = adbc_session_new(&c->s, &cfg, &conn_callbacks, c);
    if (rc < 0)
        goto fail;
    /* CNXN goes out before the default key is loaded (a file read, PEM
     * decoding and a check signature: 3-4 ms), so the device answers while
     * this thread loads it. Until the key is in place the reader holds the
     * device's input back (keys_loading): an AUTH waits for the key, never
     * the other way round. */
    c->keys_loading = !c->keys;
    if (pthread_create(&c->reader, NULL, conn_reader_main, c) != 0) {
        rc = core_fail(ADBC_ENOMEM, "cannot start the connection's reader thread");
        goto fail;
    }
    c->threads = 1;
    if (pthread_create(&c->writer, NULL, conn_writer_main, c) != 0) {
        rc = core_fail(ADBC_ENOMEM, "cannot start the connection's writer thread");
        goto fail;
    }
    c->threads = 2;
    pthread_mutex_lock(&c->mu);
    rc = adbc_session_start(c->s);
    if (rc == 0)
        conn_kick(c);
    pthread_mutex_unlock(&c->mu);
    if (rc == 0 && c->keys_loading) {
        adbc_keyring *keys = NULL;
        rc = adbc_keyring_load_default(&keys, 1);
        pthread_mutex_lock(&c->mu);
        c->keys = keys;
        c->own_keys = keys != NULL;
        c->keys_loading = 0;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->mu);
    }
    if (rc < 0)
        goto fail;
    rc = handshake(c);
    if (rc < 0)
        goto fail;
    *out = c;
    return 0;
fail:
    adbc_conn_close(c);
    return core_fail_keep(rc);
}

int adbc_connect(adbc_conn **out, const char *addr, const adbc_conn_opts *opts)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_connect: out is NULL");
    *out = NULL;
    if (!addr)
        return core_fail(ADBC_EINVAL, "adbc_connect: the address is NULL (give HOST:PORT)");
    /* Checked before its timeout is used: a zeroed struct is not 0 ms. */
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    if (core_abi_take(&o, sizeof o, opts, "adbc_conn_opts") < 0)
        return ADBC_EINVAL;
    adbc_transport *t;
    int rc = adbc_transport_tcp(&t, addr, o.connect_timeout_ms);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, &o);
}

void adbc_conn_close(adbc_conn *c)
{
    if (!c)
        return;
    /* What the layers above kept ends first: its streams close on a
     * connection that still works. */
    for (int i = 0; i < CONN_KEPTS; i++) {
        pthread_mutex_lock(&c->mu);
        void *p = c->kept[i];
        void (*end)(void *) = c->kept_end[i];
        c->kept[i] = NULL;
        pthread_mutex_unlock(&c->mu);
        if (p && end)
            end(p);
    }
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    conn_wake_streams(c);
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
        core_free(c->pending[i]->service);
        core_free(c->pending[i]->buf);
        core_free(c->pending[i]->out);
        core_free(c->pending[i]);
    }
    core_free(c->streams);
    adbc_session_free(c->s);
    adbc_transport_free(c->t);
    if (c->own_keys)
        adbc_keyring_free(c->keys);
    core_free(c->pubkey);
    pthread_cond_destroy(&c->cond);
    pthread_cond_destroy(&c->send_cond);
    pthread_mutex_destroy(&c->mu);
    core_free(c);
}

const adbc_banner *adbc_conn_banner(const adbc_conn *c)
{
    if (!c)
        return NULL;
    return adbc_session_peer(c->s);
}

int adbc_conn_has_feature(const adbc_conn *c, const char *feature)
{
    if (!c || !feature)
        return 0;
    return adbc_banner_has_feature(adbc_session_peer(c->s), feature);
}

uint32_t adbc_conn_version(const adbc_conn *c)
{
    if (!c)
        return 0;
    return adbc_session_version(c->s);
}

uint32_t adbc_conn_max_payload(const adbc_conn *c)
{
    if (!c)
        return 0;
    return adbc_session_max_payload(c->s);
}

int adbc_conn_delayed_ack(const adbc_conn *c)
{
    if (!c)
        return 0;
    return adbc_session_delayed_ack(c->s);
}

const char *adbc_conn_desc(const adbc_conn *c)
{
    if (!c)
        return "";
    return c->t->desc;
}

int conn_status_msg(const adbc_conn *c, char *msg, size_t len)
{
    adbc_conn *m = (adbc_conn *)c;
    pthread_mutex_lock(&m->mu);
    int st = m->status;
    if (len)
        snprintf(msg, len, "%s", st ? m->errmsg : "");
    pthread_mutex_unlock(&m->mu);
    return st;
}

void conn_link(adbc_transport_link *out, const adbc_conn *c)
{
    adbc_conn *m = (adbc_conn *)c;
    pthread_mutex_lock(&m->mu); /* a TLS upgrade replaces c->t under it */
    adbc_transport_link_get(out, m->t);
    pthread_mutex_unlock(&m->mu);
}

int adbc_conn_status(const adbc_conn *c)
{
    if (!c)
        return core_null(__func__, "the connection");
    /* The reader thread sets it under the lock; read it under the lock too
     * (a caller may poll it while the connection fails). */
    adbc_conn *m = (adbc_conn *)c;
    pthread_mutex_lock(&m->mu);
    int st = m->status;
    pthread_mutex_unlock(&m->mu);
    return st;
}


int conn_fact(const adbc_conn *c, int which)
{
    if (!c || which < 0 || which >= CONN_FACTS)
        return 0;
    return c->facts[which];
}

void conn_fact_set(adbc_conn *c, int which, int value)
{
    if (c && which >= 0 && which < CONN_FACTS)
        c->facts[which] = value;
}

void *conn_kept(adbc_conn *c, int which)
{
    if (!c || which < 0 || which >= CONN_KEPTS)
        return NULL;
    pthread_mutex_lock(&c->mu);
    void *p = c->kept[which];
    pthread_mutex_unlock(&c->mu);
    return p;
}

void *conn_keep(adbc_conn *c, int which, void *p, void (*end)(void *p))
{
    if (!c || which < 0 || which >= CONN_KEPTS)
        return NULL;
    pthread_mutex_lock(&c->mu);
    if (!c->kept[which] && !c->stopping) {
        c->kept[which] = p;
        c->kept_end[which] = end;
    }
    void *kept = c->kept[which];
    pthread_mutex_unlock(&c->mu);
    return kept;
}
