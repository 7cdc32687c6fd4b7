/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP side, on libmicrohttpd (one thread per connection, so a call
 * waiting for its device blocks only its own client). Before a body is
 * read: /v1/ routes need "Authorization: Bearer TOKEN" (401 otherwise) and a
 * declared Content-Length over the cap is refused (413); a body that grows
 * past the cap while streaming is dropped and refused too. Connections
 * idle for --conn-timeout seconds are closed, and at most 64 are open, so
 * slow clients cannot hold the server. */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONNECTIONS 64

static struct MHD_Daemon *daemon_;

typedef struct hreq {
    char *body;
    size_t len;
    int too_big;
    int answered;
} hreq;

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
    MHD_add_response_header(res, "Content-Type", ctype);
    MHD_add_response_header(res, "Cache-Control", "no-store");
    if (status == 401)
        MHD_add_response_header(res, "WWW-Authenticate", "Bearer realm=\"adbc-serve\"");
    enum MHD_Result r = MHD_queue_response(conn, (unsigned)status, res);
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
        if (strncmp(url, "/v1/", 4) == 0) {
            const char *auth =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
            if (!auth || strncmp(auth, "Bearer ", 7) != 0 || !serve_token_ok(s, auth + 7)) {
                h->answered = 1;
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
            h->answered = 1;
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
    h->answered = 1;
    if (h->too_big) {
        char m[128];
        snprintf(m, sizeof m, "the body is over %zu bytes", s->body_max);
        return send_err(conn, 413, "too_large", m);
    }
    serve_req r = {s, method, url, query, conn, h->body, h->len};
    char *body = NULL;
    size_t len = 0;
    const char *ctype = "application/json";
    int status = serve_route(&r, &body, &len, &ctype);
    if (!body)
        return send_err(conn, 500, "failed", "out of memory");
    return send_buf(conn, status, body, len, ctype);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    hreq *h = *con_cls;
    if (h) {
        free(h->body);
        free(h);
        *con_cls = NULL;
    }
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
    if (!loopback && !explicit_token) {
        fprintf(stderr, SERVE_NAME ": %s is reachable from other machines: give the token "
                        "explicitly (--token-file FILE or ADBC_SERVE_TOKEN) to listen there\n",
                host);
        return -1;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0);
    daemon_ = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, handle, s,
        /* First, or libmicrohttpd logs the options before it to stderr. */
        MHD_OPTION_EXTERNAL_LOGGER, log_cb, NULL, MHD_OPTION_SOCK_ADDR, &ss,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->conn_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED,
        completed, NULL, MHD_OPTION_END);
    if (!daemon_) {
        fprintf(stderr, SERVE_NAME ": cannot listen on %s (%s)\n", listen,
                errno ? strerror(errno) : "libmicrohttpd refused");
        return -1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    unsigned bound = di ? di->port : (unsigned)port;
    fprintf(stderr, SERVE_NAME ": listening on http://%s%s%s:%u\n", ipv6 ? "[" : "", host,
            ipv6 ? "]" : "", bound);
    if (ready_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", ready_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%u\n", bound) < 0 || fclose(f) != 0 || rename(tmp, ready_file)) {
            fprintf(stderr, SERVE_NAME ": cannot write %s\n", ready_file);
            return -1;
        }
    }
    return 0;
}

void serve_http_stop(void)
{
    if (daemon_)
        MHD_stop_daemon(daemon_);
    daemon_ = NULL;
}
