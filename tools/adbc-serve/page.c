/* SPDX-License-Identifier: Apache-2.0 */
/* The inspector page (docs/serve.md): GET / and its script and style sheet,
 * compiled into the program from page/ (page.cmake). They carry no secret
 * and need no token: the page asks the person for the token, keeps it in
 * the tab's sessionStorage and sends it as the Authorization header of
 * the /v1/ calls it makes, which are the documented API (docs/openapi.yaml)
 * and nothing else. The Content-Security-Policy every answer carries (http.c)
 * lets the page run only these same-origin files. */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

int serve_page(const serve_req *r, char **body, size_t *len, const char **ctype)
{
    const serve_asset *a;
    for (a = serve_assets; a->path && strcmp(a->path, r->path) != 0; a++) {
    }
    if (!a->path)
        return 0;
    if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
        *body = serve_error_json("method_not_allowed", "the page is read with GET", len);
        return 405;
    }
    /* The answer is freed after sending; the page is a few tens of KiB. */
    *body = malloc(a->len ? a->len : 1);
    if (!*body)
        return 500;
    memcpy(*body, a->data, a->len);
    *len = a->len;
    *ctype = a->ctype;
    return 200;
}
