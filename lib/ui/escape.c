/* SPDX-License-Identifier: Apache-2.0 */
/* Escaping for the snapshot text and JSON: one node is always one line.
 *
 * Both outputs share the rules of every JSON string adbc writes
 * (portable_json_unit): backslash and double quote are escaped, newline,
 * carriage return and tab get their short forms, and every other control
 * character (C0, DEL, and the C1 range U+0080..U+009F) becomes \u00XX.
 * Everything else, CJK and emoji included, is copied as UTF-8; the parser
 * has already made it valid. The output is valid JSON string content too.
 * What is here of its own is speed: runs of plain bytes are skipped a word
 * at a time. */
#include "ui/ui_internal.h"
#include "portable/portable.h"

#include <string.h>

static inline int plain(unsigned char c)
{
    return c >= 0x20 && c != '"' && c != '\\' && c != 0x7f && c != 0xc2;
}

/* Length of the run of plain bytes at s[0..n), a word at a time. */
static inline size_t plain_run(const unsigned char *s, size_t n)
{
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
#define HAS(x) (((x) - ones) & ~(x) & highs)
    while (n - i >= 8) {
        uint64_t w, q, b, d, c;
        memcpy(&w, s + i, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        d = w ^ (ones * 0x7f);
        c = w ^ (ones * 0xc2);
        /* bytes below 0x20 (ASCII ones: the high bit is clear) */
        uint64_t low = (w - ones * 0x20) & ~w & highs;
        if (low | HAS(q) | HAS(b) | HAS(d) | HAS(c))
            break;
        i += 8;
    }
#undef HAS
#endif
    while (i < n && plain(s[i]))
        i++;
    return i;
}

size_t ui_escape_len(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t out = n;
    for (size_t i = 0; i < n;) {
        i += plain_run(s + i, n - i);
        if (i >= n)
            break;
        char e[6];
        size_t span, u = portable_json_unit(s + i, n - i, e, &span);
        if (u)
            out += u - span;
        i += span;
    }
    return out;
}

char *ui_escape(char *dst, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    while (i < n) {
        i += plain_run(s + i, n - i);
        if (i >= n)
            break;
        char e[6];
        size_t span, u = portable_json_unit(s + i, n - i, e, &span);
        if (!u) {
            i += span;
            continue;
        }
        memcpy(dst, s + run, i - run);
        dst += i - run;
        memcpy(dst, e, u);
        dst += u;
        i += span;
        run = i;
    }
    memcpy(dst, s + run, n - run);
    return dst + (n - run);
}
