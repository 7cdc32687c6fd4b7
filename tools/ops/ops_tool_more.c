/* SPDX-License-Identifier: Apache-2.0 */
/* Apps, URLs, gestures, the screen's size and orientation, recording, the
 * crash log, the shade, and a batch of acts: the tools over ops_device.h's
 * operations (what each runs on the device is said there). */
#include "ops_tool.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_device.h"

/* The call's device and an operation context on it. */
static int begin(ops_call *c, ops_ctx *oc)
{
    if (ops_call_device(c) != 0)
        return -1;
    ops_call_ctx(c, oc);
    return 0;
}

static int t_list_apps(ops_call *c, const cJSON *a)
{
    (void)a;
    ops_ctx oc;
    char *text = NULL;
    int n = 0;
    if (begin(c, &oc) || ops_apps(&oc, &text, &n))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    ops_call_text(c, "%d apps with a launcher activity:\n%s", n, text);
    free(text);
    return 0;
}

static int t_uninstall_app(ops_call *c, const cJSON *a)
{
    const char *pkg;
    ops_ctx oc;
    if (ops_call_name(c, a, "package", 1, &pkg))
        return -1;
    int listed = 0;
    for (int i = 0; c->fe->uninstall && c->fe->uninstall[i] && !listed; i++)
        listed = strcmp(c->fe->uninstall[i], pkg) == 0;
    if (!listed) { /* refused before the device is even taken */
        ops_err e;
        ops_ctx_init(&oc, NULL, NULL, c->deadline);
        ops_uninstall(&oc, pkg, c->fe->uninstall);
        e = oc.err;
        return ops_call_err(c, &e);
    }
    if (begin(c, &oc) || ops_uninstall(&oc, pkg, c->fe->uninstall))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    ops_call_text(c, "%s", oc.done);
    return 0;
}

/* An act that changes the screen: its line, then the screen after. */
static int acted(ops_call *c, ops_ctx *oc)
{
    ops_call_text(c, "%s", oc->done);
    ops_tool_after_act(c, oc);
    return 0;
}

static int t_open_url(ops_call *c, const cJSON *a)
{
    const char *url;
    ops_err e;
    ops_ctx oc;
    if (ops_call_str(c, a, "url", 1, 2048, &url))
        return -1;
    if (ops_url_check(&e, url))
        return ops_call_err(c, &e);
    if (begin(c, &oc) || ops_open_url(&oc, url))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    return acted(c, &oc);
}

/* A target: {ref} | {selector} | {x, y} | {cell}, as tap takes it. */
static int target(ops_call *c, const cJSON *obj, const char *name, ops_act *t)
{
    ops_err e;
    if (!cJSON_IsObject(obj))
        return ops_call_fail(c, OPS_EARG, "argument '%s' must be an object: {\"ref\": N}, "
                             "{\"selector\": {...}} or {\"x\": X, \"y\": Y}", name);
    static const char *const names[] = {"ref", "selector", "x", "y", "cell", "snapshot", NULL};
    if (ops_arg_only(&e, obj, names) || ops_act_parse(t, OPS_TAP, obj, &e)) {
        ops_err w;
        ops_fail(&w, e.code, "%s: %s", name, e.msg);
        return ops_call_err(c, &w);
    }
    return 0;
}

static int t_double_tap(ops_call *c, const cJSON *a)
{
    ops_act t;
    ops_ctx oc;
    int x, y;
    cJSON *none = a ? NULL : cJSON_CreateObject();
    int bad = target(c, a ? a : none, "double_tap", &t);
    cJSON_Delete(none);
    if (bad)
        return -1;
    if (begin(c, &oc) || ops_act_point(&oc, &t, &x, &y) || ops_double_tap(&oc, x, y))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    return acted(c, &oc);
}

static int t_drag(ops_call *c, const cJSON *a)
{
    ops_act from, to;
    ops_ctx oc;
    int ms = 1000, x1, y1, x2, y2;
    if (target(c, cJSON_GetObjectItemCaseSensitive(a, "from"), "from", &from) ||
        target(c, cJSON_GetObjectItemCaseSensitive(a, "to"), "to", &to) ||
        ops_call_int(c, a, "duration_ms", 0, 1, 10000, &ms))
        return -1;
    if (begin(c, &oc) || ops_act_point(&oc, &from, &x1, &y1) ||
        ops_act_point(&oc, &to, &x2, &y2) || ops_drag(&oc, x1, y1, x2, y2, ms))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    return acted(c, &oc);
}

