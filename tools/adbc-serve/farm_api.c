/* SPDX-License-Identifier: Apache-2.0 */
/* The farm's routes (docs/farm.md), answered the same by every node: they
 * read and change Redis, never this node's memory, so a task submitted on
 * one node is watched and cancelled on any other. GET /v1/farm/tasks/ID/events
 * reads the task's event stream with a blocking XREAD on a connection of
 * its own (one per watcher: libmicrohttpd gives each its own thread). */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The routes of this file (tests/sh/openapi.sh reads this table). */
static const struct {
    const char *path, *method;
} routes[] = {{"/v1/farm", "GET"},
              {"/v1/farm/devices", "GET"},
              {"/v1/farm/tasks", "POST"},
              {"/v1/farm/tasks", "GET"},
              {"/v1/farm/tasks/{id}", "GET"},
              {"/v1/farm/tasks/{id}/events", "GET"},
              {"/v1/farm/tasks/{id}/cancel", "POST"}};

int serve_farm_is_route(const char *path)
{
    return strcmp(path, "/v1/farm") == 0 || strncmp(path, "/v1/farm/", 9) == 0;
}

static int err2(const char *code, int status, const char *msg, char **body, size_t *len)
{
    *body = serve_error_json(code, msg, len);
    return status;
}

#if !defined(ADBC_HAVE_HIREDIS) || !defined(ADBC_HAVE_AGENT)

int serve_farm_route(serve_req *r, char **body, size_t *len)
{
    (void)r;
    (void)routes;
    return err2("no_route", 404, "this adbc-serve was built without the farm (it needs hiredis "
                "and the agent: docs/build.md)", body, len);
}

int serve_farm_events(serve_req *r, serve_farm_stream **st, char **body, size_t *len)
{
    (void)r, (void)body, (void)len;
    *st = NULL;
    return 0;
}

long serve_farm_stream_read(serve_farm_stream *st, char *buf, size_t max)
{
    (void)st, (void)buf, (void)max;
    return -1;
}

void serve_farm_stream_free(serve_farm_stream *st)
{
    (void)st;
}

#else

#include "farm.h"
#include "ops_util.h"

#define KEEPALIVE_MAX_MS 15000

static int reply_ok(int status, cJSON *result, char **body, size_t *len)
{
    int st = serve_reply_ok(result, body, len);
    return st == 200 ? status : st;
}

static int unavailable(const char *why, char **body, size_t *len)
{
    char m[700];
    snprintf(m, sizeof m, "the farm is unavailable: %s (this node's own routes still work; it "
             "rejoins by itself)", why);
    return err2("farm_unavailable", 503, m, body, len);
}

/* One command on the shared connection: its reply, or NULL with the
 * answer (503) in *body. */
static redisReply *api_cmd(const char *script, int argc, const char **argv, int *st,
                           char **body, size_t *len)
{
    char why[512];
    if (!farm_available(why, sizeof why)) {
        *st = unavailable(why, body, len);
        return NULL;
    }
    redisReply *r = farm_api_call(script, argc, argv, why, sizeof why);
    if (r && r->type == REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        *st = err2("failed", 500, why, body, len);
        return NULL;
    }
    if (!r)
        *st = unavailable(why, body, len);
    return r;
}

static int no_task(const char *id, char **body, size_t *len)
{
    char m[200];
    snprintf(m, sizeof m, "no farm task '%.40s' (GET /v1/farm/tasks lists the latest; an ended "
             "task is kept for a day)", id);
    return err2("not_found", 404, m, body, len);
}

static int r_node(char **body, size_t *len)
{
    char why[512];
    int ok = farm_available(why, sizeof why);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", farm_conf.node);
    cJSON_AddBoolToObject(o, "available", ok);
    if (!ok)
        cJSON_AddStringToObject(o, "error", why);
    char where[300];
    snprintf(where, sizeof where, "%s:%d/%d", farm_conf.host, farm_conf.port, farm_conf.db);
    cJSON_AddStringToObject(o, "redis", where);
    cJSON_AddNumberToObject(o, "lease_ms", farm_conf.lease_ms);
    return reply_ok(200, o, body, len);
}

