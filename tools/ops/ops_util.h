/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' one copy of what libadbc keeps internal in lib/core: timed
 * waits on the monotonic clock. Every tool uses these, never a copy of its
 * own (the tools see only the public API, so they cannot call lib/core). */
#ifndef ADBC_OPS_UTIL_H
#define ADBC_OPS_UTIL_H

#include <pthread.h>
#include <stdint.h>

/* Initialise cv so its timed waits count on CLOCK_MONOTONIC (ops_now_ms):
 * a step of the wall clock neither cuts a wait short nor stretches it.
 * 0 or an errno value. */
int ops_cond_init(pthread_cond_t *cv);
/* Wait on cv (mu held) until signalled or ops_now_ms() reaches deadline_ms
 * (< 0: no deadline). 0 when woken (perhaps spuriously: check the
 * condition), ETIMEDOUT once the deadline has passed. */
int ops_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms);
#endif
