/* SPDX-License-Identifier: Apache-2.0 */
/* Seeing the screen: snapshot, find, and the waits. A snapshot taken here
 * becomes the device's latest: the refs the act tools take are its refs. */
#include "mcp.h"

#include "adbc/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void mcp_act_opts(mcp_call *c, adbc_act_opts *o, adbc_ui_opts *uo)
{
    adbc_ui_opts_init(uo);
    uo->timeout_ms = call_remaining(c);
    adbc_act_opts_init(o);
    o->timeout_ms = call_remaining(c);
    o->verify = 1; /* acts on refs always find the element again first */
    o->ui = uo;
}

/* Add snap to the result and keep it as the device's latest (takes it). */
static int present(mcp_call *c, adbc_ui_snap *snap, int json, const char *heading)
{
    mcp_dev *d = c->dev;
    adbc_ui_snap_free(d->last);
    d->last = snap;
    size_t nrefs = adbc_ui_reftab_count(adbc_ui_snap_refs(snap));
    if (json) {
        char *js = NULL;
        size_t len = 0;
        int rc = adbc_ui_snap_json(&js, &len, snap);
        if (rc < 0)
            return call_fail_adbc(c, rc, "formatting the snapshot as JSON");
        if (heading)
            call_text_raw(c, heading);
        call_text_raw(c, js);
        free(js);
        return 0;
    }
    const char *text = adbc_ui_snap_text(snap, NULL);
    call_text(c, "%s%sscreen %s on %s (%s), %zu refs%s\n%s", heading ? heading : "",
              heading ? "\n" : "", adbc_ui_snap_id(snap), d->serial, device_kind_name(d->kind),
              nrefs, nrefs ? "; act on them with {\"ref\": N}" : "",
              *text ? text : "(nothing on screen to show)");
    return 0;
}

int ui_snapshot_into(mcp_call *c, int json, const char *heading)
{
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = call_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_snapshot(&snap, c->dev->conn, &uo);
    if (rc < 0)
        return call_fail_adbc(c, rc, "snapshot");
    return present(c, snap, json, heading);
}

void ui_after_act(mcp_call *c)
{
    int settle = c->srv->cfg.settle_ms;
    if (settle > call_remaining(c) / 2)
        settle = call_remaining(c) / 2;
    struct timespec ts = {settle / 1000, (long)(settle % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = call_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_snapshot(&snap, c->dev->conn, &uo);
    if (rc < 0) {
        /* The act was done; only the look afterwards failed. */
        call_text(c, "(no snapshot after the act: %s; call snapshot to see the screen)",
                  adbc_last_error());
        return;
    }
    present(c, snap, 0, "after:");
}

const adbc_ui_ref *ui_ref(mcp_call *c, int ref)
{
    mcp_dev *d = c->dev;
    if (!d->last) {
        call_fail(c, "no snapshot of %s yet: call snapshot first, then use a ref from it",
                  d->serial);
        return NULL;
    }
    const adbc_ui_reftab *t = adbc_ui_snap_refs(d->last);
    const adbc_ui_ref *r = adbc_ui_reftab_get(t, ref);
    if (!r) {
        size_t n = adbc_ui_reftab_count(t);
        call_fail(c, "ref %d is not in the latest snapshot (%s%zu): take a snapshot and use a "
                     "ref it shows", ref, n ? "refs 1.." : "it has no refs, ", n);
        return NULL;
    }
    return r;
}

static int t_snapshot(mcp_call *c, const cJSON *a)
{
    const char *format = NULL;
    if (arg_str(c, a, "format", 0, 16, &format) != 0)
        return -1;
    int json = 0;
    if (format && strcmp(format, "json") == 0)
        json = 1;
    else if (format && strcmp(format, "text") != 0)
        return call_fail(c, "argument 'format' must be \"text\" or \"json\"");
    if (call_device(c) != 0)
        return -1;
    return ui_snapshot_into(c, json, NULL);
}

static int t_find(mcp_call *c, const cJSON *a)
{
    adbc_ui_selector sel;
    memset(&sel, 0, sizeof(sel));
    sel.size = sizeof sel;
    int contains = 0, nocase = 0;
    if (arg_str(c, a, "text", 0, 4096, &sel.text) || arg_str(c, a, "desc", 0, 4096, &sel.desc) ||
        arg_str(c, a, "resource_id", 0, 512, &sel.resource_id) ||
        arg_str(c, a, "class", 0, 512, &sel.cls) || arg_bool(c, a, "contains", &contains) ||
        arg_bool(c, a, "ignore_case", &nocase))
        return -1;
    if (!sel.text && !sel.desc && !sel.resource_id && !sel.cls)
        return call_fail(c, "find needs at least one of text, desc, resource_id, class");
    sel.flags = (contains ? ADBC_UI_MATCH_CONTAINS : 0) | (nocase ? ADBC_UI_MATCH_NOCASE : 0);
    if (call_device(c) != 0)
        return -1;
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = call_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_snapshot(&snap, c->dev->conn, &uo);
    if (rc < 0)
        return call_fail_adbc(c, rc, "snapshot");
    adbc_ui_snap_free(c->dev->last);
    c->dev->last = snap;
    int *refs = NULL;
    size_t n = 0;
    rc = adbc_ui_find(&refs, &n, snap, &sel);
    if (rc < 0)
        return call_fail_adbc(c, rc, "find");
    char *out = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&out, &cap);
    if (!f) {
        free(refs);
        return call_fail(c, "out of memory");
    }
    fprintf(f, "%zu match%s in screen %s:", n, n == 1 ? "" : "es", adbc_ui_snap_id(snap));
    const adbc_ui_reftab *t = adbc_ui_snap_refs(snap);
    for (size_t i = 0; i < n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, refs[i]);
        if (!r)
            continue;
        const char *cls = strrchr(r->cls, '.');
        fprintf(f, "\n[ref=%d] %s", r->ref, cls ? cls + 1 : r->cls);
        if (r->text[0])
            fprintf(f, " \"%s\"", r->text);
        if (r->desc[0])
            fprintf(f, " (%s)", r->desc);
        if (r->resource_id[0])
            fprintf(f, " id=%s", r->resource_id);
        fprintf(f, " at (%d,%d) bounds [%d,%d][%d,%d]", r->x, r->y, r->x1, r->y1, r->x2, r->y2);
    }
    fclose(f);
    free(refs);
    call_text_raw(c, out ? out : "");
    free(out);
    return 0;
}

