/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — WebView and Chrome DevTools sockets on the device.
 *
 * Apps with debuggable WebViews (and Chrome) listen on abstract unix
 * sockets named webview_devtools_remote_<pid>, chrome_devtools_remote or
 * *_devtools_remote*, which serve the DevTools HTTP endpoints (/json/list:
 * the pages) and WebSocket. adbc finds them in /proc/net/unix, names the
 * package that owns each pid (/proc/<pid>/cmdline), and asks each socket
 * for its pages with GET /json/list sent over a stream straight to the
 * socket: no local port. Everything an app sends is bounded and parsed
 * defensively (the parsers are fuzzed: fuzz/fuzz_http.c).
 */
#ifndef ADBC_WEBVIEW_H
#define ADBC_WEBVIEW_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a small HTTP/1.1 client over a stream ---- */

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_http_response {
    int status;       /* 200 */
    char *body;       /* NUL-terminated copy */
    size_t body_len;
} adbc_http_response;

/* Parse a whole response held in buf: status line, headers, then a body by
 * Content-Length, chunked transfer coding, or up to the end of the data
 * when eof says the peer closed. 1: complete (out filled; free it with
 * adbc_http_response_free), 0: more bytes are needed, < 0: malformed
 * (ADBC_EPROTO, message says how). */
ADBC_API int adbc_http_parse(adbc_http_response *out, const uint8_t *buf, size_t len, int eof);

/* GET path over a new stream to `service` ("localabstract:NAME"), reading
 * at most max_bytes of response (0: 4 MiB) within timeout_ms. */
ADBC_API int adbc_http_get(adbc_http_response *out, adbc_conn *c, const char *service, const char *path,
                  size_t max_bytes, int timeout_ms);
ADBC_API void adbc_http_response_free(adbc_http_response *r);

/* ---- DevTools sockets ---- */

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_devtools_page {
    char *id, *type, *title, *url, *ws_url; /* "" when the app left one out */
} adbc_devtools_page;

/* The pages of a /json/list body (a JSON array of objects; fields other
 * than id, type, title, url and webSocketDebuggerUrl are skipped). Returns
 * the count (>= 0) with *out (free it with adbc_devtools_pages_free), or ADBC_EPROTO for anything else. */
ADBC_API int adbc_devtools_parse_pages(adbc_devtools_page **out, const char *json, size_t len);
ADBC_API void adbc_devtools_pages_free(adbc_devtools_page *p, size_t n);

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_devtools_socket {
    char *name;       /* abstract name without '@': "webview_devtools_remote_1234" */
    int pid;          /* from the name; 0 when it has none */
    char *package;    /* owner of pid ("com.example.app"), or "" */
    adbc_devtools_page *pages;
    size_t npages;
    int error;        /* 0, or why the pages could not be read */
    char *message;    /* "" or the error's text */
} adbc_devtools_socket;

/* Every DevTools socket of the device with its pages. timeout_ms bounds
 * each request. */
ADBC_API int adbc_devtools_list(adbc_devtools_socket **out, size_t *n, adbc_conn *c, int timeout_ms);
ADBC_API void adbc_devtools_free(adbc_devtools_socket *s, size_t n);

/* The DevTools socket names in a /proc/net/unix text (abstract names that
 * contain "devtools_remote"), each once. Returns the count with *out
 * allocated: free each name, then the array, with adbc_free(). */
ADBC_API int adbc_devtools_scan_unix(char ***out, const char *text, size_t len);

/* ---- The DevTools protocol (CDP) to one page ---- */

/* A WebSocket session to one page, over a stream to its socket (no port on
 * the host). Needs a build with wslay (ADBC_WITH_WSLAY); without it every
 * call returns ADBC_EUNSUPPORTED. One thread at a time per session. */
typedef struct adbc_cdp adbc_cdp;

/* Open the page's WebSocket: socket is the abstract name as listed
 * ("webview_devtools_remote_1234"), path the page's WebSocket path
 * ("/devtools/page/<id>", the path of its webSocketDebuggerUrl).
 * ADBC_EPROTO when the socket refuses the upgrade (the message quotes its
 * status line), ADBC_ETIMEDOUT past timeout_ms. */
ADBC_API int adbc_cdp_open(adbc_cdp **out, adbc_conn *c, const char *socket, const char *path,
                           int timeout_ms);

/* Send a command (params: a JSON object's text, or NULL for none). Returns
 * its id (> 0), for adbc_cdp_wait. Commands may be sent ahead of their
 * replies (pipelined). */
ADBC_API int adbc_cdp_send(adbc_cdp *cdp, const char *method, const char *params, int timeout_ms);

/* Wait for the reply to id. *result (may be NULL) gets the text of its
 * "result" object, NUL-terminated; free it with adbc_free(). Replies to other commands
 * that arrive meanwhile are kept for their own wait; events are dropped.
 * ADBC_EREMOTE when the page answered with an error (the message quotes
 * it), ADBC_ETIMEDOUT when no reply came in time (the session stays
 * usable), ADBC_ECLOSED when the page went away. */
ADBC_API int adbc_cdp_wait(char **result, size_t *len, adbc_cdp *cdp, int id, int timeout_ms);

/* adbc_cdp_send then adbc_cdp_wait, within timeout_ms in all. */
ADBC_API int adbc_cdp_call(char **result, size_t *len, adbc_cdp *cdp, const char *method,
                           const char *params, int timeout_ms);

/* Close the session (NULL is fine). */
ADBC_API void adbc_cdp_close(adbc_cdp *cdp);

#ifdef __cplusplus
}
#endif
#endif
