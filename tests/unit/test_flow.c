/* SPDX-License-Identifier: Apache-2.0 */
/* Streams and flow control on an online session: OPEN/OKAY/WRTE/CLSE with
 * exact bytes in both modes, legacy one-WRTE-in-flight and delayed_ack
 * windows from both the sender's and the receiver's side, refusal, many
 * streams at once, a stalled stream beside a busy one, and malformed stream
 * packets from the peer.
 *
 * AOSP references: adb.cpp handle_packet (A_OPEN / A_OKAY / A_WRTE /
 * A_CLSE), sockets.cpp (local_socket_ack, local_socket_flush_incoming,
 * local_socket_flush_outgoing: adbd sends while its available_send_bytes is
 * positive, reading up to max_payload, so it can overshoot the window by up
 * to one packet) and protocol.txt. */
#include "t.h"

#include "session_harness.h"

#define WIN4M (4u << 20) /* adbc's default receive window */

/* A host online with a 0x01000001 device that speaks delayed_ack (or not),
 * offering `max` bytes per packet. */
static hpeer *host(int delayed, uint32_t max, const adbc_session_config *cfg)
{
    return h_host_online(0x01000001u, max, delayed ? H_DEVICE_BANNER : H_LEGACY_DEVICE_BANNER,
                         cfg, NULL);
}

/* Open `service` on h, check the OPEN bytes, and bind it with the device's
 * OKAY(remote, id [, window]). Returns the local id, 0 on failure. */
static uint32_t open_bound(hpeer *h, const char *service, uint32_t remote, int delayed,
                           uint32_t window)
{
    uint32_t id = 0;
    if (adbc_session_open(&id, h->s, service) < 0)
        return 0;
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    if (delayed)
        h_okay_win(&in, remote, id, window);
    else
        h_pkt0(&in, ADBC_A_OKAY, remote, id, NULL, 0);
    long rc = h_feed_buf(h->s, &in, 0);
    hbuf_free(&in);
    return rc < 0 ? 0 : id;
}

/* ---- OPEN and OKAY ---- */

TEST(open_delayed_ack_exact_bytes)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:ls"), 0);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 1);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0); /* not before OKAY */
    hbuf out = {0};
    h_take(h->s, &out);
    /* OPEN(1, window 4 MiB, "shell:ls\0"), check 0 */
    static const uint8_t want[] = {0x4f, 0x50, 0x45, 0x4e, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0x40, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0xb0, 0xaf, 0xba, 0xb1, 's',  'h',  'e',  'l',  'l',  ':',
                                   'l',  's',  0x00};
    CHECK_EQ_INT(out.len, sizeof want);
    CHECK_MEM(out.p, want, sizeof want);
    hbuf_free(&out);

    /* the second stream gets the next id */
    uint32_t id2 = 0;
    CHECK_EQ_INT(adbc_session_open(&id2, h->s, "sync:"), 0);
    CHECK_EQ_INT(id2, 2);
    h_peer_free(h);
}

TEST(open_legacy_exact_bytes)
{
    hpeer *h = host(0, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:ls"), 0);
    hbuf out = {0};
    h_take(h->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_OPEN);
    CHECK_EQ_INT(p.a0, id);
    CHECK_EQ_INT(p.a1, 0); /* OPEN(local-id, 0, "destination") */
    CHECK_EQ_INT(p.len, 9);
    CHECK_MEM(p.data, "shell:ls", 9);
    CHECK_EQ_INT(p.check, 0);
    hbuf_free(&out);
    h_peer_free(h);
}

TEST(open_refused_when_not_online_or_bad_name)
{
    hpeer *h = h_peer_new(ADBC_ROLE_HOST, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:"), ADBC_EOFFLINE);
    CHECK(adbc_last_error()[0] != '\0');
    h_peer_free(h);

    h = host(1, 4096, NULL);
    CHECK(h != NULL);
    CHECK_EQ_INT(adbc_session_open(&id, h->s, ""), ADBC_EINVAL);
    char *big = malloc(4097);
    CHECK(big != NULL);
    memset(big, 'a', 4096);
    big[4096] = '\0';
    CHECK_EQ_INT(adbc_session_open(&id, h->s, big), ADBC_EINVAL); /* 4097 with its NUL */
    big[4095] = '\0';
    CHECK_EQ_INT(adbc_session_open(&id, h->s, big), 0); /* exactly 4096 */
    free(big);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 1);
    h_peer_free(h);
}

TEST(okay_binds_ids_and_grants_window)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:"), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    h_okay_win(&in, 0x77, id, 65536);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK(h->ready[id]);
    CHECK(h->writable_calls[id] >= 1);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 65536);

    /* WRTE(local, remote, data), check 0 */
    CHECK_EQ_INT(adbc_session_write(h->s, id, (const uint8_t *)"hi", 2), 2);
    h_take(h->s, &out);
    hbuf want = {0};
    h_pkt0(&want, ADBC_A_WRTE, id, 0x77, "hi", 2);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 65534);

    /* closing sends CLSE(local, remote) */
    CHECK_EQ_INT(adbc_session_close_stream(h->s, id), 0);
    h_take(h->s, &out);
    h_pkt0(&want, ADBC_A_CLSE, id, 0x77, NULL, 0);
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    CHECK(!h->closed[id]); /* no on_closed for our own close */
    CHECK_EQ_INT(adbc_session_write(h->s, id, (const uint8_t *)"x", 1), ADBC_ECLOSED);
    h_peer_free(h);
}

