/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' copies of lib/core's mechanisms (ops_util.h says why). */
#include "ops_util.h"

#include <errno.h>
#include <time.h>

#include "ops_core.h"

int ops_cond_init(pthread_cond_t *cv)
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

int ops_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return pthread_cond_wait(cv, mu);
    if (ops_now_ms() >= deadline_ms)
        return ETIMEDOUT;
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    return pthread_cond_timedwait(cv, mu, &ts);
}
