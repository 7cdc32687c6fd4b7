/* SPDX-License-Identifier: Apache-2.0 */
/* The session's handshake in both roles, checked against exact bytes and
 * against the other role in memory: CNXN and its negotiation, AUTH (TOKEN,
 * SIGNATURE, RSAPUBLICKEY) with deterministic fake keys, STLS, data checks,
 * the handshake size limit, packets before CNXN, malformed input, and
 * random input into both roles.
 *
 * The wire behaviour follows AOSP adb: adb.cpp (send_connect,
 * handle_new_connection, handle_packet), transport.cpp (check_header,
 * send_packet, update_version), client/auth.cpp (send_auth_response,
 * send_auth_publickey) and daemon/auth.cpp (send_auth_request). */
#include "t.h"

#include "session_harness.h"

/* ---- CNXN ---- */

TEST(host_cnxn_exact_bytes)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_HANDSHAKE);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 24 + 70);

    /* Header and payload come out as two segments. */
    const uint8_t *d;
    size_t n = adbc_session_next_send(&d, h->s);
    static const uint8_t want[24] = {0x43, 0x4e, 0x58, 0x4e, 0x01, 0x00, 0x00, 0x01,
                                     0x00, 0x00, 0x10, 0x00, 0x46, 0x00, 0x00, 0x00,
                                     0xb1, 0x1a, 0x00, 0x00, 0xbc, 0xb1, 0xa7, 0xb1};
    CHECK_EQ_INT(n, 24);
    CHECK_MEM(d, want, 24);
    /* partial send: the rest of the header comes next */
    adbc_session_sent(h->s, 10);
    n = adbc_session_next_send(&d, h->s);
    CHECK_EQ_INT(n, 14);
    CHECK_MEM(d, want + 10, 14);
    adbc_session_sent(h->s, 14);
    n = adbc_session_next_send(&d, h->s);
    CHECK_EQ_INT(n, 70);
    CHECK_MEM(d, H_HOST_BANNER, 70);
    adbc_session_sent(h->s, 70);
    CHECK_EQ_INT(adbc_session_next_send(&d, h->s), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    h_peer_free(h);
}

TEST(host_cnxn_custom_config)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.version = ADBC_VERSION_MIN;
    cfg.max_payload = 256 * 1024;
    cfg.features = "shell_v2";
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, &cfg);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0};
    h_take(h->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    CHECK_EQ_INT(p.a0, 0x01000000);
    CHECK_EQ_INT(p.a1, 256 * 1024);
    CHECK_EQ_INT(p.len, strlen("host::features=shell_v2"));
    CHECK_MEM(p.data, "host::features=shell_v2", p.len);
    CHECK_EQ_INT(p.check, h_sum(p.data, p.len));
    CHECK_EQ_INT(p.magic, ADBC_A_CNXN ^ 0xffffffffu);
    hbuf_free(&out);
    h_peer_free(h);

    /* a full banner is sent as given */
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.banner = "host::features=cmd";
    h = h_peer_new(ADBC_ROLE_HOST, &cfg);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    h_take(h->s, &out);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.len, 18);
    CHECK_MEM(p.data, "host::features=cmd", 18);
    hbuf_free(&out);
    h_peer_free(h);
}

TEST(banner_longer_than_4096_is_refused)
{
    /* adb aborts on a banner above MAX_PAYLOAD_V1 (send_connect). */
    char *big = malloc(5000);
    CHECK(big != NULL);
    memset(big, 'a', 4999);
    big[4999] = '\0';
    memcpy(big, "host::features=", 15);
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.banner = big;
    adbc_session *s = NULL;
    int rc = adbc_session_new(&s, &cfg, NULL, NULL);
    free(big);
    CHECK_EQ_INT(rc, ADBC_EINVAL);
    CHECK(s == NULL);
    CHECK(adbc_last_error()[0] != '\0');
}

