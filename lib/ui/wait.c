/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting for the screen: poll snapshots until a condition holds.
 *
 * One loop serves the three waits (text present or gone, an element's
 * state, a screen that stopped changing). It takes a snapshot, tests, and
 * sleeps poll_interval_ms, always taking at least one snapshot and never
 * sleeping past the deadline; each snapshot is bounded by what is left.
 * A snapshot that fails for a passing reason (uiautomator errors, a cut
 * dump, its own timeout) is noted and retried; anything else (the
 * connection closed) ends the wait at once. On timeout the message says
 * what the last snapshot showed, so the caller sees why it did not match. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"

static void sleep_ms(int ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Up to cap - 1 bytes of the screen text, lines joined by " | ". */
static void summary(char *dst, size_t cap, const char *text)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 4 < cap; p++) {
        if (*p == '\n') {
            if (o + 7 >= cap)
                break;
            memcpy(dst + o, " | ", 3);
            o += 3;
            while (p[1] == ' ')
                p++;
        } else {
            dst[o++] = *p;
        }
    }
    if (strlen(text) > o) {
        /* Do not end inside a UTF-8 sequence. */
        while (o > 0 && ((unsigned char)dst[o - 1] & 0xc0) == 0x80)
            o--;
        if (o > 0 && ((unsigned char)dst[o - 1] & 0xc0) == 0xc0)
            o--;
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

/* The line number (from 1) where two texts first differ, and that line of each. */
static void first_difference(char *dst, size_t cap, const char *a, const char *b)
{
    size_t line = 1, bol = 0, i = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '\n')
            line++, bol = i + 1;
        i++;
    }
    const char *ea = strchr(a + bol, '\n'), *eb = strchr(b + bol, '\n');
    int la = (int)(ea ? (size_t)(ea - a) - bol : strlen(a + bol));
    int lb = (int)(eb ? (size_t)(eb - b) - bol : strlen(b + bol));
    snprintf(dst, cap, "line %zu went from \"%.*s\" to \"%.*s\"", line, la > 120 ? 120 : la,
             a + bol, lb > 120 ? 120 : lb, b + bol);
}

static int state_holds(unsigned st, adbc_ui_cond c)
{
    switch (c) {
    case ADBC_UI_COND_CHECKED: return !!(st & ADBC_UI_CHECKED);
    case ADBC_UI_COND_UNCHECKED: return !(st & ADBC_UI_CHECKED);
    case ADBC_UI_COND_ENABLED: return !!(st & ADBC_UI_ENABLED);
    case ADBC_UI_COND_DISABLED: return !(st & ADBC_UI_ENABLED);
    case ADBC_UI_COND_FOCUSED: return !!(st & ADBC_UI_FOCUSED);
    case ADBC_UI_COND_UNFOCUSED: return !(st & ADBC_UI_FOCUSED);
    case ADBC_UI_COND_SELECTED: return !!(st & ADBC_UI_SELECTED);
    case ADBC_UI_COND_UNSELECTED: return !(st & ADBC_UI_SELECTED);
    }
    return 0;
}

static const char *const cond_names[] = {"checked",   "unchecked", "enabled",  "disabled",
                                         "focused",   "unfocused", "selected", "unselected"};

const char *adbc_ui_cond_name(adbc_ui_cond cond)
{
    return (unsigned)cond < 8 ? cond_names[cond] : "?";
}

int adbc_ui_cond_parse(adbc_ui_cond *out, const char *name)
{
    for (int i = 0; name && i < 8; i++) {
        if (strcmp(name, cond_names[i]) == 0) {
            *out = (adbc_ui_cond)i;
            return 0;
        }
    }
    return core_fail(ADBC_EINVAL, "unknown state \"%s\": use checked, unchecked, enabled, "
                     "disabled, focused, unfocused, selected or unselected", name ? name : "");
}

/* Errors a later snapshot may not repeat. */
static int passing(int rc)
{
    return rc == ADBC_ETIMEDOUT || rc == ADBC_EREMOTE || rc == ADBC_EFORMAT;
}

