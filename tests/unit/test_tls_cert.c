/* SPDX-License-Identifier: Apache-2.0 */
/* The TLS client certificate made from an adb key (every field adb sets),
 * key fingerprints (the names in adbd's CA hints) and choosing a key from
 * the hints. */
#include "t.h"

#include <time.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "adbc/error.h"
#include "adbc/tls.h"

static adbc_keyring *ring; /* two generated keys */

static int name_is_adb(const X509_NAME *n)
{
    char c[8], o[16], cn[8];
    return X509_NAME_entry_count(n) == 3 &&
           X509_NAME_get_text_by_NID((X509_NAME *)n, NID_countryName, c, sizeof c) == 2 &&
           strcmp(c, "US") == 0 &&
           X509_NAME_get_text_by_NID((X509_NAME *)n, NID_organizationName, o, sizeof o) == 7 &&
           strcmp(o, "Android") == 0 &&
           X509_NAME_get_text_by_NID((X509_NAME *)n, NID_commonName, cn, sizeof cn) == 3 &&
           strcmp(cn, "Adb") == 0;
}

TEST(certificate_has_adbs_fields)
{
    const adbc_key *key = adbc_keyring_get(ring, 0);
    uint8_t *der = NULL;
    size_t len = 0;
    time_t before = time(NULL);
    CHECK_EQ_INT(adbc_tls_key_certificate(&der, &len, key), 0);
    const unsigned char *p = der;
    X509 *x = d2i_X509(NULL, &p, (long)len);
    CHECK(x != NULL);
    CHECK(p == der + len);
    CHECK_EQ_INT(X509_get_version(x), X509_VERSION_3);
    CHECK_EQ_INT(ASN1_INTEGER_get(X509_get0_serialNumber(x)), 1);
    CHECK(name_is_adb(X509_get_subject_name(x)));
    CHECK(name_is_adb(X509_get_issuer_name(x)));
    CHECK_EQ_INT(X509_get_signature_nid(x), NID_sha256WithRSAEncryption);

    /* Valid from now for 10 * 365 days. */
    int days = 0, secs = 0;
    CHECK(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x), X509_get0_notAfter(x)) == 1);
    CHECK_EQ_INT(days, 3650);
    CHECK_EQ_INT(secs, 0);
    time_t nb = before - 5;
    CHECK(X509_cmp_time(X509_get0_notBefore(x), &nb) > 0);
    time_t na = time(NULL) + 5;
    CHECK(X509_cmp_time(X509_get0_notBefore(x), &na) < 0);

    /* Extensions: exactly these three, the first two critical. */
    CHECK_EQ_INT(X509_get_ext_count(x), 3);
    int crit = -1;
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit, NULL);
    CHECK(bc != NULL);
    CHECK_EQ_INT(crit, 1);
    CHECK(bc->ca != 0);
    CHECK(bc->pathlen == NULL);
    BASIC_CONSTRAINTS_free(bc);
    ASN1_BIT_STRING *ku = X509_get_ext_d2i(x, NID_key_usage, &crit, NULL);
    CHECK(ku != NULL);
    CHECK_EQ_INT(crit, 1);
    CHECK(ASN1_BIT_STRING_get_bit(ku, 0)); /* digitalSignature */
    CHECK(ASN1_BIT_STRING_get_bit(ku, 5)); /* keyCertSign */
    CHECK(ASN1_BIT_STRING_get_bit(ku, 6)); /* cRLSign */
    for (int bit = 1; bit <= 8; bit++)
        if (bit != 5 && bit != 6)
            CHECK(!ASN1_BIT_STRING_get_bit(ku, bit));
    ASN1_BIT_STRING_free(ku);
    ASN1_OCTET_STRING *ski = X509_get_ext_d2i(x, NID_subject_key_identifier, &crit, NULL);
    CHECK(ski != NULL);
    CHECK_EQ_INT(crit, 0);
    /* "hash": SHA-1 of the subjectPublicKey bits. */
    const ASN1_BIT_STRING *bits = X509_get0_pubkey_bitstr(x);
    uint8_t sha1[20];
    SHA1(bits->data, (size_t)bits->length, sha1);
    CHECK_EQ_INT(ASN1_STRING_length(ski), 20);
    CHECK_MEM(ASN1_STRING_get0_data(ski), sha1, 20);
    ASN1_OCTET_STRING_free(ski);

    /* Self-signed with the key itself. */
    EVP_PKEY *pub = X509_get0_pubkey(x);
    CHECK(pub != NULL);
    CHECK_EQ_INT(EVP_PKEY_get_base_id(pub), EVP_PKEY_RSA);
    CHECK(X509_verify(x, pub) == 1);
    X509_free(x);
    adbc_free(der);
}

