/* SPDX-License-Identifier: Apache-2.0 */
/* Drives one session engine with fuzz input, in either role. The first
 * bytes choose the configuration (version, max payload, auth, delayed_ack,
 * how to split the input); the rest is what the peer "sent". Between chunks
 * the driver acts like a real user of the engine: it drains the send queue,
 * consumes received data (returning credit), opens and writes streams once
 * online and closes some, so the stream table and flow control are reached. */
#ifndef ADBC_FUZZ_SESSION_DRIVER_H
#define ADBC_FUZZ_SESSION_DRIVER_H

#include <string.h>

#include "adbc/error.h"
#include "adbc/session.h"
#include "fuzz.h"

typedef struct sd_state {
    adbc_session *s;
    adbc_role role;
    uint8_t flags;
    unsigned opens;
    uint32_t last_id;
} sd_state;

static int sd_sign(void *u, unsigned index, const uint8_t *token, size_t token_len, uint8_t *sig,
                   size_t *sig_len)
{
    sd_state *st = u;
    if (index >= (unsigned)(st->flags & 3))
        return ADBC_ENOTFOUND;
    memset(sig, 0x5a, 256);
    memcpy(sig, token, token_len < 256 ? token_len : 256);
    *sig_len = 256;
    return 0;
}

static const char *sd_pubkey(void *u)
{
    sd_state *st = u;
    return (st->flags & 4) ? "QUFBQQ== fuzz@adbc" : NULL;
}

static int sd_verify(void *u, const uint8_t *t, size_t tl, const uint8_t *sig, size_t sl)
{
    (void)u;
    (void)t;
    (void)tl;
    return sl > 0 && sig[0] == 0x5a;
}

static int sd_offer(void *u, const char *key)
{
    sd_state *st = u;
    FUZZ_ASSERT(key != NULL);
    return (st->flags & 8) != 0 && strlen(key) > 4;
}

static int sd_random(void *u, uint8_t *token, size_t len)
{
    (void)u;
    memset(token, 7, len);
    return 0;
}

static int sd_on_open(void *u, uint32_t id, const char *service)
{
    sd_state *st = u;
    FUZZ_ASSERT(service != NULL);
    st->last_id = id;
    return service[0] == 'x'; /* refuse some services */
}

static void sd_on_ready(void *u, uint32_t id)
{
    sd_state *st = u;
    st->last_id = id;
    static const uint8_t hello[64] = "hello";
    ssize_t n = adbc_session_write(st->s, id, hello, sizeof hello);
    FUZZ_ASSERT(n >= 0 || n == ADBC_ECLOSED || n < 0);
}

static void sd_on_data(void *u, uint32_t id, const uint8_t *data, size_t len)
{
    sd_state *st = u;
    /* Touch every byte so ASan sees a bad pointer or length. */
    volatile uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= data[i];
    (void)x;
    if (!(st->flags & 0x40))
        adbc_session_consume(st->s, id, len);
}

static void sd_on_writable(void *u, uint32_t id)
{
    sd_state *st = u;
    size_t w = adbc_session_writable(st->s, id);
    if (w > 100)
        w = 100;
    static const uint8_t fill[100];
    if (w)
        adbc_session_write(st->s, id, fill, w);
}

static void sd_on_closed(void *u, uint32_t id, int reason)
{
    (void)u;
    (void)id;
    (void)reason;
}

static void sd_drain(adbc_session *s)
{
    const uint8_t *d;
    size_t n;
    int guard = 0;
    while ((n = adbc_session_next_send(&d, s)) > 0 && guard++ < 100000) {
        volatile uint8_t x = d[0] ^ d[n - 1];
        (void)x;
        adbc_session_sent(s, n);
    }
    FUZZ_ASSERT(adbc_session_send_queued(s) == 0);
}

static void sd_run(adbc_role role, const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    sd_state st = {0};
    st.role = role;
    st.flags = fuzz_u8(&in);
    uint8_t split = fuzz_u8(&in);

    adbc_session_config cfg;
    adbc_session_config_init(&cfg, role);
    cfg.version = (st.flags & 0x10) ? ADBC_VERSION_MIN : ADBC_VERSION_SKIP_CHECKSUM;
    cfg.max_payload = (st.flags & 0x20) ? 4096 : 0;
    cfg.window = (st.flags & 0x80) ? 256 : 0;
    if (!(st.flags & 0x04))
        cfg.features = "shell_v2,cmd";
    cfg.auth_required = role == ADBC_ROLE_DEVICE && (st.flags & 1);
    cfg.max_auth_tokens = 4;

    adbc_session_callbacks cb = {
        .size = sizeof(adbc_session_callbacks), .auth_sign = sd_sign,
        .auth_public_key = sd_pubkey,
        .auth_random = sd_random,
        .auth_verify = sd_verify,
        .auth_offer = sd_offer,
        .on_open = sd_on_open,
        .on_ready = sd_on_ready,
        .on_data = sd_on_data,
        .on_writable = sd_on_writable,
        .on_closed = sd_on_closed,
    };
    if (adbc_session_new(&st.s, &cfg, &cb, &st) != 0)
        return;
    if (role == ADBC_ROLE_HOST)
        adbc_session_start(st.s);
    sd_drain(st.s);

    /* The decoder alone on the first header-sized piece. */
    if (in.len >= ADBC_HEADER_SIZE) {
        adbc_header h;
        if (adbc_header_decode(&h, in.p, ADBC_MAX_PAYLOAD) == 0)
            FUZZ_ASSERT(h.data_length <= ADBC_MAX_PAYLOAD && h.magic == (h.command ^ 0xffffffffu));
    }

    size_t chunk = split ? split : in.len;
    while (in.len > 0) {
        size_t n = in.len < chunk ? in.len : chunk;
        int rc = adbc_session_recv(st.s, in.p, n);
        if (rc < 0) {
            FUZZ_ASSERT(adbc_session_state_get(st.s) == ADBC_SESSION_FAILED);
            FUZZ_ASSERT(adbc_session_error(st.s)[0] != '\0');
            break;
        }
        FUZZ_ASSERT((size_t)rc <= n);
        in.p += n;
        in.len -= n;
        if ((size_t)rc < n) {
            /* STLS: the rest belongs to TLS; pretend it completed. */
            FUZZ_ASSERT(adbc_session_state_get(st.s) == ADBC_SESSION_TLS);
            adbc_session_tls_done(st.s);
        }
        adbc_session_state_get(st.s);
        if (adbc_session_state_get(st.s) == ADBC_SESSION_ONLINE) {
            FUZZ_ASSERT(adbc_session_peer(st.s) != NULL);
            FUZZ_ASSERT(adbc_session_max_payload(st.s) >= 1);
            if (role == ADBC_ROLE_HOST && st.opens < 3) {
                uint32_t id;
                if (adbc_session_open(&id, st.s, st.opens == 1 ? "xrefuse:" : "shell,v2,raw:ls") == 0)
                    st.opens++;
            }
            if (st.last_id && (st.flags & 0x40) && split > 200)
                adbc_session_close_stream(st.s, st.last_id);
        }
        sd_drain(st.s);
    }
    adbc_session_free(st.s);
}

#endif
