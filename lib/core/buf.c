/* SPDX-License-Identifier: Apache-2.0 */
/* The growable buffer every layer builds text and collects output in.
 *
 * It doubles as it grows and keeps one byte spare, so the contents are
 * always NUL-terminated once anything was added. The first failure (out
 * of memory, or the limit passed) is remembered in err and turns every
 * later call into a no-op: a builder checks once, at the end. */
#include "core/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int core_buf_reserve(core_buf *b, size_t more)
{
    if (b->err)
        return b->err;
    if (more < b->cap && b->len + 1 <= b->cap - more)
        return 0;
    if (more > SIZE_MAX - 1 - b->len || (b->limit && b->len + more > b->limit)) {
        b->err = core_fail(ADBC_ELIMIT, "more than %zu bytes", b->limit ? b->limit : SIZE_MAX - 1);
        return b->err;
    }
    size_t need = b->len + more + 1, cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = core_realloc(b->p, cap);
    if (!p) {
        b->err = core_fail(ADBC_ENOMEM, "out of memory (%zu bytes)", cap);
        return b->err;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void core_buf_add_slow(core_buf *b, const void *s, size_t n)
{
    if (core_buf_reserve(b, n) != 0)
        return;
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void core_buf_puts(core_buf *b, const char *s)
{
    core_buf_add(b, s, strlen(s));
}

void core_buf_printf(core_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (!b->err)
            b->err = core_fail(ADBC_EINVAL, "bad format \"%.40s\"", fmt);
        return;
    }
    if ((size_t)n < sizeof small) {
        core_buf_add(b, small, (size_t)n);
        return;
    }
    if (core_buf_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int core_buf_take(core_buf *b, char **out, size_t *len)
{
    *out = NULL;
    if (len)
        *len = 0;
    int rc = b->err;
    if (rc == 0 && !b->p)
        core_buf_add(b, "", 0);
    rc = b->err;
    if (rc != 0) {
        core_buf_free(b);
        return rc;
    }
    *out = b->p;
    if (len)
        *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return 0;
}

void core_buf_free(core_buf *b)
{
    core_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->err = 0;
}
