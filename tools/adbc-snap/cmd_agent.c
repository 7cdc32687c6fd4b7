/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap agent: one task of the agent (tools/ops/ops_agent.h) on the
 * selected device, each step printed as it happens, or an interactive
 * session of tasks typed as lines (AgentBlue's /stop, /model, /setting,
 * /help). The loop, its checks and its safety stops are tools/ops'; this
 * file parses options, builds the model and prints. */
#include "snap.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef ADBC_HAVE_AGENT
#include <cjson/cJSON.h>

#include "agent_print.h"
#include "ops_agent.h"
#include "ops_config.h"
#include "ops_llm.h"
#include "ops_tools.h"
#endif

static int cmd_agent(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_agent[] = {
    {"agent", cmd_agent,
     "agent [--model NAME] [--max-steps N] [--step-delay MS] [--json] [--trace FILE] [--config FILE] [--serve URL --token-file F] [GOAL]",
     "let a language model reach GOAL on the device, step by step (docs/agent.md)"},
    {NULL, NULL, NULL, NULL},
};

#ifndef ADBC_HAVE_AGENT
static int cmd_agent(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    (void)argc;
    (void)argv;
    return snap_error(SNAP_EXIT_FAIL, "agent", "this adbc-snap was built without the agent (it "
                      "needs libcurl and libcjson: see docs/build.md)");
}
#else

#define MAX_ALLOW 32
#define MAX_MODEL_OPTS 16

typedef struct agent_opts {
    const char *goal;
    const char *config;      /* --config FILE */
    const char *serve, *token_file; /* --serve URL --token-file F: a remote task */
    int steps_given, delay_given, local_only; /* options given that only a local run takes */
    ops_llm_cfg base;        /* the config file's [model] */
    const char **allow_all;  /* the file's allowlist and --allow's */
    int json;
    const char *trace;
    const char *allow[MAX_ALLOW];
    size_t nallow;
    /* model settings, in order, as ops_llm_cfg_set keys */
    const char *mkey[MAX_MODEL_OPTS], *mval[MAX_MODEL_OPTS];
    char *mown[MAX_MODEL_OPTS]; /* values this file allocated (/model) */
    int nm;
    ops_agent_config cfg;
} agent_opts;

static const char *const llm_opts[][2] = {
    {"--model", "model"},       {"--provider", "provider"}, {"--base-url", "base_url"},
    {"--api-key-env", "api_key_env"}, {"--api-key-file", "api_key_file"},
    {"--model-timeout", "timeout_ms"}, {"--budget-tokens", "budget_tokens"},
    {"--budget-usd", "budget_usd"}, {"--max-tokens", "max_tokens"}, {NULL, NULL}};

static const char *const agent_opts_n[][2] = {
    {"--max-steps", "max_steps"}, {"--step-delay", "step_delay_ms"},
    {"--hint-after", "hint_after"}, {"--back-after", "back_after"}, {NULL, NULL}};

static int parse(agent_opts *o, int argc, char **argv)
{
    const snap_cmd *me = &snap_cmds_agent[0];
    ops_err e;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc)
                o->goal = argv[++i];
            if (i + 1 < argc)
                return snap_usage(me, "give the goal as one argument (quote it)");
            break;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--vision") == 0) {
            o->cfg.vision = 1;
            o->local_only = 1;
            continue;
        }
        if (strcmp(a, "--allow-shell") == 0) {
            o->cfg.allow_shell = 1;
            o->local_only = 1;
            continue;
        }
        if (strcmp(a, "--serve") == 0 || strcmp(a, "--token-file") == 0) {
            if (i + 1 >= argc)
                return snap_usage(me, "an option needs a value");
            *(a[2] == 's' ? &o->serve : &o->token_file) = argv[++i];
            continue;
        }
        int done = 0;
        for (int k = 0; llm_opts[k][0] && !done; k++)
            if (strcmp(a, llm_opts[k][0]) == 0) {
                if (i + 1 >= argc)
                    return snap_usage(me, "an option needs a value");
                if (o->nm == MAX_MODEL_OPTS)
                    return snap_usage(me, "too many model options");
                o->mkey[o->nm] = llm_opts[k][1];
                o->mval[o->nm++] = argv[++i];
                o->local_only |= k > 0; /* all but --model */
                done = 1;
            }
        for (int k = 0; agent_opts_n[k][0] && !done; k++)
            if (strcmp(a, agent_opts_n[k][0]) == 0) {
                if (i + 1 >= argc)
                    return snap_usage(me, "an option needs a value");
                if (ops_agent_set(&o->cfg, agent_opts_n[k][1], argv[++i], &e) != 0)
                    return snap_usage(me, e.msg);
                o->steps_given |= k == 0;
                o->delay_given |= k == 1;
                o->local_only |= k > 1;
                done = 1;
            }
        if (done)
            continue;
        if (strcmp(a, "--config") == 0) {
            i++; /* read before the rest (load_config) */
            continue;
        }
        if (strcmp(a, "--trace") == 0 || strcmp(a, "--allow") == 0) {
            if (i + 1 >= argc)
                return snap_usage(me, "an option needs a value");
            o->local_only = 1;
            if (a[2] == 't') {
                o->trace = argv[++i];
            } else {
                if (o->nallow == MAX_ALLOW)
                    return snap_usage(me, "at most 32 --allow");
                o->allow[o->nallow++] = argv[++i];
            }
            continue;
        }
        if (a[0] == '-' && a[1])
            return snap_usage(me, "unknown option (see adbc-snap help agent)");
        if (o->goal)
            return snap_usage(me, "give the goal as one argument (quote it)");
        o->goal = a;
    }
    return 0;
}

