/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — UI snapshots: uiautomator dump -> parse -> prune -> text/JSON + refs.
 *
 * A snapshot (adbc_ui_snap) is one screen: the parsed dump, its pruned text
 * in the format of fixtures/snapshot/SNAPSHOT.md ("- Role [ref=N] "text"
 * (desc) [states]"), and a ref table (adbc_ui_reftab) giving, for every ref,
 * where to tap and what the element was. A snapshot can come from a device
 * (adbc_ui_snapshot), a saved dump file or a memory buffer (no device).
 *
 * Snapshots are immutable once made: any number of threads may read one.
 * Strings returned by accessors live as long as the object they came from.
 * See docs/snapshot.md for the JSON schema and the ref file format.
 */
#ifndef ADBC_UI_H
#define ADBC_UI_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adbc_ui_snap adbc_ui_snap;
typedef struct adbc_ui_reftab adbc_ui_reftab;

/* Version of the text format (SNAPSHOT.md), the JSON schema and the ref file. */
#define ADBC_UI_TEXT_FORMAT 1
#define ADBC_UI_JSON_SCHEMA "adbc.ui.snapshot/1"
#define ADBC_UI_REFTAB_VERSION 2

/* Element flags (adbc_ui_ref.states). */
enum {
    ADBC_UI_CLICKABLE = 1 << 0,
    ADBC_UI_EDITABLE = 1 << 1,   /* class contains "EditText" */
    ADBC_UI_SCROLLABLE = 1 << 2,
    ADBC_UI_CHECKED = 1 << 3,
    ADBC_UI_SELECTED = 1 << 4,
    ADBC_UI_FOCUSED = 1 << 5,
    ADBC_UI_ENABLED = 1 << 6
};

/* One ref: an element that is clickable, editable or scrollable. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_ui_ref {
    int ref;                  /* 1..N, document pre-order */
    int x1, y1, x2, y2;       /* bounds as dumped ([x1,y1][x2,y2]) */
    int x, y;                 /* tap point: centre of the bounds, rounded down */
    unsigned states;          /* ADBC_UI_* bits */
    int window;               /* index of its window (top-level node), from 0 */
    const char *cls;          /* class, "" when absent; never NULL */
    const char *resource_id;
    const char *text;         /* entities decoded, invalid UTF-8 -> U+FFFD */
    const char *desc;         /* content-desc, decoded like text */
    const char *package;
    /* Recognition tokens, for finding this element again in a later dump:
     * exact = class, resource-id, text, desc and bounds on a 16 px grid;
     * identity = the same without position, plus the clickable/editable/
     * scrollable flags and the size on a 32 px grid (survives scrolling). */
    uint64_t exact_token;
    uint64_t identity_token;
} adbc_ui_ref;

/* ---- Snapshots without a device ---------------------------------------- */

/* Parse a dump held in memory. The bytes are copied once (the parser works
 * in place on its copy). Any byte string gives either a snapshot or
 * ADBC_EFORMAT (no <node> at all: the message shows the first bytes). A dump
 * cut short still gives a snapshot of the nodes read; see
 * adbc_ui_snap_complete(). */
ADBC_API int adbc_ui_snap_parse(adbc_ui_snap **out, const void *xml, size_t len);

/* As adbc_ui_snap_parse, without the copy: takes ownership of buf (from
 * malloc() or adbc_ui_dump(); adbc frees it), also on failure, and rewrites
 * it in place. */
ADBC_API int adbc_ui_snap_parse_owned(adbc_ui_snap **out, void *buf, size_t len);

/* Read a saved dump file and parse it. ADBC_ENOTFOUND / ADBC_EIO when the
 * file cannot be read, ADBC_EFORMAT as above. */
ADBC_API int adbc_ui_snap_load(adbc_ui_snap **out, const char *path);

/* Free a snapshot (NULL is fine). */
ADBC_API void adbc_ui_snap_free(adbc_ui_snap *s);

/* The snapshot text: lines joined by '\n', no trailing newline, "" when the
 * whole screen was pruned away. *len (if not NULL) gets its length. */
ADBC_API const char *adbc_ui_snap_text(const adbc_ui_snap *s, size_t *len);

/* The same pruned tree as JSON (schema ADBC_UI_JSON_SCHEMA, one line, no
 * trailing newline). *out is NUL-terminated; free it with adbc_free(). */
ADBC_API int adbc_ui_snap_json(char **out, size_t *len, const adbc_ui_snap *s);

/* The ref table; owned by the snapshot. */
ADBC_API const adbc_ui_reftab *adbc_ui_snap_refs(const adbc_ui_snap *s);

/* 16 hex digits naming this screen's content (same dump -> same id). */
ADBC_API const char *adbc_ui_snap_id(const adbc_ui_snap *s);

/* When the snapshot was made, milliseconds since the Unix epoch. */
ADBC_API int64_t adbc_ui_snap_timestamp(const adbc_ui_snap *s);

/* 1 if the dump was whole; 0 if it was cut short or damaged, in which case
 * adbc_ui_snap_damage() says where and how (else ""). */
