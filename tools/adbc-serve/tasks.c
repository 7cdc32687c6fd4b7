/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's tasks over HTTP (docs/serve.md): POST /v1/tasks starts one
 * (202, its id), GET /v1/tasks lists them, GET /v1/tasks/ID is one with its
 * steps, GET /v1/tasks/ID/events streams its steps as Server-Sent Events,
 * POST /v1/tasks/ID/cancel cancels it, GET/PUT /v1/settings are the
 * defaults of new tasks. The loop is tools/ops' (ops_agent_run), run on a
 * thread of its own per task; a step's JSON is ops_agent_step_json's, the
 * one every front end prints.
 *
 * One task per device at a time (409 task_running while one runs). The
 * task takes the device from the pool for each observation and each act
 * only, so other clients keep observing and acting between its steps.
 *
 * Threads: everything below is under tasks.mu but the run itself, which
 * touches its task only through the step callback (under the lock) and
 * the cancel flag (atomic). An event stream waits on tasks.cv, signalled
 * at every step and end, with a bounded wait (a keep-alive comment when
 * nothing happened); libmicrohttpd gives each connection its own thread,
 * so a waiting stream blocks only its own client.
 *
 * Bounds: the last TASKS_KEEP tasks are kept, and fewer when their steps
 * pass TASKS_BYTES: the oldest ended ones go first; running ones stay. */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "ops_util.h"

/* The routes of this file (tests/sh/openapi.sh reads this table). */
static const struct {
    const char *path, *method;
} routes[] = {{"/v1/tasks", "POST"},           {"/v1/tasks", "GET"},
              {"/v1/tasks/{id}", "GET"},       {"/v1/tasks/{id}/events", "GET"},
              {"/v1/tasks/{id}/cancel", "POST"}, {"/v1/settings", "GET"},
              {"/v1/settings", "PUT"}};

int serve_tasks_is_route(const char *path)
{
    return strcmp(path, "/v1/tasks") == 0 || strncmp(path, "/v1/tasks/", 10) == 0 ||
           strcmp(path, "/v1/settings") == 0;
}

#ifndef ADBC_HAVE_AGENT

int serve_tasks_option(const char *opt, const char *val)
{
    (void)val;
    if (strcmp(opt, "--model") == 0 || strcmp(opt, "--provider") == 0 ||
        strcmp(opt, "--base-url") == 0 || strcmp(opt, "--agent-allow") == 0) {
        fprintf(stderr, SERVE_NAME ": %s: this adbc-serve was built without the agent (it needs "
                        "libcurl and libcjson: docs/build.md)\n", opt);
        return -1;
    }
    return 0;
}

void serve_tasks_init(serve *s)
{
    (void)s;
}

void serve_tasks_stop(void)
{
}

void serve_tasks_free(void)
{
}

int serve_tasks_route(serve_req *r, char **body, size_t *len)
{
    (void)r;
    (void)routes;
    *body = serve_error_json("no_route", "this adbc-serve was built without the agent (it needs "
                             "libcurl and libcjson: docs/build.md)", len);
    return 404;
}

int serve_tasks_events(serve_req *r, serve_stream **st, char **body, size_t *len)
{
    (void)r;
    (void)body;
    (void)len;
    *st = NULL;
    return 0;
}

long serve_stream_read(serve_stream *st, char *buf, size_t max)
{
    (void)st;
    (void)buf;
    (void)max;
    return -1;
}

void serve_stream_free(serve_stream *st)
{
    (void)st;
}

int serve_tasks_run(int devi, const serve_task_spec *sp, const serve_task_hooks *hooks, char *id,
                    size_t idcap, char *why, size_t whycap)
{
    (void)devi, (void)sp, (void)hooks, (void)id, (void)idcap;
    snprintf(why, whycap, "this adbc-serve was built without the agent");
    return -1;
}

int serve_tasks_busy(int devi)
{
    (void)devi;
    return 1;
}

void serve_tasks_cancel(const char *id)
{
    (void)id;
}

#else

#include "ops_agent.h"
#include "ops_llm.h"

#define TASKS_KEEP 32
#define TASKS_BYTES (4u << 20)
#define TASKS_ALLOW 32
#define KEEPALIVE_MAX_MS 15000