TEST(fingerprints_agree)
{
    const adbc_key *key = adbc_keyring_get(ring, 1);
    char fp[ADBC_TLS_FINGERPRINT_SIZE], fp_line[ADBC_TLS_FINGERPRINT_SIZE];
    CHECK_EQ_INT(adbc_tls_key_fingerprint(fp, key), 0);
    CHECK_EQ_INT(strlen(fp), 64);
    for (int i = 0; i < 64; i++)
        CHECK((fp[i] >= '0' && fp[i] <= '9') || (fp[i] >= 'A' && fp[i] <= 'F'));

    /* The same key through its adbkey.pub line (what a device stores). */
    char *line = NULL;
    CHECK_EQ_INT(adbc_key_public_line(&line, key, "me@box"), 0);
    CHECK_EQ_INT(adbc_tls_pubkey_line_fingerprint(fp_line, line), 0);
    CHECK_STR(fp_line, fp);

    /* And independently: SHA-256 of the certificate's SubjectPublicKeyInfo. */
    uint8_t *der = NULL;
    size_t len = 0;
    CHECK_EQ_INT(adbc_tls_key_certificate(&der, &len, key), 0);
    const unsigned char *p = der;
    X509 *x = d2i_X509(NULL, &p, (long)len);
    CHECK(x != NULL);
    unsigned char *spki = NULL;
    int sl = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &spki);
    CHECK(sl > 0);
    uint8_t md[32];
    SHA256(spki, (size_t)sl, md);
    char hex[65];
    for (int i = 0; i < 32; i++)
        sprintf(hex + 2 * i, "%02X", md[i]);
    CHECK_STR(hex, fp);
    OPENSSL_free(spki);
    X509_free(x);
    adbc_free(der);

    /* Bad lines. */
    line[10] = '*';
    CHECK_EQ_INT(adbc_tls_pubkey_line_fingerprint(fp_line, line), ADBC_EFORMAT);
    CHECK_EQ_INT(adbc_tls_pubkey_line_fingerprint(fp_line, "QUFB user@host"), ADBC_EFORMAT);
    CHECK_EQ_INT(adbc_tls_pubkey_line_fingerprint(fp_line, ""), ADBC_EFORMAT);
    adbc_free(line);
}

TEST(select_key_from_hints)
{
    const adbc_key *k0 = adbc_keyring_get(ring, 0), *k1 = adbc_keyring_get(ring, 1), *got;
    char fp1[ADBC_TLS_FINGERPRINT_SIZE], lower[ADBC_TLS_FINGERPRINT_SIZE];
    CHECK_EQ_INT(adbc_tls_key_fingerprint(fp1, k1), 0);
    for (int i = 0; i < 65; i++)
        lower[i] = (char)(fp1[i] >= 'A' && fp1[i] <= 'F' ? fp1[i] + 32 : fp1[i]);

    const char *h1[] = {"AB", NULL, fp1};
    CHECK_EQ_INT(adbc_tls_select_key(&got, ring, h1, 3), 0);
    CHECK(got == k1);
    const char *h2[] = {lower};
    CHECK_EQ_INT(adbc_tls_select_key(&got, ring, h2, 1), 0);
    CHECK(got == k1);
    const char *h3[] = {"0123"};
    CHECK_EQ_INT(adbc_tls_select_key(&got, ring, h3, 1), 0);
    CHECK(got == k0); /* nothing hinted: the first key */
    CHECK_EQ_INT(adbc_tls_select_key(&got, ring, NULL, 0), 0);
    CHECK(got == k0);

    adbc_keyring *empty;
    CHECK_EQ_INT(adbc_keyring_new(&empty), 0);
    CHECK_EQ_INT(adbc_tls_select_key(&got, empty, NULL, 0), ADBC_ENOTFOUND);
    adbc_keyring_free(empty);
    CHECK_EQ_INT(adbc_tls_select_key(&got, ring, NULL, 2), ADBC_EINVAL);
}

int main(void)
{
    adbc_key *a, *b;
    if (adbc_key_generate(&a, 2048) || adbc_key_generate(&b, 2048) || adbc_keyring_new(&ring) ||
        adbc_keyring_add(ring, a) || adbc_keyring_add(ring, b)) {
        printf("cannot set up keys: %s\n", adbc_last_error());
        return 1;
    }
    RUN(certificate_has_adbs_fields);
    RUN(fingerprints_agree);
    RUN(select_key_from_hints);
    adbc_keyring_free(ring);
    return T_DONE();
}