ADBC_API int adbc_ui_snap_complete(const adbc_ui_snap *s);
ADBC_API const char *adbc_ui_snap_damage(const adbc_ui_snap *s);

/* Windows (top-level <node> elements) and each one's package ("" if none). */
ADBC_API size_t adbc_ui_snap_windows(const adbc_ui_snap *s);
ADBC_API const char *adbc_ui_snap_window_package(const adbc_ui_snap *s, size_t window);

/* Number of <node> elements parsed. */
ADBC_API size_t adbc_ui_snap_nodes(const adbc_ui_snap *s);

/* One <node> of the dump as the device gave it, pruned or not: what a
 * person sees on the screen, for checks that must not depend on what the
 * snapshot text prints. Strings point into the snapshot (valid while it
 * lives), never NULL, entities decoded and invalid UTF-8 as U+FFFD. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_ui_node {
    const char *cls, *resource_id, *text, *desc, *package;
    int x1, y1, x2, y2;       /* bounds as dumped */
    unsigned states;          /* ADBC_UI_* bits */
    int window;               /* index of its window, from 0 */
    int ref;                  /* its own ref, 0 when it has none */
    int actref;               /* the ref a tap on it goes to: its own or its nearest
                                 ancestor's with one, 0 when none */
} adbc_ui_node;

/* Node i (0..adbc_ui_snap_nodes() - 1, document order: a window's nodes
 * follow its root). ADBC_ENOTFOUND past the last. */
ADBC_API int adbc_ui_snap_node(adbc_ui_node *out, const adbc_ui_snap *s, size_t i);

/* ---- Ref tables ----------------------------------------------------------- */

/* Number of refs (refs run 1..count). */
ADBC_API size_t adbc_ui_reftab_count(const adbc_ui_reftab *t);

/* The record of one ref, or NULL when ref is out of 1..count. */
ADBC_API const adbc_ui_ref *adbc_ui_reftab_get(const adbc_ui_reftab *t, int ref);

/* Id and timestamp of the snapshot the table came from. */
ADBC_API const char *adbc_ui_reftab_snapshot_id(const adbc_ui_reftab *t);
ADBC_API int64_t adbc_ui_reftab_timestamp(const adbc_ui_reftab *t);

/* The device's frame mark when the table's dump was taken: the display's
 * page-flip count as 8 hex digits, ':' and the boot id ("0000a3f1:9c1e...";
 * the id is empty when the device did not give it), "" when the device did
 * not give the count. A
 * verified act on one of the table's refs (adbc_act_opts.refs) compares it
 * with the count just before its input, in the same round trip: no frame
 * drawn since means the screen is the one dumped, and no fresh dump is
 * needed (docs/act.md). */
ADBC_API const char *adbc_ui_reftab_frame(const adbc_ui_reftab *t);

/* "ref<TAB>x<TAB>y\n" for every ref ("" when none). Free *out with adbc_free(). */
ADBC_API int adbc_ui_reftab_tsv(char **out, size_t *len, const adbc_ui_reftab *t);

/* Save to a file, atomically (written beside it, then renamed), so a later
 * process can act on these refs. */
ADBC_API int adbc_ui_reftab_save(const adbc_ui_reftab *t, const char *path);

/* Load a saved table. ADBC_ENOTFOUND when the file does not exist;
 * ADBC_EFORMAT when it is damaged, truncated or of another version. Free
 * with adbc_ui_reftab_free(). */
ADBC_API int adbc_ui_reftab_load(adbc_ui_reftab **out, const char *path);

/* Free a loaded table (NULL is fine). Never pass the snapshot's own table. */
ADBC_API void adbc_ui_reftab_free(adbc_ui_reftab *t);

/* ---- Selectors -------------------------------------------------------------- */

/* Match flags for text and content-desc. */
enum {
    ADBC_UI_MATCH_CONTAINS = 1 << 0, /* substring instead of whole string */
    ADBC_UI_MATCH_NOCASE = 1 << 1,   /* ASCII letters compare case-insensitively */
    ADBC_UI_WAIT_GONE = 1 << 2       /* adbc_ui_wait_text: wait until absent */
};

/* Fields left NULL are not tested; those set must all match (AND).
 * resource_id: "pkg:id/name" compares whole, "name" compares the part after
 * the last '/'. cls: the whole class or its last '.'-segment ("Button"). */
/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_ui_selector {
    size_t size;           /* sizeof the struct as the caller compiled it */
    const char *resource_id;
    const char *text;
    const char *desc;
    const char *cls;
    unsigned flags;           /* ADBC_UI_MATCH_* for text and desc */
} adbc_ui_selector;

/* Refs of the elements matching sel, in document order, without
 * duplicates. A matched element without a ref stands for its nearest
 * ancestor with one. Free *refs with adbc_free(). ADBC_ENOTFOUND when
 * nothing actionable matches (the message says whether anything matched at
 * all); ADBC_EINVAL when sel sets no field. */
ADBC_API int adbc_ui_find(int **refs, size_t *count, const adbc_ui_snap *s, const adbc_ui_selector *sel);

