/* SPDX-License-Identifier: Apache-2.0 */
/* Messages that named the wrong cause (issue 13): a device that answers
 * CNXN with STLS and then says nothing was "not an adbd port"; a device that
 * answers a dump's OPEN with an OKAY naming an earlier, closed stream was
 * "uiautomator dump did not finish" (a screen that never settles). The third
 * ("a file is in the way") is in test_hostile_sync.c. */
#include <stdio.h>
#include <stdlib.h>

#include "adbc/adbc.h"
#include "adbc/ui.h"
#include "hostile_peer.h"
#include "t.h"

#define CONNECT_MS 1500
/* A bound on a hang, not a timing of the timeouts (a busy machine may slow
 * anything many times over). */
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

static int open_on(hostile *h, hp_script script, adbc_conn **c)
{
    adbc_transport *t;
    if (hp_start(h, script, 0, &t) != 0)
        return -100;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys();
    o.connect_timeout_ms = CONNECT_MS;
    o.auth_timeout_ms = CONNECT_MS;
    return adbc_conn_open(c, t, &o);
}

static void s_stls_then_silence(hostile *h)
{
    if (hp_expect(h, ADBC_A_CNXN) == 0)
        hp_pkt(h, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
    hp_hold(h);
}

TEST(stls_then_silence_is_not_called_a_non_adbd_port)
{
    hostile h;
    adbc_conn *c = NULL;
    int64_t t0 = hp_now_ms();
    int rc = open_on(&h, s_stls_then_silence, &c);
    int64_t took = hp_now_ms() - t0;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", adbc_last_error());
    h.stop = 1;
    if (rc == 0)
        adbc_conn_close(c);
    hp_stop(&h);
    printf("  STLS, then silence: %d in %lld ms: %s\n", rc, (long long)took, msg);
    CHECK(rc == ADBC_ETIMEDOUT);
    CHECK(strstr(msg, "not an adbd port") == NULL);
    CHECK(strstr(msg, "TLS") != NULL);
    CHECK(took <= CONNECT_MS + MARGIN_MS);
}

/* Answers the first OPEN properly; every later one with an OKAY that names
 * the first stream's id (closed by then) instead of the new one. */
static void s_stale_okay(hostile *h)
{
    if (hp_online(h, HP_V2, 4096, HP_BANNER) != 0)
        return;
    uint32_t first = 0;
    while (!h->stop) {
        struct pollfd p = {h->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        if (hp_read(h) != 0)
            return;
        if (h->in.cmd != ADBC_A_OPEN)
            continue;
        if (!first) {
            first = h->in.a0;
            hp_pkt(h, ADBC_A_OKAY, 5, first, NULL, 0);
        } else {
            hp_pkt(h, ADBC_A_OKAY, 6, first, NULL, 0);
        }
    }
}

TEST(stale_okay_during_a_dump_is_not_a_screen_that_never_settles)
{
    hostile h;
    adbc_conn *c = NULL;
    CHECK_EQ_INT(open_on(&h, s_stale_okay, &c), 0);
    adbc_stream *s = NULL;
    int rc = adbc_stream_open(&s, c, "shell:true", CONNECT_MS);
    adbc_stream_close(s);
    char *xml = NULL;
    size_t len = 0;
    adbc_ui_opts o;
    adbc_ui_opts_init(&o);
    o.timeout_ms = 1500;
    int64_t t0 = hp_now_ms();
    int drc = rc == 0 ? adbc_ui_dump(&xml, &len, c, &o) : rc;
    int64_t took = hp_now_ms() - t0;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", adbc_last_error());
    adbc_free(xml);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    printf("  dump answered by a stale OKAY: %d in %lld ms: %s\n", drc, (long long)took, msg);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(drc, ADBC_ETIMEDOUT);
    CHECK(strstr(msg, "did not finish") == NULL);
    CHECK(strstr(msg, "did not answer the request to open") != NULL);
    CHECK(took <= 1500 + MARGIN_MS);
}

int main(void)
{
    if (!keys()) {
        fprintf(stderr, "cannot generate a key\n");
        return 1;
    }
    RUN(stls_then_silence_is_not_called_a_non_adbd_port);
    RUN(stale_okay_during_a_dump_is_not_a_screen_that_never_settles);
    adbc_keyring_free(keys());
    return T_DONE();
}
