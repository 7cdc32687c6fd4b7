/* SPDX-License-Identifier: Apache-2.0 */
/* Raw screencap frames and their PNG encoding.
 *
 * `screencap -p` spends most of its time in the phone's PNG encoder (zlib
 * at its default level, on one core). `screencap` without -p writes the
 * pixels as they are, and the host, much faster, encodes them here: zlib at
 * level 1 with the "up" filter, which on screen content (large flat areas,
 * repeated rows) compresses about as well as the phone's output for a
 * fraction of the time. The whole image goes into one IDAT chunk: PNG
 * allows chunks up to 2^31-1 bytes and decoders take one as well as many. */
#include "act/act_internal.h"

#include <string.h>
#include <zlib.h>

#include "core/internal.h"

#define FRAME_SIDE_MAX 32768

/* Bytes per pixel of a screencap pixel format; 0 when unknown. */
static unsigned format_bpp(uint32_t format)
{
    switch (format) {
    case 1: /* RGBA_8888 */
    case 2: /* RGBX_8888 */
    case 5: /* BGRA_8888 */
        return 4;
    case 3: /* RGB_888 */
        return 3;
    case 4: /* RGB_565 */
        return 2;
    default: return 0;
    }
}

int adbc_frame_parse(adbc_frame *f, const void *data, size_t len)
{
    if (!f || (!data && len))
        return core_fail(ADBC_EINVAL, "adbc_frame_parse: f and data must not be NULL");
    memset(f, 0, sizeof *f);
    const uint8_t *p = data;
    if (len < 12)
        return core_fail(ADBC_EFORMAT, "screencap gave %zu bytes, less than a raw frame header "
                         "(12): the device may have printed an error", len);
    uint32_t w = core_rd32(p), h = core_rd32(p + 4), fmt = core_rd32(p + 8);
    if (w == 0 || h == 0 || w > FRAME_SIDE_MAX || h > FRAME_SIDE_MAX)
        return core_fail(ADBC_EFORMAT, "screencap header gives a %ux%u frame, which is not a "
                         "screen (sides 1..%d): the output is not a raw frame", w, h,
                         FRAME_SIDE_MAX);
    unsigned bpp = format_bpp(fmt);
    if (!bpp)
        return core_fail(ADBC_EUNSUPPORTED, "screencap pixel format %u is not one adbc decodes "
                         "(1-5: RGBA, RGBX, RGB, RGB565, BGRA): take the screenshot with the "
                         "device's PNG encoder instead (screencap -p)", fmt);
    uint64_t need = (uint64_t)w * h * bpp; /* at most 2^32: no overflow in 64 bits */
    size_t header;
    if (len >= 12 && (uint64_t)(len - 12) == need)
        header = 12;
    else if (len >= 16 && (uint64_t)(len - 16) == need)
        header = 16;
    else
        return core_fail(ADBC_EFORMAT, "screencap gave %zu bytes; a %ux%u frame of format %u "
                         "needs 12 or 16 header bytes plus %llu: the frame is cut short or "
                         "has extra output", len, w, h, fmt, (unsigned long long)need);
    f->width = w;
    f->height = h;
    f->format = fmt;
    f->header = header;
    f->colorspace = header == 16 ? core_rd32(p + 12) : 0;
    f->pixels = p + header;
    f->pixels_len = (size_t)need;
    return 0;
}

/* Any pixel with alpha below 255? (formats with an alpha byte) */
static int has_alpha(const adbc_frame *f)
{
    if (f->format != 1 && f->format != 5)
        return 0;
    const uint8_t *a = f->pixels + 3;
    size_t n = (size_t)f->width * f->height;
    uint8_t all = 0xff;
    for (size_t i = 0; i < n; i++)
        all &= a[i * 4];
    return all != 0xff;
}

