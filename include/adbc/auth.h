/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — RSA keys in adb's formats: load, generate, encode, sign, verify.
 *
 * Host side: a keyring of private keys, loaded the way adb loads them
 * (~/.android/adbkey, then every key named by ADB_VENDOR_KEYS).
 * Device side: a set of authorized public keys (adb_keys format: one
 * "base64 comment" line per key) used to verify AUTH signatures.
 * docs/keys.md describes the files, formats and lookup rules.
 *
 * Key files are read without blocking (FIFOs and devices are refused) and
 * written atomically. Keys and keyrings are immutable once built, so one may
 * be used from several threads at a time.
 */
#ifndef ADBC_AUTH_H
#define ADBC_AUTH_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adbc_key adbc_key;
typedef struct adbc_keyring adbc_keyring;
typedef struct adbc_authorized_keys adbc_authorized_keys;

/* Size of the token adbd sends in AUTH(TOKEN) and of a SHA-1 digest. */
#define ADBC_AUTH_TOKEN_SIZE 20
/* Largest signature adbc produces or accepts (a 4096-bit key). */
#define ADBC_AUTH_MAX_SIG 512

/* Generate a new RSA key with exponent 65537. bits: 2048 is what adb uses
 * (and the only size adb_keys can hold); 2048..4096, a multiple of 8. */
ADBC_API int adbc_key_generate(adbc_key **out, int bits);

/* Load a PEM RSA private key (adbkey; PKCS#8 or PKCS#1, unencrypted).
 * Refuses a key file that group or others can access in any way (ADBC_EPERM,
 * the message says `chmod 600 PATH`) unless allow_insecure is set.
 * ADBC_ENOTFOUND: no such file; ADBC_EKEY: not a usable RSA private key. */
ADBC_API int adbc_key_load(adbc_key **out, const char *path, int allow_insecure);

/* Write the key as `adb keygen` does: PEM private key (PKCS#8) at `path`,
 * mode 0600, and adbkey.pub's line at `path`.pub (mode 0644, no trailing
 * newline). Each file is replaced atomically. 2048-bit keys only
 * (ADBC_EUNSUPPORTED otherwise, before anything is written). */
ADBC_API int adbc_key_save(const adbc_key *key, const char *path);

/* The adbkey.pub line for this key, without trailing newline:
 * base64(Android RSA public key struct) + " " + comment. comment NULL means
 * user@host as adb writes it ($LOGNAME or the login name, $HOSTNAME or
 * gethostname()); "" gives the base64 alone. An explicit comment must be
 * printable (no newline) and at most 1024 bytes. 2048-bit keys only
 * (ADBC_EUNSUPPORTED). The caller frees *out with adbc_free(). */
ADBC_API int adbc_key_public_line(char **out, const adbc_key *key, const char *comment);

/* Sign a 20-byte AUTH token the way adbd expects: the token is taken as an
 * already-computed SHA-1 digest and signed with PKCS#1 v1.5 (not hashed
 * again). sig must hold ADBC_AUTH_MAX_SIG bytes; *sig_len gets the length. */
ADBC_API int adbc_key_sign_token(uint8_t *sig, size_t *sig_len, const adbc_key *key,
                        const uint8_t *token, size_t token_len);

/* The file the key was loaded from, or NULL for a generated key. Valid as
 * long as the key. */
ADBC_API const char *adbc_key_path(const adbc_key *key);

ADBC_API void adbc_key_free(adbc_key *key);

/* An empty keyring. */
ADBC_API int adbc_keyring_new(adbc_keyring **out);

/* The keys adb would use: the user key first, then $ADB_VENDOR_KEYS.
 * The user key is <dir>/adbkey where dir is, most recent adb rule first:
 * $ANDROID_USER_HOME, else $HOME/.android, else <passwd home>/.android
 * (empty variables count as unset; ANDROID_SDK_HOME is Windows-only in adb
 * and not used). If there is no user key and generate is nonzero, dir is
 * created (0750) if needed and a 2048-bit key is saved there (adbkey 0600,
 * adbkey.pub); a key another process creates at the same moment wins.
 * A user key or vendor key that exists but cannot be used is an error naming
 * the file. With generate 0 and no user key, the vendor keys alone are used;
 * ADBC_ENOTFOUND if that leaves no key at all. */
ADBC_API int adbc_keyring_load_default(adbc_keyring **out, int generate);

/* Add a key. The keyring takes ownership in every case: a key whose public
 * half is already present is freed (and 0 returned), as on error. */
ADBC_API int adbc_keyring_add(adbc_keyring *ring, adbc_key *key);

/* Add every key named by a colon-separated list of files or directories
 * (as ADB_VENDOR_KEYS: a directory contributes the files directly in it
 * named *.adb_key, in name order). Empty entries are skipped. All or
 * nothing: on error (a missing path, a bad key: the message names it) the
 * ring is unchanged. Key files must be private as for adbc_key_load. */
ADBC_API int adbc_keyring_add_vendor_keys(adbc_keyring *ring, const char *spec);

/* Number of keys; the key at index (NULL past the end), owned by the ring. */
ADBC_API size_t adbc_keyring_count(const adbc_keyring *ring);
ADBC_API const adbc_key *adbc_keyring_get(const adbc_keyring *ring, size_t index);
ADBC_API void adbc_keyring_free(adbc_keyring *ring);

/* Device side. An empty set of authorized keys. */
ADBC_API int adbc_authorized_keys_new(adbc_authorized_keys **out);

/* Load every key line of an adb_keys file; a missing file gives an empty
 * set. Blank lines and lines starting with '#' are skipped; any other line
 * that is not a valid key fails the load (ADBC_EFORMAT, message names the
 * line). */
ADBC_API int adbc_authorized_keys_load(adbc_authorized_keys **out, const char *path);

/* Add one "base64 [comment]" line (adbkey.pub content, or the NUL-terminated
 * payload of AUTH(RSAPUBLICKEY): bytes after a NUL are ignored, one trailing
 * "\n" or "\r\n" is allowed). The key must be the 524-byte struct of a
 * 2048-bit key, as adbd requires. ADBC_EFORMAT if it is not a valid key.
 * A key already in the set is not added twice. */
ADBC_API int adbc_authorized_keys_add_line(adbc_authorized_keys *set, const char *line, size_t len);

/* 0 if the signature over the 20-byte token verifies under one of the keys
 * (PKCS#1 v1.5, token taken as the SHA-1 digest), ADBC_EUNAUTHORIZED
 * otherwise; ADBC_EINVAL if token_len is not ADBC_AUTH_TOKEN_SIZE. */
ADBC_API int adbc_authorized_keys_verify(const adbc_authorized_keys *set, const uint8_t *token,
                                size_t token_len, const uint8_t *sig, size_t sig_len);

/* Number of distinct keys in the set. */
ADBC_API size_t adbc_authorized_keys_count(const adbc_authorized_keys *set);
ADBC_API void adbc_authorized_keys_free(adbc_authorized_keys *set);

#ifdef __cplusplus
}
#endif
#endif
