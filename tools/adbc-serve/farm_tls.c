/* SPDX-License-Identifier: Apache-2.0 */
/* rediss://: the farm's Redis over TLS. Debian 12's hiredis (0.14) has no
 * TLS of its own (hiredis_ssl came with 1.0) and no way to plug one in, so
 * hiredis talks to one end of a socket pair and a thread per connection
 * moves the bytes between the other end and a TLS connection made here
 * with OpenSSL: Redis's certificate verified against --farm-ca (else the
 * system's store) and the host's name or address, the client's certificate
 * (--farm-cert, --farm-key) given when Redis asks for one.
 *
 * The thread owns the TLS connection and both of its descriptors; it ends
 * when hiredis closes its end (redisFree) or when Redis closes or breaks
 * the connection, which hiredis then reads as the end of the stream (as
 * from a Redis that restarted), or when a stopping node shuts both of its
 * descriptors down (farm_tls_wait). Every wait is bounded: connecting and the
 * handshake by FARM_CONNECT_MS, a write by FARM_IO_MS; an idle connection
 * waits for either side in rounds of a minute. */
#if defined(ADBC_HAVE_HIREDIS) && defined(ADBC_HAVE_AGENT)

#include "farm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "ops_util.h"

/* The connections' threads still running, and those of them not yet
 * leaving (live): a stopping node ends them (farm_tls_wait), so none is
 * freeing its TLS state as the process exits. */
static pthread_mutex_t pumps_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pumps_cv;
static pthread_once_t pumps_once = PTHREAD_ONCE_INIT;
static int pumps;
struct pump;
static struct pump *live;

static void pumps_init(void)
{
    ops_cond_init(&pumps_cv);
}

typedef struct pump {
    struct pump *next; /* in live, under pumps_mu */
    SSL_CTX *ctx;
    SSL *ssl;
    int tcp;   /* to Redis, non-blocking */
    int plain; /* ours of the pair; hiredis has the other end */
} pump;

static void pump_free(pump *p)
{
    if (p->ssl)
        SSL_free(p->ssl);
    if (p->ctx)
        SSL_CTX_free(p->ctx);
    if (p->tcp >= 0)
        close(p->tcp);
    if (p->plain >= 0)
        close(p->plain);
    free(p);
}

