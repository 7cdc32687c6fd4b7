/* SPDX-License-Identifier: Apache-2.0 */
/* Raw screencap frames and their PNG encoding: header parsing with both
 * header sizes and hostile sizes, and encode -> independent decode round
 * trips for every pixel format. */
#include "t.h"

#include "adbc/act.h"
#include "adbc/error.h"
#include "test_act_png.h"
#include "act/act_internal.h"

void core_test_fail_alloc_at(long n);

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static unsigned bpp_of(uint32_t fmt)
{
    return fmt == 3 ? 3 : fmt == 4 ? 2 : 4;
}

/* A raw frame: header (12 or 16 bytes) then pseudo-random pixels. */
static uint8_t *make_frame(size_t *len, uint32_t w, uint32_t h, uint32_t fmt, size_t header,
                           uint32_t seed, int opaque)
{
    size_t px = (size_t)w * h * bpp_of(fmt);
    uint8_t *d = malloc(header + px);
    wr32(d, w);
    wr32(d + 4, h);
    wr32(d + 8, fmt);
    if (header == 16)
        wr32(d + 12, 143); /* a dataspace value, e.g. Display P3 */
    uint32_t s = seed;
    for (size_t i = 0; i < px; i++) {
        s = s * 1103515245u + 12345u;
        /* mostly flat areas with some noise, like a screen */
        d[header + i] = (i / 97) % 3 == 0 ? (uint8_t)(s >> 16) : (uint8_t)(i / 4000);
    }
    if (opaque && (fmt == 1 || fmt == 5))
        for (size_t i = 3; i < px; i += 4)
            d[header + i] = 0xff;
    *len = header + px;
    return d;
}

TEST(parse_header_sizes)
{
    size_t len;
    uint8_t *d = make_frame(&len, 7, 5, 1, 12, 1, 1);
    adbc_frame f;
    CHECK_EQ_INT(adbc_frame_parse(&f, d, len), 0);
    CHECK_EQ_INT(f.width, 7);
    CHECK_EQ_INT(f.height, 5);
    CHECK_EQ_INT(f.format, 1);
    CHECK_EQ_INT(f.header, 12);
    CHECK_EQ_INT(f.colorspace, 0);
    CHECK(f.pixels == d + 12);
    CHECK_EQ_INT(f.pixels_len, 7 * 5 * 4);
    free(d);
    d = make_frame(&len, 7, 5, 2, 16, 1, 1);
    CHECK_EQ_INT(adbc_frame_parse(&f, d, len), 0);
    CHECK_EQ_INT(f.header, 16);
    CHECK_EQ_INT(f.colorspace, 143);
    CHECK(f.pixels == d + 16);
    free(d);
    for (uint32_t fmt = 1; fmt <= 5; fmt++) {
        d = make_frame(&len, 3, 2, fmt, 16, fmt, 0);
        CHECK_EQ_INT(adbc_frame_parse(&f, d, len), 0);
        CHECK_EQ_INT(f.pixels_len, 3 * 2 * bpp_of(fmt));
        free(d);
    }
}