/* *count gets the number of elements whose text or content-desc matches
 * text (flags: ADBC_UI_MATCH_*). */
ADBC_API int adbc_ui_snap_count_text(size_t *count, const adbc_ui_snap *s, const char *text,
                            unsigned flags);

/* Find in s the element an earlier ref record describes: same exact token,
 * else the only element with the same identity token, else the only element
 * with the same class and resource-id at the same place. *ref gets its ref
 * in s. ADBC_ESTALE when it cannot be told apart or is gone. */
ADBC_API int adbc_ui_snap_locate(int *ref, const adbc_ui_snap *s, const adbc_ui_ref *old);

/* ---- Device ------------------------------------------------------------------ */

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_ui_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int timeout_ms;         /* one snapshot, all attempts included; default 30000 */
    int attempts;           /* uiautomator runs per snapshot, 1..10; default 3 */
    int always_compressed;  /* 1: dump --compressed from the start; default 0
                               (plain, then --compressed after "could not get
                               idle state", the mark of an animating screen) */
    int poll_interval_ms;   /* waits: pause between snapshots, 0..10000; default 250 */
    int web;                /* 1: read the pages shown in WebViews through DevTools and
                               splice them in (docs/webview.md); default 0. Each
                               page's DevTools session is kept with the connection
                               until it closes, and a page that did not change is
                               not read again */
    int web_budget_ms;      /* the web part's time, all pages together, 1..60000;
                               default 3000. A page that does not answer within it
                               leaves its WebView as the dump had it, with a note */
} adbc_ui_opts;

/* Defaults as documented above. */
ADBC_API void adbc_ui_opts_init_sized(adbc_ui_opts *opts, size_t size);
#define adbc_ui_opts_init(o) adbc_ui_opts_init_sized((o), sizeof *(o))

/* Fetch the raw dump XML in one exec round trip (see docs/snapshot.md).
 * *xml is NUL-terminated; free it with adbc_free(). ADBC_EREMOTE when uiautomator kept
 * failing (the message quotes what the device printed), ADBC_ETIMEDOUT past
 * opts->timeout_ms. opts may be NULL. */
ADBC_API int adbc_ui_dump(char **xml, size_t *len, adbc_conn *c, const adbc_ui_opts *opts);

/* adbc_ui_dump, then, with opts->web, the pages of its WebViews spliced in
 * (docs/webview.md): the XML a snapshot with opts->web is parsed from, for
 * a program that takes the snapshot for another (adbc-serve's session
 * server for adbc-snap, whose process ends after each command while the
 * server's connection keeps the pages' DevTools sessions). *xml is
 * NUL-terminated; free it with adbc_free(). Errors as adbc_ui_dump. */
ADBC_API int adbc_ui_dump_web(char **xml, size_t *len, adbc_conn *c, const adbc_ui_opts *opts);

/* Take a snapshot of the device's screen: adbc_ui_dump + parse, without a
 * copy. A dump cut short is fetched again within the timeout, then reported
 * as ADBC_EFORMAT rather than passed off as whole. */
ADBC_API int adbc_ui_snapshot(adbc_ui_snap **out, adbc_conn *c, const adbc_ui_opts *opts);

/* Conditions for adbc_ui_wait_state. */
typedef enum adbc_ui_cond {
    ADBC_UI_COND_CHECKED = 0,
    ADBC_UI_COND_UNCHECKED,
    ADBC_UI_COND_ENABLED,
    ADBC_UI_COND_DISABLED,
    ADBC_UI_COND_FOCUSED,
    ADBC_UI_COND_UNFOCUSED,
    ADBC_UI_COND_SELECTED,
    ADBC_UI_COND_UNSELECTED
} adbc_ui_cond;

/* Parse a condition name ("checked", "unchecked", "enabled", ...). */
ADBC_API int adbc_ui_cond_parse(adbc_ui_cond *out, const char *name);
ADBC_API const char *adbc_ui_cond_name(adbc_ui_cond cond);

/* The waits poll snapshots every opts->poll_interval_ms until the condition
 * holds or timeout_ms passes (ADBC_ETIMEDOUT, the message saying what was
 * last seen). out (may be NULL) gets the snapshot that satisfied it. */

/* Until an element's text or content-desc matches text (flags:
 * ADBC_UI_MATCH_*), or with ADBC_UI_WAIT_GONE until none does. */
ADBC_API int adbc_ui_wait_text(adbc_ui_snap **out, adbc_conn *c, const char *text, unsigned flags,
                      int timeout_ms, const adbc_ui_opts *opts);

/* Until the element of ref (a record from an earlier snapshot or a loaded
 * ref table, found again with adbc_ui_snap_locate) is in state cond. */
ADBC_API int adbc_ui_wait_state(adbc_ui_snap **out, adbc_conn *c, const adbc_ui_ref *ref,
                       adbc_ui_cond cond, int timeout_ms, const adbc_ui_opts *opts);

/* Until two consecutive snapshots have the same text. */
ADBC_API int adbc_ui_wait_stable(adbc_ui_snap **out, adbc_conn *c, int timeout_ms,
                        const adbc_ui_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
