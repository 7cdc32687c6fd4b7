/* SPDX-License-Identifier: Apache-2.0 */
/* The pairing cipher: AES-128-GCM under a key derived with HKDF-SHA256 from
 * the SPAKE2 key. Each direction numbers its messages from 0; the nonce is
 * that number as 8 little-endian bytes followed by 4 zero bytes, and the
 * 16-byte tag follows the ciphertext. */
#include "tls/pair_proto.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "core/internal.h"

static const char kInfo[] = "adb pairing_auth aes-128-gcm key";

int pair_cipher_init(adbc_pair_cipher *c, const uint8_t *key_material, size_t len)
{
    memset(c, 0, sizeof *c);
    EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t outlen = sizeof c->key;
    int ok = kctx && EVP_PKEY_derive_init(kctx) == 1 &&
             EVP_PKEY_CTX_set_hkdf_md(kctx, EVP_sha256()) == 1 &&
             EVP_PKEY_CTX_set1_hkdf_key(kctx, key_material, (int)len) == 1 &&
             EVP_PKEY_CTX_add1_hkdf_info(kctx, (const unsigned char *)kInfo,
                                         (int)(sizeof kInfo - 1)) == 1 &&
             EVP_PKEY_derive(kctx, c->key, &outlen) == 1 && outlen == sizeof c->key;
    EVP_PKEY_CTX_free(kctx);
    if (!ok)
        return core_fail(ADBC_ENOMEM, "pairing: deriving the AES key failed (out of memory?)");
    return 0;
}

static void make_nonce(uint8_t nonce[ADBC_PAIR_GCM_NONCE], uint64_t seq)
{
    memset(nonce, 0, ADBC_PAIR_GCM_NONCE);
    core_wr64(nonce, seq);
}

int pair_cipher_encrypt(adbc_pair_cipher *c, const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t nonce[ADBC_PAIR_GCM_NONCE];
    int outl = 0, finl = 0;
    if (len > ADBC_PAIR_MAX_PAYLOAD)
        return core_fail(ADBC_EINVAL, "pairing: message too large to encrypt");
    make_nonce(nonce, c->enc_seq);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, ADBC_PAIR_GCM_NONCE, NULL) == 1 &&
             EVP_EncryptInit_ex(ctx, NULL, NULL, c->key, nonce) == 1 &&
             EVP_EncryptUpdate(ctx, out, &outl, in, (int)len) == 1 &&
             EVP_EncryptFinal_ex(ctx, out + outl, &finl) == 1 &&
             (size_t)(outl + finl) == len &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, ADBC_PAIR_GCM_TAG, out + len) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        return core_fail(ADBC_ENOMEM, "pairing: encryption failed (out of memory?)");
    c->enc_seq++;
    return 0;
}

int pair_cipher_decrypt(adbc_pair_cipher *c, const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t nonce[ADBC_PAIR_GCM_NONCE], tag[ADBC_PAIR_GCM_TAG];
    int outl = 0, finl = 0;
    if (len < ADBC_PAIR_GCM_TAG || len > ADBC_PAIR_MAX_PAYLOAD)
        return core_fail(ADBC_EPROTO, "pairing: encrypted message of %zu bytes is malformed", len);
    size_t plain = len - ADBC_PAIR_GCM_TAG;
    memcpy(tag, in + plain, sizeof tag);
    make_nonce(nonce, c->dec_seq);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx)
        return core_fail(ADBC_ENOMEM, "pairing: out of memory decrypting");
    int ok = EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, ADBC_PAIR_GCM_NONCE, NULL) == 1 &&
             EVP_DecryptInit_ex(ctx, NULL, NULL, c->key, nonce) == 1 &&
             EVP_DecryptUpdate(ctx, out, &outl, in, (int)plain) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, ADBC_PAIR_GCM_TAG, tag) == 1;
    if (!ok) {
        EVP_CIPHER_CTX_free(ctx);
        return core_fail(ADBC_ENOMEM, "pairing: decryption setup failed (out of memory?)");
    }
    /* Final is where GCM checks the tag. */
    ok = EVP_DecryptFinal_ex(ctx, out + outl, &finl) == 1 && (size_t)(outl + finl) == plain;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        OPENSSL_cleanse(out, plain);
        return core_fail(ADBC_EPAIRCODE,
                         "wrong pairing code: the peer's message does not decrypt with the "
                         "key from this code");
    }
    c->dec_seq++;
    return 0;
}

void pair_cipher_wipe(adbc_pair_cipher *c)
{
    OPENSSL_cleanse(c, sizeof *c);
}
