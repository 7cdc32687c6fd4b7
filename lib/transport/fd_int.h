/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the descriptor transport with a chosen description, which the
 * TCP transport builds on. */
#ifndef ADBC_TRANSPORT_FD_INT_H
#define ADBC_TRANSPORT_FD_INT_H

#include "adbc/transport.h"
#include "core/internal.h"

int transport_fd_named(adbc_transport **out, int fd, int own, const char *desc);

/* 1 when t is a descriptor transport (TCP included), which can write
 * without blocking: what lets any thread send a packet the moment it is
 * queued instead of waking a writer thread. */
int transport_can_try_write(const adbc_transport *t);

/* Write what the descriptor takes now, without waiting: the byte count
 * (0 when it takes nothing), or a negative error with a message. Only for
 * transports transport_can_try_write accepts. */
long transport_try_writev(adbc_transport *t, const struct iovec *iov, int iovcnt);

/* Arm (ms > 0) or disarm (0) the read alarm of a descriptor transport: a
 * read waiting when it goes off returns ADBC_ETIMEDOUT ("the read's alarm
 * went off"), once. Data already there is read first. Arming again moves
 * it. Only the thread that reads may call this. ADBC_EINVAL for any other
 * transport. */
int transport_fd_alarm(adbc_transport *t, int ms);

#endif
