/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap agent --serve URL: the task runs on a remote adbc-serve, through
 * its tasks API (docs/agent.md, "Tasks on adbc-serve"): POST /v1/tasks, then
 * GET /v1/tasks/ID/events, whose step events are printed as a local run
 * prints its steps; a cancel here is POST /v1/tasks/ID/cancel there. The
 * token goes in the Authorization header only and is never printed. HTTP is
 * libcurl's (the agent's client library, docs/build.md). */
#include "snap.h"

#ifdef ADBC_HAVE_AGENT
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent_print.h"

#define TOKEN_MAX 512
#define BODY_MAX (16u << 20)

typedef struct remote {
    const agent_remote_opts *o;
    char base[1024];
    struct curl_slist *hdrs;
    char err[CURL_ERROR_SIZE];
    /* a response body, or the event stream's pending bytes */
    char *buf;
    size_t len, cap;
    int too_big;
    /* the event being read */
    char event[32];
    char *data;
    size_t dlen;
    cJSON *end;              /* the end event's task */
    int steps;
} remote;

static int grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *n = realloc(*p, c);
    if (!n)
        return -1;
    *p = n;
    *cap = c;
    return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    remote *r = ud;
    size_t n = size * nmemb;
    if (r->len + n + 1 > BODY_MAX || grow(&r->buf, &r->cap, r->len + n + 1) != 0) {
        r->too_big = 1;
        return 0;
    }
    memcpy(r->buf + r->len, ptr, n);
    r->len += n;
    r->buf[r->len] = 0;
    return n;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    remote *r = ud;
    return atomic_load(r->o->cancel) != 0; /* nonzero aborts the transfer */
}

/* One request. *status: the HTTP status; the body in r->buf. timeout_ms 0:
 * none (the event stream: bounded by the low-speed limit instead). */
static int request(remote *r, const char *method, const char *path, const char *body,
                   long timeout_ms, int stream, size_t (*sink)(char *, size_t, size_t, void *),
                   long *status)
{
    CURL *h = curl_easy_init();
    if (!h)
        return snap_error(SNAP_EXIT_FAIL, "agent", "cannot start an HTTP client");
    char url[1200];
    snprintf(url, sizeof url, "%s%s", r->base, path);
    r->len = 0;
    r->too_big = 0;
    r->err[0] = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->err);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    if (timeout_ms)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (stream) { /* the server sends a keep-alive at least every 30 s */
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 120L);
    }
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        return -2; /* cancelled here */
    if (rc != CURLE_OK && !(stream && rc == CURLE_WRITE_ERROR && r->end)) {
        snap_error(SNAP_EXIT_FAIL, "agent", "%s %s: %s (is adbc-serve running there, built "
                   "with the agent?)", method, url, r->err[0] ? r->err : curl_easy_strerror(rc));
        return -1;
    }
    return 0;
}

/* The envelope's error, or a line saying what came. */
static int fail_reply(remote *r, const char *what, long status)
{
    cJSON *j = r->len ? cJSON_Parse(r->buf) : NULL;
    const char *msg = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
                                         "message"));
    char buf[1024];
    int st = snap_error(SNAP_EXIT_FAIL, "agent", "%s: HTTP %ld: %s", what, status,
                        msg ? snap_text_safe(msg, buf, sizeof buf)
                        : status == 401 ? "the token was refused (check --token-file)"
                        : status == 404 ? "no tasks API there (an adbc-serve without the agent?)"
                                        : "an answer that is not adbc-serve's");
    cJSON_Delete(j);
    return st;
}

static const char *str(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return v ? v : "";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A step event: printed as a local step is. */
static void print_step(remote *r, const cJSON *j)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "ms");
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    const cJSON *changed = cJSON_GetObjectItemCaseSensitive(j, "screen_changed");
    char *args = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "args"));
    ops_agent_step s = {
        .index = (int)num(j, "step"), .observation = str(j, "observation"),
        .hint = str(j, "hint"), .reasoning = str(j, "reasoning"), .action = str(j, "action"),
        .args = args ? args : "{}", .forced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "forced")),
        .ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")), .result = str(j, "result"),
        .screen_changed = cJSON_IsBool(changed) ? cJSON_IsTrue(changed) : -1,
        .observe_ms = (int64_t)num(ms, "observe"), .model_ms = (int64_t)num(ms, "model"),
        .act_ms = (int64_t)num(ms, "act"), .total_ms = (int64_t)num(ms, "total"),
        .tokens_in = (int64_t)num(tok, "in"), .tokens_out = (int64_t)num(tok, "out")};
    agent_print_step(r->o->p, &s);
    free(args);
    r->steps++;
}

