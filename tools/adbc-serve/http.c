/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP side, on libmicrohttpd (one thread per connection, so a call
 * waiting for its device blocks only its own client). Before a body is
 * read: /v1/ routes need "Authorization: Bearer TOKEN" (401 otherwise) and a
 * declared Content-Length over the cap is refused (413); a body that grows
 * past the cap while streaming is dropped and refused too.
 *
 * Connections come through the gate (gate.c), which checks each request
 * head before libmicrohttpd parses it; every answer says "Connection:
 * close", so each connection carries one request and every head is seen.
 *
 * Slots (conn_*): at most 64 connections are served at once. The gate
 * hands a connection over only when it has sent a whole request head and
 * there is a place for it (serve_http_take), so a client that does not send
 * a request cannot hold one, and none is pushed out for a newcomer. Each
 * connection must deliver a whole request (head and body) within
 * --conn-timeout seconds of connecting, however it trickles its bytes; a
 * watchdog closes it otherwise. On a Termux phone any app can connect to
 * 127.0.0.1. */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ops_util.h"

#define MAX_CONNECTIONS 64
/* libmicrohttpd's own limit, never reached: the gate hands over at most
 * MAX_CONNECTIONS (libmicrohttpd 0.9.75's listening thread locks itself up
 * when a connection handed over finds its limit reached). */
#define HARD_CONNECTIONS (2 * MAX_CONNECTIONS)
#define WATCH_MS 250

static struct MHD_Daemon *daemon_;
static int gate_fd = -1; /* the listening socket, the gate's */
static int stop_wait_ms;  /* how long a stop waits for answers being made */

typedef struct hreq {
    char *body;
    size_t len;
    int too_big;
    int answered; /* an answer is being made: counted in slots.answering */
    const char *path; /* the target's path (url, or within it) */
} hreq;

/* One TCP connection, from libmicrohttpd's STARTED to its CLOSED notice
 * (which comes before it closes the socket, so fd stays ours meanwhile). */
typedef struct conn_slot {
    struct conn_slot *next;
    int fd;
    int64_t since; /* when it began waiting for its next request */
    int reading;   /* waiting for (or receiving) a request, not being answered */
    int shed;      /* shut down by us; libmicrohttpd closes it */
} conn_slot;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    conn_slot *list;
    int open; /* in list: STARTED, not CLOSED yet (shed ones too) */
    int stop;
    int64_t request_ms;
    pthread_t watchdog;
    int watching;
    int answering;       /* requests being answered: a stop lets them finish */
    pthread_cond_t done; /* answering went down, or a connection closed */
} slots = {.mu = PTHREAD_MUTEX_INITIALIZER}; /* .cv, .done: ops_cond_init, at start */

/* Connections the gate handed over that libmicrohttpd has not STARTED yet:
 * each holds a place, and conn_notify takes when it was accepted (the
 * request timeout runs from accept, not from here). */
#define HANDED_MAX MAX_CONNECTIONS
static struct {
    int fd;
    int64_t since; /* accepted */
    int64_t at;    /* handed over; 0: a free place */
} handed[HANDED_MAX];

int serve_http_take(int fd, const struct sockaddr *addr, socklen_t addrlen, int64_t since)
{
    pthread_mutex_lock(&slots.mu);
    int64_t now = ops_now_ms();
    int at = -1, pending = 0;
    for (int i = 0; i < HANDED_MAX; i++) {
        /* The same number again: libmicrohttpd closed that one without
         * starting it. One not started within the request timeout is taken
         * for closed the same way (it would be closed on start anyway). */
        if (handed[i].at && (handed[i].fd == fd || now - handed[i].at > slots.request_ms))
            handed[i].at = 0;
        if (handed[i].at)
            pending++;
        else if (at < 0)
            at = i;
    }
    if (at < 0 || slots.open + pending >= MAX_CONNECTIONS) {
        pthread_mutex_unlock(&slots.mu);
        return 0;
    }
    handed[at].fd = fd;
    handed[at].since = since;
    handed[at].at = now;
    pthread_mutex_unlock(&slots.mu);
    /* Closes fd itself when it cannot take it. */
    if (MHD_add_connection(daemon_, fd, addr, addrlen) == MHD_YES)
        return 1;
    fprintf(stderr, SERVE_NAME ": http: cannot serve a connection: %s\n", strerror(errno));
    pthread_mutex_lock(&slots.mu);
    if (handed[at].fd == fd)
        handed[at].at = 0;
    pthread_mutex_unlock(&slots.mu);
    return -1;
}

