/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation wrappers.
 *
 * All library allocations pass through here so a test can make the Nth one
 * fail (core_test_fail_alloc_at) and check that every caller copes. */
#include "core/internal.h"

#include "adbc/alloc.h"

#include <stdlib.h>
#include <string.h>

/* Fault injection: when > 0, the allocation that brings the counter to this
 * value fails (and every later one too, if sticky). Process-wide and atomic
 * so threaded tests count every allocation. */
static _Atomic long fail_at;
static _Atomic long alloc_count;

void core_test_fail_alloc_at(long n)
{
    alloc_count = 0;
    fail_at = n;
}

long core_test_alloc_count(void)
{
    return alloc_count;
}

static int should_fail(void)
{
    long f = fail_at;
    if (f <= 0)
        return 0;
    return ++alloc_count >= f;
}

void *core_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *core_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *core_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

char *core_strndup(const char *s, size_t n)
{
    char *d = core_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *core_strdup(const char *s)
{
    return core_strndup(s, strlen(s));
}

void core_free(void *p)
{
    free(p);
}

void adbc_free(void *p)
{
    core_free(p);
}