TEST(legacy_peer_packets_carry_sums)
{
    hpeer *h = h_host_online(0x01000000u, 4096, H_LEGACY_DEVICE_BANNER, NULL, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 5, 0, 0);
    CHECK(id != 0);
    CHECK_EQ_INT(adbc_session_write(h->s, id, (const uint8_t *)"abc", 3), 3);
    CHECK_EQ_INT(adbc_session_close_stream(h->s, id), 0);
    hbuf out = {0}, want = {0};
    h_take(h->s, &out);
    h_pkt(&want, ADBC_A_WRTE, id, 5, "abc", 3);
    h_pkt(&want, ADBC_A_CLSE, id, 5, NULL, 0);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&out);
    hbuf_free(&want);
    h_peer_free(h);
}

/* ---- WRTE splitting ---- */

TEST(write_splits_at_max_payload)
{
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 1u << 20);
    CHECK(id != 0);
    uint8_t *data = malloc(10000);
    CHECK(data != NULL);
    for (size_t i = 0; i < 10000; i++)
        data[i] = (uint8_t)(i * 7);
    CHECK_EQ_INT(adbc_session_write(h->s, id, data, 10000), 10000);
    hbuf out = {0};
    h_take(h->s, &out);
    int exact;
    CHECK_EQ_INT(h_count(&out, &exact), 3);
    CHECK(exact);
    static const uint32_t lens[] = {4096, 4096, 1808};
    size_t off = 0, pos = 0;
    hpkt p;
    for (int k = 0; k < 3; k++) {
        CHECK(h_parse(&out, &off, &p));
        CHECK_EQ_INT(p.cmd, ADBC_A_WRTE);
        CHECK_EQ_INT(p.a0, id);
        CHECK_EQ_INT(p.a1, 9);
        CHECK_EQ_INT(p.len, lens[k]);
        CHECK_MEM(p.data, data + pos, p.len);
        pos += p.len;
    }
    free(data);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), (1u << 20) - 10000);
    h_peer_free(h);
}

/* ---- refusal and closing ---- */

TEST(clse_zero_refuses_open)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "nosuchservice:"), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    hbuf_free(&out);
    h_pkt0(&in, ADBC_A_CLSE, 0, id, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 24);
    hbuf_free(&in);
    CHECK(h->closed[id]);
    CHECK_EQ_INT(h->closed_reason[id], ADBC_EREFUSED);
    CHECK(!h->ready[id]);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0); /* nothing to answer */
    h_peer_free(h);
}

TEST(peer_close_reports_zero)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 42, 1, 65536);
    CHECK(id != 0);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_CLSE, 42, id, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 24);
    hbuf_free(&in);
    CHECK(h->closed[id]);
    CHECK_EQ_INT(h->closed_reason[id], 0);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    /* late packets for the closed stream are dropped, not errors */
    h_pkt0(&in, ADBC_A_WRTE, 42, id, "late", 4);
    h_pkt0(&in, ADBC_A_CLSE, 42, id, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[id].len, 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    h_peer_free(h);
}

TEST(okay_after_local_close_gets_clse)
{
    /* handle_packet A_OKAY: no local socket any more -> send_close(arg1, arg0) */
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:"), 0);
    CHECK_EQ_INT(adbc_session_close_stream(h->s, id), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    CHECK_EQ_INT(h_count(&out, NULL), 1); /* just the OPEN: no CLSE before OKAY */
    hbuf_free(&out);
    h_okay_win(&in, 33, id, 65536);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    h_take(h->s, &out);
    hbuf want = {0};
    h_pkt0(&want, ADBC_A_CLSE, id, 33, NULL, 0);
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK(!h->ready[id]);
    h_peer_free(h);
}

/* ---- device role: OPEN handling ---- */

static hpeer *device(int delayed)
{
    return h_device_online(0x01000001u, 0x100000u,
                           delayed ? H_HOST_BANNER : "host::features=shell_v2,cmd", NULL, NULL);
}

TEST(device_accepts_open)
{
    hpeer *d = device(1);
    CHECK(d != NULL);
    hbuf in = {0}, out = {0};
    h_pkt0(&in, ADBC_A_OPEN, 5, 65536, "shell:ls\0\0", 10); /* trailing NULs stripped */
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_STR(d->last_service, "shell:ls");
    CHECK_EQ_INT(adbc_session_stream_count(d->s), 1);
    h_take(d->s, &out);
    hbuf want = {0};
    h_okay_win(&want, 1, 5, WIN4M); /* OKAY(local, remote, our window) */
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(d->s, 1), 65536); /* the host's window */
    CHECK(d->writable_calls[1] >= 1);
    h_peer_free(d);

    d = device(0);
    CHECK(d != NULL);
    h_pkt0(&in, ADBC_A_OPEN, 5, 0, "shell:ls", 8); /* no NUL at all */
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_STR(d->last_service, "shell:ls");
    h_take(d->s, &out);
    h_pkt0(&want, ADBC_A_OKAY, 1, 5, NULL, 0);
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(d->s, 1), 0x100000);
    h_peer_free(d);
}

TEST(device_refuses_open)
{
    /* handle_packet A_OPEN: no such service, or arg1 not matching the
     * negotiated mode -> send_close(0, remote) */
    static const struct {
        int delayed;
        uint32_t arg1;
        const char *svc;
        size_t len;
        int refuse;
    } c[] = {
        {1, 65536, "nosuch:\0", 8, 1}, /* on_open refuses */
        {1, 0, "shell:\0", 7, 0},       /* delayed_ack session, no window */
        {0, 65536, "shell:\0", 7, 0},   /* legacy session with a window */
        {1, 65536, "", 0, 0},           /* empty name */
        {1, 65536, "\0\0", 2, 0},       /* only NULs */
        {1, 65536, "she\0ll:", 7, 0},   /* NUL inside */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hpeer *d = device(c[i].delayed);
        CHECK(d != NULL);
        d->refuse_open = c[i].refuse;
        hbuf in = {0}, out = {0}, want = {0};
        h_pkt0(&in, ADBC_A_OPEN, 77, c[i].arg1, c[i].svc, c[i].len);
        CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
        hbuf_free(&in);
        h_take(d->s, &out);
        h_pkt0(&want, ADBC_A_CLSE, 0, 77, NULL, 0);
        if (out.len != 24)
            fprintf(stderr, "  case %zu: %zu bytes out\n", i, out.len);
        CHECK_EQ_INT(out.len, 24);
        CHECK_MEM(out.p, want.p, 24);
        hbuf_free(&want);
        hbuf_free(&out);
        CHECK_EQ_INT(adbc_session_stream_count(d->s), 0);
        CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
        h_peer_free(d);
    }
}

