/* SPDX-License-Identifier: Apache-2.0 */
/* Seeing the screen: snapshot, find, and the waits. A snapshot taken here
 * becomes the device's latest: the refs the act tools take are its refs.
 * The operations are tools/ops' (shared with adbc-serve); this file presents
 * them as tools. */
#include "ops_tool.h"

#include "adbc/error.h"
#include "ops_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Add the device's latest snapshot to the result. */
static int present(ops_call *c, int json, const char *heading)
{
    ops_dev *d = c->dev;
    const adbc_ui_snap *snap = d->last;
    size_t nrefs = adbc_ui_reftab_count(adbc_ui_snap_refs(snap));
    if (json) {
        char *js = NULL;
        size_t len = 0;
        int rc = adbc_ui_snap_json(&js, &len, snap);
        if (rc < 0)
            return ops_call_adbc(c, rc, "formatting the snapshot as JSON");
        if (heading)
            ops_call_text_raw(c, heading);
        ops_call_text_raw(c, js);
        adbc_free(js);
        return 0;
    }
    const char *text = adbc_ui_snap_text(snap, NULL);
    ops_call_text(c, "%s%sscreen %s on %s (%s), %zu refs%s\n%s", heading ? heading : "",
              heading ? "\n" : "", adbc_ui_snap_id(snap), d->serial, ops_kind_name(d->kind),
              nrefs, nrefs ? "; act on them with {\"ref\": N}" : "",
              *text ? text : "(nothing on screen to show)");
    return 0;
}

int ops_tool_snapshot(ops_call *c, int json, const char *heading)
{
    return ops_tool_snapshot_web(c, json, 0, 0, heading);
}

int ops_tool_snapshot_web(ops_call *c, int json, int web, int web_budget_ms, const char *heading)
{
    ops_ctx oc;
    ops_call_ctx(c, &oc);
    oc.web = web;
    oc.web_budget_ms = web_budget_ms;
    if (ops_snapshot(&oc) != 0)
        return ops_call_err(c, &oc.err);
    return present(c, json, heading);
}

void ops_tool_after_act(ops_call *c, const ops_ctx *acted)
{
    int settle = c->fe->settle_ms;
    if (settle > ops_call_remaining(c) / 2)
        settle = ops_call_remaining(c) / 2;
    struct timespec ts = {settle / 1000, (long)(settle % 1000) * 1000000L};
    if (settle > 0)
        nanosleep(&ts, NULL);
    ops_ctx oc;
    ops_call_ctx(c, &oc);
    if (acted && acted->web) { /* an act on the page: the page is read too */
        oc.web = 1;
        if (acted->web_budget_ms > 0)
            oc.web_budget_ms = acted->web_budget_ms;
    }
    if (ops_snapshot(&oc) != 0) {
        /* The act was done; only the look afterwards failed. */
        ops_call_text(c, "(no snapshot after the act: %s; call snapshot to see the screen)",
                  oc.err.msg);
        return;
    }
    present(c, 0, "after:");
}

static int t_snapshot(ops_call *c, const cJSON *a)
{
    const char *format = NULL;
    int web = 0, budget = 0;
    if (ops_call_str(c, a, "format", 0, 16, &format) != 0 ||
        ops_call_bool(c, a, "web", &web) != 0 ||
        ops_call_int(c, a, "web_budget_ms", 0, 1, 60000, &budget) != 0)
        return -1;
    int json = 0;
    if (format && strcmp(format, "json") == 0)
        json = 1;
    else if (format && strcmp(format, "text") != 0)
        return ops_call_fail(c, OPS_EARG, "argument 'format' must be \"text\" or \"json\"");
    if (ops_call_device(c) != 0)
        return -1;
    return ops_tool_snapshot_web(c, json, web, budget, NULL);
}

static int t_find(ops_call *c, const cJSON *a)
{
    adbc_ui_selector sel;
    ops_err e;
    if (ops_find_parse(&sel, a, &e) != 0)
        return ops_call_err(c, &e);
    if (ops_call_device(c) != 0)
        return -1;
    ops_ctx oc;
    ops_call_ctx(c, &oc);
    char *out = NULL;
    if (ops_find(&oc, &sel, &out) != 0)
        return ops_call_err(c, &oc.err);
    ops_call_text_raw(c, out);
    free(out);
    return 0;
}

/* wait_for_text and wait_stable are ops_wait's two forms ({"text":..} and
 * {"stable":true}): the checks, the limits and the errors are its own. */
