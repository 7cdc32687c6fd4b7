/* SPDX-License-Identifier: Apache-2.0 */
/* Touch and key input through `input` over exec:.
 *
 * Every gesture is one `input` command in one exec round trip. Acts on a
 * ref resolve the ref first (act_verify.c), so with verification on a
 * stale ref sends nothing at all. */
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

static int run_input(adbc_conn *c, const char *cmd, int timeout_ms)
{
    return act_run_ok(c, cmd, cmd, timeout_ms);
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
    return run_input(c, cmd, o->timeout_ms);
}

static int check_ms(int ms, const char *what)
{
    if (ms < 1 || ms > 60000)
        return core_fail(ADBC_EINVAL, "%s duration %d ms is outside 1..60000", what, ms);
    return 0;
}

static int swipe(adbc_conn *c, int x1, int y1, int x2, int y2, int ms, int timeout_ms)
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
    return run_input(c, cmd, timeout_ms);
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
    return swipe(c, x1, y1, x2, y2, ms, o->timeout_ms);
}

int adbc_act_press(adbc_conn *c, int code, const adbc_act_opts *opts)
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
    return run_input(c, cmd, o->timeout_ms);
}

int adbc_act_back(adbc_conn *c, const adbc_act_opts *opts)
{
    return adbc_act_press(c, 4, opts);
}

int adbc_act_home(adbc_conn *c, const adbc_act_opts *opts)
{
    return adbc_act_press(c, 3, opts);
}

/* ---- acts on refs ------------------------------------------------------------- */

int adbc_act_tap(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
                 const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    int64_t deadline = core_deadline(o->timeout_ms);
    const adbc_ui_ref *now;
    adbc_ui_snap *snap;
    int rc = act_resolve(where, &now, &snap, c, ref, o, deadline);
    if (rc < 0)
        return rc;
    int x = now->x, y = now->y;
    adbc_ui_snap_free(snap);
    rc = check_point(x, y, "the element's tap");
    if (rc < 0)
        return rc;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "input tap %d %d", x, y);
    return run_input(c, cmd, act_left(deadline));
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
    int64_t deadline = core_deadline(o->timeout_ms);
    const adbc_ui_ref *now;
    adbc_ui_snap *snap;
    rc = act_resolve(where, &now, &snap, c, ref, o, deadline);
    if (rc < 0)
        return rc;
    int x = now->x, y = now->y;
    adbc_ui_snap_free(snap);
    return swipe(c, x, y, x, y, o->long_press_ms, act_left(deadline));
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
    int64_t deadline = core_deadline(o->timeout_ms);
    const adbc_ui_ref *now;
    adbc_ui_snap *snap;
    rc = act_resolve(where, &now, &snap, c, ref, o, deadline);
    if (rc < 0)
        return rc;
    /* A list partly above or left of the screen: scroll in its visible part. */
    int sx, sy, ex, ey;
    rc = adbc_scroll_points(&sx, &sy, &ex, &ey, now->x1 < 0 ? 0 : now->x1,
                            now->y1 < 0 ? 0 : now->y1, now->x2, now->y2, dir);
    adbc_ui_snap_free(snap);
    if (rc < 0)
        return rc;
    if (where) {
        where->x = sx;
        where->y = sy;
    }
    return swipe(c, sx, sy, ex, ey, o->scroll_ms, act_left(deadline));
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
