/* SPDX-License-Identifier: Apache-2.0 */
/* Plain POSIX pieces with no library state, shared by libadbc (lib/core)
 * and the tools (tools/ops), which see only the public API and so cannot
 * call lib/core: one source for both instead of a copy in each. Static
 * inline, nothing allocated, no error reporting of its own: each side wraps
 * them in its own way of failing (core_fail, errno). The tools' include
 * path holds this folder and no other of lib/ (tests/sh/layers.sh). */
#ifndef ADBC_PORTABLE_H
#define ADBC_PORTABLE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Monotonic milliseconds: the clock every deadline counts on. */
static inline int64_t portable_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Initialise cv so its timed waits count on CLOCK_MONOTONIC: a step of the
 * wall clock neither cuts a wait short nor stretches it. 0 or an errno. */
static inline int portable_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

/* Wait on cv (mu held, cv from portable_cond_init) until signalled or the
 * monotonic clock reaches deadline_ms (< 0: no deadline). 0 when woken
 * (perhaps spuriously), ETIMEDOUT once the deadline has passed. */
static inline int portable_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return pthread_cond_wait(cv, mu);
    if (portable_now_ms() >= deadline_ms)
        return ETIMEDOUT;
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    return pthread_cond_timedwait(cv, mu, &ts);
}

/* The temporary file a whole-or-nothing write of path goes through:
 * ".<name>.adbc-XXXXXX" beside it (the same file system, so the final
 * rename is atomic; the leading dot keeps it out of listings), ready for
 * mkostemp. The size to allocate for it, and the name written into tmp. */
static inline size_t portable_tmp_size(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t blen = strlen(path + dirlen);
    return dirlen + 1 + (blen > 200 ? 200 : blen) + 13 + 1;
}

static inline void portable_tmp_name(char *tmp, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t blen = strlen(path + dirlen);
    if (blen > 200)
        blen = 200; /* stay under NAME_MAX with the suffix */
    snprintf(tmp, size, "%.*s.%.*s.adbc-XXXXXX", (int)dirlen, path, (int)blen, path + dirlen);
}

#endif
