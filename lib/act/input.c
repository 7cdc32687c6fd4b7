/* SPDX-License-Identifier: Apache-2.0 */
/* Touch and key input through `input` over exec:.
 *
 * Every gesture is one `input` command in one exec round trip (`cmd input`
 * on Android 12 and later: act_input_prefix). Acts on a ref go through
 * act_on_ref (verify.c), so with verification on a stale ref sends nothing
 * at all, and on a screen that drew nothing since the ref's dump the check
 * rides in the input's own round trip. */
#include "act/act_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"

#define COORD_MAX 65535

static int check_point(int x, int y, const char *what)
{
    if (x < 0 || y < 0 || x > COORD_MAX || y > COORD_MAX)
        return core_fail(ADBC_EINVAL,
                         "%s point (%d,%d) is off the screen: coordinates run from 0 to %d "
                         "(scroll the element into view first)",
                         what, x, y, COORD_MAX);
    return 0;
}

/* Every input here goes to no element: o->check reads the screen it
 * lands on when it drew since the caller's dump (act_input_checked). */
static int run_input(adbc_conn *c, const char *cmd, const adbc_act_opts *o)
{
    return act_input_checked(c, cmd, cmd, o, core_deadline(o->timeout_ms));
}

static int dup_cmd(char **cmd, const char *s)
{
    *cmd = core_strdup(s);
    return *cmd ? 0 : core_fail(ADBC_ENOMEM, "out of memory building a device command");
}

int adbc_act_tap_xy(adbc_conn *c, int x, int y, const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_act_tap_xy: no connection");
    int rc = check_point(x, y, "tap");
    if (rc < 0)
        return rc;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "input tap %d %d", x, y);
    return run_input(c, cmd, o);
}

static int check_ms(int ms, const char *what)
{
    if (ms < 1 || ms > 60000)
        return core_fail(ADBC_EINVAL, "%s duration %d ms is outside 1..60000", what, ms);
    return 0;
}

static int swipe(adbc_conn *c, int x1, int y1, int x2, int y2, int ms, const adbc_act_opts *o)
{
    int rc = check_point(x1, y1, "swipe start");
    if (rc == 0)
        rc = check_point(x2, y2, "swipe end");
    if (rc == 0)
        rc = check_ms(ms, "swipe");
    if (rc < 0)
        return rc;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "input swipe %d %d %d %d %d", x1, y1, x2, y2, ms);
    return run_input(c, cmd, o);
}

int adbc_act_swipe(adbc_conn *c, int x1, int y1, int x2, int y2, int ms,
                   const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_act_swipe: no connection");
    return swipe(c, x1, y1, x2, y2, ms, o);
}

/* checked: the key goes through o->check (a key can press the focused
 * button); back and home leave a screen, never confirm one, and are how a
 * person or the loop gets away from a stop screen. */
static int press(adbc_conn *c, int code, const adbc_act_opts *opts, int checked)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_act_press: no connection");
    if (code < 0 || code > 9999)
        return core_fail(ADBC_EINVAL, "key code %d is outside 0..9999", code);
    char cmd[48];
    snprintf(cmd, sizeof cmd, "input keyevent %d", code);
    if (!checked)
        return act_run_input(c, cmd, cmd, core_deadline(o->timeout_ms));
    return run_input(c, cmd, o);
}

int adbc_act_press(adbc_conn *c, int code, const adbc_act_opts *opts)
{
    return press(c, code, opts, 1);
}

int adbc_act_back(adbc_conn *c, const adbc_act_opts *opts)
{
    return press(c, 4, opts, 0);
}

int adbc_act_home(adbc_conn *c, const adbc_act_opts *opts)
{
    return press(c, 3, opts, 0);
}

/* ---- acts on refs ------------------------------------------------------------- */

static int tap_cmd(char **cmd, const adbc_ui_ref *at, void *user)
{
    (void)user;
    int rc = check_point(at->x, at->y, "the element's tap");
    if (rc < 0)
        return rc;
    char s[64];
    snprintf(s, sizeof s, "input tap %d %d", at->x, at->y);
    return dup_cmd(cmd, s);
}

int adbc_act_tap(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
                 const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    return act_on_ref(where, c, ref, o, core_deadline(o->timeout_ms), tap_cmd, NULL);
}

static int hold_cmd(char **cmd, const adbc_ui_ref *at, void *user)
{
    int ms = *(const int *)user;
    int rc = check_point(at->x, at->y, "the element's long press");
    if (rc < 0)
        return rc;
    char s[96];
    snprintf(s, sizeof s, "input swipe %d %d %d %d %d", at->x, at->y, at->x, at->y, ms);
    return dup_cmd(cmd, s);
}

int adbc_act_long_press(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
                        const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    int rc = check_ms(o->long_press_ms, "long press");
    if (rc < 0)
        return rc;
    int ms = o->long_press_ms;
    return act_on_ref(where, c, ref, o, core_deadline(o->timeout_ms), hold_cmd, &ms);
}

typedef struct scroll_job {
    adbc_dir dir;
    int ms;
    int sx, sy;            /* the swipe's start, for where */
} scroll_job;

static int scroll_cmd(char **cmd, const adbc_ui_ref *at, void *user)
{
    scroll_job *j = user;
    /* A list partly above or left of the screen: scroll in its visible part. */
    int ex, ey;
    int rc = adbc_scroll_points(&j->sx, &j->sy, &ex, &ey, at->x1 < 0 ? 0 : at->x1,
                                at->y1 < 0 ? 0 : at->y1, at->x2, at->y2, j->dir);
    if (rc == 0)
        rc = check_point(j->sx, j->sy, "scroll start");
    if (rc == 0)
        rc = check_point(ex, ey, "scroll end");
    if (rc < 0)
        return rc;
    char s[96];
    snprintf(s, sizeof s, "input swipe %d %d %d %d %d", j->sx, j->sy, ex, ey, j->ms);
    return dup_cmd(cmd, s);
}

int adbc_act_scroll(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, adbc_dir dir,
                    const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    int rc = check_ms(o->scroll_ms, "scroll");
    if (rc < 0)
        return rc;
    if (dir < ADBC_DIR_UP || dir > ADBC_DIR_RIGHT)
        return core_fail(ADBC_EINVAL, "unknown scroll direction %d", (int)dir);
    scroll_job j = {.dir = dir, .ms = o->scroll_ms};
    rc = act_on_ref(where, c, ref, o, core_deadline(o->timeout_ms), scroll_cmd, &j);
    if (rc == 0 && where) {
        where->x = j.sx;
        where->y = j.sy;
    }
    return rc;
}

/* The grid's cells are taps too; kept here so act_grid.c stays free of
 * gestures. */
int adbc_act_tap_grid(adbc_act_where *where, adbc_conn *c, const char *cell,
                      const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c || !cell)
        return core_fail(ADBC_EINVAL, "adbc_act_tap_grid: c and cell must not be NULL");
    int64_t deadline = core_deadline(o->timeout_ms);
    adbc_grid g;
    int x, y;
    adbc_act_opts lo = *o;
    lo.timeout_ms = act_left(deadline);
    int rc = adbc_act_grid(&g, c, &lo);
    if (rc == 0)
        rc = adbc_grid_cell(&x, &y, &g, cell);
    if (rc < 0)
        return rc;
    if (where) {
        where->x = x;
        where->y = y;
        where->ref = 0;
        where->how = ADBC_ACT_UNVERIFIED;
    }
    lo.timeout_ms = act_left(deadline);
    return adbc_act_tap_xy(c, x, y, &lo);
}
