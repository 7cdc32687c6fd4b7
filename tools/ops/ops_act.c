/* SPDX-License-Identifier: Apache-2.0 */
/* Acts: tap, type, press, swipe, scroll, long_press, back, home. Acts on
 * refs go through adbc's verified acts: the element is found again in a
 * fresh dump, and a ref that no longer matches is refused (stale), never
 * guessed. Acts by selector take a fresh snapshot, pick the one element by
 * the five tiers and act on it there; that snapshot becomes the latest. */
#include "ops_core.h"

#include <stdio.h>
#include <string.h>

#include "adbc/error.h"

static const char *const action_names[] = {"tap",    "type",       "press", "swipe",
                                           "scroll", "long_press", "back",  "home"};

int ops_action_parse(ops_action *a, const char *name)
{
    for (size_t i = 0; i < sizeof action_names / sizeof action_names[0]; i++)
        if (name && strcmp(name, action_names[i]) == 0) {
            *a = (ops_action)i;
            return 0;
        }
    return -1;
}

const char *ops_action_name(ops_action a)
{
    return (unsigned)a < sizeof action_names / sizeof action_names[0] ? action_names[a] : "?";
}

void ops_ctx_init(ops_ctx *c, adbc_conn *conn, adbc_ui_snap **last, int64_t deadline)
{
    memset(c, 0, sizeof *c);
    c->conn = conn;
    c->last = last;
    c->deadline = deadline;
}

int ops_remaining(const ops_ctx *c)
{
    int64_t left = c->deadline - ops_now_ms();
    return left < 1 ? 1 : left > 600000 ? 600000 : (int)left;
}

void ops_act_opts(const ops_ctx *c, adbc_act_opts *o, adbc_ui_opts *uo)
{
    adbc_ui_opts_init(uo);
    uo->timeout_ms = ops_remaining(c);
    adbc_act_opts_init(o);
    o->timeout_ms = ops_remaining(c);
    o->verify = 1; /* acts on refs always find the element again first */
    o->ui = uo;
    /* The latest snapshot's table carries the device's frame mark: an act
     * on one of its refs on a screen that drew nothing since needs no fresh
     * dump (adbc_act_opts.refs). */
    o->refs = *c->last ? adbc_ui_snap_refs(*c->last) : NULL;
    o->check = c->check;
    o->check_user = c->check_user;
}

const adbc_ui_ref *ops_ref(ops_ctx *c, int ref)
{
    if (!*c->last) {
        ops_fail(&c->err, OPS_ENOREF, "no snapshot of this device yet: call snapshot first, "
                                      "then use a ref from it");
        return NULL;
    }
    const adbc_ui_reftab *t = adbc_ui_snap_refs(*c->last);
    const adbc_ui_ref *r = adbc_ui_reftab_get(t, ref);
    if (!r) {
        size_t n = adbc_ui_reftab_count(t);
        ops_fail(&c->err, OPS_ENOREF, "ref %d is not in the latest snapshot (%s%zu): take a "
                 "snapshot and use a ref it shows", ref, n ? "refs 1.." : "it has no refs, ", n);
        return NULL;
    }
    return r;
}

/* ---- one act ---- */

static const char *how_text(adbc_act_how how)
{
    return how == ADBC_ACT_MOVED ? " (the element had moved; found again by its content)" : "";
}

/* The record of the element an act names: the latest snapshot's ref
 * (verified when acted on), or the selector's pick in a fresh snapshot. */
static const adbc_ui_ref *element(ops_ctx *c, const ops_act *a, adbc_act_opts *o)
{
    if (a->elem) {
        o->verify = !a->no_verify;
        o->refs = a->elem_refs;
        return a->elem;
    }
    if (a->has_sel) {
        if (ops_snapshot(c) < 0)
            return NULL;
        int ref = 0;
        if (ops_select(&ref, &c->tier, *c->last, &a->sel, &c->err) < 0)
            return NULL;
        o->verify = 0; /* it was found in the dump just taken */
        /* That dump replaced (and freed) the snapshot ops_act_opts took
         * its table from: the act's table is the new one. */
        o->refs = adbc_ui_snap_refs(*c->last);
        const adbc_ui_ref *r = adbc_ui_reftab_get(adbc_ui_snap_refs(*c->last), ref);
        char why[512] = "";
        if (c->check && c->check(c->check_user, *c->last, r, why, sizeof why) != 0) {
            why[sizeof why - 1] = 0;
            ops_fail(&c->err, OPS_EFAIL, "refused before the input, nothing was sent: the "
                     "screen the act would land on failed its check: %s", why);
            return NULL;
        }
        return r;
    }
    if (a->no_verify)
        o->verify = 0;
    if (a->snapshot && *c->last && strcmp(a->snapshot, adbc_ui_snap_id(*c->last)) != 0) {
        ops_fail(&c->err, OPS_ESTALE, "ref %d is from snapshot %s, but the latest is %s: the "
                 "screen was read again since; take a snapshot and use a ref from it", a->ref,
                 a->snapshot, adbc_ui_snap_id(*c->last));
        return NULL;
    }
    return ops_ref(c, a->ref);
}

