/* SPDX-License-Identifier: Apache-2.0 */
/* Apps and waits: launch, stop, the resumed activity, an intent; waiting
 * for text or a still screen. Package names are checked to be Android names
 * before anything is sent; every string reaches the device as one quoted
 * word (the act API quotes it). */
#include "ops_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ops_android_name(const char *s)
{
    if (!s)
        return 0;
    int ok = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z');
    for (const char *p = s; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '.';
    return ok;
}

int ops_app_run(ops_ctx *c, const ops_app_req *r, char **activity, char **package)
{
    if (activity)
        *activity = NULL;
    if (package)
        *package = NULL;
    int rc;
    switch (r->op) {
    case OPS_APP_LAUNCH:
    case OPS_APP_STOP: {
        int launch = r->op == OPS_APP_LAUNCH;
        if (!ops_android_name(r->package))
            return ops_fail(&c->err, OPS_EARG, "package must be an Android name such as "
                                               "com.example.app (letters, digits, '_' and '.')");
        rc = launch ? adbc_app_launch(c->conn, r->package, ops_remaining(c))
                    : adbc_app_stop(c->conn, r->package, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, launch ? "launch" : "stop_app");
        snprintf(c->done, sizeof c->done, "%s %s", launch ? "launched" : "stopped", r->package);
        return 0;
    }
    case OPS_APP_INTENT:
        if (!r->intent.action && !r->intent.data && !r->intent.component)
            return ops_fail(&c->err, OPS_EARG, "intent needs at least one of action, data, "
                                               "component");
        rc = adbc_app_start(c->conn, &r->intent, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "intent");
        snprintf(c->done, sizeof c->done, "started the intent");
        return 0;
    case OPS_APP_TOP: {
        char *act = NULL, *p = NULL;
        rc = adbc_app_top(&act, &p, c->conn, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "top_activity");
        if (activity)
            *activity = act;
        else
            adbc_free(act);
        if (package)
            *package = p;
        else
            adbc_free(p);
        snprintf(c->done, sizeof c->done, "top");
        return 0;
    }
    }
    return ops_fail(&c->err, OPS_EARG, "the app operation must be launch, stop, top or intent");
}

int ops_wait_run(ops_ctx *c, const ops_wait_req *r)
{
    if (r->timeout_ms < 1)
        return ops_fail(&c->err, OPS_EARG, "timeout_ms must be at least 1");
    int64_t left = c->deadline - ops_now_ms();
    if (r->timeout_ms > left - 500)
        return ops_fail(&c->err, OPS_EARG, "timeout_ms %d is beyond the call limit (%lld ms "
                        "left in this call, the server's call timeout): use at most %lld",
                        r->timeout_ms, (long long)left, (long long)(left - 500));
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = r->dump_ms > 0 ? r->dump_ms : ops_remaining(c);
    adbc_ui_snap *snap = NULL;
    const char *what = r->text ? "wait_for_text" : r->elem ? "wait_state" : "wait_stable";
    int rc = r->text   ? adbc_ui_wait_text(&snap, c->conn, r->text, r->flags, r->timeout_ms, &uo)
             : r->elem ? adbc_ui_wait_state(&snap, c->conn, r->elem, r->cond, r->timeout_ms, &uo)
                       : adbc_ui_wait_stable(&snap, c->conn, r->timeout_ms, &uo);
    if (rc < 0) {
        adbc_ui_snap_free(snap);
        return ops_fail_adbc(&c->err, rc, what);
    }
    adbc_ui_snap_free(*c->last);
    *c->last = snap;
    int gone = (r->flags & ADBC_UI_WAIT_GONE) != 0;
    snprintf(c->done, sizeof c->done, "%s",
             r->text   ? (gone ? "the text is gone" : "the text is on screen")
             : r->elem ? "the element reached the state"
                       : "the screen is stable");
    return 0;
}
