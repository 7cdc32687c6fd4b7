/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap webviews: the device's DevTools sockets (WebViews, Chrome),
 * the package owning each, and each socket's pages, read over a stream
 * straight to the socket. --forward prints ready-to-use forwards. */
#include "snap.h"

#include "adbc/webview.h"

#include <string.h>

static int cmd_webviews(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_webviews[] = {
    {"webviews", cmd_webviews, "webviews [--json] [--forward]",
     "list WebView/Chrome DevTools sockets, their packages and pages"},
    {NULL, NULL, NULL, NULL},
};

static void print_json(const adbc_devtools_socket *s, size_t n)
{
    printf("{\"sockets\":[");
    for (size_t i = 0; i < n; i++) {
        printf("%s{\"socket\":", i ? "," : "");
        snap_json_str(stdout, s[i].name);
        printf(",\"pid\":%d,\"package\":", s[i].pid);
        snap_json_str(stdout, s[i].package);
        printf(",\"pages\":[");
        for (size_t k = 0; k < s[i].npages; k++) {
            const adbc_devtools_page *p = &s[i].pages[k];
            printf("%s{\"id\":", k ? "," : "");
            snap_json_str(stdout, p->id);
            printf(",\"type\":");
            snap_json_str(stdout, p->type);
            printf(",\"title\":");
            snap_json_str(stdout, p->title);
            printf(",\"url\":");
            snap_json_str(stdout, p->url);
            printf(",\"webSocketDebuggerUrl\":");
            snap_json_str(stdout, p->ws_url);
            printf("}");
        }
        printf("]");
        if (s[i].error) {
            printf(",\"error\":");
            snap_json_str(stdout, s[i].message);
        }
        printf("}");
    }
    printf("]}\n");
}

static int cmd_webviews(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_webviews[0];
    int json = 0, forward = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--forward") == 0)
            forward = 1;
        else
            return snap_usage(self, "unknown argument");
    }
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_devtools_socket *s;
    size_t n;
    int rc = adbc_devtools_list(&s, &n, c, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail("webviews", rc);
    if (json) {
        print_json(s, n);
    } else if (forward) {
        for (size_t i = 0; i < n; i++)
            printf("adbc-snap forward tcp:0 localabstract:%s   # %s pid %d\n", s[i].name,
                   *s[i].package ? s[i].package : "?", s[i].pid);
    } else {
        if (n == 0)
            printf("no DevTools sockets (apps must enable WebView debugging)\n");
        for (size_t i = 0; i < n; i++) {
            printf("@%s", s[i].name);
            if (s[i].pid)
                printf("  pid %d", s[i].pid);
            if (*s[i].package)
                printf("  %s", s[i].package);
            printf("\n");
            if (s[i].error)
                printf("  (pages unavailable: %s)\n", s[i].message);
            for (size_t k = 0; k < s[i].npages; k++)
                printf("  %-8s %s  %s\n", s[i].pages[k].type, s[i].pages[k].title,
                       s[i].pages[k].url);
        }
    }
    adbc_devtools_free(s, n);
    return 0;
}