TEST(parse_hostile)
{
    size_t len;
    uint8_t *d = make_frame(&len, 4, 4, 1, 16, 3, 1);
    adbc_frame f;
    /* one byte short, one too many, between the two header sizes */
    CHECK_EQ_INT(adbc_frame_parse(&f, d, len - 1), ADBC_EFORMAT);
    CHECK_EQ_INT(adbc_frame_parse(&f, d, len - 3), ADBC_EFORMAT);
    CHECK_EQ_INT(adbc_frame_parse(&f, d, 11), ADBC_EFORMAT);
    CHECK_EQ_INT(adbc_frame_parse(&f, d, 0), ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "less than a raw frame header"));
    uint8_t big[32];
    memcpy(big, d, 16);
    free(d);
    d = NULL;
    /* zero and enormous sides, and sizes whose product overflows 32 bits */
    const uint32_t sizes[][2] = {{0, 10},     {10, 0},         {32769, 1},
                                 {1, 40000},  {0xffffffffu, 2}, {0x10000, 0x10000},
                                 {32768, 32768}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        wr32(big, sizes[i][0]);
        wr32(big + 4, sizes[i][1]);
        wr32(big + 8, 1);
        CHECK_EQ_INT(adbc_frame_parse(&f, big, sizeof big), ADBC_EFORMAT);
    }
    /* unknown pixel format: unsupported, and the message says what to do */
    wr32(big, 2);
    wr32(big + 4, 2);
    wr32(big + 8, 22); /* RGBA_F16 */
    CHECK_EQ_INT(adbc_frame_parse(&f, big, sizeof big), ADBC_EUNSUPPORTED);
    CHECK(strstr(adbc_last_error(), "screencap -p"));
    /* text where a frame should be */
    const char *msg = "/system/bin/sh: screencap: inaccessible or not found\n";
    CHECK(adbc_frame_parse(&f, msg, strlen(msg)) < 0);
}

/* What the PNG should hold for pixel i of a frame. */
static void expect_px(uint8_t *out, const uint8_t *src, uint32_t fmt, size_t i, int alpha)
{
    const uint8_t *p = src + i * bpp_of(fmt);
    switch (fmt) {
    case 1:
    case 2: memcpy(out, p, alpha ? 4 : 3); break;
    case 5:
        out[0] = p[2];
        out[1] = p[1];
        out[2] = p[0];
        if (alpha)
            out[3] = p[3];
        break;
    case 3: memcpy(out, p, 3); break;
    case 4: {
        unsigned v = p[0] | p[1] << 8;
        unsigned r = v >> 11, g = v >> 5 & 63, b = v & 31;
        out[0] = (uint8_t)(r << 3 | r >> 2);
        out[1] = (uint8_t)(g << 2 | g >> 4);
        out[2] = (uint8_t)(b << 3 | b >> 2);
        break;
    }
    }
}

static int round_trip(uint32_t w, uint32_t h, uint32_t fmt, size_t header, int opaque, int level)
{
    size_t len;
    uint8_t *d = make_frame(&len, w, h, fmt, header, w * 31 + h + fmt, opaque);
    adbc_frame f;
    int bad = 0;
    uint8_t *png = NULL, *pix = NULL;
    size_t plen;
    if (adbc_frame_parse(&f, d, len) != 0 || adbc_frame_png(&png, &plen, &f, level) != 0) {
        bad = 1;
        goto out;
    }
    if (act_png_check(png, plen, NULL, NULL) != 0) {
        bad = 2;
        goto out;
    }
    uint32_t pw = 0, ph = 0;
    int chans = 0;
    int rc = tpng_decode(png, plen, &pw, &ph, &chans, &pix);
    if (rc != 0 || pw != w || ph != h) {
        fprintf(stderr, "  decode %d, %ux%u\n", rc, pw, ph);
        bad = 3;
        goto out;
    }
    int alpha = (fmt == 1 || fmt == 5) && !opaque;
    if (chans != (alpha ? 4 : 3)) {
        bad = 4;
        goto out;
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint8_t want[4];
        expect_px(want, d + header, fmt, i, alpha);
        if (memcmp(want, pix + i * chans, (size_t)chans) != 0) {
            fprintf(stderr, "  fmt %u pixel %zu differs\n", fmt, i);
            bad = 5;
            goto out;
        }
    }
out:
    free(d);
    adbc_free(png);
    free(pix);
    return bad;
}

TEST(png_round_trip_every_format)
{
    for (uint32_t fmt = 1; fmt <= 5; fmt++) {
        CHECK_EQ_INT(round_trip(1, 1, fmt, 12, 1, 1), 0);
        CHECK_EQ_INT(round_trip(37, 23, fmt, 12, 1, 1), 0);
        CHECK_EQ_INT(round_trip(64, 3, fmt, 16, 0, 1), 0);
        CHECK_EQ_INT(round_trip(5, 90, fmt, 16, 0, 9), 0);
        CHECK_EQ_INT(round_trip(9, 9, fmt, 12, 0, 0), 0);
    }
}

