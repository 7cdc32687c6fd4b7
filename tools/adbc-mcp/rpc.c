/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC 2.0 over newline-delimited stdio, as MCP's stdio transport
 * defines it: one message a line, requests answered with a result or an
 * error, notifications never answered. */
#include "mcp.h"
#include "ops_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Newest first: what initialize offers when the client asks for another. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", NULL};

static const char *instructions =
    "adbc-mcp drives one Android device. Start with snapshot: it lists the screen's "
    "elements, each actionable one with [ref=N]. Act with tap/type/scroll/long_press "
    "on those refs; every act returns the new snapshot. A ref that no longer matches "
    "the screen is refused (take a new snapshot), never guessed. Use find to look up "
    "refs by text or id, wait_for_text after something that takes time, and "
    "screenshot or tap_grid when the snapshot does not show what you need.";

void rpc_send(mcp_server *s, cJSON *msg)
{
    char *text = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!text) {
        mcp_log("out of memory printing a response");
        return;
    }
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the NUL: written with its length */
    pthread_mutex_lock(&s->out_lock);
    size_t off = 0;
    while (off < n + 1) {
        ssize_t w = write(s->out_fd, text + off, n + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            mcp_log("cannot write to stdout: %s", w < 0 ? strerror(errno) : "closed");
            break;
        }
        off += (size_t)w;
    }
    pthread_mutex_unlock(&s->out_lock);
    free(text);
}

static cJSON *envelope(const cJSON *id)
{
    cJSON *m = cJSON_CreateObject();
    if (!m)
        return NULL;
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 0) : cJSON_CreateNull());
    return m;
}

void rpc_error(mcp_server *s, const cJSON *id, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ops_utf8_fix(msg); /* a quoted name cut short must not make the answer invalid */
    cJSON *m = envelope(id);
    if (!m)
        return;
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    rpc_send(s, m);
}

static void rpc_result(mcp_server *s, const cJSON *id, cJSON *result)
{
    cJSON *m = envelope(id);
    if (!m || !result) {
        cJSON_Delete(m);
        cJSON_Delete(result);
        rpc_error(s, id, -32603, "out of memory");
        return;
    }
    cJSON_AddItemToObject(m, "result", result);
    rpc_send(s, m);
}

static void on_initialize(mcp_server *s, const cJSON *id, const cJSON *params)
{
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
    if (!cJSON_IsString(pv)) {
        rpc_error(s, id, -32602, "initialize needs params.protocolVersion (a string such as "
                                 "\"2025-11-25\")");
        return;
    }
    const char *chosen = versions[0];
    for (int i = 0; versions[i]; i++)
        if (strcmp(versions[i], pv->valuestring) == 0)
            chosen = versions[i];
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "protocolVersion", chosen);
    cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
    cJSON *tools = cJSON_AddObjectToObject(caps, "tools");
    cJSON_AddFalseToObject(tools, "listChanged");
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", MCP_NAME);
    cJSON_AddStringToObject(info, "version", MCP_VERSION);
    cJSON_AddStringToObject(r, "instructions", instructions);
    mcp_log("initialize: client asked for %.40s, using %s", pv->valuestring, chosen);
    rpc_result(s, id, r);
}

/* tools/call runs on its own thread. */
typedef struct call_job {
    mcp_server *srv;
    cJSON *id;               /* as sent (a raw item: echoed and matched as written) */
    cJSON *params;
    ops_cancel cancel;       /* fired by notifications/cancelled naming id */
    int slot;                /* in srv->jobs */
} call_job;

static void job_free(call_job *job)
{
    cJSON_Delete(job->id);
    cJSON_Delete(job->params);
    ops_cancel_destroy(&job->cancel);
    free(job);
}

