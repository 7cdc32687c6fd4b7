/* SPDX-License-Identifier: Apache-2.0 */
/* The DevTools protocol over an ADB stream: a stream straight to the
 * page's abstract socket (no port on the host), the WebSocket opening
 * handshake (RFC 6455 section 4) written here, then wslay's event API for
 * the frames. wslay is sans-IO: it calls back for bytes to send and to
 * receive, and those callbacks do the stream I/O within the caller's
 * deadline. A read callback blocks at most once per wslay_event_recv()
 * round, so a message that has arrived is handed over without waiting for
 * more. Replies are matched to commands by id; a reply that arrives while
 * another is awaited is kept (commands may be pipelined); events are
 * dropped. */
#include "adbc/webview.h"
#include "core/internal.h"
#include "services/cdp_int.h"
#include "core/jread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef ADBC_HAVE_WSLAY
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <wslay/wslay.h>

#define CDP_MAX_MSG ((uint64_t)64 << 20)
#define CDP_MAX_HEADERS 16384
#define CDP_MAX_KEPT 4096

typedef struct cdp_reply {
    int id;
    int error;     /* 1: an "error" reply; text is its message */
    char *text;    /* the result object's JSON, or the error message */
    size_t len;
} cdp_reply;

struct adbc_cdp {
    adbc_stream *st;
    wslay_event_context_ptr ws;
    int64_t deadline;  /* of the call in progress */
    int may_block;     /* the read callback may wait once this round */
    int io_error;      /* the stream's error, kept for the caller */
    char io_msg[200];
    uint8_t *left;     /* bytes read past the handshake's headers */
    size_t left_len, left_off;
    int next_id;
    unsigned long events; /* received so far */
    int closed;
    int bad;           /* a malformed message arrived: its description */
    char bad_msg[160];
    cdp_reply *kept;
    size_t nkept, capkept;
};

static ssize_t on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user)
{
    (void)flags;
    adbc_cdp *c = user;
    if (c->left_off < c->left_len) {
        size_t n = c->left_len - c->left_off;
        if (n > len)
            n = len;
        memcpy(buf, c->left + c->left_off, n);
        c->left_off += n;
        return (ssize_t)n;
    }
    if (!c->may_block) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    c->may_block = 0;
    ssize_t k = adbc_stream_read(c->st, buf, len, core_remaining(c->deadline));
    if (k > 0)
        return k;
    if (k == ADBC_ETIMEDOUT) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    c->io_error = k == 0 ? ADBC_ECLOSED : (int)k;
    snprintf(c->io_msg, sizeof c->io_msg, "%s",
             k == 0 ? "the page's DevTools socket closed" : adbc_last_error());
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static ssize_t on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user)
{
    (void)flags;
    adbc_cdp *c = user;
    int rc = adbc_stream_write(c->st, data, len, core_remaining(c->deadline));
    if (rc < 0) {
        c->io_error = rc;
        snprintf(c->io_msg, sizeof c->io_msg, "%s", adbc_last_error());
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return (ssize_t)len;
}

static int on_mask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
    (void)ctx;
    (void)user;
    return RAND_bytes(buf, (int)len) == 1 ? 0 : -1;
}

