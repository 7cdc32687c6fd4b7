/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 validation, the one decoder the tools share: what a front end
 * prints or answers must be UTF-8 even when a device, a network responder
 * or a client sent bytes that are not. */
#include "ops_core.h"
#include "portable.h"

#include <string.h>

size_t ops_utf8_len(const unsigned char *p, size_t n)
{
    return portable_utf8_len(p, n);
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
