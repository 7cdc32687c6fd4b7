/* SPDX-License-Identifier: Apache-2.0 */
/* The tool table: every operation an agent can call, once, for every front
 * end (adbc-mcp's tools/list and tools/call, adbc-serve's /v1/tools, the
 * agent's own tool table). Each tool is a name, a title, a description, the
 * JSON Schema of its arguments, flags, and a handler; the result is MCP's
 * shape, {"content":[{"type":"text","text":..}|{"type":"image",..}],
 * "isError":true when it failed}, which a front end passes on or maps.
 *
 * What stays the front end's: which device a call goes to and whether it
 * may (allowlist, active device, the pool), given as hooks in ops_front.
 * A tool asks for its device with ops_call_device(); the front end's
 * device() finds, checks and locks it; device_done() releases it when the
 * call ends (ops_tools_call calls it whatever the tool did).
 *
 * Arguments are checked before the handler runs: an argument the schema
 * does not name is refused (a misspelt "clear" must not type into a full
 * field), a required one missing is refused; the handler then checks each
 * value. Nothing reaches a device before its arguments are checked.
 *
 * Usage:
 *     ops_tools_init();                         // once, at start
 *     cJSON *l = ops_tools_list(fe.allow);   // [{name, title, description, ...}]
 *     cJSON *res; ops_err e;
 *     if (ops_tools_call(&fe, "tap", args, &res, &e) != 0) -> no such tool (e.msg)
 *     else res is the result; e.code is OPS_OK or the failure's code.
 *
 * Built with cJSON only (libadbc_ops_json). */
#ifndef ADBC_OPS_TOOLS_H
#define ADBC_OPS_TOOLS_H

#include <pthread.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ops_core.h"

/* A tool's flags. READONLY and DESTRUCTIVE are descriptive (MCP's
 * annotations); the others gate: such a tool is listed and callable only
 * when the front end's allow has its flag. */
enum {
    OPS_TOOL_READONLY = 1,     /* changes nothing on the device */
    OPS_TOOL_DESTRUCTIVE = 2,  /* may delete data */
    OPS_TOOL_SHELL = 4,        /* runs a caller's shell command: allowed by the user */
    OPS_TOOL_DEVICES = 8,      /* lists or chooses devices: front ends with those hooks */
    OPS_TOOL_HOSTFILE = 16,    /* reads or writes files on the machine running adbc */
    OPS_TOOL_TERMUX = 32,      /* Termux:API on this phone: when ops_termux_available() */
    OPS_TOOL_SMS = 64,         /* sends an SMS: only when a person allowed it by name */
    OPS_TOOL_CALL = 128,       /* places a phone call: the same */
    OPS_TOOL_CALLBOUND = 256,  /* descriptive: its timeout_ms must leave OPS_TOOL_ANSWER_MS of
                                  the call, so its schema's maximum is call_ms less that */
    OPS_TOOL_KEYS = 512,       /* press may send keys that act by themselves (CALL, ENDCALL,
                                  POWER, SLEEP, CAMERA, ASSIST, ...): allowed by name,
                                  "system_keys"; without it press takes ops_key_plain's */
    OPS_TOOL_OPENWORLD = 1024, /* descriptive: reaches past the device, to the web or to
                                  other people (MCP's openWorldHint) */
};
/* What a wait leaves of its call to answer in (ops_wait_run's margin). */
#define OPS_TOOL_ANSWER_MS 500
/* The gating flags (a tool with one of these needs it in allow). */
#define OPS_TOOL_GATES (OPS_TOOL_SHELL | OPS_TOOL_DEVICES | OPS_TOOL_HOSTFILE | OPS_TOOL_TERMUX | \
                        OPS_TOOL_SMS | OPS_TOOL_CALL | OPS_TOOL_KEYS)

/* The gate of an opt-in tool named name ("termux_sms_send": OPS_TOOL_SMS,
 * "termux_call": OPS_TOOL_CALL, "system_keys": OPS_TOOL_KEYS), or what the
 * intent tool may start beyond its policy ("intent_call", "intent_sms",
 * "intent_any": OPS_ALLOW_INTENT_* of ops_core.h, above these flags); 0 for
 * any other name: how a front end turns the names a person allowed into
 * allow bits. */
unsigned ops_tools_optin(const char *name);

/* 1 when the key code is one press sends without "system_keys": navigation
 * (back, home, the d-pad, menu, page and caret moves, recents), editing
 * (digits, letters, punctuation, enter, delete, tab, space, the numeric
 * pad, cut, copy, paste) and media (play, pause, volume). Every other code,
 * a bare number included, is a key that acts by itself (CALL, ENDCALL,
 * POWER, SLEEP, CAMERA, ASSIST, app launchers, ...) or one adbc does not
 * know. */
int ops_key_plain(int code);

typedef struct ops_call ops_call;