/* One row of the frame as PNG samples (RGB or RGBA). */
static void convert_row(uint8_t *dst, const uint8_t *src, const adbc_frame *f, int alpha)
{
    uint32_t w = f->width;
    switch (f->format) {
    case 1:
    case 2:
        if (alpha)
            memcpy(dst, src, (size_t)w * 4);
        else
            for (uint32_t x = 0; x < w; x++, src += 4, dst += 3) {
                dst[0] = src[0];
                dst[1] = src[1];
                dst[2] = src[2];
            }
        break;
    case 5:
        for (uint32_t x = 0; x < w; x++, src += 4) {
            *dst++ = src[2];
            *dst++ = src[1];
            *dst++ = src[0];
            if (alpha)
                *dst++ = src[3];
        }
        break;
    case 3: memcpy(dst, src, (size_t)w * 3); break;
    case 4:
        for (uint32_t x = 0; x < w; x++, src += 2, dst += 3) {
            unsigned v = (unsigned)src[0] | (unsigned)src[1] << 8;
            unsigned r = v >> 11 & 31, g = v >> 5 & 63, b = v & 31;
            dst[0] = (uint8_t)(r << 3 | r >> 2);
            dst[1] = (uint8_t)(g << 2 | g >> 4);
            dst[2] = (uint8_t)(b << 3 | b >> 2);
        }
        break;
    }
}