/* abb_exec: names carry NUL bytes (its argument separator): the host sends
 * them whole with adbc_session_open_bytes, and a device callee that takes
 * the length (on_open_bytes) gets the name less its trailing NULs, as
 * adbd's string_view. */
static struct {
    char name[64];
    size_t len;
    unsigned calls;
} nul_open;

static int nul_open_cb(void *user, uint32_t id, const uint8_t *service, size_t len)
{
    (void)user;
    (void)id;
    nul_open.calls++;
    nul_open.len = len;
    memcpy(nul_open.name, service, len < sizeof nul_open.name ? len : sizeof nul_open.name);
    return service[len] != '\0'; /* NUL-terminated too: else refuse */
}

TEST(open_name_with_nul_bytes)
{
    static const char name[] = "abb_exec:package\0install\0-S\0005"; /* 34 bytes */
    size_t len = sizeof name - 1;
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open_bytes(&id, h->s, "abb_exec:x\0", 11), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "NUL"));
    CHECK_EQ_INT(adbc_session_open_bytes(&id, h->s, name, len), 0);
    hbuf out = {0};
    h_take(h->s, &out);
    CHECK_EQ_INT(out.len, 24 + len + 1); /* the name whole, then its NUL */
    CHECK_MEM(out.p + 24, name, len + 1);
    hbuf_free(&out);
    h_peer_free(h);

    /* a device with on_open_bytes */
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.auth_required = 0;
    adbc_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.size = sizeof cb;
    cb.on_open_bytes = nul_open_cb;
    adbc_session *d = NULL;
    CHECK_EQ_INT(adbc_session_new(&d, &cfg, &cb, NULL), 0);
    hbuf in = {0};
    h_pkt(&in, ADBC_A_CNXN, 0x01000001u, 0x100000u, H_HOST_BANNER, strlen(H_HOST_BANNER));
    h_pkt0(&in, ADBC_A_OPEN, 9, 65536, name, len + 1);
    CHECK_EQ_INT(h_feed_buf(d, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(nul_open.calls, 1);
    CHECK_EQ_INT(nul_open.len, len);
    CHECK_MEM(nul_open.name, name, len);
    CHECK_EQ_INT(adbc_session_stream_count(d), 1); /* accepted */
    adbc_session_free(d);

    /* to a device with on_open only such a name is refused, as before:
     * device_refuses_open's "NUL inside" */
}

TEST(host_refuses_open_from_device)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    hbuf in = {0}, out = {0}, want = {0};
    h_pkt0(&in, ADBC_A_OPEN, 12, 65536, "tcp:8080\0", 9);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(h->s, &out);
    h_pkt0(&want, ADBC_A_CLSE, 0, 12, NULL, 0);
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    h_peer_free(h);
}

/* Reverse forwarding: a host that set accept_opens hands the device's OPEN
 * to on_open with the destination it asks for (adbd's listener_event_func
 * -> connect_to_remote sends OPEN(local, window, "tcp:9090")). Accepted:
 * OKAY(our id, its id, our window), then data both ways under the windows;
 * refused: CLSE(0, its id) and nothing left behind. */
TEST(host_accepts_device_open_when_asked)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.accept_opens = 1;
    hpeer *h = host(1, 0x100000u, &cfg);
    CHECK(h != NULL);
    hbuf in = {0}, out = {0}, want = {0};
    h_pkt0(&in, ADBC_A_OPEN, 12, 65536, "tcp:9090\0", 9);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_STR(h->last_service, "tcp:9090");
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 1);
    h_take(h->s, &out);
    h_okay_win(&want, 1, 12, WIN4M);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK(h->writable_calls[1] >= 1);
    CHECK_EQ_INT(adbc_session_writable(h->s, 1), 65536);

    /* device -> host data, acknowledged as consumed */
    h_pkt0(&in, ADBC_A_WRTE, 12, 1, "GET /", 5);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[1].len, 5);
    CHECK_MEM(h->rx[1].p, "GET /", 5);
    h_take(h->s, &out);
    h_okay_win(&want, 1, 12, 5);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);

    /* host -> device data within the device's window */
    CHECK_EQ_INT(adbc_session_write(h->s, 1, (const uint8_t *)"200", 3), 3);
    h_take(h->s, &out);
    h_pkt0(&want, ADBC_A_WRTE, 1, 12, "200", 3);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(h->s, 1), 65536 - 3);

    /* the device closes it */
    h_pkt0(&in, ADBC_A_CLSE, 12, 1, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK(h->closed[1]);
    CHECK_EQ_INT(h->closed_reason[1], 0);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);

    /* on_open refuses: CLSE(0, remote), nothing kept */
    h->refuse_open = 1;
    h_pkt0(&in, ADBC_A_OPEN, 13, 65536, "tcp:22\0", 7);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(h->s, &out);
    h_pkt0(&want, ADBC_A_CLSE, 0, 13, NULL, 0);
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    h_peer_free(h);

    /* legacy session: OKAY without a window, one WRTE in flight */
    h = host(0, 0x100000u, &cfg);
    CHECK(h != NULL);
    h_pkt0(&in, ADBC_A_OPEN, 7, 0, "localabstract:x\0", 16);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(h->s, &out);
    h_pkt0(&want, ADBC_A_OKAY, 1, 7, NULL, 0);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_STR(h->last_service, "localabstract:x");
    h_peer_free(h);
}

