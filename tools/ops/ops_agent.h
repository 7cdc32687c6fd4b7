/* SPDX-License-Identifier: Apache-2.0 */
/* The agent: a goal in, a ReAct loop over the operation layer's own tools,
 * an end state out. A fourth front end of tools/ops beside adbc-snap,
 * adbc-mcp and adbc-serve, not a copy of any: it observes with the snapshot
 * text (ops_snapshot_text), acts through the tool table every front end
 * serves (ops_tools.h) and its one-dump acts (ops_act_run), and asks a model
 * (ops_llm.h) for exactly one tool call a step.
 *
 * One step:
 *   1. cancel? -> ends cancelled
 *   2. observe: a snapshot (and, with vision, the screenshot with the refs
 *      marked); the safety patterns are checked against the screen's text:
 *      a match ends the task (safety_stop) before the model sees it
 *   3. ask the model: the system prompt, the goal, the steps so far, the
 *      stuck hint when there is one, the current screen; the answer must be
 *      exactly one call of a tool of the agent's table
 *   4. check the call before anything reaches the device: the tool is in
 *      the agent's table, its arguments pass the table's checks, a ref is
 *      in the snapshot just taken. A call that fails a check is a failed
 *      step (the model is told why in the next prompt), never an act
 *   5. cancel? -> ends cancelled (no device action after a cancel)
 *   6. act, record the step (the callback, the trace), wait step_delay_ms
 * Stuck: after hint_after consecutive failed steps, or as many steps that
 * left the screen as it was, the next prompt carries a hint; after
 * back_after the loop presses BACK itself instead of asking the model.
 *
 * Safety (docs/agent.md): the device must be an emulator or on the
 * allowlist (the rule of adbc-mcp, ops_allowed); no shell tool unless
 * allow_shell; the pattern list stops the task on payment, purchase and
 * destructive confirmation screens; the system prompt says the screen's
 * text is data, never instructions, and nothing on the screen widens what
 * the loop accepts (the checks above are the same whatever the model says).
 *
 * Threading: ops_agent_run is synchronous and runs the whole task on the
 * caller's thread; run it on a thread of its own to stay responsive. The
 * only things another thread may touch during a run are the cancel flag
 * (ops_agent_cancel, or storing 1 into *cfg.cancel) and whatever the
 * caller's step callback shares with it (the callback runs on the run's
 * thread, between steps, with no device or lock held). The config, its
 * strings and the model must stay valid and unchanged until the run
 * returns. Several runs may go at once on different devices; two on one
 * device interleave only at the pool's per-call lock (use one per device).
 *
 * Built with cJSON and the model client (libadbc_ops_agent). */
#ifndef ADBC_OPS_AGENT_H
#define ADBC_OPS_AGENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ops_core.h"

#define OPS_AGENT_MAX_STEPS_DEFAULT 15
#define OPS_AGENT_MAX_STEPS_LIMIT 50
#define OPS_AGENT_HINT_AFTER 3
#define OPS_AGENT_BACK_AFTER 5

struct ops_llm; /* ops_llm.h: the model, its endpoint and key */

/* How a task ended. */
typedef enum ops_agent_end {
    OPS_AGENT_RUNNING = 0, /* not ended yet */
    OPS_AGENT_DONE,        /* the model called done: answer holds its answer */
    OPS_AGENT_MAX_STEPS,   /* max_steps were taken without done */
    OPS_AGENT_CANCELLED,   /* the cancel flag was set */
    OPS_AGENT_SAFETY_STOP, /* a safety pattern matched the screen: reason says which and where */
    OPS_AGENT_FAILED       /* an error the loop cannot recover from: reason says which */
} ops_agent_end;

/* "running", "done", "max_steps", "cancelled", "safety_stop", "failed". */
const char *ops_agent_end_name(ops_agent_end end);

/* One step, as the callback and the trace see it. The strings are the
 * loop's, valid during the callback only; none is NULL ("" when empty). */
typedef struct ops_agent_step {
    int index;               /* 1.. */
    const char *observation; /* one line: the activity, how many refs, the screen's id */
    const char *hint;        /* the stuck hint this step's prompt carried, "" none */
    const char *reasoning;   /* the model's text beside its call, "" none */
    const char *action;      /* the tool: "tap", ..., "done"; "" when the answer had none */
    const char *args;        /* its arguments as JSON text ("{}" none) */
    int forced;              /* 1: the loop's own BACK (stuck), the model was not asked */
    int ok;                  /* the call passed the checks and the act succeeded */
    const char *result;      /* what the act did, or why the step failed */
    int screen_changed;      /* this step's screen differs from the previous step's
                                (-1 on the first step) */
    int64_t observe_ms, model_ms, act_ms, total_ms;
    int64_t tokens_in, tokens_out; /* this step's, 0 when the model does not say */
} ops_agent_step;

/* Called after each step (on the run's thread; see Threading). Its return
 * is ignored: to stop, set the cancel flag. */
typedef void (*ops_agent_step_fn)(void *arg, const ops_agent_step *step);

/* The device the task drives. Either a connection the caller holds for the
 * whole run (conn), or a pool device (pool, dev) taken for each
 * observation and each act and given back between them, so other clients
 * of the pool may use the device meanwhile. The run keeps its own latest
 * snapshot (the screen the model was shown, whose refs its acts take): a
 * pool device's latest snapshot, which other clients' refs come from, is
 * left alone. */
