/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's loop (ops_agent.h says what one step is). The device is
 * reached only through the tool table's hooks (fe_device / fe_device_done)
 * and the observation: both check the cancel flag first, so nothing is
 * sent after a cancel. The run's own latest snapshot is what the tool
 * handlers see as the device's (a shadow ops_dev around the real
 * connection): the refs the model was shown are the refs acted on, and a
 * pool device's snapshot, which other clients' refs come from, is left
 * alone. */
#include "ops_agent_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops_config.h"
#include "ops_llm.h"
#include "ops_tools.h"

#define GOAL_MAX 4000
#define HISTORY_MAX 20 /* steps shown to the model, the latest */

static const char *const end_names[] = {"running",   "done",        "max_steps",
                                        "cancelled", "safety_stop", "failed"};

const char *ops_agent_end_name(ops_agent_end end)
{
    return (unsigned)end < sizeof end_names / sizeof end_names[0] ? end_names[end] : "?";
}

void ops_agent_config_init(ops_agent_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->max_steps = OPS_AGENT_MAX_STEPS_DEFAULT;
    cfg->hint_after = OPS_AGENT_HINT_AFTER;
    cfg->back_after = OPS_AGENT_BACK_AFTER;
    cfg->step_timeout_ms = 30000;
}

void ops_agent_cancel(atomic_int *flag)
{
    if (flag)
        atomic_store(flag, 1);
}

/* ---- settings by name ---- */

const char *const ops_agent_settings[] = {"max_steps",  "step_delay_ms",   "hint_after",
                                          "back_after", "step_timeout_ms", "vision", NULL};

static int set_int(int *out, const char *key, const char *v, int lo, int hi, ops_err *e)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || n < lo || n > hi)
        return ops_fail(e, OPS_EARG, "%s takes a whole number %d..%d (not \"%.40s\")", key, lo,
                        hi, v ? v : "");
    *out = (int)n;
    return 0;
}

int ops_agent_set(ops_agent_config *cfg, const char *key, const char *value, ops_err *e)
{
    if (!e)
        return -1;
    if (!cfg || !key || !value)
        return ops_fail(e, OPS_EARG, "ops_agent_set: NULL argument");
    if (strcmp(key, "max_steps") == 0)
        return set_int(&cfg->max_steps, key, value, 1, OPS_AGENT_MAX_STEPS_LIMIT, e);
    if (strcmp(key, "step_delay_ms") == 0)
        return set_int(&cfg->step_delay_ms, key, value, 0, 60000, e);
    if (strcmp(key, "hint_after") == 0)
        return set_int(&cfg->hint_after, key, value, 1, 50, e);
    if (strcmp(key, "back_after") == 0)
        return set_int(&cfg->back_after, key, value, 1, 50, e);
    if (strcmp(key, "step_timeout_ms") == 0)
        return set_int(&cfg->step_timeout_ms, key, value, 1, 600000, e);
    if (strcmp(key, "vision") == 0) {
        static const char *const on[] = {"on", "true", "1", "yes"}, *const off[] = {"off", "false",
                                                                                    "0", "no"};
        for (int i = 0; i < 4; i++) {
            if (strcmp(value, on[i]) == 0)
                return cfg->vision = 1, 0;
            if (strcmp(value, off[i]) == 0)
                return cfg->vision = 0, 0;
        }
        return ops_fail(e, OPS_EARG, "vision takes on or off (not \"%.40s\")", value);
    }
    return ops_fail(e, OPS_EARG, "no setting '%.64s': the settings are max_steps, "
                                 "step_delay_ms, hint_after, back_after, step_timeout_ms, vision",
                    key);
}

static const char *const file_keys[] = {"max_steps",  "step_delay_ms",   "hint_after",
                                        "back_after", "step_timeout_ms", "vision",
                                        "allow_shell", "patterns",       "allowlist", NULL};

static const char *const no_patterns[] = {NULL}; /* patterns = []: none */

