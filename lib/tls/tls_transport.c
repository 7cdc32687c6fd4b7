/* SPDX-License-Identifier: Apache-2.0 */
/* TLS 1.3 over any adbc_transport, itself an adbc_transport ("tls").
 *
 * OpenSSL works on two memory BIOs and never touches the inner transport:
 * ciphertext we receive is written into one, ciphertext to send is drained
 * from the other and written to the inner transport with its timeouts. That
 * keeps every blocking step under adbc's timeout and shutdown rules and lets
 * TLS sit on a socket, a descriptor or anything else that moves bytes.
 *
 * The connection layer reads from one thread while it writes from another,
 * and an SSL object must not be used by two threads at once. So:
 *  - ssl_mu guards the SSL object and both BIOs; it is held only around
 *    OpenSSL calls, which never block here;
 *  - recv_mu makes one reader at a time feed the input BIO;
 *  - write_mu makes one writer at a time turn plaintext into records;
 *  - send_mu is held while draining the output BIO and writing what was
 *    drained, so records reach the wire in the order OpenSSL made them even
 *    when the reader produces some (a KeyUpdate answer, an alert).
 * Lock order: recv_mu or write_mu, then send_mu, then ssl_mu.
 *
 * The reader never waits for send_mu, and sends only when it made records
 * itself. A writer holding send_mu may be blocked on a full socket until the
 * peer reads; if our reader then waited for that writer (or sent the
 * writer's records itself into the same full socket), both ends could end up
 * with writers blocked on each other and readers blocked behind them: no
 * byte moves until a write times out. So the reader leaves its records in
 * the output BIO, raises flush_wanted, and sends them only if send_mu is
 * free; whoever holds send_mu looks at flush_wanted after letting go and
 * sends them. */
#include "tls/tls_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/internal.h"

#define CHUNK 16384
#define FLUSH_EVERY (4 * CHUNK)
#define READ_PATH_FLUSH_MS 30000

typedef struct tls_transport {
    adbc_transport base;
    adbc_transport *inner;
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in_bio;  /* ciphertext received, for OpenSSL to read */
    BIO *out_bio; /* ciphertext OpenSSL produced, for us to send */
    pthread_mutex_t ssl_mu, recv_mu, write_mu, send_mu;

    const adbc_tls_config *cfg; /* valid during the handshake only */
    int server;
    int detect_not_paired;
    int borrow_inner;
    atomic_int app_data_seen;
    int auth_refused;           /* server: authorize() said no */

    atomic_int failed;          /* sticky error once the stream is broken */
    atomic_int flush_wanted;    /* the reader left records in out_bio */
    char failed_msg[256];

    uint8_t rbuf[CHUNK + 512];  /* under recv_mu */
    uint8_t sbuf[CHUNK];        /* under send_mu */
} tls_transport;

/* What one OpenSSL call reported, captured while ssl_mu was held. */
typedef struct ssl_result {
    int ret;
    int err;            /* SSL_get_error */
    unsigned long code; /* first error on the queue, 0 if none */
    size_t pending_out; /* ciphertext waiting to be sent */
} ssl_result;

static void capture(tls_transport *t, ssl_result *r, int ret)
{
    r->ret = ret;
    r->err = ret > 0 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, ret);
    r->code = r->err == SSL_ERROR_SSL ? ERR_peek_error() : 0;
    r->pending_out = BIO_ctrl_pending(t->out_bio);
    ERR_clear_error();
}

static const char *reason_text(unsigned long code)
{
    const char *s = code ? ERR_reason_error_string(code) : NULL;
    return s ? s : "unknown TLS error";
}

/* The alert number inside an "alert received" reason, or -1. */
static int alert_of(unsigned long code)
{
    int reason = ERR_GET_REASON(code);
    if (ERR_GET_LIB(code) == ERR_LIB_SSL && reason >= SSL_AD_REASON_OFFSET &&
        reason < SSL_AD_REASON_OFFSET + 256)
        return reason - SSL_AD_REASON_OFFSET;
    return -1;
}