typedef struct task {
    struct task *next;
    int refs;                /* the list, the run, each event stream */
    char id[16];
    int devi;
    ops_dev *dev;
    char *goal;
    char model[256];
    int max_steps, step_delay_ms;
    const char *status;      /* pending running completed failed cancelled stopped */
    cJSON *steps;            /* ops_agent_step_json's, in order */
    int nsteps;
    cJSON *end;              /* ops_agent_result_json's, once ended */
    char error[sizeof ((ops_err *)0)->msg + 64]; /* the run could not start: why */
    atomic_int cancel;
    int cancel_requested;
    int64_t created, started, ended; /* wall clock, ms since the epoch; 0 not yet */
    size_t bytes;
    ops_llm *llm;
    pthread_t thread;
    int joinable;
    serve_task_hooks hooks;  /* another front end's (farm.c); zeroed: none */
} task;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int cv_ready;
    serve *srv;
    task *list;              /* newest first */
    int ntasks;
    size_t bytes;
    unsigned next_id;
    task *running[SERVE_MAX_DEVICES];
    int stopping;
    /* the defaults of new tasks (GET/PUT /v1/settings) */
    int max_steps, step_delay_ms;
    char provider[16];       /* auto, openai, anthropic */
    char model[256];
    /* the command line's, fixed */
    char base_url[512];
    const char *allow[TASKS_ALLOW];
    size_t nallow;
} tasks = {.mu = PTHREAD_MUTEX_INITIALIZER,
           .max_steps = OPS_AGENT_MAX_STEPS_DEFAULT,
           .provider = "auto"};

static int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

int serve_tasks_option(const char *opt, const char *val)
{
    char *dst = NULL;
    size_t cap = 0;
    if (strcmp(opt, "--model") == 0) {
        dst = tasks.model, cap = sizeof tasks.model;
    } else if (strcmp(opt, "--base-url") == 0) {
        dst = tasks.base_url, cap = sizeof tasks.base_url;
    } else if (strcmp(opt, "--provider") == 0) {
        if (val && strcmp(val, "openai") != 0 && strcmp(val, "anthropic") != 0) {
            fprintf(stderr, SERVE_NAME ": --provider takes openai or anthropic\n");
            return -1;
        }
        dst = tasks.provider, cap = sizeof tasks.provider;
    } else if (strcmp(opt, "--agent-allow") == 0) {
        if (!val)
            return 0;
        if (tasks.nallow == TASKS_ALLOW) {
            fprintf(stderr, SERVE_NAME ": at most %d --agent-allow\n", TASKS_ALLOW);
            return -1;
        }
        tasks.allow[tasks.nallow++] = val;
        return 1;
    } else {
        return 0;
    }
    if (!val)
        return 0; /* the caller reports the missing value */
    if (!*val || strlen(val) >= cap) {
        fprintf(stderr, SERVE_NAME ": %s takes a value of 1..%zu bytes\n", opt, cap - 1);
        return -1;
    }
    snprintf(dst, cap, "%s", val);
    return 1;
}

void serve_tasks_init(serve *s)
{
    tasks.srv = s;
    if (!tasks.cv_ready && ops_cond_init(&tasks.cv) == 0)
        tasks.cv_ready = 1;
}

/* Under tasks.mu. */
static void task_unref(task *t)
{
    if (--t->refs > 0)
        return;
    tasks.bytes -= t->bytes;
    cJSON_Delete(t->steps);
    cJSON_Delete(t->end);
    free(t->goal);
    ops_llm_free(t->llm);
    free(t);
}

static int task_ended(const task *t)
{
    return strcmp(t->status, "pending") != 0 && strcmp(t->status, "running") != 0;
}

/* Under tasks.mu: the oldest ended tasks go while over the bounds. A
 * task's thread has ended when its status has (it sets the status last),
 * so joining it does not wait. */
static void tasks_trim(void)
{
    while (tasks.ntasks > TASKS_KEEP || tasks.bytes > TASKS_BYTES) {
        task **victim = NULL;
        for (task **pp = &tasks.list; *pp; pp = &(*pp)->next)
            if (task_ended(*pp))
                victim = pp; /* the last one found is the oldest */
        if (!victim)
            return;
        task *t = *victim;
        *victim = t->next;
        tasks.ntasks--;
        if (t->joinable) {
            pthread_join(t->thread, NULL);
            t->joinable = 0;
        }
        task_unref(t);
    }
}