/* Under slots.mu: when fd was accepted; now when the gate did not say. */
static int64_t handed_since(int fd)
{
    for (int i = 0; i < HANDED_MAX; i++)
        if (handed[i].at && handed[i].fd == fd) {
            handed[i].at = 0;
            return handed[i].since;
        }
    return ops_now_ms();
}

/* Under slots.mu. The connection's thread sees end of file and closes it. */
static void conn_shed(conn_slot *c)
{
    if (c->shed)
        return;
    c->shed = 1;
    shutdown(c->fd, SHUT_RDWR);
}

static conn_slot *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void conn_notify(void *cls, struct MHD_Connection *conn, void **ctx,
                        enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_slot *c = calloc(1, sizeof *c);
        if (!c || !ci) {
            free(c);
            if (ci)
                shutdown(ci->connect_fd, SHUT_RDWR);
            return;
        }
        c->fd = ci->connect_fd;
        c->reading = 1;
        *ctx = c;
        pthread_mutex_lock(&slots.mu);
        c->since = handed_since(c->fd);
        c->next = slots.list;
        slots.list = c;
        slots.open++;
        pthread_mutex_unlock(&slots.mu);
        return;
    }
    conn_slot *c = *ctx;
    if (!c)
        return;
    pthread_mutex_lock(&slots.mu);
    for (conn_slot **pp = &slots.list; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    slots.open--;
    pthread_cond_broadcast(&slots.done);
    pthread_mutex_unlock(&slots.mu);
    free(c);
    *ctx = NULL;
    serve_gate_wake(); /* a place for a head waiting there */
}

/* A request arrived whole (reading 0), or was answered (back to 1): only
 * a connection waiting for a request is on the clock. */
static void conn_mark(struct MHD_Connection *conn, int reading)
{
    conn_slot *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&slots.mu);
    c->reading = reading;
    if (reading)
        c->since = ops_now_ms();
    pthread_mutex_unlock(&slots.mu);
}

/* The request gets an answer: a stop waits for it to be sent. */
static void answer(hreq *h)
{
    if (h->answered)
        return;
    h->answered = 1;
    pthread_mutex_lock(&slots.mu);
    slots.answering++;
    pthread_mutex_unlock(&slots.mu);
}

/* Closes connections that took longer than the request timeout to send a
 * whole request: the idle timeout alone restarts with every byte. */
static void *conn_watchdog(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&slots.mu);
    while (!slots.stop) {
        int64_t now = ops_now_ms();
        for (conn_slot *c = slots.list; c; c = c->next)
            if (c->reading && !c->shed && now - c->since > slots.request_ms)
                conn_shed(c);
        ops_cond_wait_until(&slots.cv, &slots.mu, now + WATCH_MS);
    }
    pthread_mutex_unlock(&slots.mu);
    return NULL;
}