/* Test the condition on s; on a miss, describe what was seen. */
static int test(const ui_wait_spec *w, const adbc_ui_snap *s, const adbc_ui_snap *prev,
                char *seen, size_t cap, int *rc)
{
    *rc = 0;
    switch (w->kind) {
    case UI_WAIT_TEXT: {
        size_t n;
        if ((*rc = adbc_ui_snap_count_text(&n, s, w->text, w->flags)) < 0)
            return 0;
        int gone = !!(w->flags & ADBC_UI_WAIT_GONE);
        if ((n == 0) == gone)
            return 1;
        char sum[400];
        summary(sum, sizeof sum, adbc_ui_snap_text(s, NULL));
        if (gone)
            snprintf(seen, cap, "still on the screen (%zu element%s): %s", n, n == 1 ? "" : "s", sum);
        else
            snprintf(seen, cap, "the screen showed: %s", sum[0] ? sum : "(nothing)");
        return 0;
    }
    case UI_WAIT_STATE: {
        int ref;
        if (adbc_ui_snap_locate(&ref, s, w->ref) < 0) {
            snprintf(seen, cap, "it was not on the screen (%s)", adbc_last_error());
            return 0;
        }
        const adbc_ui_ref *r = adbc_ui_reftab_get(adbc_ui_snap_refs(s), ref);
        if (state_holds(r->states, w->cond))
            return 1;
        static const adbc_ui_cond opposite[] = {
            ADBC_UI_COND_UNCHECKED, ADBC_UI_COND_CHECKED, ADBC_UI_COND_DISABLED,
            ADBC_UI_COND_ENABLED, ADBC_UI_COND_UNFOCUSED, ADBC_UI_COND_FOCUSED,
            ADBC_UI_COND_UNSELECTED, ADBC_UI_COND_SELECTED};
        snprintf(seen, cap, "it was still %s (now ref %d)", adbc_ui_cond_name(opposite[w->cond]), ref);
        return 0;
    }
    case UI_WAIT_STABLE:
        if (prev && strcmp(adbc_ui_snap_text(prev, NULL), adbc_ui_snap_text(s, NULL)) == 0)
            return 1;
        if (prev) {
            char diff[400];
            first_difference(diff, sizeof diff, adbc_ui_snap_text(prev, NULL),
                             adbc_ui_snap_text(s, NULL));
            snprintf(seen, cap, "the last two snapshots differed: %s", diff);
        } else {
            snprintf(seen, cap, "only one snapshot was taken");
        }
        return 0;
    }
    return 0;
}

static void describe(char *dst, size_t cap, const ui_wait_spec *w)
{
    switch (w->kind) {
    case UI_WAIT_TEXT:
        snprintf(dst, cap, "text \"%.80s\" %s", w->text,
                 (w->flags & ADBC_UI_WAIT_GONE) ? "did not go away" : "did not appear");
        break;
    case UI_WAIT_STATE: {
        const adbc_ui_ref *r = w->ref;
        const char *what = r->text[0] ? r->text : r->desc[0] ? r->desc : r->resource_id;
        const char *dot = strrchr(r->cls, '.');
        snprintf(dst, cap, "ref %d (%s \"%.60s\") did not become %s", r->ref,
                 dot ? dot + 1 : r->cls[0] ? r->cls : "View", what, adbc_ui_cond_name(w->cond));
        break;
    }
    case UI_WAIT_STABLE:
        snprintf(dst, cap, "the screen did not settle");
        break;
    }
}