static void keep(adbc_cdp *c, const char *msg, size_t len)
{
    jread j;
    if (jread_parse(&j, msg, len) < 0) {
        c->bad = 1;
        snprintf(c->bad_msg, sizeof c->bad_msg, "%s", adbc_last_error());
        return;
    }
    int id = jread_get(&j, 0, "id");
    if (id < 0) { /* an event */
        c->events++;
        jread_free(&j);
        return;
    }
    double v = jread_num(&j, id, -1);
    int res = jread_get(&j, 0, "result"), err = jread_get(&j, 0, "error");
    if (v < 1 || v > 2147483647.0 || (res < 0 && err < 0) || c->nkept >= CDP_MAX_KEPT) {
        c->bad = 1;
        snprintf(c->bad_msg, sizeof c->bad_msg, "a reply without a valid id and result");
        jread_free(&j);
        return;
    }
    if (c->nkept == c->capkept) {
        size_t cap = c->capkept ? c->capkept * 2 : 8;
        cdp_reply *k = core_realloc(c->kept, cap * sizeof *k);
        if (!k) {
            c->bad = 1;
            snprintf(c->bad_msg, sizeof c->bad_msg, "out of memory keeping a reply");
            jread_free(&j);
            return;
        }
        c->kept = k;
        c->capkept = cap;
    }
    cdp_reply *r = &c->kept[c->nkept];
    memset(r, 0, sizeof *r);
    r->id = (int)v;
    if (res >= 0) {
        r->len = j.t[res].len;
        r->text = core_strndup(msg + j.t[res].start, r->len);
    } else {
        r->error = 1;
        int m = jread_get(&j, err, "message");
        if (jread_str(&j, m, &r->text) < 0) {
            r->text = core_strndup(msg + j.t[err].start, j.t[err].len > 200 ? 200 : j.t[err].len);
        }
        r->len = r->text ? strlen(r->text) : 0;
    }
    jread_free(&j);
    if (!r->text) {
        c->bad = 1;
        snprintf(c->bad_msg, sizeof c->bad_msg, "out of memory keeping a reply");
        return;
    }
    c->nkept++;
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *user)
{
    (void)ctx;
    adbc_cdp *c = user;
    if (arg->opcode == WSLAY_TEXT_FRAME)
        keep(c, (const char *)arg->msg, arg->msg_length);
    else if (arg->opcode == WSLAY_CONNECTION_CLOSE)
        c->closed = 1;
}

/* Sec-WebSocket-Accept for key: base64(SHA-1(key + the RFC's GUID)). */
static int accept_value(char out[64], const char *key)
{
    char cat[128];
    unsigned char md[20];
    unsigned int mdlen = 0;
    int n = snprintf(cat, sizeof cat, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    if (n < 0 || (size_t)n >= sizeof cat ||
        EVP_Digest(cat, (size_t)n, md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen != 20)
        return -1;
    EVP_EncodeBlock((unsigned char *)out, md, 20);
    return 0;
}

/* The value of header name in the headers hdr[0..len), or NULL. */
static const char *header(const char *hdr, size_t len, const char *name, size_t *vlen)
{
    size_t nl = strlen(name);
    const char *p = hdr, *end = hdr + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e)
            e = end;
        if ((size_t)(e - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = e;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        p = e + 1;
    }
    return NULL;
}

static int handshake(adbc_cdp *c, const char *path)
{
    unsigned char raw[16];
    char key[32], want[64], req[1400];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return core_fail(ADBC_EIO, "DevTools: no random bytes for the WebSocket key");
    EVP_EncodeBlock((unsigned char *)key, raw, sizeof raw);
    if (accept_value(want, key) < 0)
        return core_fail(ADBC_EIO, "DevTools: SHA-1 for the WebSocket handshake failed");
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\nUser-Agent: adbc\r\n\r\n",
                     path, key);
    if (n < 0 || (size_t)n >= sizeof req)
        return core_fail(ADBC_EINVAL, "DevTools: the page path is too long");
    int rc = adbc_stream_write(c->st, req, (size_t)n, core_remaining(c->deadline));
    if (rc < 0)
        return rc;
    char *buf = core_malloc(CDP_MAX_HEADERS);
    if (!buf)
        return core_fail(ADBC_ENOMEM, "out of memory for the WebSocket handshake");
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        if (len == CDP_MAX_HEADERS) {
            core_free(buf);
            return core_fail(ADBC_EPROTO, "DevTools: the handshake's headers exceed %d bytes",
                             CDP_MAX_HEADERS);
        }
        ssize_t k = adbc_stream_read(c->st, buf + len, CDP_MAX_HEADERS - len,
                                     core_remaining(c->deadline));
        if (k <= 0) {
            core_free(buf);
            if (k == ADBC_ETIMEDOUT)
                return core_fail(ADBC_ETIMEDOUT,
                                 "DevTools: the page did not answer the WebSocket handshake in time");
            return k == 0 ? core_fail(ADBC_ECLOSED, "DevTools: the socket closed during the "
                                                    "WebSocket handshake (no such page?)")
                          : (int)k;
        }
        size_t from = len > 3 ? len - 3 : 0;
        len += (size_t)k;
        for (size_t i = from; i + 4 <= len; i++)
            if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
                end = buf + i + 4;
                break;
            }
    }
    size_t hlen = (size_t)(end - buf), vlen = 0;
    if (hlen < 12 || memcmp(buf, "HTTP/1.1 101", 12) != 0) {
        const char *eol = memchr(buf, '\r', hlen);
        rc = core_fail(ADBC_EPROTO, "DevTools: the page refused the WebSocket: \"%.*s\"",
                       (int)((eol ? eol : buf + hlen) - buf > 80 ? 80 : (eol ? eol : buf + hlen) - buf),
                       buf);
        core_free(buf);
        return rc;
    }
    const char *acc = header(buf, hlen, "Sec-WebSocket-Accept", &vlen);
    if (!acc || vlen != strlen(want) || memcmp(acc, want, vlen) != 0) {
        core_free(buf);
        return core_fail(ADBC_EPROTO, "DevTools: a wrong Sec-WebSocket-Accept in the handshake");
    }
    if (len > hlen) {
        c->left = core_malloc(len - hlen);
        if (!c->left) {
            core_free(buf);
            return core_fail(ADBC_ENOMEM, "out of memory");
        }
        memcpy(c->left, end, len - hlen);
        c->left_len = len - hlen;
    }
    core_free(buf);
    return 0;
}