static void dispatch(remote *r)
{
    cJSON *j = r->data ? cJSON_Parse(r->data) : NULL;
    if (j && strcmp(r->event, "step") == 0)
        print_step(r, j);
    if (j && strcmp(r->event, "end") == 0 && !r->end) {
        r->end = j;
        j = NULL;
    }
    cJSON_Delete(j);
    free(r->data);
    r->data = NULL;
    r->dlen = 0;
    r->event[0] = 0;
}

/* The event stream (text/event-stream): "event:" and "data:" lines, an
 * event ending at a blank line; ':' lines are keep-alives. */
static size_t on_events(char *ptr, size_t size, size_t nmemb, void *ud)
{
    remote *r = ud;
    size_t n = size * nmemb;
    if (on_body(ptr, 1, n, r) != n)
        return 0;
    char *line = r->buf, *nl;
    while ((nl = memchr(line, '\n', r->len - (size_t)(line - r->buf)))) {
        *nl = 0;
        if (nl > line && nl[-1] == '\r')
            nl[-1] = 0;
        if (!*line) {
            dispatch(r);
        } else if (strncmp(line, "event:", 6) == 0) {
            snprintf(r->event, sizeof r->event, "%s", line + 6 + (line[6] == ' '));
        } else if (strncmp(line, "data:", 5) == 0) {
            const char *d = line + 5 + (line[5] == ' ');
            size_t dl = strlen(d);
            char *nd = realloc(r->data, r->dlen + dl + 2);
            if (!nd)
                return 0;
            r->data = nd;
            if (r->dlen)
                r->data[r->dlen++] = '\n';
            memcpy(r->data + r->dlen, d, dl + 1);
            r->dlen += dl;
        }
        line = nl + 1;
    }
    size_t rest = r->len - (size_t)(line - r->buf);
    memmove(r->buf, line, rest);
    r->len = rest;
    return r->end ? 0 : n; /* the end event: stop reading */
}

/* The task's end (its GET /v1/tasks/ID form) as a result. */
static void to_result(ops_agent_result *res, const cJSON *task)
{
    memset(res, 0, sizeof *res);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(task, "end");
    const char *name = str(e, "end");
    res->end = OPS_AGENT_FAILED;
    for (int k = OPS_AGENT_DONE; k <= OPS_AGENT_FAILED; k++)
        if (strcmp(name, ops_agent_end_name((ops_agent_end)k)) == 0)
            res->end = (ops_agent_end)k;
    res->steps = (int)num(e, "steps");
    snprintf(res->answer, sizeof res->answer, "%s", str(e, "answer"));
    snprintf(res->reason, sizeof res->reason, "%s",
             *str(e, "reason") ? str(e, "reason") : *str(task, "error") ? str(task, "error")
                                                  : "the server gave no reason");
    res->tokens_in = (int64_t)num(e, "tokens_in");
    res->tokens_out = (int64_t)num(e, "tokens_out");
    res->total_ms = (int64_t)num(e, "total_ms");
}

static int read_token(char *tok, size_t cap, const char *path)
{
    if (!path) {
        const char *env = getenv("ADBC_SERVE_TOKEN");
        if (!env || !*env || strlen(env) >= cap)
            return snap_error(SNAP_EXIT_USAGE, "agent", "--serve needs the server's token: "
                              "--token-file FILE, or ADBC_SERVE_TOKEN");
        snprintf(tok, cap, "%s", env);
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f)
        return snap_error(SNAP_EXIT_USAGE, "agent", "cannot read the token file %s", path);
    int ok = fgets(tok, (int)cap, f) != NULL;
    fclose(f);
    tok[strcspn(tok, "\r\n")] = 0;
    if (!ok || !*tok)
        return snap_error(SNAP_EXIT_USAGE, "agent", "the token file %s is empty", path);
    return 0;
}

/* The base URL and the headers (with the token): 0, or the exit status. */
static int remote_init(remote *r, const agent_remote_opts *o)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    size_t ul = strlen(o->url);
    while (ul && o->url[ul - 1] == '/')
        ul--;
    if ((strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) ||
        ul >= sizeof r->base)
        return snap_error(SNAP_EXIT_USAGE, "agent", "--serve takes http(s)://HOST:PORT");
    memcpy(r->base, o->url, ul);
    char tok[TOKEN_MAX], auth[TOKEN_MAX + 32];
    int st = read_token(tok, sizeof tok, o->token_file);
    if (st)
        return st;
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
    memset(tok, 0, sizeof tok);
    r->hdrs = curl_slist_append(NULL, auth);
    memset(auth, 0, sizeof auth);
    r->hdrs = curl_slist_append(r->hdrs, "Content-Type: application/json");
    return 0;
}

