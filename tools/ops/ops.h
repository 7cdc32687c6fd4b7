/* SPDX-License-Identifier: Apache-2.0 */
/* The operations an agent performs on a device, written once for every
 * front end (adbc-mcp over MCP, adbc-serve over HTTP, adbc-snap's
 * selectors): what tap, type, press, swipe, scroll, long_press, back, home,
 * observe and the app calls mean, how their arguments are checked, and what
 * their errors are.
 *
 * An operation is parsed from a JSON object first (every argument checked,
 * nothing sent), then run on a connection with the device's latest snapshot
 * (its ref table). Failures carry a code a front end maps to its own form
 * (an MCP tool error, an HTTP status) and a message saying what to do. */
#ifndef ADBC_OPS_H
#define ADBC_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "adbc/act.h"
#include "adbc/conn.h"
#include "adbc/ui.h"
#include "ops_base.h"

/* ---- arguments (ops_args.c): each check names the argument ---- */
/* ---- JSON requests (ops_json.c) ---- */
/* Parse text[0..len) as one JSON value followed by blanks only. Refused
 * (OPS_EARG, with the byte offset): bytes that are not UTF-8, a NUL byte,
 * "\u0000" in a string (cJSON would cut the string there), a key twice
 * in one object. 0 with *out (cJSON_Delete it) or -1 with e filled. */
int ops_json_parse(ops_err *e, const char *text, size_t len, cJSON **out);

int ops_arg_str(ops_err *e, const cJSON *args, const char *name, int required, size_t maxlen,
                const char **out);
int ops_arg_int(ops_err *e, const cJSON *args, const char *name, int required, int lo, int hi,
                int *out);
int ops_arg_bool(ops_err *e, const cJSON *args, const char *name, int *out);
/* Android package / permission names: [A-Za-z][A-Za-z0-9_.]*. */
int ops_arg_name(ops_err *e, const cJSON *args, const char *name, int required,
                 const char **out);
/* Refuse any member of args not in names (NULL-terminated). */
int ops_arg_only(ops_err *e, const cJSON *args, const char *const *names);

/* ---- selectors (ops_select.c; ops_base.h) ---- */
/* Read {"id":..,"text":..,"desc":..} (also "resource_id"); at least one. */
int ops_sel_parse(ops_sel *sel, const cJSON *obj, ops_err *e);

/* ---- acts (ops_act.c) ---- */
typedef enum ops_action {
    OPS_TAP = 0, OPS_TYPE, OPS_PRESS, OPS_SWIPE, OPS_SCROLL, OPS_LONG_PRESS, OPS_BACK, OPS_HOME
} ops_action;

typedef struct ops_act {
    ops_action action;
    int ref;               /* 0: none */
    int has_sel;
    ops_sel sel;
    int has_xy, x, y;      /* tap at a point */
    const char *cell;      /* tap a grid cell */
    const char *text;      /* type */
    int clear;
    int key;               /* press */
    const char *key_name;
    int x1, y1, x2, y2;    /* swipe */
    int ms;                /* swipe, long_press duration */
    adbc_dir dir;          /* scroll */
    const char *dir_name;
    const char *snapshot;  /* the snapshot id the ref was read from, when given */
} ops_act;

/* The action names accepted: tap type press swipe scroll long_press back home. */
int ops_action_parse(ops_action *a, const char *name);
const char *ops_action_name(ops_action a);

/* Check an act's arguments (args: the act's JSON object; "action" itself
 * and, when extra_ok, members the front end reads are not refused). */
int ops_act_parse(ops_act *a, ops_action action, const cJSON *args, ops_err *e);

/* One act on a device. last: the device's latest snapshot (refs are read
 * from it; a selector takes a fresh snapshot and stores it there). */
typedef struct ops_ctx {
    adbc_conn *conn;
    adbc_ui_snap **last;
    int64_t deadline;        /* monotonic ms */
    ops_err err;
    char done[512];          /* what was done, one line */
    adbc_act_where where;    /* where a tap/press on an element went */
    int acted_ref;           /* the ref acted on (0 for points and keys) */
} ops_ctx;

void ops_ctx_init(ops_ctx *c, adbc_conn *conn, adbc_ui_snap **last, int64_t deadline);
int ops_remaining(const ops_ctx *c); /* ms left, 1..600000 */
void ops_act_opts(const ops_ctx *c, adbc_act_opts *o, adbc_ui_opts *uo);

/* The latest snapshot's record of ref, or OPS_ENOREF saying which refs
 * there are. */
const adbc_ui_ref *ops_ref(ops_ctx *c, int ref);

int ops_act_run(ops_ctx *c, const ops_act *a);

/* ---- observing (ops_observe.c) ---- */
/* Take a snapshot and keep it as the latest. */
int ops_snapshot(ops_ctx *c);
/* The text exactly as `adbc-snap snapshot` prints it: the snapshot and a
 * newline, or nothing for an empty screen. malloc'd. */
char *ops_snapshot_text(const adbc_ui_snap *s);
/* The refs of s as a JSON array: ref, role class, text, desc, id, states,
 * bounds [x1,y1,x2,y2], tap point [x,y]. */
cJSON *ops_refs_json(const adbc_ui_snap *s);
/* {"top":{"activity","package"},"snapshot":TEXT,"snapshot_id","refs":[...]}
 * from a fresh snapshot and the resumed activity, taken under one lock by the
 * caller (the observation is one moment of the device). */
int ops_observe(ops_ctx *c, cJSON **out);

/* ---- finding (ops_find.c) ---- */
/* {text, desc, resource_id, class, contains, ignore_case}: at least one of
 * the first four. */
int ops_find_parse(adbc_ui_selector *sel, const cJSON *a, ops_err *e);
/* A fresh snapshot (kept as the latest) and the elements matching sel, as
 * text: "N matches in screen ID:" then "[ref=N] Class "text" (desc) id=..
 * at (x,y) bounds [x1,y1][x2,y2]" a line. *text malloc'd. */
int ops_find(ops_ctx *c, const adbc_ui_selector *sel, char **text);

/* ---- apps and waits (ops_app.c) ---- */
/* An intent from {action, data, component, extras:[{type,key,value}]}. */
int ops_intent_parse(adbc_intent *in, adbc_intent_extra *extras, size_t cap, const cJSON *a,
                     ops_err *e);
/* {"op":"launch"|"stop","package":P}, {"op":"top"}, {"op":"intent",...}.
 * *result: {"done":...} or, for top, {"activity","package"}. */
int ops_app(ops_ctx *c, const cJSON *a, cJSON **result);
/* {"text":T[,"gone","contains","ignore_case"]} or {"stable":true}, with
 * "timeout_ms" (default 10000); the snapshot that satisfied it becomes the
 * latest. */
int ops_wait(ops_ctx *c, const cJSON *a);

#endif
