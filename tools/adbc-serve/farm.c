/* SPDX-License-Identifier: Apache-2.0 */
/* A farm node (docs/farm.md): with --farm, one thread keeps this
 * adbc-serve in the farm. It beats (the node's entry with its devices,
 * expiring when the beats stop), reads the queue while a device is free,
 * takes a task whose selector one of its free devices matches (else puts it
 * back), runs it through tasks.c as a local task would run, renews the lease
 * of each task it runs several times a second and writes each task's end.
 * A task a dead node left pending is taken over with XAUTOCLAIM once its
 * lease has run out, and run again from the start as a new attempt.
 *
 * Redis away: the node's own API goes on; the thread reconnects with a
 * backoff (200 ms doubling to 5 s); steps made meanwhile wait in their slot,
 * in order; a run whose lease could not be renewed for half the lease is
 * cancelled here (another node may take the task once the whole lease has
 * run out), so a task never runs on two nodes at once.
 *
 * Threads: the node thread owns its connection; the runs' hooks and the
 * HTTP routes share a second one under api_mu; a slot (one per device) is
 * under mu. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(ADBC_HAVE_HIREDIS) || !defined(ADBC_HAVE_AGENT)

int serve_farm_option(const char *opt, const char *val)
{
    (void)val;
    if (strncmp(opt, "--farm", 6) != 0)
        return 0;
    fprintf(stderr, SERVE_NAME ": %s: this adbc-serve was built without the farm (it needs "
                    "hiredis, -DADBC_WITH_HIREDIS=ON, and the agent: docs/build.md)\n", opt);
    return -1;
}

int serve_farm_start(serve *s)
{
    (void)s;
    return 0;
}

void serve_farm_leave(void)
{
}

void serve_farm_stop(void)
{
}

void serve_farm_end(void)
{
}

#else

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/act.h"
#include "farm.h"
#include "ops_util.h"

farm_cfg farm_conf;

typedef struct step_q {
    struct step_q *next;
    char text[];
} step_q;

/* A farm task on one local device, from its take until its end is written. */
typedef struct slot {
    int busy;
    char id[32], entry[64], attempt[16], local[16];
    int64_t renewed_ms;      /* monotonic: when the last renew that succeeded was sent */
    int lost;                /* another node owns the task now: write nothing more */
    int fenced;              /* cancelled here: the lease could not be renewed */
    int ended;               /* the run ended: its end waits below */
    const char *status;
    char *end_json, *error;
    step_q *steps, **tail;   /* steps not written yet, in order */
} slot;

/* What a device is, read once it is connected. */
typedef struct facts {
    int known;
    char model[128], abi[64];
    int sdk;
    int emulator;
    int64_t next_try;
} facts;

static struct {
    int on;
    serve *srv;
    pthread_t thread;
    int started;
    _Atomic int stopping;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int available;
    char why[512];
    char instance[33];
    slot slots[SERVE_MAX_DEVICES];
    facts facts[SERVE_MAX_DEVICES];
    redisContext *api;       /* under farm_api_mu */
} farm = {.mu = PTHREAD_MUTEX_INITIALIZER};

pthread_mutex_t farm_api_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *pass_file, *url_arg;