static int r_devices(char **body, size_t *len)
{
    int st = 0;
    cJSON *nodes = cJSON_CreateArray(), *devs = cJSON_CreateArray(), *res = cJSON_CreateObject();
    cJSON_AddItemToObject(res, "nodes", nodes);
    cJSON_AddItemToObject(res, "devices", devs);
    char cursor[32] = "0";
    int rounds = 0;
    do {
        const char *a[] = {"SCAN", cursor, "MATCH", FARM_PREFIX "node:*", "COUNT", "1000"};
        redisReply *r = api_cmd(NULL, 6, a, &st, body, len);
        if (!r) {
            cJSON_Delete(res);
            return st;
        }
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
            snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
            const redisReply *keys = r->element[1];
            for (size_t i = 0; i < keys->elements; i++) {
                const char *g[] = {"GET", keys->element[i]->str};
                redisReply *v = api_cmd(NULL, 2, g, &st, body, len);
                if (!v) {
                    freeReplyObject(r);
                    cJSON_Delete(res);
                    return st;
                }
                cJSON *n = v->type == REDIS_REPLY_STRING ? cJSON_Parse(v->str) : NULL;
                freeReplyObject(v);
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(n, "node");
                const cJSON *ds = cJSON_GetObjectItemCaseSensitive(n, "devices");
                if (cJSON_IsString(name)) {
                    cJSON_AddItemToArray(nodes, cJSON_CreateString(name->valuestring));
                    const cJSON *d;
                    cJSON_ArrayForEach(d, ds)
                    {
                        cJSON *c = cJSON_Duplicate(d, 1);
                        cJSON_AddStringToObject(c, "node", name->valuestring);
                        cJSON_AddItemToArray(devs, c);
                    }
                }
                cJSON_Delete(n);
            }
        } else {
            snprintf(cursor, sizeof cursor, "0");
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0 && ++rounds < 1000);
    return reply_ok(200, res, body, len);
}

static int r_submit(serve_req *r, char **body, size_t *len)
{
    static const char *const names[] = {"goal", "model", "max_steps", "step_delay_ms", "select",
                                        NULL};
    static const char *const snames[] = {"serial", "model", "min_sdk", "emulator", NULL};
    ops_err e;
    cJSON *a = NULL;
    if (ops_json_parse(&e, r->body, r->body_len, &a) != 0)
        return err2("bad_json", 400, e.msg, body, len);
    if (!cJSON_IsObject(a)) {
        cJSON_Delete(a);
        return err2("bad_json", 400, "the body must be one JSON object: {\"goal\":...}", body,
                    len);
    }
    const char *goal = NULL, *model = NULL, *s = NULL;
    int max_steps = 0, delay = -1, sdk = 0, emu = 0;
    cJSON *sel = cJSON_GetObjectItemCaseSensitive(a, "select");
    if (ops_arg_only(&e, a, names) || ops_arg_str(&e, a, "goal", 1, 4000, &goal) ||
        ops_arg_str(&e, a, "model", 0, 255, &model) ||
        ops_arg_int(&e, a, "max_steps", 0, 1, 50, &max_steps) ||
        ops_arg_int(&e, a, "step_delay_ms", 0, 0, 60000, &delay) ||
        (sel && !cJSON_IsObject(sel) &&
         ops_fail(&e, OPS_EARG, "select must be an object: {\"serial\", \"model\", \"min_sdk\", "
                  "\"emulator\"}")) ||
        (sel && (ops_arg_only(&e, sel, snames) || ops_arg_str(&e, sel, "serial", 0, 255, &s) ||
                 ops_arg_str(&e, sel, "model", 0, 127, &s) ||
                 ops_arg_int(&e, sel, "min_sdk", 0, 1, 1000, &sdk) ||
                 ops_arg_bool(&e, sel, "emulator", &emu)))) {
        cJSON_Delete(a);
        return serve_reply_err(&e, body, len);
    }
    if (!*goal) {
        cJSON_Delete(a);
        return err2("bad_request", 400, "goal is empty: say what the agent should do", body, len);
    }
    char ms[16], dl[16];
    snprintf(ms, sizeof ms, "%d", max_steps);
    snprintf(dl, sizeof dl, "%d", delay);
    char *seltext = sel ? cJSON_PrintUnformatted(sel) : NULL;
    const char *args[] = {goal, model ? model : "", ms, dl, seltext ? seltext : "",
                          farm_conf.node};
    int st = 0;
    redisReply *rep = api_cmd(farm_lua_submit, 6, args, &st, body, len);
    free(seltext);
    cJSON_Delete(a);
    if (!rep)
        return st;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", rep->type == REDIS_REPLY_STRING ? rep->str : "");
    cJSON_AddStringToObject(o, "status", "queued");
    freeReplyObject(rep);
    return reply_ok(202, o, body, len);
}

