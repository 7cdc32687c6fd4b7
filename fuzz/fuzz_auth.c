/* SPDX-License-Identifier: Apache-2.0 */
/* The AUTH exchange in both roles, with packets built well-formed (right
 * magic and data check) so the input explores the handshake rather than
 * the header checks: TOKENs, SIGNATUREs, public keys, CNXN and stray
 * packets in any order. The device role parses offered public keys with
 * the real adb_keys line parser and verifies signatures with RSA. */
#include <string.h>

#include "adbc/auth.h"
#include "adbc/error.h"
#include "adbc/session.h"
#include "fuzz.h"

typedef struct au_state {
    adbc_session *s;
    adbc_authorized_keys *keys;
    uint8_t flags;
} au_state;

static int au_sign(void *u, unsigned index, const uint8_t *token, size_t token_len, uint8_t *sig,
                   size_t *sig_len)
{
    au_state *st = u;
    if (index >= (unsigned)(st->flags >> 5))
        return ADBC_ENOTFOUND;
    memset(sig, (int)index, 256);
    memcpy(sig, token, token_len < 256 ? token_len : 256);
    *sig_len = 256;
    return 0;
}

static const char *au_pubkey(void *u)
{
    au_state *st = u;
    return (st->flags & 2) ? "QUFBQQ== fuzz@adbc" : NULL;
}

static int au_verify(void *u, const uint8_t *t, size_t tl, const uint8_t *sig, size_t sl)
{
    au_state *st = u;
    int ok = adbc_authorized_keys_verify(st->keys, t, tl, sig, sl) == 0;
    return ok || (sl > 0 && sig[0] == 0x5a && (st->flags & 4));
}

static int au_offer(void *u, const char *key)
{
    au_state *st = u;
    int rc = adbc_authorized_keys_add_line(st->keys, key, strlen(key));
    return rc == 0 && (st->flags & 8);
}

static int au_random(void *u, uint8_t *token, size_t len)
{
    (void)u;
    memset(token, 3, len);
    return 0;
}

static void au_packet(adbc_session *s, uint32_t cmd, uint32_t a0, uint32_t a1, const uint8_t *d,
                      size_t n, int *failed)
{
    uint8_t h[ADBC_HEADER_SIZE];
    adbc_header_encode(h, cmd, a0, a1, (uint32_t)n, adbc_payload_sum(d, n));
    if (adbc_session_recv(s, h, sizeof h) < 0 || (n && adbc_session_recv(s, d, n) < 0))
        *failed = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    au_state st = {0};
    st.flags = fuzz_u8(&in);
    adbc_role role = (st.flags & 1) ? ADBC_ROLE_DEVICE : ADBC_ROLE_HOST;
    if (adbc_authorized_keys_new(&st.keys) != 0)
        return 0;
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, role);
    cfg.auth_required = 1;
    cfg.max_auth_tokens = 6;
    adbc_session_callbacks cb = {
        .size = sizeof(adbc_session_callbacks), .auth_sign = au_sign,
        .auth_public_key = au_pubkey,
        .auth_random = au_random,
        .auth_verify = au_verify,
        .auth_offer = au_offer,
    };
    if (adbc_session_new(&st.s, &cfg, &cb, &st) != 0) {
        adbc_authorized_keys_free(st.keys);
        return 0;
    }
    int failed = 0;
    if (role == ADBC_ROLE_HOST) {
        adbc_session_start(st.s);
    } else {
        static const char cnxn[] = "host::features=shell_v2,cmd";
        au_packet(st.s, ADBC_A_CNXN, ADBC_VERSION_SKIP_CHECKSUM, ADBC_MAX_PAYLOAD,
                  (const uint8_t *)cnxn, sizeof cnxn, &failed);
    }
    while (in.len > 0 && !failed) {
        const uint8_t *d;
        size_t sn;
        while ((sn = adbc_session_next_send(&d, st.s)) > 0)
            adbc_session_sent(st.s, sn);
        uint8_t kind = fuzz_u8(&in);
        size_t n = fuzz_u8(&in);
        if ((kind & 7) == 7)
            n *= 8;
        if (n > in.len)
            n = in.len;
        const uint8_t *payload = in.p;
        in.p += n;
        in.len -= n;
        switch (kind & 7) {
        case 0:
            au_packet(st.s, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, payload, n, &failed);
            break;
        case 1:
            au_packet(st.s, ADBC_A_AUTH, ADBC_AUTH_SIGNATURE, 0, payload, n, &failed);
            break;
        case 2:
        case 7:
            au_packet(st.s, ADBC_A_AUTH, ADBC_AUTH_RSAPUBLICKEY, 0, payload, n, &failed);
            break;
        case 3:
            au_packet(st.s, ADBC_A_AUTH, kind >> 3, 0, payload, n, &failed);
            break;
        case 4:
            au_packet(st.s, ADBC_A_CNXN, (kind & 8) ? ADBC_VERSION_MIN : ADBC_VERSION_SKIP_CHECKSUM,
                      (uint32_t)(kind >> 4) << 10, payload, n, &failed);
            break;
        case 5:
            au_packet(st.s, ADBC_A_OPEN, 1, 0, payload, n, &failed);
            break;
        default:
            if (adbc_session_recv(st.s, payload, n) < 0)
                failed = 1;
            break;
        }
        if (role == ADBC_ROLE_DEVICE && (kind & 0x80) &&
            adbc_session_state_get(st.s) == ADBC_SESSION_HANDSHAKE)
            adbc_session_auth_accept(st.s);
    }
    if (failed)
        FUZZ_ASSERT(adbc_session_state_get(st.s) == ADBC_SESSION_FAILED);
    adbc_session_free(st.s);
    adbc_authorized_keys_free(st.keys);
    return 0;
}
