/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP/JSON routes. Every answer but a PNG is the envelope
 * {"ok":true,"result":...} or {"ok":false,"error":{"code","message"}} with
 * the status of the error's code (tools/ops: 400 bad_request, 404
 * unknown_ref/not_found, 409 stale/ambiguous, 423 busy, 502 device_gone,
 * 504 timeout). A call holds its device's lock from its first device
 * command to its last, so an observation is one moment of the device and
 * two acts never interleave. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/shell.h"

static char *print(cJSON *o, size_t *len)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s)
        return NULL;
    *len = strlen(s);
    return s;
}

char *serve_error_json(const char *code, const char *msg, size_t *len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddFalseToObject(o, "ok");
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    return print(o, len);
}

static int ok(cJSON *result, char **body, size_t *len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddTrueToObject(o, "ok");
    cJSON_AddItemToObject(o, "result", result ? result : cJSON_CreateNull());
    *body = print(o, len);
    return *body ? 200 : 500;
}

static int err(const ops_err *e, char **body, size_t *len)
{
    *body = serve_error_json(ops_code_name(e->code), e->msg, len);
    return ops_code_http(e->code);
}

static int err2(const char *code, int status, const char *msg, char **body, size_t *len)
{
    *body = serve_error_json(code, msg, len);
    return status;
}

int serve_reply_ok(cJSON *result, char **body, size_t *len)
{
    return ok(result, body, len);
}

int serve_reply_err(const ops_err *e, char **body, size_t *len)
{
    return err(e, body, len);
}

static int flag(serve_req *r, const char *name)
{
    const char *v = r->arg(r->conn, name);
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

/* A call on the request's device: find, lock (busy-wait), connected. */
typedef struct call {
    ops_dev *dev;
    ops_ctx ctx;
} call;

static int begin(serve_req *r, call *c, const char *device)
{
    ops_err e;
    int wait = r->srv->busy_ms;
    const char *w = r->arg(r->conn, "wait");
    if (w) {
        char *end;
        long v = strtol(w, &end, 10);
        if (!*w || *end || v < 0 || v > 600000) {
            ops_fail(&c->ctx.err, OPS_EARG, "?wait= takes milliseconds 0..600000");
            return -1;
        }
        wait = (int)v;
    }
    c->dev = serve_dev_find(r->srv, device ? device : r->arg(r->conn, "device"), &e);
    if (!c->dev || ops_dev_take(&r->srv->pool, c->dev, wait, ops_now_ms() + r->srv->call_ms,
                                &e) != 0) {
        c->ctx.err = e;
        return -1;
    }
    ops_ctx_init(&c->ctx, c->dev->conn, &c->dev->last, ops_now_ms() + r->srv->call_ms);
    c->ctx.allow = r->srv->optin; /* --allow-tool's names (ops_intent_check) */
    return 0;
}

static void end(serve_req *r, call *c, int failed)
{
    ops_dev_give(&r->srv->pool, c->dev, failed ? c->ctx.err.code : OPS_OK);
}

/* The screenshot as base64 in into's "screenshot"; marks: with the refs
 * of the latest snapshot drawn on it. */
static int screenshot_b64(call *c, cJSON *into, int marks)
{
    uint8_t *png = NULL;
    size_t n = 0;
    if (marks) {
        if (ops_shot_marked(&c->ctx, &png, &n) != 0)
            return -1;
    } else {
        int rc = adbc_screenshot(&png, &n, c->ctx.conn, ADBC_SHOT_AUTO, ops_remaining(&c->ctx));
        if (rc < 0)
            return ops_fail_adbc(&c->ctx.err, rc, "screenshot");
    }
    char *b = ops_base64(png, n);
    adbc_free(png);
    if (!b)
        return ops_fail(&c->ctx.err, OPS_EFAIL, "out of memory");
    cJSON_AddStringToObject(into, "screenshot", b);
    free(b);
    return 0;
}

/* web=1 and web_budget=MS (1..60000): the web part of a snapshot
 * (docs/webview.md). 0, or the status of a refusal with *body set. */
static int web_args(serve_req *r, ops_ctx *ctx, char **body, size_t *len)
{
    ctx->web = flag(r, "web");
    const char *b = r->arg(r->conn, "web_budget");
    if (b) {
        char *end;
        long v = strtol(b, &end, 10);
        if (!*b || *end || v < 1 || v > 60000)
            return err2("bad_request", 400, "web_budget must be 1..60000 (ms)", body, len);
        ctx->web_budget_ms = (int)v;
    }
    return 0;
}

static int r_observe(serve_req *r, char **body, size_t *len)
{
    ops_ctx web;
    memset(&web, 0, sizeof web);
    int st = web_args(r, &web, body, len);
    if (st)
        return st;
    call c;
    if (begin(r, &c, NULL) != 0)
        return err(&c.ctx.err, body, len);
    cJSON *obs = NULL;
    c.ctx.web = web.web;
    c.ctx.web_budget_ms = web.web_budget_ms;
    int rc = ops_observe(&c.ctx, &obs);
    /* marks=1: the refs of this very observation drawn on the screen, so a
     * page shows the boxes of the refs it lists. */
    if (rc == 0 && flag(r, "screenshot"))
        rc = screenshot_b64(&c, obs, flag(r, "marks"));
    end(r, &c, rc != 0);
    if (rc != 0) {
        cJSON_Delete(obs);
        return err(&c.ctx.err, body, len);
    }
    return ok(obs, body, len);
}

static int r_snapshot(serve_req *r, char **body, size_t *len)
{
    const char *fmt = r->arg(r->conn, "format");
    int json = fmt && strcmp(fmt, "json") == 0;
    if (fmt && !json && strcmp(fmt, "text") != 0)
        return err2("bad_request", 400, "format must be text or json", body, len);
    ops_ctx web;
    memset(&web, 0, sizeof web);
    int st = web_args(r, &web, body, len);
    if (st)
        return st;
    call c;
    if (begin(r, &c, NULL) != 0)
        return err(&c.ctx.err, body, len);
    c.ctx.web = web.web;
    c.ctx.web_budget_ms = web.web_budget_ms;
    int rc = ops_snapshot(&c.ctx);
    cJSON *res = NULL;
    if (rc == 0) {
        res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "snapshot_id", adbc_ui_snap_id(c.dev->last));
        if (json) {
            char *js = NULL;
            size_t n = 0;
            rc = adbc_ui_snap_json(&js, &n, c.dev->last);
            cJSON *tree = rc == 0 ? cJSON_ParseWithLength(js, n) : NULL;
            adbc_free(js);
            if (!tree)
                rc = ops_fail(&c.ctx.err, OPS_EFAIL, "formatting the snapshot as JSON failed");
            else
                cJSON_AddItemToObject(res, "snapshot", tree);
        } else {
            char *t = ops_snapshot_text(c.dev->last);
            cJSON_AddStringToObject(res, "snapshot", t ? t : "");
            free(t);
        }
        cJSON_AddItemToObject(res, "refs", ops_refs_json(c.dev->last));
    }
    end(r, &c, rc != 0);
    if (rc != 0) {
        cJSON_Delete(res);
        return err(&c.ctx.err, body, len);
    }
    return ok(res, body, len);
}

