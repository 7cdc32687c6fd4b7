/* SPDX-License-Identifier: Apache-2.0 */
/* The pairing exchange on a connection, shared by host and device: TLS 1.3
 * with a throwaway certificate on each side (neither checks the other's:
 * the code is what authenticates), keying material exported from that TLS
 * session appended to the code so the exchange cannot be relayed to another
 * connection, then the pairing machine until the peer's info arrives. */
#include "tls/pair_run.h"

#include <string.h>

#include <openssl/crypto.h>

#include "core/internal.h"
#include "tls/tls_int.h"

/* adb exports with the label "adb-label" including its trailing NUL. */
static const char kExportLabel[] = "adb-label";
#define EKM_SIZE 64
#define MAX_CODE 64

int pair_supported(void)
{
#ifdef ADBC_HAVE_SODIUM
    return 0;
#else
    return core_fail(ADBC_EUNSUPPORTED, "pairing is not available: adbc was built without "
                                        "libsodium (install libsodium-dev and rebuild)");
#endif
}

int pair_check_code(const char *code)
{
    if (!code || !*code)
        return core_fail(ADBC_EINVAL, "pairing: no pairing code given (the six digits under "
                                      "\"Pair device with pairing code\")");
    size_t len = strlen(code);
    if (len > MAX_CODE)
        return core_fail(ADBC_EINVAL, "pairing: the code is %zu bytes; codes are six digits",
                         len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)code[i] < 0x20 || code[i] == 0x7f)
            return core_fail(ADBC_EINVAL, "pairing: the code contains a control character");
    return 0;
}

/* Messages that say what happened from this side's point of view. */
static int exchange_error(adbc_pair_role role, adbc_pair_state st, int rc, int timeout_ms,
                          const char *desc)
{
    const char *peer = role == ADBC_PAIR_CLIENT ? "device" : "host";
    if (rc == ADBC_EPAIRCODE)
        return role == ADBC_PAIR_CLIENT
                   ? core_fail(ADBC_EPAIRCODE,
                               "wrong pairing code: the device's answer does not decrypt with "
                               "this code; check the six digits under \"Pair device with "
                               "pairing code\" (a new code is shown each time the dialog opens)")
                   : core_fail(ADBC_EPAIRCODE,
                               "wrong pairing code: the host used a different code");
    if (rc == ADBC_ETIMEDOUT)
        return core_fail(ADBC_ETIMEDOUT, "%s: pairing did not finish within %d ms: the %s stopped "
                         "answering", desc, timeout_ms, peer);
    if (rc == ADBC_ECLOSED && st == ADBC_PAIR_EXCHANGING_INFO)
        /* The peer hung up after seeing our encrypted info: it could not
         * decrypt it, which with an honest peer means another code. */
        return core_fail(ADBC_EPAIRCODE,
                         "wrong pairing code: the %s closed the connection after the key "
                         "exchange (it could not decrypt our message)", peer);
    if (rc == ADBC_ECLOSED)
        return core_fail(ADBC_ECLOSED, "%s: the %s closed the connection during pairing", desc,
                         peer);
    return core_fail_keep(rc);
}

static int drive(adbc_pair_machine *m, adbc_transport *t, int64_t deadline)
{
    uint8_t buf[4096];
    for (;;) {
        const uint8_t *d;
        size_t n;
        while ((n = pair_machine_next_send(m, &d)) > 0) {
            int left = core_remaining(deadline);
            int rc = t->ops->write(t, d, n, left == 0 ? 1 : left);
            if (rc)
                return rc;
            pair_machine_sent(m, n);
        }
        if (pair_machine_state(m) == ADBC_PAIR_DONE)
            return 0;
        int r = t->ops->read(t, buf, sizeof buf, core_remaining(deadline));
        if (r < 0)
            return r;
        int rc = pair_machine_recv(m, buf, (size_t)r);
        if (rc)
            return rc;
    }
}

int pair_run(char **peer, adbc_transport *t, adbc_pair_role role, const char *code,
                  const char *my_str, int timeout_ms)
{
    *peer = NULL;
    int rc = pair_supported();
    if (!rc)
        rc = pair_check_code(code);
    if (rc)
        return rc;
    if (!t)
        return core_fail(ADBC_EINVAL, "pairing: no transport");
    int64_t deadline = core_deadline(timeout_ms);

    adbc_tls_config cfg = {.server = role == ADBC_PAIR_SERVER, .borrow_inner = 1};
    adbc_transport *tls = NULL;
    rc = tls_wrap(&tls, t, &cfg, timeout_ms);
    if (rc)
        return rc;

    size_t code_len = strlen(code);
    uint8_t password[MAX_CODE + EKM_SIZE];
    memcpy(password, code, code_len);
    rc = tls_export(tls, password + code_len, EKM_SIZE, kExportLabel, sizeof kExportLabel);

    adbc_pair_machine *m = NULL;
    if (!rc)
        rc = pair_machine_new(&m, role, password, code_len + EKM_SIZE,
                                   role == ADBC_PAIR_CLIENT ? ADBC_PEER_RSA_PUB_KEY
                                                            : ADBC_PEER_DEVICE_GUID,
                                   my_str);
    OPENSSL_cleanse(password, sizeof password);
    if (!rc) {
        rc = drive(m, tls, deadline);
        if (rc)
            rc = exchange_error(role, pair_machine_state(m), rc, timeout_ms, t->desc);
    }
    if (!rc) {
        uint8_t want = role == ADBC_PAIR_CLIENT ? ADBC_PEER_DEVICE_GUID : ADBC_PEER_RSA_PUB_KEY;
        if (pair_machine_peer_type(m) != want)
            rc = core_fail(ADBC_EPROTO,
                           "pairing: the %s sent peer info of type %u, expected %u (%s)",
                           role == ADBC_PAIR_CLIENT ? "device" : "host",
                           pair_machine_peer_type(m), want,
                           want == ADBC_PEER_DEVICE_GUID ? "its GUID" : "its public key");
    }
    if (!rc) {
        *peer = core_strdup(pair_machine_peer_string(m));
        if (!*peer)
            rc = core_fail(ADBC_ENOMEM, "out of memory finishing pairing");
    }
    pair_machine_free(m);
    adbc_transport_free(tls);
    return rc;
}
