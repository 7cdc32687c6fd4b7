/* SPDX-License-Identifier: Apache-2.0 */
/* The STLS upgrade, host and device side: swap a plain transport for a TLS
 * one once both sides have exchanged STLS packets. */
#include "tls/tls_int.h"

#include "core/internal.h"

int adbc_tls_client_upgrade(adbc_transport **inout, const adbc_keyring *keys, int timeout_ms)
{
    return adbc_tls_client_upgrade_ex(inout, keys, NULL, 0, timeout_ms);
}

int adbc_tls_client_upgrade_ex(adbc_transport **inout, const adbc_keyring *keys,
                               const void *preread, size_t preread_len, int timeout_ms)
{
    if (!inout || !*inout)
        return core_fail(ADBC_EINVAL, "adbc_tls_client_upgrade: no transport");
    adbc_keyring *own = NULL;
    if (!keys) {
        int rc = adbc_keyring_load_default(&own, 1);
        if (rc)
            return rc;
        keys = own;
    }
    adbc_tls_config cfg = {.server = 0, .keys = keys, .detect_not_paired = 1,
                           .preread = preread, .preread_len = preread_len};
    adbc_transport *t;
    int rc = tls_wrap(&t, *inout, &cfg, timeout_ms);
    adbc_keyring_free(own); /* the certificate is built during the handshake */
    if (rc)
        return rc;
    *inout = t;
    return 0;
}

int adbc_tls_server_upgrade(adbc_transport **inout, const adbc_tls_server_opts *opts,
                            const void *preread, size_t preread_len, int timeout_ms)
{
    if (!inout || !*inout)
        return core_fail(ADBC_EINVAL, "adbc_tls_server_upgrade: no transport");
    adbc_tls_server_opts o = {.size = sizeof o};
    if (core_abi_take(&o, sizeof o, opts, "adbc_tls_server_opts") < 0)
        return ADBC_EINVAL;
    opts = &o;
    if (opts->nhints && !opts->hints)
        return core_fail(ADBC_EINVAL, "adbc_tls_server_upgrade: nhints without hints");
    adbc_tls_config cfg = {.server = 1, .server_opts = opts, .preread = preread,
                           .preread_len = preread_len};
    adbc_transport *t;
    int rc = tls_wrap(&t, *inout, &cfg, timeout_ms);
    if (rc)
        return rc;
    *inout = t;
    return 0;
}
