/* SPDX-License-Identifier: Apache-2.0 */
/* The tool table over HTTP: GET /v1/tools lists tools/ops' table (the one
 * adbc-mcp serves), POST /v1/tools/NAME runs one with the JSON body as its
 * arguments. Same envelope, token, device selection (?device=NAME or
 * "device" in the body, ?wait=MS) and status mapping as the other routes:
 * {"ok":true,"result":{"content":[...]}} when the tool succeeded, else
 * {"ok":false,"error":{"code","message"}} with the status of the code.
 * What the table holds that is not for HTTP clients stays out: the device
 * list and choice (devices are named per request here), files on the
 * server's machine (install_apk, screenshot files), and the shell. The
 * Termux:API tools are there when adbc-serve runs in Termux. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_termux.h"
#include "ops_tools.h"

/* One request's device: what it names, and how long it waits for it. */
typedef struct tools_req {
    serve *srv;
    const char *device;
    int wait_ms;
} tools_req;

static int dev_take(ops_call *c)
{
    tools_req *t = c->fe->user;
    ops_err e;
    ops_dev *d = serve_dev_find(t->srv, t->device, &e);
    if (!d || ops_dev_take(&t->srv->pool, d, t->wait_ms, c->deadline, &e) != 0)
        return ops_call_err(c, &e);
    c->dev = d;
    return 0;
}

static void dev_give(ops_call *c)
{
    tools_req *t = c->fe->user;
    if (!c->dev)
        return;
    ops_dev_give(&t->srv->pool, c->dev, c->is_error ? c->err.code : OPS_OK);
    c->dev = NULL;
}

/* The gates open here: Termux:API on the phone adbc-serve runs on, and the
 * tools a person allowed by name. */
static unsigned allow(const serve *s)
{
    return (ops_termux_available() ? OPS_TOOL_TERMUX : 0) | s->optin;
}

/* The routes of this file (tests/sh/openapi.sh reads this table). */
static const struct {
    const char *path, *method;
} routes[] = {{"/v1/tools", "GET"}, {"/v1/tools/{name}", "POST"}};

int serve_tools_route(serve_req *r, char **body, size_t *len)
{
    ops_err e;
    int run = strcmp(r->path, routes[0].path) != 0; /* /v1/tools/NAME */
    if (strcmp(r->method, routes[run].method) != 0) {
        *body = serve_error_json("method_not_allowed", run ? "/v1/tools/NAME takes POST, with "
                                 "the tool's arguments as a JSON object" : "/v1/tools takes GET "
                                 "(POST /v1/tools/NAME runs a tool)", len);
        return 405;
    }
    if (!run)
        return serve_reply_ok(ops_tools_list(allow(r->srv), r->srv->call_ms), body, len);
    const char *name = r->path + strlen("/v1/tools/");
    tools_req t = {r->srv, r->arg(r->conn, "device"), r->srv->busy_ms};
    const char *w = r->arg(r->conn, "wait");
    if (w) {
        char *end;
        long v = strtol(w, &end, 10);
        if (!*w || *end || v < 0 || v > 600000) {
            ops_fail(&e, OPS_EARG, "?wait= takes milliseconds 0..600000");
            return serve_reply_err(&e, body, len);
        }
        t.wait_ms = (int)v;
    }
    cJSON *args = NULL;
    if (r->body_len && ops_json_parse(&e, r->body, r->body_len, &args) != 0) {
        char m[sizeof e.msg + 128];
        snprintf(m, sizeof m, "%s: the body must be one JSON object, the tool's arguments "
                 "(GET /v1/tools gives each one's inputSchema)", e.msg);
        *body = serve_error_json("bad_json", m, len);
        return 400;
    }
    if (args && !cJSON_IsObject(args)) {
        cJSON_Delete(args);
        *body = serve_error_json("bad_json", "the body must be one JSON object, the tool's "
                                 "arguments (GET /v1/tools gives each one's inputSchema)", len);
        return 400;
    }
    /* "device" in the body, as the other POST routes take it. */
    cJSON *dv = cJSON_DetachItemFromObjectCaseSensitive(args, "device");
    if (dv && !cJSON_IsString(dv)) {
        cJSON_Delete(dv);
        cJSON_Delete(args);
        ops_fail(&e, OPS_EARG, "\"device\" must be a string (GET /v1/devices lists them)");
        return serve_reply_err(&e, body, len);
    }
    if (dv)
        t.device = dv->valuestring;
    ops_front fe;
    memset(&fe, 0, sizeof fe);
    fe.device = dev_take;
    fe.device_done = dev_give;
    fe.user = &t;
    fe.call_ms = r->srv->call_ms;
    fe.settle_ms = r->srv->settle_ms;
    fe.uninstall = r->srv->uninstall;
    fe.allow = allow(r->srv);
    cJSON *res = NULL;
    int rc = ops_tools_call(&fe, name, args, &res, &e);
    cJSON_Delete(dv);
    cJSON_Delete(args);
    if (rc == 0 && e.code == OPS_OK)
        return serve_reply_ok(res, body, len);
    cJSON_Delete(res);
    return serve_reply_err(&e, body, len);
}
