/* SPDX-License-Identifier: Apache-2.0 */
/* Observing: a snapshot kept as the device's latest (its refs are what acts
 * take), the refs as JSON with bounds and tap points, and the atomic
 * observation: the resumed activity and the screen of one moment. */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

int ops_snapshot(ops_ctx *c)
{
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = ops_remaining(c);
    adbc_ui_snap *snap = NULL;
    int rc = adbc_ui_snapshot(&snap, c->conn, &uo);
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "snapshot");
    adbc_ui_snap_free(*c->last);
    *c->last = snap;
    return 0;
}

char *ops_snapshot_text(const adbc_ui_snap *s)
{
    size_t n = 0;
    const char *t = adbc_ui_snap_text(s, &n);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    memcpy(out, t, n);
    if (n)
        out[n++] = '\n';
    out[n] = '\0';
    return out;
}

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
    int rc = adbc_app_top(&act, &pkg, c->conn, ops_remaining(c));
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "observe (the resumed activity)");
    if (ops_snapshot(c) < 0) {
        adbc_free(act);
        adbc_free(pkg);
        return -1;
    }
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