/* Alerts with which a TLS server says "I do not accept your certificate". */
static int is_certificate_refusal(int alert)
{
    switch (alert) {
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_CERTIFICATE_REQUIRED:
        return 1;
    default:
        return 0;
    }
}

static int not_paired(tls_transport *t, const char *why)
{
    return core_fail(ADBC_ENOTPAIRED,
                     "%s: this computer's key is not paired with the device (%s): run pairing "
                     "(on the device: Developer options > Wireless debugging > Pair device "
                     "with pairing code; then `adbc-snap pair HOST:PORT CODE` with the pairing port, or adbc_pair())",
                     t->base.desc, why);
}

static int set_failed(tls_transport *t, int code)
{
    snprintf(t->failed_msg, sizeof t->failed_msg, "%s", adbc_last_error());
    int expected = 0;
    atomic_compare_exchange_strong(&t->failed, &expected, code);
    return code;
}

static int check_failed(tls_transport *t)
{
    int f = atomic_load(&t->failed);
    return f ? core_fail(f, "%s", t->failed_msg) : 0;
}

/* Send every byte the output BIO holds; send_mu is held. */
static int drain_locked(tls_transport *t, int timeout_ms)
{
    atomic_store(&t->flush_wanted, 0);
    for (;;) {
        pthread_mutex_lock(&t->ssl_mu);
        int n = BIO_read(t->out_bio, t->sbuf, sizeof t->sbuf);
        pthread_mutex_unlock(&t->ssl_mu);
        if (n <= 0)
            return 0;
        int rc = t->inner->ops->write(t->inner, t->sbuf, (size_t)n, timeout_ms);
        if (rc < 0)
            return set_failed(t, rc); /* part of a record may be out: the stream cannot go on */
    }
}

/* Send every byte OpenSSL has produced so far, waiting for send_mu (the
 * write path and the handshake). Records a reader left while we held the
 * lock go out too. */
static int flush_out(tls_transport *t, int timeout_ms)
{
    pthread_mutex_lock(&t->send_mu);
    for (;;) {
        int rc = drain_locked(t, timeout_ms);
        pthread_mutex_unlock(&t->send_mu);
        /* A reader that found send_mu taken relies on this check; if the
         * lock is taken again, its holder makes the same check. */
        if (rc || !atomic_load(&t->flush_wanted) || pthread_mutex_trylock(&t->send_mu) != 0)
            return rc;
    }
}

/* The read path: send the records SSL_read made, without ever waiting for
 * a writer (see the top of the file). */
static int flush_from_reader(tls_transport *t, int timeout_ms)
{
    int rc = 0;
    atomic_store(&t->flush_wanted, 1);
    while (rc == 0 && atomic_load(&t->flush_wanted) && pthread_mutex_trylock(&t->send_mu) == 0) {
        rc = drain_locked(t, timeout_ms);
        pthread_mutex_unlock(&t->send_mu);
    }
    return rc;
}

/* Read ciphertext from the inner transport into OpenSSL's input. */
static int feed_in(tls_transport *t, int timeout_ms)
{
    int n = t->inner->ops->read(t->inner, t->rbuf, sizeof t->rbuf, timeout_ms);
    if (n <= 0)
        return n < 0 ? n : core_fail(ADBC_EIO, "%s: empty read", t->base.desc);
    pthread_mutex_lock(&t->ssl_mu);
    int w = BIO_write(t->in_bio, t->rbuf, n);
    pthread_mutex_unlock(&t->ssl_mu);
    if (w != n)
        return set_failed(t, core_fail(ADBC_ENOMEM, "%s: out of memory buffering TLS data",
                                       t->base.desc));
    return 0;
}

/* An SSL_read that failed with a TLS error: name it, and recognise the
 * device refusing our certificate. */
static int read_error(tls_transport *t, const ssl_result *r)
{
    int alert = alert_of(r->code);
    if (t->detect_not_paired && !atomic_load(&t->app_data_seen) && is_certificate_refusal(alert)) {
        char why[160];
        snprintf(why, sizeof why, "it refused the TLS certificate: %s", reason_text(r->code));
        return set_failed(t, not_paired(t, why));
    }
    return set_failed(t, core_fail(ADBC_EPROTO, "%s: TLS error: %s", t->base.desc,
                                   reason_text(r->code)));
}