TEST(png_screen_sized)
{
    /* a 1080x2400 frame encodes, decodes to the same pixels, and is far
     * smaller than the raw pixels (screen content compresses) */
    CHECK_EQ_INT(round_trip(1080, 2400, 1, 16, 1, 1), 0);
}

TEST(png_bad_args)
{
    adbc_frame f = {0};
    uint8_t *png = (uint8_t *)1;
    size_t len = 5;
    CHECK_EQ_INT(adbc_frame_png(&png, &len, &f, 1), ADBC_EINVAL);
    size_t n;
    uint8_t *d = make_frame(&n, 2, 2, 1, 12, 9, 1);
    CHECK_EQ_INT(adbc_frame_parse(&f, d, n), 0);
    CHECK_EQ_INT(adbc_frame_png(&png, &len, &f, 10), ADBC_EINVAL);
    f.pixels_len--; /* not what parse made */
    CHECK_EQ_INT(adbc_frame_png(&png, &len, &f, 1), ADBC_EINVAL);
    free(d);
}

TEST(png_check_catches_damage)
{
    size_t n, plen;
    uint8_t *d = make_frame(&n, 8, 8, 2, 12, 4, 1), *png;
    adbc_frame f;
    CHECK_EQ_INT(adbc_frame_parse(&f, d, n), 0);
    CHECK_EQ_INT(adbc_frame_png(&png, &plen, &f, 1), 0);
    uint32_t w, h;
    CHECK_EQ_INT(act_png_check(png, plen, &w, &h), 0);
    CHECK_EQ_INT(w, 8);
    CHECK_EQ_INT(h, 8);
    CHECK_EQ_INT(act_png_check(png, plen - 5, NULL, NULL), ADBC_EFORMAT); /* cut short */
    CHECK_EQ_INT(act_png_check(png, 20, NULL, NULL), ADBC_EFORMAT);
    png[17] ^= 1; /* width changed: IHDR CRC no longer matches */
    CHECK_EQ_INT(act_png_check(png, plen, NULL, NULL), ADBC_EFORMAT);
    png[17] ^= 1;
    png[0] = 'X';
    CHECK_EQ_INT(act_png_check(png, plen, NULL, NULL), ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "did not give a PNG"));
    const char *txt = "Error: permission denied";
    CHECK_EQ_INT(act_png_check((const uint8_t *)txt, strlen(txt), NULL, NULL), ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "permission denied"));
    adbc_free(png);
    free(d);
}

/* Every allocation of the encoder failing in turn: ADBC_ENOMEM and no PNG. */
TEST(png_allocation_failures)
{
    size_t n;
    uint8_t *d = make_frame(&n, 33, 17, 5, 16, 2, 0);
    adbc_frame f;
    CHECK_EQ_INT(adbc_frame_parse(&f, d, n), 0);
    int done = 0;
    for (long k = 1; k < 100 && !done; k++) {
        uint8_t *png = NULL;
        size_t len = 0;
        core_test_fail_alloc_at(k);
        int rc = adbc_frame_png(&png, &len, &f, 1);
        core_test_fail_alloc_at(0);
        if (rc == 0) {
            done = 1;
            CHECK_EQ_INT(act_png_check(png, len, NULL, NULL), 0);
        } else {
            CHECK_EQ_INT(rc, ADBC_ENOMEM);
            CHECK(png == NULL);
        }
        adbc_free(png);
    }
    free(d);
    CHECK(done);
}

int main(void)
{
    RUN(parse_header_sizes);
    RUN(parse_hostile);
    RUN(png_round_trip_every_format);
    RUN(png_screen_sized);
    RUN(png_bad_args);
    RUN(png_check_catches_damage);
    RUN(png_allocation_failures);
    return T_DONE();
}
