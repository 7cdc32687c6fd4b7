/* SPDX-License-Identifier: Apache-2.0 */
/* A device that sends packets needing an answer without end while it reads
 * nothing (issue 13, item 5): OPENs the host refuses (each answered CLSE),
 * zero-length WRTEs (each answered OKAY), OKAYs for a stream the host closed
 * (each answered CLSE). The answers queue up unsent; the queue is bounded,
 * so the connection fails with a message saying the device misbehaves,
 * promptly, with the process's memory bounded. */
#include <stdio.h>
#include <stdlib.h>

#include "adbc/adbc.h"
#include "hostile_peer.h"
#include "t.h"

#define CONNECT_MS 2000
#define FLOOD_MAX 4000000  /* packets the peer sends at most */
#define FAIL_WITHIN_MS 10000
/* ThreadSanitizer's shadow memory multiplies what each allocation costs. */
#if defined(__SANITIZE_THREAD__)
#define RSS_BOUND_KB (400 * 1024)
#else
#define RSS_BOUND_KB (40 * 1024)
#endif

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

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

enum { FLOOD_OPEN = 0, FLOOD_EMPTY_WRTE = 1, FLOOD_STALE_OKAY = 2 };

static _Atomic long g_sent; /* packets the peer flooded */

/* Send `cmd` packets as fast as the socket takes them, reading nothing. */
static void flood(hostile *h, uint32_t cmd, uint32_t a0, uint32_t a1, const void *data,
                  size_t n)
{
    enum { BATCH = 2048 };
    static __thread uint8_t buf[BATCH * 40];
    size_t len = 0;
    for (int i = 0; i < BATCH; i++)
        len += hp_build(buf + len, cmd, a0, a1, data, n, hp_sum(data, n), cmd ^ 0xffffffffu);
    for (long sent = 0; sent < FLOOD_MAX && !h->stop; sent += BATCH) {
        if (hp_raw(h, buf, len) != 0)
            return;
        g_sent = sent + BATCH;
    }
}

static void s_flood(hostile *h)
{
    if (hp_online(h, HP_V2, 4096, HP_BANNER) != 0)
        return;
    if (h->arg == FLOOD_OPEN) {
        flood(h, ADBC_A_OPEN, 7, 0, "shell:x", 8); /* the host serves nothing: CLSE each */
    } else {
        if (hp_expect(h, ADBC_A_OPEN) != 0)
            return;
        uint32_t local = h->in.a0;
        hp_pkt(h, ADBC_A_OKAY, 5, local, NULL, 0);
        if (h->arg == FLOOD_EMPTY_WRTE) {
            flood(h, ADBC_A_WRTE, 5, local, NULL, 0); /* OKAY each */
        } else {
            if (hp_expect(h, ADBC_A_CLSE) != 0)
                return;
            flood(h, ADBC_A_OKAY, 5, local, NULL, 0); /* CLSE each */
        }
    }
    hp_hold(h);
}

static void flood_case(int kind, const char *what)
{
    g_sent = 0;
    long rss0 = rss_kb();
    hostile h;
    adbc_transport *t;
    CHECK_EQ_INT(hp_start(&h, s_flood, kind, &t), 0);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys();
    o.connect_timeout_ms = CONNECT_MS;
    adbc_conn *c = NULL;
    int rc = adbc_conn_open(&c, t, &o);
    if (rc != 0) {
        hp_stop(&h);
        CHECK_EQ_INT(rc, 0);
    }
    adbc_stream *s = NULL; /* kept open while the empty WRTEs arrive */
    if (kind != FLOOD_OPEN) {
        rc = adbc_stream_open(&s, c, "shell:cat", CONNECT_MS);
        if (kind == FLOOD_STALE_OKAY) {
            adbc_stream_close(s);
            s = NULL;
        }
    }
    int64_t t0 = hp_now_ms();
    long peak = rss0;
    int status = 0;
    while (hp_now_ms() - t0 < FAIL_WITHIN_MS) {
        long r = rss_kb();
        if (r > peak)
            peak = r;
        if ((status = adbc_conn_status(c)) != 0)
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int64_t took = hp_now_ms() - t0;
    /* The message is the connection's: a call on it raises it. */
    adbc_stream *probe = NULL;
    int prc = adbc_stream_open(&probe, c, "shell:true", 100);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", adbc_last_error());
    adbc_stream_close(probe);
    h.stop = 1;
    adbc_conn_close(c);
    adbc_stream_close(s);
    hp_stop(&h);
    printf("  %-24s %ld packets sent, failed after %lld ms, RSS +%ld KiB: %s\n", what,
           (long)g_sent, (long long)took, peak - rss0, msg);
    CHECK_EQ_INT(status, ADBC_EPROTO);
    CHECK_EQ_INT(prc, ADBC_EPROTO);
    CHECK(strstr(msg, "misbehaves") != NULL);
    CHECK(took < FAIL_WITHIN_MS);
    CHECK(peak - rss0 < RSS_BOUND_KB);
}

TEST(flood_of_refused_opens) { flood_case(FLOOD_OPEN, "OPENs, all refused"); }
TEST(flood_of_empty_writes) { flood_case(FLOOD_EMPTY_WRTE, "zero-length WRTEs"); }
TEST(flood_of_stale_okays) { flood_case(FLOOD_STALE_OKAY, "OKAYs for a closed stream"); }

int main(void)
{
    if (!keys()) {
        fprintf(stderr, "cannot generate a key\n");
        return 1;
    }
    RUN(flood_of_refused_opens);
    RUN(flood_of_empty_writes);
    RUN(flood_of_stale_okays);
    adbc_keyring_free(keys());
    return T_DONE();
}