int serve_farm_option(const char *opt, const char *val)
{
    if (strcmp(opt, "--farm") == 0) {
        if (!val)
            return 0;
        url_arg = val;
        return 1;
    }
    if (strcmp(opt, "--farm-node") == 0) {
        if (!val)
            return 0;
        size_t n = strlen(val);
        if (n == 0 || n >= sizeof farm_conf.node || strspn(val, "abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                          "._-") != n) {
            fprintf(stderr, SERVE_NAME ": --farm-node takes 1..64 of A-Z a-z 0-9 . _ -\n");
            return -1;
        }
        snprintf(farm_conf.node, sizeof farm_conf.node, "%s", val);
        return 1;
    }
    if (strcmp(opt, "--farm-password-file") == 0) {
        if (!val)
            return 0;
        pass_file = val;
        return 1;
    }
    static const struct {
        const char *opt;
        char *dst;
    } files[] = {{"--farm-ca", farm_conf.ca}, {"--farm-cert", farm_conf.cert},
                 {"--farm-key", farm_conf.key}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (strcmp(opt, files[i].opt) != 0)
            continue;
        if (!val)
            return 0;
        if (!*val || strlen(val) >= sizeof farm_conf.ca) {
            fprintf(stderr, SERVE_NAME ": %s takes a file name (at most %zu bytes)\n", opt,
                    sizeof farm_conf.ca - 1);
            return -1;
        }
        snprintf(files[i].dst, sizeof farm_conf.ca, "%s", val);
        return 1;
    }
    if (strcmp(opt, "--farm-lease") == 0) {
        if (!val)
            return 0;
        char *end;
        long s = strtol(val, &end, 10);
        if (!*val || *end || s < 2 || s > 3600) {
            fprintf(stderr, SERVE_NAME ": --farm-lease takes seconds, 2..3600\n");
            return -1;
        }
        farm_conf.lease_ms = (int)s * 1000;
        return 1;
    }
    return 0;
}

int farm_available(char *why, size_t cap)
{
    pthread_mutex_lock(&farm.mu);
    int ok = farm.available;
    snprintf(why, cap, "%s", farm.why);
    pthread_mutex_unlock(&farm.mu);
    return ok;
}

static void set_state(int available, const char *why)
{
    pthread_mutex_lock(&farm.mu);
    int changed = available != farm.available || strcmp(why, farm.why) != 0;
    farm.available = available;
    snprintf(farm.why, sizeof farm.why, "%s", why);
    pthread_mutex_unlock(&farm.mu);
    if (changed)
        fprintf(stderr, SERVE_NAME ": farm: %s\n", available ? "joined as node" : why);
}

static redisContext *api_conn(char *why, size_t cap)
{
    if (!farm.api)
        farm.api = farm_connect(&farm_conf, why, cap);
    return farm.api;
}

static void api_dead(void)
{
    if (farm.api)
        redisFree(farm.api);
    farm.api = NULL;
}

redisReply *farm_api_call(const char *script, int argc, const char **argv, char *why,
                          size_t cap)
{
    redisReply *r = NULL;
    pthread_mutex_lock(&farm_api_mu);
    for (int tries = 0; tries < 2 && !r; tries++) {
        redisContext *c = api_conn(why, cap);
        if (!c)
            break;
        int dead = 0;
        r = script ? farm_eval(c, script, argc, argv, why, cap, &dead)
                   : farm_cmd(c, argc, argv, why, cap, &dead);
        if (!dead)
            break;
        /* A connection Redis closed (it restarted) took nothing in: once more. */
        int stale = c->err == REDIS_ERR_EOF || strstr(c->errstr, "reset") ||
                    strstr(c->errstr, "Broken pipe");
        api_dead();
        if (!stale)
            break;
    }
    pthread_mutex_unlock(&farm_api_mu);
    return r;
}

/* ---- the runs' hooks ---- */

/* Step and renew answers: 1 a cancel was asked, -1 not ours: cancel the run. */
static void answer(slot *sl, long long v)
{
    if (v == 0)
        return;
    pthread_mutex_lock(&farm.mu);
    if (v < 0)
        sl->lost = 1;
    char local[16];
    snprintf(local, sizeof local, "%s", sl->local);
    pthread_mutex_unlock(&farm.mu);
    serve_tasks_cancel(local);
}

/* Write one step now (api connection): 0, or -1 Redis could not be reached. */
static int step_write(slot *sl, const char *text)
{
    char why[256];
    const char *a[] = {sl->id, sl->entry, farm_conf.node, sl->attempt, text};
    redisReply *r = farm_api_call(farm_lua_step, 5, a, why, sizeof why);
    if (!r)
        return -1;
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    if (r->type == REDIS_REPLY_ERROR)
        fprintf(stderr, SERVE_NAME ": farm: task %s: %s\n", sl->id, why);
    freeReplyObject(r);
    answer(sl, v);
    return 0;
}

static void on_step(void *arg, const char *text)
{
    slot *sl = arg;
    pthread_mutex_lock(&farm.mu);
    int direct = !sl->steps && !sl->lost;
    pthread_mutex_unlock(&farm.mu);
    if (direct && step_write(sl, text) == 0)
        return;
    size_t n = strlen(text);
    step_q *q = malloc(sizeof *q + n + 1);
    if (!q)
        return; /* out of memory: the step is missing from the events, the task is not */
    q->next = NULL;
    memcpy(q->text, text, n + 1);
    pthread_mutex_lock(&farm.mu);
    if (!sl->lost) {
        *sl->tail = q;
        sl->tail = &q->next;
        q = NULL;
    }
    pthread_mutex_unlock(&farm.mu);
    free(q);
}

/* Write a run's end (api connection): 0 written, or not this node's to
 * write; -1 Redis could not be reached. A run cancelled here because the
 * lease lapsed or the node is leaving goes back to the queue instead. */
static int end_write(slot *sl)
{
    char why[256];
    int rc = -1;
    int requeue = sl->fenced && strcmp(sl->status, "cancelled") == 0;
    const char *a[] = {sl->id, sl->entry, farm_conf.node, sl->attempt, sl->status,
                       sl->end_json ? sl->end_json : "", sl->error ? sl->error : ""};
    const char *q[] = {sl->id, sl->entry, farm_conf.node, "its node stopped it: "
                       "it left the farm or could not renew the lease"};
    redisReply *r = requeue ? farm_api_call(farm_lua_requeue, 4, q, why, sizeof why)
                            : farm_api_call(farm_lua_finish, 7, a, why, sizeof why);
    if (r) {
        rc = 0;
        if (r->type == REDIS_REPLY_ERROR)
            fprintf(stderr, SERVE_NAME ": farm: task %s: %s\n", sl->id, why);
        else if (!requeue && r->type == REDIS_REPLY_INTEGER && r->integer < 0)
            fprintf(stderr, SERVE_NAME ": farm: task %s: ended here, but another node had "
                            "taken it over: this attempt's end is not written\n", sl->id);
        freeReplyObject(r);
    }
    return rc;
}

static void slot_clear(slot *sl);

static void on_end(void *arg, const char *status, const char *end_json, const char *error)
{
    slot *sl = arg;
    pthread_mutex_lock(&farm.mu);
    sl->status = status;
    sl->end_json = end_json ? strdup(end_json) : NULL;
    sl->error = error ? strdup(error) : NULL;
    int direct = !sl->steps && !sl->lost;
    pthread_mutex_unlock(&farm.mu);
    /* At once, here: the node thread may be waiting on the queue. */
    int done = direct && end_write(sl) == 0;
    pthread_mutex_lock(&farm.mu);
    if (done || sl->lost)
        slot_clear(sl);
    else
        sl->ended = 1; /* the node thread writes it once Redis is back */
    pthread_cond_broadcast(&farm.cv);
    pthread_mutex_unlock(&farm.mu);
}

/* ---- the node thread ---- */

static redisContext *rc; /* the node thread's */
static char rwhy[512];

static redisReply *cmd(int argc, const char **argv)
{
    int dead = 0;
    redisReply *r = rc ? farm_cmd(rc, argc, argv, rwhy, sizeof rwhy, &dead) : NULL;
    if (dead) {
        redisFree(rc);
        rc = NULL;
    }
    return r;
}

static redisReply *eval(const char *script, int argc, const char **argv)
{
    int dead = 0;
    redisReply *r = rc ? farm_eval(rc, script, argc, argv, rwhy, sizeof rwhy, &dead) : NULL;
    if (dead) {
        redisFree(rc);
        rc = NULL;
    }
    if (r && r->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, SERVE_NAME ": farm: %s\n", rwhy);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

static long long eval_int(const char *script, int argc, const char **argv, long long fail)
{
    redisReply *r = eval(script, argc, argv);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : fail;
    if (r)
        freeReplyObject(r);
    return v;
}

static int dev_connected(int i)
{
    return farm.srv->devs[i]->state == OPS_DEV_CONNECTED;
}

/* Read a connected device's model, SDK, ABI and kind, once. */
static void facts_read(int i)
{
    facts *f = &farm.facts[i];
    ops_dev *d = farm.srv->devs[i];
    int64_t now = ops_now_ms();
    if (f->known || now < f->next_try || !dev_connected(i) || serve_tasks_busy(i))
        return;
    f->next_try = now + 2000;
    ops_err e;
    if (ops_dev_take(&farm.srv->pool, d, 0, now + 5000, &e) != 0)
        return;
    char *v[3] = {NULL, NULL, NULL};
    static const char *const names[] = {"ro.product.model", "ro.build.version.sdk",
                                        "ro.product.cpu.abi"};
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++)
        ok = adbc_getprop(&v[k], d->conn, names[k], 3000) == 0;
    /* The kind as the agent's allowlist decides it: from facts, never the name alone. */
    ops_kind kind = d->kind;
    char sn[128];
    if (ok && kind == OPS_KIND_UNKNOWN)
        ok = ops_device_kind(&kind, sn, sizeof sn, d->conn, d->serial, ops_now_ms() + 3000, &e) ==
             0;
    int emu = kind == OPS_KIND_EMULATOR;
    ops_dev_give(&farm.srv->pool, d, ok ? OPS_OK : OPS_EDEVICE);
    if (ok) {
        pthread_mutex_lock(&farm.mu);
        snprintf(f->model, sizeof f->model, "%s", v[0]);
        f->sdk = atoi(v[1]);
        snprintf(f->abi, sizeof f->abi, "%s", v[2]);
        f->emulator = emu;
        f->known = 1;
        pthread_mutex_unlock(&farm.mu);
    }
    for (int k = 0; k < 3; k++)
        free(v[k]);
}

static int dev_free(int i)
{
    pthread_mutex_lock(&farm.mu);
    int busy = farm.slots[i].busy || !farm.facts[i].known;
    pthread_mutex_unlock(&farm.mu);
    return !busy && dev_connected(i) && !serve_tasks_busy(i);
}

static int any_free(void)
{
    for (int i = 0; i < farm.srv->ndevs; i++)
        if (dev_free(i))
            return 1;
    return 0;
}

/* The node's entry: its devices as they are now. */
static char *node_json(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", farm_conf.node);
    cJSON_AddStringToObject(o, "instance", farm.instance);
    cJSON *arr = cJSON_AddArrayToObject(o, "devices");
    for (int i = 0; i < farm.srv->ndevs; i++) {
        ops_dev *d = farm.srv->devs[i];
        cJSON *j = cJSON_CreateObject();
        int st = d->state;
        cJSON_AddStringToObject(j, "serial", d->serial);
        pthread_mutex_lock(&farm.mu);
        facts *f = &farm.facts[i];
        if (f->known) {
            cJSON_AddStringToObject(j, "model", f->model);
            cJSON_AddNumberToObject(j, "sdk", f->sdk);
            cJSON_AddStringToObject(j, "abi", f->abi);
            cJSON_AddBoolToObject(j, "emulator", f->emulator);
        }
        int farm_busy = farm.slots[i].busy;
        if (farm_busy)
            cJSON_AddStringToObject(j, "task", farm.slots[i].id);
        pthread_mutex_unlock(&farm.mu);
        cJSON_AddStringToObject(j, "state", st == OPS_DEV_CONNECTED ? "connected"
                                            : st == OPS_DEV_GONE     ? "gone"
                                                                 : "connecting");
        cJSON_AddBoolToObject(j, "busy", farm_busy || serve_tasks_busy(i));
        cJSON_AddItemToArray(arr, j);
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static int beat(void)
{
    char *j = node_json();
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%d", FARM_NODE_TTL_MS);
    const char *a[] = {farm_conf.node, farm.instance, j ? j : "{}", ttl};
    long long v = eval_int(farm_lua_beat, 4, a, -1);
    free(j);
    if (v == 0) {
        char m[256];
        snprintf(m, sizeof m, "another live node is named '%s' in this farm: waiting for its "
                 "entry to expire (or give another --farm-node)", farm_conf.node);
        set_state(0, m);
    }
    return v == 1 ? 0 : -1;
}

/* Whether task selector sel (JSON, may be empty) fits device i. */
static int fits(const char *sel, int i)
{
    cJSON *s = sel && *sel ? cJSON_Parse(sel) : NULL;
    int ok = 1;
    ops_dev *d = farm.srv->devs[i];
    facts *f = &farm.facts[i];
    const cJSON *v;
    if (s) {
        if ((v = cJSON_GetObjectItemCaseSensitive(s, "serial")) && cJSON_IsString(v) &&
            strcmp(v->valuestring, d->serial) != 0)
            ok = 0;
        if ((v = cJSON_GetObjectItemCaseSensitive(s, "model")) && cJSON_IsString(v) &&
            strcmp(v->valuestring, f->model) != 0)
            ok = 0;
        if ((v = cJSON_GetObjectItemCaseSensitive(s, "min_sdk")) && cJSON_IsNumber(v) &&
            f->sdk < v->valueint)
            ok = 0;
        if ((v = cJSON_GetObjectItemCaseSensitive(s, "emulator")) && cJSON_IsBool(v) &&
            cJSON_IsTrue(v) != f->emulator)
            ok = 0;
        cJSON_Delete(s);
    }
    return ok;
}

static int64_t read_after; /* monotonic: no queue read before (after putting a task back) */

static void requeue(const char *id, const char *entry, const char *reason)
{
    const char *a[] = {id, entry, farm_conf.node, reason};
    eval_int(farm_lua_requeue, 4, a, 0);
}

static void slot_clear(slot *sl)
{
    while (sl->steps) {
        step_q *q = sl->steps;
        sl->steps = q->next;
        free(q);
    }
    free(sl->end_json);
    free(sl->error);
    memset(sl, 0, sizeof *sl);
    sl->tail = &sl->steps;
}

/* Entry `entry` of the queue names task id: run it here, or put it back. */
static void handle(const char *entry, const char *id)
{
    char key[96];
    snprintf(key, sizeof key, FARM_PREFIX "task:%s", id);
    const char *a[] = {"HMGET", key, "select", "goal", "model", "max_steps", "step_delay_ms"};
    redisReply *r = cmd(7, a);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 5) {
        if (r)
            freeReplyObject(r);
        return; /* still pending here: taken again on rejoining, or by another node */
    }
    const char *sel = r->element[0]->str;
    int devi = -1;
    for (int i = 0; i < farm.srv->ndevs && devi < 0; i++)
        if (dev_free(i) && fits(sel, i))
            devi = i;
    if (devi < 0 || !r->element[1]->str) {
        /* Gone or ended tasks are dropped by the script; a task no free device
         * here fits goes back to the queue for the others. */
        requeue(id, entry, "");
        read_after = ops_now_ms() + 200;
        freeReplyObject(r);
        return;
    }
    const char *ta[] = {id, entry, farm_conf.node, farm.srv->devs[devi]->serial};
    redisReply *t = eval(farm_lua_take, 4, ta);
    if (!t || t->type != REDIS_REPLY_ARRAY || t->elements < 2 ||
        strcmp(t->element[0]->str, "run") != 0) {
        if (t)
            freeReplyObject(t);
        freeReplyObject(r);
        return;
    }
    slot *sl = &farm.slots[devi];
    pthread_mutex_lock(&farm.mu);
    slot_clear(sl);
    sl->busy = 1;
    snprintf(sl->id, sizeof sl->id, "%s", id);
    snprintf(sl->entry, sizeof sl->entry, "%s", entry);
    snprintf(sl->attempt, sizeof sl->attempt, "%lld", t->element[1]->integer);
    sl->renewed_ms = ops_now_ms();
    pthread_mutex_unlock(&farm.mu);
    freeReplyObject(t);
    serve_task_spec sp = {.goal = r->element[1]->str,
                          .model = r->element[2]->str,
                          .max_steps = r->element[3]->str ? atoi(r->element[3]->str) : 0,
                          .step_delay_ms =
                              r->element[4]->str ? atoi(r->element[4]->str) : -1};
    serve_task_hooks h = {on_step, on_end, sl};
    char why[600], local[16];
    /* The slot is filled first: the run's hooks may fire before this returns. */
    if (serve_tasks_run(devi, &sp, &h, local, sizeof local, why, sizeof why) != 0) {
        fprintf(stderr, SERVE_NAME ": farm: task %s: %s\n", id, why);
        char reason[700];
        snprintf(reason, sizeof reason, "could not start on %s: %s", farm_conf.node, why);
        requeue(id, entry, reason);
        read_after = ops_now_ms() + 200;
        pthread_mutex_lock(&farm.mu);
        slot_clear(sl);
        pthread_mutex_unlock(&farm.mu);
    } else {
        pthread_mutex_lock(&farm.mu);
        snprintf(sl->local, sizeof sl->local, "%s", local);
        int cancel = sl->lost;
        pthread_mutex_unlock(&farm.mu);
        if (cancel)
            serve_tasks_cancel(local);
    }
    freeReplyObject(r);
}

/* The entries of a queue reply (XREADGROUP's [[stream, [[id, [k, v]]]]], or
 * XAUTOCLAIM's entries [[id, [k, v]]]) handed to handle. */
static void handle_entries(const redisReply *ents)
{
    for (size_t i = 0; ents && i < ents->elements; i++) {
        const redisReply *e = ents->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
            e->element[1]->type != REDIS_REPLY_ARRAY)
            continue; /* deleted meanwhile */
        const redisReply *kv = e->element[1];
        for (size_t k = 0; k + 1 < kv->elements; k += 2)
            if (strcmp(kv->element[k]->str, "task") == 0)
                handle(e->element[0]->str, kv->element[k + 1]->str);
    }
}

/* Renew the lease of every running farm task; end those that ended. */
static void tend(void)
{
    int64_t now = ops_now_ms();
    for (int i = 0; i < farm.srv->ndevs; i++) {
        slot *sl = &farm.slots[i];
        pthread_mutex_lock(&farm.mu);
        int busy = sl->busy, ended = sl->ended, lost = sl->lost, fenced = sl->fenced;
        char id[32], entry[64], attempt[16], local[16];
        snprintf(id, sizeof id, "%s", sl->id);
        snprintf(entry, sizeof entry, "%s", sl->entry);
        snprintf(attempt, sizeof attempt, "%s", sl->attempt);
        snprintf(local, sizeof local, "%s", sl->local);
        int64_t renewed = sl->renewed_ms;
        pthread_mutex_unlock(&farm.mu);
        if (!busy)
            continue;
        if (!ended && !lost && !fenced && now - renewed > farm_conf.lease_ms / 2) {
            /* Another node may take the task once the lease runs out: stop first. */
            fprintf(stderr, SERVE_NAME ": farm: task %s: its lease could not be renewed for "
                            "%d ms: cancelled here, it goes back to the queue\n", id,
                    (int)(now - renewed));
            pthread_mutex_lock(&farm.mu);
            sl->fenced = 1;
            pthread_mutex_unlock(&farm.mu);
            serve_tasks_cancel(local);
            continue;
        }
        if (!rc)
            continue;
        if (!ended && !lost && !fenced) {
            if (now - renewed < FARM_RENEW_MS)
                continue;
            const char *a[] = {id, entry, farm_conf.node, attempt};
            redisReply *r = eval(farm_lua_renew, 4, a);
            if (r && r->type == REDIS_REPLY_INTEGER) {
                pthread_mutex_lock(&farm.mu);
                sl->renewed_ms = now;
                pthread_mutex_unlock(&farm.mu);
                answer(sl, r->integer);
            }
            if (r)
                freeReplyObject(r);
            continue;
        }
        if (!ended)
            continue;
        /* The steps left, in order, then the end. */
        for (;;) {
            pthread_mutex_lock(&farm.mu);
            step_q *q = sl->lost ? NULL : sl->steps;
            pthread_mutex_unlock(&farm.mu);
            if (!q || step_write(sl, q->text) != 0)
                break;
            pthread_mutex_lock(&farm.mu);
            sl->steps = q->next;
            if (!sl->steps)
                sl->tail = &sl->steps;
            pthread_mutex_unlock(&farm.mu);
            free(q);
        }
        pthread_mutex_lock(&farm.mu);
        int pending = sl->steps != NULL;
        lost = sl->lost;
        pthread_mutex_unlock(&farm.mu);
        if (pending && !lost)
            continue; /* Redis went away again: the next round */
        int done = lost || end_write(sl) == 0;
        if (done) {
            pthread_mutex_lock(&farm.mu);
            slot_clear(sl);
            pthread_cond_broadcast(&farm.cv);
            pthread_mutex_unlock(&farm.mu);
        }
    }
}

/* Joining: the group exists; entries pending on this node's name that no
 * slot runs (a previous run of this node died) go back to the queue. */
static int join(void)
{
    const char *g[] = {"XGROUP", "CREATE", FARM_QUEUE, FARM_GROUP, "0", "MKSTREAM"};
    redisReply *r = cmd(6, g);
    if (!r)
        return -1;
    int bad = r->type == REDIS_REPLY_ERROR && !strstr(r->str, "BUSYGROUP");
    freeReplyObject(r);
    if (bad) {
        set_state(0, rwhy);
        return -1;
    }
    if (beat() != 0)
        return -1;
    const char *p[] = {"XPENDING", FARM_QUEUE, FARM_GROUP, "-", "+", "1000", farm_conf.node};
    r = cmd(7, p);
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const char *e = r->element[i]->element[0]->str;
        int running = 0;
        pthread_mutex_lock(&farm.mu);
        for (int k = 0; k < farm.srv->ndevs; k++)
            running |= farm.slots[k].busy && strcmp(farm.slots[k].entry, e) == 0;
        pthread_mutex_unlock(&farm.mu);
        if (running)
            continue;
        const char *x[] = {"XRANGE", FARM_QUEUE, e, e};
        redisReply *xr = cmd(4, x);
        if (xr && xr->type == REDIS_REPLY_ARRAY && xr->elements == 1) {
            const redisReply *kv = xr->element[0]->element[1];
            if (kv->elements == 2)
                requeue(kv->element[1]->str, e, "its node restarted");
        } else if (xr && xr->type == REDIS_REPLY_ARRAY) {
            const char *ack[] = {"XACK", FARM_QUEUE, FARM_GROUP, e}; /* deleted entry */
            redisReply *ar = cmd(4, ack);
            if (ar)
                freeReplyObject(ar);
        }
        if (xr)
            freeReplyObject(xr);
    }
    if (r)
        freeReplyObject(r);
    return rc ? 0 : -1;
}

