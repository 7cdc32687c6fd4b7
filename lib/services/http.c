/* SPDX-License-Identifier: Apache-2.0 */
/* A small HTTP/1.1 client over an ADB stream, for DevTools endpoints. The
 * parser works on the whole response buffered so far (responses are small
 * and bounded by the caller), so it is a pure function: fuzzed by
 * fuzz/fuzz_http.c. */
#include "adbc/webview.h"
#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEADERS_MAX (64 * 1024)
#define DEFAULT_MAX (4u * 1024 * 1024)

void adbc_http_response_free(adbc_http_response *r)
{
    if (!r)
        return;
    core_free(r->body);
    memset(r, 0, sizeof *r);
}

static const uint8_t *find_crlf(const uint8_t *p, const uint8_t *end)
{
    for (; p + 1 < end; p++)
        if (p[0] == '\r' && p[1] == '\n')
            return p;
    return NULL;
}

static int set_body(adbc_http_response *out, const uint8_t *p, size_t n)
{
    out->body = core_malloc(n + 1);
    if (!out->body)
        return core_fail(ADBC_ENOMEM, "out of memory for an HTTP body");
    if (n)
        memcpy(out->body, p, n);
    out->body[n] = '\0';
    out->body_len = n;
    return 1;
}

/* Chunked body from p: 1 done (out->body set), 0 more needed, < 0 bad. */
static int dechunk(const uint8_t *p, const uint8_t *end, int eof, adbc_http_response *out)
{
    size_t total = 0;
    const uint8_t *scan = p;
    /* First pass: validate and size; second: copy. */
    for (int pass = 0; pass < 2; pass++) {
        scan = p;
        size_t off = 0;
        for (;;) {
            const uint8_t *eol = find_crlf(scan, end);
            if (!eol)
                return eof ? core_fail(ADBC_EPROTO, "HTTP: the chunked body ends early") : 0;
            size_t sz = 0;
            const uint8_t *q = scan;
            int digits = 0;
            for (; q < eol && isxdigit(*q); q++, digits++) {
                if (sz > (SIZE_MAX >> 4) || digits > 8)
                    return core_fail(ADBC_EPROTO, "HTTP: chunk size too large");
                sz = sz * 16 + (size_t)(isdigit(*q) ? *q - '0' : (tolower(*q) - 'a' + 10));
            }
            if (digits == 0 || (q < eol && *q != ';' && *q != ' '))
                return core_fail(ADBC_EPROTO, "HTTP: bad chunk size line");
            scan = eol + 2;
            if (sz == 0) {
                if (pass == 0) {
                    total = off;
                    out->body = core_malloc(total + 1);
                    if (!out->body)
                        return core_fail(ADBC_ENOMEM, "out of memory for an HTTP body");
                    break;
                }
                out->body[off] = '\0';
                out->body_len = off;
                return 1;
            }
            if ((size_t)(end - scan) < sz + 2)
                return eof ? core_fail(ADBC_EPROTO, "HTTP: the chunked body ends early") : 0;
            if (scan[sz] != '\r' || scan[sz + 1] != '\n')
                return core_fail(ADBC_EPROTO, "HTTP: chunk not followed by CRLF");
            if (pass == 1)
                memcpy(out->body + off, scan, sz);
            off += sz;
            scan += sz + 2;
        }
    }
    return core_fail(ADBC_EPROTO, "HTTP: chunked body");
}

