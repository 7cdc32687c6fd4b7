/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the descriptor transport with a chosen description, which the
 * TCP transport builds on. */
#ifndef ADBC_TRANSPORT_FD_INT_H
#define ADBC_TRANSPORT_FD_INT_H

#include "adbc/transport.h"
#include "core/internal.h"

int adbc_transport_fd_named(adbc_transport **out, int fd, int own, const char *desc);

#endif
