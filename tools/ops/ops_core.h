/* SPDX-License-Identifier: Apache-2.0 */
/* The operation layer's core: what tap, type, press, swipe, scroll,
 * long_press, back, home, observe, find, the app calls and the waits mean
 * for an agent, written once for every front end (adbc-snap on the command
 * line, adbc-mcp over MCP, adbc-serve over HTTP, and any other): their
 * checks, their errors, the five-tier selectors and the device pool
 * (ops_pool.h).
 *
 * No JSON and no printing: requests are C structs, results are C structs
 * or text, and a failure is an ops_err whose code a front end maps to its
 * own form (an exit status, an MCP tool error, an HTTP status) with one
 * message that says what to do. The JSON argument layer (ops_json.h, with
 * cJSON) only turns JSON into these structs and results into JSON.
 *
 * An operation runs on an ops_ctx: a connection, the device's latest
 * snapshot (the refs acts take) and a deadline. */
#ifndef ADBC_OPS_CORE_H
#define ADBC_OPS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "adbc/act.h"
#include "adbc/conn.h"
#include "adbc/ui.h"

typedef enum ops_code {
    OPS_OK = 0,
    OPS_EARG,        /* a bad argument: nothing was sent */
    OPS_ENOREF,      /* a ref the latest snapshot does not have (or no snapshot yet) */
    OPS_ESTALE,      /* the ref's element is gone or cannot be told apart: nothing sent */
    OPS_ENOMATCH,    /* a selector matched nothing */
    OPS_EAMBIGUOUS,  /* a selector matched several: the candidates are listed */
    OPS_EBUSY,       /* the device stayed busy with another call */
    OPS_EDEVICE,     /* the device is gone (connection lost or refused) */
    OPS_ETIMEOUT,    /* the device did not answer in time */
    OPS_EFAIL,       /* the device refused or the command failed */
    OPS_ESTOPPING    /* the program is stopping: the call was not started, nothing sent */
} ops_code;

typedef struct ops_err {
    ops_code code;
    int rc;          /* the adbc error behind it (ADBC_ESTALE ...), 0 when none */
    char msg[2048];  /* what went wrong and what to do next */
} ops_err;

/* "bad_request", "unknown_ref", "stale", "not_found", "ambiguous", "busy",
 * "device_gone", "timeout", "failed", "stopping". */
const char *ops_code_name(ops_code code);
/* The HTTP status of a code: 400, 404, 409, 404, 409, 423, 502, 504, 500, 503. */
int ops_code_http(ops_code code);