cJSON *agent_remote_call(const agent_remote_opts *o, const char *method, const char *path,
                         const char *body, int *status)
{
    remote r;
    cJSON *res = NULL;
    long http = 0;
    *status = remote_init(&r, o);
    if (!*status && request(&r, method, path, body, 30000, 0, on_body, &http) != 0)
        *status = SNAP_EXIT_FAIL;
    if (!*status && http / 100 != 2)
        *status = fail_reply(&r, path, http);
    if (!*status) {
        cJSON *j = cJSON_Parse(r.buf ? r.buf : "");
        res = cJSON_DetachItemFromObjectCaseSensitive(j, "result");
        cJSON_Delete(j);
        if (!res)
            *status = snap_error(SNAP_EXIT_FAIL, "farm", "%s: an answer that is not "
                                 "adbc-serve's", path);
    }
    curl_slist_free_all(r.hdrs);
    free(r.buf);
    return res;
}

int agent_remote(const agent_remote_opts *o)
{
    remote r;
    int st = remote_init(&r, o);
    if (st) {
        curl_slist_free_all(r.hdrs);
        return st;
    }
    const char *prefix = o->prefix ? o->prefix : "/v1/tasks";
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "goal", o->goal);
    if (o->model)
        cJSON_AddStringToObject(req, "model", o->model);
    if (o->device)
        cJSON_AddStringToObject(req, "device", o->device);
    if (o->select)
        cJSON_AddItemToObject(req, "select", cJSON_Parse(o->select));
    if (o->max_steps >= 0)
        cJSON_AddNumberToObject(req, "max_steps", o->max_steps);
    if (o->step_delay_ms >= 0)
        cJSON_AddNumberToObject(req, "step_delay_ms", o->step_delay_ms);
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    long status = 0;
    char id[64] = "", path[160];
    int rc = 0;
    if (o->id)
        snprintf(id, sizeof id, "%s", o->id); /* follow it: nothing to start */
    else
        rc = body ? request(&r, "POST", prefix, body, 30000, 0, on_body, &status) : -1;
    free(body);
    if (rc == 0 && !o->id && status != 202)
        rc = fail_reply(&r, "starting the task", status), st = rc, rc = -1;
    if (rc == 0 && !o->id) {
        cJSON *j = cJSON_Parse(r.buf ? r.buf : "");
        const char *v = str(cJSON_GetObjectItemCaseSensitive(j, "result"), "id");
        if (!*v || strlen(v) >= sizeof id || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789") !=
                                                  strlen(v))
            rc = -1, st = snap_error(SNAP_EXIT_FAIL, "agent", "the server's answer has no task "
                                     "id");
        else
            snprintf(id, sizeof id, "%s", v);
        cJSON_Delete(j);
        if (*id)
            fprintf(stderr, "adbc-snap: agent: task %s started on %s\n", id, r.base);
    }
    if (rc == 0) {
        r.len = 0;
        snprintf(path, sizeof path, "%s/%s/events", prefix, id);
        rc = request(&r, "GET", path, NULL, 0, 1, on_events, &status);
        if (rc == 0 && !r.end && status != 200)
            rc = -1, st = fail_reply(&r, "following the task", status);
    }
    if (rc == -2 && o->id) { /* a watch interrupted: the task goes on */
        st = AGENT_EXIT_CANCELLED;
    } else if (rc == -2 && *id) { /* cancelled here: there too, then its end */
        snprintf(path, sizeof path, "%s/%s/cancel", prefix, id);
        atomic_int calm;
        atomic_init(&calm, 0);
        agent_remote_opts o2 = *o;
        o2.cancel = &calm;
        r.o = &o2;
        if (request(&r, "POST", path, "{}", 10000, 0, on_body, &status) == 0 && status == 200)
            fprintf(stderr, "adbc-snap: agent: task %s cancelled on the server\n", id);
        rc = 0;
        st = AGENT_EXIT_CANCELLED;
    } else if (rc == 0 && r.end) {
        ops_agent_result res;
        to_result(&res, r.end);
        st = agent_print_end(o->p, &res);
    } else if (rc == 0) {
        st = snap_error(SNAP_EXIT_FAIL, "agent", "the event stream of task %s ended before the "
                        "task (GET %s/%s has its state)", id, prefix, id);
    } else if (!st) {
        st = SNAP_EXIT_FAIL;
    }
    dispatch(&r);
    cJSON_Delete(r.end);
    curl_slist_free_all(r.hdrs);
    free(r.buf);
    return st;
}
#endif