int ops_agent_cfg_value(ops_agent_config *cfg, const char *key, struct ops_cfg_val *v,
                        char *err, size_t errlen)
{
    if (!cfg || !key || !v || !err || !errlen)
        return -1;
    int is_pat = strcmp(key, "patterns") == 0;
    if (is_pat || strcmp(key, "allowlist") == 0) {
        if (ops_cfg_want(v, OPS_CFG_ARR, "agent", key, err, errlen) != 0)
            return -1;
        for (size_t i = 0; i < v->n; i++)
            if (!v->arr[i][0]) {
                snprintf(err, errlen, "[agent] %s: item %zu is empty", key, i + 1);
                return -1;
            }
        char ***own = is_pat ? &cfg->own_patterns : &cfg->own_allow;
        size_t *n = is_pat ? &cfg->own_npatterns : &cfg->own_nallow;
        ops_cfg_list_free(*own, *n);
        *own = v->arr;
        *n = v->n;
        v->arr = NULL;
        v->n = 0;
        if (is_pat) {
            cfg->patterns = *own ? (const char *const *)*own : no_patterns;
            cfg->npatterns = *n;
        } else {
            cfg->allowlist = (const char *const *)*own;
            cfg->nallow = *n;
        }
        return 0;
    }
    if (strcmp(key, "allow_shell") == 0) {
        if (ops_cfg_want(v, OPS_CFG_BOOL, "agent", key, err, errlen) != 0)
            return -1;
        cfg->allow_shell = v->b;
        return 0;
    }
    int known = 0;
    for (int i = 0; ops_agent_settings[i]; i++)
        known |= strcmp(ops_agent_settings[i], key) == 0;
    if (!known)
        return ops_cfg_unknown("agent", key, file_keys, err, errlen);
    char text[64];
    ops_err e;
    if (v->type == OPS_CFG_ARR || ops_cfg_text(v, text, sizeof text) != 0 ||
        ops_agent_set(cfg, key, text, &e) != 0) {
        snprintf(err, errlen, "[agent] %s", v->type == OPS_CFG_ARR ? "takes a value, not an "
                 "array" : e.msg);
        return -1;
    }
    return 0;
}

void ops_agent_config_free(ops_agent_config *cfg)
{
    if (!cfg)
        return;
    ops_cfg_list_free(cfg->own_patterns, cfg->own_npatterns);
    ops_cfg_list_free(cfg->own_allow, cfg->own_nallow);
    if (cfg->own_patterns && cfg->patterns == (const char *const *)cfg->own_patterns)
        cfg->patterns = NULL;
    if (cfg->own_allow && cfg->allowlist == (const char *const *)cfg->own_allow)
        cfg->allowlist = NULL, cfg->nallow = 0;
    cfg->own_patterns = cfg->own_allow = NULL;
    cfg->own_npatterns = cfg->own_nallow = 0;
}

static int check_config(const ops_agent_config *c, const ops_agent_device *d, ops_err *e)
{
    if (!c->goal || !*c->goal)
        return ops_fail(e, OPS_EARG, "the task has no goal: say what the agent should do");
    size_t n = strlen(c->goal);
    if (n > GOAL_MAX)
        return ops_fail(e, OPS_EARG, "the goal is %zu bytes long; at most %d are accepted", n,
                        GOAL_MAX);
    if (ops_utf8_bad(c->goal, n) != n)
        return ops_fail(e, OPS_EARG, "the goal is not UTF-8 text");
    if (!c->model)
        return ops_fail(e, OPS_EARG, "the task has no model: configure one (docs/agent.md)");
    if (c->max_steps < 1 || c->max_steps > OPS_AGENT_MAX_STEPS_LIMIT)
        return ops_fail(e, OPS_EARG, "max_steps must be 1..%d (not %d)",
                        OPS_AGENT_MAX_STEPS_LIMIT, c->max_steps);
    if (c->step_delay_ms < 0 || c->step_delay_ms > 60000)
        return ops_fail(e, OPS_EARG, "step_delay_ms must be 0..60000 (not %d)", c->step_delay_ms);
    if (c->hint_after < 1 || c->hint_after > 50)
        return ops_fail(e, OPS_EARG, "hint_after must be 1..50 (not %d)", c->hint_after);
    if (c->back_after < c->hint_after || c->back_after > 50)
        return ops_fail(e, OPS_EARG, "back_after must be hint_after (%d)..50 (not %d)",
                        c->hint_after, c->back_after);
    if (c->step_timeout_ms < 1 || c->step_timeout_ms > 600000)
        return ops_fail(e, OPS_EARG, "step_timeout_ms must be 1..600000 (not %d)",
                        c->step_timeout_ms);
    if (c->nallow && !c->allowlist)
        return ops_fail(e, OPS_EARG, "nallow is %zu but allowlist is NULL", c->nallow);
    if (!d || (!d->conn && !(d->pool && d->dev)) || (d->conn && (d->pool || d->dev)))
        return ops_fail(e, OPS_EARG, "the task needs one device: a connection, or a pool and "
                                     "one of its devices");
    if (d->busy_ms < 0)
        return ops_fail(e, OPS_EARG, "busy_ms must not be negative");
    return 0;
}

/* ---- the JSON forms ---- */

