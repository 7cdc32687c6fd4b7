/* SPDX-License-Identifier: Apache-2.0 */
/* Library-internal pieces of lib/tls: certificates, key access, and the TLS
 * transport that the public upgrade calls and pairing are built on. */
#ifndef ADBC_TLS_INT_H
#define ADBC_TLS_INT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "adbc/auth.h"
#include "adbc/tls.h"
#include "adbc/transport.h"

/* The private key inside an adbc_key (owned by the key). The only place in
 * lib/tls that looks inside lib/auth's key object. */
EVP_PKEY *tls_key_pkey(const adbc_key *key);

/* adb's self-signed certificate for pkey: X.509 v3, serial 1, valid from now
 * for 10*365 days, subject = issuer = C=US, O=Android, CN=Adb,
 * basicConstraints critical CA:TRUE, keyUsage critical keyCertSign, cRLSign,
 * digitalSignature, subjectKeyIdentifier = SHA-1 of the key, signed with
 * SHA-256. */
int tls_make_cert(X509 **out, EVP_PKEY *pkey);

/* A fresh P-256 key with its certificate (pairing's throwaway identity and
 * the test device's server identity). */
int tls_throwaway_identity(EVP_PKEY **key, X509 **cert);

/* Uppercase hex SHA-256 of the DER SubjectPublicKeyInfo of pkey. */
int tls_pkey_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], EVP_PKEY *pkey);

/* How a TLS transport is set up. */
typedef struct adbc_tls_config {
    int server;                      /* 0: client (host), 1: server (device) */
    /* Client: present the keyring key matching the server's CA hints (first
     * key when none matches); NULL: a throwaway certificate (pairing). */
    const adbc_keyring *keys;
    /* Client: report a certificate rejection on the first read as
     * ADBC_ENOTPAIRED (the adb connection; not for pairing). */
    int detect_not_paired;
    /* Server: CA hints and the authorization decision (NULL: accept any
     * client certificate, as pairing does). */
    const adbc_tls_server_opts *server_opts;
    /* The TLS transport does not own inner (pairing over a caller's
     * transport): destroying it leaves inner alone. */
    int borrow_inner;
    /* Bytes already read from inner that belong to TLS (they arrived in the
     * same read as the STLS packet); handed to OpenSSL before anything else. */
    const void *preread;
    size_t preread_len;
} adbc_tls_config;

/* Run a TLS 1.3 handshake over inner and return a transport that carries
 * plaintext over it. On success the new transport owns inner (unless
 * cfg->borrow_inner); on failure inner is left to the caller (its stream is
 * then unusable). */
int tls_wrap(adbc_transport **out, adbc_transport *inner, const adbc_tls_config *cfg,
                  int timeout_ms);

/* TLS keying material (RFC 8446 exporter, no context) from a transport made
 * by tls_wrap. label_len counts every byte given (adb includes the
 * label's NUL). */
int tls_export(adbc_transport *t, uint8_t *out, size_t len, const char *label,
                    size_t label_len);

/* 1 if t was made by tls_wrap. */
int tls_is_tls(const adbc_transport *t);

#endif