static task *task_find(const char *id)
{
    for (task *t = tasks.list; t; t = t->next)
        if (strcmp(t->id, id) == 0)
            return t;
    return NULL;
}

/* Under tasks.mu: the task as JSON; with its steps or without. */
static cJSON *task_json(const task *t, int steps)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", t->id);
    cJSON_AddStringToObject(o, "device", t->dev->serial);
    cJSON_AddStringToObject(o, "goal", t->goal);
    cJSON_AddStringToObject(o, "model", t->model);
    cJSON_AddStringToObject(o, "status", t->status);
    cJSON_AddNumberToObject(o, "max_steps", t->max_steps);
    cJSON_AddNumberToObject(o, "step_delay_ms", t->step_delay_ms);
    cJSON_AddNumberToObject(o, "steps_done", t->nsteps);
    cJSON_AddBoolToObject(o, "cancel_requested", t->cancel_requested);
    cJSON_AddNumberToObject(o, "created_ms", (double)t->created);
    if (t->started)
        cJSON_AddNumberToObject(o, "started_ms", (double)t->started);
    if (t->ended)
        cJSON_AddNumberToObject(o, "ended_ms", (double)t->ended);
    if (t->end)
        cJSON_AddItemToObject(o, "end", cJSON_Duplicate(t->end, 1));
    if (t->error[0])
        cJSON_AddStringToObject(o, "error", t->error);
    if (steps)
        cJSON_AddItemToObject(o, "steps", cJSON_Duplicate(t->steps, 1));
    return o;
}

/* The run's step callback, on its thread. */
static void on_step(void *arg, const ops_agent_step *step)
{
    task *t = arg;
    cJSON *j = ops_agent_step_json(step);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    size_t n = text ? strlen(text) : 0;
    if (text && t->hooks.on_step)
        t->hooks.on_step(t->hooks.arg, text); /* outside the lock: it may wait on the network */
    free(text);
    pthread_mutex_lock(&tasks.mu);
    if (j) {
        cJSON_AddItemToArray(t->steps, j);
        t->nsteps++;
        t->bytes += n;
        tasks.bytes += n;
    }
    pthread_cond_broadcast(&tasks.cv);
    pthread_mutex_unlock(&tasks.mu);
}

static const char *end_status(ops_agent_end end)
{
    switch (end) {
    case OPS_AGENT_DONE:
        return "completed";
    case OPS_AGENT_CANCELLED:
        return "cancelled";
    case OPS_AGENT_SAFETY_STOP:
        return "stopped";
    default:
        return "failed"; /* max_steps, failed */
    }
}

static void *task_run(void *arg)
{
    task *t = arg;
    serve *s = tasks.srv;
    ops_agent_config cfg;
    ops_agent_config_init(&cfg);
    cfg.goal = t->goal;
    cfg.model = t->llm;
    cfg.max_steps = t->max_steps;
    cfg.step_delay_ms = t->step_delay_ms;
    cfg.step_timeout_ms = s->call_ms;
    cfg.allowlist = tasks.allow;
    cfg.nallow = tasks.nallow;
    cfg.cancel = &t->cancel;
    cfg.on_step = on_step;
    cfg.on_step_arg = t;
    ops_agent_device d = {.pool = &s->pool, .dev = t->dev, .busy_ms = s->busy_ms};
    pthread_mutex_lock(&tasks.mu);
    t->status = "running";
    t->started = wall_ms();
    pthread_cond_broadcast(&tasks.cv);
    pthread_mutex_unlock(&tasks.mu);

    ops_agent_result *res = malloc(sizeof *res); /* 6 KiB: not on a thread's stack */
    ops_err e;
    int rc = res ? ops_agent_run(res, &cfg, &d, &e) : -1;
    cJSON *end = rc == 0 ? ops_agent_result_json(res) : NULL;

    pthread_mutex_lock(&tasks.mu);
    if (rc == 0) {
        t->status = end_status(res->end);
        t->end = end;
    } else {
        t->status = "failed";
        /* A device the allowlist refuses: how to allow it here. */
        snprintf(t->error, sizeof t->error, "%s%s", res ? e.msg : "out of memory",
                 res && strstr(e.msg, "allowlist") ? " (adbc-serve: --agent-allow SERIAL)" : "");
    }
    t->ended = wall_ms();
    if (tasks.running[t->devi] == t)
        tasks.running[t->devi] = NULL;
    serve_task_hooks h = t->hooks;
    const char *status = t->status;
    char *end_text = h.on_end && t->end ? cJSON_PrintUnformatted(t->end) : NULL;
    char *error = h.on_end && t->error[0] ? strdup(t->error) : NULL;
    /* The model client goes with the run (its connections and descriptors);
     * what is kept of an ended task is its record. */
    ops_llm *llm = t->llm;
    t->llm = NULL;
    pthread_cond_broadcast(&tasks.cv);
    task_unref(t); /* the run's */
    pthread_mutex_unlock(&tasks.mu);
    ops_llm_free(llm);
    free(res);
    if (h.on_end) /* the device is free again by now */
        h.on_end(h.arg, status, end_text, error);
    free(end_text);
    free(error);
    return NULL;
}