int adbc_http_parse(adbc_http_response *out, const uint8_t *buf, size_t len, int eof)
{
    if (!out || (!buf && len))
        return core_null(__func__, !out ? "out" : "buf");
    memset(out, 0, sizeof *out);
    const uint8_t *end = buf + len;
    const uint8_t *eol = find_crlf(buf, end);
    if (!eol) {
        if (len > HEADERS_MAX || eof)
            return core_fail(ADBC_EPROTO, "HTTP: no status line in %zu bytes", len);
        return 0;
    }
    /* "HTTP/1.1 200 OK" */
    if (eol - buf < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' ||
        !isdigit(buf[9]) || !isdigit(buf[10]) || !isdigit(buf[11]) ||
        (eol - buf > 12 && buf[12] != ' '))
        return core_fail(ADBC_EPROTO, "HTTP: bad status line \"%.*s\"",
                         (int)(eol - buf < 40 ? eol - buf : 40), (const char *)buf);
    int status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    long long clen = -1;
    int chunked = 0;
    const uint8_t *p = eol + 2;
    for (;;) {
        const uint8_t *e = find_crlf(p, end);
        if (!e) {
            if (len > HEADERS_MAX || eof)
                return core_fail(ADBC_EPROTO, "HTTP: headers do not end");
            return 0;
        }
        if (e == p) {
            p = e + 2;
            break;
        }
        const uint8_t *colon = memchr(p, ':', (size_t)(e - p));
        if (!colon)
            return core_fail(ADBC_EPROTO, "HTTP: header line without ':'");
        size_t klen = (size_t)(colon - p);
        const uint8_t *v = colon + 1;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        size_t vlen = (size_t)(e - v);
        if (klen == 14 && strncasecmp((const char *)p, "Content-Length", 14) == 0) {
            long long n = 0;
            if (vlen == 0 || vlen > 18)
                return core_fail(ADBC_EPROTO, "HTTP: bad Content-Length");
            for (size_t i = 0; i < vlen; i++) {
                if (!isdigit(v[i]))
                    return core_fail(ADBC_EPROTO, "HTTP: bad Content-Length");
                n = n * 10 + (v[i] - '0');
            }
            if (clen >= 0 && clen != n)
                return core_fail(ADBC_EPROTO, "HTTP: two different Content-Length headers");
            clen = n;
        } else if (klen == 17 && strncasecmp((const char *)p, "Transfer-Encoding", 17) == 0) {
            chunked = vlen >= 7 && strncasecmp((const char *)v + vlen - 7, "chunked", 7) == 0;
        }
        p = e + 2;
        if ((size_t)(p - buf) > HEADERS_MAX)
            return core_fail(ADBC_EPROTO, "HTTP: headers longer than %d bytes", HEADERS_MAX);
    }
    out->status = status;
    int rc;
    if (status / 100 == 1 || status == 204 || status == 304)
        rc = set_body(out, p, 0);
    else if (chunked)
        rc = dechunk(p, end, eof, out);
    else if (clen >= 0) {
        if ((unsigned long long)(end - p) < (unsigned long long)clen)
            return eof ? core_fail(ADBC_EPROTO,
                                   "HTTP: the body ends after %zu of %lld bytes (Content-Length)",
                                   (size_t)(end - p), clen)
                       : 0;
        rc = set_body(out, p, (size_t)clen);
    } else if (eof)
        rc = set_body(out, p, (size_t)(end - p));
    else
        return 0;
    if (rc != 1) {
        adbc_http_response_free(out);
        return rc;
    }
    return 1;
}

int adbc_http_get(adbc_http_response *out, adbc_conn *c, const char *service, const char *path,
                  size_t max_bytes, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    memset(out, 0, sizeof *out);
    if (!max_bytes)
        max_bytes = DEFAULT_MAX;
    if (!path || path[0] != '/' || strpbrk(path, "\r\n "))
        return core_fail(ADBC_EINVAL, "HTTP: bad path");
    int64_t deadline = core_deadline(timeout_ms);
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, service, timeout_ms);
    if (rc < 0)
        return rc;
    char req[1200];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "User-Agent: adbc\r\n\r\n",
                     path);
    if (n < 0 || (size_t)n >= sizeof req) {
        adbc_stream_close(st);
        return core_fail(ADBC_EINVAL, "HTTP: path too long");
    }
    rc = adbc_stream_write(st, req, (size_t)n, core_remaining(deadline));
    core_buf b = {0};
    while (rc == 0) {
        if (b.len == max_bytes) {
            rc = core_fail(ADBC_EPROTO, "HTTP: %s sent more than %zu bytes", service, max_bytes);
            break;
        }
        if (b.cap - b.len <= 1 && core_buf_reserve(&b, b.len ? b.len : 16384) < 0) {
            rc = core_fail(ADBC_ENOMEM, "out of memory reading HTTP");
            break;
        }
        size_t want = b.cap - b.len - 1;
        if (want > max_bytes - b.len)
            want = max_bytes - b.len;
        ssize_t k = adbc_stream_read(st, b.p + b.len, want, core_remaining(deadline));
        if (k < 0) {
            rc = (int)k;
            break;
        }
        b.len += (size_t)k;
        int pr = adbc_http_parse(out, (const uint8_t *)b.p, b.len, k == 0);
        if (pr == 1)
            break;
        if (pr < 0) {
            rc = pr;
            break;
        }
        if (k == 0) {
            rc = core_fail(ADBC_EPROTO, "HTTP: %s closed before a whole response", service);
            break;
        }
    }
    core_buf_free(&b);
    adbc_stream_close(st);
    return rc;
}