static void *node_run(void *arg)
{
    (void)arg;
    int backoff = 0;
    int64_t next_connect = 0, next_beat = 0, next_claim = 0;
    char lease[16];
    snprintf(lease, sizeof lease, "%d", farm_conf.lease_ms);
    while (!farm.stopping) {
        int64_t now = ops_now_ms();
        if (!rc && now >= next_connect) {
            rc = farm_connect(&farm_conf, rwhy, sizeof rwhy);
            if (rc && join() == 0) {
                backoff = 0;
                set_state(1, "");
                next_beat = now + FARM_BEAT_MS;
            } else {
                if (rc) {
                    redisFree(rc);
                    rc = NULL;
                }
                pthread_mutex_lock(&farm.mu);
                int conflict = strstr(farm.why, "another live node") != NULL;
                pthread_mutex_unlock(&farm.mu);
                if (!conflict)
                    set_state(0, rwhy);
                backoff = backoff ? (backoff * 2 > 5000 ? 5000 : backoff * 2) : 200;
                next_connect = now + backoff;
            }
        }
        for (int i = 0; i < farm.srv->ndevs; i++)
            facts_read(i);
        if (rc && now >= next_beat) {
            next_beat = now + FARM_BEAT_MS;
            if (beat() != 0 && rc) {
                redisFree(rc); /* the name is another node's now */
                rc = NULL;
            }
        }
        tend();
        if (rc && any_free() && now >= read_after) {
            redisReply *r = NULL;
            if (now >= next_claim) {
                /* A task whose node stopped renewing its lease. */
                next_claim = now + 1000;
                const char *a[] = {"XAUTOCLAIM", FARM_QUEUE, FARM_GROUP, farm_conf.node,
                                   lease, "0-0", "COUNT", "1"};
                r = cmd(8, a);
                if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 2)
                    handle_entries(r->element[1]);
                if (r)
                    freeReplyObject(r);
            }
            if (rc && any_free()) {
                const char *a[] = {"XREADGROUP", "GROUP", FARM_GROUP, farm_conf.node, "COUNT",
                                   "1", "BLOCK", "250", "STREAMS", FARM_QUEUE, ">"};
                r = cmd(11, a);
                if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1)
                    handle_entries(r->element[0]->element[1]);
                else if (r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "NOGROUP")) {
                    redisFree(rc); /* Redis lost the group: join again */
                    rc = NULL;
                }
                if (r)
                    freeReplyObject(r);
            }
            if (!rc)
                set_state(0, rwhy);
            continue;
        }
        if (!rc && farm.available)
            set_state(0, rwhy);
        /* A farm task's end wakes this at once; a local task's end (the
         * device free for the farm again) is seen within the short wait. */
        pthread_mutex_lock(&farm.mu);
        if (!farm.stopping)
            ops_cond_wait_until(&farm.cv, &farm.mu, ops_now_ms() + (rc ? 20 : 250));
        pthread_mutex_unlock(&farm.mu);
    }
    return NULL;
}

