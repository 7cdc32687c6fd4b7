/* SPDX-License-Identifier: Apache-2.0 */
/* The hostile-device suite: a scripted peer (hostile_peer.h) breaks the
 * protocol in one way per test, and each test asserts that the library call
 * facing it returns a clean error (the right code and a message) within its
 * timeout plus a margin, and that nothing crashes, hangs or leaks (run under
 * ASan/LSan in the sanitizer build). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "adbc/adbc.h"
#include "adbc/shell.h"
#include "adbc/sync.h"
#include "hostile_peer.h"
#include "t.h"

#include <time.h>

#define CONNECT_MS 1500
#define IO_MS 2000
/* The checks below bound a hang, they do not time the timeouts: a peer that
 * never answers is given up on after CONNECT_MS or IO_MS plus this margin,
 * which covers a machine busy enough to slow everything many times over. */
#define MARGIN_MS 60000

static adbc_keyring *keys(void)
{
    static adbc_keyring *ring;
    if (!ring) {
        adbc_key *k;
        if (adbc_keyring_new(&ring) < 0 || adbc_key_generate(&k, 2048) < 0)
            return NULL;
        adbc_keyring_add(ring, k);
    }
    return ring;
}

static int64_t elapsed;

/* Connect through a hostile peer; elapsed gets the call's duration. */
static int open_on(hostile *h, hp_script script, int arg, adbc_conn **c, uint32_t window)
{
    adbc_transport *t;
    if (hp_start(h, script, arg, &t) != 0)
        return -100;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys();
    o.connect_timeout_ms = CONNECT_MS;
    o.auth_timeout_ms = CONNECT_MS;
    o.io_timeout_ms = IO_MS;
    o.window = window;
    int64_t t0 = hp_now_ms();
    int rc = adbc_conn_open(c, t, &o);
    elapsed = hp_now_ms() - t0;
    return rc;
}

/* Expect the handshake to fail with code within its timeout. */
#define HANDSHAKE_FAILS(script, arg, code)                                          \
    do {                                                                            \
        hostile h;                                                                  \
        adbc_conn *c = NULL;                                                        \
        int rc = open_on(&h, script, arg, &c, 0);                                   \
        hp_stop(&h);                                                                \
        if (rc == 0)                                                                \
            adbc_conn_close(c);                                                     \
        printf("  %-28s %5lld ms  %s\n", #script, (long long)elapsed,               \
               rc ? adbc_last_error() : "(connected)");                             \
        CHECK_EQ_INT(rc, code);                                                     \
        CHECK(adbc_last_error()[0] != '\0');                                        \
        CHECK(elapsed <= CONNECT_MS + MARGIN_MS);                                   \
    } while (0)

/* ---- handshake ---- */

static void s_bad_magic(hostile *h)
{
    uint8_t b[64];
    const char *ban = HP_BANNER;
    if (hp_expect(h, ADBC_A_CNXN) == 0) {
        size_t n = hp_build(b, ADBC_A_CNXN, HP_V2, 4096, ban, 8, hp_sum(ban, 8), 0x12345678);
        hp_raw(h, b, n);
    }
    hp_hold(h);
}

static void s_cnxn_bad_check(hostile *h)
{
    uint8_t b[256];
    const char *ban = HP_BANNER;
    if (hp_expect(h, ADBC_A_CNXN) == 0) {
        size_t n = hp_build(b, ADBC_A_CNXN, HP_V1, 4096, ban, strlen(ban), hp_sum(ban, strlen(ban)) + 1,
                            ADBC_A_CNXN ^ 0xffffffffu);
        hp_raw(h, b, n);
    }
    hp_hold(h);
}

static void s_enormous_banner(hostile *h)
{
    size_t n = 1024 * 1024;
    char *big = malloc(n);
    memset(big, 'a', n);
    memcpy(big, "device::", 8);
    if (hp_expect(h, ADBC_A_CNXN) == 0)
        hp_pkt(h, ADBC_A_CNXN, HP_V2, 1024 * 1024, big, n);
    free(big);
    hp_hold(h);
}

static void s_malformed_banner(hostile *h)
{
    static const char junk[] = "\x01\x02garbage without fields\xff";
    if (hp_expect(h, ADBC_A_CNXN) == 0)
        hp_pkt(h, ADBC_A_CNXN, HP_V2, 4096, junk, sizeof junk);
    hp_hold(h);
}