static int r_screenshot(serve_req *r, char **body, size_t *len, const char **ctype)
{
    int marks = flag(r, "marks");
    ops_ctx web;
    memset(&web, 0, sizeof web);
    int st = web_args(r, &web, body, len);
    if (st)
        return st;
    call c;
    if (begin(r, &c, NULL) != 0)
        return err(&c.ctx.err, body, len);
    uint8_t *png = NULL;
    size_t n = 0;
    int rc;
    if (!marks) {
        rc = adbc_screenshot(&png, &n, c.ctx.conn, ADBC_SHOT_AUTO, ops_remaining(&c.ctx));
        if (rc < 0)
            ops_fail_adbc(&c.ctx.err, rc, "screenshot");
    } else {
        /* The screen and its refs of the same moment: the snapshot (which
         * becomes the latest, so the numbers drawn are the refs to act on)
         * and the raw frame with its refs drawn (ops_shot_marked). web=1: the
         * pages' refs are drawn too. */
        c.ctx.web = web.web;
        c.ctx.web_budget_ms = web.web_budget_ms;
        rc = ops_snapshot(&c.ctx);
        if (rc == 0)
            rc = ops_shot_marked(&c.ctx, &png, &n);
    }
    end(r, &c, rc < 0);
    if (rc < 0)
        return err(&c.ctx.err, body, len);
    /* The response is freed with free(); the PNG came from adbc's
     * allocator, so it is handed over as a copy (a copy costs far less than
     * the screenshot). */
    *body = malloc(n ? n : 1);
    if (*body)
        memcpy(*body, png, n);
    adbc_free(png);
    if (!*body) {
        ops_fail(&c.ctx.err, OPS_EFAIL, "out of memory for a %zu-byte screenshot", n);
        return err(&c.ctx.err, body, len);
    }
    *len = n;
    *ctype = "image/png";
    return 200;
}

