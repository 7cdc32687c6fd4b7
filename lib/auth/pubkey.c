/* SPDX-License-Identifier: Apache-2.0 */
/* Android's binary RSA public key struct (see auth_internal.h for the layout).
 *
 * The n0inv and rr fields are Montgomery constants for 32-bit words that the
 * old mincrypt-based adbd used directly; current adbd ignores them and only
 * reads the modulus and exponent. We still compute them exactly, because
 * older devices verify with them and because adb's .pub files must match
 * ours byte for byte. */
#include "auth/auth_internal.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>

uint32_t pubkey_n0inv(uint32_t n0)
{
    /* Newton's iteration for the inverse mod 2^32: x = n0 is already correct
     * to 3 bits for odd n0, and each step doubles that (3, 6, 12, 24, 48). */
    uint32_t x = n0;
    for (int i = 0; i < 4; i++)
        x *= 2u - n0 * x;
    return (uint32_t)0 - x;
}

int pubkey_encode(const EVP_PKEY *pkey, uint8_t out[ADBC_PUBKEY_SIZE])
{
    BIGNUM *n = NULL, *e = NULL, *rr = NULL;
    BN_CTX *ctx = NULL;
    int rc = ADBC_ENOMEM;

    if (!EVP_PKEY_is_a(pkey, "RSA"))
        return core_fail(ADBC_EUNSUPPORTED, "adb public keys are RSA keys; this key is %s",
                         EVP_PKEY_get0_type_name(pkey));
    if (EVP_PKEY_get_bits(pkey) != ADBC_PUBKEY_MODULUS_BYTES * 8)
        return core_fail(ADBC_EUNSUPPORTED,
                         "adb public keys must be 2048-bit RSA; this key has %d bits: "
                         "generate a 2048-bit key",
                         EVP_PKEY_get_bits(pkey));
    if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n) ||
        !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e)) {
        rc = core_fail(ADBC_EKEY, "cannot read the RSA modulus and exponent from the key");
        goto out;
    }
    if (BN_num_bits(e) > 32 || !BN_is_odd(n)) {
        rc = core_fail(ADBC_EUNSUPPORTED,
                       "RSA key cannot be written in adb's format (exponent wider than "
                       "32 bits or even modulus)");
        goto out;
    }
    ctx = BN_CTX_new();
    rr = BN_new();
    if (!ctx || !rr)
        goto out;
    /* rr = (2^2048)^2 mod n */
    if (!BN_set_bit(rr, ADBC_PUBKEY_MODULUS_BYTES * 8) || !BN_mod_sqr(rr, rr, n, ctx))
        goto out;

    core_wr32(out, ADBC_PUBKEY_MODULUS_WORDS);
    if (BN_bn2lebinpad(n, out + ADBC_PUBKEY_OFF_MODULUS, ADBC_PUBKEY_MODULUS_BYTES) < 0 ||
        BN_bn2lebinpad(rr, out + ADBC_PUBKEY_OFF_RR, ADBC_PUBKEY_MODULUS_BYTES) < 0)
        goto out;
    core_wr32(out + ADBC_PUBKEY_OFF_N0INV,
              pubkey_n0inv(core_rd32(out + ADBC_PUBKEY_OFF_MODULUS)));
    core_wr32(out + ADBC_PUBKEY_OFF_EXPONENT, (uint32_t)BN_get_word(e));
    rc = 0;
out:
    if (rc == ADBC_ENOMEM)
        rc = core_fail(ADBC_ENOMEM, "out of memory encoding an RSA public key");
    BN_free(n);
    BN_free(e);
    BN_free(rr);
    BN_CTX_free(ctx);
    ERR_clear_error();
    return rc;
}

int pubkey_decode(const uint8_t in[ADBC_PUBKEY_SIZE], EVP_PKEY **out)
{
    BIGNUM *n = NULL, *e = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    EVP_PKEY *pkey = NULL;
    int rc = ADBC_ENOMEM;

    *out = NULL;
    uint32_t words = core_rd32(in);
    if (words != ADBC_PUBKEY_MODULUS_WORDS)
        return core_fail(ADBC_EFORMAT,
                         "public key has a %u-word modulus; adb keys are 2048-bit (64 words)",
                         (unsigned)words);
    uint32_t exponent = core_rd32(in + ADBC_PUBKEY_OFF_EXPONENT);
    /* adbd takes any exponent, but 1 (or 0, or even) would make the
     * "signature" trivially forgeable or meaningless: refuse those. */
    if (exponent < 3 || (exponent & 1) == 0)
        return core_fail(ADBC_EFORMAT, "public key has an invalid RSA exponent %u",
                         (unsigned)exponent);
    const uint8_t *mod = in + ADBC_PUBKEY_OFF_MODULUS;
    if ((mod[0] & 1) == 0 || (mod[ADBC_PUBKEY_MODULUS_BYTES - 1] & 0x80) == 0)
        return core_fail(ADBC_EFORMAT,
                         "public key has an invalid modulus (even, or shorter than 2048 bits)");

    n = BN_lebin2bn(mod, ADBC_PUBKEY_MODULUS_BYTES, NULL);
    e = BN_new();
    bld = OSSL_PARAM_BLD_new();
    if (!n || !e || !bld || !BN_set_word(e, exponent))
        goto out;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    pctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (!params || !pctx)
        goto out;
    if (EVP_PKEY_fromdata_init(pctx) <= 0 ||
        EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        rc = core_fail(ADBC_EFORMAT, "public key is not a valid RSA key");
        goto out;
    }
    *out = pkey;
    rc = 0;
out:
    if (rc == ADBC_ENOMEM)
        rc = core_fail(ADBC_ENOMEM, "out of memory decoding an RSA public key");
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    ERR_clear_error();
    return rc;
}

int key_same_public(const EVP_PKEY *a, const EVP_PKEY *b)
{
    int r = EVP_PKEY_eq(a, b);
    ERR_clear_error();
    return r == 1;
}