static void s_silent(hostile *h)
{
    hp_hold(h);
}

static void s_truncated_header(hostile *h)
{
    uint8_t b[64];
    if (hp_expect(h, ADBC_A_CNXN) == 0) {
        hp_build(b, ADBC_A_CNXN, HP_V2, 4096, "device::", 8, hp_sum("device::", 8),
                 ADBC_A_CNXN ^ 0xffffffffu);
        hp_raw(h, b, 10);
    }
    hp_hold(h);
}

static void s_truncated_payload(hostile *h)
{
    uint8_t b[128];
    const char *ban = HP_BANNER;
    if (hp_expect(h, ADBC_A_CNXN) == 0) {
        hp_build(b, ADBC_A_CNXN, HP_V2, 4096, ban, 40, hp_sum(ban, 40), ADBC_A_CNXN ^ 0xffffffffu);
        hp_raw(h, b, 24 + 5);
    }
    hp_hold(h);
}

static void s_token_forever(hostile *h)
{
    uint8_t token[20];
    memset(token, 0x42, sizeof token);
    hp_read(h);
    while (!h->stop) {
        if (hp_pkt(h, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, token, sizeof token) != 0)
            return;
        if (hp_read(h) != 0) /* the host's answer (or its giving up) */
            return;
    }
}

TEST(handshake_bad_magic) { HANDSHAKE_FAILS(s_bad_magic, 0, ADBC_EPROTO); }
TEST(handshake_bad_checksum) { HANDSHAKE_FAILS(s_cnxn_bad_check, 0, ADBC_EPROTO); }
TEST(handshake_enormous_banner) { HANDSHAKE_FAILS(s_enormous_banner, 0, ADBC_EPROTO); }
TEST(handshake_malformed_banner)
{
    hostile h;
    adbc_conn *c = NULL;
    int rc = open_on(&h, s_malformed_banner, 0, &c, 0);
    hp_stop(&h);
    printf("  %-28s %5lld ms  %s\n", "s_malformed_banner", (long long)elapsed,
           rc ? adbc_last_error() : "(connected)");
    CHECK(rc == ADBC_EPROTO || rc == ADBC_EFORMAT);
    CHECK(elapsed <= CONNECT_MS + MARGIN_MS);
}
TEST(handshake_cnxn_never_sent) { HANDSHAKE_FAILS(s_silent, 0, ADBC_ETIMEDOUT); }
TEST(handshake_truncated_header) { HANDSHAKE_FAILS(s_truncated_header, 0, ADBC_ETIMEDOUT); }
TEST(handshake_truncated_payload) { HANDSHAKE_FAILS(s_truncated_payload, 0, ADBC_ETIMEDOUT); }
TEST(handshake_auth_token_forever) { HANDSHAKE_FAILS(s_token_forever, 0, ADBC_EUNAUTHORIZED); }

/* The device's whole handshake (AUTH TOKEN, then CNXN), cut after h->arg
 * bytes: the connection closes at that point. */
static size_t handshake_bytes(uint8_t *out)
{
    uint8_t token[20];
    memset(token, 0x33, sizeof token);
    size_t n = hp_build(out, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, token, 20, hp_sum(token, 20),
                        ADBC_A_AUTH ^ 0xffffffffu);
    n += hp_build(out + n, ADBC_A_CNXN, HP_V2, 4096, HP_BANNER, strlen(HP_BANNER),
                  hp_sum(HP_BANNER, strlen(HP_BANNER)), ADBC_A_CNXN ^ 0xffffffffu);
    return n;
}

static void s_cut(hostile *h)
{
    uint8_t b[512];
    handshake_bytes(b);
    size_t total = handshake_bytes(b);
    if (hp_expect(h, ADBC_A_CNXN) == 0)
        hp_raw(h, b, (size_t)h->arg);
    if ((size_t)h->arg == total)
        hp_hold(h); /* the whole handshake: stay connected */
    /* else return: hang up */
}