static void put_chunk_head(uint8_t *p, uint32_t len, const char *type)
{
    p[0] = (uint8_t)(len >> 24);
    p[1] = (uint8_t)(len >> 16);
    p[2] = (uint8_t)(len >> 8);
    p[3] = (uint8_t)len;
    memcpy(p + 4, type, 4);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* CRC of a chunk's type and data, written after them. */
static void put_crc(uint8_t *chunk, uint32_t len)
{
    uLong crc = crc32(0L, chunk + 4, len + 4);
    put_be32(chunk + 8 + len, (uint32_t)crc);
}

int adbc_frame_png(uint8_t **png, size_t *len, const adbc_frame *f, int level)
{
    if (!png || !f || !f->pixels)
        return core_fail(ADBC_EINVAL, "adbc_frame_png: png and f must not be NULL");
    *png = NULL;
    if (len)
        *len = 0;
    unsigned bpp = format_bpp(f->format);
    if (!bpp || f->width == 0 || f->height == 0 || f->width > FRAME_SIDE_MAX ||
        f->height > FRAME_SIDE_MAX || f->pixels_len != (size_t)f->width * f->height * bpp)
        return core_fail(ADBC_EINVAL, "adbc_frame_png: the frame was not made by "
                         "adbc_frame_parse");
    if (level < 0 || level > 9)
        return core_fail(ADBC_EINVAL, "zlib level %d is outside 0..9", level);
    int alpha = has_alpha(f);
    unsigned chans = alpha ? 4 : 3;
    size_t row = (size_t)f->width * chans;
    uint64_t raw = (uint64_t)(row + 1) * f->height;

    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return core_fail(ADBC_ENOMEM, "zlib could not start (out of memory)");
    uint64_t bound = deflateBound(&z, (uLong)raw);
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t head = 8 + 25 + 8; /* signature, IHDR chunk, IDAT head */
    uint64_t cap = head + bound + 4 + 12;
    if (bound > 0x7fffffffu || cap > SIZE_MAX) {
        deflateEnd(&z);
        return core_fail(ADBC_EINVAL, "a %ux%u frame is too large for one PNG", f->width,
                         f->height);
    }
    uint8_t *out = core_malloc((size_t)cap);
    uint8_t *cur = core_malloc(row + 1), *prev = core_calloc(1, row + 1);
    uint8_t *filt = core_malloc(row + 1);
    if (!out || !cur || !prev || !filt) {
        deflateEnd(&z);
        core_free(out);
        core_free(cur);
        core_free(prev);
        core_free(filt);
        return core_fail(ADBC_ENOMEM, "out of memory encoding a %ux%u PNG", f->width, f->height);
    }
    memcpy(out, sig, 8);
    uint8_t *ihdr = out + 8;
    put_chunk_head(ihdr, 13, "IHDR");
    put_be32(ihdr + 8, f->width);
    put_be32(ihdr + 12, f->height);
    ihdr[16] = 8;                 /* bit depth */
    ihdr[17] = alpha ? 6 : 2;     /* colour type: RGBA / RGB */
    ihdr[18] = ihdr[19] = ihdr[20] = 0; /* deflate, adaptive filters, no interlace */
    put_crc(ihdr, 13);
    uint8_t *idat = ihdr + 25;

    z.next_out = idat + 8;
    z.avail_out = (uInt)bound;
    int zrc = Z_OK;
    size_t src_row = (size_t)f->width * bpp;
    for (uint32_t y = 0; y < f->height && zrc == Z_OK; y++) {
        convert_row(cur + 1, f->pixels + (size_t)y * src_row, f, alpha);
        /* "Up" filter: each byte minus the byte above (the first row has a
         * zero row above, as the filter defines). */
        filt[0] = 2;
        for (size_t i = 1; i <= row; i++)
            filt[i] = (uint8_t)(cur[i] - prev[i]);
        z.next_in = filt;
        z.avail_in = (uInt)(row + 1);
        zrc = deflate(&z, y + 1 == f->height ? Z_FINISH : Z_NO_FLUSH);
        if (zrc == Z_STREAM_END && y + 1 == f->height)
            break;
        uint8_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t zlen = (size_t)(bound - z.avail_out);
    deflateEnd(&z);
    core_free(cur);
    core_free(prev);
    core_free(filt);
    if (zrc != Z_STREAM_END) {
        core_free(out);
        return core_fail(ADBC_EIO, "zlib failed encoding the PNG (code %d)", zrc);
    }
    put_chunk_head(idat, (uint32_t)zlen, "IDAT");
    put_crc(idat, (uint32_t)zlen);
    uint8_t *iend = idat + 12 + zlen;
    put_chunk_head(iend, 0, "IEND");
    put_crc(iend, 0);
    size_t total = (size_t)(iend + 12 - out);
    *png = out;
    if (len)
        *len = total;
    return 0;
}

int act_png_check(const uint8_t *p, size_t len, uint32_t *w, uint32_t *h)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len < 8 || memcmp(p, sig, 8) != 0) {
        char shown[81];
        size_t n = len < 80 ? len : 80, k = 0;
        for (size_t i = 0; i < n; i++)
            shown[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.';
        shown[k] = '\0';
        return core_fail(ADBC_EFORMAT, "screencap -p did not give a PNG (%zu bytes: \"%s\")", len,
                         shown);
    }
    if (len < 8 + 25 + 12 || memcmp(p + 12, "IHDR", 4) != 0 ||
        ((uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11]) != 13)
        return core_fail(ADBC_EFORMAT, "screencap -p gave a PNG without its header chunk (%zu "
                         "bytes): the image is cut short", len);
    uint32_t pw = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19];
    uint32_t ph = (uint32_t)p[20] << 24 | (uint32_t)p[21] << 16 | (uint32_t)p[22] << 8 | p[23];
    uint32_t crc = (uint32_t)crc32(0L, p + 12, 17);
    uint32_t want = (uint32_t)p[29] << 24 | (uint32_t)p[30] << 16 | (uint32_t)p[31] << 8 | p[32];
    if (crc != want || pw == 0 || ph == 0 || pw > FRAME_SIDE_MAX || ph > FRAME_SIDE_MAX)
        return core_fail(ADBC_EFORMAT, "screencap -p gave a PNG with a damaged header (%ux%u)",
                         pw, ph);
    if (memcmp(p + len - 8, "IEND", 4) != 0)
        return core_fail(ADBC_EFORMAT, "screencap -p gave a PNG without its end chunk (%zu "
                         "bytes): the image is cut short", len);
    if (w)
        *w = pw;
    if (h)
        *h = ph;
    return 0;
}
