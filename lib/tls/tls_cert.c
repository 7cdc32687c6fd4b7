/* SPDX-License-Identifier: Apache-2.0 */
/* The certificates adb's TLS uses: for the host, one made from its adb RSA
 * key in exactly adb's shape; for pairing and the test device, a throwaway
 * P-256 key with a certificate of the same shape. Nobody checks the chain
 * (both ends accept any certificate and look only at the public key), but
 * the fields match adb so a device sees what it expects. */
#include "tls/tls_int.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "core/internal.h"

/* adb's lifetime: 10 * 365 days, not ten calendar years. */
#define CERT_LIFETIME_SECONDS (10L * 365 * 24 * 60 * 60)

static int add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex)
        return 0;
    int ok = X509_add_ext(cert, ex, -1) == 1;
    X509_EXTENSION_free(ex);
    return ok;
}

static int add_name(X509_NAME *name, const char *field, const char *value)
{
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC, (const unsigned char *)value,
                                      -1, -1, 0) == 1;
}

int tls_make_cert(X509 **out, EVP_PKEY *pkey)
{
    *out = NULL;
    X509 *x = X509_new();
    X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
    int ok = name && X509_set_version(x, X509_VERSION_3) == 1 &&
             ASN1_INTEGER_set(X509_get_serialNumber(x), 1) == 1 &&
             X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
             X509_gmtime_adj(X509_getm_notAfter(x), CERT_LIFETIME_SECONDS) &&
             X509_set_pubkey(x, pkey) == 1 && add_name(name, "C", "US") &&
             add_name(name, "O", "Android") && add_name(name, "CN", "Adb") &&
             X509_set_issuer_name(x, name) == 1 &&
             add_ext(x, NID_basic_constraints, "critical,CA:TRUE") &&
             add_ext(x, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") &&
             add_ext(x, NID_subject_key_identifier, "hash") &&
             X509_sign(x, pkey, EVP_sha256()) > 0;
    if (!ok) {
        unsigned long e = ERR_get_error();
        X509_free(x);
        ERR_clear_error();
        return core_fail(ADBC_ENOMEM, "cannot build the TLS certificate: %s",
                         e ? ERR_reason_error_string(e) : "out of memory");
    }
    *out = x;
    return 0;
}

int tls_throwaway_identity(EVP_PKEY **key, X509 **cert)
{
    *key = NULL;
    *cert = NULL;
    EVP_PKEY *k = EVP_EC_gen("P-256");
    if (!k) {
        ERR_clear_error();
        return core_fail(ADBC_ENOMEM, "cannot generate a TLS key (out of memory?)");
    }
    int rc = tls_make_cert(cert, k);
    if (rc) {
        EVP_PKEY_free(k);
        return rc;
    }
    *key = k;
    return 0;
}

int tls_pkey_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], EVP_PKEY *pkey)
{
    unsigned char *der = NULL;
    int len = i2d_PUBKEY(pkey, &der);
    if (len <= 0) {
        ERR_clear_error();
        return core_fail(ADBC_ENOMEM, "cannot encode the public key (out of memory?)");
    }
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256(der, (size_t)len, md);
    OPENSSL_free(der);
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < sizeof md; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[2 * sizeof md] = '\0';
    return 0;
}

int adbc_tls_key_certificate(uint8_t **der, size_t *der_len, const adbc_key *key)
{
    if (!der || !der_len || !key || !tls_key_pkey(key))
        return core_fail(ADBC_EINVAL, "adbc_tls_key_certificate: NULL argument");
    *der = NULL;
    *der_len = 0;
    X509 *x;
    int rc = tls_make_cert(&x, tls_key_pkey(key));
    if (rc)
        return rc;
    int len = i2d_X509(x, NULL);
    uint8_t *buf = len > 0 ? core_malloc((size_t)len) : NULL;
    uint8_t *p = buf;
    if (!buf || i2d_X509(x, &p) != len) {
        core_free(buf);
        X509_free(x);
        return core_fail(ADBC_ENOMEM, "out of memory encoding the TLS certificate");
    }
    X509_free(x);
    *der = buf;
    *der_len = (size_t)len;
    return 0;
}