cJSON *ops_agent_step_json(const ops_agent_step *s)
{
    if (!s)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "step", s->index);
    cJSON_AddStringToObject(o, "observation", s->observation ? s->observation : "");
    cJSON_AddStringToObject(o, "hint", s->hint ? s->hint : "");
    cJSON_AddStringToObject(o, "reasoning", s->reasoning ? s->reasoning : "");
    cJSON_AddStringToObject(o, "action", s->action ? s->action : "");
    cJSON *args = s->args ? cJSON_Parse(s->args) : NULL;
    cJSON_AddItemToObject(o, "args", args ? args : cJSON_CreateObject());
    cJSON_AddBoolToObject(o, "forced", s->forced);
    cJSON_AddBoolToObject(o, "ok", s->ok);
    cJSON_AddStringToObject(o, "result", s->result ? s->result : "");
    if (s->screen_changed >= 0)
        cJSON_AddBoolToObject(o, "screen_changed", s->screen_changed);
    cJSON *t = cJSON_AddObjectToObject(o, "ms");
    cJSON_AddNumberToObject(t, "observe", (double)s->observe_ms);
    cJSON_AddNumberToObject(t, "model", (double)s->model_ms);
    cJSON_AddNumberToObject(t, "act", (double)s->act_ms);
    cJSON_AddNumberToObject(t, "total", (double)s->total_ms);
    cJSON *k = cJSON_AddObjectToObject(o, "tokens");
    cJSON_AddNumberToObject(k, "in", (double)s->tokens_in);
    cJSON_AddNumberToObject(k, "out", (double)s->tokens_out);
    return o;
}

cJSON *ops_agent_result_json(const ops_agent_result *r)
{
    if (!r)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "end", ops_agent_end_name(r->end));
    cJSON_AddNumberToObject(o, "steps", r->steps);
    if (r->end == OPS_AGENT_DONE)
        cJSON_AddStringToObject(o, "answer", r->answer);
    else
        cJSON_AddStringToObject(o, "reason", r->reason);
    cJSON_AddNumberToObject(o, "tokens_in", (double)r->tokens_in);
    cJSON_AddNumberToObject(o, "tokens_out", (double)r->tokens_out);
    cJSON_AddNumberToObject(o, "cost_usd", r->cost_usd);
    cJSON_AddNumberToObject(o, "total_ms", (double)r->total_ms);
    return o;
}

/* ---- the run ---- */

typedef struct run {
    const ops_agent_config *cfg;
    const ops_agent_device *d;
    atomic_int own_cancel, *cancel;
    agent_safety *safety;
    agent_trace *trace;
    cJSON *tools;
    ops_front fe;
    ops_dev shadow;          /* what the tool handlers see as the device */
    adbc_ui_snap *snap;      /* the run's latest snapshot */
    ops_kind kind;
    char serialno[128];
    int64_t deadline;        /* of the current device use */
    /* the steps so far, for the prompt: one line each, the latest HISTORY_MAX */
    char *lines[HISTORY_MAX];
    int nlines, first_line;
    ops_agent_result *res;
    /* An act refused by the safety check of the dump it took (act_check):
     * the task ends with why. */
    int act_stopped;
    char act_why[512];
} run;

/* The safety check of every dump an act takes before its input
 * (ops_front.check): a screen that turned into a stop screen between the
 * model's look and the act is never acted on. */
static int act_check(void *user, const adbc_ui_snap *snap, const adbc_ui_ref *at, char *why,
                     size_t cap)
{
    (void)at;
    run *r = user;
    if (!r->safety || !agent_safety_check(r->safety, snap, r->act_why, sizeof r->act_why))
        return 0;
    r->act_stopped = 1;
    snprintf(why, cap, "%s", r->act_why);
    return 1;
}

static int cancelled(const run *r)
{
    return atomic_load(r->cancel) != 0;
}

static void end_with(run *r, ops_agent_end end, ops_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void end_with(run *r, ops_agent_end end, ops_code code, const char *fmt, ...)
{
    r->res->end = end;
    r->res->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->res->reason, sizeof r->res->reason, fmt, ap);
    va_end(ap);
    ops_utf8_fix(r->res->reason);
}

/* Take the device for one use: the pool's lock (within busy_ms) and its
 * connection, under the shadow with the run's snapshot. */
static int dev_take(run *r, int64_t deadline, ops_err *e)
{
    if (cancelled(r))
        return ops_fail(e, OPS_EFAIL, "the task was cancelled: nothing more is sent");
    const ops_agent_device *d = r->d;
    adbc_conn *conn = d->conn;
    if (d->pool) {
        if (ops_dev_take(d->pool, d->dev, d->busy_ms ? d->busy_ms : 5000, deadline, e) != 0)
            return -1;
        conn = d->dev->conn;
    }
    r->shadow.conn = conn;
    r->shadow.last = r->snap;
    r->snap = NULL;
    r->shadow.kind = r->kind;
    return 0;
}

static void dev_give(run *r, ops_code code)
{
    r->snap = r->shadow.last;
    r->shadow.last = NULL;
    r->shadow.conn = NULL;
    if (r->d->pool)
        ops_dev_give(r->d->pool, r->d->dev, code);
}

static int fe_device(ops_call *c)
{
    run *r = c->fe->user;
    ops_err e;
    if (dev_take(r, c->deadline, &e) != 0)
        return ops_call_err(c, &e);
    c->dev = &r->shadow;
    return 0;
}

static void fe_device_done(ops_call *c)
{
    if (!c->dev)
        return;
    dev_give(c->fe->user, c->err.code);
    c->dev = NULL;
}