/* A device that opens streams nobody asked for, many of them: each one is
 * refused at once and the session keeps nothing. */
TEST(host_refuses_flood_of_device_opens)
{
    hpeer *h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    hbuf in = {0}, out = {0};
    for (uint32_t i = 1; i <= 2000; i++)
        h_pkt0(&in, ADBC_A_OPEN, i, 65536, "tcp:1\0", 6);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 1000), (long)in.len);
    hbuf_free(&in);
    h_take(h->s, &out);
    CHECK_EQ_INT(out.len, 2000 * 24);
    hpkt p;
    CHECK(h_nth(&out, 1999, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CLSE);
    CHECK_EQ_INT(p.a0, 0);
    CHECK_EQ_INT(p.a1, 2000);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
    CHECK_EQ_INT(h->last_service[0], 0); /* on_open was never asked */
    h_peer_free(h);
}

/* on_open's contract: write once on_writable is called, which happens
 * right after on_open accepts and the OKAY is queued; the bytes follow the
 * OKAY. (A write from inside on_open itself is too early: nothing is taken.) */
TEST(device_writes_once_writable_after_open)
{
    hpeer *d = device(1);
    CHECK(d != NULL);
    d->write_in_open = "early";
    d->write_on_writable = "banner\n";
    hbuf in = {0}, out = {0};
    h_pkt0(&in, ADBC_A_OPEN, 5, 65536, "shell:\0", 7);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(d->write_in_open_rc, 0);
    CHECK_EQ_INT(d->write_on_writable_rc, 7);
    CHECK(strstr(d->log, "open 1 shell:\nwritable 1\n") != NULL);
    h_take(d->s, &out);
    hbuf want = {0};
    h_okay_win(&want, 1, 5, WIN4M);
    h_pkt0(&want, ADBC_A_WRTE, 1, 5, "banner\n", 7);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&want);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_writable(d->s, 1), 65536 - 7);
    h_peer_free(d);
}

/* A stream closed from inside on_open must still answer the host's OPEN
 * (CLSE), or the host waits for an OKAY that never comes. */
TEST(device_close_inside_on_open_answers_host)
{
    hpeer *d = device(1);
    CHECK(d != NULL);
    d->close_in_open = 1;
    hbuf in = {0}, out = {0};
    h_pkt0(&in, ADBC_A_OPEN, 5, 65536, "shell:\0", 7);
    CHECK_EQ_INT(h_feed_buf(d->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    h_take(d->s, &out);
    hpkt p;
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.cmd, ADBC_A_CLSE);
    CHECK_EQ_INT(p.a1, 5);
    hbuf_free(&out);
    CHECK_EQ_INT(adbc_session_stream_count(d->s), 0);
    h_peer_free(d);
}

/* ---- legacy flow control ---- */

TEST(legacy_sender_one_wrte_in_flight)
{
    hpeer *h = host(0, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 0, 0);
    CHECK(id != 0);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 4096);
    uint8_t buf[10000];
    memset(buf, 'q', sizeof buf);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, sizeof buf), 4096); /* one packet */
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, 10), 0);
    hbuf out = {0}, in = {0};
    h_take(h->s, &out);
    CHECK_EQ_INT(h_count(&out, NULL), 1);
    hbuf_free(&out);
    unsigned before = h->writable_calls[id];
    h_pkt0(&in, ADBC_A_OKAY, 9, id, NULL, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 24);
    hbuf_free(&in);
    CHECK_EQ_INT(h->writable_calls[id], before + 1);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 4096);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, 5), 5);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0); /* a short packet also waits */
    h_peer_free(h);
}

TEST(legacy_receiver_okay_after_whole_packet_consumed)
{
    hpeer *h = host(0, 4096, NULL);
    CHECK(h != NULL);
    h->auto_consume = 0;
    uint32_t id = open_bound(h, "shell:", 9, 0, 0);
    CHECK(id != 0);
    hbuf in = {0}, out = {0};
    h_pkt0(&in, ADBC_A_WRTE, 9, id, "0123456789", 10);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 34);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[id].len, 10);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 4), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 6), 0);
    h_take(h->s, &out);
    hbuf want = {0};
    h_pkt0(&want, ADBC_A_OKAY, id, 9, NULL, 0); /* no payload in legacy mode */
    CHECK_EQ_INT(out.len, 24);
    CHECK_MEM(out.p, want.p, 24);
    hbuf_free(&want);
    hbuf_free(&out);
    /* consuming more than arrived acknowledges nothing more */
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 100), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    /* the next WRTE is allowed now */
    h_pkt0(&in, ADBC_A_WRTE, 9, id, "x", 1);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 25);
    hbuf_free(&in);
    h_peer_free(h);
}

TEST(legacy_second_wrte_before_okay_is_eproto)
{
    hpeer *h = host(0, 4096, NULL);
    CHECK(h != NULL);
    h->auto_consume = 0;
    uint32_t id = open_bound(h, "shell:", 9, 0, 0);
    CHECK(id != 0);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_WRTE, 9, id, "one", 3);
    h_pkt0(&in, ADBC_A_WRTE, 9, id, "two", 3);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "WRTE"));
    CHECK(h_msg_has(adbc_last_error(), "stream 1"));
    CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
    h_peer_free(h);
}

