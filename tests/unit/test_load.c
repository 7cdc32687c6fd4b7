/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded load and soak against the test device: 1,000 sequential
 * connections, 16 connections used from parallel threads, and 64
 * concurrent streams on one connection mixing shell runs and sync stats.
 * Memory must stay flat: resident size after the soak may exceed what it
 * was after a warm-up by no more than a few MiB (leaks would grow with the
 * number of connections). Peak and current RSS are printed. */
#include <pthread.h>
#include <sys/resource.h>

#include "adbc/shell.h"
#include "adbc/sync.h"
#include "test_act_td.h"
#include "t.h"

static td dev;

static int64_t adbc_now_ms_test(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static adbc_keyring *ring;

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int connect_once(adbc_conn **c)
{
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = ring;
    return adbc_connect(c, dev.addr, &o);
}

static int echo(adbc_conn *c, int i)
{
    char cmd[64], want[32];
    snprintf(cmd, sizeof cmd, "echo %d", i);
    snprintf(want, sizeof want, "%d\n", i);
    adbc_run_result r;
    memset(&r, 0, sizeof r);
    int rc = adbc_run(&r, c, ADBC_SHELL_V2, cmd, NULL, 0, 0, 20000);
    if (rc == 0 && (r.out_len != strlen(want) || memcmp(r.out, want, r.out_len) != 0))
        rc = -100;
    if (rc != 0)
        fprintf(stderr, "  run \"%s\": %d %s\n", cmd, rc, rc == -100 ? "wrong output" : adbc_last_error());
    adbc_run_result_clear(&r);
    return rc;
}

TEST(sequential_connections)
{
    int64_t t0 = adbc_now_ms_test();
    long start = 0;
    for (int i = 0; i < 1000; i++) {
        adbc_conn *c;
        int rc = connect_once(&c);
        if (rc != 0)
            fprintf(stderr, "  connection %d: %s\n", i, adbc_last_error());
        CHECK_EQ_INT(rc, 0);
        if (i % 50 == 0)
            CHECK_EQ_INT(echo(c, i), 0);
        adbc_conn_close(c);
        if (i == 99)
            start = rss_kb();
    }
    long end = rss_kb();
    printf("  1000 sequential connections in %lld ms; RSS after 100: %ld KiB, after 1000: %ld KiB, "
           "peak %ld KiB\n",
           (long long)(adbc_now_ms_test() - t0), start, end, peak_kb());
#if defined(__SANITIZE_ADDRESS__)
    /* ASan keeps freed memory in quarantine, so RSS grows by design there;
     * leaks are LeakSanitizer's to find in that build. */
    (void)end;
#else
    CHECK(end <= start + 4096);
#endif
}

static void *conn_thread(void *arg)
{
    long i = (long)arg;
    adbc_conn *c;
    if (connect_once(&c) != 0)
        return (void *)1;
    long bad = 0;
    for (int k = 0; k < 20; k++)
        if (echo(c, (int)(i * 100 + k)) != 0)
            bad++;
    adbc_conn_close(c);
    return (void *)bad;
}

TEST(parallel_connections)
{
    pthread_t th[16];
    for (long i = 0; i < 16; i++)
        CHECK(pthread_create(&th[i], NULL, conn_thread, (void *)i) == 0);
    long bad = 0;
    for (int i = 0; i < 16; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)r;
    }
    printf("  16 connections x 20 shell runs in parallel threads: %ld failures\n", bad);
    CHECK_EQ_INT(bad, 0);
}

static adbc_conn *shared;

static void *stream_thread(void *arg)
{
    long i = (long)arg;
    if (i % 2 == 0)
        return (void *)(long)(echo(shared, (int)i) != 0);
    adbc_sync *s;
    if (adbc_sync_open(&s, shared, 20000) != 0)
        return (void *)1;
    adbc_sync_statbuf st;
    int rc = adbc_sync_stat(&st, s, "/data/local/tmp/load.txt", 20000);
    adbc_sync_close(s);
    return (void *)(long)(rc != 0 || st.size != 5);
}

TEST(concurrent_streams_one_connection)
{
    char p[600];
    snprintf(p, sizeof p, "%s/data/local/tmp/load.txt", dev.dir);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs("hello", f);
    fclose(f);
    CHECK_EQ_INT(connect_once(&shared), 0);
    long bad = 0;
    for (int round = 0; round < 3; round++) {
        pthread_t th[64];
        for (long i = 0; i < 64; i++)
            CHECK(pthread_create(&th[i], NULL, stream_thread, (void *)i) == 0);
        for (int i = 0; i < 64; i++) {
            void *r;
            pthread_join(th[i], &r);
            bad += (long)r;
        }
    }
    adbc_conn_close(shared);
    printf("  3 rounds of 64 concurrent streams (32 shell, 32 sync) on one connection: %ld "
           "failures; RSS %ld KiB, peak %ld KiB\n",
           bad, rss_kb(), peak_kb());
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    if (td_start(&dev, NULL) != 0 || adbc_keyring_new(&ring) != 0)
        return 1;
    adbc_conn_close(dev.conn);
    dev.conn = NULL;
    printf("  RSS at start: %ld KiB\n", rss_kb());
    RUN(sequential_connections);
    RUN(parallel_connections);
    RUN(concurrent_streams_one_connection);
    printf("  RSS at end: %ld KiB, peak %ld KiB\n", rss_kb(), peak_kb());
    adbc_keyring_free(ring);
    td_stop(&dev);
    return T_DONE();
}
