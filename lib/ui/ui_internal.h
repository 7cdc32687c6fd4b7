/* SPDX-License-Identifier: Apache-2.0 */
/* Internal structures of the UI snapshot layer. Not installed.
 *
 * The pipeline: the dump's bytes are parsed in place (xml.c) into a flat
 * array of nodes in document pre-order, linked by indices rather than
 * pointers, so no step recurses on document depth: a parent always has a
 * smaller index than its children, and walking the array backwards visits
 * children before parents. Strings are (offset, length) pairs into the
 * dump buffer, or, for the rare value that grew when repaired, into a side
 * arena (decode.c). Then refs and pruning (prune.c), text (format.c), JSON
 * (json.c) and the ref table (reftab.c).
 */
#ifndef ADBC_UI_INTERNAL_H
#define ADBC_UI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "adbc/ui.h"
#include "ui/ui_observe.h"

#define UI_NONE UINT32_MAX

/* Largest dump accepted: no screen comes close, and with the arena (at most
 * three times a dump) every string offset fits in 32 bits. */
#define UI_MAX_DUMP ((size_t)256 << 20)

/* A string: offset into the doc's string space and length. Offsets below
 * the dump's length point into the dump; the rest into the arena. Every
 * non-empty string is followed by a NUL. */
typedef struct ui_str {
    uint32_t off;
    uint32_t len;
} ui_str;

/* Node flags. The first seven equal the public ADBC_UI_* bits. */
enum {
    UI_CLICKABLE = ADBC_UI_CLICKABLE,
    UI_EDITABLE = ADBC_UI_EDITABLE,
    UI_SCROLLABLE = ADBC_UI_SCROLLABLE,
    UI_CHECKED = ADBC_UI_CHECKED,
    UI_SELECTED = ADBC_UI_SELECTED,
    UI_FOCUSED = ADBC_UI_FOCUSED,
    UI_ENABLED = ADBC_UI_ENABLED,
    UI_SUBREF = 1 << 8,   /* a ref somewhere in the subtree (itself included) */
    UI_OPEN = 1 << 9      /* parse: start tag read, end tag not yet */
};

#define UI_PUBLIC_STATES 0x7fu

typedef struct ui_node {
    ui_str cls, text, desc, rid, pkg;
    int32_t x1, y1, x2, y2;
    uint32_t parent;      /* original tree; UI_NONE for a window root */
    uint32_t first, last; /* first and last child */
    uint32_t next;        /* next sibling (window roots: next window) */
    uint32_t window;      /* index of the window the node belongs to */
    uint32_t ref;         /* 0 = none */
    uint32_t flags;
    /* Pruned tree, set by ui_prune. rep: the node that stands for this one
     * in the output (itself, a descendant it collapsed into, or UI_NONE when
     * dropped). The p* links are valid on nodes that are their own rep. */
    uint32_t rep;
    uint32_t pfirst, pnext, pparent;
    uint32_t actref;      /* ref of the nearest ancestor-or-self with one, 0 if none */
    uint32_t rlen;        /* printed nodes: their role (see ui_role) */
    const char *role;
} ui_node;

typedef struct ui_doc {
    char *mem;            /* allocation holding the dump (freed at the end) */
    char *buf;            /* the dump inside mem; rewritten in place */
    size_t len;
    const char *last_gt;  /* parse: the last '>' in buf, NULL if none */
    char *arena;          /* repaired strings that did not fit in place */
    size_t arena_len, arena_cap;

    ui_node *nodes;
    uint32_t n, cap;
    uint32_t win_first, win_last, nwin;
    uint32_t *winroot;    /* window index -> its root node */

    uint32_t nrefs;
    uint32_t *refnode;    /* ref (1..nrefs) -> node; [0] unused */

    int complete;
    char damage[160];
} ui_doc;

/* Pointer to a string's bytes (NUL-terminated); "" when empty. */
static inline const char *ui_sp(const ui_doc *d, ui_str s)
{
    if (s.len == 0)
        return "";
    if (s.off < d->len)
        return d->buf + s.off;
    return d->arena + (s.off - d->len);
}

/* xml.c: parse d->buf[0..len) into d->nodes. ADBC_EFORMAT when there is no
 * <node> at all; otherwise 0 with d->complete and d->damage set. */
int ui_xml_parse(ui_doc *d);

/* decode.c: store the attribute value v[0..n) (v[n] is its closing quote,
 * which may be overwritten) as *out, repairing invalid UTF-8 and, when
 * entities is set, decoding entity and numeric references. */
int ui_decode_value(ui_doc *d, char *v, uint32_t n, int entities, ui_str *out);

/* prune.c: assign refs, then prune every window bottom-up. */
int ui_prune(ui_doc *d);

