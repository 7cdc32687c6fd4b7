/* SPDX-License-Identifier: Apache-2.0 */
/* Tree pulls from devices that serve endless or enormous trees (issue 13,
 * finding 2): the pull ends with a clear error within its caps or its
 * deadline, or completes, and memory stays bounded whatever the device
 * sends. The device is hostile_tree.h; resident memory is the process's
 * peak (VmHWM, reset through /proc/self/clear_refs before each pull). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/sync.h"
#include "hostile_tree.h"
#include "t.h"

/* The same file builds against the library before the caps existed, to show
 * the tests fail there (without the options they cannot set). */
#ifndef ADBC_SYNC_MAX_ENTRIES_DEFAULT
#define OLD_API 1
#define ADBC_ELIMIT (-21)
#endif

#if defined(__SANITIZE_THREAD__)
#define RSS_SCALE 8 /* ThreadSanitizer's shadow memory */
#elif defined(__SANITIZE_ADDRESS__)
#define RSS_SCALE 2
#else
#define RSS_SCALE 1
#endif

#define IO_MS 5000

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

static char g_dir[64];

static void rm_rf(const char *p)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", p);
}

static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0)
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

/* Reset the peak to the current RSS; the RSS now. */
static long rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
    return status_kib("VmRSS:");
}

typedef struct result {
    int rc;
    char msg[1024];
    adbc_sync_result res;
    long grew_kib;  /* peak RSS during the pull minus RSS before it */
    int64_t ms;
    uint64_t local_files;
} result;

static uint64_t count_files(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] == 'f')
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Pull /d into a fresh directory with the given caps (0: defaults). */
static void pull_tree(result *out, uint64_t max_entries, int deadline_ms)
{
    memset(out, 0, sizeof *out);
    snprintf(g_dir, sizeof g_dir, "/tmp/adbc-tree-XXXXXX");
    if (!mkdtemp(g_dir)) {
        out->rc = -999;
        return;
    }
    hostile h;
    adbc_transport *t;
    adbc_conn *c = NULL;
    adbc_sync *s = NULL;
    out->rc = hp_start(&h, ht_script, 0, &t);
    if (out->rc == 0) {
        adbc_conn_opts o;
        adbc_conn_opts_init(&o);
        o.keys = keys();
        o.connect_timeout_ms = IO_MS;
        out->rc = adbc_conn_open(&c, t, &o);
    }
    if (out->rc == 0)
        out->rc = adbc_sync_open(&s, c, IO_MS);
    char local[128];
    snprintf(local, sizeof local, "%s/out", g_dir);
    if (out->rc == 0) {
        adbc_sync_opts so;
        adbc_sync_opts_init(&so);
#ifndef OLD_API
        so.max_entries = max_entries;
        so.deadline_ms = deadline_ms;
#else
        (void)max_entries;
        (void)deadline_ms;
#endif
        long before = rss_reset();
        int64_t t0 = hp_now_ms();
        out->rc = adbc_sync_pull(&out->res, s, "/d", local, &so, IO_MS);
        out->ms = hp_now_ms() - t0;
        out->grew_kib = status_kib("VmHWM:") - before;
        snprintf(out->msg, sizeof out->msg, "%s", out->rc ? adbc_last_error() : "");
    }
    out->local_files = count_files(local);
    printf("  rc %d in %lld ms, peak RSS +%ld KiB, %llu files, %llu skipped; device sent "
           "%llu entries%s\n  %s\n",
           out->rc, (long long)out->ms, out->grew_kib, (unsigned long long)out->res.files,
           (unsigned long long)out->res.skipped, (unsigned long long)ht.sent,
           ht.gave_up ? " and gave up" : "", out->msg);
    adbc_sync_close(s);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    rm_rf(g_dir);
}

/* Every directory holds directories, without end: the walk keeps at most
 * 16 MiB of directories waiting, then stops with ADBC_ELIMIT. Before: the
 * listing was kept whole, and grew until the device gave up (3,000,000
 * entries, about 400 MB). */
TEST(endless_tree_of_directories_stops_at_a_cap)
{
    ht_set(HT_ENDLESS, 0, HS_DIR, 0);
    result r;
    pull_tree(&r, 0, 0);
    CHECK_EQ_INT(r.rc, ADBC_ELIMIT);
    CHECK(strstr(r.msg, "wait to be walked") != NULL);
    CHECK(!ht.gave_up);
    CHECK(r.grew_kib < 48 * 1024 * RSS_SCALE);
    CHECK(r.ms < 120000); /* a bound on a hang, not a timing */
}

/* An endless listing of entries that are skipped (sockets), no entry cap:
 * the deadline ends it, on time, with a message naming it, memory flat.
 * Before: no deadline; the listing was kept whole until the device gave up
 * (3,000,000 entries). */
TEST(endless_listing_ends_at_the_deadline)
{
    ht_set(HT_ENDLESS, 0, 0140755u /* S_IFSOCK */, 0);
    ht.pause_us = 2000; /* about 400,000 entries a second */
    result r;
    pull_tree(&r, UINT64_MAX, 1500);
    CHECK_EQ_INT(r.rc, ADBC_ETIMEDOUT);
    CHECK(strstr(r.msg, "deadline of 1500 ms") != NULL);
    CHECK(!ht.gave_up);
    CHECK(r.ms >= 1500 && r.ms < 1500 + 60000); /* not before it; the rest bounds a hang */
    CHECK(r.grew_kib < 32 * 1024 * RSS_SCALE);
}

/* A directory of 1,000,000 entries (the default cap), every 1000th a file
 * of 1 KiB, the rest sockets: pulled whole, the files asked for while the
 * listing is still arriving, and memory flat. Before: 446 MB for such a
 * listing, and no file asked for until the whole tree was listed. */
TEST(million_entry_directory_is_pulled_in_bounded_memory)
{
    ht_set(1000000, 1000, 0140755u, 1024);
    result r;
    pull_tree(&r, 0, 0);
    CHECK_EQ_INT(r.rc, 0);
    CHECK_EQ_INT(r.res.files, 1000);
    CHECK_EQ_INT(r.local_files, 1000);
    CHECK_EQ_INT(r.res.skipped, 999000);
    CHECK_EQ_INT(r.res.bytes, 1000 * 1024);
    CHECK(ht.sent_at_first_recv < 1000000);
    CHECK(r.grew_kib < 32 * 1024 * RSS_SCALE);
}

/* max_entries: exactly the cap is pulled, one more is refused by name. */
TEST(entry_cap_takes_the_cap_and_refuses_one_more)
{
    ht_set(1000, 10, 0140755u, 16);
    result r;
    pull_tree(&r, 1000, 0);
    CHECK_EQ_INT(r.rc, 0);
    CHECK_EQ_INT(r.res.files, 100);
    ht_set(1001, 10, 0140755u, 16);
    pull_tree(&r, 1000, 0);
    CHECK_EQ_INT(r.rc, ADBC_ELIMIT);
    CHECK(strstr(r.msg, "more than 1000 entries") != NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!keys()) {
        fprintf(stderr, "cannot make a key\n");
        return 1;
    }
    RUN(endless_tree_of_directories_stops_at_a_cap);
    RUN(endless_listing_ends_at_the_deadline);
    RUN(million_entry_directory_is_pulled_in_bounded_memory);
    RUN(entry_cap_takes_the_cap_and_refuses_one_more);
    adbc_keyring_free(keys());
    return T_DONE();
}