/* The headers of every answer. */
static void add_headers(struct MHD_Response *res, int status, const char *ctype)
{
    MHD_add_response_header(res, "Content-Type", ctype);
    MHD_add_response_header(res, "Cache-Control", "no-store");
    /* One request per connection, so the gate sees every request head. */
    MHD_add_response_header(res, "Connection", "close");
    /* The page (page.c) runs its own same-origin script and style sheet and
     * talks to this server only; no answer may be framed, sniffed as
     * another type, or tell another site where it came from. */
    MHD_add_response_header(res, "Content-Security-Policy",
                            "default-src 'none'; script-src 'self'; style-src 'self'; "
                            "img-src 'self' blob: data:; connect-src 'self'; "
                            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(res, "X-Frame-Options", "DENY");
    if (status == 401)
        MHD_add_response_header(res, "WWW-Authenticate", "Bearer realm=\"adbc-serve\"");
}

static enum MHD_Result send_buf(struct MHD_Connection *conn, int status, char *body, size_t len,
                                const char *ctype)
{
    struct MHD_Response *res =
        MHD_create_response_from_buffer(len, body ? body : (char *)"", body ? MHD_RESPMEM_MUST_FREE
                                                                            : MHD_RESPMEM_PERSISTENT);
    if (!res) {
        free(body);
        return MHD_NO;
    }
    add_headers(res, status, ctype);
    enum MHD_Result r = MHD_queue_response(conn, (unsigned)status, res);
    MHD_destroy_response(res);
    return r;
}

/* A task's events (tasks.c): read as they come, on this connection's own
 * thread (a wait there blocks only this client). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    long n = serve_stream_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void stream_free(void *cls)
{
    serve_stream_free(cls);
}

/* A farm task's events (farm_api.c), the same way. */
static ssize_t farm_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    long n = serve_farm_stream_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void farm_stream_free(void *cls)
{
    serve_farm_stream_free(cls);
}

static enum MHD_Result send_stream(struct MHD_Connection *conn, void *st,
                                   MHD_ContentReaderCallback rd, MHD_ContentReaderFreeCallback fr)
{
    struct MHD_Response *res = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, rd, st, fr);
    if (!res) {
        fr(st);
        return MHD_NO;
    }
    add_headers(res, 200, "text/event-stream; charset=utf-8");
    enum MHD_Result r = MHD_queue_response(conn, 200, res);
    MHD_destroy_response(res);
    return r;
}

static enum MHD_Result send_err(struct MHD_Connection *conn, int status, const char *code,
                                const char *msg)
{
    size_t len = 0;
    char *b = serve_error_json(code, msg, &len);
    return send_buf(conn, status, b, len, "application/json");
}

