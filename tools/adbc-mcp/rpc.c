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
    cJSON *id;
    cJSON *params;
} call_job;

static void *call_thread(void *arg)
{
    call_job *job = arg;
    mcp_server *s = job->srv;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(job->params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(job->params, "arguments");
    cJSON *r = NULL;
    ops_err e;
    if (ops_tools_call(&s->fe, name->valuestring, cJSON_IsObject(args) ? args : NULL, &r,
                       &e) != 0) {
        if (e.code == OPS_ENOMATCH)
            rpc_error(s, job->id, -32602, "unknown tool '%.100s': tools/list names the tools",
                      name->valuestring);
        else
            rpc_error(s, job->id, -32603, "%s", e.msg);
    } else {
        rpc_result(s, job->id, r);
    }
    cJSON_Delete(job->id);
    cJSON_Delete(job->params);
    free(job);
    pthread_mutex_lock(&s->flight_lock);
    s->done[s->ndone++] = pthread_self();
    s->inflight--;
    pthread_cond_broadcast(&s->flight_cond);
    pthread_mutex_unlock(&s->flight_lock);
    return NULL;
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
    }
    pthread_t t;
    if (!job || !job->id || !job->params || pthread_create(&t, NULL, call_thread, job) != 0) {
        if (job) {
            cJSON_Delete(job->id);
            cJSON_Delete(job->params);
            free(job);
        }
        pthread_mutex_lock(&s->flight_lock);
        s->inflight--;
        pthread_mutex_unlock(&s->flight_lock);
        rpc_error(s, id, -32603, "cannot start the call (out of memory or threads)");
        return;
    }
}

static int valid_id(const cJSON *id)
{
    return cJSON_IsString(id) || (cJSON_IsNumber(id) && id->valuedouble == (double)(long long)
                                                                             id->valuedouble);
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
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    if (id && !valid_id(id)) {
        rpc_error(s, NULL, -32600, "invalid request: id must be a string or an integer");
        goto out;
    }
    if (!cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") != 0) {
        rpc_error(s, id, -32600, "invalid request: \"jsonrpc\" must be \"2.0\"");
        goto out;
    }
    if (!method) {
        /* A response to a request of ours: the server sends none, so this
         * is only checked, never answered. */
        if (!cJSON_GetObjectItemCaseSensitive(msg, "result") &&
            !cJSON_GetObjectItemCaseSensitive(msg, "error"))
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
        if (strncmp(m, "notifications/", 14) != 0)
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
        cJSON *r = cJSON_CreateObject(), *l = ops_tools_list(s->fe.allow);
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
    cJSON_Delete(msg);
}