int adbc_cdp_open(adbc_cdp **out, adbc_conn *conn, const char *socket, const char *path,
                  int timeout_ms)
{
    if (!out || !conn || !socket || !path || !*socket || path[0] != '/' ||
        strpbrk(path, "\r\n ") || strlen(socket) > 200)
        return core_fail(ADBC_EINVAL, "adbc_cdp_open: need out, a connection, a socket name "
                                      "and a path starting with '/'");
    *out = NULL;
    adbc_cdp *c = core_calloc(1, sizeof *c);
    if (!c)
        return core_fail(ADBC_ENOMEM, "out of memory");
    c->deadline = core_deadline(timeout_ms);
    char svc[240];
    snprintf(svc, sizeof svc, "localabstract:%s", socket);
    int rc = adbc_stream_open(&c->st, conn, svc, timeout_ms);
    if (rc < 0) {
        core_free(c);
        return rc;
    }
    rc = handshake(c, path);
    if (rc == 0) {
        struct wslay_event_callbacks cb = {on_recv, on_send, on_mask, NULL, NULL, NULL, on_msg};
        if (wslay_event_context_client_init(&c->ws, &cb, c) != 0)
            rc = core_fail(ADBC_ENOMEM, "out of memory for the WebSocket");
        else
            wslay_event_config_set_max_recv_msg_length(c->ws, CDP_MAX_MSG);
    }
    if (rc < 0) {
        adbc_cdp_close(c);
        return rc;
    }
    c->next_id = 1;
    *out = c;
    return 0;
}

static int io_fail(adbc_cdp *c, const char *what)
{
    if (c->io_error)
        return core_fail(c->io_error, "DevTools: %s: %s", what, c->io_msg);
    return core_fail(ADBC_EPROTO, "DevTools: %s: the WebSocket failed", what);
}

int adbc_cdp_send(adbc_cdp *c, const char *method, const char *params, int timeout_ms)
{
    if (!c || !method || !*method || strpbrk(method, "\"\\") || strlen(method) > 100)
        return core_fail(ADBC_EINVAL, "adbc_cdp_send: need a session and a method name");
    if (c->closed || c->io_error)
        return core_fail(ADBC_ECLOSED, "DevTools: the page's WebSocket is closed");
    c->deadline = core_deadline(timeout_ms);
    size_t plen = params ? strlen(params) : 0;
    size_t cap = plen + strlen(method) + 64;
    char *msg = core_malloc(cap);
    if (!msg)
        return core_fail(ADBC_ENOMEM, "out of memory for a DevTools command");
    int id = c->next_id++;
    int n = snprintf(msg, cap, "{\"id\":%d,\"method\":\"%s\"%s%s}", id, method,
                     plen ? ",\"params\":" : "", plen ? params : "");
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)msg, (size_t)n};
    int rc = wslay_event_queue_msg(c->ws, &m) == 0 ? 0 : ADBC_ENOMEM;
    while (rc == 0 && wslay_event_want_write(c->ws))
        if (wslay_event_send(c->ws) != 0)
            rc = io_fail(c, method);
    core_free(msg);
    if (rc == ADBC_ENOMEM)
        return core_fail(ADBC_ENOMEM, "out of memory for a DevTools command");
    return rc < 0 ? rc : id;
}