TEST(handshake_closed_at_every_byte)
{
    uint8_t b[512];
    size_t total = handshake_bytes(b);
    int64_t worst = 0;
    for (size_t cut = 0; cut < total; cut++) {
        hostile h;
        adbc_conn *c = NULL;
        int rc = open_on(&h, s_cut, (int)cut, &c, 0);
        hp_stop(&h);
        if (rc == 0)
            adbc_conn_close(c);
        if (rc != ADBC_ECLOSED && rc != ADBC_EIO)
            fprintf(stderr, "  cut at %zu: %d %s\n", cut, rc, adbc_last_error());
        CHECK(rc == ADBC_ECLOSED || rc == ADBC_EIO);
        CHECK(adbc_last_error()[0] != '\0');
        if (elapsed > worst)
            worst = elapsed;
    }
    printf("  closed at each of %zu offsets: slowest %lld ms\n", total, (long long)worst);
    CHECK(worst <= CONNECT_MS + MARGIN_MS);
    /* The uncut script does connect, so the cuts above were what failed. */
    hostile h;
    adbc_conn *c = NULL;
    int rc = open_on(&h, s_cut, (int)total, &c, 0);
    h.stop = 1;
    if (rc == 0)
        adbc_conn_close(c);
    hp_stop(&h);
    CHECK_EQ_INT(rc, 0);
}

/* ---- streams ---- */

typedef void (*after_open)(hostile *h, uint32_t local);

static after_open g_after;
static uint32_t g_version = HP_V2, g_maxdata = 4096;
static const char *g_banner = HP_BANNER;

static void s_stream(hostile *h)
{
    uint32_t local;
    if (hp_online_open(h, g_version, g_maxdata, g_banner, &local) == 0)
        g_after(h, local);
    hp_hold(h);
}

/* Open a stream through the peer, then read from it: the read must fail
 * with code within IO_MS (+ margin). */
/* Milliseconds to leave a freshly opened stream unread (0: read at once). */
static int g_read_delay_ms;

static void stream_case(const char *what, after_open fn, int code, int fail_at_open)
{
    hostile h;
    adbc_conn *c = NULL;
    g_after = fn;
    int rc = open_on(&h, s_stream, 0, &c, 4096);
    if (rc != 0) {
        hp_stop(&h);
        fprintf(stderr, "  connect: %s\n", adbc_last_error());
        t_cur_failed = 1;
        return;
    }
    adbc_stream *s = NULL;
    int64_t t0 = hp_now_ms();
    rc = adbc_stream_open(&s, c, "shell,v2,raw:echo", IO_MS);
    if (rc == 0 && g_read_delay_ms > 0) {
        /* Let the peer's burst arrive unread: reading while it arrives
         * returns credit and keeps the overflow from happening. */
        struct timespec ts = {0, (long)g_read_delay_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (rc == 0) {
        char buf[65536];
        ssize_t r;
        size_t total = 0;
        while ((r = adbc_stream_read(s, buf, sizeof buf, IO_MS)) > 0)
            total += (size_t)r;
        rc = (int)r;
        adbc_stream_close(s);
    } else if (!fail_at_open) {
        fprintf(stderr, "  %s: open failed early: %s\n", what, adbc_last_error());
    }
    int64_t took = hp_now_ms() - t0;
    printf("  %-28s %5lld ms  %s\n", what, (long long)took, rc ? adbc_last_error() : "(ok)");
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    if (rc != code) {
        fprintf(stderr, "  %s: got %d, want %d\n", what, rc, code);
        t_cur_failed = 1;
    }
    if (took > IO_MS + MARGIN_MS) {
        fprintf(stderr, "  %s: took %lld ms\n", what, (long long)took);
        t_cur_failed = 1;
    }
}

static void a_bad_check(hostile *h, uint32_t local)
{
    uint8_t b[64];
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    size_t n = hp_build(b, ADBC_A_WRTE, 5, local, "hello", 5, 12345, ADBC_A_WRTE ^ 0xffffffffu);
    hp_raw(h, b, n);
}

static void a_too_long(hostile *h, uint32_t local)
{
    static uint8_t big[8192];
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_WRTE, 5, local, big, sizeof big);
}

static void a_truncated_payload(hostile *h, uint32_t local)
{
    uint8_t b[128];
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_build(b, ADBC_A_WRTE, 5, local, "0123456789", 10, hp_sum("0123456789", 10),
             ADBC_A_WRTE ^ 0xffffffffu);
    hp_raw(h, b, 24 + 3);
}

static void a_okay_unknown(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_OKAY, 6, local + 1000, NULL, 0);
}

