/* SPDX-License-Identifier: Apache-2.0 */
/* Set-of-marks: the screenshot with every ref's box drawn and its number
 * written in a filled tab at the box's top-left corner, the picture vision
 * models are given beside the snapshot. Ref N is drawn in colour
 * marks_palette[(N - 1) % 8]; lines are max(2, width / 360) px thick and the
 * digits (a 3x5 font) max(2, width / 270) px per dot. The frame is turned
 * into RGB once, drawn on, and encoded by adbc's PNG encoder. adbc-serve's
 * screenshot?marks=1 and the agent's vision both draw it here. */
#include "ops_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/error.h"
#include "adbc/shell.h"

static const uint8_t marks_palette[8][3] = {{230, 25, 75},  {60, 180, 75}, {0, 130, 200},
                                     {245, 130, 48}, {145, 30, 180}, {0, 160, 160},
                                     {240, 50, 230}, {128, 128, 0}};

/* 3x5 digits, rows top to bottom, 3 bits each (MSB left). */
static const uint8_t digits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};

typedef struct canvas {
    uint8_t *px;
    int w, h;
} canvas;

static void fill(canvas *c, int x1, int y1, int x2, int y2, const uint8_t rgb[3])
{
    if (x1 < 0)
        x1 = 0;
    if (y1 < 0)
        y1 = 0;
    if (x2 > c->w)
        x2 = c->w;
    if (y2 > c->h)
        y2 = c->h;
    for (int y = y1; y < y2; y++)
        for (int x = x1; x < x2; x++)
            memcpy(c->px + ((size_t)y * c->w + x) * 3, rgb, 3);
}

static void to_rgb(uint8_t *dst, const adbc_frame *f)
{
    size_t n = (size_t)f->width * f->height;
    const uint8_t *s = f->pixels;
    for (size_t i = 0; i < n; i++, dst += 3) {
        switch (f->format) {
        case 1:
        case 2: memcpy(dst, s + 4 * i, 3); break;
        case 5:
            dst[0] = s[4 * i + 2];
            dst[1] = s[4 * i + 1];
            dst[2] = s[4 * i];
            break;
        case 3: memcpy(dst, s + 3 * i, 3); break;
        default: {
            unsigned v = (unsigned)s[2 * i] | (unsigned)s[2 * i + 1] << 8;
            dst[0] = (uint8_t)((v >> 11 & 31) * 255 / 31);
            dst[1] = (uint8_t)((v >> 5 & 63) * 255 / 63);
            dst[2] = (uint8_t)((v & 31) * 255 / 31);
        }
        }
    }
}

static void mark(canvas *c, const adbc_ui_ref *r, int line, int dot)
{
    static const uint8_t white[3] = {255, 255, 255};
    const uint8_t *col = marks_palette[(r->ref - 1) % 8];
    int x1 = r->x1, y1 = r->y1, x2 = r->x2, y2 = r->y2;
    fill(c, x1, y1, x2, y1 + line, col);
    fill(c, x1, y2 - line, x2, y2, col);
    fill(c, x1, y1, x1 + line, y2, col);
    fill(c, x2 - line, y1, x2, y2, col);
    char num[16];
    int nd = snprintf(num, sizeof num, "%d", r->ref);
    int tw = nd * 4 * dot + dot, th = 7 * dot;
    fill(c, x1, y1, x1 + tw, y1 + th, col);
    for (int i = 0; i < nd; i++)
        for (int row = 0; row < 5; row++)
            for (int bit = 0; bit < 3; bit++)
                if (digits[num[i] - '0'][row] >> (2 - bit) & 1) {
                    int px = x1 + dot + i * 4 * dot + bit * dot, py = y1 + dot + row * dot;
                    fill(c, px, py, px + dot, py + dot, white);
                }
}

int ops_marks_png(uint8_t **png, size_t *len, const adbc_frame *f, const adbc_ui_snap *snap)
{
    size_t n = (size_t)f->width * f->height * 3;
    canvas c = {malloc(n), (int)f->width, (int)f->height};
    if (!c.px)
        return ADBC_ENOMEM; /* the caller says so */
    to_rgb(c.px, f);
    int line = c.w / 360 > 2 ? c.w / 360 : 2, dot = c.w / 270 > 2 ? c.w / 270 : 2;
    const adbc_ui_reftab *t = adbc_ui_snap_refs(snap);
    size_t nrefs = adbc_ui_reftab_count(t);
    for (size_t i = 1; i <= nrefs; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (r)
            mark(&c, r, line, dot);
    }
    adbc_frame rgb = {.width = f->width, .height = f->height, .format = 3, .header = 12,
                      .pixels = c.px, .pixels_len = n};
    int rc = adbc_frame_png(png, len, &rgb, 1);
    free(c.px);
    return rc;
}

int ops_shot_marked(ops_ctx *c, uint8_t **png, size_t *len)
{
    *png = NULL;
    *len = 0;
    if (!*c->last)
        return ops_fail(&c->err, OPS_ENOREF, "no snapshot to draw: take one first");
    adbc_run_result res;
    memset(&res, 0, sizeof res);
    int rc = adbc_run(&res, c->conn, ADBC_SHELL_EXEC, "screencap 2>/dev/null", NULL, 0,
                      (size_t)512 << 20, ops_remaining(c));
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return ops_fail_adbc(&c->err, rc, "screenshot");
    }
    adbc_frame f;
    if ((rc = adbc_frame_parse(&f, res.out, res.out_len)) < 0)
        ops_fail_adbc(&c->err, rc, "screenshot (raw frame)");
    else if ((rc = ops_marks_png(png, len, &f, *c->last)) < 0)
        ops_fail(&c->err, OPS_EFAIL, "drawing the marks on a %ux%u screen failed (out of "
                 "memory)", f.width, f.height);
    adbc_run_result_clear(&res);
    return rc < 0 ? -1 : 0;
}