int adbc_cdp_wait(char **result, size_t *len, adbc_cdp *c, int id, int timeout_ms)
{
    if (result)
        *result = NULL;
    if (len)
        *len = 0;
    if (!c || id < 1)
        return core_fail(ADBC_EINVAL, "adbc_cdp_wait: need a session and a command id");
    c->deadline = core_deadline(timeout_ms);
    for (;;) {
        for (size_t i = 0; i < c->nkept; i++) {
            if (c->kept[i].id != id)
                continue;
            cdp_reply r = c->kept[i];
            c->kept[i] = c->kept[--c->nkept];
            if (r.error) {
                int rc = core_fail(ADBC_EREMOTE, "DevTools: the page answered command %d with "
                                                 "an error: %s", id, r.text);
                core_free(r.text);
                return rc;
            }
            if (result)
                *result = r.text;
            else
                core_free(r.text);
            if (len)
                *len = r.len;
            return 0;
        }
        if (c->bad)
            return core_fail(ADBC_EPROTO, "DevTools: a malformed message: %s", c->bad_msg);
        if (c->closed)
            return core_fail(ADBC_ECLOSED, "DevTools: the page closed the WebSocket");
        if (c->io_error)
            return io_fail(c, "reading a reply");
        if (c->deadline >= 0 && core_remaining(c->deadline) == 0)
            return core_fail(ADBC_ETIMEDOUT, "DevTools: no reply to command %d within %d ms",
                             id, timeout_ms);
        c->may_block = 1;
        if (wslay_event_recv(c->ws) != 0 && !c->io_error)
            return core_fail(ADBC_EPROTO, "DevTools: a broken WebSocket frame from the page");
        /* A close frame is answered by wslay; send what it queued. */
        while (wslay_event_want_write(c->ws) && !c->io_error)
            if (wslay_event_send(c->ws) != 0)
                break;
    }
}

int adbc_cdp_call(char **result, size_t *len, adbc_cdp *c, const char *method,
                  const char *params, int timeout_ms)
{
    int64_t deadline = core_deadline(timeout_ms);
    int id = adbc_cdp_send(c, method, params, timeout_ms);
    if (id < 0)
        return id;
    return adbc_cdp_wait(result, len, c, id, core_remaining(deadline));
}

unsigned long cdp_events(const adbc_cdp *c)
{
    return c ? c->events : 0;
}

void adbc_cdp_close(adbc_cdp *c)
{
    if (!c)
        return;
    if (c->ws)
        wslay_event_context_free(c->ws);
    if (c->st)
        adbc_stream_close(c->st);
    for (size_t i = 0; i < c->nkept; i++)
        core_free(c->kept[i].text);
    core_free(c->kept);
    core_free(c->left);
    core_free(c);
}

#else /* !ADBC_HAVE_WSLAY */

static int no_ws(void)
{
    return core_fail(ADBC_EUNSUPPORTED, "DevTools: this adbc was built without wslay "
                                        "(ADBC_WITH_WSLAY), so it cannot open a page's WebSocket");
}

int adbc_cdp_open(adbc_cdp **out, adbc_conn *conn, const char *socket, const char *path,
                  int timeout_ms)
{
    (void)conn, (void)socket, (void)path, (void)timeout_ms;
    if (out)
        *out = NULL;
    return no_ws();
}

int adbc_cdp_send(adbc_cdp *c, const char *method, const char *params, int timeout_ms)
{
    (void)c, (void)method, (void)params, (void)timeout_ms;
    return no_ws();
}

int adbc_cdp_wait(char **result, size_t *len, adbc_cdp *c, int id, int timeout_ms)
{
    (void)c, (void)id, (void)timeout_ms;
    if (result)
        *result = NULL;
    if (len)
        *len = 0;
    return no_ws();
}

int adbc_cdp_call(char **result, size_t *len, adbc_cdp *c, const char *method,
                  const char *params, int timeout_ms)
{
    (void)c, (void)method, (void)params, (void)timeout_ms;
    if (result)
        *result = NULL;
    if (len)
        *len = 0;
    return no_ws();
}

unsigned long cdp_events(const adbc_cdp *c)
{
    (void)c;
    return 0;
}

void adbc_cdp_close(adbc_cdp *c)
{
    (void)c;
}

#endif