/* The config file: --config FILE, else $XDG_CONFIG_HOME/adbc/agent.toml
 * (~/.config/adbc/agent.toml) when it exists. [model] as ops_llm_cfg_value
 * reads it, [agent] as ops_agent_cfg_value does (docs/agent.md). */
static int config_key(void *ud, const char *table, const char *key, ops_cfg_val *v, char *err,
                      size_t errlen)
{
    agent_opts *o = ud;
    if (strcmp(table, "model") == 0)
        return ops_llm_cfg_value(&o->base, key, v, err, errlen);
    return ops_agent_cfg_value(&o->cfg, key, v, err, errlen);
}

static int load_config(agent_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc)
                return snap_usage(&snap_cmds_agent[0], "--config needs a file");
            o->config = argv[i + 1];
        }
    }
    char *dflt = o->config ? NULL : ops_cfg_path("agent.toml");
    const char *path = o->config ? o->config : dflt;
    static const char *const tables[] = {"model", "agent", NULL};
    ops_cfg_schema schema = {.tables = tables, .key = config_key, .ud = o};
    char err[1024];
    int rc = path ? ops_cfg_load(path, o->config != NULL, &schema, err, sizeof err) : 0;
    free(dflt);
    if (rc != 0)
        return snap_error(SNAP_EXIT_USAGE, "agent", "%s", err);
    return 0;
}

/* The model: the command line's settings over the config file's, over the
 * environment's. */
static int make_model(ops_llm **m, const agent_opts *o)
{
    ops_llm_cfg c = o->base;
    ops_err e;
    for (int i = 0; i < o->nm; i++)
        if (ops_llm_cfg_set(&c, o->mkey[i], o->mval[i], "command line", &e) != 0)
            goto bad;
    if (ops_llm_cfg_resolve(&c, &e) != 0 || ops_llm_new(m, &c, &e) != 0)
        goto bad;
    ops_llm_cfg_wipe(&c);
    return 0;
bad:
    ops_llm_cfg_wipe(&c);
    return snap_error(SNAP_EXIT_USAGE, "agent", "%s", e.msg);
}

/* ---- printing a step ----
 *
 * Everything in a step and an end but the counts comes from the model or
 * the device (the tool name, its arguments, the reasoning, the result, the
 * answer), so all of it goes through snap_text_safe before it reaches the
 * terminal, tty or not: no control character or escape sequence the model
 * wrote can move the cursor, erase earlier steps or set the clipboard. */

static void print_text_field(const char *label, const char *s)
{
    char buf[4096];
    printf("  %s: %s\n", label, snap_text_safe(s, buf, sizeof buf));
}

/* One JSON line on stdout (the JSON stream of --json). cJSON escapes C0
 * controls; C1 controls (U+0080..U+009F, C2 80..C2 9F) are escaped here
 * too (\u0080..\u009f, the same JSON string), so a terminal showing the
 * stream gets no control at all. */
static void print_json(const cJSON *o)
{
    char *line = cJSON_PrintUnformatted(o);
    if (line) {
        for (const unsigned char *p = (const unsigned char *)line; *p; p++) {
            if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) {
                printf("\\u00%02x", p[1]);
                p++;
            } else {
                putchar(*p);
            }
        }
        putchar('\n');
    }
    free(line);
    snap_json_mark();
}

