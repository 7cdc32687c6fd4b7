/* SPDX-License-Identifier: Apache-2.0 */
/* One HTTPS POST to a model's endpoint, through libcurl's multi interface
 * so a cancel is seen within 50 ms even while the server is silent (the
 * easy interface's progress callback can go a second between calls). The
 * handle is kept between requests: the next step reuses the connection
 * and its TLS session instead of paying a handshake per step.
 *
 * What keeps the key where it belongs: redirects are never followed (a 3xx
 * comes back as a status); only http and https are allowed; curl's verbose
 * output is never enabled; the header lines are built by the caller and
 * never copied into a message. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ops_llm_int.h"

#define HTTP_MAX_BODY (8u << 20)

struct ops_llm_http {
    CURL *easy;
    CURLM *multi;
};

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static CURLcode http_init_rc;

static void http_global_init(void)
{
    http_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int ops_llm_http_new(ops_llm_http **out, ops_err *e)
{
    pthread_once(&http_once, http_global_init);
    if (http_init_rc != CURLE_OK)
        return ops_fail(e, OPS_EFAIL, "libcurl did not initialise: %s",
                        curl_easy_strerror(http_init_rc));
    ops_llm_http *h = calloc(1, sizeof(*h));
    if (!h)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    h->easy = curl_easy_init();
    h->multi = curl_multi_init();
    if (!h->easy || !h->multi) {
        ops_llm_http_free(h);
        return ops_fail(e, OPS_EFAIL, "libcurl: cannot make a handle (out of memory)");
    }
    *out = h;
    return 0;
}

void ops_llm_http_free(ops_llm_http *h)
{
    if (!h)
        return;
    if (h->multi)
        curl_multi_cleanup(h->multi);
    if (h->easy)
        curl_easy_cleanup(h->easy);
    free(h);
}

void ops_llm_http_res_free(ops_llm_http_res *r)
{
    if (!r)
        return;
    free(r->body);
    memset(r, 0, sizeof(*r));
}

typedef struct xfer {
    ops_llm_http_res *res;
    size_t cap;
    int too_big;
    atomic_int *cancel;
} xfer;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    ops_llm_http_res *r = x->res;
    size_t len = size * n;
    if (r->len + len > HTTP_MAX_BODY) {
        x->too_big = 1;
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    if (r->len + len + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 16384;
        while (cap < r->len + len + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b)
            return 0;
        r->body = b;
        x->cap = cap;
    }
    memcpy(r->body + r->len, p, len);
    r->len += len;
    r->body[r->len] = 0;
    return len;
}

/* Copy the value of header line p[0..len) into dst when its name is name. */
static int header_value(const char *p, size_t len, const char *name, char *dst, size_t cap)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':')
        return 0;
    p += nl + 1;
    len -= nl + 1;
    while (len && (*p == ' ' || *p == '\t')) {
        p++;
        len--;
    }
    while (len && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
        len--;
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (unsigned char)p[i] < 0x20 || (unsigned char)p[i] >= 0x7F ? '?' : p[i];
    dst[n] = 0;
    return 1;
}

/* Retry-After: delay-seconds or an HTTP date (RFC 9110 10.2.3);
 * retry-after-ms: milliseconds (OpenAI's). Unreadable: ignored. */
static void retry_after(ops_llm_http_res *r, const char *v, int ms)
{
    char *end;
    if (*v >= '0' && *v <= '9') {
        long long x = strtoll(v, &end, 10);
        if (*end == 0 && x >= 0 && x < 86400000LL) {
            int64_t t = ms ? x : x * 1000;
            if (ms || r->retry_after_ms < 0)
                r->retry_after_ms = t;
        }
        return;
    }
    if (ms)
        return;
    time_t when = curl_getdate(v, NULL);
    if (when == (time_t)-1)
        return;
    time_t now = time(NULL);
    if (r->retry_after_ms < 0)
        r->retry_after_ms = when > now ? (int64_t)(when - now) * 1000 : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    ops_llm_http_res *r = x->res;
    size_t len = size * n;
    char v[256];
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* a new response (after a 100 Continue): forget the last one's */
        r->retry_after_ms = -1;
        r->request_id[0] = r->location[0] = 0;
    } else if (header_value(p, len, "retry-after", v, sizeof(v))) {
        retry_after(r, v, 0);
    } else if (header_value(p, len, "retry-after-ms", v, sizeof(v))) {
        retry_after(r, v, 1);
    } else if (header_value(p, len, "request-id", v, sizeof(v)) ||
               header_value(p, len, "x-request-id", v, sizeof(v))) {
        snprintf(r->request_id, sizeof(r->request_id), "%.95s", v);
    } else if (header_value(p, len, "location", v, sizeof(v))) {
        snprintf(r->location, sizeof(r->location), "%.255s", v);
    }
    return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    xfer *x = ud;
    return x->cancel && atomic_load(x->cancel) ? 1 : 0;
}

static int net_retryable(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return 1;
    default:
        return 0;
    }
}

int ops_llm_http_post(ops_llm_http *h, const char *url, const char *const *headers,
                      const char *body, size_t len, int connect_ms, int timeout_ms,
                      atomic_int *cancel, ops_llm_http_res *res)
{
    memset(res, 0, sizeof(*res));
    res->retry_after_ms = -1;
    struct curl_slist *hl = NULL;
    for (size_t i = 0; headers && headers[i]; i++) {
        struct curl_slist *n = curl_slist_append(hl, headers[i]);
        if (!n) {
            curl_slist_free_all(hl);
            snprintf(res->err, sizeof(res->err), "out of memory");
            return -1;
        }
        hl = n;
    }
    xfer x = {.res = res, .cancel = cancel};
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *c = h->easy;
    curl_easy_reset(c); /* keeps the connection cache and the TLS sessions */
    curl_easy_setopt(c, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "adbc-agent");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);

    CURLcode rc = CURLE_OK;
    if (curl_multi_add_handle(h->multi, c) != CURLM_OK) {
        curl_slist_free_all(hl);
        snprintf(res->err, sizeof(res->err), "libcurl: cannot start the transfer");
        return -1;
    }
    int running = 1, cancelled = 0;
    while (running) {
        if (curl_multi_perform(h->multi, &running) != CURLM_OK)
            break;
        if (cancel && atomic_load(cancel)) {
            cancelled = 1;
            break;
        }
        if (running && curl_multi_poll(h->multi, NULL, 0, 50, NULL) != CURLM_OK)
            break;
    }
    int msgs;
    CURLMsg *m;
    int got = 0;
    while ((m = curl_multi_info_read(h->multi, &msgs)) != NULL)
        if (m->msg == CURLMSG_DONE && m->easy_handle == c) {
            rc = m->data.result;
            got = 1;
        }
    if (!got && !cancelled)
        rc = CURLE_RECV_ERROR;
    curl_multi_remove_handle(h->multi, c);
    curl_slist_free_all(hl);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);

    if (cancelled || rc == CURLE_ABORTED_BY_CALLBACK) {
        res->cancelled = 1;
        snprintf(res->err, sizeof(res->err), "cancelled");
        return -1;
    }
    if (rc != CURLE_OK) {
        res->curl_rc = (int)rc;
        res->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        res->retryable_net = net_retryable(rc);
        if (x.too_big)
            snprintf(res->err, sizeof(res->err), "the answer is larger than %u MiB",
                     HTTP_MAX_BODY >> 20);
        else
            snprintf(res->err, sizeof(res->err), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
        return -1;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    res->status = (int)status;
    return 0;
}
