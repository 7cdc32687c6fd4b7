/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — TLS for Android 11+ wireless debugging.
 *
 * A device with "Wireless debugging" on answers the host's CNXN with STLS;
 * the host sends STLS back and both run TLS 1.3 over the same connection,
 * after which ADB packets flow inside TLS. The host proves who it is with a
 * client certificate made from its adb RSA key; the device accepts it only if
 * that key was paired (see adbc/pair.h). To help a host with several keys,
 * the device lists the keys it knows as CA names "O=AdbKey-0, CN=<key
 * fingerprint>". adb accepts any server certificate, and so does adbc.
 *
 * Under TLS 1.3 the client's handshake completes before the device has
 * checked the certificate, so a refusal shows up on the first read, as
 * ADBC_ENOTPAIRED ("this computer's key is not paired with the device").
 */
#ifndef ADBC_TLS_H
#define ADBC_TLS_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/auth.h"
#include "adbc/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A key fingerprint: 64 uppercase hex digits and a NUL. */
#define ADBC_TLS_FINGERPRINT_SIZE 65

/* The uppercase hex SHA-256 of the key's DER SubjectPublicKeyInfo: the CN a
 * device's CA hint carries for a paired key. */
ADBC_API int adbc_tls_key_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], const adbc_key *key);

/* The same fingerprint for an adbkey.pub / adb_keys line ("base64 comment";
 * device side, to build hints). ADBC_EFORMAT if it is not a valid key. */
ADBC_API int adbc_tls_pubkey_line_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], const char *line);

/* The X.509 certificate adb presents for the key, DER-encoded: v3, serial 1,
 * valid from now for 10*365 days, subject = issuer = "C=US, O=Android,
 * CN=Adb", basicConstraints critical CA:TRUE, keyUsage critical
 * keyCertSign/cRLSign/digitalSignature, subjectKeyIdentifier, self-signed
 * with SHA-256. Free *der with adbc_free(). */
ADBC_API int adbc_tls_key_certificate(uint8_t **der, size_t *der_len, const adbc_key *key);

/* Choose the key to present given the device's hints (the CN values of its
 * "O=AdbKey-<n>" CA names; any case): the first key of the ring whose
 * fingerprint is hinted, else the ring's first key (the device may not
 * require a known key). *out is owned by the ring. ADBC_ENOTFOUND if the
 * ring is empty. */
ADBC_API int adbc_tls_select_key(const adbc_key **out, const adbc_keyring *ring,
                        const char *const *hints, size_t nhints);

/* Host side of STLS: run the TLS 1.3 client handshake over *inout (the STLS
 * packets already exchanged, nothing else read or written since) presenting
 * the certificate of the key adbc_tls_select_key picks from keys (NULL: the
 * default keyring, as adbc_keyring_load_default(.., 1)). On success *inout
 * is replaced by a "tls" transport that owns the old one; on failure *inout
 * is unchanged and the caller still owns it (its stream is unusable).
 * Errors: ADBC_ETIMEDOUT (handshake did not finish within timeout_ms),
 * ADBC_ECLOSED, ADBC_EPROTO (TLS failure; the message has OpenSSL's reason),
 * ADBC_ENOTPAIRED. A device that refuses the key is reported later, by the
 * transport's first read, as ADBC_ENOTPAIRED. Not thread-safe with respect
 * to other users of *inout during the call. */
ADBC_API int adbc_tls_client_upgrade(adbc_transport **inout, const adbc_keyring *keys, int timeout_ms);

/* The same when the caller's last read from *inout returned bytes past the
 * STLS packet (adbc_session_recv consumed fewer bytes than it was given):
 * those preread_len bytes belong to TLS and are used first. */
ADBC_API int adbc_tls_client_upgrade_ex(adbc_transport **inout, const adbc_keyring *keys,
                               const void *preread, size_t preread_len, int timeout_ms);

/* Device side, for test devices. */
/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_tls_server_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    /* Fingerprints of the keys the device knows, sent as CA hints. */
    const char *const *hints;
    size_t nhints;
    /* Decide on the host's key (its fingerprint): nonzero accepts. NULL
     * accepts any key (adbd with auth disabled). Called during the upgrade,
     * from the calling thread. */
    int (*authorize)(void *user, const char *fingerprint);
    void *user;
} adbc_tls_server_opts;

/* Device side of STLS: the TLS 1.3 server handshake over *inout with a fresh
 * self-signed certificate, requiring a client certificate. The host sends
 * its first TLS bytes right behind its STLS packet, so a read may have
 * returned some of them with it: pass those as preread (else NULL, 0).
 * Ownership as for adbc_tls_client_upgrade. ADBC_EUNAUTHORIZED when
 * authorize refused the host's key (the host is sent a bad_certificate
 * alert). opts may be NULL. */
ADBC_API int adbc_tls_server_upgrade(adbc_transport **inout, const adbc_tls_server_opts *opts,
                            const void *preread, size_t preread_len, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