TEST(device_does_not_start)
{
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    CHECK_EQ_INT(adbc_session_start(d->s), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    CHECK(adbc_session_peer(d->s) == NULL);
    h_peer_free(d);
}

TEST(device_answers_host_cnxn_without_auth)
{
    hbuf out = {0};
    hpeer *d = h_device_online(0x01000001u, 0x100000u, H_HOST_BANNER, NULL, &out);
    CHECK(d != NULL);
    int exact;
    CHECK_EQ_INT(h_count(&out, &exact), 1);
    CHECK(exact);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    CHECK_EQ_INT(p.a0, 0x01000001);
    CHECK_EQ_INT(p.a1, 0x100000);
    const char *want = "device::features=shell_v2,delayed_ack";
    CHECK_EQ_INT(p.len, strlen(want));
    CHECK_MEM(p.data, want, p.len);
    CHECK_EQ_INT(p.check, 0xe31); /* CNXN always carries the sum */
    CHECK_EQ_INT(d->online_calls, 1);
    CHECK_EQ_INT(adbc_session_version(d->s), 0x01000001);
    CHECK_EQ_INT(adbc_session_max_payload(d->s), 0x100000);
    CHECK_EQ_INT(adbc_session_delayed_ack(d->s), 1);
    const adbc_banner *b = adbc_session_peer(d->s);
    CHECK(b != NULL);
    CHECK_EQ_INT(b->state, ADBC_DEV_HOST);
    CHECK(adbc_banner_has_feature(b, "stat_v2"));
    hbuf_free(&out);
    h_peer_free(d);
}

TEST(host_online_on_device_cnxn)
{
    hpeer *h = h_host_online(0x01000001u, 0x100000u, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(h->online_calls, 1);
    CHECK_EQ_INT(adbc_session_version(h->s), 0x01000001);
    CHECK_EQ_INT(adbc_session_max_payload(h->s), 0x100000);
    CHECK_EQ_INT(adbc_session_delayed_ack(h->s), 1);
    const adbc_banner *b = adbc_session_peer(h->s);
    CHECK(b != NULL);
    CHECK_EQ_INT(b->state, ADBC_DEV_DEVICE);
    CHECK_STR(b->model, "Pixel 7");
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0); /* nothing to answer */
    h_peer_free(h);
}

/* update_version: the negotiated version and max payload are the smaller
 * of each side's offer; delayed_ack needs both banners to list it. */
TEST(negotiation_takes_minimum)
{
    /* older, smaller device */
    hpeer *h = h_host_online(0x01000000u, 4096, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_version(h->s), 0x01000000);
    CHECK_EQ_INT(adbc_session_max_payload(h->s), 4096);
    h_peer_free(h);

    /* newer, bigger device: ours wins */
    h = h_host_online(0x02000000u, 16u << 20, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_version(h->s), 0x01000001);
    CHECK_EQ_INT(adbc_session_max_payload(h->s), 0x100000);
    CHECK_EQ_INT(adbc_session_delayed_ack(h->s), 1);
    h_peer_free(h);

    /* 256 KiB device (Android 7..8) */
    h = h_host_online(0x01000001u, 256 * 1024, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_max_payload(h->s), 256 * 1024);
    h_peer_free(h);

    /* no delayed_ack in the device's banner */
    h = h_host_online(0x01000001u, 0x100000u, H_LEGACY_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_delayed_ack(h->s), 0);
    h_peer_free(h);

    /* we leave delayed_ack out */
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.features = "shell_v2,cmd";
    h = h_host_online(0x01000001u, 0x100000u, H_DEVICE_BANNER, &cfg, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_delayed_ack(h->s), 0);
    h_peer_free(h);

    /* device role: the host's smaller offer wins */
    hpeer *d = h_device_online(0x01000000u, 4096, "host::features=delayed_ack", NULL, NULL);
    CHECK(d != NULL);
    CHECK_EQ_INT(adbc_session_version(d->s), 0x01000000);
    CHECK_EQ_INT(adbc_session_max_payload(d->s), 4096);
    CHECK_EQ_INT(adbc_session_delayed_ack(d->s), 0); /* needs 0x01000001 */
    h_peer_free(d);
}

/* adbd's send_connect runs after update_version, so its CNXN carries
 * arg1 = t->get_max_payload(), the negotiated value, and arg0 = A_VERSION. */
TEST(device_cnxn_carries_negotiated_max_payload)
{
    hbuf out = {0};
    hpeer *d = h_device_online(0x01000001u, 256 * 1024, H_HOST_BANNER, NULL, &out);
    CHECK(d != NULL);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    CHECK_EQ_INT(p.a0, 0x01000001);
    hbuf_free(&out);
    h_peer_free(d);
    CHECK_EQ_INT(p.a1, 256 * 1024);
}

/* ---- the two roles against each other, with every split ---- */

typedef struct transcript {
    hbuf h2d, d2h;
} transcript;

static int pump_record(hpeer *h, hpeer *d, size_t chunk, transcript *t)
{
    for (int round = 0; round < 1000; round++) {
        hbuf a = {0}, b = {0};
        h_take(h->s, &a);
        h_take(d->s, &b);
        if (!a.len && !b.len)
            return 0;
        hbuf_put(&t->h2d, a.p, a.len);
        hbuf_put(&t->d2h, b.p, b.len);
        long rc = 0;
        if (a.len) {
            rc = h_feed_buf(d->s, &a, chunk);
            if (rc >= 0 && (size_t)rc != a.len)
                rc = -100;
        }
        if (rc >= 0 && b.len) {
            rc = h_feed_buf(h->s, &b, chunk);
            if (rc >= 0 && (size_t)rc != b.len)
                rc = -100;
        }
        hbuf_free(&a);
        hbuf_free(&b);
        if (rc < 0)
            return (int)rc;
    }
    return -101;
}

TEST(host_and_device_handshake_every_chunk_size)
{
    transcript ref = {{0}, {0}};
    size_t sizes[200];
    size_t ns = 0;
    for (size_t c = 1; c <= 130; c++)
        sizes[ns++] = c;
    sizes[ns++] = 0; /* whole segments */
    sizes[ns++] = 4096;
    for (size_t i = 0; i < ns; i++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL); /* auth required */
        CHECK(h && d);
        h->nkeys = 2;
        d->trust_key = 1; /* key 0 is refused first */
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        transcript t = {{0}, {0}};
        int rc = pump_record(h, d, sizes[i], &t);
        if (rc != 0)
            fprintf(stderr, "  chunk %zu: rc %d (%s)\n", sizes[i], rc, adbc_last_error());
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
        CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
        CHECK_EQ_INT(h->online_calls, 1);
        CHECK_EQ_INT(d->online_calls, 1);
        CHECK_EQ_INT(h->sign_calls, 2);
        CHECK_EQ_INT(d->random_calls, 2);
        CHECK_EQ_INT(adbc_session_version(h->s), 0x01000001);
        CHECK_EQ_INT(adbc_session_version(d->s), 0x01000001);
        CHECK_EQ_INT(adbc_session_max_payload(h->s), 0x100000);
        CHECK_EQ_INT(adbc_session_delayed_ack(h->s), 1);
        CHECK_EQ_INT(adbc_session_delayed_ack(d->s), 1);
        if (i == 0) {
            ref = t;
        } else {
            /* the same bytes whatever the split */
            CHECK_EQ_INT(t.h2d.len, ref.h2d.len);
            CHECK_EQ_INT(t.d2h.len, ref.d2h.len);
            CHECK_MEM(t.h2d.p, ref.h2d.p, ref.h2d.len);
            CHECK_MEM(t.d2h.p, ref.d2h.p, ref.d2h.len);
            hbuf_free(&t.h2d);
            hbuf_free(&t.d2h);
        }
        h_peer_free(h);
        h_peer_free(d);
    }
    /* host: CNXN, SIGNATURE(key 0), SIGNATURE(key 1);
     * device: TOKEN, TOKEN, CNXN */
    hpkt p;
    CHECK_EQ_INT(h_count(&ref.h2d, NULL), 3);
    CHECK_EQ_INT(h_count(&ref.d2h, NULL), 3);
    CHECK(h_nth(&ref.h2d, 1, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_AUTH);
    CHECK_EQ_INT(p.a0, ADBC_AUTH_SIGNATURE);
    CHECK_EQ_INT(p.data[3], 0);
    CHECK(h_nth(&ref.h2d, 2, &p));
    CHECK_EQ_INT(p.data[3], 1);
    CHECK(h_nth(&ref.d2h, 2, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    /* every CNXN and AUTH carries its sum */
    for (int dir = 0; dir < 2; dir++) {
        hbuf *b = dir ? &ref.d2h : &ref.h2d;
        size_t off = 0;
        while (h_parse(b, &off, &p)) {
            CHECK(p.cmd == ADBC_A_CNXN || p.cmd == ADBC_A_AUTH);
            CHECK_EQ_INT(p.check, h_sum(p.data, p.len));
            CHECK_EQ_INT(p.magic, p.cmd ^ 0xffffffffu);
        }
    }
    hbuf_free(&ref.h2d);
    hbuf_free(&ref.d2h);
}

/* ---- host AUTH ---- */

static void token_bytes(uint8_t *t, unsigned n)
{
    for (unsigned i = 0; i < ADBC_AUTH_TOKEN_SIZE; i++)
        t[i] = (uint8_t)(0xa0 + 7 * n + i);
}

/* A TOKEN as adbd sends it once it knows the host's version: check 0. */
static void put_token(hbuf *b, unsigned n)
{
    uint8_t t[ADBC_AUTH_TOKEN_SIZE];
    token_bytes(t, n);
    h_pkt0(b, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, t, sizeof t);
}

TEST(host_signs_with_each_key_then_offers_public_key)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    h->nkeys = 2;
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);

    for (unsigned k = 0; k < 2; k++) {
        put_token(&in, k);
        CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 24 + 20);
        hbuf_free(&in);
        h_take(h->s, &out);
        /* AUTH(SIGNATURE, 0) "SIG" k token, with its sum */
        uint8_t sig[24];
        memcpy(sig, "SIG", 3);
        sig[3] = (uint8_t)k;
        token_bytes(sig + 4, k);
        hbuf want = {0};
        h_pkt(&want, ADBC_A_AUTH, ADBC_AUTH_SIGNATURE, 0, sig, sizeof sig);
        CHECK_EQ_INT(out.len, want.len);
        CHECK_MEM(out.p, want.p, want.len);
        hbuf_free(&want);
        hbuf_free(&out);
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_HANDSHAKE);
        CHECK_EQ_INT(h->prompt_calls, 0);
    }

    /* keys exhausted: RSAPUBLICKEY with the NUL-terminated key line */
    put_token(&in, 2);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 44);
    hbuf_free(&in);
    h_take(h->s, &out);
    hbuf want = {0};
    h_pkt(&want, ADBC_A_AUTH, ADBC_AUTH_RSAPUBLICKEY, 0, "QUFBQQ== user@host", 19);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(h->prompt_calls, 1);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_AUTH_PROMPT);
    CHECK(strstr(h->log, "sign 0\nsign 1\nsign 2\npubkey\nprompt\n") != NULL);

    /* more tokens while the prompt is up: nothing more is sent */
    put_token(&in, 3);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 44);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(h->prompt_calls, 1);

    /* the user taps Allow: the device's CNXN arrives */
    h_pkt0(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_DEVICE_BANNER, strlen(H_DEVICE_BANNER));
    CHECK(h_feed_buf(h->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(h->online_calls, 1);
    h_peer_free(h);
}

TEST(host_without_public_key_is_unauthorized)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    h->nkeys = 0;
    h->pubkey = NULL;
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    put_token(&in, 0);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EUNAUTHORIZED);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
    CHECK(h_msg_has(adbc_last_error(), "unauthorized"));
    CHECK(h_msg_has(adbc_session_error(h->s), "unauthorized"));
    /* a failed session stays failed */
    put_token(&in, 1);
    CHECK(h_feed_buf(h->s, &in, 0) < 0);
    CHECK(adbc_last_error()[0] != '\0');
    hbuf_free(&in);
    h_peer_free(h);
}

