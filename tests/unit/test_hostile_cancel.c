/* SPDX-License-Identifier: Apache-2.0 */
/* Cancellation against devices that never finish: adbc_conn_interrupt ends
 * every blocked call (open, read, write, flush, a pull waiting forever) with
 * ADBC_ECANCELED within a bound, a progress callback that returns nonzero
 * stops a pull, a cancelled pull leaves nothing in the target directory, and
 * the reservation of a pull's blocks stays bounded whatever size the device
 * claims (issue 13, item 3). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "adbc/adbc.h"
#include "adbc/sync.h"
#include "hostile_sync.h"
#include "test_fs.h"
#include "t.h"

#define CONNECT_MS 1500
#define CANCEL_AFTER_MS 200
/* Every call below waits with no timeout of its own (-1) on a device that
 * never answers, so returning ADBC_ECANCELED at all is the interrupt's doing;
 * this bound only keeps a hang from passing, and is far above any delay a
 * busy machine adds (the latency itself is printed, not asserted). */
#define PROMPT_MS 30000

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

static int open_on(hostile *h, hp_script script, int arg, adbc_conn **c)
{
    adbc_transport *t;
    if (hp_start(h, script, arg, &t) != 0)
        return -100;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys();
    o.connect_timeout_ms = CONNECT_MS;
    o.auth_timeout_ms = CONNECT_MS;
    return adbc_conn_open(c, t, &o);
}

/* Interrupt the connection after a delay, from another thread. */
typedef struct later {
    adbc_conn *c;
    int ms;
    int64_t at; /* when the interrupt was made */
    pthread_t th;
} later;

static void *later_main(void *arg)
{
    later *l = arg;
    struct timespec ts = {l->ms / 1000, (long)(l->ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    l->at = hp_now_ms();
    adbc_conn_interrupt(l->c);
    return NULL;
}

static void later_start(later *l, adbc_conn *c, int ms)
{
    l->c = c;
    l->ms = ms;
    l->at = 0;
    pthread_create(&l->th, NULL, later_main, l);
}

/* Online; accept every OPEN, answer nothing else, never acknowledge data. */
static void s_accept_all(hostile *h)
{
    if (hp_online(h, HP_V1, 4096, HP_BANNER) != 0)
        return;
    uint32_t next = 100;
    while (!h->stop) {
        struct pollfd p = {h->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        if (hp_read(h) != 0)
            return;
        if (h->in.cmd == ADBC_A_OPEN && h->arg != 1)
            hp_pkt(h, ADBC_A_OKAY, next++, h->in.a0, NULL, 0);
    }
}

TEST(interrupt_ends_a_read_waiting_forever)
{
    hostile h;
    adbc_conn *c = NULL;
    CHECK_EQ_INT(open_on(&h, s_accept_all, 0, &c), 0);
    adbc_stream *s = NULL;
    int rc = adbc_stream_open(&s, c, "shell:sleep 1000", 2000);
    if (rc == 0) {
        later l;
        later_start(&l, c, CANCEL_AFTER_MS);
        char buf[64];
        rc = (int)adbc_stream_read(s, buf, sizeof buf, -1);
        int64_t end = hp_now_ms();
        pthread_join(l.th, NULL);
        int64_t late = end - l.at;
        printf("  read: %d after the interrupt %lld ms: %s\n", rc, (long long)late,
               adbc_last_error());
        /* later calls fail at once too, until cleared */
        int64_t t0 = hp_now_ms();
        int rc2 = (int)adbc_stream_read(s, buf, sizeof buf, -1);
        int64_t again = hp_now_ms() - t0;
        adbc_stream_close(s);
        adbc_conn_clear_interrupt(c);
        adbc_stream *s2 = NULL;
        int rc3 = adbc_stream_open(&s2, c, "shell:true", 2000);
        adbc_stream_close(s2);
        h.stop = 1;
        adbc_conn_close(c);
        hp_stop(&h);
        CHECK_EQ_INT(rc, ADBC_ECANCELED);
        CHECK(adbc_last_error()[0] != '\0');
        CHECK(late <= PROMPT_MS);
        CHECK_EQ_INT(rc2, ADBC_ECANCELED);
        CHECK(again <= PROMPT_MS); /* -1 again: failing at all is the flag */
        CHECK_EQ_INT(rc3, 0); /* cleared: the connection works again */
        return;
    }
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    CHECK_EQ_INT(rc, 0);
}

TEST(interrupt_ends_a_write_the_device_never_takes)
{
    hostile h;
    adbc_conn *c = NULL;
    CHECK_EQ_INT(open_on(&h, s_accept_all, 0, &c), 0);
    adbc_stream *s = NULL;
    int rc = adbc_stream_open(&s, c, "exec:cat", 2000);
    int64_t late = -1;
    if (rc == 0) {
        later l;
        later_start(&l, c, CANCEL_AFTER_MS);
        static char big[1 << 20];
        rc = adbc_stream_write(s, big, sizeof big, -1);
        int64_t end = hp_now_ms();
        pthread_join(l.th, NULL);
        late = end - l.at;
        printf("  write: %d after the interrupt %lld ms: %s\n", rc, (long long)late,
               adbc_last_error());
        adbc_stream_close(s);
    }
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    CHECK_EQ_INT(rc, ADBC_ECANCELED);
    CHECK(late >= 0 && late <= PROMPT_MS);
}

TEST(interrupt_ends_an_open_the_device_never_answers)
{
    hostile h;
    adbc_conn *c = NULL;
    CHECK_EQ_INT(open_on(&h, s_accept_all, 1 /* answer no OPEN */, &c), 0);
    later l;
    later_start(&l, c, CANCEL_AFTER_MS);
    adbc_stream *s = NULL;
    int rc = adbc_stream_open(&s, c, "shell:true", -1);
    int64_t end = hp_now_ms();
    pthread_join(l.th, NULL);
    int64_t late = end - l.at;
    printf("  open: %d after the interrupt %lld ms: %s\n", rc, (long long)late,
           adbc_last_error());
    adbc_stream_close(s);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    CHECK_EQ_INT(rc, ADBC_ECANCELED);
    CHECK(late <= PROMPT_MS);
}

/* ---- pulls that never end ---- */

#define CLAIMED_SIZE (1024ull * 1024 * 1024) /* the device says 1 GiB */

/* A regular file of CLAIMED_SIZE bytes whose contents never end. */
static void s_endless_file(hostile *h)
{
    hs s;
    if (hs_start(&s, h) != 0)
        return;
    uint32_t id, arg;
    char path[1025];
    while (hs_req(&s, &id, path, &arg) == 0) {
        if (id == hs_mkid("STA2") || id == hs_mkid("LST2"))
            hs_stat(&s, id, 0, HS_REG, CLAIMED_SIZE);
        else if (id == hs_mkid("RECV"))
            hs_data_stream(&s, UINT64_MAX);
        else
            break;
    }
    hs_end(&s);
    hp_hold(h);
}

typedef struct watch {
    const char *dir;
    adbc_conn *c;
    int stop_at_mib;          /* progress callback: return 1 from here (0: never) */
    int interrupt_at_mib;     /* interrupt the connection from here (0: never) */
    int64_t interrupted_at;
    uint64_t max_excess;      /* largest (allocated - written) seen for the temporary */
    int seen_tmp;
} watch;

/* The temporary's allocated bytes beyond what was written. */
static void measure(watch *w, uint64_t written)
{
    DIR *d = opendir(w->dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".adbc-"))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", w->dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0) {
            w->seen_tmp = 1;
            uint64_t alloc = (uint64_t)st.st_blocks * 512;
            if (alloc > written && alloc - written > w->max_excess)
                w->max_excess = alloc - written;
        }
    }
    closedir(d);
}

