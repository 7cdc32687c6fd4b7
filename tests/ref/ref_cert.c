/* SPDX-License-Identifier: Apache-2.0 */
/* Certificates on the BoringSSL side: the throwaway identity the reference
 * peers use, and an independent check of the certificate adbc presents. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/ec_key.h>
#include <openssl/evp.h>
#include <openssl/nid.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ref_util.h"

static X509 *self_signed(EVP_PKEY *key)
{
    X509 *x = X509_new();
    X509_NAME *n = X509_get_subject_name(x);
    if (!x || !X509_set_version(x, X509_VERSION_3) ||
        !ASN1_INTEGER_set(X509_get_serialNumber(x), 7) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), 3600) || !X509_set_pubkey(x, key) ||
        !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const uint8_t *)"adbc-ref", -1, -1, 0) ||
        !X509_set_issuer_name(x, n) || !X509_sign(x, key, EVP_sha256()))
        ref_die("cannot make the reference certificate");
    return x;
}

static int accept_any(X509_STORE_CTX *store, void *arg)
{
    (void)store, (void)arg;
    return 1;
}

SSL_CTX *ref_tls_ctx(int server, int (*verify_cb)(X509_STORE_CTX *store, void *arg))
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    EC_KEY *ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
    EVP_PKEY *key = EVP_PKEY_new();
    if (!ctx || !ec || !key || !EC_KEY_generate_key(ec) || !EVP_PKEY_assign_EC_KEY(key, ec))
        ref_die("cannot make a TLS context");
    X509 *cert = self_signed(key);
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_use_certificate(ctx, cert) || !SSL_CTX_use_PrivateKey(ctx, key))
        ref_die("cannot configure the TLS context");
    X509_free(cert);
    EVP_PKEY_free(key);
    /* As adbd and adb do: always ask for the peer's certificate, and let the
     * callback decide (accept-all when none). */
    SSL_CTX_set_verify(ctx, server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                   : SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ctx, verify_cb ? verify_cb : accept_any, NULL);
    return ctx;
}

static int name_is_adb(X509_NAME *n)
{
    char c[8], o[16], cn[8];
    return X509_NAME_entry_count(n) == 3 &&
           X509_NAME_get_text_by_NID(n, NID_countryName, c, sizeof c) == 2 && !strcmp(c, "US") &&
           X509_NAME_get_text_by_NID(n, NID_organizationName, o, sizeof o) == 7 &&
           !strcmp(o, "Android") &&
           X509_NAME_get_text_by_NID(n, NID_commonName, cn, sizeof cn) == 3 && !strcmp(cn, "Adb");
}

const char *ref_check_adb_cert(X509 *x, char fp[65])
{
    fp[0] = '\0';
    EVP_PKEY *pk = X509_get_pubkey(x);
    if (!pk)
        return "no public key";
    uint8_t *der = NULL;
    int len = i2d_PUBKEY(pk, &der);
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256(der, (size_t)len, md);
    OPENSSL_free(der);
    for (int i = 0; i < 32; i++)
        sprintf(fp + 2 * i, "%02X", md[i]);
    const char *bad = NULL;
    int crit = -1, days = 0, secs = 0;
    BASIC_CONSTRAINTS *bc = NULL;
    ASN1_BIT_STRING *ku = NULL;
    const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(x);
    ASN1_BIT_STRING *bits = X509_get0_pubkey_bitstr(x);
    uint8_t sha1[SHA_DIGEST_LENGTH];
    time_t early = time(NULL) - 120, late = time(NULL) + 120;
    if (bits)
        SHA1(bits->data, (size_t)bits->length, sha1);

    if (EVP_PKEY_id(pk) != EVP_PKEY_RSA || EVP_PKEY_bits(pk) != 2048)
        bad = "key is not RSA-2048";
    else if (X509_get_version(x) != X509_VERSION_3)
        bad = "not an X.509 v3 certificate";
    else if (ASN1_INTEGER_get(X509_get0_serialNumber(x)) != 1)
        bad = "serial number is not 1";
    else if (!name_is_adb(X509_get_subject_name(x)))
        bad = "subject is not C=US, O=Android, CN=Adb";
    else if (!name_is_adb(X509_get_issuer_name(x)))
        bad = "issuer is not C=US, O=Android, CN=Adb";
    else if (!ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x), X509_get0_notAfter(x)) ||
             days != 3650 || secs != 0)
        bad = "validity is not 10*365 days";
    else if (X509_cmp_time(X509_get0_notBefore(x), &early) <= 0 ||
             X509_cmp_time(X509_get0_notBefore(x), &late) >= 0)
        bad = "notBefore is not now";
    else if (X509_get_ext_count(x) != 3)
        bad = "not exactly three extensions";
    else if (!(bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit, NULL)) || crit != 1 ||
             !bc->ca)
        bad = "basicConstraints is not critical CA:TRUE";
    else if (!(ku = X509_get_ext_d2i(x, NID_key_usage, &crit, NULL)) || crit != 1 ||
             X509_get_key_usage(x) != (KU_DIGITAL_SIGNATURE | KU_KEY_CERT_SIGN | KU_CRL_SIGN))
        bad = "keyUsage is not critical digitalSignature, keyCertSign, cRLSign";
    else if (!ski || !bits || ASN1_STRING_length(ski) != SHA_DIGEST_LENGTH ||
             memcmp(ASN1_STRING_get0_data(ski), sha1, SHA_DIGEST_LENGTH) != 0)
        bad = "subjectKeyIdentifier is not the SHA-1 of the key";
    else if (X509_get_signature_nid(x) != NID_sha256WithRSAEncryption)
        bad = "not signed with sha256WithRSAEncryption";
    else if (X509_verify(x, pk) != 1)
        bad = "self-signature does not verify";
    BASIC_CONSTRAINTS_free(bc);
    ASN1_BIT_STRING_free(ku);
    EVP_PKEY_free(pk);
    return bad;
}