int ops_act_run(ops_ctx *c, const ops_act *a)
{
    adbc_act_opts o;
    adbc_ui_opts uo;
    ops_act_opts(c, &o, &uo);
    adbc_act_where *w = &c->where;
    memset(w, 0, sizeof *w);
    w->how = ADBC_ACT_UNVERIFIED;
    c->acted_ref = 0;
    c->tier = 0;
    const adbc_ui_ref *r = NULL;
    int needs = a->ref || a->has_sel || a->elem;
    if (needs && !(r = element(c, a, &o)))
        return -1;
    int ref = r ? r->ref : 0;
    c->acted_ref = ref;
    /* An act on a web element (resource-id "web:...", docs/webview.md)
     * changes the page: the screen the act returns reads the page too. */
    if (r && r->resource_id && strncmp(r->resource_id, "web:", 4) == 0)
        c->web = 1;
    const char *name = ops_action_name(a->action);
    int rc = 0;
    switch (a->action) {
    case OPS_TAP:
        if (a->cell) {
            rc = adbc_act_tap_grid(w, c->conn, a->cell, &o);
            if (rc < 0)
                return ops_fail_adbc(&c->err, rc, "tap_grid (cells are a column A-J and a row "
                                     "from 1, like \"C5\"; screenshot with grid: true shows "
                                     "the layout)");
            snprintf(c->done, sizeof c->done, "tapped cell %s at (%d,%d)", a->cell, w->x, w->y);
            return 0;
        }
        if (a->has_xy) {
            rc = adbc_act_tap_xy(c->conn, a->x, a->y, &o);
            if (rc < 0)
                return ops_fail_adbc(&c->err, rc, "tap_xy");
            w->x = a->x;
            w->y = a->y;
            snprintf(c->done, sizeof c->done, "tapped (%d,%d)", a->x, a->y);
            return 0;
        }
        rc = adbc_act_tap(w, c->conn, r, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "tap");
        snprintf(c->done, sizeof c->done, "tapped ref %d at (%d,%d)%s", ref, w->x, w->y,
                 how_text(w->how));
        return 0;
    case OPS_LONG_PRESS:
        o.long_press_ms = a->ms;
        rc = adbc_act_long_press(w, c->conn, r, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "long_press");
        snprintf(c->done, sizeof c->done, "long-pressed ref %d at (%d,%d) for %d ms%s", ref, w->x,
                 w->y, a->ms, how_text(w->how));
        return 0;
    case OPS_TYPE:
        rc = r ? adbc_act_type(w, c->conn, r, a->text, a->clear, &o)
               : adbc_act_type_text(c->conn, a->text, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "type");
        if (r)
            snprintf(c->done, sizeof c->done, "typed %zu bytes into ref %d%s%s", strlen(a->text),
                     ref, a->clear ? " (cleared first)" : "", how_text(w->how));
        else
            snprintf(c->done, sizeof c->done, "typed %zu bytes into the focused field",
                     strlen(a->text));
        return 0;
    case OPS_PRESS: {
        rc = adbc_act_press(c->conn, a->key, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "press");
        const char *kn = adbc_keycode_name(a->key);
        snprintf(c->done, sizeof c->done, "pressed %s (key code %d)", kn ? kn : a->key_name,
                 a->key);
        return 0;
    }
    case OPS_BACK:
    case OPS_HOME:
        rc = a->action == OPS_HOME ? adbc_act_home(c->conn, &o) : adbc_act_back(c->conn, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, name);
        snprintf(c->done, sizeof c->done, "pressed %s", name);
        return 0;
    case OPS_SWIPE:
        rc = adbc_act_swipe(c->conn, a->x1, a->y1, a->x2, a->y2, a->ms, &o);
        if (rc < 0)
            return ops_fail_adbc(&c->err, rc, "swipe");
        snprintf(c->done, sizeof c->done, "swiped (%d,%d) -> (%d,%d) in %d ms", a->x1, a->y1,
                 a->x2, a->y2, a->ms);
        return 0;
    case OPS_SCROLL:
        if (r) {
            rc = adbc_act_scroll(w, c->conn, r, a->dir, &o);
            if (rc < 0)
                return ops_fail_adbc(&c->err, rc, "scroll");
            snprintf(c->done, sizeof c->done, "scrolled ref %d %s%s", ref, a->dir_name,
                     how_text(w->how));
            return 0;
        } else {
            int wdt, hgt, sx, sy, ex, ey;
            rc = adbc_screen_size(&wdt, &hgt, c->conn, ops_remaining(c));
            if (rc == 0)
                rc = adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 0, wdt, hgt, a->dir);
            if (rc == 0) {
                o.timeout_ms = ops_remaining(c);
                rc = adbc_act_swipe(c->conn, sx, sy, ex, ey, o.scroll_ms, &o);
            }
            if (rc < 0)
                return ops_fail_adbc(&c->err, rc, "scroll");
            snprintf(c->done, sizeof c->done, "scrolled the screen %s (swipe (%d,%d) -> (%d,%d))",
                     a->dir_name, sx, sy, ex, ey);
            return 0;
        }
    }
    return ops_fail(&c->err, OPS_EARG, "unknown action");
}