TEST(host_sign_failure_fails_session)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    h->sign_error = ADBC_EKEY;
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    put_token(&in, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EKEY);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "AUTH"));
    h_peer_free(h);
}

TEST(host_gives_up_after_max_auth_tokens)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    for (int pass = 0; pass < 2; pass++) {
        unsigned max = pass == 0 ? 3 : 16;
        cfg.max_auth_tokens = pass == 0 ? 3 : 0; /* 0: the default, 16 */
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, &cfg);
        CHECK(h != NULL);
        h->nkeys = 1000; /* a device that refuses every one of many keys */
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        hbuf out = {0}, in = {0};
        h_take(h->s, &out);
        hbuf_free(&out);
        for (unsigned k = 0; k < max; k++) {
            put_token(&in, k);
            CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 44);
            hbuf_free(&in);
        }
        h_take(h->s, &out);
        CHECK_EQ_INT(h_count(&out, NULL), max); /* one SIGNATURE each */
        hbuf_free(&out);
        put_token(&in, max);
        adbc_clear_error();
        CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EUNAUTHORIZED);
        hbuf_free(&in);
        CHECK(h_msg_has(adbc_last_error(), "AUTH"));
        CHECK_EQ_INT(h->sign_calls, max);
        h_peer_free(h);
    }
}

TEST(host_rejects_bad_auth_packets)
{
    static const size_t sizes[] = {0, 19, 21, 256};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        CHECK(h != NULL);
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        hbuf in = {0};
        uint8_t tok[256];
        memset(tok, 0x5a, sizeof tok);
        h_pkt0(&in, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, tok, sizes[i]);
        adbc_clear_error();
        CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
        hbuf_free(&in);
        CHECK(h_msg_has(adbc_last_error(), "AUTH"));
        CHECK_EQ_INT(h->sign_calls, 0);
        h_peer_free(h);
    }
    /* a device never sends SIGNATURE or RSAPUBLICKEY */
    for (uint32_t type = 2; type <= 4; type++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        CHECK(h != NULL);
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        hbuf in = {0};
        h_pkt0(&in, ADBC_A_AUTH, type, 0, "0123456789abcdefghij", 20);
        CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
        hbuf_free(&in);
        CHECK(h_msg_has(adbc_last_error(), "AUTH"));
        h_peer_free(h);
    }
}

/* ---- device AUTH ---- */

static hbuf host_cnxn(void)
{
    hbuf b = {0};
    h_pkt(&b, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_HOST_BANNER, strlen(H_HOST_BANNER));
    return b;
}

