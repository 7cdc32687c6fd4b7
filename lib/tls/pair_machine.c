/* SPDX-License-Identifier: Apache-2.0 */
/* The pairing state machine, shared by the host (client) and device (server)
 * roles. It owns no socket: bytes the peer sent go in with recv, bytes to
 * send come out of next_send/sent, so tests drive it with byte vectors and
 * the drivers (pair_client.c, pair_server.c) put it on a TLS connection.
 *
 * Both roles follow adbd's order: send our SPAKE2 message, read theirs,
 * derive the cipher, send our encrypted PeerInfo, read and decrypt theirs.
 * A wrong code is only visible at that last step, as a tag that does not
 * verify. */
#include "tls/pair_proto.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/internal.h"

#define OUT_CAP (2 * ADBC_PAIR_HEADER_SIZE + ADBC_SPAKE2_MSG_SIZE + ADBC_PEER_INFO_SIZE + \
                 ADBC_PAIR_GCM_TAG)

static const uint8_t kClientName[] = "adb pair client"; /* sizeof includes the NUL, */
static const uint8_t kServerName[] = "adb pair server"; /* as adb hashes them */

struct adbc_pair_machine {
    adbc_pair_role role;
    adbc_pair_state state;
    int err;              /* sticky error once FAILED */
    char errmsg[256];

    adbc_spake2 *spake;
    adbc_pair_cipher cipher;
    uint8_t my_info[ADBC_PEER_INFO_SIZE];

    uint8_t out[OUT_CAP]; /* queued output; out_off..out_len is unsent */
    size_t out_len, out_off;

    uint8_t hdr[ADBC_PAIR_HEADER_SIZE];
    size_t hdr_have;
    uint8_t type;
    uint8_t *payload; /* NULL until a header announced one */
    uint32_t payload_len;
    size_t payload_have;

    uint8_t peer_type;
    char *peer_str;
};

/* Record a failure (message already set by core_fail) so later calls repeat it. */
static int fail(adbc_pair_machine *m, int code)
{
    m->state = ADBC_PAIR_FAILED;
    m->err = code;
    snprintf(m->errmsg, sizeof m->errmsg, "%s", adbc_last_error());
    return code;
}

static void queue(adbc_pair_machine *m, uint8_t type, const uint8_t *data, size_t len)
{
    /* Compact first: the queue never holds more than our two packets. */
    if (m->out_off) {
        memmove(m->out, m->out + m->out_off, m->out_len - m->out_off);
        m->out_len -= m->out_off;
        m->out_off = 0;
    }
    pair_header_encode(m->out + m->out_len, type, (uint32_t)len);
    memcpy(m->out + m->out_len + ADBC_PAIR_HEADER_SIZE, data, len);
    m->out_len += ADBC_PAIR_HEADER_SIZE + len;
}

int pair_machine_new(adbc_pair_machine **out, adbc_pair_role role, const uint8_t *password,
                          size_t password_len, uint8_t info_type, const char *info)
{
    *out = NULL;
    if ((role != ADBC_PAIR_CLIENT && role != ADBC_PAIR_SERVER) || !password || !password_len)
        return core_fail(ADBC_EINVAL, "pairing: a role and a non-empty password are required");
    adbc_pair_machine *m = core_calloc(1, sizeof *m);
    if (!m)
        return core_fail(ADBC_ENOMEM, "out of memory starting pairing");
    m->role = role;
    int rc = peer_info_encode(m->my_info, info_type, info);
    if (!rc) {
        if (role == ADBC_PAIR_CLIENT)
            rc = spake2_new(&m->spake, ADBC_SPAKE2_ALICE, kClientName, sizeof kClientName,
                                 kServerName, sizeof kServerName);
        else
            rc = spake2_new(&m->spake, ADBC_SPAKE2_BOB, kServerName, sizeof kServerName,
                                 kClientName, sizeof kClientName);
    }
    uint8_t msg[ADBC_SPAKE2_MSG_SIZE];
    if (!rc)
        rc = spake2_generate_msg(m->spake, msg, password, password_len);
    if (rc) {
        pair_machine_free(m);
        return rc;
    }
    queue(m, ADBC_PAIR_TYPE_SPAKE2_MSG, msg, sizeof msg);
    m->state = ADBC_PAIR_EXCHANGING_MSGS;
    *out = m;
    return 0;
}

size_t pair_machine_next_send(adbc_pair_machine *m, const uint8_t **data)
{
    *data = m->out + m->out_off;
    return m->out_len - m->out_off;
}

void pair_machine_sent(adbc_pair_machine *m, size_t n)
{
    size_t left = m->out_len - m->out_off;
    m->out_off += n < left ? n : left;
    if (m->out_off == m->out_len)
        m->out_off = m->out_len = 0;
}