static int err2(const char *code, int status, const char *msg, char **body, size_t *len)
{
    *body = serve_error_json(code, msg, len);
    return status;
}

static int reply_ok(int status, cJSON *result, char **body, size_t *len)
{
    int st = serve_reply_ok(result, body, len);
    return st == 200 ? status : st;
}

/* The body as one JSON object, or the status of a refusal. */
static int body_object(serve_req *r, cJSON **a, char **body, size_t *len)
{
    ops_err e;
    if (ops_json_parse(&e, r->body, r->body_len, a) != 0)
        return err2("bad_json", 400, e.msg, body, len);
    if (!cJSON_IsObject(*a)) {
        cJSON_Delete(*a);
        return err2("bad_json", 400, "the body must be one JSON object", body, len);
    }
    return 0;
}

/* The model of a task: the settings' provider, the command line's base URL,
 * the model named; the key from the environment (OPENAI_API_KEY,
 * ANTHROPIC_API_KEY), as the providers' SDKs read it. */
static int make_llm(ops_llm **m, const char *provider, const char *model, ops_err *e)
{
    ops_llm_cfg c;
    ops_llm_cfg_init(&c);
    int rc = -1;
    if (strcmp(provider, "auto") != 0 &&
        ops_llm_cfg_set(&c, "provider", provider, "adbc-serve settings", e) != 0)
        goto out;
    if (tasks.base_url[0] &&
        ops_llm_cfg_set(&c, "base_url", tasks.base_url, "command line", e) != 0)
        goto out;
    if (ops_llm_cfg_set(&c, "model", model, "adbc-serve settings", e) != 0)
        goto out;
    rc = ops_llm_cfg_resolve(&c, e) == 0 && ops_llm_new(m, &c, e) == 0 ? 0 : -1;
out:
    ops_llm_cfg_wipe(&c);
    return rc;
}

/* Start a task on device devi: 202 with its JSON in *res (or its id in
 * id), else the status with *code and why in msg. */