void agent_print_step(void *arg, const ops_agent_step *s)
{
    printer *p = arg;
    pthread_mutex_lock(&p->mu);
    if (p->json) {
        cJSON *o = ops_agent_step_json(s);
        if (o && cJSON_AddStringToObject(o, "type", "step"))
            print_json(o);
        cJSON_Delete(o);
    } else {
        char action[128], args[512], obs[600];
        printf("step %d: %s%s %s -> %s\n", s->index, s->forced ? "(stuck) " : "",
               *s->action ? snap_text_safe(s->action, action, sizeof action) : "(no action)",
               snap_text_safe(s->args, args, sizeof args), s->ok ? "ok" : "FAILED");
        printf("  screen: %s\n", snap_text_safe(s->observation, obs, sizeof obs));
        if (*s->hint)
            print_text_field("hint", s->hint);
        if (*s->reasoning)
            print_text_field("why", s->reasoning);
        if (*s->result)
            print_text_field(s->ok ? "did" : "error", s->result);
        printf("  time: observe %lld ms, model %lld ms, act %lld ms, step %lld ms; tokens %lld "
               "in, %lld out\n", (long long)s->observe_ms, (long long)s->model_ms,
               (long long)s->act_ms, (long long)s->total_ms, (long long)s->tokens_in,
               (long long)s->tokens_out);
    }
    fflush(stdout);
    pthread_mutex_unlock(&p->mu);
}

/* The end: a JSON line or text; the exit status. */
int agent_print_end(printer *p, const ops_agent_result *r)
{
    int st = r->end == OPS_AGENT_DONE        ? 0
             : r->end == OPS_AGENT_MAX_STEPS   ? AGENT_EXIT_MAX_STEPS
             : r->end == OPS_AGENT_SAFETY_STOP ? AGENT_EXIT_SAFETY
             : r->end == OPS_AGENT_CANCELLED   ? AGENT_EXIT_CANCELLED
                                               : AGENT_EXIT_FAILED;
    pthread_mutex_lock(&p->mu);
    if (p->json) {
        cJSON *o = ops_agent_result_json(r);
        if (o && cJSON_AddStringToObject(o, "type", "end") &&
            cJSON_AddNumberToObject(o, "exit_status", st))
            print_json(o);
        cJSON_Delete(o);
    }
    char buf[4096];
    if (r->end == OPS_AGENT_DONE) {
        if (!p->json)
            printf("done in %d steps (%lld ms, %lld tokens): %s\n", r->steps,
                   (long long)r->total_ms, (long long)(r->tokens_in + r->tokens_out),
                   snap_text_safe(r->answer, buf, sizeof buf));
    } else {
        fprintf(stderr, "adbc-snap: agent: %s after %d steps: %s\n", ops_agent_end_name(r->end),
                r->steps, snap_text_safe(r->reason, buf, sizeof buf));
    }
    fflush(stdout);
    pthread_mutex_unlock(&p->mu);
    return st;
}

static int run_one(agent_opts *o, printer *p, adbc_conn *conn, const char *serial)
{
    ops_agent_device dev = {.conn = conn, .serial = serial};
    ops_agent_result res;
    ops_err e;
    if (ops_agent_run(&res, &o->cfg, &dev, &e) != 0) {
        pthread_mutex_lock(&p->mu);
        int st = snap_error(e.code == OPS_EARG ? SNAP_EXIT_USAGE : SNAP_EXIT_FAIL, "agent", "%s",
                            e.msg);
        pthread_mutex_unlock(&p->mu);
        return st;
    }
    return agent_print_end(p, &res);
}

/* ---- interactive ---- */

typedef struct session {
    agent_opts *o;
    printer *p;
    adbc_conn *conn;
    const char *serial;
    char goal[4097];
    pthread_t th;
    int running;       /* a task thread exists (joined before the next) */
    atomic_int done;   /* it has ended */
} session;

static void *task_main(void *arg)
{
    session *s = arg;
    run_one(s->o, s->p, s->conn, s->serial);
    atomic_store(&s->done, 1);
    return NULL;
}

static void join_task(session *s)
{
    if (s->running) {
        pthread_join(s->th, NULL);
        s->running = 0;
    }
}

static void say(session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->p->mu);
    vprintf(fmt, ap);
    fflush(stdout);
    pthread_mutex_unlock(&s->p->mu);
    va_end(ap);
}

