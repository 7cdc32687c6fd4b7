/* SPDX-License-Identifier: Apache-2.0 */
/* The session's interface to conn beyond the public adbc/session.h: a WRTE
 * filled in place, so data read from a socket goes into the packet that
 * carries it with no copy in between (docs/adb-server.md, "How fast"). */
#ifndef ADBC_SESSION_CONN_H
#define ADBC_SESSION_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adbc/session.h"

/* Room for the payload of a WRTE on stream id: *cap bytes at the pointer
 * returned, what flow control allows now, at most max and the max payload.
 * NULL with *cap = 0 when nothing may be written now, or when memory is
 * short (then with the thread's error set). The buffer is the caller's until
 * session_write_commit, which must follow; the session may be used
 * meanwhile. One reservation per stream at a time. */
uint8_t *session_write_reserve(adbc_session *s, uint32_t id, size_t max, size_t *cap);

/* Queue the first n bytes of a buffer from session_write_reserve as a WRTE
 * on stream id (n = 0: nothing, the buffer is given back). Returns n, or an
 * error: ADBC_ECLOSED when the stream closed meanwhile (the bytes are
 * dropped, as anything written after the device's CLSE), ADBC_ENOMEM. The
 * buffer is the session's again in every case. */
ssize_t session_write_commit(adbc_session *s, uint32_t id, uint8_t *buf, size_t n);

#endif