/* Wait until fd is ready for ev, at most until deadline: 1 ready, 0 not. */
static int ready(int fd, short ev, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - ops_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd f = {fd, ev, 0};
        int n = poll(&f, 1, (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return 0;
    }
}

/* Wait as an SSL call that returned ret asks: 1 try again, 0 give up. */
static int ssl_wait(pump *p, int ret, int64_t deadline)
{
    int e = SSL_get_error(p->ssl, ret);
    if (e == SSL_ERROR_WANT_READ)
        return ready(p->tcp, POLLIN, deadline);
    if (e == SSL_ERROR_WANT_WRITE)
        return ready(p->tcp, POLLOUT, deadline);
    return 0;
}

/* The plaintext Redis sent, to hiredis: 0, or -1 (hiredis is gone or stuck). */
static int to_plain(pump *p, const char *b, size_t n)
{
    int64_t deadline = ops_now_ms() + FARM_IO_MS;
    while (n) {
        ssize_t w = send(p->plain, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!ready(p->plain, POLLOUT, deadline))
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* What hiredis wrote, to Redis: 0, or -1. */
static int to_tls(pump *p, const char *b, int n)
{
    int64_t deadline = ops_now_ms() + FARM_IO_MS;
    while (n > 0) {
        int w = SSL_write(p->ssl, b, n);
        if (w > 0) {
            b += w;
            n -= w;
        } else if (!ssl_wait(p, w, deadline)) {
            return -1;
        }
    }
    return 0;
}

static void *pump_run(void *arg)
{
    pump *p = arg;
    char buf[16384];
    for (;;) {
        if (SSL_pending(p->ssl) == 0) {
            struct pollfd f[2] = {{p->plain, POLLIN, 0}, {p->tcp, POLLIN, 0}};
            int n = poll(f, 2, 60000);
            if (n < 0 && errno != EINTR)
                break;
            if (n <= 0)
                continue;
            if (f[0].revents) {
                ssize_t r = recv(p->plain, buf, sizeof buf, MSG_DONTWAIT);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
                    break; /* hiredis closed its end */
                if (r > 0 && to_tls(p, buf, (int)r) != 0)
                    break;
            }
            if (!f[1].revents)
                continue;
        }
        /* What TLS has, all of it: a record may hold several replies. */
        int r;
        while ((r = SSL_read(p->ssl, buf, sizeof buf)) > 0)
            if (to_plain(p, buf, (size_t)r) != 0)
                goto out;
        int e = SSL_get_error(p->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            break; /* Redis closed the connection, or it broke */
    }
out:
    /* Off the live list before its descriptors close, so farm_tls_wait
     * never shuts down a descriptor number that is already someone else's. */
    pthread_mutex_lock(&pumps_mu);
    for (pump **q = &live; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    pthread_mutex_unlock(&pumps_mu);
    SSL_shutdown(p->ssl); /* a close_notify if the socket takes it now; no wait */
    pump_free(p);
    /* This thread's OpenSSL state (its error queue) now, not in a key
     * destructor after the count below said the thread was done. */
    OPENSSL_thread_stop();
    pthread_mutex_lock(&pumps_mu);
    pumps--;
    pthread_cond_broadcast(&pumps_cv);
    pthread_mutex_unlock(&pumps_mu);
    return NULL;
}

void farm_tls_wait(int ms)
{
    pthread_once(&pumps_once, pumps_init);
    int64_t deadline = ops_now_ms() + ms;
    pthread_mutex_lock(&pumps_mu);
    /* Both ends shut: the thread's poll, read or write returns at once and
     * it ends, whatever hiredis or Redis still hold open; what is left is
     * only the thread being scheduled, which ms bounds on a busy machine. */
    for (pump *p = live; p; p = p->next) {
        shutdown(p->plain, SHUT_RDWR);
        shutdown(p->tcp, SHUT_RDWR);
    }
    while (pumps > 0 && ops_cond_wait_until(&pumps_cv, &pumps_mu, deadline) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&pumps_mu);
}

/* A non-blocking TCP connection to host:port within deadline, or -1 with why. */
static int tcp_open(const farm_cfg *cf, int64_t deadline, char *why, size_t cap)
{
    char port[16];
    snprintf(port, sizeof port, "%d", cf->port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(cf->host, port, &hints, &ai);
    if (g != 0) {
        snprintf(why, cap, "redis at %s:%d: %s", cf->host, cf->port, gai_strerror(g));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            socklen_t l = sizeof err;
            err = errno;
            if (err == EINPROGRESS && ready(fd, POLLOUT, deadline) &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && err == 0) {
                /* connected */
            } else {
                if (err == EINPROGRESS)
                    err = ETIMEDOUT;
                close(fd);
                fd = -1;
            }
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(why, cap, "redis at %s:%d: %s (is redis-server listening with TLS there?)",
                 cf->host, cf->port, strerror(err));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* OpenSSL's latest error as words. */
static const char *ssl_why(void)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    return r ? r : "the connection closed during the handshake";
}

int farm_tls_open(const farm_cfg *cf, char *why, size_t cap)
{
    int64_t deadline = ops_now_ms() + FARM_CONNECT_MS;
    pump *p = calloc(1, sizeof *p);
    int pair[2] = {-1, -1};
    if (!p) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    p->tcp = p->plain = -1;
    ERR_clear_error();
    p->ctx = SSL_CTX_new(TLS_client_method());
    if (!p->ctx || !SSL_CTX_set_min_proto_version(p->ctx, TLS1_2_VERSION)) {
        snprintf(why, cap, "TLS: %s", ssl_why());
        goto fail;
    }
    SSL_CTX_set_verify(p->ctx, SSL_VERIFY_PEER, NULL);
    if (cf->ca[0] ? SSL_CTX_load_verify_locations(p->ctx, cf->ca, NULL) != 1
                  : SSL_CTX_set_default_verify_paths(p->ctx) != 1) {
        snprintf(why, cap, "--farm-ca %s: %s (a PEM file of the CA that signed Redis's "
                 "certificate)", cf->ca[0] ? cf->ca : "(the system's store)", ssl_why());
        goto fail;
    }
    if (cf->cert[0] &&
        (SSL_CTX_use_certificate_chain_file(p->ctx, cf->cert) != 1 ||
         SSL_CTX_use_PrivateKey_file(p->ctx, cf->key, SSL_FILETYPE_PEM) != 1 ||
         SSL_CTX_check_private_key(p->ctx) != 1)) {
        snprintf(why, cap, "--farm-cert %s, --farm-key %s: %s (PEM files, the key the "
                 "certificate's)", cf->cert, cf->key, ssl_why());
        goto fail;
    }
    p->ssl = SSL_new(p->ctx);
    if (!p->ssl) {
        snprintf(why, cap, "TLS: %s", ssl_why());
        goto fail;
    }
    /* Records that carry no data (TLS 1.3's session tickets) must not make
     * a read wait for data that hiredis has not asked for yet. */
    SSL_clear_mode(p->ssl, SSL_MODE_AUTO_RETRY);
    unsigned char addr[16];
    int is_ip = inet_pton(AF_INET, cf->host, addr) == 1 || inet_pton(AF_INET6, cf->host, addr) == 1;
    if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(p->ssl), cf->host) != 1
              : SSL_set1_host(p->ssl, cf->host) != 1 ||
                    SSL_set_tlsext_host_name(p->ssl, cf->host) != 1) {
        snprintf(why, cap, "TLS: cannot check the certificate against %s", cf->host);
        goto fail;
    }
    p->tcp = tcp_open(cf, deadline, why, cap);
    if (p->tcp < 0)
        goto fail;
    SSL_set_fd(p->ssl, p->tcp);
    for (;;) {
        ERR_clear_error();
        int r = SSL_connect(p->ssl);
        if (r == 1)
            break;
        if (ssl_wait(p, r, deadline))
            continue;
        long v = SSL_get_verify_result(p->ssl);
        if (v != X509_V_OK)
            snprintf(why, cap, "redis at %s:%d: TLS: its certificate is refused: %s (give the "
                     "CA that signed it with --farm-ca FILE; it must name %s)", cf->host,
                     cf->port, X509_verify_cert_error_string(v), cf->host);
        else if (ops_now_ms() >= deadline)
            snprintf(why, cap, "redis at %s:%d: TLS: no handshake within %d ms (is it Redis's "
                     "TLS port?)", cf->host, cf->port, FARM_CONNECT_MS);
        else
            snprintf(why, cap, "redis at %s:%d: TLS: %s%s", cf->host, cf->port, ssl_why(),
                     cf->cert[0] ? "" : " (if Redis asks for a client certificate, give "
                                        "--farm-cert and --farm-key)");
        goto fail;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        snprintf(why, cap, "socketpair: %s", strerror(errno));
        goto fail;
    }
    p->plain = pair[0];
    pthread_t t;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) {
        snprintf(why, cap, "cannot start the TLS connection's thread");
        goto fail;
    }
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_once(&pumps_once, pumps_init);
    pthread_mutex_lock(&pumps_mu);
    int tr = pthread_create(&t, &at, pump_run, p);
    if (tr == 0) {
        pumps++;
        p->next = live;
        live = p;
    }
    pthread_mutex_unlock(&pumps_mu);
    pthread_attr_destroy(&at);
    if (tr != 0) {
        snprintf(why, cap, "cannot start the TLS connection's thread: %s", strerror(tr));
        goto fail;
    }
    return pair[1];
fail:
    if (pair[1] >= 0)
        close(pair[1]);
    pump_free(p);
    return -1;
}

#endif
