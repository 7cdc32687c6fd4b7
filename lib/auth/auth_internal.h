/* SPDX-License-Identifier: Apache-2.0 */
/* Private to lib/auth: the key object, Android's binary public key format
 * and the small helpers the auth files share. Not installed. */
#ifndef ADBC_AUTH_INTERNAL_H
#define ADBC_AUTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "adbc/auth.h"
#include "core/internal.h"

/* A private key (host side) and, when loaded from disk, where it came from. */
struct adbc_key {
    EVP_PKEY *pkey;
    char *path; /* NULL for a generated key */
};

/* Android's RSA public key struct, as written base64-encoded in adbkey.pub
 * and adb_keys: u32 modulus size in words (64), u32 n0inv = -1/n[0] mod 2^32,
 * u32[64] modulus, u32[64] rr = 2^4096 mod n, u32 exponent; all words
 * little-endian, least significant word first. Only 2048-bit keys exist in
 * this format: adbd rejects any other modulus size. */
#define ADBC_PUBKEY_MODULUS_BYTES 256
#define ADBC_PUBKEY_MODULUS_WORDS (ADBC_PUBKEY_MODULUS_BYTES / 4)
#define ADBC_PUBKEY_SIZE (4 + 4 + 2 * ADBC_PUBKEY_MODULUS_BYTES + 4) /* 524 */
#define ADBC_PUBKEY_OFF_N0INV 4
#define ADBC_PUBKEY_OFF_MODULUS 8
#define ADBC_PUBKEY_OFF_RR (8 + ADBC_PUBKEY_MODULUS_BYTES)
#define ADBC_PUBKEY_OFF_EXPONENT (8 + 2 * ADBC_PUBKEY_MODULUS_BYTES)
/* Length of the struct in base64 (with one '=' of padding). */
#define ADBC_PUBKEY_B64_LEN (((ADBC_PUBKEY_SIZE + 2) / 3) * 4) /* 700 */

/* Encode the public half of an RSA key into the 524-byte struct.
 * ADBC_EUNSUPPORTED if the key is not 2048-bit RSA. */
int pubkey_encode(const EVP_PKEY *pkey, uint8_t out[ADBC_PUBKEY_SIZE]);

/* Decode the 524-byte struct into an RSA public key. ADBC_EFORMAT (message
 * says why) if the struct is not a key adbd would accept. */
int pubkey_decode(const uint8_t in[ADBC_PUBKEY_SIZE], EVP_PKEY **out);

/* -1 / n0 mod 2^32 for an odd n0 (the Montgomery constant of the struct). */
uint32_t pubkey_n0inv(uint32_t n0);

/* The " user@host" comment adb appends: $LOGNAME (else the login name),
 * '@', $HOSTNAME (else gethostname()). Control characters become '_'.
 * Writes a NUL-terminated string into buf (truncated to fit). */
void auth_user_host(char *buf, size_t size);

/* Standard base64 (RFC 4648, with padding). encode writes
 * b64_encoded_len(n) characters plus a NUL. decode is strict: only the
 * alphabet, correct padding, no whitespace; it returns the decoded length,
 * or -1 if the input is malformed or would not fit in out_size. */
size_t b64_encoded_len(size_t n);
void b64_encode(const uint8_t *in, size_t n, char *out);
long b64_decode(const char *in, size_t n, uint8_t *out, size_t out_size);

/* Read a whole regular file of at most max bytes. Opens without following
 * into FIFOs or devices (so it never blocks) and reports the file's mode.
 * Returns 0, ADBC_ENOTFOUND if it does not exist, ADBC_EPERM if access is
 * denied, ADBC_EFORMAT if it is not a regular file or is too large,
 * ADBC_EIO otherwise; `what` names the file in messages ("key file"). */
int auth_read_file(const char *path, const char *what, size_t max, char **data,
                        size_t *len, unsigned *mode);

/* adbc_key_save, with the same replace rule: with replace = 0 the key is
 * saved only if `path` does not exist yet (ADBC_EBUSY otherwise). */
int key_save_ex(const adbc_key *key, const char *path, int replace);

/* Move src's keys to the end of dst, skipping ones dst has; all or nothing. */
int keyring_merge(adbc_keyring *dst, adbc_keyring *src);

/* Nonzero if two keys have the same public part. */
int key_same_public(const EVP_PKEY *a, const EVP_PKEY *b);

#endif