static int tls_read(adbc_transport *bt, void *buf, size_t len, int timeout_ms)
{
    tls_transport *t = (tls_transport *)bt;
    int rc = check_failed(t);
    if (rc)
        return rc;
    if (len == 0)
        return core_fail(ADBC_EINVAL, "%s: read of 0 bytes", t->base.desc);
    if (len > INT_MAX)
        len = INT_MAX;
    int64_t deadline = core_deadline(timeout_ms);
    int flush_ms = timeout_ms < 0 ? -1 : timeout_ms > READ_PATH_FLUSH_MS ? timeout_ms
                                                                          : READ_PATH_FLUSH_MS;
    pthread_mutex_lock(&t->recv_mu);
    for (;;) {
        ssl_result r;
        pthread_mutex_lock(&t->ssl_mu);
        ERR_clear_error();
        /* What the writer left in out_bio is the writer's to send. */
        size_t before = BIO_ctrl_pending(t->out_bio);
        capture(t, &r, SSL_read(t->ssl, buf, (int)len));
        pthread_mutex_unlock(&t->ssl_mu);
        if (r.pending_out > before && (rc = flush_from_reader(t, flush_ms)) < 0)
            break;
        if (r.ret > 0) {
            atomic_store(&t->app_data_seen, 1);
            rc = r.ret;
            break;
        }
        if (r.err == SSL_ERROR_WANT_READ) {
            rc = feed_in(t, core_remaining(deadline));
            if (rc == ADBC_ECLOSED && t->detect_not_paired && !atomic_load(&t->app_data_seen))
                rc = core_fail(ADBC_ECLOSED,
                               "%s: the device closed the connection right after the TLS "
                               "handshake: this computer's key is probably not paired with it "
                               "(run pairing)", t->base.desc);
            if (rc < 0)
                break;
            continue;
        }
        if (r.err == SSL_ERROR_ZERO_RETURN) {
            rc = core_fail(ADBC_ECLOSED, "%s: the device closed the TLS connection",
                           t->base.desc);
            break;
        }
        if (r.err == SSL_ERROR_SSL) {
            rc = read_error(t, &r);
            break;
        }
        rc = set_failed(t, core_fail(ADBC_EIO, "%s: TLS read failed (OpenSSL error %d)",
                                     t->base.desc, r.err));
        break;
    }
    pthread_mutex_unlock(&t->recv_mu);
    return rc;
}

static int tls_writev(adbc_transport *bt, const struct iovec *iov, int iovcnt, int timeout_ms)
{
    tls_transport *t = (tls_transport *)bt;
    int rc = check_failed(t);
    if (rc)
        return rc;
    pthread_mutex_lock(&t->write_mu);
    size_t unflushed = 0;
    for (int i = 0; i < iovcnt && rc == 0; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t left = iov[i].iov_len;
        while (left && rc == 0) {
            int chunk = left > CHUNK ? CHUNK : (int)left;
            ssl_result r;
            pthread_mutex_lock(&t->ssl_mu);
            ERR_clear_error();
            capture(t, &r, SSL_write(t->ssl, p, chunk));
            pthread_mutex_unlock(&t->ssl_mu);
            if (r.ret <= 0) {
                rc = set_failed(t, core_fail(r.err == SSL_ERROR_SSL ? ADBC_EPROTO : ADBC_EIO,
                                             "%s: TLS write failed: %s", t->base.desc,
                                             reason_text(r.code)));
                break;
            }
            p += r.ret;
            left -= (size_t)r.ret;
            unflushed += (size_t)r.ret;
            /* Bound the memory: send as we go on large writes. */
            if (unflushed >= FLUSH_EVERY) {
                rc = flush_out(t, timeout_ms);
                unflushed = 0;
            }
        }
    }
    if (rc == 0)
        rc = flush_out(t, timeout_ms);
    pthread_mutex_unlock(&t->write_mu);
    return rc;
}