static const char interactive_help[] =
    "Type a goal to start a task; while it runs:\n"
    "  /stop                 cancel the task (nothing more reaches the device)\n"
    "  /model NAME           the model for the next tasks\n"
    "  /setting KEY VALUE    max_steps, step_delay_ms, hint_after, back_after,\n"
    "                        step_timeout_ms, vision (on/off)\n"
    "  /help                 this text\n"
    "End with Ctrl-D (Ctrl-C cancels a running task and exits).\n";

static int interactive(agent_opts *o, printer *p, adbc_conn *conn, const char *serial,
                       ops_llm **model)
{
    session s = {.o = o, .p = p, .conn = conn, .serial = serial};
    atomic_int cancel;
    atomic_init(&cancel, 0);
    o->cfg.cancel = &cancel;
    snap_signals_flag(&cancel);
    say(&s, "adbc-snap agent: %s on %s. /help for the commands.\n", ops_llm_describe(*model),
        serial ? serial : "the device");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (s.running && atomic_load(&s.done))
            join_task(&s);
        if (!n)
            continue;
        if (strcmp(line, "/help") == 0) {
            say(&s, "%s", interactive_help);
        } else if (strcmp(line, "/stop") == 0) {
            if (!s.running) {
                say(&s, "no task is running\n");
                continue;
            }
            ops_agent_cancel(&cancel);
            join_task(&s);
        } else if (strncmp(line, "/model", 6) == 0 && (line[6] == ' ' || !line[6])) {
            const char *name = line + 6;
            while (*name == ' ')
                name++;
            if (s.running) {
                say(&s, "a task is running: /stop it first\n");
                continue;
            }
            if (!*name) {
                say(&s, "model: %s\n", ops_llm_describe(*model));
                continue;
            }
            if (o->nm == MAX_MODEL_OPTS) {
                say(&s, "too many model changes: restart adbc-snap agent\n");
                continue;
            }
            char *keep = strdup(name);
            if (!keep)
                continue;
            o->mkey[o->nm] = "model";
            o->mown[o->nm] = keep;
            o->mval[o->nm++] = keep;
            ops_llm *m = NULL;
            if (make_model(&m, o) != 0) {
                o->mown[--o->nm] = NULL;
                free(keep);
                continue;
            }
            ops_llm_free(*model);
            *model = m;
            o->cfg.model = m;
            say(&s, "model: %s\n", ops_llm_describe(m));
        } else if (strncmp(line, "/setting", 8) == 0 && (line[8] == ' ' || !line[8])) {
            char key[64] = "", val[64] = "";
            if (sscanf(line + 8, " %63s %63s", key, val) != 2) {
                say(&s, "usage: /setting KEY VALUE (KEY: max_steps, step_delay_ms, "
                        "hint_after, back_after, step_timeout_ms, vision)\n");
                continue;
            }
            if (s.running) {
                say(&s, "a task is running: settings apply to the next; /stop it first\n");
                continue;
            }
            ops_err e;
            if (ops_agent_set(&o->cfg, key, val, &e) != 0)
                say(&s, "%s\n", e.msg);
            else
                say(&s, "%s = %s\n", key, val);
        } else if (line[0] == '/') {
            say(&s, "unknown command %.40s: /help lists them\n", line);
        } else if (s.running) {
            say(&s, "a task is running: /stop it first, or wait for its end\n");
        } else if ((size_t)n >= sizeof s.goal) {
            say(&s, "the goal is longer than %zu bytes\n", sizeof s.goal - 1);
        } else {
            memcpy(s.goal, line, (size_t)n + 1);
            o->cfg.goal = s.goal;
            atomic_store(&cancel, 0);
            atomic_store(&s.done, 0);
            o->trace = NULL; /* a trace file names one task */
            o->cfg.trace_path = NULL;
            if (pthread_create(&s.th, NULL, task_main, &s) != 0)
                say(&s, "cannot start the task (out of threads)\n");
            else
                s.running = 1;
        }
    }
    free(line);
    if (s.running)
        join_task(&s); /* end of input: let the task finish */
    snap_signals_flag(NULL);
    return snap_signal_received() ? 128 + snap_signal_received() : 0;
}