/* The device must be an emulator or allowlisted (ops_allowed): decided on
 * the first take, by facts read from the device (ops_device_kind). */
static int check_device(run *r, ops_err *e)
{
    const ops_agent_device *d = r->d;
    int64_t deadline = ops_now_ms() + r->cfg->step_timeout_ms;
    if (dev_take(r, deadline, e) != 0)
        return -1;
    const char *serial = d->pool ? d->dev->serial : d->serial ? d->serial : "";
    int rc = 0;
    if (d->pool && d->dev->kind != OPS_KIND_UNKNOWN) {
        r->kind = d->dev->kind;
        snprintf(r->serialno, sizeof r->serialno, "%s", d->dev->serialno);
    } else {
        rc = ops_device_kind(&r->kind, r->serialno, sizeof r->serialno, r->shadow.conn, serial,
                             deadline, e);
    }
    snprintf(r->shadow.serial, sizeof r->shadow.serial, "%s", *serial ? serial : "the device");
    dev_give(r, rc == 0 ? OPS_OK : e->code);
    if (rc != 0)
        return -1;
    r->shadow.kind = r->kind;
    if (!ops_allowed(r->kind, serial, r->serialno, r->cfg->allowlist, r->cfg->nallow))
        return ops_fail(e, OPS_EARG, "refused: %s is a physical device (not an emulator) and "
                        "not on the allowlist. The agent drives emulators only unless a "
                        "person allows a device by name (its serial \"%s\"%s%s%s): see "
                        "docs/agent.md, \"Safety\"", r->shadow.serial, serial,
                        r->serialno[0] ? " or ro.serialno \"" : "", r->serialno,
                        r->serialno[0] ? "\"" : "");
    return 0;
}

/* ---- observing ---- */

typedef struct observation {
    char *text;              /* the snapshot text (malloc'd) */
    char summary[512];
    char id[32];
    uint8_t *png;            /* vision: the marked screenshot */
    size_t png_len;
    int reused;              /* the act's own snapshot, no new dump */
    int64_t ms;
} observation;

static void observation_free(observation *o)
{
    free(o->text);
    adbc_free(o->png);
    memset(o, 0, sizeof *o);
}

/* The package of the app in front: the last window with a package that
 * is not the system UI's, else the first with one. */
static const char *front_package(const adbc_ui_snap *s)
{
    size_t n = adbc_ui_snap_windows(s);
    const char *any = "";
    for (size_t i = n; i-- > 0;) {
        const char *p = adbc_ui_snap_window_package(s, i);
        if (!*p)
            continue;
        if (strcmp(p, "com.android.systemui") != 0)
            return p;
        any = p;
    }
    return any;
}

static int observe(run *r, observation *o, int reuse, ops_err *e)
{
    int64_t t0 = ops_now_ms();
    char *act = NULL, *pkg = NULL;
    int rc = 0;
    r->deadline = t0 + r->cfg->step_timeout_ms;
    if (!reuse || !r->snap || r->cfg->vision) {
        if (dev_take(r, r->deadline, e) != 0)
            return -1;
        ops_ctx c;
        ops_ctx_init(&c, r->shadow.conn, &r->shadow.last, r->deadline);
        if (reuse && r->shadow.last) {
            o->reused = 1;
        } else if (ops_observe_take(&c, &act, &pkg) != 0) {
            *e = c.err;
            rc = -1;
        }
        if (rc == 0 && r->cfg->vision && ops_shot_marked(&c, &o->png, &o->png_len) != 0) {
            *e = c.err;
            rc = -1;
        }
        dev_give(r, rc == 0 ? OPS_OK : e->code);
    } else {
        o->reused = 1;
    }
    if (rc == 0) {
        o->text = ops_snapshot_text(r->snap);
        if (!o->text)
            rc = ops_fail(e, OPS_EFAIL, "out of memory");
    }
    if (rc == 0) {
        const adbc_ui_reftab *t = adbc_ui_snap_refs(r->snap);
        snprintf(o->id, sizeof o->id, "%s", adbc_ui_snap_id(r->snap));
        const char *front = act && *act ? act : front_package(r->snap);
        snprintf(o->summary, sizeof o->summary, "%s, %zu refs, screen %s",
                 *front ? front : "no app in front", adbc_ui_reftab_count(t), o->id);
        ops_utf8_fix(o->summary);
    }
    adbc_free(act);
    adbc_free(pkg);
    o->ms = ops_now_ms() - t0;
    return rc;
}

/* ---- the prompt ---- */

static void history_add(run *r, const char *line)
{
    char *l = strdup(line);
    if (!l)
        return;
    if (r->nlines == HISTORY_MAX) {
        free(r->lines[r->first_line]);
        r->lines[r->first_line] = l;
        r->first_line = (r->first_line + 1) % HISTORY_MAX;
    } else {
        r->lines[r->nlines++] = l;
    }
}

