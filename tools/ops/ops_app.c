/* SPDX-License-Identifier: Apache-2.0 */
/* Apps and waits: launch, stop, the resumed activity, an intent; waiting
 * for text or a still screen. Package names are checked to be Android names
 * before anything is sent; every string reaches the device as one quoted
 * word (the act API quotes it). */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const char *op = NULL, *pkg = NULL;
    if (ops_arg_str(&c->err, a, "op", 1, 16, &op))
        return -1;
    int launch = strcmp(op, "launch") == 0, stop = strcmp(op, "stop") == 0;
    if (launch || stop) {
        static const char *const ok[] = {"op", "package", NULL};
        if (ops_arg_only(&c->err, a, ok) || ops_arg_name(&c->err, a, "package", 1, &pkg))
            return -1;
        int rc = launch ? adbc_app_launch(c->conn, pkg, ops_remaining(c))
                        : adbc_app_stop(c->conn, pkg, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, launch ? "launch" : "stop_app");
        snprintf(c->done, sizeof c->done, "%s %s", launch ? "launched" : "stopped", pkg);
    } else if (strcmp(op, "intent") == 0) {
        static const char *const ok[] = {"op", "action", "data", "component", "extras", NULL};
        adbc_intent in;
        adbc_intent_extra extras[32];
        if (ops_arg_only(&c->err, a, ok) || ops_intent_parse(&in, extras, 32, a, &c->err))
            return -1;
        int rc = adbc_app_start(c->conn, &in, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "intent");
        snprintf(c->done, sizeof c->done, "started the intent");
    } else if (strcmp(op, "top") == 0) {
        static const char *const ok[] = {"op", NULL};
        if (ops_arg_only(&c->err, a, ok))
            return -1;
        char *act = NULL, *p = NULL;
        int rc = adbc_app_top(&act, &p, c->conn, ops_remaining(c));
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "top_activity");
        *result = cJSON_CreateObject();
        cJSON_AddStringToObject(*result, "activity", act ? act : "");
        cJSON_AddStringToObject(*result, "package", p ? p : "");
        adbc_free(act);
        adbc_free(p);
        snprintf(c->done, sizeof c->done, "top");
        return 0;
    } else {
        return ops_fail(&c->err, OPS_EARG, "argument 'op' must be launch, stop, top or intent");
    }
    *result = cJSON_CreateObject();
    cJSON_AddStringToObject(*result, "done", c->done);
    return 0;
}

int ops_wait(ops_ctx *c, const cJSON *a)
{
    static const char *const ok[] = {"text", "gone", "contains", "ignore_case", "timeout_ms",
                                     "stable", NULL};
    const char *text = NULL;
    int gone = 0, contains = 0, nocase = 0, stable = 0, timeout = 10000;
    if (ops_arg_only(&c->err, a, ok) || ops_arg_str(&c->err, a, "text", 0, 4096, &text) ||
        ops_arg_bool(&c->err, a, "gone", &gone) ||
        ops_arg_bool(&c->err, a, "contains", &contains) ||
        ops_arg_bool(&c->err, a, "ignore_case", &nocase) ||
        ops_arg_bool(&c->err, a, "stable", &stable) ||
        ops_arg_int(&c->err, a, "timeout_ms", 0, 1, 600000, &timeout))
        return -1;
    if (!text == !stable)
        return ops_fail(&c->err, OPS_EARG, "wait needs either 'text' (with 'gone' to wait for "
                                           "it to go) or \"stable\": true");
    if (timeout > ops_remaining(c) - 500)
        return ops_fail(&c->err, OPS_EARG, "timeout_ms %d is beyond the call limit (%d ms "
                        "left in this call, the server's call timeout): use at most %d",
                        timeout, ops_remaining(c), ops_remaining(c) - 500);
    adbc_ui_opts uo;
    adbc_ui_opts_init(&uo);
    uo.timeout_ms = ops_remaining(c);
    adbc_ui_snap *snap = NULL;
    unsigned flags = (gone ? ADBC_UI_WAIT_GONE : 0) | (contains ? ADBC_UI_MATCH_CONTAINS : 0) |
                     (nocase ? ADBC_UI_MATCH_NOCASE : 0);
    int rc = text ? adbc_ui_wait_text(&snap, c->conn, text, flags, timeout, &uo)
                  : adbc_ui_wait_stable(&snap, c->conn, timeout, &uo);
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, text ? "wait_for_text" : "wait_stable");
    adbc_ui_snap_free(*c->last);
    *c->last = snap;
    snprintf(c->done, sizeof c->done, "%s", text ? (gone ? "the text is gone" : "the text is on "
                                                                                "screen")
                                                 : "the screen is stable");
    return 0;
}