static void put_sig(hbuf *b, unsigned key, const uint8_t *token)
{
    uint8_t sig[24];
    memcpy(sig, "SIG", 3);
    sig[3] = (uint8_t)key;
    memcpy(sig + 4, token, 20);
    h_pkt(b, ADBC_A_AUTH, ADBC_AUTH_SIGNATURE, 0, sig, sizeof sig);
}

TEST(device_challenges_and_verifies)
{
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    hbuf in = host_cnxn(), out = {0};
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(d->s, &out);
    /* AUTH(TOKEN, 0) with token 0 (bytes 0x00..0x13), sum 0xbe */
    static const uint8_t want[] = {
        0x41, 0x55, 0x54, 0x48, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0xbe, 0x00, 0x00, 0x00, 0xbe, 0xaa, 0xab, 0xb7,
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
        0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13};
    CHECK_EQ_INT(out.len, sizeof want);
    CHECK_MEM(out.p, want, sizeof want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_HANDSHAKE);
    CHECK_EQ_INT(d->random_calls, 1);

    /* a signature by an untrusted key: a new token (daemon/auth.cpp) */
    uint8_t tok0[20];
    memcpy(tok0, d->last_token, 20);
    put_sig(&in, 1, tok0);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    hpkt p;
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_AUTH);
    CHECK_EQ_INT(p.a0, ADBC_AUTH_TOKEN);
    CHECK_EQ_INT(p.len, 20);
    CHECK_EQ_INT(p.data[0], 0x10); /* token 1 */
    hbuf_free(&out);
    CHECK_EQ_INT(d->verify_calls, 1);
    CHECK_EQ_INT(d->random_calls, 2);

    /* the trusted key over the old token: refused, another token */
    put_sig(&in, 0, tok0);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_AUTH);
    CHECK_EQ_INT(p.data[0], 0x20);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_HANDSHAKE);

    /* the trusted key over the current token: CNXN */
    put_sig(&in, 0, d->last_token);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    CHECK_EQ_INT(p.check, h_sum(p.data, p.len));
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(d->online_calls, 1);

    /* AUTH once online is ignored */
    put_sig(&in, 0, d->last_token);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    h_peer_free(d);
}

TEST(device_key_offer_accepted)
{
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    d->trust_key = -1;
    d->offer_accept = 1;
    hbuf in = host_cnxn(), out = {0};
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    hbuf_free(&out);
    h_pkt(&in, ADBC_A_AUTH, ADBC_AUTH_RSAPUBLICKEY, 0, "QUFBQQ== me@pc", 15);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(d->offer_calls, 1);
    CHECK_STR(d->offered, "QUFBQQ== me@pc");
    h_take(d->s, &out);
    hpkt p;
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    h_peer_free(d);
}

TEST(device_key_offer_pending_then_accepted)
{
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    d->trust_key = -1;
    d->offer_accept = 0;
    CHECK_EQ_INT(adbc_session_auth_accept(d->s), ADBC_EINVAL); /* nothing pending */
    hbuf in = host_cnxn(), out = {0};
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    hbuf_free(&out);
    h_pkt(&in, ADBC_A_AUTH, ADBC_AUTH_RSAPUBLICKEY, 0, "QUFBQQ== me@pc", 15);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(d->offer_calls, 1);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_HANDSHAKE);
    CHECK_EQ_INT(adbc_session_auth_accept(d->s), 0);
    h_take(d->s, &out);
    hpkt p;
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(d->online_calls, 1);
    CHECK_EQ_INT(adbc_session_auth_accept(d->s), ADBC_EINVAL); /* once */
    h_peer_free(d);
}

TEST(device_rejects_token_from_host)
{
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    hbuf in = host_cnxn();
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    put_token(&in, 0);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "AUTH"));
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_FAILED);
    h_peer_free(d);
}

TEST(auth_paths_host_against_device)
{
    /* (a) key offered and accepted on the device */
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(h && d);
    d->trust_key = -1;
    d->offer_accept = 1;
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    CHECK_EQ_INT(h_pump(h, d, 3), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    CHECK_STR(d->offered, "QUFBQQ== user@host");
    CHECK_EQ_INT(h->prompt_calls, 1);
    h_peer_free(h);
    h_peer_free(d);

    /* (b) the user allows later */
    h = h_peer_new(ADBC_ROLE_HOST, NULL);
    d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(h && d);
    d->trust_key = -1;
    d->offer_accept = 0;
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    CHECK_EQ_INT(h_pump(h, d, 0), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_AUTH_PROMPT);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_HANDSHAKE);
    CHECK_EQ_INT(adbc_session_auth_accept(d->s), 0);
    CHECK_EQ_INT(h_pump(h, d, 0), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    h_peer_free(h);
    h_peer_free(d);

    /* (c) no auth at all */
    adbc_session_config dc;
    adbc_session_config_init(&dc, ADBC_ROLE_DEVICE);
    dc.auth_required = 0;
    h = h_peer_new(ADBC_ROLE_HOST, NULL);
    d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    CHECK(h && d);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    CHECK_EQ_INT(h_pump(h, d, 1), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(h->sign_calls, 0);
    CHECK_EQ_INT(d->random_calls, 0);
    h_peer_free(h);
    h_peer_free(d);
}

/* ---- STLS ---- */

TEST(device_offers_tls)
{
    adbc_session_config dc;
    adbc_session_config_init(&dc, ADBC_ROLE_DEVICE);
    dc.offer_tls = 1;
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    CHECK(d != NULL);
    hbuf in = host_cnxn(), out = {0};
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    static const uint8_t stls[24] = {0x53, 0x54, 0x4c, 0x53, 0x00, 0x00, 0x00, 0x01,
                                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0xac, 0xab, 0xb3, 0xac};
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, stls, 24);
    hbuf_free(&out);
    /* the host's STLS answer: TLS; bytes after it are TLS records */
    hbuf_put(&in, stls, 24);
    hbuf_put(&in, "\x16\x03\x01", 3);
    CHECK_EQ_INT(adbc_session_recv(d->s, in.p, in.len), 24);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_TLS);
    CHECK_EQ_INT(adbc_session_recv(d->s, (const uint8_t *)"\x16\x03", 2), 0);
    CHECK_EQ_INT(adbc_session_tls_done(d->s), 0);
    h_take(d->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(adbc_session_tls_done(d->s), ADBC_EINVAL);
    h_peer_free(d);
}

TEST(host_follows_stls)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    h_pkt0(&in, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
    hbuf_put(&in, "\x16\x03\x01\x02\x00", 5); /* a ClientHello would follow */
    CHECK_EQ_INT(adbc_session_recv(h->s, in.p, in.len), 24);
    hbuf_free(&in);
    h_take(h->s, &out);
    hpkt p;
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_STLS);
    CHECK_EQ_INT(p.a0, 0x01000000);
    CHECK_EQ_INT(p.len, 0);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_TLS);
    CHECK_EQ_INT(adbc_session_tls_done(h->s), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_HANDSHAKE);
    h_pkt0(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_DEVICE_BANNER, strlen(H_DEVICE_BANNER));
    CHECK(h_feed_buf(h->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    h_peer_free(h);
}

/* Fed a byte at a time, consumption stops right after the STLS packet. */
TEST(stls_stops_consumption_at_any_split)
{
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
    hbuf_put(&in, "\x16\x03\x01\x02\x00", 5);
    for (size_t cut = 1; cut <= in.len; cut++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        CHECK(h != NULL);
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        size_t consumed = 0;
        for (size_t off = 0; off < in.len; off += cut) {
            size_t n = in.len - off < cut ? in.len - off : cut;
            int rc = adbc_session_recv(h->s, in.p + off, n);
            CHECK(rc >= 0);
            consumed += (size_t)rc;
            if ((size_t)rc < n)
                break;
        }
        CHECK_EQ_INT(consumed, 24);
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_TLS);
        h_peer_free(h);
    }
    hbuf_free(&in);
}

