/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the BoringSSL reference program's modes. This
 * program links only Android's BoringSSL (never libadbc or OpenSSL): it is the
 * independent implementation adbc's tests check their bytes against. */
#ifndef ADBC_REF_UTIL_H
#define ADBC_REF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

/* Print "error: <msg>" on stdout (the driving test reads it) and exit 1. */
void ref_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void ref_hex(char *out, const uint8_t *in, size_t n);

/* Parse hex (either case); returns the byte count or -1. */
long ref_unhex(uint8_t *out, size_t max, const char *hex);

/* Listen on 127.0.0.1 with an ephemeral port; prints "port N" and flushes. */
int ref_listen(void);

/* accept() with a timeout in ms; dies on failure. */
int ref_accept(int lfd, int timeout_ms);

/* Connect to 127.0.0.1:port; dies on failure. */
int ref_connect(unsigned port);

/* Give up if the whole run takes longer than this (a hung peer must not hang
 * the test suite). */
void ref_watchdog(unsigned seconds);

/* TLS helpers (ref_cert.c). */
/* A TLS 1.3-only context with a fresh P-256 key and self-signed certificate,
 * requiring (server) or accepting (client) a peer certificate; verify_cb as
 * SSL_CTX_set_cert_verify_callback, NULL accepts any. Dies on failure. */
SSL_CTX *ref_tls_ctx(int server, int (*verify_cb)(X509_STORE_CTX *store, void *arg));

/* Check every field of adb's client certificate. NULL when all match, else
 * a static description of the first mismatch. fp gets the uppercase hex
 * SHA-256 of the SubjectPublicKeyInfo (65 bytes). */
const char *ref_check_adb_cert(X509 *cert, char fp[65]);

/* The modes. Each returns the process exit status. */
int ref_mode_spake2(int argc, char **argv);
int ref_mode_tls_server(int argc, char **argv);
int ref_mode_pair_server(int argc, char **argv);
int ref_mode_pair_client(int argc, char **argv);

#endif
