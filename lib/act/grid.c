/* SPDX-License-Identifier: Apache-2.0 */
/* The grid: a way to name any point of the screen when the snapshot has no
 * ref for it (games, canvases, web content), for agents that look at a
 * screenshot. Ten columns A-J keep the letters few; rows are about as tall
 * as a column is wide, so cells are near square and "C5" means the same
 * size of target everywhere on the screen. */
#include "act/act_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define SIDE_MAX 65535

int adbc_grid_make(adbc_grid *g, int width, int height)
{
    if (!g)
        return core_fail(ADBC_EINVAL, "adbc_grid_make: g must not be NULL");
    if (width < ADBC_GRID_COLS || height < 1 || width > SIDE_MAX || height > SIDE_MAX)
        return core_fail(ADBC_EINVAL, "screen size %dx%d is not usable for a grid (width %d..%d, "
                         "height 1..%d)", width, height, ADBC_GRID_COLS, SIDE_MAX, SIDE_MAX);
    g->width = width;
    g->height = height;
    g->cols = ADBC_GRID_COLS;
    /* rows = height / (width / 10), rounded to nearest, at least one */
    long long rows = ((long long)height * ADBC_GRID_COLS + width / 2) / width;
    g->rows = rows < 1 ? 1 : (int)rows;
    return 0;
}

/* Span of cell i of n over a side of length len. */
static void span(int *lo, int *hi, int i, int n, int len)
{
    *lo = (int)((long long)i * len / n);
    *hi = (int)((long long)(i + 1) * len / n) - 1;
}

static int centre(int i, int n, int len)
{
    int lo, hi;
    span(&lo, &hi, i, n, len);
    return (lo + hi) / 2;
}

int adbc_grid_cell(int *x, int *y, const adbc_grid *g, const char *cell)
{
    if (!x || !y || !g || !cell)
        return core_fail(ADBC_EINVAL, "adbc_grid_cell: arguments must not be NULL");
    if (g->cols != ADBC_GRID_COLS || g->rows < 1 || g->width < 1 || g->height < 1)
        return core_fail(ADBC_EINVAL, "the grid was not made with adbc_grid_make");
    char letter = cell[0];
    if (letter >= 'a' && letter <= 'z')
        letter = (char)(letter - 'a' + 'A');
    int col = letter - 'A';
    long row = 0;
    const char *p = cell + (cell[0] ? 1 : 0);
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
        row = row * 10 + (*p - '0');
    if (col < 0 || col >= g->cols || digits == 0 || *p || row < 1 || row > g->rows)
        return core_fail(ADBC_EINVAL,
                         "\"%.20s\" is not a cell of this grid: use a column letter A-J and a row "
                         "number 1-%d, like C5",
                         cell, g->rows);
    *x = centre(col, g->cols, g->width);
    *y = centre((int)row - 1, g->rows, g->height);
    return 0;
}

int adbc_grid_legend(char **out, const adbc_grid *g)
{
    if (!out || !g)
        return core_fail(ADBC_EINVAL, "adbc_grid_legend: out and g must not be NULL");
    *out = NULL;
    if (g->cols != ADBC_GRID_COLS || g->rows < 1 || g->width < 1 || g->height < 1)
        return core_fail(ADBC_EINVAL, "the grid was not made with adbc_grid_make");
    core_buf b = {0};
    core_buf_printf(&b,
                   "grid %dx%d on a %dx%d screen: columns A-%c, rows 1-%d, cells about %dx%d "
                   "px; a cell's tap point is its centre\n",
                   g->cols, g->rows, g->width, g->height, 'A' + g->cols - 1, g->rows,
                   g->width / g->cols, g->height / g->rows);
    for (int i = 0; i < g->cols; i++) {
        int lo, hi;
        span(&lo, &hi, i, g->cols, g->width);
        core_buf_printf(&b, "%c x %d-%d centre %d\n", 'A' + i, lo, hi, (lo + hi) / 2);
    }
    for (int i = 0; i < g->rows; i++) {
        int lo, hi;
        span(&lo, &hi, i, g->rows, g->height);
        core_buf_printf(&b, "%d y %d-%d centre %d\n", i + 1, lo, hi, (lo + hi) / 2);
    }
    return act_buf_take(&b, out);
}

/* "WxH" after a label; 1 when found and sane. */
static int size_after(int *w, int *h, const char *s, size_t len, const char *label)
{
    size_t ll = strlen(label);
    for (size_t i = 0; i + ll <= len; i++) {
        if ((i > 0 && s[i - 1] != '\n') || memcmp(s + i, label, ll) != 0)
            continue;
        const char *p = s + i + ll;
        const char *end = s + len;
        while (p < end && *p == ' ')
            p++;
        long v[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            int digits = 0;
            while (p < end && *p >= '0' && *p <= '9' && digits < 7) {
                v[k] = v[k] * 10 + (*p++ - '0');
                digits++;
            }
            if (!digits)
                return 0;
            if (k == 0) {
                if (p >= end || *p != 'x')
                    return 0;
                p++;
            }
        }
        if (p < end && *p != '\n' && *p != '\r')
            return 0;
        if (v[0] < 1 || v[1] < 1 || v[0] > SIDE_MAX || v[1] > SIDE_MAX)
            return 0;
        *w = (int)v[0];
        *h = (int)v[1];
        return 1;
    }
    return 0;
}

int adbc_wm_size_parse(int *width, int *height, const char *text, size_t len)
{
    if (!width || !height || (!text && len))
        return core_fail(ADBC_EINVAL, "adbc_wm_size_parse: arguments must not be NULL");
    int w, h;
    if (size_after(&w, &h, text, len, "Override size:") ||
        size_after(&w, &h, text, len, "Physical size:")) {
        *width = w;
        *height = h;
        return 0;
    }
    return core_fail(ADBC_EFORMAT, "`wm size` printed no screen size: \"%.100s\"",
                     text ? text : "");
}

int adbc_screen_size(int *width, int *height, adbc_conn *c, int timeout_ms)
{
    if (!width || !height || !c)
        return core_fail(ADBC_EINVAL, "adbc_screen_size: arguments must not be NULL");
    act_out o;
    int rc = act_run(&o, c, "wm size", 0, timeout_ms);
    if (rc < 0)
        return rc;
    rc = adbc_wm_size_parse(width, height, o.text, o.len);
    act_out_free(&o);
    return rc;
}

int adbc_act_grid(adbc_grid *g, adbc_conn *c, const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    int w, h;
    int rc = adbc_screen_size(&w, &h, c, o->timeout_ms);
    if (rc < 0)
        return rc;
    return adbc_grid_make(g, w, h);
}
