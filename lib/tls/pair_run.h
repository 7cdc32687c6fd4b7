/* SPDX-License-Identifier: Apache-2.0 */
/* One pairing exchange over a connected transport, for either role: the
 * part pair_client.c and pair_server.c share. Library-internal. */
#ifndef ADBC_TLS_PAIR_RUN_H
#define ADBC_TLS_PAIR_RUN_H

#include "adbc/transport.h"
#include "tls/pair_proto.h"

/* 0 when pairing is built in; ADBC_EUNSUPPORTED (with the message saying
 * why) when adbc was built without libsodium. */
int pair_supported(void);

/* Check a pairing code: non-empty, printable, at most 64 bytes. */
int pair_check_code(const char *code);

/* TLS 1.3 (throwaway certificate, borrowing t), then the pairing machine
 * keyed by code + exported keying material. Sends (my_type, my_str); on
 * success *peer (malloc'd) is the peer's string, which had the type the role
 * expects. timeout_ms bounds everything. */
int pair_run(char **peer, adbc_transport *t, adbc_pair_role role, const char *code,
                  const char *my_str, int timeout_ms);

#endif
