/* SPDX-License-Identifier: Apache-2.0 */
/* Property test of adbc-snap's JSON string escaper (tools/adbc-snap/json.c,
 * included here): for 200,000 random byte strings, biased towards what
 * breaks escapers (bytes >= 0x80, truncated and overlong UTF-8 sequences,
 * surrogates, control characters, quotes, backslashes), the output is
 *  - valid UTF-8 with no raw control character,
 *  - one JSON string with only the escapes JSON allows,
 *  - and decodes to the input with each byte that is not part of a valid
 *    UTF-8 sequence replaced by U+FFFD (the documented rule),
 * checked against a decoder and a UTF-8 validator written independently here
 * (issue 13, item 9: a class of bug, not one case). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../tools/adbc-snap/json.c"
#include "t.h"

/* Length of a valid UTF-8 sequence at p (Unicode table 3-7), 0 if none. */
static size_t ref_utf8(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c <= 0x7f)
        return 1;
    unsigned lo = 0x80, hi = 0xbf;
    size_t len;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

/* What the rule says the decoded string is (UTF-8 bytes). */
static size_t expected(const unsigned char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t l = ref_utf8(in + i, n - i);
        if (!l) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(out + o, in + i, l);
            o += l;
            i += l;
        }
    }
    return o;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decode one JSON string literal (strict); -1 when it is not one. */
static long decode(const unsigned char *s, size_t n, unsigned char *out)
{
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return -1;
    size_t o = 0;
    for (size_t i = 1; i < n - 1;) {
        unsigned c = s[i];
        if (c < 0x20 || c == 0x7f)
            return -1; /* raw control character */
        if (c == '"')
            return -1; /* unescaped quote inside */
        if (c != '\\') {
            size_t l = ref_utf8(s + i, n - 1 - i);
            if (!l)
                return -1; /* output not valid UTF-8 */
            memcpy(out + o, s + i, l);
            o += l;
            i += l;
            continue;
        }
        if (i + 1 >= n - 1)
            return -1;
        unsigned e = s[i + 1];
        const char *simple = strchr("\"\\/bfnrt", (int)e);
        if (e && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            out[o++] = (unsigned char)map[simple - "\"\\/bfnrt"];
            i += 2;
            continue;
        }
        if (e != 'u' || i + 6 > n - 1)
            return -1;
        unsigned v = 0;
        for (int k = 0; k < 4; k++) {
            int h = hexval(s[i + 2 + k]);
            if (h < 0)
                return -1;
            v = v << 4 | (unsigned)h;
        }
        if (v >= 0xd800 && v <= 0xdfff)
            return -1; /* the escaper has no reason to emit surrogates */
        if (v < 0x80) {
            out[o++] = (unsigned char)v;
        } else if (v < 0x800) {
            out[o++] = (unsigned char)(0xc0 | v >> 6);
            out[o++] = (unsigned char)(0x80 | (v & 0x3f));
        } else {
            out[o++] = (unsigned char)(0xe0 | v >> 12);
            out[o++] = (unsigned char)(0x80 | (v >> 6 & 0x3f));
            out[o++] = (unsigned char)(0x80 | (v & 0x3f));
        }
        i += 6;
    }
    return (long)o;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static unsigned char pick(void)
{
    static const unsigned char interesting[] = {
        0x00, 0x01, 0x07, 0x08, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x20, '"', '\\', '/', 0x7f,
        0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xfe, 0xff};
    switch (rnd(4)) {
    case 0: return interesting[rnd(sizeof interesting)];
    case 1: return (unsigned char)(0x80 + rnd(0x40)); /* continuation bytes */
    case 2: return (unsigned char)rnd(256);
    default: return (unsigned char)(0x20 + rnd(0x5f));
    }
}

TEST(escaper_output_is_valid_json_and_follows_the_rule)
{
    enum { RUNS = 200000, MAXLEN = 48 };
    unsigned char in[MAXLEN], want[MAXLEN * 3], got[MAXLEN * 6 + 8];
    long bad = 0;
    for (int r = 0; r < RUNS; r++) {
        size_t n = rnd(MAXLEN + 1);
        for (size_t i = 0; i < n; i++)
            in[i] = pick();
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CHECK(f != NULL);
        snap_json_strn(f, (const char *)in, n);
        fclose(f);
        size_t wl = expected(in, n, want);
        long gl = decode((const unsigned char *)buf, len, got);
        if (gl != (long)wl || memcmp(got, want, wl) != 0) {
            if (bad++ < 3) {
                fprintf(stderr, "  input:");
                for (size_t i = 0; i < n; i++)
                    fprintf(stderr, " %02x", in[i]);
                fprintf(stderr, "\n  output: %s\n", buf);
            }
        }
        free(buf);
    }
    printf("  %d random strings: %ld outputs broke the rule\n", RUNS, bad);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    RUN(escaper_output_is_valid_json_and_follows_the_rule);
    return T_DONE();
}
