/* SPDX-License-Identifier: Apache-2.0 */
/* Clocks, deadlines and timed waits: the one place time is read.
 *
 * Bounded operations take a call-wide deadline (core_deadline once, at the
 * start) and pass what is left (core_remaining) to each wait inside them;
 * transfers and streams apply their timeout as an inactivity bound instead:
 * each wait gets the whole timeout again once bytes move. */
#include "core/internal.h"
#include "portable/portable.h"

#include <errno.h>
#include <time.h>

int64_t core_now_ms(void)
{
    return portable_now_ms();
}

int64_t core_deadline(int timeout_ms)
{
    if (timeout_ms < 0)
        return -1;
    return core_now_ms() + timeout_ms;
}

int core_remaining(int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t left = deadline - core_now_ms();
    if (left < 0)
        return 0;
    if (left > 0x7fffffff)
        return 0x7fffffff;
    return (int)left;
}

int64_t core_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int core_cond_init(pthread_cond_t *cv)
{
    return portable_cond_init(cv);
}

int core_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    return portable_cond_wait(cv, mu, deadline);
}