static int r_list(char **body, size_t *len)
{
    int st = 0;
    const char *a[] = {"ZREVRANGE", FARM_PREFIX "tasks", "0", "49"};
    redisReply *ids = api_cmd(NULL, 4, a, &st, body, len);
    if (!ids)
        return st;
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++) {
        char key[96];
        snprintf(key, sizeof key, FARM_PREFIX "task:%s", ids->element[i]->str);
        const char *g[] = {"HGETALL", key};
        redisReply *h = api_cmd(NULL, 2, g, &st, body, len);
        if (!h) {
            freeReplyObject(ids);
            cJSON_Delete(arr);
            return st;
        }
        if (h->type == REDIS_REPLY_ARRAY && h->elements > 0)
            cJSON_AddItemToArray(arr, farm_task_json(h));
        freeReplyObject(h);
    }
    freeReplyObject(ids);
    return reply_ok(200, arr, body, len);
}

static int r_one(const char *id, char **body, size_t *len)
{
    int st = 0;
    char key[96];
    snprintf(key, sizeof key, FARM_PREFIX "task:%s", id);
    const char *g[] = {"HGETALL", key};
    redisReply *h = api_cmd(NULL, 2, g, &st, body, len);
    if (!h)
        return st;
    if (h->type != REDIS_REPLY_ARRAY || h->elements == 0) {
        freeReplyObject(h);
        return no_task(id, body, len);
    }
    cJSON *o = farm_task_json(h);
    freeReplyObject(h);
    return reply_ok(200, o, body, len);
}

static int r_cancel(const char *id, char **body, size_t *len)
{
    int st = 0;
    const char *a[] = {id};
    redisReply *r = api_cmd(farm_lua_cancel, 1, a, &st, body, len);
    if (!r)
        return st;
    int none = r->type != REDIS_REPLY_STRING;
    freeReplyObject(r);
    if (none)
        return no_task(id, body, len);
    return r_one(id, body, len);
}

/* "/v1/farm/tasks/ID[/SUFFIX]": the id (letters and digits) into id, or -1. */
static int split(const char *path, char *id, size_t cap, const char **suffix)
{
    const char *p = path + 15, *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || n >= cap || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789") < n)
        return -1;
    memcpy(id, p, n);
    id[n] = '\0';
    *suffix = slash ? slash : "";
    return 0;
}

int serve_farm_route(serve_req *r, char **body, size_t *len)
{
    const char *m = r->method, *want;
    (void)routes;
    if (!serve_farm_on())
        return err2("no_route", 404, "this node is not in a farm (adbc-serve --farm "
                    "redis://HOST:PORT --farm-node NAME: docs/farm.md)", body, len);
    if (strcmp(r->path, "/v1/farm") == 0) {
        if (strcmp(m, "GET") == 0)
            return r_node(body, len);
        want = "/v1/farm takes GET";
    } else if (strcmp(r->path, "/v1/farm/devices") == 0) {
        if (strcmp(m, "GET") == 0)
            return r_devices(body, len);
        want = "/v1/farm/devices takes GET";
    } else if (strcmp(r->path, "/v1/farm/tasks") == 0) {
        if (strcmp(m, "POST") == 0)
            return r_submit(r, body, len);
        if (strcmp(m, "GET") == 0)
            return r_list(body, len);
        want = "/v1/farm/tasks takes POST (submit a task) or GET (the latest)";
    } else {
        char id[32];
        const char *suffix;
        if (strncmp(r->path, "/v1/farm/tasks/", 15) != 0 ||
            split(r->path, id, sizeof id, &suffix) != 0 ||
            (*suffix && strcmp(suffix, "/events") != 0 && strcmp(suffix, "/cancel") != 0))
            return err2("no_route", 404, "no such route: /v1/farm, /v1/farm/devices, "
                        "/v1/farm/tasks, /v1/farm/tasks/ID, /v1/farm/tasks/ID/events, "
                        "/v1/farm/tasks/ID/cancel", body, len);
        int cancel = strcmp(suffix, "/cancel") == 0;
        if (strcmp(m, cancel ? "POST" : "GET") == 0)
            return cancel ? r_cancel(id, body, len) : r_one(id, body, len);
        want = cancel ? "/v1/farm/tasks/ID/cancel takes POST"
               : *suffix ? "/v1/farm/tasks/ID/events takes GET" : "/v1/farm/tasks/ID takes GET";
    }
    return err2("method_not_allowed", 405, want, body, len);
}

/* ---- Server-Sent Events from the task's stream ---- */

struct serve_farm_stream {
    redisContext *c;
    char key[96];
    char last[64];           /* the last entry sent */
    int ended;
    int keep_ms;
    char *pend;
    size_t pend_len, pend_off;
};