TEST(unexpected_stls_is_eproto)
{
    hpeer *d = h_device_online(0x01000001u, 0x100000u, H_HOST_BANNER, NULL, NULL);
    CHECK(d != NULL);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), ADBC_EPROTO);
    CHECK(h_msg_has(adbc_last_error(), "STLS"));
    h_peer_free(d);
    hpeer *h = h_host_online(0x01000001u, 0x100000u, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    CHECK(h_msg_has(adbc_last_error(), "STLS"));
    hbuf_free(&in);
    h_peer_free(h);
}

/* ---- data checks ---- */

TEST(cnxn_with_bad_sum_is_eproto)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf in = {0};
    h_pkt_check(&in, ADBC_A_CNXN, 0x01000000u, 4096, H_DEVICE_BANNER, strlen(H_DEVICE_BANNER),
                h_sum(H_DEVICE_BANNER, strlen(H_DEVICE_BANNER)) + 1);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "CNXN"));
    CHECK(h_msg_has(adbc_last_error(), "data check"));
    h_peer_free(h);

    /* a device's TOKEN with a wrong (nonzero) sum */
    h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    h_pkt_check(&in, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, "01234567890123456789", 20, 1);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "AUTH"));
    h_peer_free(h);
}

TEST(legacy_peer_bad_sum_after_handshake_is_eproto)
{
    hpeer *h = h_host_online(0x01000000u, 4096, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:ls"), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_OPEN);
    CHECK_EQ_INT(p.check, h_sum("shell:ls", 9)); /* sums for a 0x01000000 peer */
    hbuf_free(&out);
    h_pkt(&in, ADBC_A_OKAY, 9, id, NULL, 0);
    h_pkt(&in, ADBC_A_WRTE, 9, id, "good", 4);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(h->s, &out);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_OKAY); /* consumed at once */
    hbuf_free(&out);
    h_pkt_check(&in, ADBC_A_WRTE, 9, id, "bad!", 4, 0);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 1), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "WRTE"));
    CHECK(h_msg_has(adbc_last_error(), "data check"));
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
    h_peer_free(h);
}

TEST(skip_checksum_peer_sum_is_ignored)
{
    hpeer *h = h_host_online(0x01000001u, 0x100000u, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:ls"), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.check, 0); /* no sum for a 0x01000001 peer */
    hbuf_free(&out);
    h_okay_win(&in, 9, id, 65536);
    h_pkt_check(&in, ADBC_A_WRTE, 9, id, "data", 4, 0xdeadbeef);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[id].len, 4);
    CHECK_MEM(h->rx[id].p, "data", 4);
    h_peer_free(h);
}

/* ---- the handshake size limit and packets before CNXN ---- */

TEST(handshake_packets_limited_to_4096)
{
    char *big = malloc(4097);
    CHECK(big != NULL);
    memcpy(big, "device::features=", 17);
    memset(big + 17, 'x', 4097 - 17);
    for (int role = 0; role < 2; role++) {
        hpeer *p = h_peer_new(role ? ADBC_ROLE_DEVICE : ADBC_ROLE_HOST, NULL);
        CHECK(p != NULL);
        if (!role)
            CHECK_EQ_INT(adbc_session_start(p->s), 0);
        hbuf in = {0};
        h_pkt(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, big, 4096); /* at the limit */
        CHECK_EQ_INT(h_feed_buf(p->s, &in, 0), (long)in.len);
        hbuf_free(&in);
        h_peer_free(p);

        p = h_peer_new(role ? ADBC_ROLE_DEVICE : ADBC_ROLE_HOST, NULL);
        CHECK(p != NULL);
        h_pkt(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, big, 4097);
        adbc_clear_error();
        /* refused from the header alone, before the payload arrives */
        CHECK_EQ_INT(adbc_session_recv(p->s, in.p, 24), ADBC_EPROTO);
        hbuf_free(&in);
        CHECK(h_msg_has(adbc_last_error(), "CNXN"));
        CHECK(h_msg_has(adbc_last_error(), "4097"));
        h_peer_free(p);
    }
    free(big);

    /* an AUTH token above the limit */
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    uint8_t hdr[24];
    adbc_header_encode(hdr, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, 65536, 0);
    CHECK_EQ_INT(adbc_session_recv(h->s, hdr, 24), ADBC_EPROTO);
    CHECK(h_msg_has(adbc_last_error(), "AUTH"));
    h_peer_free(h);
}