static void a_wrte_unknown(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_WRTE, 6, local + 1000, "x", 1);
}

static void a_clse_unknown(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_CLSE, 6, local + 1000, NULL, 0);
}

static void a_wrte_before_okay(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_WRTE, 5, local, "early", 5);
}

static void a_second_okay(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_OKAY, 9, local, NULL, 0);
}

static void a_shell_unknown_id(hostile *h, uint32_t local)
{
    uint8_t b[8] = {9, 2, 0, 0, 0, 'z', 'z'};
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    hp_pkt(h, ADBC_A_WRTE, 5, local, b, 7);
}

static void a_beyond_window(hostile *h, uint32_t local)
{
    uint32_t host_window = h->in.a1; /* OPEN's arg1: the host's window */
    uint8_t w[4];
    hp_wr32(w, 65536);
    hp_pkt(h, ADBC_A_OKAY, 5, local, w, 4);
    static uint8_t chunk[4096];
    /* window + one max payload is tolerated (adbd overshoots); send more. */
    for (uint32_t sent = 0; sent <= host_window + 2 * 4096 && !h->stop; sent += sizeof chunk)
        if (hp_pkt(h, ADBC_A_WRTE, 5, local, chunk, sizeof chunk) != 0)
            break;
}

TEST(stream_bad_checksum_v1_peer)
{
    g_version = HP_V1;
    stream_case("bad checksum (v1 peer)", a_bad_check, ADBC_EPROTO, 0);
    g_version = HP_V2;
}
TEST(stream_data_above_max) { stream_case("data above max payload", a_too_long, ADBC_EPROTO, 0); }
TEST(stream_truncated_payload_silence)
{
    stream_case("truncated WRTE, silence", a_truncated_payload, ADBC_ETIMEDOUT, 0);
}
TEST(stream_okay_unknown_id) { stream_case("OKAY for unknown id", a_okay_unknown, ADBC_EPROTO, 0); }
TEST(stream_wrte_unknown_id) { stream_case("WRTE for unknown id", a_wrte_unknown, ADBC_EPROTO, 0); }
TEST(stream_clse_unknown_id) { stream_case("CLSE for unknown id", a_clse_unknown, ADBC_EPROTO, 0); }
TEST(stream_wrte_before_okay)
{
    stream_case("WRTE before OKAY", a_wrte_before_okay, ADBC_EPROTO, 1);
}
TEST(stream_second_okay) { stream_case("second OKAY, other id", a_second_okay, ADBC_EPROTO, 0); }
TEST(stream_beyond_window)
{
    g_banner = HP_BANNER ",delayed_ack";
    g_read_delay_ms = 300;
    stream_case("WRTE beyond the window", a_beyond_window, ADBC_EPROTO, 0);
    g_read_delay_ms = 0;
    g_banner = HP_BANNER;
}

TEST(shell_v2_unknown_packet_id)
{
    hostile h;
    adbc_conn *c = NULL;
    g_after = a_shell_unknown_id;
    CHECK_EQ_INT(open_on(&h, s_stream, 0, &c, 0), 0);
    adbc_run_result res;
    memset(&res, 0, sizeof res);
    int64_t t0 = hp_now_ms();
    int rc = adbc_run(&res, c, ADBC_SHELL_V2, "echo", NULL, 0, 0, IO_MS);
    int64_t took = hp_now_ms() - t0;
    printf("  %-28s %5lld ms  %s\n", "shell v2 unknown id", (long long)took, adbc_last_error());
    adbc_run_result_clear(&res);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    CHECK_EQ_INT(rc, ADBC_EPROTO);
    CHECK(took <= IO_MS + MARGIN_MS);
}

/* ---- sync: a device whose replies carry lengths that overflow ---- */

static void sync_reply(hostile *h, uint32_t local, const void *data, size_t n)
{
    hp_pkt(h, ADBC_A_WRTE, 5, local, data, n);
    hp_expect(h, ADBC_A_OKAY); /* legacy flow control: one WRTE in flight */
}

/* Answers stat requests with a regular 10-byte file, and RECV / STAT with
 * h->arg selecting the overflowing reply. */