int ui_wait(adbc_ui_snap **out, ui_source_fn src, void *user, const ui_wait_spec *w,
            int timeout_ms, int interval_ms, int snap_timeout_ms)
{
    if (out)
        *out = NULL;
    int64_t deadline = core_deadline(timeout_ms);
    adbc_ui_snap *prev = NULL;
    char seen[700] = "", failed[400] = "";
    int taken = 0, good = 0, failed_last = 0;
    for (;;) {
        int left = core_remaining(deadline);
        if (taken && left == 0)
            break;
        /* Each snapshot gets what is left; the first always gets a full
         * try, so a zero timeout means "look once". */
        int per = left > 0 && left < snap_timeout_ms ? left : snap_timeout_ms;
        adbc_ui_snap *s = NULL;
        int rc = src(&s, user, per);
        taken++;
        if (rc == 0) {
            int trc;
            failed_last = 0;
            good++;
            int hit = test(w, s, prev, seen, sizeof seen, &trc);
            if (trc < 0) {
                adbc_ui_snap_free(s);
                adbc_ui_snap_free(prev);
                return trc;
            }
            if (hit) {
                adbc_ui_snap_free(prev);
                if (out)
                    *out = s;
                else
                    adbc_ui_snap_free(s);
                return 0;
            }
            if (w->kind == UI_WAIT_STABLE) {
                adbc_ui_snap_free(prev);
                prev = s;
            } else {
                adbc_ui_snap_free(s);
            }
        } else if (passing(rc)) {
            /* Keep what the last good snapshot showed: a failure at the
             * deadline says less than the screen before it. */
            snprintf(failed, sizeof failed, "%s", adbc_last_error());
            failed_last = 1;
            /* Two equal screens must be consecutive. */
            adbc_ui_snap_free(prev);
            prev = NULL;
        } else {
            adbc_ui_snap_free(prev);
            return core_fail_keep(rc);
        }
        left = core_remaining(deadline);
        if (left == 0)
            break;
        sleep_ms(left < 0 || interval_ms < left ? interval_ms : left);
    }
    adbc_ui_snap_free(prev);
    char what[200];
    describe(what, sizeof what, w);
    if (!good)
        return core_fail(ADBC_ETIMEDOUT, "%s within %d ms: no snapshot succeeded (%d tried); the "
                         "last one failed: %s", what, timeout_ms, taken, failed);
    return core_fail(ADBC_ETIMEDOUT, "%s within %d ms (%d snapshot%s): %s%s%s", what, timeout_ms,
                     taken, taken == 1 ? "" : "s", seen,
                     failed_last ? "; then a snapshot failed: " : "", failed_last ? failed : "");
}

/* ---- the device waits ---- */

typedef struct dev_src {
    adbc_conn *c;
    adbc_ui_opts opts;
} dev_src;

static int from_device(adbc_ui_snap **out, void *user, int timeout_ms)
{
    dev_src *d = user;
    adbc_ui_opts o = d->opts;
    o.timeout_ms = timeout_ms;
    return adbc_ui_snapshot(out, d->c, &o);
}

static int run(adbc_ui_snap **out, adbc_conn *c, const ui_wait_spec *w, int timeout_ms,
               const adbc_ui_opts *opts)
{
    dev_src d = {.c = c};
    adbc_ui_opts_init(&d.opts);
    if (core_abi_take(&d.opts, sizeof d.opts, opts, "adbc_ui_opts") < 0)
        return ADBC_EINVAL;
    int interval = d.opts.poll_interval_ms < 0 ? 0 : d.opts.poll_interval_ms > 10000 ? 10000
                                                                                     : d.opts.poll_interval_ms;
    int per = d.opts.timeout_ms > 0 ? d.opts.timeout_ms : 30000;
    return ui_wait(out, from_device, &d, w, timeout_ms, interval, per);
}

int adbc_ui_wait_text(adbc_ui_snap **out, adbc_conn *c, const char *text, unsigned flags,
                      int timeout_ms, const adbc_ui_opts *opts)
{
    if (!c || !text)
        return core_fail(ADBC_EINVAL, "adbc_ui_wait_text: c and text must not be NULL");
    ui_wait_spec w = {.kind = UI_WAIT_TEXT, .text = text, .flags = flags};
    return run(out, c, &w, timeout_ms, opts);
}

int adbc_ui_wait_state(adbc_ui_snap **out, adbc_conn *c, const adbc_ui_ref *ref,
                       adbc_ui_cond cond, int timeout_ms, const adbc_ui_opts *opts)
{
    if (!c || !ref || (unsigned)cond >= 8)
        return core_fail(ADBC_EINVAL, "adbc_ui_wait_state: c and ref must not be NULL, cond "
                                      "must be an adbc_ui_cond");
    ui_wait_spec w = {.kind = UI_WAIT_STATE, .ref = ref, .cond = cond};
    return run(out, c, &w, timeout_ms, opts);
}

int adbc_ui_wait_stable(adbc_ui_snap **out, adbc_conn *c, int timeout_ms, const adbc_ui_opts *opts)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_ui_wait_stable: c must not be NULL");
    ui_wait_spec w = {.kind = UI_WAIT_STABLE};
    return run(out, c, &w, timeout_ms, opts);
}