/* The password: the file (not readable by others), else the environment. */
static int load_password(void)
{
    const char *env = getenv("ADBC_FARM_PASSWORD");
    if (!pass_file) {
        if (env && *env) {
            if (strlen(env) >= sizeof farm_conf.pass) {
                fprintf(stderr, SERVE_NAME ": ADBC_FARM_PASSWORD is too long\n");
                return -1;
            }
            snprintf(farm_conf.pass, sizeof farm_conf.pass, "%s", env);
        }
        return 0;
    }
    char why[512];
    if (serve_secret_read(pass_file, "the farm's password file", farm_conf.pass,
                          sizeof farm_conf.pass, why, sizeof why) != 0) {
        fprintf(stderr, SERVE_NAME ": %s\n", why);
        return -1;
    }
    if (!farm_conf.pass[0]) {
        fprintf(stderr, SERVE_NAME ": the farm's password file %s is empty\n", pass_file);
        return -1;
    }
    return 0;
}

/* --farm-ca, --farm-cert, --farm-key: with rediss:// only; a certificate
 * with its key; each file readable now, the key by no one else. */
static int tls_files(void)
{
    if (!farm_conf.tls && (farm_conf.ca[0] || farm_conf.cert[0] || farm_conf.key[0])) {
        fprintf(stderr, SERVE_NAME ": --farm-ca, --farm-cert and --farm-key are for TLS: give "
                        "--farm rediss://HOST:PORT\n");
        return -1;
    }
    if (!farm_conf.cert[0] != !farm_conf.key[0]) {
        fprintf(stderr, SERVE_NAME ": --farm-cert and --farm-key go together (the client's "
                        "certificate and its key)\n");
        return -1;
    }
    const char *f[] = {farm_conf.ca, farm_conf.cert, farm_conf.key};
    const char *opt[] = {"--farm-ca", "--farm-cert", "--farm-key"};
    for (int i = 0; i < 3; i++) {
        if (!f[i][0])
            continue;
        struct stat st;
        if (access(f[i], R_OK) != 0 || stat(f[i], &st) != 0) {
            fprintf(stderr, SERVE_NAME ": %s %s: %s\n", opt[i], f[i], strerror(errno));
            return -1;
        }
        if (i == 2 && (st.st_mode & 077)) {
            fprintf(stderr, SERVE_NAME ": --farm-key %s is readable by group or others: "
                            "chmod 600 it\n", f[i]);
            return -1;
        }
    }
    return 0;
}