TEST(zero_length_wrte_is_acknowledged_at_once)
{
    for (int delayed = 0; delayed < 2; delayed++) {
        hpeer *h = host(delayed, 4096, NULL);
        CHECK(h != NULL);
        h->auto_consume = 0;
        uint32_t id = open_bound(h, "shell:", 9, delayed, 65536);
        CHECK(id != 0);
        hbuf in = {0}, out = {0}, want = {0};
        h_pkt0(&in, ADBC_A_WRTE, 9, id, NULL, 0);
        CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 24);
        hbuf_free(&in);
        h_take(h->s, &out);
        if (delayed)
            h_okay_win(&want, id, 9, 0);
        else
            h_pkt0(&want, ADBC_A_OKAY, id, 9, NULL, 0);
        CHECK_EQ_INT(out.len, want.len);
        CHECK_MEM(out.p, want.p, want.len);
        hbuf_free(&want);
        hbuf_free(&out);
        h_peer_free(h);
    }
}

/* ---- delayed_ack: sender ---- */

TEST(delayed_sender_never_exceeds_window)
{
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 10000);
    CHECK(id != 0);
    static uint8_t buf[50000];
    memset(buf, 'w', sizeof buf);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 10000);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, sizeof buf), 10000);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, 1), 0);

    /* window updates accumulate */
    hbuf in = {0};
    h_okay_win(&in, 9, id, 3000);
    h_okay_win(&in, 9, id, 2000);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 56);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 5000);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, sizeof buf), 5000);

    /* an update of 0 (adbd sends bytes_flushed, which may be 0) changes nothing */
    h_okay_win(&in, 9, id, 0);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);

    hbuf out = {0};
    h_take(h->s, &out);
    size_t off = 0, total = 0;
    hpkt p;
    while (h_parse(&out, &off, &p)) {
        CHECK_EQ_INT(p.cmd, ADBC_A_WRTE);
        CHECK(p.len <= 4096);
        total += p.len;
    }
    CHECK_EQ_INT(total, 15000); /* exactly the windows granted */
    hbuf_free(&out);
    h_peer_free(h);
}

TEST(delayed_sender_negative_update_closes_window)
{
    /* local_socket_ack: "acked_bytes can be negative!" */
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 1000);
    CHECK(id != 0);
    hbuf in = {0};
    h_okay_win(&in, 9, id, (uint32_t)-1500);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    h_okay_win(&in, 9, id, 600);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 100);
    h_peer_free(h);
}

/* send_ahead: the host keeps at most that much sent and unacknowledged,
 * even when the device's window allows more; acknowledgements reopen it. */
TEST(delayed_sender_send_ahead_bounds_bytes_in_flight)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.send_ahead = 6000;
    hpeer *h = host(1, 4096, &cfg);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 10000);
    CHECK(id != 0);
    static uint8_t buf[50000];
    memset(buf, 's', sizeof buf);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 6000);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, sizeof buf), 6000);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    hbuf in = {0};
    h_okay_win(&in, 9, id, 2500); /* window left 6500, in flight 3500 */
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 2500);
    CHECK_EQ_INT(adbc_session_write(h->s, id, buf, sizeof buf), 2500);
    h_okay_win(&in, 9, id, (uint32_t)-1000); /* shrinks the window, acknowledges nothing */
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 0);
    h_okay_win(&in, 9, id, 20000); /* everything acknowledged */
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_writable(h->s, id), 6000);
    hbuf out = {0};
    h_take(h->s, &out);
    size_t off = 0, total = 0;
    hpkt p;
    while (h_parse(&out, &off, &p))
        total += p.len;
    CHECK_EQ_INT(total, 8500);
    hbuf_free(&out);
    h_peer_free(h);
}

/* ---- delayed_ack: receiver ---- */

static hpeer *host_window(uint32_t window, uint32_t max)
{
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    cfg.window = window;
    return host(1, max, &cfg);
}

TEST(delayed_receiver_okay_when_all_consumed_or_quarter_window)
{
    hpeer *h = host_window(65536, 0x100000u);
    CHECK(h != NULL);
    h->auto_consume = 0;
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:"), 0);
    hbuf out = {0}, in = {0}, want = {0};
    h_take(h->s, &out);
    hpkt p;
    CHECK(h_nth(&out, 0, &p));
    CHECK_EQ_INT(p.a1, 65536); /* the window we offer */
    hbuf_free(&out);
    h_okay_win(&in, 9, id, 65536);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), 28);
    hbuf_free(&in);

    /* 1000 bytes: acknowledged when all of it is used */
    static uint8_t data[40000];
    memset(data, 'd', sizeof data);
    h_pkt0(&in, ADBC_A_WRTE, 9, id, data, 1000);
    CHECK(h_feed_buf(h->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 500), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 500), 0);
    h_take(h->s, &out);
    h_okay_win(&want, id, 9, 1000);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&out);
    hbuf_free(&want);

    /* 40000 bytes: acknowledged once a quarter window (16384) is used */
    h_pkt0(&in, ADBC_A_WRTE, 9, id, data, 40000);
    CHECK(h_feed_buf(h->s, &in, 0) > 0);
    hbuf_free(&in);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 16383), 0);
    CHECK_EQ_INT(adbc_session_send_queued(h->s), 0);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 1), 0);
    h_take(h->s, &out);
    h_okay_win(&want, id, 9, 16384);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&out);
    hbuf_free(&want);
    CHECK_EQ_INT(adbc_session_consume(h->s, id, 40000), 0); /* capped at what is left */
    h_take(h->s, &out);
    h_okay_win(&want, id, 9, 40000 - 16384);
    CHECK_EQ_INT(out.len, want.len);
    CHECK_MEM(out.p, want.p, want.len);
    hbuf_free(&out);
    hbuf_free(&want);
    h_peer_free(h);
}