/* --serve: the task runs on a remote adbc-serve (agent_remote.c). */
static int remote(agent_opts *o)
{
    const snap_cmd *me = &snap_cmds_agent[0];
    int st = 0;
    if (!o->goal)
        st = snap_usage(me, "--serve needs a GOAL (interactive mode is local only)");
    else if (o->local_only)
        st = snap_usage(me, "with --serve only --model, --max-steps, --step-delay and --json "
                            "apply (the server's settings do the rest)");
    const char *model = NULL;
    for (int i = 0; i < o->nm; i++)
        if (strcmp(o->mkey[i], "model") == 0)
            model = o->mval[i];
    printer p = {.json = o->json};
    pthread_mutex_init(&p.mu, NULL);
    atomic_int cancel;
    atomic_init(&cancel, 0);
    if (!st) {
        agent_remote_opts ro = {.url = o->serve, .token_file = o->token_file, .goal = o->goal,
                                .model = model, .cancel = &cancel, .p = &p,
                                .max_steps = o->steps_given ? o->cfg.max_steps : -1,
                                .step_delay_ms = o->delay_given ? o->cfg.step_delay_ms : -1};
        snap_signals_flag(&cancel);
        st = agent_remote(&ro);
        snap_signals_flag(NULL);
    }
    pthread_mutex_destroy(&p.mu);
    ops_llm_cfg_wipe(&o->base);
    ops_agent_config_free(&o->cfg);
    free(o->allow_all);
    return st;
}

static int cmd_agent(snap_ctx *ctx, int argc, char **argv)
{
    static agent_opts o;
    memset(&o, 0, sizeof o);
    ops_agent_config_init(&o.cfg);
    ops_llm_cfg_init(&o.base);
    int st = load_config(&o, argc, argv);
    if (!st)
        st = parse(&o, argc, argv);
    if (!st && o.nallow) { /* --allow adds to the file's allowlist */
        o.allow_all = calloc(o.cfg.nallow + o.nallow, sizeof *o.allow_all);
        if (!o.allow_all) {
            st = snap_error(SNAP_EXIT_FAIL, "agent", "out of memory");
        } else {
            for (size_t i = 0; i < o.cfg.nallow; i++)
                o.allow_all[i] = o.cfg.allowlist[i];
            for (size_t i = 0; i < o.nallow; i++)
                o.allow_all[o.cfg.nallow + i] = o.allow[i];
            o.cfg.allowlist = o.allow_all;
            o.cfg.nallow += o.nallow;
        }
    }
    if (st) {
        ops_llm_cfg_wipe(&o.base);
        ops_agent_config_free(&o.cfg);
        free(o.allow_all);
        return st;
    }
    if (o.serve)
        return remote(&o);
    int tty = isatty(0);
    if (!o.goal && !tty)
        return snap_usage(&snap_cmds_agent[0], "give a GOAL (interactive mode needs a "
                                               "terminal on stdin)");
    if (ops_tools_init() != 0)
        return snap_error(SNAP_EXIT_FAIL, "agent", "internal: the tool table is broken");
    ops_llm *model = NULL;
    if ((st = make_model(&model, &o)) != 0) {
        ops_tools_free();
        ops_llm_cfg_wipe(&o.base);
        ops_agent_config_free(&o.cfg);
        free(o.allow_all);
        return st;
    }
    o.cfg.model = model;
    o.cfg.trace_path = o.trace;
    if (ctx->timeout_set)
        o.cfg.step_timeout_ms = ctx->timeout_ms;
    printer p = {.json = o.json};
    pthread_mutex_init(&p.mu, NULL);
    o.cfg.on_step = agent_print_step;
    o.cfg.on_step_arg = &p;
    adbc_conn *conn = NULL;
    int rc = snap_connect(ctx, &conn);
    if (rc < 0) {
        st = SNAP_EXIT_FAIL;
    } else if (o.goal) {
        atomic_int cancel;
        atomic_init(&cancel, 0);
        o.cfg.cancel = &cancel;
        o.cfg.goal = o.goal;
        snap_signals_flag(&cancel);
        st = run_one(&o, &p, conn, ctx->target ? ctx->target : ctx->serial);
        snap_signals_flag(NULL);
    } else {
        st = interactive(&o, &p, conn, ctx->target ? ctx->target : ctx->serial, &model);
    }
    for (int i = 0; i < o.nm; i++)
        free(o.mown[i]);
    ops_llm_free(model);
    ops_tools_free();
    ops_llm_cfg_wipe(&o.base);
    ops_agent_config_free(&o.cfg);
    free(o.allow_all);
    pthread_mutex_destroy(&p.mu);
    return st;
}
#endif