int serve_farm_start(serve *s)
{
    if (!url_arg && !farm_conf.node[0] && !pass_file && !farm_conf.lease_ms &&
        !farm_conf.ca[0] && !farm_conf.cert[0] && !farm_conf.key[0])
        return 0;
    if (!url_arg || !farm_conf.node[0]) {
        fprintf(stderr, SERVE_NAME ": a farm node needs both --farm URL and --farm-node NAME\n");
        return -1;
    }
    char why[512];
    if (farm_url_parse(&farm_conf, url_arg, why, sizeof why) != 0) {
        fprintf(stderr, SERVE_NAME ": %s\n", why);
        return -1;
    }
    if (tls_files() != 0 || load_password() != 0)
        return -1;
    if (!farm_conf.lease_ms)
        farm_conf.lease_ms = 15000;
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        fprintf(stderr, SERVE_NAME ": getrandom: %s\n", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(farm.instance + 2 * i, 3, "%02x", raw[i]);
    for (int i = 0; i < SERVE_MAX_DEVICES; i++)
        slot_clear(&farm.slots[i]);
    farm.srv = s;
    snprintf(farm.why, sizeof farm.why, "joining the farm at %s:%d", farm_conf.host,
             farm_conf.port);
    if (ops_cond_init(&farm.cv) != 0 || pthread_create(&farm.thread, NULL, node_run, NULL) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot start the farm's thread\n");
        return -1;
    }
    farm.started = 1;
    farm.on = 1;
    return 0;
}

int serve_farm_on(void)
{
    return farm.on;
}

/* Before the tasks stop: the runs of farm tasks, about to be cancelled,
 * go back to the queue at their end instead of ending cancelled. */
void serve_farm_leave(void)
{
    if (!farm.started)
        return;
    pthread_mutex_lock(&farm.mu);
    for (int i = 0; i < SERVE_MAX_DEVICES; i++)
        if (farm.slots[i].busy)
            farm.slots[i].fenced = 1;
    pthread_mutex_unlock(&farm.mu);
}

/* After the tasks stopped: what is left to write gets a bounded while,
 * then the thread ends. A task not put back stays pending on this node and
 * is taken over when its lease runs out (or put back when it rejoins). The
 * node's entry expires by itself. */
void serve_farm_stop(void)
{
    if (!farm.started)
        return;
    int64_t deadline = ops_now_ms() + 2000;
    pthread_mutex_lock(&farm.mu);
    for (;;) {
        int left = 0;
        for (int i = 0; i < SERVE_MAX_DEVICES; i++)
            left |= farm.slots[i].busy;
        if (!left || ops_cond_wait_until(&farm.cv, &farm.mu, deadline) == ETIMEDOUT)
            break;
    }
    farm.stopping = 1;
    pthread_cond_broadcast(&farm.cv);
    pthread_mutex_unlock(&farm.mu);
    pthread_join(farm.thread, NULL);
    farm.started = 0;
    if (rc)
        redisFree(rc);
    rc = NULL;
    pthread_mutex_lock(&farm_api_mu);
    api_dead();
    pthread_mutex_unlock(&farm_api_mu);
    explicit_bzero(farm_conf.pass, sizeof farm_conf.pass);
}

void serve_farm_end(void)
{
    farm_tls_wait(10000);
}

#endif
