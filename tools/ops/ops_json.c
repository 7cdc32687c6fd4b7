/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON argument layer (ops_json.h): JSON objects into the core's
 * request structs, every argument checked and named when wrong; results
 * into JSON. Nothing here talks to a device but through the core. */
#include "ops_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/error.h"

/* ---- requests ---- */

#define MAX_SEL 4096

int ops_sel_parse(ops_sel *sel, const cJSON *obj, ops_err *e)
{
    memset(sel, 0, sizeof *sel);
    if (!cJSON_IsObject(obj))
        return ops_fail(e, OPS_EARG, "argument 'selector' must be an object such as "
                                     "{\"text\":\"Send\"}, {\"id\":\"com.app:id/send\"} or "
                                     "{\"desc\":\"Search\"}");
    static const char *const names[] = {"id", "resource_id", "text", "desc", NULL};
    const char *id2 = NULL;
    if (ops_arg_only(e, obj, names) || ops_arg_str(e, obj, "id", 0, MAX_SEL, &sel->id) ||
        ops_arg_str(e, obj, "resource_id", 0, MAX_SEL, &id2) ||
        ops_arg_str(e, obj, "text", 0, MAX_SEL, &sel->text) ||
        ops_arg_str(e, obj, "desc", 0, MAX_SEL, &sel->desc))
        return -1;
    if (!sel->id)
        sel->id = id2;
    if ((sel->id && !*sel->id) || (sel->text && !*sel->text) || (sel->desc && !*sel->desc))
        return ops_fail(e, OPS_EARG, "selector fields must not be empty");
    if (!sel->id && !sel->text && !sel->desc)
        return ops_fail(e, OPS_EARG, "a selector needs at least one of id, text, desc");
    return 0;
}

/* The element argument: ref or selector (both refused), required or not. */
static int target(ops_act *a, const cJSON *args, int required, ops_err *e)
{
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(args, "selector");
    if (sel && !cJSON_IsNull(sel)) {
        if (cJSON_GetObjectItemCaseSensitive(args, "ref"))
            return ops_fail(e, OPS_EARG, "give either 'ref' or 'selector', not both");
        a->has_sel = 1;
        return ops_sel_parse(&a->sel, sel, e);
    }
    if (ops_arg_int(e, args, "ref", required, 1, 1000000, &a->ref) ||
        ops_arg_str(e, args, "snapshot", 0, 64, &a->snapshot))
        return -1;
    return 0;
}

int ops_act_parse(ops_act *a, ops_action action, const cJSON *args, ops_err *e)
{
    memset(a, 0, sizeof *a);
    a->action = action;
    switch (action) {
    case OPS_TAP:
        if (cJSON_GetObjectItemCaseSensitive(args, "cell"))
            return ops_arg_str(e, args, "cell", 1, 8, &a->cell);
        if (cJSON_GetObjectItemCaseSensitive(args, "x") ||
            cJSON_GetObjectItemCaseSensitive(args, "y")) {
            a->has_xy = 1;
            return ops_arg_int(e, args, "x", 1, 0, 65535, &a->x) ||
                           ops_arg_int(e, args, "y", 1, 0, 65535, &a->y)
                       ? -1
                       : 0;
        }
        return target(a, args, 1, e);
    case OPS_LONG_PRESS:
        a->ms = 1000;
        if (ops_arg_int(e, args, "duration_ms", 0, 1, 10000, &a->ms))
            return -1;
        return target(a, args, 1, e);
    case OPS_TYPE:
        if (ops_arg_str(e, args, "text", 1, 10000, &a->text) ||
            ops_arg_bool(e, args, "clear", &a->clear) || target(a, args, 0, e))
            return -1;
        if (a->clear && !a->ref && !a->has_sel)
            return ops_fail(e, OPS_EARG, "clear needs the field's ref (it deletes as many "
                                         "characters as the field holds)");
        return 0;
    case OPS_PRESS:
        if (ops_arg_str(e, args, "key", 1, 64, &a->key_name))
            return -1;
        if (adbc_keycode_parse(&a->key, a->key_name) < 0)
            return ops_fail_adbc(e, ADBC_EINVAL, "press");
        return 0;
    case OPS_SWIPE:
        a->ms = 300;
        return ops_arg_int(e, args, "x1", 1, 0, 65535, &a->x1) ||
                       ops_arg_int(e, args, "y1", 1, 0, 65535, &a->y1) ||
                       ops_arg_int(e, args, "x2", 1, 0, 65535, &a->x2) ||
                       ops_arg_int(e, args, "y2", 1, 0, 65535, &a->y2) ||
                       ops_arg_int(e, args, "duration_ms", 0, 1, 10000, &a->ms)
                   ? -1
                   : 0;
    case OPS_SCROLL:
        if (ops_arg_str(e, args, "direction", 1, 16, &a->dir_name) || target(a, args, 0, e))
            return -1;
        if (adbc_dir_parse(&a->dir, a->dir_name) < 0)
            return ops_fail(e, OPS_EARG, "argument 'direction' must be up, down, left or right "
                                         "(the way the content comes into view: down shows "
                                         "what is below)");
        return 0;
    case OPS_BACK:
    case OPS_HOME: return 0;
    }
    return ops_fail(e, OPS_EARG, "unknown action");
}

