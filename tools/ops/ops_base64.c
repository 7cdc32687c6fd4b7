/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 (RFC 4648, with padding): screenshots inlined into JSON answers
 * (adbc-mcp's image content, adbc-serve's ?inline) and images sent to
 * language models. */
#include <stdint.h>
#include <stdlib.h>

#include "ops_core.h"

char *ops_base64(const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *p = data;
    if (!p && n)
        return NULL;
    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    return out;
}