static int wait_tool(ops_call *c, const cJSON *a, int stable)
{
    cJSON *args = a ? cJSON_Duplicate(a, 1) : cJSON_CreateObject();
    if (!args || (stable && !cJSON_AddTrueToObject(args, "stable"))) {
        cJSON_Delete(args);
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    /* The bound the schema states (ops_tools_list): call_ms less what the
     * answer needs, from the call's start. */
    int call_ms = c->fe->call_ms > 0 ? c->fe->call_ms : 30000, t = 10000;
    cJSON *tm = cJSON_GetObjectItemCaseSensitive(args, "timeout_ms");
    if (cJSON_IsNumber(tm) && tm->valuedouble > call_ms - OPS_TOOL_ANSWER_MS &&
        tm->valuedouble <= 600000 && tm->valuedouble == (int)tm->valuedouble) {
        int want = (int)tm->valuedouble;
        cJSON_Delete(args);
        return ops_call_fail(c, OPS_EARG, "timeout_ms %d is beyond the call limit: at most %d "
                             "(the server's call timeout, %d ms, less %d ms to answer)",
                             want, call_ms - OPS_TOOL_ANSWER_MS, call_ms, OPS_TOOL_ANSWER_MS);
    }
    if (ops_call_device(c) != 0) {
        cJSON_Delete(args);
        return -1;
    }
    /* What taking the device used of the call comes off the wait, so the
     * answer still has its margin (and a second more: ops_wait_run checks
     * the timeout against the time left when it starts, a moment later). */
    if (cJSON_IsNumber(tm))
        t = (int)tm->valuedouble;
    int room = ops_call_remaining(c) - OPS_TOOL_ANSWER_MS - 1000;
    if (cJSON_IsNumber(tm) && t >= 1 && t > room && room >= 1)
        cJSON_SetNumberValue(tm, room);
    /* The default too: with a call bound under 10.5 s, 10000 ms would be
     * refused as past it, though the schema lets timeout_ms be left out. */
    if (!tm && t > room && room >= 1 && !cJSON_AddNumberToObject(args, "timeout_ms", room)) {
        cJSON_Delete(args);
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    ops_ctx oc;
    ops_call_ctx(c, &oc);
    int rc = ops_wait(&oc, args);
    cJSON_Delete(args);
    if (rc != 0)
        return ops_call_err(c, &oc.err);
    char heading[sizeof oc.done + 1];
    snprintf(heading, sizeof heading, "%s:", oc.done);
    return present(c, 0, heading);
}

static int t_wait_for_text(ops_call *c, const cJSON *a)
{
    return wait_tool(c, a, 0);
}

static int t_wait_stable(ops_call *c, const cJSON *a)
{
    return wait_tool(c, a, 1);
}

const ops_tool ops_tools_ui[] = {
    {"snapshot", "Snapshot the screen",
     "The screen as an indented list of elements, one a line: role, [ref=N] for those you "
     "can act on, \"text\", (description), [states]. Refs are valid for this screen: pass "
     "them to tap, type, scroll, long_press. Call this first, and again when a ref is refused "
     "as stale. format \"json\" gives the same tree as JSON. web: true also reads the pages "
     "shown in debuggable WebViews and Chrome and lists their elements, with refs, under the "
     "WebView (slower; a page that does not answer in time is left as a box with a note).",
     "{\"type\":\"object\",\"properties\":{\"format\":{\"type\":\"string\",\"enum\":[\"text\","
     "\"json\"],\"description\":\"text (default) or json\"},\"web\":{\"type\":\"boolean\","
     "\"description\":\"read WebView and Chrome pages too (default false)\"},"
     "\"web_budget_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000,"
     "\"description\":\"with web: the pages' time, all together (default 3000)\"}},"
     "\"additionalProperties\":false}",
     t_snapshot, OPS_TOOL_READONLY},
    {"find", "Find elements",
     "Take a snapshot and list the refs of elements matching all the given fields: text, "
     "desc (content description), resource_id (\"pkg:id/name\" or just \"name\"), class "
     "(\"Button\" or the full class). contains: substring match; ignore_case. A match without "
     "a ref stands for its nearest actionable ancestor.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":4096},"
     "\"desc\":{\"type\":\"string\",\"maxLength\":4096},\"resource_id\":{\"type\":\"string\","
     "\"maxLength\":512},\"class\":{\"type\":\"string\",\"maxLength\":512},"
     "\"contains\":{\"type\":\"boolean\"},\"ignore_case\":{\"type\":\"boolean\"}},"
     "\"not\":{\"properties\":{\"text\":false,\"desc\":false,\"resource_id\":false,\"class\":"
     "false}},\"additionalProperties\":false}",
     t_find, OPS_TOOL_READONLY},
    {"wait_for_text", "Wait for text",
     "Poll snapshots until an element's text or description equals text (contains: "
     "substring; ignore_case), or with gone: true until none does. Fails after timeout_ms "
     "(default 10000, or the call's bound when nearer) saying what was last seen. Returns "
     "the snapshot that satisfied it.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":4096},"
     "\"gone\":{\"type\":"
     "\"boolean\"},\"contains\":{\"type\":\"boolean\"},\"ignore_case\":{\"type\":\"boolean\"},"
     "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}},\"required\":[\"text\"],"
     "\"additionalProperties\":false}",
     t_wait_for_text, OPS_TOOL_READONLY | OPS_TOOL_CALLBOUND},
    {"wait_stable", "Wait for a still screen",
     "Poll snapshots until two in a row are the same (animations and loading done), at most "
     "timeout_ms (default 10000, or the call's bound when nearer). Returns that snapshot.",
     "{\"type\":\"object\",\"properties\":{\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}},"
     "\"additionalProperties\":false}",
     t_wait_stable, OPS_TOOL_READONLY | OPS_TOOL_CALLBOUND},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