int ops_find_parse(adbc_ui_selector *sel, const cJSON *a, ops_err *e)
{
    memset(sel, 0, sizeof *sel);
    sel->size = sizeof *sel;
    int contains = 0, nocase = 0;
    if (ops_arg_str(e, a, "text", 0, 4096, &sel->text) ||
        ops_arg_str(e, a, "desc", 0, 4096, &sel->desc) ||
        ops_arg_str(e, a, "resource_id", 0, 512, &sel->resource_id) ||
        ops_arg_str(e, a, "class", 0, 512, &sel->cls) ||
        ops_arg_bool(e, a, "contains", &contains) || ops_arg_bool(e, a, "ignore_case", &nocase))
        return -1;
    if (!sel->text && !sel->desc && !sel->resource_id && !sel->cls)
        return ops_fail(e, OPS_EARG, "find needs at least one of text, desc, resource_id, class");
    sel->flags = (contains ? ADBC_UI_MATCH_CONTAINS : 0) | (nocase ? ADBC_UI_MATCH_NOCASE : 0);
    return 0;
}

int ops_intent_parse(adbc_intent *in, adbc_intent_extra *extras, size_t cap, const cJSON *a,
                     ops_err *e)
{
    memset(in, 0, sizeof *in);
    in->size = sizeof *in;
    if (ops_arg_str(e, a, "action", 0, 512, &in->action) ||
        ops_arg_str(e, a, "data", 0, 4096, &in->data) ||
        ops_arg_str(e, a, "component", 0, 512, &in->component))
        return -1;
    if (!in->action && !in->data && !in->component)
        return ops_fail(e, OPS_EARG, "intent needs at least one of action, data, component");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(a, "extras");
    size_t n = 0;
    if (ex && !cJSON_IsNull(ex)) {
        if (!cJSON_IsArray(ex))
            return ops_fail(e, OPS_EARG, "argument 'extras' must be an array of {type, key, "
                                         "value}");
        const cJSON *x;
        cJSON_ArrayForEach(x, ex)
        {
            if (n == cap)
                return ops_fail(e, OPS_EARG, "at most %zu extras", cap);
            const char *type, *key, *value;
            if (!cJSON_IsObject(x))
                return ops_fail(e, OPS_EARG, "each extra must be an object {type, key, value}");
            if (ops_arg_str(e, x, "type", 1, 8, &type) || ops_arg_str(e, x, "key", 1, 256, &key) ||
                ops_arg_str(e, x, "value", 1, 4096, &value))
                return -1;
            char t = strcmp(type, "string") == 0 ? 's' : strcmp(type, "int") == 0 ? 'i'
                         : strcmp(type, "bool") == 0 ? 'b' : 0;
            if (!t)
                return ops_fail(e, OPS_EARG, "extra type must be \"string\", \"int\" or "
                                             "\"bool\"");
            extras[n].type = t;
            extras[n].key = key;
            extras[n].value = value;
            n++;
        }
    }
    in->extras = extras;
    in->nextras = n;
    return 0;
}