static int t_screen_info(ops_call *c, const cJSON *a)
{
    (void)a;
    ops_ctx oc;
    ops_screen s;
    ops_orient o;
    if (begin(c, &oc) || ops_screen_info(&oc, &s) || ops_orientation_get(&oc, &o))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    char r[32];
    snprintf(r, sizeof r, "%d", o.rotation);
    ops_call_text(c, "size %dx%d (physical %dx%d), density %d dpi (physical %d); auto-rotate "
                  "%s, rotation %s%s", s.width, s.height, s.phys_width, s.phys_height,
                  s.density, s.phys_density, o.auto_rotate == 1 ? "on" : o.auto_rotate == 0
                  ? "off" : "unset", o.rotation < 0 ? "unset" : r,
                  o.locked_by_adbc ? " (locked by adbc: rotate with restore: true)" : "");
    return 0;
}

static int t_rotate(ops_call *c, const cJSON *a)
{
    int deg = -2, restore = 0;
    ops_ctx oc;
    if (ops_call_int(c, a, "degrees", 0, 0, 270, &deg) || ops_call_bool(c, a, "restore", &restore))
        return -1;
    if ((deg == -2) == !restore)
        return ops_call_fail(c, OPS_EARG, "give degrees (0, 90, 180, 270) or restore: true");
    if (!restore && deg % 90)
        return ops_call_fail(c, OPS_EARG, "argument 'degrees' must be 0, 90, 180 or 270");
    if (begin(c, &oc) || ops_orientation_set(&oc, restore ? -1 : deg))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    return acted(c, &oc);
}

static int t_screen_record(ops_call *c, const cJSON *a)
{
    const char *action;
    int secs = 180;
    ops_ctx oc;
    if (ops_call_str(c, a, "action", 1, 8, &action) ||
        ops_call_int(c, a, "time_limit_s", 0, 1, 180, &secs))
        return -1;
    int start = strcmp(action, "start") == 0;
    if (!start && strcmp(action, "stop") != 0)
        return ops_call_fail(c, OPS_EARG, "argument 'action' must be \"start\" or \"stop\"");
    if (begin(c, &oc))
        return -1;
    if (start) {
        if (ops_record_start(&oc, c->dev, secs))
            return ops_call_err(c, &oc.err);
        ops_call_text(c, "%s", oc.done);
        return 0;
    }
    char path[PATH_MAX], tmp[PATH_MAX], iso[80], remote[256];
    uint64_t bytes = 0;
    int local = c->fe->shot_dir != NULL;
    /* Pulled into a temporary file of its own, then renamed: a link planted
     * at the video's name is replaced, never written through. */
    if (local && ops_tool_host_tmp(c, "mp4", path, sizeof path, tmp, sizeof tmp, iso,
                                   sizeof iso) != 0)
        return ops_call_fail(c, OPS_EFAIL, "cannot make a file under %s for the video: %s (set "
                             "[screenshots] dir in the config to a writable directory)",
                             c->fe->shot_dir, strerror(errno));
    if (ops_record_stop(&oc, c->dev, local ? tmp : NULL, remote, sizeof remote, &bytes)) {
        if (local)
            unlink(tmp);
        return ops_call_err(c, &oc.err);
    }
    if (local && ops_tool_host_commit(tmp, path) != 0)
        return ops_call_fail(c, OPS_EFAIL, "cannot move the video to %s: %s", path,
                             strerror(errno));
    if (local) {
        ops_tool_file_json(c, path, bytes, iso, "video/mp4", NULL);
    } else {
        ops_call_text(c, "%s", oc.done);
    }
    return 0;
}

static int t_crash_log(ops_call *c, const cJSON *a)
{
    int lines = 200, entries = 20;
    ops_ctx oc;
    char *text = NULL;
    if (ops_call_int(c, a, "lines", 0, 1, 5000, &lines) ||
        ops_call_int(c, a, "entries", 0, 1, 200, &entries))
        return -1;
    if (begin(c, &oc) || ops_crashlog(&oc, lines, entries, &text))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    ops_call_text_raw(c, text);
    free(text);
    return 0;
}

static int t_notifications(ops_call *c, const cJSON *a)
{
    int open = 1;
    ops_ctx oc;
    if (cJSON_GetObjectItemCaseSensitive(a, "open") && ops_call_bool(c, a, "open", &open))
        return -1;
    if (begin(c, &oc) || ops_shade(&oc, open))
        return c->is_error ? -1 : ops_call_err(c, &oc.err);
    return acted(c, &oc);
}

/* ---- batch: every act checked first, run in order, one look at the end ---- */
#define BATCH_MAX 20

