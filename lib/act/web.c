/* SPDX-License-Identifier: Apache-2.0 */
/* Typing into a web ref (docs/webview.md): the element is found again the
 * way every ref is (act_resolve: a fresh snapshot, web part included, or
 * the recorded record without verification), then reached through the
 * page's DevTools session by the backend node id its resource-id carries:
 * DOM.focus, the caret put at the end (or everything selected, to clear),
 * Input.insertText. A node the page no
 * longer has gives ADBC_ESTALE; nothing is typed anywhere else. */
#include "act/act_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/webview.h"
#include "core/internal.h"
#include "core/jread.h"
#include "ui/ui_observe.h"

int act_is_web(const adbc_ui_ref *ref)
{
    return ref && ref->resource_id && strncmp(ref->resource_id, "web:", 4) == 0;
}

/* "web:<socket>/<page>#<node>" into its parts. */
static int web_target(const char *rid, char *sock, size_t ns, char *page, size_t np, long *node)
{
    const char *s = rid + 4, *slash = strchr(s, '/'), *hash = strrchr(s, '#');
    if (!slash || !hash || hash < slash || (size_t)(slash - s) >= ns ||
        (size_t)(hash - slash - 1) >= np || slash == s || hash == slash + 1)
        return core_fail(ADBC_EINVAL, "not a web ref: resource-id \"%.80s\"", rid);
    char *end;
    *node = strtol(hash + 1, &end, 10);
    if (*end || *node <= 0)
        return core_fail(ADBC_EINVAL, "not a web ref: resource-id \"%.80s\"", rid);
    memcpy(sock, s, (size_t)(slash - s));
    sock[slash - s] = '\0';
    memcpy(page, slash + 1, (size_t)(hash - slash - 1));
    page[hash - slash - 1] = '\0';
    return 0;
}

/* text as a JSON string (quotes included); *out malloc'd. */
static int json_quote(char **out, const char *text)
{
    size_t n = strlen(text);
    char *q = core_malloc(n * 6 + 3), *w = q;
    if (!q)
        return core_fail(ADBC_ENOMEM, "out of memory");
    *w++ = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            *w++ = '\\';
            *w++ = (char)*p;
        } else if (*p < 0x20) {
            w += sprintf(w, "\\u%04x", *p);
        } else {
            *w++ = (char)*p;
        }
    }
    *w++ = '"';
    *w = '\0';
    *out = q;
    return 0;
}

static int stale(const adbc_ui_ref *ref)
{
    return core_fail(ADBC_ESTALE, "stale ref %d (%s \"%.60s\"): the page no longer has this "
                                  "element; take a new snapshot with --web",
                     ref->ref, ref->cls, ref->desc[0] ? ref->desc : ref->text);
}

/* The typing itself, over a DevTools session of the page. */
typedef struct web_job {
    long node;
    int clear, kept;
    const char *text;
    const adbc_ui_ref *rec;
    int64_t deadline;
} web_job;

static int type_on(adbc_cdp *cdp, void *user)
{
    web_job *j = user;
    char params[512], *qtext = NULL, *res = NULL;
    snprintf(params, sizeof params, "{\"backendNodeId\":%ld}", j->node);
    int rc = adbc_cdp_call(NULL, NULL, cdp, "DOM.focus", params, act_left(j->deadline));
    if (rc == ADBC_EREMOTE)
        rc = stale(j->rec);
    /* On a kept session the node's object goes in the session's group,
     * let go of with the objects of its reads (ui_web_on_page); a session of
     * its own lets go of everything when it closes. */
    if (rc == 0 && j->kept)
        snprintf(params, sizeof params, "{\"backendNodeId\":%ld,\"objectGroup\":\"" UI_WEB_GROUP
                 "\"}", j->node);
    if (rc == 0)
        rc = adbc_cdp_call(&res, NULL, cdp, "DOM.resolveNode", params, act_left(j->deadline));
    char *objid = NULL;
    if (rc == 0) {
        jread jr;
        rc = jread_parse(&jr, res, strlen(res));
        if (rc == 0) {
            rc = jread_str(&jr, jread_get(&jr, jread_get(&jr, 0, "object"), "objectId"), &objid);
            jread_free(&jr);
        }
        core_free(res);
        res = NULL;
    }
    /* The caret at the end, or all selected so the text replaces it. */
    char *call = NULL, *qid = NULL;
    if (rc == 0)
        rc = json_quote(&qid, objid);
    if (rc == 0) {
        size_t cap = strlen(qid) + 400;
        call = core_malloc(cap);
        if (!call)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        else
            snprintf(call, cap,
                     "{\"objectId\":%s,\"functionDeclaration\":\"function(c){"
                     "if(typeof this.value!=='string'||!this.setSelectionRange)return;"
                     "var n=this.value.length;if(c)this.setSelectionRange(0,n);"
                     "else this.setSelectionRange(n,n);}\",\"arguments\":[{\"value\":%s}]}",
                     qid, j->clear ? "true" : "false");
    }
    if (rc == 0)
        rc = adbc_cdp_call(NULL, NULL, cdp, "Runtime.callFunctionOn", call, act_left(j->deadline));
    if (rc == 0)
        rc = json_quote(&qtext, j->text);
    if (rc == 0) {
        size_t cap = strlen(qtext) + 16;
        char *p = core_malloc(cap);
        if (!p) {
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        } else {
            snprintf(p, cap, "{\"text\":%s}", qtext);
            rc = adbc_cdp_call(NULL, NULL, cdp, "Input.insertText", p, act_left(j->deadline));
            core_free(p);
        }
    }
    core_free(call);
    core_free(qid);
    core_free(qtext);
    core_free(objid);
    return rc;
}

int act_web_type(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, const char *text,
                 int clear, const adbc_act_opts *o, int64_t deadline)
{
    const adbc_ui_ref *now;
    adbc_ui_snap *snap;
    int rc = act_resolve(where, &now, &snap, c, ref, o, deadline);
    if (rc < 0)
        return rc;
    char sock[256], page[256];
    long node = 0;
    rc = web_target(now->resource_id, sock, sizeof sock, page, sizeof page, &node);
    adbc_ui_ref rec = *now; /* for messages, past the snapshot's life */
    adbc_ui_snap_free(snap);
    if (rc < 0)
        return rc;
    web_job j = {.node = node, .clear = clear, .kept = 1, .text = text, .rec = &rec,
                 .deadline = deadline};
    /* The page's session the snapshot just read it on, when this
     * connection keeps one; else one of its own. */
    rc = ui_web_on_page(c, sock, page, type_on, &j);
    if (rc == 1) {
        char path[300];
        snprintf(path, sizeof path, "/devtools/page/%s", page);
        adbc_cdp *cdp;
        rc = adbc_cdp_open(&cdp, c, sock, path, act_left(deadline));
        if (rc < 0)
            return rc;
        j.kept = 0;
        rc = type_on(cdp, &j);
        adbc_cdp_close(cdp);
    }
    if (rc < 0)
        return rc;
    if (where) {
        where->x = rec.x;
        where->y = rec.y;
    }
    return 0;
}