static int task_launch(int devi, const char *goal, const char *model, const char *provider,
                       int max_steps, int delay, const serve_task_hooks *hooks, cJSON **res,
                       char *id, size_t idcap, const char **code, char *msg, size_t msgcap)
{
    ops_err e;
    ops_dev *dev = tasks.srv->devs[devi];
    *code = "failed";
    task *t = calloc(1, sizeof *t);
    if (!t || !(t->goal = strdup(goal)) || !(t->steps = cJSON_CreateArray())) {
        if (t)
            free(t->goal);
        free(t);
        snprintf(msg, msgcap, "out of memory");
        return 500;
    }
    snprintf(t->model, sizeof t->model, "%s", model);
    if (make_llm(&t->llm, provider, t->model, &e) != 0) {
        cJSON_Delete(t->steps);
        free(t->goal);
        free(t);
        *code = ops_code_name(e.code);
        snprintf(msg, msgcap, "%s", e.msg);
        return ops_code_http(e.code);
    }
    t->dev = dev;
    t->devi = devi;
    t->max_steps = max_steps;
    t->step_delay_ms = delay;
    t->status = "pending";
    t->created = wall_ms();
    t->bytes = strlen(t->goal);
    if (hooks)
        t->hooks = *hooks;
    atomic_init(&t->cancel, 0);
    ops_llm_set_cancel(t->llm, &t->cancel);

    pthread_mutex_lock(&tasks.mu);
    task *busy = tasks.running[devi];
    if (busy || tasks.stopping) {
        snprintf(msg, msgcap, busy ? "task %s runs on %s: one task per device at a time (POST "
                 "/v1/tasks/%s/cancel ends it)" : "the server is stopping", busy ? busy->id : "",
                 dev->serial, busy ? busy->id : "");
        pthread_mutex_unlock(&tasks.mu);
        ops_llm_free(t->llm);
        cJSON_Delete(t->steps);
        free(t->goal);
        free(t);
        *code = "task_running";
        return 409;
    }
    snprintf(t->id, sizeof t->id, "t%u", ++tasks.next_id);
    t->refs = 2; /* the list's and the run's */
    if (pthread_create(&t->thread, NULL, task_run, t) != 0) {
        pthread_mutex_unlock(&tasks.mu);
        ops_llm_free(t->llm);
        cJSON_Delete(t->steps);
        free(t->goal);
        free(t);
        snprintf(msg, msgcap, "cannot start a thread for the task");
        return 500;
    }
    t->joinable = 1;
    t->next = tasks.list;
    tasks.list = t;
    tasks.ntasks++;
    tasks.bytes += t->bytes;
    tasks.running[devi] = t;
    if (res)
        *res = task_json(t, 0);
    if (id)
        snprintf(id, idcap, "%s", t->id);
    tasks_trim();
    pthread_mutex_unlock(&tasks.mu);
    return 202;
}

int serve_tasks_run(int devi, const serve_task_spec *sp, const serve_task_hooks *hooks, char *id,
                    size_t idcap, char *why, size_t whycap)
{
    const char *code;
    char provider[16], model[256];
    pthread_mutex_lock(&tasks.mu);
    int max_steps = sp->max_steps > 0 ? sp->max_steps : tasks.max_steps;
    int delay = sp->step_delay_ms >= 0 ? sp->step_delay_ms : tasks.step_delay_ms;
    snprintf(provider, sizeof provider, "%s", tasks.provider);
    snprintf(model, sizeof model, "%s", sp->model && *sp->model ? sp->model : tasks.model);
    pthread_mutex_unlock(&tasks.mu);
    if (devi < 0 || devi >= tasks.srv->ndevs || !sp->goal || !*sp->goal) {
        snprintf(why, whycap, "no such device, or no goal");
        return -1;
    }
    if (!*model) {
        snprintf(why, whycap, "no model: the task names none and this node has no default "
                 "(adbc-serve --model NAME)");
        return -1;
    }
    return task_launch(devi, sp->goal, model, provider, max_steps, delay, hooks, NULL, id, idcap,
                       &code, why, whycap) == 202 ? 0 : -1;
}

int serve_tasks_busy(int devi)
{
    pthread_mutex_lock(&tasks.mu);
    int busy = devi >= 0 && devi < SERVE_MAX_DEVICES && (tasks.running[devi] || tasks.stopping);
    pthread_mutex_unlock(&tasks.mu);
    return busy;
}

void serve_tasks_cancel(const char *id)
{
    pthread_mutex_lock(&tasks.mu);
    task *t = task_find(id);
    if (t && !task_ended(t)) {
        ops_agent_cancel(&t->cancel);
        t->cancel_requested = 1;
    }
    pthread_mutex_unlock(&tasks.mu);
}