static void a_sync(hostile *h, uint32_t local)
{
    hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
    while (!h->stop && hp_read(h) == 0) {
        if (h->in.cmd != ADBC_A_WRTE)
            continue;
        hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
        uint32_t id = h->in.len >= 4 ? hp_rd32(h->in.data) : 0;
        uint8_t r[80];
        memset(r, 0, sizeof r);
        if (id == 0x32415453u /* STA2 */ || id == 0x3254534cu /* LST2 */) {
            if (h->arg == 1) { /* a FAIL whose length overflows */
                memcpy(r, "FAIL", 4);
                hp_wr32(r + 4, 0xffffffffu);
                sync_reply(h, local, r, 16);
                continue;
            }
            memcpy(r, h->in.data, 4);
            hp_wr32(r + 24, 0100644);  /* mode */
            hp_wr32(r + 28, 1);        /* nlink */
            hp_wr32(r + 40, 10);       /* size */
            sync_reply(h, local, r, 72);
        } else if (id == 0x56434552u /* RECV */) {
            memcpy(r, "DATA", 4);
            hp_wr32(r + 4, 0xfffffff0u); /* a chunk "4 GiB" long */
            memcpy(r + 8, "partial", 7);
            sync_reply(h, local, r, 15);
        }
    }
}

static void s_sync(hostile *h)
{
    uint32_t local;
    if (hp_online_open(h, HP_V2, 4096, HP_BANNER, &local) == 0)
        a_sync(h, local);
    hp_hold(h);
}

static int sync_case(int which, const char *local_path)
{
    hostile h;
    adbc_conn *c = NULL;
    int rc = open_on(&h, s_sync, which, &c, 0);
    if (rc != 0) {
        hp_stop(&h);
        return -1000;
    }
    adbc_sync *s = NULL;
    int64_t t0 = hp_now_ms();
    rc = adbc_sync_open(&s, c, IO_MS);
    if (rc == 0) {
        if (which == 1) {
            adbc_sync_statbuf st;
            rc = adbc_sync_stat(&st, s, "/sdcard/x", IO_MS);
        } else {
            rc = adbc_sync_pull(NULL, s, "/sdcard/x", local_path, NULL, IO_MS);
        }
    }
    elapsed = hp_now_ms() - t0;
    printf("  sync case %d %12s %5lld ms  %s\n", which, "", (long long)elapsed,
           rc ? adbc_last_error() : "(ok)");
    adbc_sync_close(s);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    return rc;
}

TEST(sync_fail_length_overflows)
{
    int rc = sync_case(1, NULL);
    CHECK_EQ_INT(rc, ADBC_EPROTO);
    CHECK(elapsed <= IO_MS + MARGIN_MS);
}

TEST(sync_data_length_overflows_no_partial_file)
{
    char dir[] = "/tmp/adbc-hostile.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/pulled", dir);
    int rc = sync_case(2, path);
    struct stat st;
    int exists = stat(path, &st) == 0;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int left = -1;
    if (p) {
        if (fscanf(p, "%d", &left) != 1)
            left = -1;
        pclose(p);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
    CHECK_EQ_INT(rc, ADBC_EPROTO);
    CHECK(elapsed <= IO_MS + MARGIN_MS);
    CHECK(!exists);
    CHECK_EQ_INT(left, 0); /* no temporary left beside it either */
}

int main(void)
{
    if (!keys()) {
        fprintf(stderr, "cannot generate a key\n");
        return 1;
    }
    RUN(handshake_bad_magic);
    RUN(handshake_bad_checksum);
    RUN(handshake_enormous_banner);
    RUN(handshake_malformed_banner);
    RUN(handshake_cnxn_never_sent);
    RUN(handshake_truncated_header);
    RUN(handshake_truncated_payload);
    RUN(handshake_auth_token_forever);
    RUN(handshake_closed_at_every_byte);
    RUN(stream_bad_checksum_v1_peer);
    RUN(stream_data_above_max);
    RUN(stream_truncated_payload_silence);
    RUN(stream_okay_unknown_id);
    RUN(stream_wrte_unknown_id);
    RUN(stream_clse_unknown_id);
    RUN(stream_wrte_before_okay);
    RUN(stream_second_okay);
    RUN(stream_beyond_window);
    RUN(shell_v2_unknown_packet_id);
    RUN(sync_fail_length_overflows);
    RUN(sync_data_length_overflows_no_partial_file);
    adbc_keyring_free(keys());
    return T_DONE();
}