TEST(delayed_receiver_tolerates_one_packet_overshoot)
{
    hpeer *h = host_window(65536, 4096);
    CHECK(h != NULL);
    h->auto_consume = 0;
    uint32_t id = open_bound(h, "shell:", 9, 1, 65536);
    CHECK(id != 0);
    static uint8_t data[4096];
    memset(data, 'o', sizeof data);
    hbuf in = {0};
    /* the window exactly, then adbd's overshoot of up to one packet */
    for (int i = 0; i < 16 + 1; i++)
        h_pkt0(&in, ADBC_A_WRTE, 9, id, data, 4096);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[id].len, 17 * 4096);
    /* one byte more is beyond window + max payload */
    h_pkt0(&in, ADBC_A_WRTE, 9, id, data, 1);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "stream 1"));
    CHECK(h_msg_has(adbc_last_error(), "window"));
    h_peer_free(h);
}

TEST(delayed_receiver_overflow_message_names_wrte)
{
    hpeer *h = host_window(65536, 4096);
    CHECK(h != NULL);
    h->auto_consume = 0;
    uint32_t id = open_bound(h, "shell:", 9, 1, 65536);
    CHECK(id != 0);
    static uint8_t data[4096];
    hbuf in = {0};
    for (int i = 0; i < 18; i++)
        h_pkt0(&in, ADBC_A_WRTE, 9, id, data, 4096);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "WRTE"));
    h_peer_free(h);
}

TEST(delayed_receiver_acks_keep_window_open)
{
    /* With the consumer keeping up, the sender can move far more than the
     * window without an error. */
    hpeer *h = host_window(65536, 4096);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 65536);
    CHECK(id != 0);
    static uint8_t data[4096];
    uint64_t granted = 65536, sent = 0, acked = 0;
    for (int i = 0; i < 500; i++) {
        hbuf in = {0}, out = {0};
        h_pkt0(&in, ADBC_A_WRTE, 9, id, data, sizeof data);
        CHECK(h_feed_buf(h->s, &in, 0) > 0);
        hbuf_free(&in);
        sent += sizeof data;
        h_take(h->s, &out);
        size_t off = 0;
        hpkt p;
        while (h_parse(&out, &off, &p)) {
            CHECK_EQ_INT(p.cmd, ADBC_A_OKAY);
            CHECK_EQ_INT(p.len, 4);
            acked += h_rd32(p.data);
        }
        hbuf_free(&out);
        CHECK(sent <= granted + acked);
    }
    CHECK_EQ_INT(acked, sent); /* everything consumed was returned */
    CHECK_EQ_INT(h->rx[id].len, sent);
    h_peer_free(h);
}

/* ---- host and device in memory ---- */

static int pair(hpeer **hp, hpeer **dp, int delayed, uint32_t window)
{
    adbc_session_config hc, dc;
    adbc_session_config_init(&hc, ADBC_ROLE_HOST);
    adbc_session_config_init(&dc, ADBC_ROLE_DEVICE);
    dc.auth_required = 0;
    hc.window = dc.window = window;
    if (!delayed)
        dc.features = "shell_v2";
    *hp = h_peer_new(ADBC_ROLE_HOST, &hc);
    *dp = h_peer_new(ADBC_ROLE_DEVICE, &dc);
    if (!*hp || !*dp || adbc_session_start((*hp)->s) < 0 || h_pump(*hp, *dp, 0) < 0)
        return -1;
    return adbc_session_state_get((*hp)->s) == ADBC_SESSION_ONLINE ? 0 : -1;
}

TEST(many_concurrent_streams)
{
    for (int delayed = 0; delayed < 2; delayed++) {
        hpeer *h, *d;
        CHECK_EQ_INT(pair(&h, &d, delayed, 0), 0);
        CHECK_EQ_INT(adbc_session_delayed_ack(h->s), delayed);
        enum { N = 1000 };
        uint32_t ids[N];
        for (int i = 0; i < N; i++) {
            char svc[32];
            snprintf(svc, sizeof svc, "shell:echo %d", i);
            CHECK_EQ_INT(adbc_session_open(&ids[i], h->s, svc), 0);
        }
        CHECK_EQ_INT(h_pump(h, d, 7), 0);
        CHECK_EQ_INT(adbc_session_stream_count(h->s), N);
        CHECK_EQ_INT(adbc_session_stream_count(d->s), N);
        for (int i = 0; i < N; i++) {
            CHECK(h->ready[ids[i]]);
            char msg[32];
            int n = snprintf(msg, sizeof msg, "to %d", i);
            CHECK_EQ_INT(adbc_session_write(h->s, ids[i], (const uint8_t *)msg, (size_t)n), n);
        }
        CHECK_EQ_INT(h_pump(h, d, 0), 0);
        /* the device's ids are its own; answer on each */
        for (uint32_t id = 1; id <= N; id++) {
            CHECK(d->rx[id].len > 0);
            hbuf_put(&d->rx[id], "", 1);
            int n = 0;
            CHECK_EQ_INT(sscanf((const char *)d->rx[id].p, "to %d", &n), 1);
            char msg[32];
            int len = snprintf(msg, sizeof msg, "from %d", n);
            CHECK_EQ_INT(adbc_session_write(d->s, id, (const uint8_t *)msg, (size_t)len), len);
        }
        CHECK_EQ_INT(h_pump(h, d, 0), 0);
        for (int i = 0; i < N; i++) {
            char want[32];
            int n = snprintf(want, sizeof want, "from %d", i);
            CHECK_EQ_INT(h->rx[ids[i]].len, n);
            CHECK_MEM(h->rx[ids[i]].p, want, (size_t)n);
        }
        for (int i = 0; i < N; i++)
            CHECK_EQ_INT(adbc_session_close_stream(h->s, ids[i]), 0);
        CHECK_EQ_INT(h_pump(h, d, 0), 0);
        CHECK_EQ_INT(adbc_session_stream_count(h->s), 0);
        CHECK_EQ_INT(adbc_session_stream_count(d->s), 0);
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
        CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
        h_peer_free(h);
        h_peer_free(d);
    }
}