static const char *query(void *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

/* Headers that must appear once (RFC 9112 3.2, RFC 9110 8.6): counted. */
static const char *const once_names[] = {MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_CONTENT_LENGTH,
                                         MHD_HTTP_HEADER_AUTHORIZATION};
#define ONCE_N (sizeof once_names / sizeof once_names[0])

static enum MHD_Result count_once(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    (void)value;
    int *n = cls;
    for (size_t i = 0; i < ONCE_N; i++)
        if (key && strcasecmp(key, once_names[i]) == 0)
            n[i]++;
    return MHD_YES;
}

/* An absolute-form target (RFC 9112 3.2.2: "http://HOST[:PORT]/PATH"): the
 * path, and the authority into auth (which then stands for the Host
 * header, as the RFC says); NULL when the scheme is not http or the
 * authority does not fit. Any other target is its own path. */
static const char *target_path(const char *url, char *auth, size_t cap)
{
    *auth = '\0';
    if (strncasecmp(url, "http://", 7) != 0)
        return url;
    const char *a = url + 7, *slash = strchr(a, '/');
    size_t n = slash ? (size_t)(slash - a) : strlen(a);
    if (n == 0 || n >= cap || memchr(a, '@', n))
        return NULL;
    memcpy(auth, a, n);
    auth[n] = '\0';
    return slash ? slash : "/";
}

/* "Bearer TOKEN" with the scheme in any case and one or more spaces (RFC
 * 9110 11.4, 11.1): the token, or NULL. */
static const char *bearer(const char *auth)
{
    if (!auth || strncasecmp(auth, "Bearer", 6) != 0 || auth[6] != ' ')
        return NULL;
    auth += 6;
    while (*auth == ' ')
        auth++;
    return auth;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    serve *s = cls;
    hreq *h = *con_cls;
    s->last_client_ms = ops_now_ms();
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return MHD_NO;
        *con_cls = h;
        int once[ONCE_N] = {0};
        MHD_get_connection_values(conn, MHD_HEADER_KIND, count_once, once);
        for (size_t i = 0; i < ONCE_N; i++)
            if (once[i] > 1) {
                char m[160];
                snprintf(m, sizeof m, "the request has %d %s headers: it may have one (RFC 9112)",
                         once[i], once_names[i]);
                answer(h);
                return send_err(conn, 400, "bad_request", m);
            }
        char auth_form[256];
        const char *path = target_path(url, auth_form, sizeof auth_form);
        if (!path) {
            answer(h);
            return send_err(conn, 400, "bad_request", "the request target is neither a path "
                            "nor http://HOST:PORT/PATH naming this server");
        }
        h->path = path;
        const char *host = *auth_form ? auth_form
                                      : MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                                    MHD_HTTP_HEADER_HOST);
        if (!serve_host_ok(s, host)) {
            answer(h);
            return send_err(conn, 403, "bad_host",
                            host ? "the Host header names another server: call this one as "
                                   "localhost, 127.0.0.1, [::1] or the address it listens on "
                                   "(a page on another name is refused, against DNS rebinding)"
                                 : "the request has no Host header");
        }
        if (strncmp(path, "/v1/", 4) == 0) {
            const char *auth =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
            const char *tok = bearer(auth);
            if (!tok || !serve_token_ok(s, tok)) {
                answer(h);
                return send_err(conn, 401, "unauthorized",
                                auth ? "the bearer token is wrong" : "this route needs "
                                "\"Authorization: Bearer TOKEN\" (the token is in the server's "
                                "--token-file, or ADBC_SERVE_TOKEN)");
            }
        }
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->body_max) {
            char m[160];
            snprintf(m, sizeof m, "the body is %s bytes; at most %zu are accepted", cl,
                     s->body_max);
            answer(h);
            return send_err(conn, 413, "too_large", m);
        }
        return MHD_YES;
    }
    if (h->answered) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (h->too_big || h->len + n > s->body_max) {
            h->too_big = 1;
            free(h->body);
            h->body = NULL;
            h->len = 0;
            return MHD_YES;
        }
        char *nb = realloc(h->body, h->len + n + 1);
        if (!nb)
            return MHD_NO;
        memcpy(nb + h->len, upload, n);
        h->body = nb;
        h->len += n;
        h->body[h->len] = '\0';
        return MHD_YES;
    }
    answer(h);
    conn_mark(conn, 0); /* the whole request is in: no longer on the clock */
    if (h->too_big) {
        char m[128];
        snprintf(m, sizeof m, "the body is over %zu bytes", s->body_max);
        return send_err(conn, 413, "too_large", m);
    }
    serve_req r = {s, method, h->path, query, conn, h->body, h->len};
    char *body = NULL;
    size_t len = 0;
    const char *ctype = "application/json";
    serve_stream *st = NULL;
    serve_farm_stream *fst = NULL;
    int status = serve_tasks_events(&r, &st, &body, &len);
    if (st)
        return send_stream(conn, st, stream_read, stream_free);
    if (!status)
        status = serve_farm_events(&r, &fst, &body, &len);
    if (fst)
        return send_stream(conn, fst, farm_stream_read, farm_stream_free);
    if (!status)
        status = serve_route(&r, &body, &len, &ctype);
    if (!body)
        return send_err(conn, 500, "failed", "out of memory");
    return send_buf(conn, status, body, len, ctype);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)toe;
    conn_mark(conn, 1); /* waiting for the next request on this connection */
    hreq *h = *con_cls;
    if (h && h->answered) {
        pthread_mutex_lock(&slots.mu);
        slots.answering--;
        pthread_cond_broadcast(&slots.done);
        pthread_mutex_unlock(&slots.mu);
    }
    if (h) {
        free(h->body);
        free(h);
        *con_cls = NULL;
    }
}

/* listen(2): serve_http_start's parameter of that name hides it. A burst of
 * connects waits in the kernel's queue while the gate is full (the kernel
 * caps it at net.core.somaxconn) rather than having its handshakes dropped
 * and retried a second or more later. */
static int sock_listen(int fd)
{
    return listen(fd, 1024);
}

static void log_cb(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    fprintf(stderr, SERVE_NAME ": http: ");
    vfprintf(stderr, fmt, ap);
}