static int tls_write(adbc_transport *bt, const void *buf, size_t len, int timeout_ms)
{
    struct iovec v = {.iov_base = (void *)buf, .iov_len = len};
    return tls_writev(bt, &v, 1, timeout_ms);
}

static void tls_shutdown(adbc_transport *bt)
{
    tls_transport *t = (tls_transport *)bt;
    t->inner->ops->shutdown(t->inner);
}

static void tls_free_only(tls_transport *t)
{
    SSL_free(t->ssl); /* frees both BIOs */
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->ssl_mu);
    pthread_mutex_destroy(&t->recv_mu);
    pthread_mutex_destroy(&t->write_mu);
    pthread_mutex_destroy(&t->send_mu);
    core_free(t);
}

static void tls_destroy(adbc_transport *bt)
{
    tls_transport *t = (tls_transport *)bt;
    if (!t->borrow_inner)
        adbc_transport_free(t->inner);
    tls_free_only(t);
}

/* TLS changes nothing of the link: the transport it runs over says. */
static void tls_link(adbc_transport *bt, adbc_transport_link *out)
{
    adbc_transport_link_get(out, ((tls_transport *)bt)->inner);
}

static const adbc_transport_ops tls_ops = {
    .size = sizeof(adbc_transport_ops),
    .name = "tls",
    .read = tls_read,
    .write = tls_write,
    .shutdown = tls_shutdown,
    .destroy = tls_destroy,
    .writev = tls_writev,
    .link = tls_link,
};

int tls_is_tls(const adbc_transport *t)
{
    return t && t->ops == &tls_ops;
}

/* ---- handshake-time callbacks ---- */

/* Both roles accept any certificate chain; only the server looks at the key. */
static int verify_cb(X509_STORE_CTX *xs, void *arg)
{
    tls_transport *t = arg;
    if (!t->server)
        return 1;
    const adbc_tls_server_opts *o = t->cfg->server_opts;
    if (!o || !o->authorize)
        return 1;
    X509 *cert = X509_STORE_CTX_get0_cert(xs);
    EVP_PKEY *pk = cert ? X509_get0_pubkey(cert) : NULL;
    char fp[ADBC_TLS_FINGERPRINT_SIZE];
    if (pk && tls_pkey_fingerprint(fp, pk) == 0 && o->authorize(o->user, fp))
        return 1;
    t->auth_refused = 1;
    X509_STORE_CTX_set_error(xs, X509_V_ERR_CERT_REJECTED);
    return 0;
}

/* Client: the server asked for a certificate; pick the key it hints at. */
static int client_cert_cb(SSL *ssl, void *arg)
{
    tls_transport *t = arg;
    const char *hints[64];
    char store[64][ADBC_TLS_FINGERPRINT_SIZE];
    size_t nh = 0;
    const STACK_OF(X509_NAME) *cas = SSL_get0_peer_CA_list(ssl);
    for (int i = 0; cas && i < sk_X509_NAME_num(cas) && nh < 64; i++) {
        X509_NAME *name = sk_X509_NAME_value(cas, i);
        char org[32];
        /* Only "O=AdbKey-<version>" names carry a key; others are real CAs. */
        if (X509_NAME_get_text_by_NID(name, NID_organizationName, org, sizeof org) <= 0 ||
            strncmp(org, "AdbKey-", 7) != 0)
            continue;
        if (X509_NAME_get_text_by_NID(name, NID_commonName, store[nh], sizeof store[nh]) !=
            ADBC_TLS_FINGERPRINT_SIZE - 1)
            continue;
        hints[nh] = store[nh];
        nh++;
    }
    ERR_clear_error();
    const adbc_key *key;
    if (adbc_tls_select_key(&key, t->cfg->keys, hints, nh) != 0)
        return 0;
    X509 *cert;
    if (tls_make_cert(&cert, tls_key_pkey(key)) != 0)
        return 0;
    int ok = SSL_use_certificate(ssl, cert) == 1 &&
             SSL_use_PrivateKey(ssl, tls_key_pkey(key)) == 1;
    X509_free(cert);
    return ok ? 1 : 0;
}