static int r_start(serve_req *r, char **body, size_t *len)
{
    static const char *const names[] = {"goal", "max_steps", "step_delay_ms", "model", "device",
                                        NULL};
    cJSON *a;
    int st = body_object(r, &a, body, len);
    if (st)
        return st;
    ops_err e;
    const char *goal = NULL, *model = NULL, *device = NULL;
    char provider[16], defmodel[256];
    pthread_mutex_lock(&tasks.mu);
    int max_steps = tasks.max_steps, delay = tasks.step_delay_ms;
    snprintf(provider, sizeof provider, "%s", tasks.provider);
    snprintf(defmodel, sizeof defmodel, "%s", tasks.model);
    pthread_mutex_unlock(&tasks.mu);
    if (ops_arg_only(&e, a, names) || ops_arg_str(&e, a, "goal", 1, 4000, &goal) ||
        ops_arg_int(&e, a, "max_steps", 0, 1, OPS_AGENT_MAX_STEPS_LIMIT, &max_steps) ||
        ops_arg_int(&e, a, "step_delay_ms", 0, 0, 60000, &delay) ||
        ops_arg_str(&e, a, "model", 0, 255, &model) ||
        ops_arg_str(&e, a, "device", 0, 255, &device)) {
        cJSON_Delete(a);
        return serve_reply_err(&e, body, len);
    }
    if (!*goal) {
        cJSON_Delete(a);
        return err2("bad_request", 400, "goal is empty: say what the agent should do",
                         body, len);
    }
    if (!model || !*model)
        model = defmodel;
    if (!*model) {
        cJSON_Delete(a);
        return err2("bad_request", 400, "no model: give \"model\", or set one with PUT "
                         "/v1/settings {\"model\":...} or adbc-serve --model NAME", body, len);
    }
    ops_dev *dev = serve_dev_find(r->srv, device ? device : r->arg(r->conn, "device"), &e);
    if (!dev) {
        cJSON_Delete(a);
        return serve_reply_err(&e, body, len);
    }
    int devi = 0;
    while (r->srv->devs[devi] != dev)
        devi++;
    char model_copy[256];
    snprintf(model_copy, sizeof model_copy, "%s", model);
    char *goal_copy = strdup(goal);
    cJSON_Delete(a);
    if (!goal_copy)
        return err2("failed", 500, "out of memory", body, len);
    cJSON *res = NULL;
    const char *code = NULL;
    char m[sizeof e.msg + 200];
    st = task_launch(devi, goal_copy, model_copy, provider, max_steps, delay, NULL, &res, NULL, 0,
                     &code, m, sizeof m);
    free(goal_copy);
    if (st == 409)
        return err2("task_running", 409, m, body, len);
    if (st != 202)
        return err2(code, st, m, body, len);
    return reply_ok(202, res, body, len);
}

static int r_list(char **body, size_t *len)
{
    pthread_mutex_lock(&tasks.mu);
    cJSON *arr = cJSON_CreateArray();
    for (task *t = tasks.list; t; t = t->next)
        cJSON_AddItemToArray(arr, task_json(t, 0));
    pthread_mutex_unlock(&tasks.mu);
    return reply_ok(200, arr, body, len);
}

static int no_task(const char *id, char **body, size_t *len)
{
    char m[200];
    snprintf(m, sizeof m, "no task '%.40s' (GET /v1/tasks lists them; the last %d are kept)", id,
             TASKS_KEEP);
    return err2("not_found", 404, m, body, len);
}

static int r_one(const char *id, int cancel, char **body, size_t *len)
{
    pthread_mutex_lock(&tasks.mu);
    task *t = task_find(id);
    if (!t) {
        pthread_mutex_unlock(&tasks.mu);
        return no_task(id, body, len);
    }
    if (cancel && !task_ended(t)) {
        ops_agent_cancel(&t->cancel);
        t->cancel_requested = 1;
    }
    cJSON *res = task_json(t, !cancel);
    pthread_mutex_unlock(&tasks.mu);
    return reply_ok(200, res, body, len);
}

static cJSON *settings_json(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "max_steps", tasks.max_steps);
    cJSON_AddNumberToObject(o, "step_delay_ms", tasks.step_delay_ms);
    cJSON_AddStringToObject(o, "provider", tasks.provider);
    cJSON_AddStringToObject(o, "model", tasks.model);
    return o;
}