int ops_fail(ops_err *e, ops_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Fail with adbc's last error for rc, the code it maps to, and what to do
 * next. "WHAT failed: MESSAGE (NEXT STEP)". */
int ops_fail_adbc(ops_err *e, int rc, const char *what);

int64_t ops_now_ms(void); /* monotonic */

/* 1 when given equals the secret, else 0, in a time that depends only on
 * secret_len and given_len, never on the bytes (ops_secret.c). */
int ops_secret_equal(const char *secret, size_t secret_len, const char *given,
                     size_t given_len);

/* data[0..n) in base64 with padding, NUL-terminated, malloc'd; NULL when
 * out of memory (ops_base64.c). */
char *ops_base64(const void *data, size_t n);

/* ---- UTF-8 (ops_utf8.c) ---- */
/* The length of the UTF-8 sequence at p (at most n bytes, n >= 1), 0 when
 * it is not one (overlong forms, surrogates, past U+10FFFF). */
size_t ops_utf8_len(const unsigned char *p, size_t n);
/* The offset of the first byte of s[0..len) that does not start a valid
 * sequence, or len. */
size_t ops_utf8_bad(const char *s, size_t len);
/* Replace each such byte of the C string s with '?', in place. */
void ops_utf8_fix(char *s);

/* ---- selectors by five tiers (ops_select.c) ---- */
typedef struct ops_sel {
    const char *id;    /* resource-id: "pkg:id/name" whole, or "name" */
    const char *text;  /* visible text */
    const char *desc;  /* content-desc */
} ops_sel;

/* Find the one element sel names in s, trying in order: 1 an exact
 * resource-id; 2 an actionable element whose own text is the text; 3 an
 * element with the text whose nearest actionable ancestor takes it (a
 * label inside a clickable row); 4 content-desc (the desc, or the text);
 * 5 an editable field whose text or hint contains the text (any case).
 * The first tier with a match decides: one match gives *ref; several are
 * OPS_EAMBIGUOUS with the candidates listed; none in any tier is
 * OPS_ENOMATCH. *tier gets 1..5 (may be NULL). */
int ops_select(int *ref, int *tier, const adbc_ui_snap *s, const ops_sel *sel, ops_err *e);

/* ---- one act (ops_act.c) ---- */
typedef enum ops_action {
    OPS_TAP = 0, OPS_TYPE, OPS_PRESS, OPS_SWIPE, OPS_SCROLL, OPS_LONG_PRESS, OPS_BACK, OPS_HOME
} ops_action;

/* What to act on and how. The element is, in this order: elem (a record
 * the front end holds, e.g. adbc-snap's saved refs), the selector's pick
 * in a fresh snapshot (has_sel), or ref in the context's latest snapshot;
 * tap also takes a point (has_xy) or a grid cell. */
typedef struct ops_act {
    ops_action action;
    int ref;               /* 0: none */
    int has_sel;
    ops_sel sel;
    const adbc_ui_ref *elem; /* the element's record itself (ref is then its number) */
    const adbc_ui_reftab *elem_refs; /* the table elem is in (its frame mark lets a verified
                                        act skip the fresh dump on an unchanged screen) */
    int no_verify;         /* act on the record without finding it again first */
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

typedef struct ops_ctx {
    adbc_conn *conn;
    adbc_ui_snap **last;     /* the device's latest snapshot (may point to NULL) */
    int64_t deadline;        /* monotonic ms */
    ops_err err;             /* why the last operation failed */
    /* What the last operation did: */
    char done[512];          /* one line */
    adbc_act_where where;    /* where a tap/press on an element went */
    int acted_ref;           /* the ref acted on (0 for points and keys) */
    int tier;                /* the selector tier that picked it (1..5), 0 without one */
    int web;                 /* snapshots read WebViews' pages too (docs/webview.md) */
    int web_budget_ms;       /* their time, 1..60000; 0: the library's default */
    /* The screen check of every dump an act takes before its input
     * (adbc_act_opts.check's form): the fresh dump of an act by selector
     * and the one a verified act on a ref takes. A refusal fails the act
     * with nothing sent. NULL: none. */
    int (*check)(void *user, const adbc_ui_snap *snap, const adbc_ui_ref *at, char *why,
                 size_t cap);
    void *check_user;
    unsigned allow;          /* OPS_ALLOW_* a person allowed by name (ops_intent_check) */
} ops_ctx;

void ops_ctx_init(ops_ctx *c, adbc_conn *conn, adbc_ui_snap **last, int64_t deadline);
int ops_remaining(const ops_ctx *c); /* ms left, 1..600000 */
void ops_act_opts(const ops_ctx *c, adbc_act_opts *o, adbc_ui_opts *uo);

/* The latest snapshot's record of ref, or OPS_ENOREF saying which refs
 * there are. */
const adbc_ui_ref *ops_ref(ops_ctx *c, int ref);

/* Run one act. Acts on elements are verified (found again in a fresh dump;
 * a ref that no longer matches is OPS_ESTALE, nothing sent) unless
 * no_verify; an act by selector takes a fresh snapshot, which becomes the
 * latest. */
int ops_act_run(ops_ctx *c, const ops_act *a);

/* ---- observing (ops_observe.c) ---- */
/* Take a snapshot and keep it as the latest. */
int ops_snapshot(ops_ctx *c);
/* The text exactly as `adbc-snap snapshot` prints it: the snapshot and a
 * newline, or nothing for an empty screen. malloc'd. */
char *ops_snapshot_text(const adbc_ui_snap *s);
/* The resumed activity and a fresh snapshot (kept as the latest), taken
 * under one lock by the caller: one moment of the device. *activity and
 * *package are adbc's: NULL when the device shows none, else freed with
 * adbc_free(). */
int ops_observe_take(ops_ctx *c, char **activity, char **package);

/* ---- finding (ops_find.c) ---- */
/* A fresh snapshot (kept as the latest) and the elements matching sel, as
 * text: "N matches in screen ID:" then "[ref=N] Class "text" (desc) id=..
 * at (x,y) bounds [x1,y1][x2,y2]" a line. *text malloc'd. */
int ops_find(ops_ctx *c, const adbc_ui_selector *sel, char **text);

/* ---- apps and waits (ops_app.c) ---- */
typedef enum ops_app_op { OPS_APP_LAUNCH = 0, OPS_APP_STOP, OPS_APP_TOP, OPS_APP_INTENT } ops_app_op;

typedef struct ops_app_req {
    ops_app_op op;
    const char *package;     /* launch, stop: an Android name (ops_android_name) */
    adbc_intent intent;      /* intent */
} ops_app_req;

/* What an intent may do only when a person allowed it by name, in
 * adbc-mcp's [tools] allow or adbc-serve's --allow-tool (ops_tools_optin
 * maps the names): intent_call, intent_sms, intent_any. Bits above the tool
 * gates of ops_tools.h, carried in ops_ctx.allow and ops_front.allow. */
enum {
    OPS_ALLOW_INTENT_CALL = 1u << 16, /* calls: CALL actions, tel:/sip:/voicemail:, call components */
    OPS_ALLOW_INTENT_SMS = 1u << 17,  /* sms:, smsto:, mms:, mmsto: */
    OPS_ALLOW_INTENT_ANY = 1u << 18   /* every intent (the whole policy lifted) */
};

/* The intent policy (docs/mcp.md, "Intents"), checked on what the device
 * would do with the intent: an action that acts on start with no screen to
 * confirm it (a call, a shutdown, a reboot, a reset), an explicit component
 * that does so whatever the action, or data of a scheme beyond the safe
 * list (http, https, geo, mailto, market) is refused with OPS_EARG, nothing
 * sent, unless allow has the name that lets it through; so is an intent
 * with control bytes or surrounding blanks. 0 when in may be started. */
int ops_intent_check(ops_err *e, const adbc_intent *in, unsigned allow);

/* 1 when s is an Android package or permission name: [A-Za-z][A-Za-z0-9_.]*. */
int ops_android_name(const char *s);

/* Launch, stop, start an intent, or read the resumed activity (top: into
 * *activity and *package, adbc's as in ops_observe_take; either pointer may
 * be NULL when not wanted). */
int ops_app_run(ops_ctx *c, const ops_app_req *r, char **activity, char **package);

typedef struct ops_wait_req {
    const char *text;        /* wait for this text (NULL: see elem, else a still screen) */
    unsigned flags;          /* ADBC_UI_WAIT_GONE, ADBC_UI_MATCH_CONTAINS, ADBC_UI_MATCH_NOCASE */
    const adbc_ui_ref *elem; /* without text: wait for this element to reach cond */
    adbc_ui_cond cond;
    int timeout_ms;          /* at most what is left of the call, less 500 ms */
    int dump_ms;             /* bound of one dump; 0: what is left of the call */
} ops_wait_req;

/* Wait for the text (or its going), an element's state, or a still screen;
 * the snapshot that satisfied it becomes the latest. An element gone or
 * changed past telling is OPS_ESTALE. */
int ops_wait_run(ops_ctx *c, const ops_wait_req *r);

/* ---- set-of-marks (ops_marks.c) ---- */
/* Draw every ref of snap (its box, and its number in a filled tab) on a raw
 * screencap frame and encode it as PNG (*png: adbc_free it). */
int ops_marks_png(uint8_t **png, size_t *len, const adbc_frame *f, const adbc_ui_snap *snap);
/* The screen now with the refs of the latest snapshot drawn on it: what
 * vision models are given beside the snapshot. 0 or -1 with c->err. */
int ops_shot_marked(ops_ctx *c, uint8_t **png, size_t *len);

#include "ops_pool.h"

#endif