static void *call_thread(void *arg)
{
    call_job *job = arg;
    mcp_server *s = job->srv;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(job->params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(job->params, "arguments");
    cJSON *r = NULL;
    ops_err e;
    int rc = ops_tools_call_cancel(&s->fe, name->valuestring, cJSON_IsObject(args) ? args : NULL,
                                   &job->cancel, &r, &e);
    pthread_mutex_lock(&s->flight_lock);
    s->jobs[job->slot] = NULL; /* no cancel reaches it from here on */
    pthread_mutex_unlock(&s->flight_lock);
    if (ops_cancel_fired(&job->cancel)) {
        /* MCP: a cancelled request gets no response. */
        mcp_log("tools/call %s: cancelled by the client, no answer sent", name->valuestring);
        cJSON_Delete(r);
    } else if (rc != 0) {
        if (e.code == OPS_ENOMATCH)
            rpc_error(s, job->id, -32602, "unknown tool '%.100s': tools/list names the tools",
                      name->valuestring);
        else
            rpc_error(s, job->id, -32603, "%s", e.msg);
    } else {
        rpc_result(s, job->id, r);
    }
    job_free(job);
    pthread_mutex_lock(&s->flight_lock);
    s->done[s->ndone++] = pthread_self();
    s->inflight--;
    pthread_cond_broadcast(&s->flight_cond);
    pthread_mutex_unlock(&s->flight_lock);
    return NULL;
}

/* notifications/cancelled: the running call whose id is requestId (as
 * written, ops_json_member_raw) stops and sends nothing. A call that has
 * finished, or an id never seen, is no error (MCP: the notice may cross
 * the answer). */
static void on_cancelled(mcp_server *s, const char *line, size_t len, const cJSON *params)
{
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(params, "requestId");
    if (!cJSON_IsString(rid) && !cJSON_IsNumber(rid))
        return;
    cJSON *p = ops_json_member_raw(line, len, "params");
    cJSON *want = p ? ops_json_member_raw(p->valuestring, strlen(p->valuestring), "requestId")
                    : NULL;
    cJSON_Delete(p);
    if (!want)
        return;
    int found = 0;
    pthread_mutex_lock(&s->flight_lock);
    for (int i = 0; i < MCP_MAX_INFLIGHT; i++) {
        call_job *j = s->jobs[i];
        if (j && strcmp(j->id->valuestring, want->valuestring) == 0) {
            ops_cancel_fire(&j->cancel);
            found = 1;
        }
    }
    pthread_mutex_unlock(&s->flight_lock);
    mcp_log("cancel of request %.64s: %s", want->valuestring,
            found ? "stopping it" : "not running (finished, or never sent)");
    cJSON_Delete(want);
}

void rpc_join_done(mcp_server *s)
{
    pthread_t t[2 * MCP_MAX_INFLIGHT];
    pthread_mutex_lock(&s->flight_lock);
    int n = s->ndone;
    memcpy(t, s->done, (size_t)n * sizeof(t[0]));
    s->ndone = 0;
    pthread_mutex_unlock(&s->flight_lock);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

static void on_tools_call(mcp_server *s, const cJSON *id, const cJSON *params)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    if (!cJSON_IsString(name)) {
        rpc_error(s, id, -32602, "tools/call needs params.name, a tool name from tools/list");
        return;
    }
    if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args)) {
        rpc_error(s, id, -32602, "tools/call params.arguments must be an object");
        return;
    }
    rpc_join_done(s);
    pthread_mutex_lock(&s->flight_lock);
    int busy = s->inflight >= MCP_MAX_INFLIGHT;
    if (!busy)
        s->inflight++;
    pthread_mutex_unlock(&s->flight_lock);
    if (busy) {
        rpc_error(s, id, -32603, "%d tool calls are already running: wait for one to finish",
                  MCP_MAX_INFLIGHT);
        return;
    }
    call_job *job = calloc(1, sizeof(*job));
    if (job) {
        job->srv = s;
        job->id = cJSON_Duplicate(id, 1);
        job->params = cJSON_Duplicate(params, 1);
        ops_cancel_init(&job->cancel);
    }
    pthread_t t;
    int started = 0;
    if (job && job->id && job->params) {
        pthread_mutex_lock(&s->flight_lock);
        for (job->slot = 0; s->jobs[job->slot]; job->slot++)
            ; /* inflight < MCP_MAX_INFLIGHT: there is a free slot */
        s->jobs[job->slot] = job;
        started = pthread_create(&t, NULL, call_thread, job) == 0;
        if (!started)
            s->jobs[job->slot] = NULL;
        pthread_mutex_unlock(&s->flight_lock);
    }
    if (!started) {
        if (job)
            job_free(job);
        pthread_mutex_lock(&s->flight_lock);
        s->inflight--;
        pthread_mutex_unlock(&s->flight_lock);
        rpc_error(s, id, -32603, "cannot start the call (out of memory or threads)");
        return;
    }
}