static int t_batch(ops_call *c, const cJSON *a)
{
    const cJSON *acts = cJSON_GetObjectItemCaseSensitive(a, "acts");
    int n = cJSON_GetArraySize(acts);
    if (!cJSON_IsArray(acts) || n < 1 || n > BATCH_MAX)
        return ops_call_fail(c, OPS_EARG, "argument 'acts' must be an array of 1..%d acts",
                             BATCH_MAX);
    ops_act op[BATCH_MAX];
    static const char *const names[] = {
        "action", "ref", "selector", "snapshot", "x", "y", "cell", "text", "clear", "key",
        "x1", "y1", "x2", "y2", "duration_ms", "direction", NULL};
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, acts)
    {
        ops_err e;
        const char *name = NULL;
        ops_action action;
        if (!cJSON_IsObject(it))
            return ops_call_fail(c, OPS_EARG, "act %d: must be an object with \"action\"", i + 1);
        if (ops_arg_only(&e, it, names) || ops_arg_str(&e, it, "action", 1, 32, &name) ||
            (ops_action_parse(&action, name) != 0 &&
             ops_fail(&e, OPS_EARG, "unknown action '%.40s': tap, type, press, swipe, scroll, "
                      "long_press, back or home", name)) ||
            ops_act_parse(&op[i], action, it, &e))
            return ops_call_fail(c, e.code, "act %d: %s (nothing was run)", i + 1, e.msg);
        i++;
    }
    ops_ctx oc;
    if (begin(c, &oc))
        return -1;
    int failed = 0, web = 0;
    for (i = 0; i < n && !failed; i++) {
        ops_call_ctx(c, &oc);
        int rc = ops_act_run(&oc, &op[i]);
        web |= oc.web; /* any act on a page: the screen after reads the page */
        if (rc != 0) {
            ops_err e = oc.err;
            ops_fail(&e, oc.err.code, "act %d of %d (%s) failed: %s; %s", i + 1, n,
                     ops_action_name(op[i].action), oc.err.msg,
                     i + 1 < n ? "the acts after it were not run" : "it was the last");
            ops_call_err(c, &e);
            failed = 1;
        } else {
            ops_call_text(c, "%d. %s", i + 1, oc.done);
        }
    }
    oc.web = web;
    ops_tool_after_act(c, &oc);
    return failed ? -1 : 0;
}

#define OBJ "{\"type\":\"object\",\"properties\":"
#define NOARGS OBJ "{},\"additionalProperties\":false}"
#define PKG_PROP "\"package\":" OPS_SCHEMA_NAME("")
#define POINT OPS_SCHEMA_POINT(",\"description\":\"{ref}, {selector}, {x, y} or {cell}, as tap " \
                               "takes them\"")
/* One act of a batch (ops_act_parse by its action): the arguments of the
 * tool of that name; allOf, if/then per action (below the root, where the
 * Anthropic API takes them). Each "then" names what it requires in its own
 * properties (true: as the act's properties say), as strict validators ask. */
#define IF_ACT(name, then)                                                                     \
    "{\"if\":{\"properties\":{\"action\":{\"const\":\"" name "\"}}},\"then\":" then "}"
#define NO_ELEMENT "{\"properties\":{\"ref\":false,\"selector\":false}}"
#define ACT                                                                                    \
    "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\",\"enum\":["          \
    "\"tap\",\"type\",\"press\",\"swipe\",\"scroll\",\"long_press\",\"back\",\"home\"]},"      \
    OPS_SCHEMA_TARGET ",\"snapshot\":{\"type\":\"string\",\"maxLength\":64},\"x\":"            \
    OPS_SCHEMA_COORD ",\"y\":" OPS_SCHEMA_COORD ",\"cell\":" OPS_SCHEMA_CELL ",\"text\":"      \
    "{\"type\":\"string\",\"maxLength\":10000},\"clear\":{\"type\":\"boolean\"},\"key\":"      \
    OPS_SCHEMA_KEY ",\"x1\":" OPS_SCHEMA_COORD ",\"y1\":" OPS_SCHEMA_COORD ",\"x2\":"          \
    OPS_SCHEMA_COORD ",\"y2\":" OPS_SCHEMA_COORD ",\"duration_ms\":{\"type\":\"integer\","     \
    "\"minimum\":1,\"maximum\":10000},\"direction\":{\"type\":\"string\",\"enum\":"            \
    "[\"up\",\"down\",\"left\",\"right\"]}},\"required\":[\"action\"],"                        \
    "\"dependentSchemas\":{\"ref\":{\"properties\":{\"selector\":false}}},"                    \
    "\"additionalProperties\":false,\"allOf\":["                                               \
    IF_ACT("tap", "{\"not\":{\"properties\":{\"ref\":false,\"selector\":false,\"x\":"          \
           "false,\"y\":false,\"cell\":false}},\"properties\":{\"x\":true,\"y\":"              \
           "true},\"dependentRequired\":{\"x\":[\"y\"],\"y\":[\"x\"]}}") ","                   \
    IF_ACT("long_press", "{\"not\":" NO_ELEMENT "}") ","                                       \
    IF_ACT("type", "{\"properties\":{\"text\":true},\"required\":[\"text\"],\"if\":"           \
           "{\"properties\":{\"clear\":{\"const\":true}},\"required\":[\"clear\"]},"           \
           "\"then\":{\"not\":" NO_ELEMENT "}}") ","                                           \
    IF_ACT("press", "{\"properties\":{\"key\":true},\"required\":[\"key\"]}") ","              \
    IF_ACT("swipe", "{\"properties\":{\"x1\":true,\"y1\":true,\"x2\":true,\"y2\":"             \
           "true},\"required\":[\"x1\",\"y1\",\"x2\",\"y2\"]}") ","                            \
    IF_ACT("scroll", "{\"properties\":{\"direction\":true},\"required\":"                      \
           "[\"direction\"]}") "]}"