int serve_http_start(serve *s, const char *listen, int explicit_token, const char *ready_file)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) {
        fprintf(stderr, SERVE_NAME ": --listen takes HOST:PORT (127.0.0.1:7737, [::1]:7737)\n");
        return -1;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port < 0 || port > 65535) {
        fprintf(stderr, SERVE_NAME ": bad port in --listen %s\n", listen);
        return -1;
    }
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    int loopback, ipv6 = 0;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
        ipv6 = 1;
    } else {
        fprintf(stderr, SERVE_NAME ": --listen needs a numeric address (or localhost), not "
                        "'%s'\n", host);
        return -1;
    }
    static const uint8_t zero[16];
    serve_host_listen(s, host, ipv6 ? memcmp(&v6->sin6_addr, zero, 16) == 0
                                    : v4->sin_addr.s_addr == INADDR_ANY);
    if (!loopback && !explicit_token) {
        fprintf(stderr, SERVE_NAME ": %s is reachable from other machines: give the token "
                        "explicitly (--token-file FILE or ADBC_SERVE_TOKEN) to listen there\n",
                host);
        return -1;
    }
    if (ops_cond_init(&slots.cv) != 0 || ops_cond_init(&slots.done) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot make a condition variable\n");
        return -1;
    }
    /* The listening socket is ours: connections reach libmicrohttpd through
     * the gate (gate.c), which checks each request head first. */
    int lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    socklen_t sslen = ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(lfd, (struct sockaddr *)&ss, sslen) != 0 || sock_listen(lfd) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot listen on %s: %s\n", listen, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (ipv6 ? MHD_USE_IPv6 : 0);
    daemon_ = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, s,
        /* First, or libmicrohttpd logs the options before it to stderr. */
        MHD_OPTION_EXTERNAL_LOGGER, log_cb, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->conn_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)HARD_CONNECTIONS,
        MHD_OPTION_NOTIFY_CONNECTION, conn_notify, NULL,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED,
        completed, NULL, MHD_OPTION_END);
    if (!daemon_) {
        fprintf(stderr, SERVE_NAME ": cannot serve HTTP on %s (%s)\n", listen,
                errno ? strerror(errno) : "libmicrohttpd refused");
        close(lfd);
        return -1;
    }
    slots.request_ms = (int64_t)s->conn_timeout_s * 1000;
    if (serve_gate_start(lfd, s->conn_timeout_s * 1000) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot start a thread\n");
        MHD_stop_daemon(daemon_);
        daemon_ = NULL;
        close(lfd);
        return -1;
    }
    gate_fd = lfd;
    slots.stop = 0;
    stop_wait_ms = s->call_ms + s->conn_timeout_s * 1000 + 2000;
    if (pthread_create(&slots.watchdog, NULL, conn_watchdog, NULL) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot start a thread\n");
        MHD_stop_daemon(daemon_);
        daemon_ = NULL;
        return -1;
    }
    slots.watching = 1;
    struct sockaddr_storage got;
    socklen_t glen = sizeof got;
    unsigned bound = (unsigned)port;
    if (getsockname(lfd, (struct sockaddr *)&got, &glen) == 0)
        bound = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                : ((struct sockaddr_in *)&got)->sin_port);
    fprintf(stderr, SERVE_NAME ": listening on http://%s%s%s:%u\n", ipv6 ? "[" : "", host,
            ipv6 ? "]" : "", bound);
    if (ready_file) {
        char line[16];
        int n = snprintf(line, sizeof line, "%u\n", bound);
        if (ops_write_file_atomic(ready_file, line, (size_t)n, 0644, 0) != 0) {
            fprintf(stderr, SERVE_NAME ": cannot write %s: %s\n", ready_file, strerror(errno));
            return -1;
        }
    }
    return 0;
}

void serve_http_stop(void)
{
    /* No new connection. Every connection libmicrohttpd has came with a
     * whole request head (the gate's rule) and closes after its answer:
     * each is answered before the daemon stops (a call holding its device
     * within --call-timeout; one still waiting for a device is answered 503
     * at once), bounded by the call and request timeouts. */
    serve_gate_stop();
    if (daemon_) {
        int64_t until = ops_now_ms() + stop_wait_ms;
        pthread_mutex_lock(&slots.mu);
        while ((slots.answering > 0 || slots.list) &&
               ops_cond_wait_until(&slots.done, &slots.mu, until) == 0) {
        }
        pthread_mutex_unlock(&slots.mu);
    }
    if (slots.watching) {
        pthread_mutex_lock(&slots.mu);
        slots.stop = 1;
        pthread_cond_signal(&slots.cv);
        pthread_mutex_unlock(&slots.mu);
        pthread_join(slots.watchdog, NULL);
        slots.watching = 0;
    }
    if (gate_fd >= 0)
        close(gate_fd);
    gate_fd = -1;
    if (daemon_)
        MHD_stop_daemon(daemon_);
    daemon_ = NULL;
}