static int sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    return nanosleep(&ts, NULL);
}

static int r_act(serve_req *r, const cJSON *a, char **body, size_t *len)
{
    static const char *const names[] = {
        "action", "ref", "selector", "snapshot", "x", "y", "cell", "text", "clear", "key", "x1",
        "y1", "x2", "y2", "duration_ms", "direction", "settle_ms", "screenshot", "device", NULL};
    ops_err e;
    const char *name = NULL, *device = NULL;
    int settle = r->srv->settle_ms, shot = 0;
    ops_action action;
    ops_act op;
    if (ops_arg_only(&e, a, names) || ops_arg_str(&e, a, "action", 1, 32, &name) ||
        ops_arg_str(&e, a, "device", 0, 255, &device) ||
        ops_arg_int(&e, a, "settle_ms", 0, 0, 10000, &settle) ||
        ops_arg_bool(&e, a, "screenshot", &shot))
        return err(&e, body, len);
    if (ops_action_parse(&action, name) != 0) {
        ops_fail(&e, OPS_EARG, "unknown action '%.40s': tap, type, press, swipe, scroll, "
                 "long_press, back or home", name);
        return err(&e, body, len);
    }
    if (ops_act_parse(&op, action, a, &e) != 0)
        return err(&e, body, len);
    call c;
    if (begin(r, &c, device) != 0)
        return err(&c.ctx.err, body, len);
    int rc = ops_act_run(&c.ctx, &op);
    cJSON *res = NULL;
    if (rc == 0) {
        res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "done", c.ctx.done);
        if (c.ctx.acted_ref) {
            int at[2] = {c.ctx.where.x, c.ctx.where.y};
            cJSON_AddNumberToObject(res, "ref", c.ctx.acted_ref);
            cJSON_AddItemToObject(res, "at", cJSON_CreateIntArray(at, 2));
            cJSON_AddBoolToObject(res, "moved", c.ctx.where.how == ADBC_ACT_MOVED);
        }
        if (settle > ops_remaining(&c.ctx) / 2)
            settle = ops_remaining(&c.ctx) / 2;
        if (settle)
            sleep_ms(settle);
        cJSON *obs = NULL;
        /* The act was done: a failed look afterwards is said, not an error. */
        if (ops_observe(&c.ctx, &obs) == 0 && (!shot || screenshot_b64(&c, obs, 0) == 0)) {
            cJSON_AddItemToObject(res, "observation", obs);
        } else {
            cJSON_Delete(obs);
            cJSON_AddNullToObject(res, "observation");
            cJSON_AddStringToObject(res, "observation_error", c.ctx.err.msg);
        }
    }
    end(r, &c, rc != 0);
    if (rc != 0)
        return err(&c.ctx.err, body, len);
    return ok(res, body, len);
}

/* A route whose body is the operation's arguments plus an optional
 * "device": the arguments without it, and the call begun on that device. */
static int begin_args(serve_req *r, const cJSON *a, call *c, cJSON **args)
{
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(a, "device");
    *args = cJSON_Duplicate(a, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(*args, "device");
    if (begin(r, c, cJSON_IsString(dv) ? dv->valuestring : NULL) != 0) {
        cJSON_Delete(*args);
        *args = NULL;
        return -1;
    }
    return 0;
}

static int r_app(serve_req *r, const cJSON *a, char **body, size_t *len)
{
    call c;
    cJSON *args;
    if (begin_args(r, a, &c, &args) != 0)
        return err(&c.ctx.err, body, len);
    cJSON *res = NULL;
    int rc = ops_app(&c.ctx, args, &res);
    end(r, &c, rc != 0);
    cJSON_Delete(args);
    if (rc != 0)
        return err(&c.ctx.err, body, len);
    return ok(res, body, len);
}

static int r_wait(serve_req *r, const cJSON *a, char **body, size_t *len)
{
    call c;
    cJSON *args;
    if (begin_args(r, a, &c, &args) != 0)
        return err(&c.ctx.err, body, len);
    int rc = ops_wait(&c.ctx, args);
    cJSON *res = NULL;
    if (rc == 0) {
        res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "done", c.ctx.done);
        char *t = ops_snapshot_text(c.dev->last);
        cJSON_AddStringToObject(res, "snapshot", t ? t : "");
        free(t);
        cJSON_AddStringToObject(res, "snapshot_id", adbc_ui_snap_id(c.dev->last));
        cJSON_AddItemToObject(res, "refs", ops_refs_json(c.dev->last));
    }
    end(r, &c, rc != 0);
    cJSON_Delete(args);
    if (rc != 0)
        return err(&c.ctx.err, body, len);
    return ok(res, body, len);
}

