/* SPDX-License-Identifier: Apache-2.0 */
/* Screenshot benchmark: raw frame + PNG encoded by adbc on the host, against
 * PNG encoded on the device (`screencap -p`), for a 1080x2400 frame served
 * by the test device.
 *
 *   bench_screencap [ROUNDS]        (ADBC_BUILD_DIR: where adbc-testdevice is)
 *
 * The test device's screencap stand-in serves the raw frame as it is, and
 * for -p encodes it then and there (zlib level 6, as a phone's encoder), so
 * both paths pay for their encoding inside the measured time. The "device"
 * here is this computer: a phone encodes several times slower, which only
 * widens the gap. Prints the median of ROUNDS (default 7) per figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/act.h"
#include "adbc/shell.h"
#include "unit/test_act_td.h"
#include "bench/bench_stats.h"

#define W 1080
#define H 2400

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void put(uint8_t *px, int x, int y, uint8_t r, uint8_t g, uint8_t b)
{
    uint8_t *p = px + ((size_t)y * W + x) * 4;
    p[0] = r;
    p[1] = g;
    p[2] = b;
    p[3] = 0xff;
}

/* A screen-like frame: status bar, a list of rows with an avatar and two
 * lines of glyph-like strokes, and a photo-like band of gradients and
 * noise (the part no encoder compresses well). 16-byte header, RGBA. */