/* A consumer that stops consuming holds up only its own stream. */
TEST(stalled_stream_does_not_block_others)
{
    for (int delayed = 0; delayed < 2; delayed++) {
        hpeer *h, *d;
        CHECK_EQ_INT(pair(&h, &d, delayed, 65536), 0);
        h->auto_consume = 0;
        uint32_t a, b;
        CHECK_EQ_INT(adbc_session_open(&a, h->s, "shell:a"), 0);
        CHECK_EQ_INT(adbc_session_open(&b, h->s, "shell:b"), 0);
        CHECK_EQ_INT(h_pump(h, d, 0), 0);
        /* device ids 1 and 2 in the same order */
        static uint8_t chunk[8192];
        memset(chunk, 'z', sizeof chunk);
        size_t total_b = 0, a_sent = 0;
        for (int round = 0; round < 200; round++) {
            ssize_t wa = adbc_session_write(d->s, 1, chunk, sizeof chunk);
            ssize_t wb = adbc_session_write(d->s, 2, chunk, sizeof chunk);
            CHECK(wa >= 0 && wb >= 0);
            a_sent += (size_t)wa;
            CHECK_EQ_INT(h_pump(h, d, 0), 0);
            /* consume stream b only */
            size_t have = h->rx[b].len - total_b;
            total_b += have;
            CHECK_EQ_INT(adbc_session_consume(h->s, b, have), 0);
            CHECK_EQ_INT(h_pump(h, d, 0), 0);
        }
        /* b moved far more than a window; a stopped at its window */
        CHECK(total_b > 10 * 65536);
        CHECK_EQ_INT(h->rx[a].len, a_sent);
        if (delayed)
            CHECK_EQ_INT(a_sent, 65536); /* exactly the host's window */
        else
            CHECK_EQ_INT(a_sent, sizeof chunk); /* one WRTE, never acknowledged */
        CHECK_EQ_INT(adbc_session_writable(d->s, 1), 0);
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_ONLINE);
        CHECK_EQ_INT(adbc_session_state_get(d->s), ADBC_SESSION_ONLINE);
        /* consuming a resumes it */
        CHECK_EQ_INT(adbc_session_consume(h->s, a, h->rx[a].len), 0);
        CHECK_EQ_INT(h_pump(h, d, 0), 0);
        CHECK(adbc_session_writable(d->s, 1) > 0);
        h_peer_free(h);
        h_peer_free(d);
    }
}

TEST(bulk_transfer_both_modes_every_chunking)
{
    static const size_t chunks[] = {1, 3, 24, 25, 4096, 0};
    static uint8_t blob[300000];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (uint8_t)(i * 31 + (i >> 8));
    for (int delayed = 0; delayed < 2; delayed++) {
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            if (chunks[c] == 1 && !delayed)
                continue; /* slow and covered by 3 */
            hpeer *h, *d;
            CHECK_EQ_INT(pair(&h, &d, delayed, 65536), 0);
            uint32_t id;
            CHECK_EQ_INT(adbc_session_open(&id, h->s, "sync:"), 0);
            CHECK_EQ_INT(h_pump(h, d, chunks[c]), 0);
            size_t sent = 0;
            for (int guard = 0; sent < sizeof blob && guard < 100000; guard++) {
                ssize_t w = adbc_session_write(h->s, id, blob + sent, sizeof blob - sent);
                CHECK(w >= 0);
                sent += (size_t)w;
                CHECK_EQ_INT(h_pump(h, d, chunks[c]), 0);
            }
            CHECK_EQ_INT(sent, sizeof blob);
            CHECK_EQ_INT(d->rx[1].len, sizeof blob);
            CHECK_MEM(d->rx[1].p, blob, sizeof blob);
            h_peer_free(h);
            h_peer_free(d);
        }
    }
}

/* ---- malformed stream packets from the peer ---- */

typedef struct badcase {
    const char *name;
    uint32_t cmd, a0, a1;
    const char *data;
    size_t len;
    const char *want1, *want2; /* the message must contain both */
} badcase;