int ops_app(ops_ctx *c, const cJSON *a, cJSON **result)
{
    *result = NULL;
    const char *op = NULL;
    if (ops_arg_str(&c->err, a, "op", 1, 16, &op))
        return -1;
    ops_app_req r;
    memset(&r, 0, sizeof r);
    adbc_intent_extra extras[32];
    if (strcmp(op, "launch") == 0 || strcmp(op, "stop") == 0) {
        static const char *const ok[] = {"op", "package", NULL};
        r.op = strcmp(op, "launch") == 0 ? OPS_APP_LAUNCH : OPS_APP_STOP;
        if (ops_arg_only(&c->err, a, ok) || ops_arg_name(&c->err, a, "package", 1, &r.package))
            return -1;
    } else if (strcmp(op, "intent") == 0) {
        static const char *const ok[] = {"op", "action", "data", "component", "extras", NULL};
        r.op = OPS_APP_INTENT;
        if (ops_arg_only(&c->err, a, ok) || ops_intent_parse(&r.intent, extras, 32, a, &c->err))
            return -1;
    } else if (strcmp(op, "top") == 0) {
        static const char *const ok[] = {"op", NULL};
        r.op = OPS_APP_TOP;
        if (ops_arg_only(&c->err, a, ok))
            return -1;
    } else {
        return ops_fail(&c->err, OPS_EARG, "argument 'op' must be launch, stop, top or intent");
    }
    char *act = NULL, *pkg = NULL;
    if (ops_app_run(c, &r, &act, &pkg) != 0)
        return -1;
    *result = cJSON_CreateObject();
    if (r.op == OPS_APP_TOP) {
        cJSON_AddStringToObject(*result, "activity", act ? act : "");
        cJSON_AddStringToObject(*result, "package", pkg ? pkg : "");
    } else {
        cJSON_AddStringToObject(*result, "done", c->done);
    }
    adbc_free(act);
    adbc_free(pkg);
    return 0;
}

int ops_wait(ops_ctx *c, const cJSON *a)
{
    static const char *const ok[] = {"text", "gone", "contains", "ignore_case", "timeout_ms",
                                     "stable", NULL};
    ops_wait_req r = {.timeout_ms = 10000};
    int gone = 0, contains = 0, nocase = 0, stable = 0;
    if (ops_arg_only(&c->err, a, ok) || ops_arg_str(&c->err, a, "text", 0, 4096, &r.text) ||
        ops_arg_bool(&c->err, a, "gone", &gone) ||
        ops_arg_bool(&c->err, a, "contains", &contains) ||
        ops_arg_bool(&c->err, a, "ignore_case", &nocase) ||
        ops_arg_bool(&c->err, a, "stable", &stable) ||
        ops_arg_int(&c->err, a, "timeout_ms", 0, 1, 600000, &r.timeout_ms))
        return -1;
    if (!r.text == !stable)
        return ops_fail(&c->err, OPS_EARG, "wait needs either 'text' (with 'gone' to wait for "
                                           "it to go) or \"stable\": true");
    r.flags = (gone ? ADBC_UI_WAIT_GONE : 0) | (contains ? ADBC_UI_MATCH_CONTAINS : 0) |
              (nocase ? ADBC_UI_MATCH_NOCASE : 0);
    return ops_wait_run(c, &r);
}

/* ---- results ---- */

static const char *const state_names[] = {"clickable", "editable", "scrollable", "checked",
                                          "selected",  "focused",  "enabled"};

cJSON *ops_refs_json(const adbc_ui_snap *s)
{
    cJSON *arr = cJSON_CreateArray();
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    size_t n = adbc_ui_reftab_count(t);
    for (size_t i = 1; arr && i <= n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (!r)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddNumberToObject(o, "ref", r->ref);
        cJSON_AddStringToObject(o, "class", r->cls);
        cJSON_AddStringToObject(o, "text", r->text);
        cJSON_AddStringToObject(o, "desc", r->desc);
        cJSON_AddStringToObject(o, "id", r->resource_id);
        cJSON *st = cJSON_AddArrayToObject(o, "states");
        for (unsigned b = 0; st && b < sizeof state_names / sizeof state_names[0]; b++)
            if (r->states & (1u << b))
                cJSON_AddItemToArray(st, cJSON_CreateString(state_names[b]));
        int bounds[4] = {r->x1, r->y1, r->x2, r->y2}, tap[2] = {r->x, r->y};
        cJSON_AddItemToObject(o, "bounds", cJSON_CreateIntArray(bounds, 4));
        cJSON_AddItemToObject(o, "tap", cJSON_CreateIntArray(tap, 2));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

int ops_observe(ops_ctx *c, cJSON **out)
{
    *out = NULL;
    char *act = NULL, *pkg = NULL;
    if (ops_observe_take(c, &act, &pkg) != 0)
        return -1;
    cJSON *o = cJSON_CreateObject();
    cJSON *top = cJSON_AddObjectToObject(o, "top");
    cJSON_AddStringToObject(top, "activity", act ? act : "");
    cJSON_AddStringToObject(top, "package", pkg ? pkg : "");
    adbc_free(act);
    adbc_free(pkg);
    char *text = ops_snapshot_text(*c->last);
    cJSON_AddStringToObject(o, "snapshot", text ? text : "");
    free(text);
    cJSON_AddStringToObject(o, "snapshot_id", adbc_ui_snap_id(*c->last));
    cJSON_AddItemToObject(o, "refs", ops_refs_json(*c->last));
    *out = o;
    return 0;
}