static int on_progress(void *user, const adbc_sync_progress *p)
{
    watch *w = user;
    measure(w, p->file_bytes);
    uint64_t mib = p->file_bytes >> 20;
    if (w->interrupt_at_mib && mib >= (uint64_t)w->interrupt_at_mib && !w->interrupted_at) {
        w->interrupted_at = hp_now_ms();
        adbc_conn_interrupt(w->c);
    }
    return w->stop_at_mib && mib >= (uint64_t)w->stop_at_mib;
}

static int pull_endless(watch *w, int64_t *took_after)
{
    hostile h;
    adbc_conn *c = NULL;
    if (open_on(&h, s_endless_file, 0, &c) != 0) {
        hp_stop(&h);
        return -1000;
    }
    w->c = c;
    adbc_sync *s = NULL;
    int rc = adbc_sync_open(&s, c, 2000);
    if (rc == 0) {
        adbc_sync_opts o;
        adbc_sync_opts_init(&o);
        o.progress = on_progress;
        o.user = w;
        char path[512];
        snprintf(path, sizeof path, "%s/big", w->dir);
        rc = adbc_sync_pull(NULL, s, "/sdcard/big", path, &o, -1 /* no timeout at all */);
        *took_after = w->interrupted_at ? hp_now_ms() - w->interrupted_at : 0;
        printf("  pull: %d (%s)\n", rc, adbc_last_error());
    }
    adbc_sync_close(s);
    h.stop = 1;
    adbc_conn_close(c);
    hp_stop(&h);
    return rc;
}

TEST(interrupted_pull_leaves_nothing)
{
    char dir[] = "/tmp/adbc-cancel.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    watch w = {.dir = dir, .interrupt_at_mib = 1};
    int64_t took = 0;
    int rc = pull_endless(&w, &took);
    int left = count_entries(dir);
    rmdir(dir);
    printf("  interrupted after 1 MiB: returned %lld ms later, %d entries left\n",
           (long long)took, left);
    CHECK_EQ_INT(rc, ADBC_ECANCELED);
    CHECK(w.seen_tmp);     /* the temporary existed while the pull ran */
    CHECK_EQ_INT(left, 0); /* and is gone */
    CHECK(took <= PROMPT_MS);
}

TEST(progress_callback_stops_pull_reservation_bounded)
{
    char dir[] = "/tmp/adbc-cancel.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    watch w = {.dir = dir, .stop_at_mib = 40};
    int64_t took = 0;
    int rc = pull_endless(&w, &took);
    int left = count_entries(dir);
    rmdir(dir);
    printf("  stopped at 40 MiB of a claimed 1 GiB: reserved beyond the written bytes at "
           "most %llu KiB; %d entries left\n",
           (unsigned long long)(w.max_excess >> 10), left);
    CHECK_EQ_INT(rc, ADBC_ECANCELED);
    CHECK(w.seen_tmp);
    CHECK_EQ_INT(left, 0);
    /* The reservation runs at most 16 MiB ahead of the writes (plus the
     * file system's rounding), not the 1 GiB the device claimed. */
    CHECK(w.max_excess <= 17ull * 1024 * 1024);
}

int main(void)
{
    if (!keys()) {
        fprintf(stderr, "cannot generate a key\n");
        return 1;
    }
    RUN(interrupt_ends_a_read_waiting_forever);
    RUN(interrupt_ends_a_write_the_device_never_takes);
    RUN(interrupt_ends_an_open_the_device_never_answers);
    RUN(interrupted_pull_leaves_nothing);
    RUN(progress_callback_stops_pull_reservation_bounded);
    adbc_keyring_free(keys());
    return T_DONE();
}