static int t_wait_for_text(mcp_call *c, const cJSON *a)
{
    const char *text = NULL;
    int gone = 0, contains = 0, nocase = 0, timeout = 10000;
    if (arg_str(c, a, "text", 1, 4096, &text) || arg_bool(c, a, "gone", &gone) ||
        arg_bool(c, a, "contains", &contains) || arg_bool(c, a, "ignore_case", &nocase) ||
        arg_int(c, a, "timeout_ms", 0, 1, 600000, &timeout))
        return -1;
    if (timeout > c->srv->cfg.call_ms - 1000)
        return call_fail(c, "timeout_ms %d is beyond this server's call limit (%d ms, [timeouts] "
                            "call_ms): use at most %d", timeout, c->srv->cfg.call_ms,
                         c->srv->cfg.call_ms - 1000);
    if (call_device(c) != 0)
        return -1;
    unsigned flags = (gone ? ADBC_UI_WAIT_GONE : 0) | (contains ? ADBC_UI_MATCH_CONTAINS : 0) |
                     (nocase ? ADBC_UI_MATCH_NOCASE : 0);
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = call_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_wait_text(&snap, c->dev->conn, text, flags, timeout, &uo);
    if (rc < 0)
        return call_fail_adbc(c, rc, "wait_for_text");
    return present(c, snap, 0, gone ? "the text is gone:" : "the text is on screen:");
}

static int t_wait_stable(mcp_call *c, const cJSON *a)
{
    int timeout = 10000;
    if (arg_int(c, a, "timeout_ms", 0, 1, 600000, &timeout))
        return -1;
    if (timeout > c->srv->cfg.call_ms - 1000)
        return call_fail(c, "timeout_ms %d is beyond this server's call limit (%d ms): use at "
                            "most %d", timeout, c->srv->cfg.call_ms, c->srv->cfg.call_ms - 1000);
    if (call_device(c) != 0)
        return -1;
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = call_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_wait_stable(&snap, c->dev->conn, timeout, &uo);
    if (rc < 0)
        return call_fail_adbc(c, rc, "wait_stable");
    return present(c, snap, 0, "the screen is stable:");
}

const mcp_tool mcp_tools_ui[] = {
    {"snapshot", "Snapshot the screen",
     "The screen as an indented list of elements, one a line: role, [ref=N] for those you "
     "can act on, \"text\", (description), [states]. Refs are valid for this screen: pass "
     "them to tap, type, scroll, long_press. Call this first, and again when a ref is refused "
     "as stale. format \"json\" gives the same tree as JSON.",
     "{\"type\":\"object\",\"properties\":{\"format\":{\"type\":\"string\",\"enum\":[\"text\","
     "\"json\"],\"description\":\"text (default) or json\"}},\"additionalProperties\":false}",
     t_snapshot, TOOL_READONLY},
    {"find", "Find elements",
     "Take a snapshot and list the refs of elements matching all the given fields: text, "
     "desc (content description), resource_id (\"pkg:id/name\" or just \"name\"), class "
     "(\"Button\" or the full class). contains: substring match; ignore_case. A match without "
     "a ref stands for its nearest actionable ancestor.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},\"desc\":{\"type\":"
     "\"string\"},\"resource_id\":{\"type\":\"string\"},\"class\":{\"type\":\"string\"},"
     "\"contains\":{\"type\":\"boolean\"},\"ignore_case\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     t_find, TOOL_READONLY},
    {"wait_for_text", "Wait for text",
     "Poll snapshots until an element's text or description equals text (contains: "
     "substring; ignore_case), or with gone: true until none does. Fails after timeout_ms "
     "(default 10000) saying what was last seen. Returns the snapshot that satisfied it.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},\"gone\":{\"type\":"
     "\"boolean\"},\"contains\":{\"type\":\"boolean\"},\"ignore_case\":{\"type\":\"boolean\"},"
     "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}},\"required\":[\"text\"],"
     "\"additionalProperties\":false}",
     t_wait_for_text, TOOL_READONLY},
    {"wait_stable", "Wait for a still screen",
     "Poll snapshots until two in a row are the same (animations and loading done), at most "
     "timeout_ms (default 10000). Returns that snapshot.",
     "{\"type\":\"object\",\"properties\":{\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}},"
     "\"additionalProperties\":false}",
     t_wait_stable, TOOL_READONLY},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