static char *user_text(run *r, const observation *o, const char *hint, int step)
{
    char *out = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&out, &cap);
    if (!f)
        return NULL;
    fprintf(f, "Goal: %s\n\nStep %d of at most %d.\n\nSteps so far:\n", r->cfg->goal, step,
            r->cfg->max_steps);
    if (!r->nlines)
        fprintf(f, "(none yet)\n");
    for (int i = 0; i < r->nlines; i++)
        fprintf(f, "%s\n", r->lines[(r->first_line + i) % HISTORY_MAX]);
    if (hint && *hint)
        fprintf(f, "\n%s\n", hint);
    fprintf(f, "\nCurrent screen (%s):\n%s", o->summary,
            *o->text ? o->text : "(nothing on the screen: the snapshot is empty)\n");
    if (o->png)
        fprintf(f, "\nThe screenshot shows the same screen with each ref's box and number "
                   "drawn on it.\n");
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- one step's record ---- */

static char *first_text(const cJSON *result)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(result, "content"), *p;
    cJSON_ArrayForEach(p, content)
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "text"));
        if (t)
            return strdup(t);
    }
    return strdup("");
}

/* The act's own snapshot after it ("after:" in the tool's result). */
static int has_after(const cJSON *result)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(result, "content"), *p;
    cJSON_ArrayForEach(p, content)
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "text"));
        if (t && strncmp(t, "after:\n", 7) == 0)
            return 1;
    }
    return 0;
}

typedef struct step_state {
    ops_agent_step s;
    char *args_text;
    char *result;
    char *reasoning;
    char action[64];
    char observation[512];
} step_state;

static void report(run *r, step_state *st)
{
    ops_agent_step *s = &st->s;
    s->args = st->args_text ? st->args_text : "{}";
    s->result = st->result ? st->result : "";
    s->reasoning = st->reasoning ? st->reasoning : "";
    s->action = st->action;
    s->observation = st->observation;
    if (!s->hint)
        s->hint = "";
    r->res->steps = s->index;
    cJSON *rec = ops_agent_step_json(s);
    if (rec) {
        cJSON_AddStringToObject(rec, "type", "action");
        cJSON_AddNumberToObject(rec, "time_ms", agent_wall_ms());
    }
    agent_trace_write(r->trace, rec);
    char line[1024];
    char res_line[400];
    snprintf(res_line, sizeof res_line, "%s", s->result);
    char *nl = strchr(res_line, '\n');
    if (nl)
        *nl = 0;
    snprintf(line, sizeof line, "%d. %s%s %.300s -> %s: %s", s->index,
             s->forced ? "(stuck: pressed by the loop) " : "", *s->action ? s->action : "(none)",
             s->args, s->ok ? "ok" : "failed", res_line);
    ops_utf8_fix(line);
    history_add(r, line);
    if (r->cfg->on_step)
        r->cfg->on_step(r->cfg->on_step_arg, s);
}

static void step_clear(step_state *st)
{
    free(st->args_text);
    free(st->result);
    free(st->reasoning);
}

/* Run a checked call through the tool table. */
static int act(run *r, const char *name, const cJSON *args, step_state *st, int *after)
{
    int64_t t0 = ops_now_ms();
    r->fe.call_ms = r->cfg->step_timeout_ms;
    cJSON *result = NULL;
    ops_err e;
    memset(&e, 0, sizeof e);
    int rc = ops_tools_call(&r->fe, name, args, &result, &e);
    st->s.act_ms = ops_now_ms() - t0;
    if (rc != 0) {
        st->result = strdup(e.msg);
        return -1;
    }
    st->s.ok = e.code == OPS_OK;
    st->result = st->s.ok ? first_text(result) : strdup(e.msg);
    *after = st->s.ok && has_after(result);
    cJSON_Delete(result);
    return st->s.ok ? 0 : -1;
}

static void trace_observation(run *r, int step, const observation *o)
{
    cJSON *rec = agent_rec("observation", step);
    if (!rec)
        return;
    cJSON_AddStringToObject(rec, "screen", o->id);
    cJSON_AddStringToObject(rec, "summary", o->summary);
    cJSON_AddBoolToObject(rec, "reused", o->reused);
    cJSON_AddNumberToObject(rec, "observe_ms", (double)o->ms);
    cJSON_AddStringToObject(rec, "snapshot", o->text);
    if (o->png) {
        char *b64 = ops_base64(o->png, o->png_len);
        if (b64)
            cJSON_AddStringToObject(rec, "screenshot_png_base64", b64);
        free(b64);
    }
    agent_trace_write(r->trace, rec);
}

