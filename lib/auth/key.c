/* SPDX-License-Identifier: Apache-2.0 */
/* A host's RSA private key: generate, load (adbkey PEM), save, sign.
 *
 * adb stores the key as an unencrypted PEM private key (PKCS#8, "BEGIN
 * PRIVATE KEY"; older adb wrote PKCS#1 "BEGIN RSA PRIVATE KEY") and both are
 * read here. The file must be private to its owner, as ssh insists for its
 * keys: anyone who can read adbkey can drive every device that trusts it. */
#include "auth/auth_internal.h"

#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

/* adbkey is ~1.7 KB; even a 4096-bit key stays far below this. */
#define MAX_KEY_FILE (64 * 1024)
#define MIN_BITS 1024
#define MAX_BITS (ADBC_AUTH_MAX_SIG * 8)

static const char *ssl_reason(void)
{
    const char *r = ERR_reason_error_string(ERR_peek_last_error());
    return r ? r : "unknown reason";
}

static int key_wrap(adbc_key **out, EVP_PKEY *pkey, const char *path)
{
    adbc_key *k = core_calloc(1, sizeof *k);
    if (!k)
        goto oom;
    if (path && !(k->path = core_strdup(path)))
        goto oom;
    k->pkey = pkey;
    *out = k;
    return 0;
oom:
    core_free(k);
    EVP_PKEY_free(pkey);
    return core_fail(ADBC_ENOMEM, "out of memory holding an RSA key");
}

int adbc_key_generate(adbc_key **out, int bits)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_key_generate: out is NULL");
    *out = NULL;
    if (bits < 2048 || bits > MAX_BITS || bits % 8 != 0)
        return core_fail(ADBC_EINVAL,
                         "cannot generate a %d-bit RSA key: use 2048 (what adb uses), "
                         "up to %d", bits, MAX_BITS);

    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    /* The public exponent is OpenSSL's default, 65537, as adb's. */
    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) <= 0 ||
        EVP_PKEY_generate(ctx, &pkey) <= 0) {
        int rc = core_fail(ADBC_EKEY, "RSA key generation failed: %s", ssl_reason());
        EVP_PKEY_CTX_free(ctx);
        ERR_clear_error();
        return rc;
    }
    EVP_PKEY_CTX_free(ctx);
    return key_wrap(out, pkey, NULL);
}

/* PEM reading must never prompt on the terminal for a passphrase. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* 1 if pkey signs a SHA-1 digest that its public half verifies. */
static int sign_verify_ok(EVP_PKEY *pkey)
{
    static const uint8_t digest[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                       11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    uint8_t sig[ADBC_AUTH_MAX_SIG];
    size_t len = sizeof sig;
    int ok = 0;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (ctx && EVP_PKEY_sign_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) > 0 &&
        EVP_PKEY_sign(ctx, sig, &len, digest, sizeof digest) > 0 &&
        EVP_PKEY_verify_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) > 0)
        ok = EVP_PKEY_verify(ctx, sig, len, digest, sizeof digest) == 1;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

static int parse_pem(const char *path, const char *data, size_t len, EVP_PKEY **out)
{
    *out = NULL;
    BIO *bio = BIO_new_mem_buf(data, (int)len);
    if (!bio)
        return core_fail(ADBC_ENOMEM, "out of memory reading key file %s", path);
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (!pkey) {
        int rc;
        if (strstr(data, "ENCRYPTED"))
            rc = core_fail(ADBC_EKEY,
                           "key file %s is encrypted; adb keys have no passphrase: decrypt it "
                           "with `openssl pkey -in %s -out %s.plain` and use that",
                           path, path, path);
        else if (!strstr(data, "-----BEGIN "))
            rc = core_fail(ADBC_EKEY,
                           "key file %s is not a PEM private key (no -----BEGIN line): "
                           "point to adbkey, not adbkey.pub",
                           path);
        else
            rc = core_fail(ADBC_EKEY, "key file %s holds no readable private key: %s", path,
                           ssl_reason());
        ERR_clear_error();
        return rc;
    }
    if (!EVP_PKEY_is_a(pkey, "RSA")) {
        int rc = core_fail(ADBC_EKEY, "key file %s holds a %s key; adb keys are RSA", path,
                           EVP_PKEY_get0_type_name(pkey));
        EVP_PKEY_free(pkey);
        return rc;
    }
    int bits = EVP_PKEY_get_bits(pkey);
    if (bits < MIN_BITS || bits > MAX_BITS) {
        EVP_PKEY_free(pkey);
        return core_fail(ADBC_EKEY, "key file %s holds a %d-bit RSA key; %d to %d bits expected",
                         path, bits, MIN_BITS, MAX_BITS);
    }
    /* A damaged file can still parse: sign a fixed digest and verify it
     * with the public half, or we would sign garbage the device silently
     * rejects. (EVP_PKEY_pairwise_check also tests p and q for primality,
     * which costs hundreds of milliseconds on every connect.) */
    int ok = sign_verify_ok(pkey);
    if (!ok) {
        EVP_PKEY_free(pkey);
        ERR_clear_error();
        return core_fail(ADBC_EKEY,
                         "key file %s holds an inconsistent RSA key (damaged?): regenerate it",
                         path);
    }
    *out = pkey;
    return 0;
}