static int r_devices(serve_req *r, char **body, size_t *len)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < r->srv->ndevs; i++) {
        ops_dev *d = r->srv->devs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "device", d->serial);
        int st = d->state;
        int busy = pthread_mutex_trylock(&d->lock) != 0;
        char why[512] = "";
        if (!busy) {
            snprintf(why, sizeof why, "%s", d->error);
            pthread_mutex_unlock(&d->lock);
        }
        cJSON_AddStringToObject(o, "state", st == OPS_DEV_CONNECTED ? "connected"
                                            : st == OPS_DEV_GONE     ? "gone"
                                                                 : "connecting");
        cJSON_AddBoolToObject(o, "busy", busy);
        if (st == OPS_DEV_GONE && why[0])
            cJSON_AddStringToObject(o, "error", why);
        cJSON_AddItemToArray(arr, o);
    }
    return ok(arr, body, len);
}

int serve_route(serve_req *r, char **body, size_t *len, const char **ctype)
{
    static const struct {
        const char *path, *method;
    } routes[] = {{"/health", "GET"},     {"/v1/devices", "GET"}, {"/v1/observe", "GET"},
                  {"/v1/snapshot", "GET"}, {"/v1/screenshot", "GET"}, {"/v1/act", "POST"},
                  {"/v1/app", "POST"},    {"/v1/wait", "POST"}};
    *ctype = "application/json";
    if (strcmp(r->path, "/v1/tools") == 0 || strncmp(r->path, "/v1/tools/", 10) == 0)
        return serve_tools_route(r, body, len);
    if (serve_tasks_is_route(r->path))
        return serve_tasks_route(r, body, len);
    if (serve_farm_is_route(r->path))
        return serve_farm_route(r, body, len);
    int page = serve_page(r, body, len, ctype);
    if (page)
        return page;
    size_t i, n = sizeof routes / sizeof routes[0];
    for (i = 0; i < n && strcmp(r->path, routes[i].path) != 0; i++) {
    }
    if (i == n)
        return err2("no_route", 404, "no such route: GET /health, /v1/devices, /v1/observe, "
                    "/v1/snapshot, /v1/screenshot, /v1/tools; POST /v1/act, /v1/app, /v1/wait, "
                    "/v1/tools/NAME", body, len);
    /* HEAD: /health's answer without its body (libmicrohttpd sends none). */
    int head = i == 0 && strcmp(r->method, "HEAD") == 0;
    if (!head && strcmp(r->method, routes[i].method) != 0) {
        char m[128];
        snprintf(m, sizeof m, "%s takes %s", routes[i].path, routes[i].method);
        return err2("method_not_allowed", 405, m, body, len);
    }
    if (i == 0) {
        cJSON *res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "status", "ok");
        cJSON_AddStringToObject(res, "version", ADBC_VERSION_STRING);
        cJSON_AddNumberToObject(res, "devices", r->srv->ndevs);
        return ok(res, body, len);
    }
    if (i == 1)
        return r_devices(r, body, len);
    if (i == 2)
        return r_observe(r, body, len);
    if (i == 3)
        return r_snapshot(r, body, len);
    if (i == 4)
        return r_screenshot(r, body, len, ctype);
    cJSON *a = NULL;
    ops_err pe;
    if (ops_json_parse(&pe, r->body, r->body_len, &a) != 0) {
        char m[sizeof pe.msg + 80];
        snprintf(m, sizeof m, "%s: the body must be one JSON object, e.g. "
                 "{\"action\":\"tap\",\"ref\":3}", pe.msg);
        return err2("bad_json", 400, m, body, len);
    }
    if (!cJSON_IsObject(a)) {
        cJSON_Delete(a);
        return err2("bad_json", 400, "the body must be one JSON object, e.g. "
                    "{\"action\":\"tap\",\"ref\":3}", body, len);
    }
    int st = i == 5 ? r_act(r, a, body, len) : i == 6 ? r_app(r, a, body, len)
                                                      : r_wait(r, a, body, len);
    cJSON_Delete(a);
    return st;
}