int serve_farm_events(serve_req *r, serve_farm_stream **st, char **body, size_t *len)
{
    char id[32];
    const char *suffix;
    *st = NULL;
    if (strncmp(r->path, "/v1/farm/tasks/", 15) != 0 || strcmp(r->method, "GET") != 0 ||
        split(r->path, id, sizeof id, &suffix) != 0 || strcmp(suffix, "/events") != 0 ||
        !serve_farm_on())
        return 0;
    char why[512];
    if (!farm_available(why, sizeof why))
        return unavailable(why, body, len);
    serve_farm_stream *s = calloc(1, sizeof *s);
    if (!s)
        return err2("failed", 500, "out of memory", body, len);
    int keep = r->srv->conn_timeout_s * 1000 / 2;
    s->keep_ms = keep < 500 ? 500 : keep > KEEPALIVE_MAX_MS ? KEEPALIVE_MAX_MS : keep;
    snprintf(s->key, sizeof s->key, FARM_PREFIX "events:%s", id);
    snprintf(s->last, sizeof s->last, "0");
    s->c = farm_connect(&farm_conf, why, sizeof why);
    if (!s->c) {
        free(s);
        return unavailable(why, body, len);
    }
    char hkey[96];
    snprintf(hkey, sizeof hkey, FARM_PREFIX "task:%s", id);
    int dead = 0;
    redisReply *x = farm_cmd(s->c, 2, (const char *[]){"EXISTS", hkey}, why, sizeof why, &dead);
    int exists = x && x->type == REDIS_REPLY_INTEGER && x->integer == 1;
    if (x)
        freeReplyObject(x);
    if (!exists) {
        redisFree(s->c);
        free(s);
        return x ? no_task(id, body, len) : unavailable(why, body, len);
    }
    *st = s;
    return 200;
}

static int append(serve_farm_stream *s, const char *text)
{
    size_t n = strlen(text);
    char *p = realloc(s->pend, s->pend_len + n + 1);
    if (!p)
        return -1;
    memcpy(p + s->pend_len, text, n + 1);
    s->pend = p;
    s->pend_len += n;
    return 0;
}

/* Entries [[id, [k, v, ...]], ...] as events into pend. */
static void events(serve_farm_stream *s, const redisReply *ents)
{
    for (size_t i = 0; i < ents->elements; i++) {
        const redisReply *e = ents->element[i];
        const redisReply *kv = e->element[1];
        const char *ev = "message", *data = "{}";
        for (size_t k = 0; k + 1 < kv->elements; k += 2) {
            if (strcmp(kv->element[k]->str, "ev") == 0)
                ev = kv->element[k + 1]->str;
            else if (strcmp(kv->element[k]->str, "data") == 0)
                data = kv->element[k + 1]->str;
        }
        char *out = NULL;
        if (asprintf(&out, "id: %s\nevent: %s\ndata: %s\n\n", e->element[0]->str, ev, data) < 0)
            continue;
        append(s, out);
        free(out);
        snprintf(s->last, sizeof s->last, "%s", e->element[0]->str);
        if (strcmp(ev, "end") == 0)
            s->ended = 1;
    }
}

long serve_farm_stream_read(serve_farm_stream *s, char *buf, size_t max)
{
    if (!s->pend || s->pend_off == s->pend_len) {
        free(s->pend);
        s->pend = NULL;
        s->pend_len = s->pend_off = 0;
        if (s->ended)
            return -1;
        char why[512], block[16];
        snprintf(block, sizeof block, "%d", s->keep_ms);
        if (!s->c)
            s->c = farm_connect(&farm_conf, why, sizeof why);
        int dead = 0;
        redisReply *r = NULL;
        if (s->c) {
            const char *a[] = {"XREAD", "COUNT", "32", "BLOCK", block, "STREAMS", s->key, s->last};
            r = farm_cmd(s->c, 8, a, why, sizeof why, &dead);
        }
        if (dead) {
            redisFree(s->c);
            s->c = NULL;
        }
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1)
            events(s, r->element[0]->element[1]);
        if (r)
            freeReplyObject(r);
        if (!s->pend) {
            if (!r || dead) {
                /* Redis away: say so, and wait a little before the next try. */
                struct timespec ts = {1, 0};
                nanosleep(&ts, NULL);
                append(s, ": the farm is unavailable, retrying\n\n");
            } else {
                append(s, ": keep-alive\n\n");
            }
            if (!s->pend)
                return -1;
        }
    }
    size_t n = s->pend_len - s->pend_off;
    if (n > max)
        n = max;
    memcpy(buf, s->pend + s->pend_off, n);
    s->pend_off += n;
    return (long)n;
}

void serve_farm_stream_free(serve_farm_stream *s)
{
    if (!s)
        return;
    if (s->c)
        redisFree(s->c);
    free(s->pend);
    free(s);
}

#endif