TEST(packets_before_cnxn_are_ignored)
{
    /* handle_packet drops stream packets while the transport is offline */
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_start(h->s), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    h_pkt0(&in, ADBC_A_OPEN, 5, 0, "shell:\0", 7);
    h_okay_win(&in, 5, 1, 1000);
    h_pkt0(&in, ADBC_A_WRTE, 5, 1, "x", 1);
    h_pkt0(&in, ADBC_A_CLSE, 5, 1, NULL, 0);
    h_pkt0(&in, ADBC_A_SYNC, 1, 1, NULL, 0);
    h_pkt0(&in, 0x21212121u, 1, 1, "??", 2);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_HANDSHAKE);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(h->loglen, 0);
    h_peer_free(h);

    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
    CHECK(d != NULL);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 1), (long)in.len);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    /* an AUTH before the host's CNXN is ignored as well */
    hbuf_free(&in);
    put_sig(&in, 0, (const uint8_t *)"01234567890123456789");
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(d->verify_calls, 0);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    CHECK_EQ_INT(d->loglen, 0);

    /* after CNXN but before AUTH succeeds: still no services */
    in = host_cnxn();
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out); /* the TOKEN */
    hbuf_free(&out);
    h_pkt0(&in, ADBC_A_OPEN, 5, 65536, "shell:\0", 7);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_send_queued(d->s), 0);
    CHECK(strstr(d->log, "open") == NULL);
    h_peer_free(d);
}

/* ---- malformed CNXN and a second CNXN ---- */

static const struct {
    uint32_t ver, max;
    const char *banner;
    size_t len;
} bad_cnxn[] = {
    {0x00ffffffu, 4096, "device::", 8},  /* version too old */
    {0x01000000u, 0, "device::", 8},     /* no room for anything */
    {0x01000000u, 255, "device::", 8},
    {0x01000001u, 4096, "device", 6},    /* no colon */
    {0x01000001u, 4096, "abcdefgh", 8},  /* no colon, fed in pieces */
    {0x01000001u, 4096, "dev\0ce::", 8}, /* NUL inside */
    {0x01000001u, 4096, "", 0},          /* empty */
};

/* Feed bad CNXN i to a fresh host, whole (chunk 0) or a byte at a time. */
static long feed_bad_cnxn(size_t i, size_t chunk, hpeer **out)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    if (!h || adbc_session_start(h->s) < 0)
        abort();
    hbuf in = {0};
    h_pkt(&in, ADBC_A_CNXN, bad_cnxn[i].ver, bad_cnxn[i].max, bad_cnxn[i].banner,
          bad_cnxn[i].len);
    adbc_clear_error();
    long rc = h_feed_buf(h->s, &in, chunk);
    hbuf_free(&in);
    *out = h;
    return rc;
}

TEST(malformed_cnxn_fails_cleanly)
{
    for (size_t i = 0; i < sizeof bad_cnxn / sizeof bad_cnxn[0]; i++) {
        for (size_t chunk = 0; chunk <= 3; chunk++) {
            hpeer *h;
            long rc = feed_bad_cnxn(i, chunk, &h);
            if (rc != ADBC_EPROTO)
                fprintf(stderr, "  case %zu: rc %ld\n", i, rc);
            CHECK_EQ_INT(rc, ADBC_EPROTO);
            CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
            CHECK(adbc_last_error()[0] != '\0');
            CHECK(adbc_session_error(h->s)[0] != '\0');
            CHECK_EQ_INT(h->online_calls, 0);
            CHECK(adbc_session_peer(h->s) == NULL);
            h_peer_free(h);
        }
    }
}

TEST(malformed_cnxn_message_names_cnxn)
{
    for (size_t i = 0; i < sizeof bad_cnxn / sizeof bad_cnxn[0]; i++) {
        hpeer *h;
        long rc = feed_bad_cnxn(i, 0, &h);
        if (!h_msg_has(adbc_last_error(), "CNXN"))
            fprintf(stderr, "  case %zu: message \"%s\"\n", i, adbc_last_error());
        CHECK_EQ_INT(rc, ADBC_EPROTO);
        CHECK(h_msg_has(adbc_last_error(), "CNXN"));
        h_peer_free(h);
    }
}

TEST(second_cnxn_to_online_host_ends_session)
{
    hpeer *h = h_host_online(0x01000001u, 0x100000u, H_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_DEVICE_BANNER, strlen(H_DEVICE_BANNER));
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_ECLOSED);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "CNXN"));
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
    h_peer_free(h);
}

/* handle_new_connection calls handle_offline first: a host that connects
 * again starts over, its old streams closed and authentication redone. */
TEST(device_restarts_on_second_host_cnxn)
{
    adbc_session_config dc;
    adbc_session_config_init(&dc, ADBC_ROLE_DEVICE);
    dc.auth_required = 1;
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    CHECK(d != NULL);
    hbuf in = host_cnxn(), out = {0};
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    put_sig(&in, 0, d->last_token);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    h_pkt0(&in, ADBC_A_OPEN, 5, 4u << 20, "shell:\0", 7);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_stream_count(d->s), 1);
    h_take(d->s, &out);
    hbuf_free(&out);

    in = host_cnxn();
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_AUTH); /* a new challenge */
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(d->s), 0);
    CHECK(d->closed[1]); /* the old stream is reported closed */
    CHECK_EQ_INT(d->closed_reason[1], 0);
    CHECK(adbc_session_state_get(d->s) != ADBC_SESSION_ONLINE);
    /* and the host's new signature is checked, not ignored */
    put_sig(&in, 0, d->last_token);
    CHECK(h_feed_buf(d->s, &in, 0) > 0);
    hbuf_free(&in);
    h_take(d->s, &out);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CNXN);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
    h_peer_free(d);
}

/* ---- every split of one byte stream gives the same result ---- */

