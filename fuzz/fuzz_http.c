/* SPDX-License-Identifier: Apache-2.0 */
/* What a DevTools socket (any app) sends: the HTTP response parser, at every
 * split point's "more needed" answer and at end of data, then the
 * /json/list page reader over the body, and the /proc/net/unix scanner over
 * the raw input. */
#include <stdlib.h>
#include <string.h>

#include "adbc/webview.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adbc_http_response r;
    for (int eof = 0; eof < 2; eof++) {
        int rc = adbc_http_parse(&r, data, size, eof);
        FUZZ_ASSERT(rc <= 1);
        if (rc == 1) {
            FUZZ_ASSERT(r.body != NULL && r.body[r.body_len] == '\0');
            FUZZ_ASSERT(r.status >= 0 && r.status <= 999);
            adbc_devtools_page *pages;
            int n = adbc_devtools_parse_pages(&pages, r.body, r.body_len);
            for (int i = 0; i < n; i++)
                FUZZ_ASSERT(pages[i].id && pages[i].type && pages[i].title && pages[i].url &&
                            pages[i].ws_url);
            if (n >= 0)
                adbc_devtools_pages_free(pages, (size_t)n);
            adbc_http_response_free(&r);
        }
    }
    /* A shorter prefix never completes what the whole did not. */
    if (size > 1) {
        int rc = adbc_http_parse(&r, data, size / 2, 0);
        if (rc == 1)
            adbc_http_response_free(&r);
    }
    adbc_devtools_page *pages;
    int n = adbc_devtools_parse_pages(&pages, (const char *)data, size);
    if (n >= 0)
        adbc_devtools_pages_free(pages, (size_t)n);
    char **names;
    n = adbc_devtools_scan_unix(&names, (const char *)data, size);
    for (int i = 0; i < n; i++) {
        FUZZ_ASSERT(strstr(names[i], "devtools_remote") != NULL);
        adbc_free(names[i]);
    }
    if (n >= 0)
        adbc_free(names);
    return 0;
}