/* The printed role of a class ("android.widget.TextView" -> "Text"). */
void ui_role(const char *cls, uint32_t len, const char **role, uint32_t *rlen);

/* 1 if the class is a wrapper the pruning may collapse. */
int ui_is_wrapper(const char *cls, uint32_t len);

/* format.c: the snapshot text. *out malloc'd, NUL-terminated. */
int ui_format_text(char **out, size_t *len, const ui_doc *d);

/* json.c: the JSON document. */
int ui_format_json(char **out, size_t *len, const ui_doc *d, const char *id, int64_t ts);

/* Limit for formatted output: past it the tree is too deep to print and the
 * dump cannot be a real screen. */
size_t ui_output_limit(const ui_doc *d);

/* hash.c: 64-bit hashing for tokens, ids and dedup. Stable across runs and
 * platforms (ref files store tokens). */
uint64_t ui_hash(uint64_t h, const void *p, size_t n);
uint64_t ui_hash_u64(uint64_t h, uint64_t v);

/* reftab.c */
struct adbc_ui_reftab {
    adbc_ui_ref *refs;    /* [0..count) is ref 1..count */
    size_t count;
    char id[17];
    int64_t timestamp;
    /* The device's frame mark when the dump was taken (ui_observe.h), ""
     * when unknown (device.c). */
    char frame[UI_FRAME_LEN];
    char *strings;        /* owned string storage (loaded tables); NULL when
                             the strings live in a snapshot */
    int owned;            /* 1: loaded, freed by adbc_ui_reftab_free */
};

/* Build the table of d's refs (strings borrowed from d). */
int ui_reftab_build(adbc_ui_reftab *t, const ui_doc *d);

/* Compute both tokens of a record from its fields. */
void ui_ref_tokens(adbc_ui_ref *r);

/* Escaping shared by text and JSON output. */
size_t ui_escape_len(const char *s, size_t n);
char *ui_escape(char *dst, const char *s, size_t n);

/* snapshot.c */
struct adbc_ui_snap {
    ui_doc doc;
    char *text;
    size_t text_len;
    adbc_ui_reftab refs;
    char id[17];
    int64_t timestamp;
};

/* Build a snapshot from a buffer it takes over (mem holds it, the dump is
 * buf[0..len) inside mem). */
int ui_snap_from(adbc_ui_snap **out, char *mem, char *buf, size_t len);

/* select.c: text matching shared by selectors and waits. A matcher folds
 * case into a scratch buffer so "contains, any case" stays linear
 * (memmem) however long the texts are. */
typedef struct ui_matcher {
    const char *needle;
    size_t nn;
    unsigned flags;
    char *fold;           /* folded needle, then room for a folded haystack */
    size_t cap;
} ui_matcher;

int ui_matcher_init(ui_matcher *m, const char *needle, unsigned flags);
/* 1 match, 0 no match, < 0 out of memory. */
int ui_matcher_test(ui_matcher *m, const char *hay, size_t hn);
void ui_matcher_free(ui_matcher *m);

/* wait.c: the polling loop, with the snapshot source abstracted so tests can
 * drive it without a device. */
typedef int (*ui_source_fn)(adbc_ui_snap **out, void *user, int timeout_ms);

typedef struct ui_wait_spec {
    enum { UI_WAIT_TEXT, UI_WAIT_STATE, UI_WAIT_STABLE } kind;
    const char *text;
    unsigned flags;
    const adbc_ui_ref *ref;
    adbc_ui_cond cond;
} ui_wait_spec;

int ui_wait(adbc_ui_snap **out, ui_source_fn src, void *user, const ui_wait_spec *w,
            int timeout_ms, int interval_ms, int snap_timeout_ms);

/* web.c: the dump raw[0..raw_len) (whose parse is s) written again with
 * each WebView's children replaced by its page's nodes, or a note added
 * where the page could not be read, within budget_ms in all. *out NULL
 * when the screen has no WebView. */
int ui_web_splice(char **out, size_t *out_len, const adbc_ui_snap *s, const char *raw,
                  size_t raw_len, adbc_conn *c, int budget_ms);

/* device.c: the device command and the parsing of its output. side (may
 * be NULL) runs in the background beside the dump; its output comes back
 * between the "side" and "frame" markers. */
int ui_dump_command(char *cmd, size_t cap, const char *nonce, int attempts, int always_compressed,
                    const char *side);
int ui_dump_split(size_t *xml_off, const char *out, size_t len, const char *nonce);
/* The frame mark and the side output in front of the XML (out[0..xml_off)):
 * frame gets the frame mark or "" (unknown, or not of the form the service
 * tool prints); side and side_len the side section (pointing into out;
 * NULL when there is none). */
void ui_dump_extras(char frame[UI_FRAME_LEN], const char **side, size_t *side_len, const char *out,
                    size_t xml_off, const char *nonce);

#endif
