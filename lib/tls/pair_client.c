/* SPDX-License-Identifier: Apache-2.0 */
/* Host side of pairing: connect to the device's pairing port and run the
 * exchange, sending this computer's adbkey.pub line. */
#include "adbc/pair.h"

#include <stdlib.h>

#include "core/internal.h"
#include "tls/pair_run.h"

int adbc_pair_transport(char **out_guid, adbc_transport *t, const char *code,
                        const char *pubkey_line, int timeout_ms)
{
    if (out_guid)
        *out_guid = NULL;
    if (!t || !pubkey_line)
        return core_fail(ADBC_EINVAL, "adbc_pair_transport: NULL transport or key line");
    char *guid = NULL;
    int rc = pair_run(&guid, t, ADBC_PAIR_CLIENT, code, pubkey_line, timeout_ms);
    if (rc)
        return rc;
    if (out_guid)
        *out_guid = guid;
    else
        core_free(guid);
    return 0;
}

int adbc_pair(char **out_guid, const char *addr, const char *code, const adbc_key *key,
              int timeout_ms)
{
    if (out_guid)
        *out_guid = NULL;
    if (!addr)
        return core_fail(ADBC_EINVAL, "adbc_pair: no address (the IP address & port shown in "
                                      "\"Pair device with pairing code\")");
    int rc = pair_supported();
    if (!rc)
        rc = pair_check_code(code);
    if (rc)
        return rc;
    int64_t deadline = core_deadline(timeout_ms);

    adbc_keyring *ring = NULL;
    if (!key) {
        rc = adbc_keyring_load_default(&ring, 1);
        if (rc)
            return rc;
        key = adbc_keyring_get(ring, 0);
        if (!key) {
            adbc_keyring_free(ring);
            return core_fail(ADBC_ENOTFOUND, "adbc_pair: no adb key to pair");
        }
    }
    char *line = NULL;
    rc = adbc_key_public_line(&line, key, NULL);
    adbc_keyring_free(ring);
    if (rc)
        return rc;

    adbc_transport *t = NULL;
    rc = adbc_transport_tcp(&t, addr, timeout_ms);
    if (rc == ADBC_EREFUSED)
        rc = core_fail(ADBC_EREFUSED,
                       "nothing listens on %s: the pairing port is open only while \"Pair "
                       "device with pairing code\" is showing on the device (and differs from "
                       "the port to connect to)", addr);
    if (!rc)
        rc = adbc_pair_transport(out_guid, t, code, line, core_remaining(deadline));
    adbc_transport_free(t);
    free(line);
    return rc;
}