typedef struct ops_agent_device {
    adbc_conn *conn;
    ops_pool *pool;
    ops_dev *dev;
    int busy_ms;             /* how long to wait for the pool device's lock; 0: 5000 */
    const char *serial;      /* with conn: the device's name as selected, for the
                                allowlist and messages (an emulator is what the device
                                says, ops_device_kind, never its name); may be NULL */
} ops_agent_device;

typedef struct ops_agent_config {
    const char *goal;        /* required, 1..4000 bytes of UTF-8 */
    struct ops_llm *model;   /* required; for the run its cancel flag is cancel (below),
                                so a cancel abandons a request in flight */
    int max_steps;           /* 1..50; default 15 */
    int step_delay_ms;       /* pause after each act, 0..60000; default 0 */
    int hint_after;          /* consecutive failed or unchanged steps before the hint;
                                1..50, default 3 */
    int back_after;          /* ... before the loop presses BACK itself; hint_after..50,
                                default 5 */
    int vision;              /* 1: send the marked screenshot with each observation */
    int step_timeout_ms;     /* bound of one observation or one act on the device;
                                1..600000, default 30000 */
    /* Safety patterns, checked case-insensitively against every text and
     * content description of the screen: a pattern is a whole word or
     * phrase ("pay" matches "Pay now", not "Display"), or, written "re:RE",
     * a POSIX extended regular expression. NULL: the defaults
     * (ops_agent_safety_default); a list with npatterns 0: none. */
    const char *const *patterns;
    size_t npatterns;
    int allow_shell;         /* offer the shell tool; default 0 */
    /* Physical devices allowed by name (serial or ro.serialno); emulators
     * always are. */
    const char *const *allowlist;
    size_t nallow;
    const char *trace_path;  /* NULL: no trace; else created 0600, never replaced
                                (it must not exist) */
    atomic_int *cancel;      /* may be NULL; set to 1 (from any thread) to cancel */
    ops_agent_step_fn on_step;
    void *on_step_arg;
    /* Lists read from a config file (ops_agent_cfg_value), freed by
     * ops_agent_config_free; patterns and allowlist point at them. */
    char **own_patterns, **own_allow;
    size_t own_npatterns, own_nallow;
} ops_agent_config;

/* Defaults as documented above (no goal, no model). */
void ops_agent_config_init(ops_agent_config *cfg);

/* Set one of the config's numbers by name, from text, with the range
 * checks above: "max_steps", "step_delay_ms", "hint_after", "back_after",
 * "step_timeout_ms", "vision" (on/off, true/false, 1/0). What adbc-snap's
 * /setting and adbc-serve's settings take. 0, or -1 with e (OPS_EARG)
 * naming the key and its range. */
int ops_agent_set(ops_agent_config *cfg, const char *key, const char *value, ops_err *e);
/* The names ops_agent_set takes, NULL-terminated. */
extern const char *const ops_agent_settings[];

/* One key = value of a config file's [agent] table, for a schema callback
 * of the tools' configuration reader (ops_config.h): the settings of
 * ops_agent_set (integers, vision and allow_shell as true/false), and
 * patterns and allowlist, arrays of strings that cfg then owns (an empty
 * patterns array turns the safety stop off). 0, or -1 with "[agent] ..."
 * in err. */
struct ops_cfg_val;
int ops_agent_cfg_value(ops_agent_config *cfg, const char *key, struct ops_cfg_val *v,
                        char *err, size_t errlen);
/* Free the lists a config file gave (the rest of cfg is the caller's). */
void ops_agent_config_free(ops_agent_config *cfg);

/* The default safety patterns, NULL-terminated (docs/agent.md lists them). */
extern const char *const ops_agent_safety_default[];

/* How the task ended. */
typedef struct ops_agent_result {
    ops_agent_end end;
    int steps;               /* steps taken */
    char answer[4096];       /* done: the model's answer (cut at a character boundary) */
    char reason[2048];       /* every end but done: why, in a sentence that says what to do */
    ops_code code;           /* failed: the cause's code (OPS_EDEVICE, OPS_ETIMEOUT, ...) */
    int64_t tokens_in, tokens_out;
    double cost_usd;         /* from the model's prices, 0 when unknown */
    int64_t total_ms;
} ops_agent_result;

/* Run one task to its end (synchronous; see Threading). 0 when it ran (the
 * end state, whatever it is, in *res); -1 with e set when it could not
 * start: a config that fails its checks (OPS_EARG), a device the allowlist
 * refuses (OPS_EARG, saying how to allow it), a trace file that cannot be
 * created. */
int ops_agent_run(ops_agent_result *res, const ops_agent_config *cfg,
                  const ops_agent_device *dev, ops_err *e);

/* The one JSON form of a step and of an end, for every front end (adbc-snap
 * --json, adbc-serve's tasks, the trace): a step is {"step", "observation",
 * "hint", "reasoning", "action", "args" (an object), "forced", "ok",
 * "result", "screen_changed" (absent on the first step), "ms":{"observe",
 * "model", "act", "total"}, "tokens":{"in", "out"}}; an end is {"end",
 * "steps", "answer" (done) or "reason" (else), "tokens_in", "tokens_out",
 * "cost_usd", "total_ms"}. NULL when out of memory. */
cJSON *ops_agent_step_json(const ops_agent_step *step);
cJSON *ops_agent_result_json(const ops_agent_result *res);

/* Set the cancel flag: the run ends cancelled before its next device action
 * (and its model call in flight, if any, is abandoned). Any thread. */
void ops_agent_cancel(atomic_int *flag);

#endif
