/* SPDX-License-Identifier: Apache-2.0 */
/* Device side: the public keys allowed to connect (adb_keys) and checking an
 * AUTH(SIGNATURE) against them.
 *
 * A line is "<base64 of the 524-byte key struct>[<space or tab><comment>]",
 * the same text as adbkey.pub and as the NUL-terminated AUTH(RSAPUBLICKEY)
 * payload. adbd splits at the first space or tab and needs the first field to
 * decode to exactly 524 bytes with a 64-word modulus; we apply the same rule,
 * with strict base64 and a sane exponent on top, since every byte here may
 * come from an unauthenticated peer. */
#include "auth/auth_internal.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/rsa.h>

/* adb_keys holds one ~720-byte line per key; a few thousand keys is plenty. */
#define MAX_KEYS_FILE (4 * 1024 * 1024)

struct adbc_authorized_keys {
    EVP_PKEY **keys;
    size_t count;
    size_t cap;
};

int adbc_authorized_keys_new(adbc_authorized_keys **out)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_authorized_keys_new: out is NULL");
    *out = core_calloc(1, sizeof **out);
    if (!*out)
        return core_fail(ADBC_ENOMEM, "out of memory creating an authorized key set");
    return 0;
}

static int add_key(adbc_authorized_keys *set, EVP_PKEY *pkey)
{
    for (size_t i = 0; i < set->count; i++) {
        if (key_same_public(set->keys[i], pkey)) {
            EVP_PKEY_free(pkey);
            return 0;
        }
    }
    if (set->count == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 4;
        EVP_PKEY **keys = core_realloc(set->keys, cap * sizeof *keys);
        if (!keys) {
            EVP_PKEY_free(pkey);
            return core_fail(ADBC_ENOMEM, "out of memory adding an authorized key");
        }
        set->keys = keys;
        set->cap = cap;
    }
    set->keys[set->count++] = pkey;
    return 0;
}

int adbc_authorized_keys_add_line(adbc_authorized_keys *set, const char *line, size_t len)
{
    if (!set || (!line && len))
        return core_fail(ADBC_EINVAL, "adbc_authorized_keys_add_line: NULL argument");
    /* The AUTH payload ends in a NUL; nothing after it counts. */
    const char *nul = len ? memchr(line, '\0', len) : NULL;
    if (nul)
        len = (size_t)(nul - line);
    /* One line, optionally ending in "\n" or "\r\n". */
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    if (len && (memchr(line, '\n', len) || memchr(line, '\r', len)))
        return core_fail(ADBC_EFORMAT, "public key text holds more than one line");

    size_t field = 0;
    while (field < len && line[field] != ' ' && line[field] != '\t')
        field++;
    if (field == 0)
        return core_fail(ADBC_EFORMAT, "public key line is empty or starts with a blank");
    if (field != ADBC_PUBKEY_B64_LEN)
        return core_fail(ADBC_EFORMAT,
                         "public key is %zu base64 characters; an adb key is %d (2048-bit RSA)",
                         field, ADBC_PUBKEY_B64_LEN);

    uint8_t raw[ADBC_PUBKEY_SIZE];
    long n = b64_decode(line, field, raw, sizeof raw);
    if (n != (long)sizeof raw)
        return core_fail(ADBC_EFORMAT, "public key is not valid base64 of a %d-byte adb key",
                         ADBC_PUBKEY_SIZE);
    EVP_PKEY *pkey;
    int rc = pubkey_decode(raw, &pkey);
    if (rc)
        return rc;
    return add_key(set, pkey);
}

static int is_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

int adbc_authorized_keys_load(adbc_authorized_keys **out, const char *path)
{
    if (!out || !path)
        return core_fail(ADBC_EINVAL, "adbc_authorized_keys_load: out and path are required");
    *out = NULL;
    adbc_authorized_keys *set;
    int rc = adbc_authorized_keys_new(&set);
    if (rc)
        return rc;

    char *data;
    size_t len;
    rc = auth_read_file(path, "authorized keys file", MAX_KEYS_FILE, &data, &len, NULL);
    if (rc == ADBC_ENOTFOUND) {
        /* No adb_keys yet: nobody is authorized, which is not an error. */
        *out = set;
        return 0;
    }
    if (rc) {
        adbc_authorized_keys_free(set);
        return rc;
    }

    size_t lineno = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        const char *start = data + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        lineno++;
        if (is_blank(start, n) || start[0] == '#')
            continue;
        if (memchr(start, '\0', n)) {
            rc = core_fail(ADBC_EFORMAT, "%s line %zu: contains a NUL byte", path, lineno);
            break;
        }
        rc = adbc_authorized_keys_add_line(set, start, n);
        if (rc) {
            char why[512];
            snprintf(why, sizeof why, "%s", adbc_last_error());
            rc = core_fail(rc, "%s line %zu: %s", path, lineno, why);
        }
    }
    core_free(data);
    if (rc) {
        adbc_authorized_keys_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

static int verify_one(EVP_PKEY *pkey, const uint8_t *token, size_t token_len, const uint8_t *sig,
                      size_t sig_len)
{
    /* The inverse of adbc_key_sign_token: PKCS#1 v1.5, DigestInfo naming
     * SHA-1, the token compared as the digest itself. */
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = ctx && EVP_PKEY_verify_init(ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
             EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) > 0 &&
             EVP_PKEY_verify(ctx, sig, sig_len, token, token_len) == 1;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

int adbc_authorized_keys_verify(const adbc_authorized_keys *set, const uint8_t *token,
                                size_t token_len, const uint8_t *sig, size_t sig_len)
{
    if (!set || !token)
        return core_fail(ADBC_EINVAL, "adbc_authorized_keys_verify: NULL argument");
    if (token_len != ADBC_AUTH_TOKEN_SIZE)
        return core_fail(ADBC_EINVAL, "AUTH token is %zu bytes; adb tokens are %d", token_len,
                         ADBC_AUTH_TOKEN_SIZE);
    if (sig && sig_len > 0 && sig_len <= ADBC_AUTH_MAX_SIG) {
        for (size_t i = 0; i < set->count; i++) {
            if (verify_one(set->keys[i], token, token_len, sig, sig_len)) {
                ERR_clear_error();
                return 0;
            }
        }
    }
    ERR_clear_error();
    return core_fail(ADBC_EUNAUTHORIZED,
                     "the signature matches none of the %zu authorized keys: the host must "
                     "offer its public key and the user accept it",
                     set->count);
}

size_t adbc_authorized_keys_count(const adbc_authorized_keys *set)
{
    return set ? set->count : 0;
}

void adbc_authorized_keys_free(adbc_authorized_keys *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        EVP_PKEY_free(set->keys[i]);
    core_free(set->keys);
    core_free(set);
}