static uint8_t *make_screen(size_t *len)
{
    *len = 16 + (size_t)W * H * 4;
    uint8_t *d = malloc(*len);
    uint32_t hdr[4] = {W, H, 1, 0};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            d[i * 4 + b] = (uint8_t)(hdr[i] >> (8 * b));
    uint8_t *px = d + 16;
    uint32_t s = 12345;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            put(px, x, y, 0xff, 0xff, 0xff);
    for (int y = 0; y < 80; y++)
        for (int x = 0; x < W; x++)
            put(px, x, y, 0x20, 0x21, 0x24);
    /* photo band */
    for (int y = 300; y < 900; y++)
        for (int x = 0; x < W; x++) {
            int n = (int)(rnd(&s) % 24);
            put(px, x, y, (uint8_t)(x * 200 / W + n), (uint8_t)(y % 256 / 2 + 60 + n),
                (uint8_t)(160 - x / 9 + n));
        }
    /* list rows */
    for (int row = 0; row < 7; row++) {
        int top = 960 + row * 200;
        for (int y = top + 30; y < top + 150; y++)
            for (int x = 40; x < 160; x++) {
                int dx = x - 100, dy = y - (top + 90);
                if (dx * dx + dy * dy < 3600)
                    put(px, x, y, (uint8_t)(60 * row), (uint8_t)(120 + dx), (uint8_t)(200 - dy));
            }
        for (int line = 0; line < 2; line++) {
            int base = top + 50 + line * 60, x = 200;
            while (x < 1000) {
                int gw = 10 + (int)(rnd(&s) % 14);
                if (rnd(&s) % 7 == 0) { /* a space */
                    x += 18;
                    continue;
                }
                for (int k = 0; k < 6; k++) { /* strokes of one glyph */
                    int sx = x + (int)(rnd(&s) % (unsigned)gw), sy = base + (int)(rnd(&s) % 30);
                    int vertical = rnd(&s) & 1;
                    for (int t = 0; t < 12; t++) {
                        int px_ = vertical ? sx : sx + t / 2, py = vertical ? sy + t / 2 : sy;
                        if (px_ < W && py < H)
                            put(px, px_, py, line ? 0x5f : 0x20, line ? 0x63 : 0x21,
                                line ? 0x68 : 0x24);
                    }
                }
                x += gw + 3;
            }
        }
        for (int x = 0; x < W; x++)
            put(px, x, top + 199, 0xe0, 0xe0, 0xe0);
    }
    return d;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: bench_screencap [ROUNDS 1..1000]\n");
        return 2;
    }
    td dev;
    if (td_start(&dev, NULL) != 0) {
        fprintf(stderr, "bench_screencap: the test device did not start (set ADBC_BUILD_DIR)\n");
        td_stop(&dev);
        return 1;
    }
    size_t rawlen;
    uint8_t *raw = make_screen(&rawlen);
    td_put(&dev, "screencap.raw", raw, rawlen);

    double *t_raw = calloc((size_t)rounds, sizeof(double));
    double *t_dev = calloc((size_t)rounds, sizeof(double));
    double *t_xfer = calloc((size_t)rounds, sizeof(double));
    double *t_enc = calloc((size_t)rounds, sizeof(double));
    double *t_denc = calloc((size_t)rounds, sizeof(double));
    double *t_enc6 = calloc((size_t)rounds, sizeof(double));
    size_t png_host = 0, png_dev = 0, png6 = 0;
    int failed = 0;
    adbc_frame f;
    if (adbc_frame_parse(&f, raw, rawlen) != 0) {
        fprintf(stderr, "bench_screencap: %s\n", adbc_last_error());
        return 1;
    }
    for (int i = 0; i < rounds && !failed; i++) {
        uint8_t *png;
        size_t len;
        /* alternate so drift in the machine's load hits both the same */
        double t0 = now_ms();
        if (adbc_screenshot(&png, &len, dev.conn, ADBC_SHOT_RAW, 60000) != 0) {
            failed = 1;
            break;
        }
        t_raw[i] = now_ms() - t0;
        png_host = len;
        adbc_free(png);
        t0 = now_ms();
        if (adbc_screenshot(&png, &len, dev.conn, ADBC_SHOT_DEVICE_PNG, 60000) != 0) {
            failed = 1;
            break;
        }
        t_dev[i] = now_ms() - t0;
        png_dev = len;
        adbc_free(png);
        /* the parts: raw bytes over the stream; encoding on each side */
        adbc_run_result r;
        t0 = now_ms();
        if (adbc_run(&r, dev.conn, ADBC_SHELL_EXEC, "screencap", NULL, 0, 64u << 20, 60000) != 0 ||
            r.out_len != rawlen) {
            failed = 1;
            break;
        }
        t_xfer[i] = now_ms() - t0;
        adbc_run_result_clear(&r);
        t0 = now_ms();
        adbc_frame_png(&png, &len, &f, 1);
        t_enc[i] = now_ms() - t0;
        adbc_free(png);
        t0 = now_ms();
        adbc_frame_png(&png, &len, &f, 6);
        t_enc6[i] = now_ms() - t0;
        png6 = len;
        adbc_free(png);
        t0 = now_ms();
        if (adbc_run(&r, dev.conn, ADBC_SHELL_EXEC, "screencap -p > /dev/null", NULL, 0, 0,
                     60000) != 0) {
            failed = 1;
            break;
        }
        t_denc[i] = now_ms() - t0;
        adbc_run_result_clear(&r);
    }
    if (failed) {
        fprintf(stderr, "bench_screencap: %s\n", adbc_last_error());
        td_stop(&dev);
        return 1;
    }
    printf("screenshot of a %dx%d RGBA frame, test device on loopback, median of %d\n", W, H,
           rounds);
    printf("  raw + host PNG (adbc_screenshot RAW)      %8.1f ms  %9zu bytes PNG\n",
           median(t_raw, rounds), png_host);
    printf("  device PNG (adbc_screenshot DEVICE_PNG)   %8.1f ms  %9zu bytes PNG\n",
           median(t_dev, rounds), png_dev);
    printf("  parts: raw frame over exec:               %8.1f ms  %9zu bytes\n",
           median(t_xfer, rounds), rawlen);
    printf("         host encode, zlib 1, up filter     %8.1f ms\n", median(t_enc, rounds));
    printf("         host encode, zlib 6, up filter     %8.1f ms  %9zu bytes PNG\n",
           median(t_enc6, rounds), png6);
    printf("         device encode (screencap -p > /dev/null) %.1f ms\n",
           median(t_denc, rounds));
    free(raw);
    free(t_raw);
    free(t_dev);
    free(t_xfer);
    free(t_enc);
    free(t_denc);
    free(t_enc6);
    td_stop(&dev);
    return 0;
}
