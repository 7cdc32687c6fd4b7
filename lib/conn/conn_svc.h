/* SPDX-License-Identifier: Apache-2.0 */
/* conn's interface to the layers above it (services, sync): what they may
 * use of a connection beyond the public adbc/conn.h. The rest of conn's
 * state (conn_int.h) is conn's own. */
#ifndef ADBC_CONN_SVC_H
#define ADBC_CONN_SVC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adbc/conn.h"
#include "adbc/transport.h"

/* Read everything buffered on the stream (waiting as adbc_stream_read
 * does) without copying it when there is much: *buf, of *cap bytes and
 * allocated with core_malloc, is handed to the stream for its next data and
 * the stream's own buffer comes back in its place, with *cap updated. The
 * bytes read are (*buf)[*off .. *off + n) for a return of n > 0; 0 is the
 * stream's clean end and a negative value an error, as for
 * adbc_stream_read. The caller owns and frees whatever *buf holds. */
ssize_t conn_stream_read_swap(adbc_stream *st, uint8_t **buf, size_t *cap, size_t *off,
                              int timeout_ms);

/* Hand what the stream holds to sink(user, p, n) without copying it: p
 * points into the stream's buffer, the lock is not held during the call,
 * and sink returns how many bytes it took (0..n) or a negative adbc error.
 * Waits as adbc_stream_read does. Returns the bytes taken (possibly 0),
 * 0 at the stream's clean end too (*ended = 1), or a negative error (the
 * sink's or the stream's). One reader per stream at a time. */
ssize_t conn_stream_read_to(adbc_stream *st, long (*sink)(void *user, const uint8_t *p, size_t n),
                            void *user, int *ended, int timeout_ms);

/* Let the connection's reader thread hand arriving data straight to sink
 * (called with the connection's lock held, so it must not block for long:
 * a nonblocking send, a write into a regular file's page cache) while the
 * stream holds nothing unread; NULL stops it.
 * After this returns with NULL the sink is never called again. The sink
 * returns bytes taken or a negative value (the data is then buffered and
 * left to the stream's reader). When the peer ends the stream cleanly with
 * nothing left unread, the sink is called once more with (NULL, 0): every
 * byte has reached it and nothing more comes (a relay can end its socket's
 * sending side at once, without waking its reader). The stream's reader
 * still sees the end as well. */
void conn_stream_set_sink(adbc_stream *st, long (*sink)(void *user, const uint8_t *p, size_t n),
                          void *user);

/* With a sink set, let the stream's reader be a thread started only when
 * it is needed: wake(user) is called, with the connection's lock held (so
 * it must not block; starting a thread is fine), whenever the stream has
 * something for its reader that the sink did not take: data the sink left
 * (it took less than it was given, or arrived while the stream held some),
 * an end other than the clean one the sink is told of, the connection's
 * failure, an interrupt (adbc_conn_interrupt), or the connection being
 * closed. If one of these already holds, or the stream ended (cleanly)
 * before its sink was set, wake is called before this returns. It may be
 * called more than once. NULL stops it; after this returns with NULL it is
 * never called again. */
void conn_stream_set_wake(adbc_stream *st, void (*wake)(void *user), void *user);

/* Queue what flow control allows of buf now, waiting up to timeout_ms for
 * room: the number of bytes taken (> 0), or an error (ADBC_ETIMEDOUT when
 * nothing could be taken in time; the stream stays usable). */
long conn_stream_write_some(adbc_stream *st, const void *buf, size_t len, int timeout_ms);

/* Queue data that fill(user, p, cap) writes straight into the packet that
 * carries it (a read from a socket: no copy in between): waits up to
 * timeout_ms until flow control and the send queue take data, then calls
 * fill without the lock, with room for cap bytes (what the window allows,
 * at most max and the max payload; a packet holds at least a quarter of
 * its room, or its bytes are copied into a smaller one, so max should be
 * what fill reads at most). fill returns how many it wrote, 0 for none or
 * a negative value of its own; that value is returned as it is, unless the
 * bytes could not be queued (ADBC_ECLOSED: the device closed the stream
 * meanwhile). Errors as conn_stream_write_some; ADBC_ETIMEDOUT when flow
 * control took nothing in time (fill was not called). One writer per
 * stream at a time. */
long conn_stream_write_from(adbc_stream *st, size_t max,
                            long (*fill)(void *user, uint8_t *p, size_t cap), void *user,
                            int timeout_ms);

/* While conn_stream_write_from waits for the window, let the connection's
 * reader thread call source(user, p, cap) as fill is called (cap at most
 * max), with the
 * connection's lock held (so it must not block: a nonblocking recv), when
 * the window opens: the next packet goes out without waking the writer.
 * It is never called while fill runs. NULL stops it; after this returns
 * with NULL the source is never called again. What source reports other
 * than data (0, an error of its own) only wakes the writer, whose fill sees
 * it again (a socket's end of file) or learns it from user. */
void conn_stream_set_source(adbc_stream *st, size_t max,
                            long (*source)(void *user, uint8_t *p, size_t cap), void *user);

/* The connection's status (adbc_conn_status) and, once it failed, its
 * message copied to msg (len bytes; "" while it works). */
int conn_status_msg(const adbc_conn *c, char *msg, size_t len);

/* What the connection's transport says of its link
 * (adbc_transport_link_get). */
void conn_link(adbc_transport_link *out, const adbc_conn *c);

#endif