/* A request's id: a string or a number (MCP's RequestId), echoed as the
 * very text it was sent as (ops_json_member_raw): a number held as a
 * double would come back changed (9007199254740993, 2^63-1, 1e400, 0.1). */
static int valid_id(const cJSON *id)
{
    return cJSON_IsString(id) || cJSON_IsNumber(id);
}

void rpc_handle_line(mcp_server *s, const char *line, size_t len)
{
    cJSON *msg = NULL;
    ops_err pe;
    if (ops_json_parse(&pe, line, len, &msg) != 0) {
        /* One value a line, UTF-8, no key twice (ops_json_parse). */
        rpc_error(s, NULL, -32700, "parse error: each line must hold one JSON-RPC message: %s",
                  pe.msg);
        return;
    }
    if (!cJSON_IsObject(msg)) {
        rpc_error(s, NULL, -32600, "invalid request: a message must be a JSON object (batches "
                                   "are not part of MCP)");
        cJSON_Delete(msg);
        return;
    }
    cJSON *raw_id = NULL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    if (!method && (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
                    cJSON_GetObjectItemCaseSensitive(msg, "error"))) {
        /* A response (this server sends no requests): never answered, not
         * even when it is malformed or its id is null (JSON-RPC 2.0: a
         * response is not replied to). */
        mcp_log("ignored a response from the client (id %s)",
                cJSON_IsString(id) ? "a string" : cJSON_IsNumber(id) ? "a number" : "null");
        goto out;
    }
    if (id && !valid_id(id)) {
        rpc_error(s, NULL, -32600, "invalid request: id must be a string or a number");
        goto out;
    }
    if (id) {
        if (!(raw_id = ops_json_member_raw(line, len, "id"))) {
            rpc_error(s, NULL, -32603, "out of memory reading the id");
            goto out;
        }
        id = raw_id;
    }
    if (!cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") != 0) {
        rpc_error(s, id, -32600, "invalid request: \"jsonrpc\" must be \"2.0\"");
        goto out;
    }
    if (!method) {
        rpc_error(s, id, -32600, "invalid request: no \"method\"");
        goto out;
    }
    if (!cJSON_IsString(method)) {
        rpc_error(s, id, -32600, "invalid request: \"method\" must be a string");
        goto out;
    }
    const char *m = method->valuestring;
    if (!id) {
        /* Notifications: initialized, cancelled, ... need no answer. */
        if (strcmp(m, "notifications/cancelled") == 0)
            on_cancelled(s, line, len, params);
        else if (strncmp(m, "notifications/", 14) != 0)
            mcp_log("ignored notification '%.100s'", m);
        goto out;
    }
    if (params && !cJSON_IsObject(params)) {
        rpc_error(s, id, -32602, "invalid params: \"params\" must be an object");
        goto out;
    }
    if (strcmp(m, "initialize") == 0) {
        on_initialize(s, id, params);
    } else if (strcmp(m, "ping") == 0) {
        rpc_result(s, id, cJSON_CreateObject());
    } else if (strcmp(m, "tools/list") == 0) {
        cJSON *r = cJSON_CreateObject(), *l = ops_tools_list(s->fe.allow, s->fe.call_ms);
        if (r && l)
            cJSON_AddItemToObject(r, "tools", l);
        else
            cJSON_Delete(l);
        rpc_result(s, id, r && l ? r : NULL);
        if (!l)
            cJSON_Delete(r);
    } else if (strcmp(m, "tools/call") == 0) {
        on_tools_call(s, id, params);
    } else {
        rpc_error(s, id, -32601, "method not found: '%.100s' (this server has initialize, "
                                 "ping, tools/list and tools/call)", m);
    }
out:
    cJSON_Delete(raw_id);
    cJSON_Delete(msg);
}
