/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — pairing with an Android 11+ device for wireless debugging.
 *
 * On the device: Developer options > Wireless debugging > "Pair device with
 * pairing code" shows a six-digit code and an IP address:port. That port is
 * the pairing port, open only while the dialog is; it is not the port to
 * connect to afterwards (shown on the Wireless debugging screen itself).
 * Pairing runs TLS 1.3 with throwaway certificates, then SPAKE2 keyed by the
 * code (and bound to that TLS connection), then each side sends one
 * encrypted record: the host its adbkey.pub line, the device its GUID. From
 * then on the device accepts the host's key in the TLS handshake of a
 * normal connection (adbc/tls.h).
 *
 * Needs libsodium at build time; without it every call here returns
 * ADBC_EUNSUPPORTED ("built without libsodium").
 */
#ifndef ADBC_PAIR_H
#define ADBC_PAIR_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include "adbc/auth.h"
#include "adbc/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pair with the device at addr ("host:port", "[v6]:port": the pairing
 * port) using code. key is the key to pair (its public line is sent); NULL
 * uses the user key of adbc_keyring_load_default(.., 1), as adb does. On
 * success *out_guid (free with adbc_free(); out_guid may be NULL) is the device's
 * GUID. timeout_ms bounds the whole operation (connect, TLS, exchange).
 * Errors: ADBC_EPAIRCODE (wrong code), ADBC_ETIMEDOUT, ADBC_EREFUSED /
 * ADBC_ECLOSED (nothing listening: the pairing dialog is closed), ADBC_EPROTO,
 * ADBC_EUNSUPPORTED (no libsodium). */
ADBC_API int adbc_pair(char **out_guid, const char *addr, const char *code, const adbc_key *key,
              int timeout_ms);

/* The same over a connected byte-stream transport the caller keeps (it is
 * not freed; its stream is used up). pubkey_line is sent as-is. */
ADBC_API int adbc_pair_transport(char **out_guid, adbc_transport *t, const char *code,
                        const char *pubkey_line, int timeout_ms);

/* Device side, for test devices: a listening pairing port. */
typedef struct adbc_pair_server adbc_pair_server;

/* Listen on addr ("127.0.0.1:0" picks a free port) for hosts pairing with
 * code; guid is what a paired host is told. */
ADBC_API int adbc_pair_server_new(adbc_pair_server **out, const char *addr, const char *code,
                         const char *guid);

/* The port actually listened on. */
ADBC_API unsigned adbc_pair_server_port(const adbc_pair_server *s);

/* Accept one connection and run pairing on it. On success *out_pubkey_line
 * (free with adbc_free()) is the host's adbkey.pub line, checked to be a valid
 * adb key: add it to the authorized keys. ADBC_EPAIRCODE when the host used
 * another code (the server stays usable: accept again), ADBC_ETIMEDOUT when
 * nobody finished pairing within timeout_ms. */
ADBC_API int adbc_pair_server_accept(char **out_pubkey_line, adbc_pair_server *s, int timeout_ms);

/* Close the port and free. NULL is fine. */
ADBC_API void adbc_pair_server_free(adbc_pair_server *s);

/* The device side over a connected transport the caller keeps. */
ADBC_API int adbc_pair_server_transport(char **out_pubkey_line, adbc_transport *t, const char *code,
                               const char *guid, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
