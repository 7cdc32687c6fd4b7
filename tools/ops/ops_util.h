/* SPDX-License-Identifier: Apache-2.0 */
/* What the tools need of lib/core, which libadbc keeps internal: timed
 * waits on the monotonic clock, and writing a file whole or not at all.
 * Both are built on lib/portable/portable.h, the stateless POSIX pieces
 * lib/core compiles too, so there is no second copy. Every tool uses these,
 * never a copy of its own. */
#ifndef ADBC_OPS_UTIL_H
#define ADBC_OPS_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Initialise cv so its timed waits count on CLOCK_MONOTONIC (ops_now_ms):
 * a step of the wall clock neither cuts a wait short nor stretches it.
 * 0 or an errno value. */
int ops_cond_init(pthread_cond_t *cv);
/* Wait on cv (mu held) until signalled or ops_now_ms() reaches deadline_ms
 * (< 0: no deadline). 0 when woken (perhaps spuriously: check the
 * condition), ETIMEDOUT once the deadline has passed. */
int ops_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms);

/* Write data to path whole or not at all (lib/core/file.c's way): into a
 * temporary file beside it (".<name>.adbc-XXXXXX", created 0600, then given
 * mode), fsync'ed with OPS_FILE_SYNC, moved over path. With
 * OPS_FILE_NOREPLACE an existing path is left alone and the call fails with
 * errno EEXIST. On failure path is untouched, the temporary file removed,
 * errno set and -1 returned. */
enum { OPS_FILE_SYNC = 1, OPS_FILE_NOREPLACE = 2 };
int ops_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode,
                          unsigned flags);
#endif