static int r_settings(serve_req *r, char **body, size_t *len)
{
    if (strcmp(r->method, "GET") == 0) {
        pthread_mutex_lock(&tasks.mu);
        cJSON *o = settings_json();
        pthread_mutex_unlock(&tasks.mu);
        return reply_ok(200, o, body, len);
    }
    static const char *const names[] = {"max_steps", "step_delay_ms", "provider", "model", NULL};
    cJSON *a;
    int st = body_object(r, &a, body, len);
    if (st)
        return st;
    ops_err e;
    pthread_mutex_lock(&tasks.mu);
    int max_steps = tasks.max_steps, delay = tasks.step_delay_ms;
    pthread_mutex_unlock(&tasks.mu);
    const char *provider = NULL, *model = NULL;
    /* Every value is checked before any is taken: a refused PUT changes nothing. */
    if (ops_arg_only(&e, a, names) ||
        ops_arg_int(&e, a, "max_steps", 0, 1, OPS_AGENT_MAX_STEPS_LIMIT, &max_steps) ||
        ops_arg_int(&e, a, "step_delay_ms", 0, 0, 60000, &delay) ||
        ops_arg_str(&e, a, "provider", 0, 15, &provider) ||
        ops_arg_str(&e, a, "model", 0, 255, &model)) {
        cJSON_Delete(a);
        return serve_reply_err(&e, body, len);
    }
    if (provider && strcmp(provider, "auto") != 0 && strcmp(provider, "openai") != 0 &&
        strcmp(provider, "anthropic") != 0) {
        cJSON_Delete(a);
        return err2("bad_request", 400, "provider must be auto, openai or anthropic", body,
                         len);
    }
    pthread_mutex_lock(&tasks.mu);
    tasks.max_steps = max_steps;
    tasks.step_delay_ms = delay;
    if (provider)
        snprintf(tasks.provider, sizeof tasks.provider, "%s", provider);
    if (model)
        snprintf(tasks.model, sizeof tasks.model, "%s", model);
    cJSON *o = settings_json();
    pthread_mutex_unlock(&tasks.mu);
    cJSON_Delete(a);
    return reply_ok(200, o, body, len);
}

/* "/v1/tasks/ID[/SUFFIX]": the id into id (0), or -1 when it is not one. */
static int split(const char *path, char *id, size_t cap, const char **suffix)
{
    const char *p = path + 10, *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || n >= cap)
        return -1;
    memcpy(id, p, n);
    id[n] = '\0';
    *suffix = slash ? slash : "";
    return 0;
}

int serve_tasks_route(serve_req *r, char **body, size_t *len)
{
    const char *want = NULL, *m = r->method;
    if (strcmp(r->path, "/v1/settings") == 0) {
        if (strcmp(m, "GET") == 0 || strcmp(m, "PUT") == 0)
            return r_settings(r, body, len);
        want = "/v1/settings takes GET or PUT";
    } else if (strcmp(r->path, "/v1/tasks") == 0) {
        if (strcmp(m, "POST") == 0)
            return r_start(r, body, len);
        if (strcmp(m, "GET") == 0)
            return r_list(body, len);
        want = "/v1/tasks takes POST (start a task) or GET (list them)";
    } else {
        char id[32];
        const char *suffix;
        if (split(r->path, id, sizeof id, &suffix) != 0 ||
            (*suffix && strcmp(suffix, "/events") != 0 && strcmp(suffix, "/cancel") != 0))
            return err2("no_route", 404, "no such route: /v1/tasks/ID, /v1/tasks/ID/events, "
                             "/v1/tasks/ID/cancel", body, len);
        int cancel = strcmp(suffix, "/cancel") == 0;
        if (strcmp(m, cancel ? "POST" : "GET") == 0)
            return r_one(id, cancel, body, len); /* events come through serve_tasks_events */
        want = cancel ? "/v1/tasks/ID/cancel takes POST" : *suffix ? "/v1/tasks/ID/events takes "
               "GET" : "/v1/tasks/ID takes GET";
    }
    (void)routes;
    return err2("method_not_allowed", 405, want, body, len);
}

/* ---- Server-Sent Events ---- */

struct serve_stream {
    task *t;
    int next;                /* the next step to send */
    int ended;               /* the end event was queued */
    int keep_ms;
    char *pend;              /* bytes queued, not yet handed out */
    size_t pend_len, pend_off;
};

