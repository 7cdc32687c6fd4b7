/* SPDX-License-Identifier: Apache-2.0 */
/* adb keys as TLS sees them: the private key to sign with, fingerprints
 * (the names adbd's CA hints carry) and choosing a key from the hints. */
#include "tls/tls_int.h"

#include <string.h>
#include <strings.h>

#include "auth/auth_internal.h"

EVP_PKEY *tls_key_pkey(const adbc_key *key)
{
    return key ? key->pkey : NULL;
}

int adbc_tls_key_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], const adbc_key *key)
{
    if (!out || !key || !key->pkey)
        return core_fail(ADBC_EINVAL, "adbc_tls_key_fingerprint: NULL argument");
    return tls_pkey_fingerprint(out, key->pkey);
}

int adbc_tls_pubkey_line_fingerprint(char out[ADBC_TLS_FINGERPRINT_SIZE], const char *line)
{
    if (!out || !line)
        return core_fail(ADBC_EINVAL, "adbc_tls_pubkey_line_fingerprint: NULL argument");
    size_t field = strcspn(line, " \t\r\n");
    if (field != ADBC_PUBKEY_B64_LEN)
        return core_fail(ADBC_EFORMAT,
                         "public key is %zu base64 characters; an adb key is %d (2048-bit RSA)",
                         field, ADBC_PUBKEY_B64_LEN);
    uint8_t raw[ADBC_PUBKEY_SIZE];
    if (b64_decode(line, field, raw, sizeof raw) != (long)sizeof raw)
        return core_fail(ADBC_EFORMAT, "public key is not valid base64 of a %d-byte adb key",
                         ADBC_PUBKEY_SIZE);
    EVP_PKEY *pkey = NULL;
    int rc = pubkey_decode(raw, &pkey);
    if (rc)
        return rc;
    rc = tls_pkey_fingerprint(out, pkey);
    EVP_PKEY_free(pkey);
    return rc;
}

int adbc_tls_select_key(const adbc_key **out, const adbc_keyring *ring,
                        const char *const *hints, size_t nhints)
{
    if (!out || !ring || (nhints && !hints))
        return core_fail(ADBC_EINVAL, "adbc_tls_select_key: NULL argument");
    *out = NULL;
    size_t count = adbc_keyring_count(ring);
    if (count == 0)
        return core_fail(ADBC_ENOTFOUND,
                         "no adb key to present to the device: create one (adbkey) and pair it");
    for (size_t i = 0; i < count && nhints; i++) {
        const adbc_key *k = adbc_keyring_get(ring, i);
        char fp[ADBC_TLS_FINGERPRINT_SIZE];
        int rc = adbc_tls_key_fingerprint(fp, k);
        if (rc)
            return rc;
        for (size_t h = 0; h < nhints; h++) {
            /* adbd parses the hex in either case. */
            if (hints[h] && strcasecmp(hints[h], fp) == 0) {
                *out = k;
                return 0;
            }
        }
    }
    /* No hinted key: offer the first one, as adb does (the device may not
     * require a known key). */
    *out = adbc_keyring_get(ring, 0);
    return 0;
}