TEST(malformed_stream_packets_are_eproto)
{
    /* the bound stream is local 1 <-> remote 9, delayed_ack */
    static const badcase c[] = {
        {"OKAY for a never-opened id", ADBC_A_OKAY, 9, 7, "\0\0\1\0", 4, "OKAY", "7"},
        {"WRTE for a never-opened id", ADBC_A_WRTE, 9, 7, "x", 1, "WRTE", "7"},
        {"CLSE for a never-opened id", ADBC_A_CLSE, 9, 7, NULL, 0, "CLSE", "7"},
        {"OKAY with id 0", ADBC_A_OKAY, 9, 0, "\0\0\1\0", 4, "OKAY", "0"},
        {"OKAY with the wrong remote id", ADBC_A_OKAY, 8, 1, "\0\0\1\0", 4, "OKAY", "8"},
        {"WRTE with the wrong remote id", ADBC_A_WRTE, 8, 1, "x", 1, "WRTE", "8"},
        {"CLSE with the wrong remote id", ADBC_A_CLSE, 8, 1, NULL, 0, "CLSE", "8"},
        {"OKAY with a 3-byte payload", ADBC_A_OKAY, 9, 1, "abc", 3, "OKAY", "3-byte"},
        {"OKAY with a 5-byte payload", ADBC_A_OKAY, 9, 1, "abcde", 5, "OKAY", "5-byte"},
        {"OKAY without a window under delayed_ack", ADBC_A_OKAY, 9, 1, NULL, 0, "OKAY",
         "stream 1"},
        {"OPEN with remote id 0", ADBC_A_OPEN, 0, 65536, "shell:\0", 7, "OPEN", "0"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hpeer *h = host(1, 4096, NULL);
        CHECK(h != NULL);
        uint32_t id = open_bound(h, "shell:", 9, 1, 65536);
        CHECK_EQ_INT(id, 1);
        hbuf in = {0};
        h_pkt0(&in, c[i].cmd, c[i].a0, c[i].a1, c[i].data, c[i].len);
        adbc_clear_error();
        long rc = h_feed_buf(h->s, &in, 0);
        hbuf_free(&in);
        if (rc != ADBC_EPROTO || !h_msg_has(adbc_last_error(), c[i].want1) ||
            !h_msg_has(adbc_last_error(), c[i].want2))
            fprintf(stderr, "  %s: rc %ld, message \"%s\"\n", c[i].name, rc, adbc_last_error());
        CHECK_EQ_INT(rc, ADBC_EPROTO);
        CHECK(h_msg_has(adbc_last_error(), c[i].want1));
        CHECK(h_msg_has(adbc_last_error(), c[i].want2));
        CHECK_EQ_INT(adbc_session_state_get(h->s), ADBC_SESSION_FAILED);
        CHECK(h_msg_has(adbc_session_error(h->s), c[i].want1));
        h_peer_free(h);
    }
}

TEST(wrte_before_okay_is_eproto)
{
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = 0;
    CHECK_EQ_INT(adbc_session_open(&id, h->s, "shell:"), 0);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_WRTE, 9, id, "early", 5);
    adbc_clear_error();
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 0), ADBC_EPROTO);
    hbuf_free(&in);
    CHECK(h_msg_has(adbc_last_error(), "WRTE"));
    CHECK(h_msg_has(adbc_last_error(), "OKAY"));
    CHECK(h_msg_has(adbc_last_error(), "stream 1"));
    CHECK_EQ_INT(h->rx[id].len, 0);
    h_peer_free(h);
}

TEST(data_above_negotiated_max_is_eproto)
{
    hpeer *h = host(1, 4096, NULL);
    CHECK(h != NULL);
    uint32_t id = open_bound(h, "shell:", 9, 1, 65536);
    CHECK(id != 0);
    uint8_t hdr[24];
    adbc_header_encode(hdr, ADBC_A_WRTE, 9, id, 4097, 0);
    adbc_clear_error();
    CHECK_EQ_INT(adbc_session_recv(h->s, hdr, 24), ADBC_EPROTO);
    CHECK(h_msg_has(adbc_last_error(), "WRTE"));
    CHECK(h_msg_has(adbc_last_error(), "4097"));
    h_peer_free(h);

    /* 1 MiB negotiated: a 1 MiB WRTE is fine, byte by byte or at once */
    h = host(1, 0x100000u, NULL);
    CHECK(h != NULL);
    id = open_bound(h, "shell:", 9, 1, 65536);
    CHECK(id != 0);
    uint8_t *big = calloc(1, 0x100000u);
    CHECK(big != NULL);
    hbuf in = {0};
    h_pkt0(&in, ADBC_A_WRTE, 9, id, big, 0x100000u);
    free(big);
    CHECK_EQ_INT(h_feed_buf(h->s, &in, 1000), (long)in.len);
    hbuf_free(&in);
    CHECK_EQ_INT(h->rx[id].len, 0x100000u);
    h_peer_free(h);
}

int main(void)
{
    RUN(open_delayed_ack_exact_bytes);
    RUN(open_legacy_exact_bytes);
    RUN(open_refused_when_not_online_or_bad_name);
    RUN(okay_binds_ids_and_grants_window);
    RUN(legacy_peer_packets_carry_sums);
    RUN(write_splits_at_max_payload);
    RUN(clse_zero_refuses_open);
    RUN(peer_close_reports_zero);
    RUN(okay_after_local_close_gets_clse);
    RUN(device_accepts_open);
    RUN(device_refuses_open);
    RUN(open_name_with_nul_bytes);
    RUN(host_refuses_open_from_device);
    RUN(host_accepts_device_open_when_asked);
    RUN(host_refuses_flood_of_device_opens);
    RUN(device_writes_once_writable_after_open);
    RUN(device_close_inside_on_open_answers_host);
    RUN(legacy_sender_one_wrte_in_flight);
    RUN(legacy_receiver_okay_after_whole_packet_consumed);
    RUN(legacy_second_wrte_before_okay_is_eproto);
    RUN(zero_length_wrte_is_acknowledged_at_once);
    RUN(delayed_sender_never_exceeds_window);
    RUN(delayed_sender_negative_update_closes_window);
    RUN(delayed_sender_send_ahead_bounds_bytes_in_flight);
    RUN(delayed_receiver_okay_when_all_consumed_or_quarter_window);
    RUN(delayed_receiver_tolerates_one_packet_overshoot);
    RUN(delayed_receiver_overflow_message_names_wrte);
    RUN(delayed_receiver_acks_keep_window_open);
    RUN(many_concurrent_streams);
    RUN(stalled_stream_does_not_block_others);
    RUN(bulk_transfer_both_modes_every_chunking);
    RUN(malformed_stream_packets_are_eproto);
    RUN(wrte_before_okay_is_eproto);
    RUN(data_above_negotiated_max_is_eproto);
    return T_DONE();
}