int serve_tasks_events(serve_req *r, serve_stream **st, char **body, size_t *len)
{
    char id[32];
    const char *suffix;
    *st = NULL;
    if (strncmp(r->path, "/v1/tasks/", 10) != 0 || strcmp(r->method, "GET") != 0 ||
        split(r->path, id, sizeof id, &suffix) != 0 || strcmp(suffix, "/events") != 0)
        return 0;
    serve_stream *s = calloc(1, sizeof *s);
    if (!s)
        return err2("failed", 500, "out of memory", body, len);
    /* Under --conn-timeout, so an idle stream is not taken for a dead one. */
    int keep = r->srv->conn_timeout_s * 1000 / 2;
    s->keep_ms = keep < 500 ? 500 : keep > KEEPALIVE_MAX_MS ? KEEPALIVE_MAX_MS : keep;
    pthread_mutex_lock(&tasks.mu);
    s->t = task_find(id);
    if (s->t)
        s->t->refs++;
    pthread_mutex_unlock(&tasks.mu);
    if (!s->t) {
        free(s);
        return no_task(id, body, len);
    }
    *st = s;
    return 200;
}

static char *event(const char *name, cJSON *data, size_t *n)
{
    char *d = data ? cJSON_PrintUnformatted(data) : NULL;
    cJSON_Delete(data);
    char *out = NULL;
    int k = d ? asprintf(&out, "event: %s\ndata: %s\n\n", name, d) : -1;
    free(d);
    if (k < 0)
        return NULL;
    *n = (size_t)k;
    return out;
}

long serve_stream_read(serve_stream *s, char *buf, size_t max)
{
    if (!s->pend || s->pend_off == s->pend_len) {
        free(s->pend);
        s->pend = NULL;
        s->pend_len = s->pend_off = 0;
        pthread_mutex_lock(&tasks.mu);
        int64_t deadline = ops_now_ms() + s->keep_ms;
        for (;;) {
            task *t = s->t;
            if (s->next < t->nsteps) {
                cJSON *step = cJSON_Duplicate(cJSON_GetArrayItem(t->steps, s->next), 1);
                s->next++;
                s->pend = event("step", step, &s->pend_len);
                break;
            }
            if (s->ended || tasks.stopping) {
                pthread_mutex_unlock(&tasks.mu);
                return -1;
            }
            if (task_ended(t)) {
                s->ended = 1;
                s->pend = event("end", task_json(t, 0), &s->pend_len);
                break;
            }
            if (ops_cond_wait_until(&tasks.cv, &tasks.mu, deadline) == ETIMEDOUT) {
                s->pend = strdup(": keep-alive\n\n");
                s->pend_len = s->pend ? strlen(s->pend) : 0;
                break;
            }
        }
        pthread_mutex_unlock(&tasks.mu);
        if (!s->pend)
            return -1; /* out of memory: the stream ends, GET /v1/tasks/ID has it all */
    }
    size_t n = s->pend_len - s->pend_off;
    if (n > max)
        n = max;
    memcpy(buf, s->pend + s->pend_off, n);
    s->pend_off += n;
    return (long)n;
}

void serve_stream_free(serve_stream *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&tasks.mu);
    task_unref(s->t);
    pthread_mutex_unlock(&tasks.mu);
    free(s->pend);
    free(s);
}

/* Before the HTTP server stops: streams end, every run is cancelled and
 * joined (a run ends before its next device action; a model request in
 * flight is abandoned). */
void serve_tasks_stop(void)
{
    pthread_mutex_lock(&tasks.mu);
    tasks.stopping = 1;
    for (task *t = tasks.list; t; t = t->next)
        if (!task_ended(t))
            ops_agent_cancel(&t->cancel);
    pthread_cond_broadcast(&tasks.cv);
    pthread_mutex_unlock(&tasks.mu);
    for (;;) {
        pthread_t th;
        int found = 0;
        pthread_mutex_lock(&tasks.mu);
        for (task *t = tasks.list; t && !found; t = t->next)
            if (t->joinable) {
                th = t->thread;
                t->joinable = 0;
                found = 1;
            }
        pthread_mutex_unlock(&tasks.mu);
        if (!found)
            break;
        pthread_join(th, NULL);
    }
}

/* After the HTTP server stopped (no stream left). */
void serve_tasks_free(void)
{
    pthread_mutex_lock(&tasks.mu);
    while (tasks.list) {
        task *t = tasks.list;
        tasks.list = t->next;
        task_unref(t);
    }
    tasks.ntasks = 0;
    pthread_mutex_unlock(&tasks.mu);
}

#endif
