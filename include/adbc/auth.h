/* adbc — RSA keys in adb's formats: load, generate, encode, sign, verify.
 *
 * Host side: a keyring of private keys, loaded the way adb loads them
 * (~/.android/adbkey, then every key named by ADB_VENDOR_KEYS).
 * Device side: a set of authorized public keys (adb_keys format: one
 * "base64 comment" line per key) used to verify AUTH signatures.
 */
#ifndef ADBC_AUTH_H
#define ADBC_AUTH_H

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

/* Generate a new RSA key (bits: 2048 is what adb uses). */
int adbc_key_generate(adbc_key **out, int bits);

/* Load a PEM RSA private key (adbkey). Refuses a key file that is readable
 * by group or others (ADBC_EPERM) unless allow_insecure is set. */
int adbc_key_load(adbc_key **out, const char *path, int allow_insecure);

/* Write the key as adb does: PEM private key at `path` (mode 0600, created
 * atomically) and the public key at `path`.pub. */
int adbc_key_save(const adbc_key *key, const char *path);

/* The adbkey.pub line for this key, without trailing newline:
 * base64(Android RSA public key struct) + " " + user@host.
 * *out is malloc'd; the caller frees it. comment NULL means user@host. */
int adbc_key_public_line(const adbc_key *key, const char *comment, char **out);

/* Sign a 20-byte AUTH token the way adbd expects: the token is taken as an
 * already-computed SHA-1 digest and signed with PKCS#1 v1.5 (not hashed
 * again). sig must hold ADBC_AUTH_MAX_SIG bytes; *sig_len gets the length. */
int adbc_key_sign_token(const adbc_key *key, const uint8_t *token, size_t token_len,
                        uint8_t *sig, size_t *sig_len);

/* The file the key was loaded from, or NULL for a generated key. */
const char *adbc_key_path(const adbc_key *key);

void adbc_key_free(adbc_key *key);

/* An empty keyring. */
int adbc_keyring_new(adbc_keyring **out);

/* The keys adb would use: $ADB_VENDOR_KEYS... after the user key.
 * The user key is <dir>/adbkey where dir is $ANDROID_USER_HOME, else
 * $HOME/.android. If there is no user key and generate is nonzero, a 2048-bit
 * key is generated and saved there (adbkey 0600 and adbkey.pub). */
int adbc_keyring_load_default(adbc_keyring **out, int generate);

/* Add a key (the keyring takes ownership). */
int adbc_keyring_add(adbc_keyring *ring, adbc_key *key);

/* Add every key named by a colon-separated list of files or directories
 * (as ADB_VENDOR_KEYS: a directory contributes its *.adb_key files). */
int adbc_keyring_add_vendor_keys(adbc_keyring *ring, const char *spec);

size_t adbc_keyring_count(const adbc_keyring *ring);
const adbc_key *adbc_keyring_get(const adbc_keyring *ring, size_t index);
void adbc_keyring_free(adbc_keyring *ring);

/* Device side. An empty set of authorized keys. */
int adbc_authorized_keys_new(adbc_authorized_keys **out);

/* Load every key line of an adb_keys file; a missing file gives an empty set. */
int adbc_authorized_keys_load(adbc_authorized_keys **out, const char *path);

/* Add one "base64 [comment]" line (adbkey.pub content, or the NUL-terminated
 * payload of AUTH(RSAPUBLICKEY)). ADBC_EFORMAT if it is not a valid key. */
int adbc_authorized_keys_add_line(adbc_authorized_keys *set, const char *line, size_t len);

/* 0 if the signature over the token verifies under one of the keys,
 * ADBC_EUNAUTHORIZED otherwise. */
int adbc_authorized_keys_verify(const adbc_authorized_keys *set, const uint8_t *token,
                                size_t token_len, const uint8_t *sig, size_t sig_len);

size_t adbc_authorized_keys_count(const adbc_authorized_keys *set);
void adbc_authorized_keys_free(adbc_authorized_keys *set);

#ifdef __cplusplus
}
#endif
#endif
