/* SPDX-License-Identifier: Apache-2.0 */
/* Observing: a snapshot kept as the device's latest (its refs are what acts
 * take), its text, and the atomic observation: the resumed activity and
 * the screen of one moment, in one round trip (adbc_act_observe). */
#include "ops_core.h"

#include <stdlib.h>
#include <string.h>

int ops_snapshot(ops_ctx *c)
{
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = ops_remaining(c);
    uo.web = c->web;
    if (c->web_budget_ms > 0)
        uo.web_budget_ms = c->web_budget_ms;
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

int ops_observe_take(ops_ctx *c, char **activity, char **package)
{
    *activity = *package = NULL;
    char *act = NULL, *pkg = NULL;
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = ops_remaining(c);
    uo.web = c->web;
    if (c->web_budget_ms > 0)
        uo.web_budget_ms = c->web_budget_ms;
    adbc_ui_snap *snap = NULL;
    /* One round trip: the activity's dumpsys runs beside the dump. */
    int rc = adbc_act_observe(&snap, &act, &pkg, c->conn, &uo);
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "observe");
    adbc_ui_snap_free(*c->last);
    *c->last = snap;
    *activity = act;
    *package = pkg;
    return 0;
}