int adbc_key_load(adbc_key **out, const char *path, int allow_insecure)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_key_load: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return core_fail(ADBC_EINVAL, "adbc_key_load: empty key path");

    char *data;
    size_t len;
    unsigned mode;
    int rc = auth_read_file(path, "key file", MAX_KEY_FILE, &data, &len, &mode);
    if (rc == ADBC_EFORMAT)
        return core_fail_keep(ADBC_EKEY);
    if (rc)
        return rc;
    if (!allow_insecure && (mode & 077)) {
        OPENSSL_cleanse(data, len);
        core_free(data);
        return core_fail(ADBC_EPERM,
                         "key file %s is accessible by other users (mode %04o): run "
                         "`chmod 600 %s`",
                         path, mode, path);
    }

    EVP_PKEY *pkey;
    rc = parse_pem(path, data, len, &pkey);
    OPENSSL_cleanse(data, len);
    core_free(data);
    if (rc)
        return rc;
    return key_wrap(out, pkey, path);
}

int adbc_key_save(const adbc_key *key, const char *path)
{
    return key_save_ex(key, path, 1);
}

int key_save_ex(const adbc_key *key, const char *path, int replace)
{
    if (!key || !key->pkey || !path || !*path)
        return core_fail(ADBC_EINVAL, "adbc_key_save: key and path are required");

    /* The public line first: it fails for keys adb cannot use, before any
     * file is touched. */
    char *line;
    int rc = adbc_key_public_line(&line, key, NULL);
    if (rc)
        return rc;

    size_t plen = strlen(path);
    char *pub_path = core_malloc(plen + sizeof ".pub");
    /* A secure-memory BIO wipes the PEM text when freed. */
    BIO *bio = BIO_new(BIO_s_secmem());
    if (!pub_path || !bio) {
        rc = core_fail(ADBC_ENOMEM, "out of memory saving key %s", path);
        goto out;
    }
    memcpy(pub_path, path, plen);
    memcpy(pub_path + plen, ".pub", sizeof ".pub");

    if (!PEM_write_bio_PrivateKey(bio, key->pkey, NULL, NULL, 0, NULL, NULL)) {
        rc = core_fail(ADBC_EKEY, "cannot encode the private key as PEM: %s", ssl_reason());
        goto out;
    }
    char *pem;
    long pem_len = BIO_get_mem_data(bio, &pem);
    unsigned how = CORE_FILE_SYNC | CORE_FILE_SYNC_DIR;
    rc = core_file_write_atomic(path, pem, (size_t)pem_len, 0600,
                                how | (replace ? 0 : CORE_FILE_NOREPLACE));
    if (rc)
        goto out;
    /* Like adb: the line alone, no trailing newline or NUL. */
    rc = core_file_write_atomic(pub_path, line, strlen(line), 0644, how);
out:
    BIO_free(bio);
    core_free(pub_path);
    core_free(line);
    ERR_clear_error();
    return rc;
}

int adbc_key_sign_token(uint8_t *sig, size_t *sig_len, const adbc_key *key,
                        const uint8_t *token, size_t token_len)
{
    if (!key || !key->pkey || !token || !sig || !sig_len)
        return core_fail(ADBC_EINVAL, "adbc_key_sign_token: NULL argument");
    if (token_len != ADBC_AUTH_TOKEN_SIZE)
        return core_fail(ADBC_EINVAL,
                         "AUTH token is %zu bytes; adb tokens are %d (a SHA-1 digest)",
                         token_len, ADBC_AUTH_TOKEN_SIZE);

    /* adb signs with RSA_sign(NID_sha1, token): PKCS#1 v1.5 over a DigestInfo
     * that names SHA-1 and holds the token as the digest. Setting the
     * signature md on a raw EVP_PKEY_sign gives exactly that, without
     * hashing the token again. */
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
    size_t len = ADBC_AUTH_MAX_SIG;
    int rc = 0;
    if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) <= 0 ||
        EVP_PKEY_sign(ctx, NULL, &len, token, token_len) <= 0 || len > ADBC_AUTH_MAX_SIG ||
        EVP_PKEY_sign(ctx, sig, &len, token, token_len) <= 0) {
        rc = core_fail(ADBC_EKEY, "signing the AUTH token failed: %s", ssl_reason());
    } else {
        *sig_len = len;
    }
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    return rc;
}

const char *adbc_key_path(const adbc_key *key)
{
    return key ? key->path : NULL;
}

void adbc_key_free(adbc_key *key)
{
    if (!key)
        return;
    EVP_PKEY_free(key->pkey);
    core_free(key->path);
    core_free(key);
}