TEST(device_stream_any_split)
{
    /* host CNXN, OPEN, WRTE, CLSE in one stream of bytes */
    hbuf in = host_cnxn();
    h_pkt(&in, ADBC_A_OPEN, 5, 65536, "shell:echo hi\0", 14);
    h_pkt(&in, ADBC_A_WRTE, 5, 1, "hello", 5);
    h_pkt(&in, ADBC_A_CLSE, 5, 1, NULL, 0);
    adbc_session_config dc;
    adbc_session_config_init(&dc, ADBC_ROLE_DEVICE);
    dc.auth_required = 0;

    hbuf ref_out = {0};
    char ref_log[sizeof ((hpeer *)0)->log];
    hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    CHECK(d != NULL);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    h_take(d->s, &ref_out);
    memcpy(ref_log, d->log, sizeof ref_log);
    CHECK(strstr(ref_log, "open 1 shell:echo hi\n") != NULL);
    CHECK(strstr(ref_log, "data 1 5\n") != NULL);
    CHECK(strstr(ref_log, "closed 1 0\n") != NULL);
    CHECK_EQ_INT(d->rx[1].len, 5);
    h_peer_free(d);
    /* CNXN, OKAY(1, 5, window), OKAY(1, 5, 5) */
    CHECK_EQ_INT(h_count(&ref_out, NULL), 3);

    for (size_t cut = 0; cut <= in.len; cut++) {
        d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
        CHECK(d != NULL);
        CHECK_EQ_INT(adbc_session_recv(d->s, in.p, cut), (int)cut);
        CHECK_EQ_INT(adbc_session_recv(d->s, in.p + cut, in.len - cut), (int)(in.len - cut));
        hbuf out = {0};
        h_take(d->s, &out);
        CHECK_EQ_INT(out.len, ref_out.len);
        CHECK_MEM(out.p, ref_out.p, out.len);
        CHECK_STR(d->log, ref_log);
        hbuf_free(&out);
        h_peer_free(d);
    }
    d = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    CHECK(d != NULL);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 1), (long)in.len);
    hbuf out = {0};
    h_take(d->s, &out);
    CHECK_EQ_INT(out.len, ref_out.len);
    CHECK_MEM(out.p, ref_out.p, out.len);
    CHECK_STR(d->log, ref_log);
    hbuf_free(&out);
    h_peer_free(d);
    hbuf_free(&in);
    hbuf_free(&ref_out);
}

TEST(host_stream_any_split)
{
    /* TOKEN, TOKEN, CNXN as one stream of bytes from the device */
    hbuf in = {0};
    put_token(&in, 0);
    put_token(&in, 1);
    h_pkt0(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_DEVICE_BANNER, strlen(H_DEVICE_BANNER));
    hbuf ref = {0};
    char ref_log[sizeof ((hpeer *)0)->log];
    for (size_t cut = 0; cut <= in.len; cut++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        CHECK(h != NULL);
        CHECK_EQ_INT(adbc_session_start(h->s), 0);
        CHECK_EQ_INT(adbc_session_recv(h->s, in.p, cut), (int)cut);
        CHECK_EQ_INT(adbc_session_recv(h->s, in.p + cut, in.len - cut), (int)(in.len - cut));
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
        hbuf out = {0};
        h_take(h->s, &out);
        if (cut == 0) {
            ref = out;
            memcpy(ref_log, h->log, sizeof ref_log);
            /* CNXN, SIGNATURE with key 0, RSAPUBLICKEY */
            CHECK_EQ_INT(h_count(&ref, NULL), 3);
            CHECK(strstr(ref_log, "sign 0\nsign 1\npubkey\nprompt\nonline\n") != NULL);
        } else {
            CHECK_EQ_INT(out.len, ref.len);
            CHECK_MEM(out.p, ref.p, ref.len);
            CHECK_STR(h->log, ref_log);
            hbuf_free(&out);
        }
        h_peer_free(h);
    }
    hbuf_free(&ref);
    hbuf_free(&in);
}

/* ---- random input into both roles ---- */

static uint32_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Everything a session queued must be whole, well-formed packets. */
static int output_well_formed(adbc_session *s, uint32_t limit)
{
    hbuf out = {0};
    h_take(s, &out);
    size_t off = 0;
    hpkt p;
    int ok = 1;
    while (h_parse(&out, &off, &p)) {
        if (p.magic != (p.cmd ^ 0xffffffffu) || p.len > limit)
            ok = 0;
    }
    if (off != out.len)
        ok = 0;
    hbuf_free(&out);
    return ok;
}

static const uint32_t cmds[] = {ADBC_A_CNXN, ADBC_A_AUTH, ADBC_A_OPEN, ADBC_A_OKAY,
                                ADBC_A_WRTE, ADBC_A_CLSE, ADBC_A_SYNC, ADBC_A_STLS};

/* A random but plausible packet: a real command, small ids, a payload that
 * is sometimes a banner or a window, a right or wrong sum. */
static void random_packet(hbuf *b)
{
    uint32_t cmd = rnd() % 10 == 0 ? rnd() : cmds[rnd() % 8];
    uint32_t a0 = rnd() % 4 == 0 ? rnd() : rnd() % 4;
    uint32_t a1 = rnd() % 4 == 0 ? rnd() : rnd() % 4;
    uint8_t data[64] = {0}; /* n may be raised to 4 or 20 below */
    size_t n = rnd() % 3 == 0 ? 0 : rnd() % sizeof data;
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)rnd();
    if (cmd == ADBC_A_CNXN && rnd() % 2) {
        n = (size_t)snprintf((char *)data, sizeof data, "%s::features=delayed_ack",
                             rnd() % 2 ? "device" : "host");
        a0 = 0x01000000u + rnd() % 2;
        a1 = 4096 + rnd() % 8192;
    }
    if (cmd == ADBC_A_OKAY && rnd() % 2)
        n = 4;
    if (cmd == ADBC_A_AUTH && rnd() % 2)
        n = 20;
    uint32_t check = rnd() % 3 == 0 ? 0 : rnd() % 5 == 0 ? rnd() : h_sum(data, n);
    h_pkt_check(b, cmd, a0, a1, data, n, check);
}