/* ops_url_check: http(s)://, a host (no '/' first), printable ASCII without
 * ;$`\"'<>|{}^. */
#define URL_CHARS "!#%&()*+,.0-9:=?@A-Z\\\\[\\\\]_a-z~-"
#define URL_PROP                                                                              \
    "{\"type\":\"string\",\"maxLength\":2048,\"pattern\":\"^https?://[" URL_CHARS "][/" URL_CHARS \
    "]*$\"}"

const ops_tool ops_tools_more[] = {
    {"list_apps", "List apps", "Packages with a launcher activity (launch takes them).",
     NOARGS, t_list_apps, OPS_TOOL_READONLY},
    {"uninstall_app", "Uninstall an app",
     "Uninstall a package; only those a person listed as removable.",
     OBJ "{" PKG_PROP "},\"required\":[\"package\"],\"additionalProperties\":false}",
     t_uninstall_app, OPS_TOOL_DESTRUCTIVE},
    {"open_url", "Open a URL", "Open an http(s) URL in its app (VIEW intent).",
     OBJ "{\"url\":" URL_PROP "},\"required\":[\"url\"],\"additionalProperties\":false}",
     t_open_url, OPS_TOOL_OPENWORLD},
    {"double_tap", "Double-tap", "Two taps inside the double-tap window on a ref, selector, "
     "point or cell (as tap).",
     OPS_SCHEMA_POINT(""),
     t_double_tap, 0},
    {"drag", "Drag and drop", "Long-press at from, move to to, release (input draganddrop).",
     OBJ "{\"from\":" POINT ",\"to\":" POINT ",\"duration_ms\":{\"type\":\"integer\","
     "\"minimum\":1,\"maximum\":10000}},\"required\":[\"from\",\"to\"],"
     "\"additionalProperties\":false}",
     t_drag, 0},
    {"screen_info", "Screen size", "Size, density, auto-rotate and rotation.", NOARGS,
     t_screen_info, OPS_TOOL_READONLY},
    {"rotate", "Rotate the screen",
     "Lock the rotation at degrees (auto-rotate off), or restore: true to put back the "
     "settings as they were.",
     OBJ "{\"degrees\":{\"type\":\"integer\",\"enum\":[0,90,180,270]},\"restore\":{\"type\":"
     "\"boolean\"}},\"if\":{\"properties\":{\"restore\":{\"const\":true}},\"required\":"
     "[\"restore\"]},\"then\":{\"properties\":{\"degrees\":false}},\"else\":{\"required\":"
     "[\"degrees\"]},\"additionalProperties\":false}",
     t_rotate, 0},
    {"screen_record", "Record the screen",
     "start (time_limit_s 1..180, default 180) or stop: the video is saved beside the "
     "screenshots.",
     OBJ "{\"action\":{\"type\":\"string\",\"enum\":[\"start\",\"stop\"]},\"time_limit_s\":"
     "{\"type\":\"integer\",\"minimum\":1,\"maximum\":180}},\"required\":[\"action\"],"
     "\"additionalProperties\":false}",
     t_screen_record, 0},
    {"crash_log", "Crash log",
     "The crash buffer's last lines (default 200) and dropbox crash/ANR entries, newest "
     "first (default 20).",
     OBJ "{\"lines\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5000},\"entries\":"
     "{\"type\":\"integer\",\"minimum\":1,\"maximum\":200}},\"additionalProperties\":false}",
     t_crash_log, OPS_TOOL_READONLY},
    {"notifications", "Notification shade", "Open (default) or close (open: false) the "
     "notification shade.",
     OBJ "{\"open\":{\"type\":\"boolean\"}},\"additionalProperties\":false}", t_notifications,
     0},
    {"batch", "Several acts",
     "Run acts in order ({action: tap|type|press|swipe|scroll|long_press|back|home, ...its "
     "arguments}), stopping at the first failure; one snapshot at the end.",
     OBJ "{\"acts\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":20,\"items\":" ACT "}},"
     "\"required\":[\"acts\"],\"additionalProperties\":false}",
     t_batch, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