/* What a front end gives the table. */
typedef struct ops_front {
    /* Find, check and lock the device for c: set c->dev (a locked ops_dev of
     * the front end's pool) and return 0, or fail c (ops_call_fail) and
     * return -1. Required. */
    int (*device)(ops_call *c);
    /* Release c->dev (c->code says whether the call failed and how); set
     * c->dev to NULL. Required. */
    void (*device_done)(ops_call *c);
    /* The devices, as text (OPS_TOOL_DEVICES). */
    int (*list_devices)(ops_call *c);
    /* Choose serial as the device of the next calls (OPS_TOOL_DEVICES). */
    int (*select_device)(ops_call *c, const char *serial);
    /* One line for the front end's log (a shell command run); may be NULL. */
    void (*log)(void *user, const char *line);
    void *user;                /* the front end's, for its hooks */
    unsigned allow;            /* the gating flags allowed (OPS_TOOL_GATES) */
    int call_ms;               /* bound of one call */
    int settle_ms;             /* pause after an act before the snapshot it returns */
    const char *shot_dir;      /* screenshots and recordings are written here; NULL: none
                                  (a recording then stays on the device) */
    const char *const *uninstall; /* packages uninstall_app may remove (NULL-terminated);
                                     NULL: none */
    /* The front end's check of every dump an act takes before its input
     * (ops_ctx.check); NULL: none. */
    int (*check)(void *user, const adbc_ui_snap *snap, const adbc_ui_ref *at, char *why,
                 size_t cap);
} ops_front;

/* Stopping a running call from another thread (a client that gave up on
 * it: MCP's notifications/cancelled). Firing it interrupts the connection
 * of the device the call holds (adbc_conn_interrupt: what it waits on
 * returns ADBC_ECANCELED at once, so a wait stops polling), or, before the
 * call has its device, makes taking it fail; the interrupt is cleared
 * before the device is released, so the next call finds it as it was. */
typedef struct ops_cancel {
    pthread_mutex_t lock;
    int fired;
    adbc_conn *conn;           /* the held device's connection, while the call holds it */
} ops_cancel;
void ops_cancel_init(ops_cancel *k);
void ops_cancel_destroy(ops_cancel *k);
/* From any thread; idempotent. */
void ops_cancel_fire(ops_cancel *k);
int ops_cancel_fired(ops_cancel *k);

/* One call being served. */
struct ops_call {
    const ops_front *fe;
    cJSON *content;            /* the result's content array */
    int is_error;
    ops_err err;               /* the failure: code (OPS_OK while none) and message */
    int64_t deadline;          /* monotonic ms */
    ops_dev *dev;              /* the device, locked, once ops_call_device succeeded */
    ops_cancel *cancel;        /* NULL: the call cannot be cancelled */
};

/* Parse every schema once: 0, or -1 when one is broken (a build defect). */
int ops_tools_init(void);
void ops_tools_free(void);

/* The tools allow lets through, in the table's order: a JSON array of
 * {name, title, description, inputSchema, annotations{readOnlyHint,
 * destructiveHint, openWorldHint}}. call_ms: the front end's bound of one
 * call (ops_front.call_ms), which a wait's timeout_ms must stay under by
 * OPS_TOOL_ANSWER_MS: the schema says so (its maximum); 0 leaves it out.
 * NULL when out of memory. */
cJSON *ops_tools_list(unsigned allow, int call_ms);

/* Run the tool name (one fe->allow lets through) with args (a JSON object,
 * or NULL for none). -1 with e (OPS_ENOMATCH) when there is no such tool,
 * (OPS_EARG) when fe lacks a required hook or args is not an object,
 * (OPS_EFAIL) out of memory. Else 0 with *result (cJSON_Delete it) and e
 * the outcome: e->code OPS_OK, or the failure's code and e->msg its
 * message (also in the result's content, with isError). */
int ops_tools_call(const ops_front *fe, const char *name, const cJSON *args, cJSON **result,
                   ops_err *e);
/* The same, stopped early when cancel (NULL: never) is fired. */
int ops_tools_call_cancel(const ops_front *fe, const char *name, const cJSON *args,
                          ops_cancel *cancel, cJSON **result, ops_err *e);

/* The text parts of a result joined with newlines (images left out).
 * malloc'd; NULL when out of memory. */
char *ops_tools_text(const cJSON *result);

/* ---- for handlers and front-end hooks (ops_tool_result.c) ---- */
void ops_call_text(ops_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ops_call_text_raw(ops_call *c, const char *text);
/* Add an image part (data base64-encoded, of type mime). 0, or -1 failing c. */
int ops_call_image(ops_call *c, const void *data, size_t n, const char *mime);
/* Fail the call with code and the message (also added as text). -1. */
int ops_call_fail(ops_call *c, ops_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ops_call_err(ops_call *c, const ops_err *e);
/* Fail with adbc's last error for rc ("WHAT failed: ... (next step)"). */
int ops_call_adbc(ops_call *c, int rc, const char *what);
int ops_call_remaining(const ops_call *c); /* ms left, 1..600000 */
/* The call's device, through the front end's hook (idempotent). */
int ops_call_device(ops_call *c);
void ops_call_log(ops_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
