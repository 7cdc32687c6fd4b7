/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 validation, the one decoder the tools share: what a front end
 * prints or answers must be UTF-8 even when a device, a network responder
 * or a client sent bytes that are not. */
#include "ops_core.h"

#include <string.h>

size_t ops_utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0)
        len = 2, v = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        len = 3, v = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return len;
}

size_t ops_utf8_bad(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t l = ops_utf8_len(p + i, len - i);
        if (!l)
            return i;
        i += l;
    }
    return len;
}

void ops_utf8_fix(char *s)
{
    size_t len = strlen(s), i = 0;
    while ((i += ops_utf8_bad(s + i, len - i)) < len)
        s[i++] = '?';
}
