/* SPDX-License-Identifier: Apache-2.0 */
/* A plain pull writes the file from the connection's reader thread, following
 * the reply through its DATA chunks and handing everything else (DONE, FAIL,
 * a bad header) back to the session's decoder (sync_pull.c, "the direct
 * receive"). Here the in-test device (test_sync_dev.h) sends its replies in
 * WRTE packets of a few bytes, so sync headers are split across packets at
 * every offset: the file must come out whole, DONE must end it, a FAIL after
 * some DATA must fail the pull with the device's words and leave no file,
 * and the handle must go on working. Also a tree, whose replies come
 * pipelined one after another. */
#include "t.h"

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "test_sync_dev.h"

#define TMO 5000

static int same_file(const char *path, const uint8_t *want, size_t len)
{
    size_t n = 0;
    uint8_t *got = test_read_file(path, &n);
    int ok = got && n == len && memcmp(got, want, len) == 0;
    if (!ok)
        fprintf(stderr, "  %s: %zu bytes, want %zu%s\n", path, got ? n : 0, len,
                got && n == len ? " (content differs)" : "");
    free(got);
    return ok;
}

/* Files of several chunks and of none, with replies cut into WRTEs of 1 to
 * 9 bytes (every split of the 8-byte headers) and of sizes that put the
 * chunk boundaries anywhere in a packet. */
TEST(pull_with_headers_split_across_packets)
{
    test_tmp_make("sync-split");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    CHECK(adbc_conn_max_payload(c) >= 64 * 1024); /* the direct receive applies */
    const size_t small = 300, big = 2 * 65536 + 1000;
    uint8_t *a = pattern(small, 1), *b = pattern(big, 2);
    fd_put(&d, "/data/small", S_IFREG | 0644, a, small, 10);
    fd_put(&d, "/data/big", S_IFREG | 0644, b, big, 20);
    fd_put(&d, "/data/empty", S_IFREG | 0644, "", 0, 30);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    static const size_t splits[] = {1, 2, 3, 5, 7, 8, 9, 4099, 65539, 65544, 65545};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        pthread_mutex_lock(&d.mu);
        d.wrte_max = splits[i];
        pthread_mutex_unlock(&d.mu);
        adbc_sync_result r;
        if (splits[i] <= 9) {
            CHECK_EQ_INT(adbc_sync_pull(&r, s, "/data/small", test_tmp_path("small"), NULL, TMO), 0);
            CHECK_EQ_INT(r.bytes, small);
            CHECK(same_file(test_tmp_path("small"), a, small));
        }
        if (splits[i] >= 7) { /* 2 KiB of replies a byte at a time is enough */
            CHECK_EQ_INT(adbc_sync_pull(&r, s, "/data/big", test_tmp_path("big"), NULL, TMO), 0);
            CHECK_EQ_INT(r.bytes, big);
            CHECK(same_file(test_tmp_path("big"), b, big));
        }
        CHECK_EQ_INT(adbc_sync_pull(&r, s, "/data/empty", test_tmp_path("empty"), NULL, TMO), 0);
        CHECK(same_file(test_tmp_path("empty"), (const uint8_t *)"", 0));
    }
    CHECK_EQ_INT(count_entries(test_tmp()), 3); /* no temporary left behind */
    free(a);
    free(b);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* DATA, then a FAIL, three bytes a packet. */
static int fail_midway_hook(fdev *d, const adbc_sync_event *ev)
{
    if (ev->id != ADBC_SYNC_RECV)
        return 0;
    fd_hdr(d, ADBC_SYNC_DATA, 5);
    fd_out(d, "abcde", 5);
    fd_hdr(d, ADBC_SYNC_DATA, 3);
    fd_out(d, "fgh", 3);
    fd_fail(d, "read failed: I/O error");
    d->end_after_out = 1; /* adbd ends the session after a FAIL */
    return 1;
}

TEST(pull_fail_after_data_in_split_packets_leaves_no_file)
{
    test_tmp_make("sync-split");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    fd_put(&d, "/data/f", S_IFREG | 0644, "0123456789", 10, 1);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    for (size_t split = 1; split <= 9; split += 2) {
        pthread_mutex_lock(&d.mu);
        d.wrte_max = split;
        d.hook = fail_midway_hook;
        pthread_mutex_unlock(&d.mu);
        int rc = adbc_sync_pull(NULL, s, "/data/f", test_tmp_path("f"), NULL, TMO);
        if (rc != ADBC_EREMOTE)
            fprintf(stderr, "  split %zu: %d %s\n", split, rc, adbc_last_error());
        CHECK_EQ_INT(rc, ADBC_EREMOTE);
        CHECK(strstr(adbc_last_error(), "read failed: I/O error") != NULL);
        CHECK_EQ_INT(count_entries(test_tmp()), 0); /* no file, no temporary */
        pthread_mutex_lock(&d.mu);
        d.hook = NULL;
        pthread_mutex_unlock(&d.mu);
        /* the handle goes on: a new session, a good pull */
        CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/f", test_tmp_path("g"), NULL, TMO), 0);
        CHECK(same_file(test_tmp_path("g"), (const uint8_t *)"0123456789", 10));
        unlink(test_tmp_path("g"));
    }
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* A tree: the replies to its pipelined RECVs follow one another in the
 * same packets, each DONE right before the next file's DATA. */
TEST(tree_pull_with_split_packets)
{
    test_tmp_make("sync-split");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *body[6];
    size_t len[6];
    for (int i = 0; i < 6; i++) {
        char p[64];
        snprintf(p, sizeof p, "/data/t/f%d", i);
        len[i] = (size_t)i * 30000 + 7;
        body[i] = pattern(len[i], 10 + (unsigned)i);
        fd_put(&d, p, S_IFREG | 0644, body[i], len[i], 100 + i);
    }
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    static const size_t splits[] = {0, 5, 4099};
    for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
        pthread_mutex_lock(&d.mu);
        d.wrte_max = splits[k];
        pthread_mutex_unlock(&d.mu);
        char out[32];
        snprintf(out, sizeof out, "out%zu", k);
        adbc_sync_result r;
        CHECK_EQ_INT(adbc_sync_pull(&r, s, "/data/t", test_tmp_path(out), NULL, TMO), 0);
        CHECK_EQ_INT(r.files, 6);
        for (int i = 0; i < 6; i++) {
            char p[64];
            snprintf(p, sizeof p, "%s/f%d", out, i);
            CHECK(same_file(test_tmp_path(p), body[i], len[i]));
        }
    }
    for (int i = 0; i < 6; i++)
        free(body[i]);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(pull_with_headers_split_across_packets);
    RUN(pull_fail_after_data_in_split_packets_leaves_no_file);
    RUN(tree_pull_with_split_packets);
    (void)fd_link; /* test_sync_dev.h helper these tests do not need */
    return T_DONE();
}