/* Server: the CA hints, "O=AdbKey-0, CN=<fingerprint>" per known key. */
static int set_hints(SSL_CTX *ctx, const adbc_tls_server_opts *o)
{
    if (!o || !o->nhints)
        return 1;
    STACK_OF(X509_NAME) *names = sk_X509_NAME_new_null();
    if (!names)
        return 0;
    for (size_t i = 0; i < o->nhints; i++) {
        X509_NAME *n = X509_NAME_new();
        if (!n || !o->hints[i] ||
            X509_NAME_add_entry_by_NID(n, NID_organizationName, MBSTRING_ASC,
                                       (const unsigned char *)"AdbKey-0", -1, -1, 0) != 1 ||
            X509_NAME_add_entry_by_NID(n, NID_commonName, MBSTRING_ASC,
                                       (const unsigned char *)o->hints[i], -1, -1, 0) != 1 ||
            !sk_X509_NAME_push(names, n)) {
            X509_NAME_free(n);
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            return 0;
        }
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    return 1;
}

static int setup_ctx(tls_transport *t, const adbc_tls_config *cfg)
{
    t->ctx = SSL_CTX_new(cfg->server ? TLS_server_method() : TLS_client_method());
    if (!t->ctx || SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(t->ctx, TLS1_3_VERSION) != 1)
        return 0;
    SSL_CTX_set_verify(t->ctx,
                       cfg->server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                   : SSL_VERIFY_PEER,
                       NULL);
    SSL_CTX_set_cert_verify_callback(t->ctx, verify_cb, t);
    if (cfg->server) {
        SSL_CTX_set_num_tickets(t->ctx, 0); /* nobody resumes these sessions */
        if (!set_hints(t->ctx, cfg->server_opts))
            return 0;
    }
    if (!cfg->server && cfg->keys) {
        SSL_CTX_set_cert_cb(t->ctx, client_cert_cb, t);
        return 1;
    }
    EVP_PKEY *k;
    X509 *c;
    if (tls_throwaway_identity(&k, &c) != 0)
        return 0;
    int ok = SSL_CTX_use_certificate(t->ctx, c) == 1 && SSL_CTX_use_PrivateKey(t->ctx, k) == 1;
    X509_free(c);
    EVP_PKEY_free(k);
    return ok;
}

static int handshake_error(tls_transport *t, const ssl_result *r)
{
    if (t->server && t->auth_refused)
        return core_fail(ADBC_EUNAUTHORIZED,
                         "%s: the host's key is not authorized (not paired with this device)",
                         t->base.desc);
    int alert = alert_of(r->code);
    if (!t->server && t->detect_not_paired && is_certificate_refusal(alert)) {
        char why[160];
        snprintf(why, sizeof why, "it refused the TLS certificate: %s", reason_text(r->code));
        return not_paired(t, why);
    }
    return core_fail(ADBC_EPROTO, "%s: TLS handshake failed: %s", t->base.desc,
                     r->err == SSL_ERROR_SSL ? reason_text(r->code) : "internal error");
}

static int handshake(tls_transport *t, int timeout_ms)
{
    int64_t deadline = core_deadline(timeout_ms);
    for (;;) {
        ssl_result r;
        pthread_mutex_lock(&t->ssl_mu);
        ERR_clear_error();
        capture(t, &r, SSL_do_handshake(t->ssl));
        pthread_mutex_unlock(&t->ssl_mu);
        int rc = 0;
        /* Send what OpenSSL produced, also on failure: it may be the alert
         * that tells the peer why. */
        if (r.pending_out) {
            int left = core_remaining(deadline);
            rc = flush_out(t, left == 0 ? 1 : left);
        }
        if (r.ret == 1)
            return rc;
        if (r.err != SSL_ERROR_WANT_READ)
            return handshake_error(t, &r);
        if (rc)
            return rc;
        rc = feed_in(t, core_remaining(deadline));
        if (rc == ADBC_ETIMEDOUT)
            return core_fail(ADBC_ETIMEDOUT,
                             "%s: the TLS handshake did not finish within %d ms: the device "
                             "did not answer", t->base.desc, timeout_ms);
        if (rc == ADBC_ECLOSED)
            return core_fail(ADBC_ECLOSED,
                             "%s: the peer closed the connection during the TLS handshake",
                             t->base.desc);
        if (rc < 0)
            return rc;
    }
}

int tls_wrap(adbc_transport **out, adbc_transport *inner, const adbc_tls_config *cfg,
                  int timeout_ms)
{
    *out = NULL;
    if (!inner || !cfg || (cfg->preread_len && !cfg->preread))
        return core_fail(ADBC_EINVAL, "TLS: NULL transport, configuration or pre-read bytes");
    if (inner->packet_mode)
        return core_fail(ADBC_EUNSUPPORTED,
                         "%s: TLS runs over byte-stream transports (TCP, descriptors), not "
                         "over USB", inner->desc);
    tls_transport *t = core_calloc(1, sizeof *t);
    if (!t)
        return core_fail(ADBC_ENOMEM, "out of memory starting TLS");
    pthread_mutex_init(&t->ssl_mu, NULL);
    pthread_mutex_init(&t->recv_mu, NULL);
    pthread_mutex_init(&t->write_mu, NULL);
    pthread_mutex_init(&t->send_mu, NULL);
    t->base.size = sizeof t->base;
    t->base.ops = &tls_ops;
    snprintf(t->base.desc, sizeof t->base.desc, "tls:%.*s", (int)sizeof t->base.desc - 5,
             inner->desc);
    t->inner = inner;
    t->cfg = cfg;
    t->server = cfg->server;
    t->detect_not_paired = cfg->detect_not_paired;
    t->borrow_inner = cfg->borrow_inner;

    BIO *in_bio = NULL, *out_bio = NULL;
    int ok = setup_ctx(t, cfg) && (t->ssl = SSL_new(t->ctx)) != NULL &&
             (in_bio = BIO_new(BIO_s_mem())) != NULL && (out_bio = BIO_new(BIO_s_mem())) != NULL;
    if (!ok) {
        unsigned long e = ERR_get_error();
        ERR_clear_error();
        BIO_free(in_bio);
        tls_free_only(t);
        return core_fail(ADBC_ENOMEM, "cannot set up TLS: %s",
                         e ? reason_text(e) : "out of memory");
    }
    t->in_bio = in_bio;
    t->out_bio = out_bio;
    /* An empty input BIO means "wait for more", not end of stream. */
    BIO_set_mem_eof_return(t->in_bio, -1);
    if (cfg->preread_len &&
        (cfg->preread_len > INT_MAX ||
         BIO_write(t->in_bio, cfg->preread, (int)cfg->preread_len) != (int)cfg->preread_len)) {
        BIO_free(t->in_bio);
        BIO_free(t->out_bio);
        tls_free_only(t);
        return core_fail(ADBC_ENOMEM, "out of memory starting TLS");
    }
    SSL_set_bio(t->ssl, t->in_bio, t->out_bio);
    if (cfg->server)
        SSL_set_accept_state(t->ssl);
    else
        SSL_set_connect_state(t->ssl);

    int rc = handshake(t, timeout_ms);
    t->cfg = NULL;
    if (rc) {
        tls_free_only(t);
        ERR_clear_error();
        return rc;
    }
    *out = &t->base;
    return 0;
}

int tls_export(adbc_transport *bt, uint8_t *out, size_t len, const char *label,
                    size_t label_len)
{
    if (!tls_is_tls(bt))
        return core_fail(ADBC_EINVAL, "TLS export: not a TLS transport");
    tls_transport *t = (tls_transport *)bt;
    pthread_mutex_lock(&t->ssl_mu);
    int ok = SSL_export_keying_material(t->ssl, out, len, label, label_len, NULL, 0, 0) == 1;
    ERR_clear_error();
    pthread_mutex_unlock(&t->ssl_mu);
    return ok ? 0 : core_fail(ADBC_EPROTO, "%s: TLS keying material export failed", bt->desc);
}