static void trace_answer(run *r, int step, const ops_llm_reply *rep, const ops_err *e, int rc)
{
    cJSON *rec = agent_rec("answer", step);
    if (!rec)
        return;
    cJSON_AddStringToObject(rec, "fail", ops_llm_fail_name(rep->fail));
    if (rc != 0)
        cJSON_AddStringToObject(rec, "error", e->msg);
    cJSON_AddStringToObject(rec, "text", rep->text ? rep->text : "");
    if (rep->call_name) {
        cJSON_AddStringToObject(rec, "tool", rep->call_name);
        cJSON_AddItemToObject(rec, "args", rep->call_args ? cJSON_Duplicate(rep->call_args, 1)
                                                          : cJSON_CreateObject());
    }
    cJSON_AddNumberToObject(rec, "ncalls", rep->ncalls);
    if (rep->stop)
        cJSON_AddStringToObject(rec, "stop", rep->stop);
    cJSON_AddNumberToObject(rec, "status", rep->status);
    cJSON_AddNumberToObject(rec, "attempts", rep->attempts);
    cJSON_AddNumberToObject(rec, "model_ms", (double)rep->ms);
    cJSON_AddNumberToObject(rec, "tokens_in", (double)rep->turn.tokens_in);
    cJSON_AddNumberToObject(rec, "tokens_out", (double)rep->turn.tokens_out);
    if (rep->raw)
        cJSON_AddStringToObject(rec, "raw", rep->raw);
    agent_trace_write(r->trace, rec);
}