/* Their SPAKE2 message: derive the key, queue our encrypted info. */
static int on_spake2(adbc_pair_machine *m, const uint8_t *msg, size_t len)
{
    uint8_t key[ADBC_SPAKE2_KEY_SIZE];
    uint8_t sealed[ADBC_PEER_INFO_SIZE + ADBC_PAIR_GCM_TAG];
    int rc = spake2_process_msg(m->spake, key, msg, len);
    if (!rc)
        rc = pair_cipher_init(&m->cipher, key, sizeof key);
    OPENSSL_cleanse(key, sizeof key);
    spake2_free(m->spake);
    m->spake = NULL;
    if (!rc)
        rc = pair_cipher_encrypt(&m->cipher, m->my_info, sizeof m->my_info, sealed);
    if (rc)
        return rc;
    queue(m, ADBC_PAIR_TYPE_PEER_INFO, sealed, sizeof sealed);
    m->state = ADBC_PAIR_EXCHANGING_INFO;
    return 0;
}

/* Their sealed info: it decrypts only if both sides used the same code. */
static int on_peer_info(adbc_pair_machine *m, const uint8_t *sealed, size_t len)
{
    uint8_t plain[ADBC_PEER_INFO_SIZE];
    int rc = pair_cipher_decrypt(&m->cipher, sealed, len, plain);
    if (!rc)
        rc = peer_info_decode(plain, &m->peer_type, &m->peer_str);
    OPENSSL_cleanse(plain, sizeof plain);
    if (rc)
        return rc;
    m->state = ADBC_PAIR_DONE;
    return 0;
}

static int on_header(adbc_pair_machine *m)
{
    uint8_t type;
    uint32_t len;
    int rc = pair_header_decode(m->hdr, &type, &len);
    if (rc)
        return rc;
    uint8_t want = m->state == ADBC_PAIR_EXCHANGING_MSGS ? ADBC_PAIR_TYPE_SPAKE2_MSG
                                                         : ADBC_PAIR_TYPE_PEER_INFO;
    if (type != want)
        return core_fail(ADBC_EPROTO, "pairing: expected a %s packet, the peer sent a %s packet",
                         want == ADBC_PAIR_TYPE_SPAKE2_MSG ? "SPAKE2" : "PeerInfo",
                         type == ADBC_PAIR_TYPE_SPAKE2_MSG ? "SPAKE2" : "PeerInfo");
    uint32_t expect = type == ADBC_PAIR_TYPE_SPAKE2_MSG ? ADBC_SPAKE2_MSG_SIZE
                                                        : ADBC_PEER_INFO_SIZE + ADBC_PAIR_GCM_TAG;
    if (len != expect)
        return core_fail(ADBC_EPROTO, "pairing: the peer's %s packet is %u bytes, expected %u",
                         type == ADBC_PAIR_TYPE_SPAKE2_MSG ? "SPAKE2" : "PeerInfo", len, expect);
    m->payload = core_malloc(len);
    if (!m->payload)
        return core_fail(ADBC_ENOMEM, "out of memory receiving a pairing packet");
    m->type = type;
    m->payload_len = len;
    m->payload_have = 0;
    return 0;
}

int pair_machine_recv(adbc_pair_machine *m, const uint8_t *data, size_t len)
{
    if (m->state == ADBC_PAIR_FAILED)
        return core_fail(m->err, "%s", m->errmsg);
    while (len && m->state != ADBC_PAIR_DONE) {
        if (!m->payload) {
            size_t take = ADBC_PAIR_HEADER_SIZE - m->hdr_have;
            if (take > len)
                take = len;
            memcpy(m->hdr + m->hdr_have, data, take);
            m->hdr_have += take;
            data += take, len -= take;
            if (m->hdr_have < ADBC_PAIR_HEADER_SIZE)
                break;
            int rc = on_header(m);
            if (rc)
                return fail(m, rc);
            continue;
        }
        size_t take = m->payload_len - m->payload_have;
        if (take > len)
            take = len;
        memcpy(m->payload + m->payload_have, data, take);
        m->payload_have += take;
        data += take, len -= take;
        if (m->payload_have < m->payload_len)
            break;
        int rc = m->type == ADBC_PAIR_TYPE_SPAKE2_MSG ? on_spake2(m, m->payload, m->payload_len)
                                                      : on_peer_info(m, m->payload, m->payload_len);
        OPENSSL_cleanse(m->payload, m->payload_len);
        core_free(m->payload);
        m->payload = NULL;
        m->hdr_have = 0;
        if (rc)
            return fail(m, rc);
    }
    return 0;
}

adbc_pair_state pair_machine_state(const adbc_pair_machine *m)
{
    return m->state;
}

uint8_t pair_machine_peer_type(const adbc_pair_machine *m)
{
    return m->peer_type;
}

const char *pair_machine_peer_string(const adbc_pair_machine *m)
{
    return m->state == ADBC_PAIR_DONE ? m->peer_str : NULL;
}

void pair_machine_free(adbc_pair_machine *m)
{
    if (!m)
        return;
    spake2_free(m->spake);
    if (m->payload) {
        OPENSSL_cleanse(m->payload, m->payload_len);
        core_free(m->payload);
    }
    core_free(m->peer_str);
    OPENSSL_cleanse(m, sizeof *m);
    core_free(m);
}