static void fuzz_one(adbc_role role, int structured, int online_first)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, role);
    cfg.auth_required = (int)(rnd() % 2);
    hpeer *p;
    if (online_first)
        p = role == ADBC_ROLE_HOST
                ? h_host_online(0x01000000u + rnd() % 2, 4096 + rnd() % 4096,
                                rnd() % 2 ? H_DEVICE_BANNER : H_LEGACY_DEVICE_BANNER, &cfg, NULL)
                : h_device_online(0x01000000u + rnd() % 2, 4096 + rnd() % 4096, H_HOST_BANNER,
                                  NULL, NULL);
    else
        p = h_peer_new(role, &cfg);
    if (!p)
        return;
    p->auto_consume = (int)(rnd() % 2);
    p->refuse_open = (int)(rnd() % 2);
    if (role == ADBC_ROLE_HOST && !online_first)
        adbc_session_start(p->s);
    if (online_first && role == ADBC_ROLE_HOST) {
        uint32_t id;
        for (int i = 0; i < 3; i++)
            adbc_session_open(&id, p->s, "shell:");
    }
    hbuf in = {0};
    int npk = 1 + (int)(rnd() % 12);
    for (int i = 0; i < npk; i++) {
        if (structured) {
            random_packet(&in);
        } else {
            size_t n = rnd() % 64;
            for (size_t k = 0; k < n; k++) {
                uint8_t c = (uint8_t)rnd();
                hbuf_put(&in, &c, 1);
            }
        }
    }
    size_t off = 0;
    int failed = 0;
    while (off < in.len && !failed) {
        size_t n = 1 + rnd() % 40;
        if (n > in.len - off)
            n = in.len - off;
        adbc_clear_error();
        int rc = adbc_session_recv(p->s, in.p + off, n);
        if (rc < 0) {
            failed = 1;
            if (adbc_session_state_get(p->s) != ADBC_SESSION_FAILED ||
                adbc_last_error()[0] == '\0' || adbc_session_error(p->s)[0] == '\0') {
                fprintf(stderr, "  fuzz: rc %d without a failed state and a message\n", rc);
                t_cur_failed = 1;
            }
            break;
        }
        if ((size_t)rc < n) /* TLS: the caller would stop feeding */
            break;
        off += n;
        /* the caller may consume and write in between */
        uint32_t id = 1 + rnd() % 4;
        if (rnd() % 3 == 0)
            adbc_session_consume(p->s, id, rnd() % 100);
        if (rnd() % 3 == 0)
            adbc_session_write(p->s, id, (const uint8_t *)"xyz", 3);
        if (rnd() % 9 == 0)
            adbc_session_close_stream(p->s, id);
    }
    if (!output_well_formed(p->s, ADBC_MAX_PAYLOAD)) {
        fprintf(stderr, "  fuzz: malformed output\n");
        t_cur_failed = 1;
    }
    hbuf_free(&in);
    h_peer_free(p);
}

TEST(random_input_never_crashes)
{
    rng_state = 0x2545f491u;
    for (int iter = 0; iter < 6000 && !t_cur_failed; iter++) {
        adbc_role role = iter % 2 ? ADBC_ROLE_DEVICE : ADBC_ROLE_HOST;
        fuzz_one(role, iter % 3 != 0, iter % 4 >= 2);
    }
    CHECK(!t_cur_failed);
}

/* Random mutations of a real host-device exchange. */
TEST(mutated_exchange_never_crashes)
{
    rng_state = 0x9e3779b9u;
    for (int iter = 0; iter < 3000 && !t_cur_failed; iter++) {
        hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
        hpeer *d = h_peer_new(ADBC_ROLE_DEVICE, NULL);
        CHECK(h && d);
        d->trust_key = (int)(rnd() % 2);
        h->nkeys = 1 + rnd() % 2;
        d->offer_accept = 1;
        adbc_session_start(h->s);
        for (int round = 0; round < 20; round++) {
            hbuf a = {0};
            adbc_session *from = round % 2 ? d->s : h->s;
            adbc_session *to = round % 2 ? h->s : d->s;
            h_take(from, &a);
            if (a.len && rnd() % 3 == 0) {
                size_t k = rnd() % a.len;
                a.p[k] ^= (uint8_t)(1u << (rnd() % 8));
            }
            if (a.len) {
                int rc = adbc_session_recv(to, a.p, a.len);
                if (rc < 0 && adbc_last_error()[0] == '\0') {
                    fprintf(stderr, "  mutated: failure without a message\n");
                    t_cur_failed = 1;
                }
            }
            hbuf_free(&a);
            if (adbc_session_state_get(h->s) == ADBC_SESSION_ONLINE && round == 8) {
                uint32_t id;
                adbc_session_open(&id, h->s, "shell:id");
            }
        }
        h_peer_free(h);
        h_peer_free(d);
    }
    CHECK(!t_cur_failed);
}

int main(void)
{
    RUN(host_cnxn_exact_bytes);
    RUN(host_cnxn_custom_config);
    RUN(banner_longer_than_4096_is_refused);
    RUN(device_does_not_start);
    RUN(device_answers_host_cnxn_without_auth);
    RUN(host_online_on_device_cnxn);
    RUN(negotiation_takes_minimum);
    RUN(device_cnxn_carries_negotiated_max_payload);
    RUN(host_and_device_handshake_every_chunk_size);
    RUN(host_signs_with_each_key_then_offers_public_key);
    RUN(host_without_public_key_is_unauthorized);
    RUN(host_sign_failure_fails_session);
    RUN(host_gives_up_after_max_auth_tokens);
    RUN(host_rejects_bad_auth_packets);
    RUN(device_challenges_and_verifies);
    RUN(device_key_offer_accepted);
    RUN(device_key_offer_pending_then_accepted);
    RUN(device_rejects_token_from_host);
    RUN(auth_paths_host_against_device);
    RUN(device_offers_tls);
    RUN(host_follows_stls);
    RUN(stls_stops_consumption_at_any_split);
    RUN(unexpected_stls_is_eproto);
    RUN(cnxn_with_bad_sum_is_eproto);
    RUN(legacy_peer_bad_sum_after_handshake_is_eproto);
    RUN(skip_checksum_peer_sum_is_ignored);
    RUN(handshake_packets_limited_to_4096);
    RUN(packets_before_cnxn_are_ignored);
    RUN(malformed_cnxn_fails_cleanly);
    RUN(malformed_cnxn_message_names_cnxn);
    RUN(second_cnxn_to_online_host_ends_session);
    RUN(device_restarts_on_second_host_cnxn);
    RUN(device_stream_any_split);
    RUN(host_stream_any_split);
    RUN(random_input_never_crashes);
    RUN(mutated_exchange_never_crashes);
    return T_DONE();
}