/* Sleep ms, waking early on a cancel. */
static void pause_ms(run *r, int ms)
{
    int64_t until = ops_now_ms() + ms;
    while (!cancelled(r)) {
        int64_t left = until - ops_now_ms();
        if (left <= 0)
            break;
        if (left > 50)
            left = 50;
        struct timespec ts = {0, (long)left * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static const char hint_text[] =
    "Note: the last %d steps failed or left the screen as it was. Do not repeat them: pick "
    "another element, scroll to find what you need, go back, or call done if the goal cannot "
    "be reached.";

/* The loop itself; r->res->end set when it returns. */
static void loop(run *r)
{
    const ops_agent_config *cfg = r->cfg;
    char prev_id[32] = "";
    int stuck = 0, prev_ok = 0, prev_wait = 0, reuse = 0;
    for (int step = 1; step <= cfg->max_steps; step++) {
        int64_t t_step = ops_now_ms();
        if (cancelled(r)) {
            end_with(r, OPS_AGENT_CANCELLED, OPS_OK, "cancelled before step %d: nothing was "
                     "sent to the device after the cancel", step);
            return;
        }
        step_state st;
        memset(&st, 0, sizeof st);
        st.s.index = step;
        observation o;
        memset(&o, 0, sizeof o);
        ops_err e;
        memset(&e, 0, sizeof e);
        if (observe(r, &o, reuse && cfg->step_delay_ms == 0, &e) != 0) {
            observation_free(&o);
            if (cancelled(r))
                end_with(r, OPS_AGENT_CANCELLED, OPS_OK, "cancelled at step %d, before the "
                         "screen was read: nothing was sent to the device after the cancel",
                         step);
            else
                end_with(r, OPS_AGENT_FAILED, e.code, "step %d: reading the screen failed: %s",
                         step, e.msg);
            return;
        }
        snprintf(st.observation, sizeof st.observation, "%s", o.summary);
        st.s.observe_ms = o.ms;
        st.s.screen_changed = step == 1 ? -1 : strcmp(prev_id, o.id) != 0;
        /* Stuck: failed steps count where they fail; an act that left the
         * screen as it was counts here (a wait is allowed to). */
        if (step > 1 && prev_ok) {
            if (st.s.screen_changed)
                stuck = 0;
            else if (!prev_wait)
                stuck++;
        }
        snprintf(prev_id, sizeof prev_id, "%s", o.id);
        trace_observation(r, step, &o);
        char why[512];
        if (r->safety && agent_safety_check(r->safety, r->snap, why, sizeof why)) {
            end_with(r, OPS_AGENT_SAFETY_STOP, OPS_OK, "stopped before step %d: %s. Nothing was "
                     "done on this screen; a person must decide (docs/agent.md, \"Safety\")",
                     step, why);
            observation_free(&o);
            return;
        }
        /* Stuck for back_after steps: the loop presses BACK itself. */
        if (stuck >= cfg->back_after) {
            st.s.forced = 1;
            snprintf(st.action, sizeof st.action, "back");
            st.args_text = strdup("{}");
            int after = 0;
            cJSON *none = cJSON_CreateObject();
            act(r, "back", none, &st, &after);
            cJSON_Delete(none);
            stuck = 0;
            prev_ok = st.s.ok;
            prev_wait = 0;
            reuse = after;
            st.s.total_ms = ops_now_ms() - t_step;
            report(r, &st);
            int was_cancelled = !st.s.ok && cancelled(r);
            step_clear(&st);
            observation_free(&o);
            if (was_cancelled) {
                end_with(r, OPS_AGENT_CANCELLED, OPS_OK, "cancelled at step %d: nothing was "
                         "sent to the device after the cancel", step);
                return;
            }
            pause_ms(r, cfg->step_delay_ms);
            continue;
        }
        char hint[512] = "";
        if (stuck >= cfg->hint_after)
            snprintf(hint, sizeof hint, hint_text, stuck);
        st.s.hint = hint;
        char *text = user_text(r, &o, hint, step);
        if (!text) {
            observation_free(&o);
            end_with(r, OPS_AGENT_FAILED, OPS_EFAIL, "out of memory");
            return;
        }
        cJSON *prec = agent_rec("prompt", step);
        if (prec) {
            cJSON_AddStringToObject(prec, "text", text);
            cJSON_AddStringToObject(prec, "hint", hint);
            cJSON_AddBoolToObject(prec, "image", o.png != NULL);
        }
        agent_trace_write(r->trace, prec);
        ops_llm_msg msg = {.role = OPS_LLM_USER, .text = text, .png = o.png,
                           .png_len = o.png_len};
        ops_llm_conv conv = {.system = agent_system_prompt(), .msgs = &msg, .n = 1};
        ops_llm_reply rep;
        memset(&rep, 0, sizeof rep);
        int64_t t_model = ops_now_ms();
        int arc = ops_llm_ask(cfg->model, &conv, r->tools, &rep, &e);
        st.s.model_ms = ops_now_ms() - t_model;
        free(text);
        observation_free(&o);
        st.s.tokens_in = rep.turn.tokens_in;
        st.s.tokens_out = rep.turn.tokens_out;
        r->res->tokens_in += rep.turn.tokens_in;
        r->res->tokens_out += rep.turn.tokens_out;
        r->res->cost_usd = rep.total.cost_usd;
        trace_answer(r, step, &rep, &e, arc);
        st.reasoning = strdup(rep.text ? rep.text : "");
        if (arc != 0 && rep.fail != OPS_LLM_EREPLY) {
            ops_agent_end end = rep.fail == OPS_LLM_ECANCEL || cancelled(r) ? OPS_AGENT_CANCELLED
                                                                            : OPS_AGENT_FAILED;
            if (end == OPS_AGENT_CANCELLED)
                end_with(r, end, OPS_OK, "cancelled at step %d while the model was asked: "
                         "nothing was sent to the device after the cancel", step);
            else
                end_with(r, end, e.code, "step %d: the model could not be asked (%s): %s", step,
                         ops_llm_fail_name(rep.fail), e.msg);
            ops_llm_reply_free(&rep);
            step_clear(&st);
            return;
        }
        /* Check the call before anything reaches the device. */
        ops_err ce;
        memset(&ce, 0, sizeof ce);
        int ok = arc == 0;
        if (!ok)
            ops_fail(&ce, OPS_EARG, "the model's answer was unusable: %s", e.msg);
        else if (rep.ncalls > 1)
            ok = !ops_fail(&ce, OPS_EARG, "the answer had %d tool calls; nothing was done: "
                           "answer with exactly one", rep.ncalls);
        else
            ok = agent_tool_check(rep.call_name, rep.call_args, r->snap, cfg->allow_shell,
                                  &ce) == 0;
        snprintf(st.action, sizeof st.action, "%s", rep.call_name ? rep.call_name : "");
        ops_utf8_fix(st.action);
        st.args_text = rep.call_args ? cJSON_PrintUnformatted(rep.call_args) : strdup("{}");
        if (ok && strcmp(rep.call_name, "done") == 0) {
            const char *a = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(rep.call_args, "answer"));
            snprintf(r->res->answer, sizeof r->res->answer, "%s", a ? a : "");
            ops_utf8_fix(r->res->answer);
            st.s.ok = 1;
            st.result = strdup("the task is done");
            st.s.total_ms = ops_now_ms() - t_step;
            report(r, &st);
            r->res->end = OPS_AGENT_DONE;
            ops_llm_reply_free(&rep);
            step_clear(&st);
            return;
        }
        int after = 0;
        if (!ok) {
            st.result = strdup(ce.msg);
        } else if (cancelled(r)) {
            st.result = strdup("cancelled: the call was not run");
        } else {
            act(r, rep.call_name, rep.call_args, &st, &after);
        }
        prev_ok = st.s.ok;
        prev_wait = ok && strncmp(rep.call_name, "wait", 4) == 0;
        reuse = after;
        if (!st.s.ok)
            stuck++;
        st.s.total_ms = ops_now_ms() - t_step;
        report(r, &st);
        ops_llm_reply_free(&rep);
        step_clear(&st);
        if (r->act_stopped) {
            end_with(r, OPS_AGENT_SAFETY_STOP, OPS_OK, "stopped at step %d: the screen changed "
                     "before the act, and %s. The act was refused and nothing was sent; a "
                     "person must decide (docs/agent.md, \"Safety\")", step, r->act_why);
            return;
        }
        if (cancelled(r)) {
            end_with(r, OPS_AGENT_CANCELLED, OPS_OK, "cancelled at step %d: nothing was sent "
                     "to the device after the cancel", step);
            return;
        }
        pause_ms(r, cfg->step_delay_ms);
    }
    end_with(r, OPS_AGENT_MAX_STEPS, OPS_OK, "the goal was not reached in %d steps (max_steps): "
             "raise max_steps, or make the goal more precise", cfg->max_steps);
}

static cJSON *task_record(run *r)
{
    const ops_agent_config *c = r->cfg;
    cJSON *rec = agent_rec("task", 0);
    if (!rec)
        return NULL;
    cJSON_AddNumberToObject(rec, "version", 1);
    cJSON_AddStringToObject(rec, "goal", c->goal);
    cJSON_AddStringToObject(rec, "model", ops_llm_describe(c->model));
    cJSON_AddStringToObject(rec, "device", r->shadow.serial);
    cJSON_AddStringToObject(rec, "kind", ops_kind_name(r->kind));
    cJSON_AddNumberToObject(rec, "max_steps", c->max_steps);
    cJSON_AddNumberToObject(rec, "step_delay_ms", c->step_delay_ms);
    cJSON_AddNumberToObject(rec, "hint_after", c->hint_after);
    cJSON_AddNumberToObject(rec, "back_after", c->back_after);
    cJSON_AddBoolToObject(rec, "vision", c->vision);
    cJSON_AddBoolToObject(rec, "allow_shell", c->allow_shell);
    cJSON *pats = cJSON_AddArrayToObject(rec, "patterns");
    if (c->patterns)
        for (size_t i = 0; i < c->npatterns; i++)
            cJSON_AddItemToArray(pats, cJSON_CreateString(c->patterns[i]));
    else
        for (size_t i = 0; ops_agent_safety_default[i]; i++)
            cJSON_AddItemToArray(pats, cJSON_CreateString(ops_agent_safety_default[i]));
    cJSON_AddStringToObject(rec, "system", agent_system_prompt());
    cJSON_AddItemToObject(rec, "tools", cJSON_Duplicate(r->tools, 1));
    return rec;
}

int ops_agent_run(ops_agent_result *res, const ops_agent_config *cfg,
                  const ops_agent_device *dev, ops_err *e)
{
    if (!e)
        return -1;
    memset(e, 0, sizeof *e);
    if (!res || !cfg)
        return ops_fail(e, OPS_EARG, "ops_agent_run: NULL argument");
    memset(res, 0, sizeof *res);
    if (check_config(cfg, dev, e) != 0)
        return -1;
    int64_t t0 = ops_now_ms();
    run *r = calloc(1, sizeof *r);
    if (!r)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    r->cfg = cfg;
    r->d = dev;
    r->res = res;
    atomic_init(&r->own_cancel, 0);
    r->cancel = cfg->cancel ? cfg->cancel : &r->own_cancel;
    r->fe.device = fe_device;
    r->fe.device_done = fe_device_done;
    r->fe.user = r;
    r->fe.allow = agent_tools_allow(cfg->allow_shell);
    r->fe.check = act_check;
    r->fe.call_ms = cfg->step_timeout_ms;
    int rc = -1;
    const char *const *pats = cfg->patterns;
    size_t npats = cfg->npatterns;
    if (!(pats && npats == 0) && agent_safety_init(&r->safety, pats, npats, e) != 0)
        goto out;
    if (!(r->tools = agent_tools_list(cfg->allow_shell, cfg->step_timeout_ms))) {
        ops_fail(e, OPS_EFAIL, "out of memory (the tool table)");
        goto out;
    }
    if (check_device(r, e) != 0)
        goto out;
    if (cfg->trace_path) {
        cJSON *first = task_record(r);
        if (!first) {
            ops_fail(e, OPS_EFAIL, "out of memory");
            goto out;
        }
        if (agent_trace_open(&r->trace, cfg->trace_path, first, e) != 0)
            goto out;
    }
    ops_llm_set_cancel(cfg->model, r->cancel);
    loop(r);
    ops_llm_set_cancel(cfg->model, NULL);
    res->total_ms = ops_now_ms() - t0;
    cJSON *rec = ops_agent_result_json(res);
    if (rec) {
        cJSON_AddStringToObject(rec, "type", "end");
        cJSON_AddNumberToObject(rec, "time_ms", agent_wall_ms());
    }
    agent_trace_write(r->trace, rec);
    if (r->trace && (agent_trace_close(r->trace) != 0) && res->end != OPS_AGENT_FAILED) {
        size_t n = strlen(res->reason);
        snprintf(res->reason + n, sizeof res->reason - n, "%sthe trace file %s is incomplete "
                 "(a write failed: disk full?)", n ? "; " : "", cfg->trace_path);
    }
    r->trace = NULL;
    rc = 0;
out:
    agent_trace_close(r->trace);
    agent_safety_free(r->safety);
    cJSON_Delete(r->tools);
    adbc_ui_snap_free(r->snap);
    for (int i = 0; i < r->nlines; i++)
        free(r->lines[i]);
    free(r);
    return rc;
}
