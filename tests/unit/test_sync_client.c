/* SPDX-License-Identifier: Apache-2.0 */
/* The sync client against an in-test device (test_sync_dev.h): what goes on
 * the wire for each operation, pipelining, trees, FAILs and malformed
 * replies from the device, timeouts, a local disk that fills up, and a
 * connection cut at many byte offsets during a pull (no partial file may
 * remain, and the error must say what happened). */
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <utime.h>

#include "core/internal.h"
#include "test_sync_dev.h"

#define TMO 5000

/* lib/core/alloc.c: make the Nth allocation fail (0: none). */
void core_test_fail_alloc_at(long n);
long core_test_alloc_count(void);

static int write_file(const char *path, const void *data, size_t n, mode_t mode, time_t mtime)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    if (n && write(fd, data, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    close(fd);
    chmod(path, mode);
    struct utimbuf ut = {mtime, mtime};
    return utime(path, &ut);
}

/* ---- stat and list ---- */

TEST(stat_and_lstat_v2)
{
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    fd_put(&d, "/data/f", S_IFREG | 0640, "hello", 5, 1234);
    fd_link(&d, "/data/l", "/data/f");
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_has_stat_v2(s), 1);
    adbc_sync_statbuf st;
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/l", TMO), 0);
    CHECK_EQ_INT(st.mode, S_IFREG | 0640);
    CHECK_EQ_INT(st.size, 5);
    CHECK_EQ_INT(st.mtime, 1234);
    CHECK_EQ_INT(st.uid, 2000);
    CHECK_EQ_INT(st.v2, 1);
    CHECK_EQ_INT(adbc_sync_lstat(&st, s, "/data/l", TMO), 0);
    CHECK(S_ISLNK(st.mode));
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/none", TMO), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "/data/none") != NULL);
    CHECK(strstr(adbc_last_error(), "No such file or directory") != NULL);
    pthread_mutex_lock(&d.mu);
    CHECK_EQ_INT(d.nreq, 3);
    CHECK_EQ_INT(d.req_id[0], ADBC_SYNC_STA2);
    CHECK_EQ_INT(d.req_id[1], ADBC_SYNC_LST2);
    CHECK_STR(d.req_path[2], "/data/none");
    /* the exact request bytes: [STA2][7]["/data/l"] */
    CHECK(d.rlen >= 15);
    CHECK_MEM(d.rec, "STA2\x07\x00\x00\x00/data/l", 15);
    pthread_mutex_unlock(&d.mu);
    adbc_sync_close(s);
    fd_stop(&d, c);
}

TEST(stat_v1_emulation)
{
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, "device::features=shell_v2", &c), 0);
    fd_put(&d, "/data/dir/x", S_IFREG | 0600, "x", 1, 99);
    fd_link(&d, "/data/ld", "/data/dir");
    fd_link(&d, "/data/lf", "/data/dir/x");
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_has_stat_v2(s), 0);
    adbc_sync_statbuf st;
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/dir/x", TMO), 0);
    CHECK_EQ_INT(st.mode, S_IFREG | 0600);
    CHECK_EQ_INT(st.size, 1);
    CHECK_EQ_INT(st.v2, 0);
    /* a link is told apart by probing "link/" */
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/ld", TMO), 0);
    CHECK(S_ISDIR(st.mode));
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/lf", TMO), 0);
    CHECK(S_ISREG(st.mode));
    CHECK_EQ_INT(st.size, 0);
    CHECK_EQ_INT(adbc_sync_lstat(&st, s, "/data/lf", TMO), 0);
    CHECK(S_ISLNK(st.mode));
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/nope", TMO), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "v1 stat") != NULL);
    pthread_mutex_lock(&d.mu);
    for (int i = 0; i < d.nreq; i++)
        CHECK_EQ_INT(d.req_id[i], ADBC_SYNC_STAT);
    CHECK_STR(d.req_path[2], "/data/ld/");
    pthread_mutex_unlock(&d.mu);
    adbc_sync_close(s);
    fd_stop(&d, c);
}

typedef struct names {
    char n[32][64];
    int count, stop_after;
    adbc_sync_statbuf st[32];
} names;

static int collect(void *u, const adbc_sync_dirent *e)
{
    names *n = u;
    if (n->count < 32) {
        snprintf(n->n[n->count], 64, "%s", e->name);
        n->st[n->count] = e->st;
        n->count++;
    }
    return n->stop_after && n->count >= n->stop_after;
}

static int has(const names *n, const char *s)
{
    for (int i = 0; i < n->count; i++)
        if (strcmp(n->n[i], s) == 0)
            return 1;
    return 0;
}

TEST(list_v1_and_v2)
{
    for (int v2 = 0; v2 < 2; v2++) {
        static fdev d; /* outlives a failed CHECK with its thread */
        memset(&d, 0, sizeof d);
        adbc_conn *c;
        CHECK_EQ_INT(fd_start(&d, v2 ? NULL : "device::features=shell_v2", &c), 0);
        fd_put(&d, "/data/d/a", S_IFREG | 0644, "aa", 2, 5);
        fd_put(&d, "/data/d/b", S_IFREG | 0644, "b", 1, 6);
        fd_put(&d, "/data/d/sub/c", S_IFREG | 0644, "c", 1, 7);
        adbc_sync *s;
        CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
        names n = {0};
        CHECK_EQ_INT(adbc_sync_list(s, "/data/d", collect, &n, TMO), 0);
        CHECK_EQ_INT(n.count, 5);
        CHECK(has(&n, ".") && has(&n, "..") && has(&n, "a") && has(&n, "b") && has(&n, "sub"));
        for (int i = 0; i < n.count; i++)
            if (strcmp(n.n[i], "a") == 0) {
                CHECK_EQ_INT(n.st[i].size, 2);
                CHECK_EQ_INT(n.st[i].mtime, 5);
                CHECK_EQ_INT(n.st[i].v2, v2);
            }
        CHECK_EQ_INT(adbc_sync_list(s, "/data/none", collect, &n, TMO), ADBC_ENOTFOUND);
        CHECK_EQ_INT(adbc_sync_list(s, "/data/d/a", collect, &n, TMO), ADBC_EINVAL);
        CHECK(strstr(adbc_last_error(), "not a directory") != NULL);
        /* stopping early drains the listing: the session stays in step */
        names m = {.stop_after = 1};
        CHECK_EQ_INT(adbc_sync_list(s, "/data/d", collect, &m, TMO), 0);
        CHECK_EQ_INT(m.count, 1);
        adbc_sync_statbuf st;
        CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/d/b", TMO), 0);
        CHECK_EQ_INT(st.size, 1);
        pthread_mutex_lock(&d.mu);
        int saw = 0;
        for (int i = 0; i < d.nreq; i++)
            saw |= d.req_id[i] == (v2 ? ADBC_SYNC_LIS2 : ADBC_SYNC_LIST);
        CHECK(saw);
        CHECK_EQ_INT(d.sync_opens, 1);
        pthread_mutex_unlock(&d.mu);
        adbc_sync_close(s);
        fd_stop(&d, c);
    }
}

/* ---- push ---- */

/* Parse what the host sent: SEND spec, chunk sizes, DONE mtime. */
typedef struct wire {
    char spec[300];
    size_t chunks[64];
    int nchunks;
    uint32_t mtime;
    size_t data_len;
    int complete;
} wire;

static int parse_send(const uint8_t *p, size_t n, size_t *off, wire *w)
{
    memset(w, 0, sizeof *w);
    if (*off + 8 > n || memcmp(p + *off, "SEND", 4) != 0)
        return 0;
    uint32_t l = core_rd32(p + *off + 4);
    snprintf(w->spec, sizeof w->spec, "%.*s", (int)l, (const char *)p + *off + 8);
    *off += 8 + l;
    while (*off + 8 <= n) {
        uint32_t id = core_rd32(p + *off), len = core_rd32(p + *off + 4);
        *off += 8;
        if (id == ADBC_SYNC_DONE) {
            w->mtime = len;
            w->complete = 1;
            return 1;
        }
        if (id != ADBC_SYNC_DATA || w->nchunks == 64)
            return 0;
        w->chunks[w->nchunks++] = len;
        w->data_len += len;
        *off += len;
    }
    return 0;
}

TEST(push_bytes_on_the_wire)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    static const size_t sizes[] = {150000, 0, 1, 65536, 131072};
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint8_t *data = pattern(sizes[k], (unsigned)k);
        CHECK_EQ_INT(write_file(test_tmp_path("src"), data, sizes[k], 0640, 1600000000), 0);
        pthread_mutex_lock(&d.mu);
        size_t start = d.rlen;
        pthread_mutex_unlock(&d.mu);
        adbc_sync_result r;
        CHECK_EQ_INT(adbc_sync_push(&r, s, test_tmp_path("src"), "/data/local/tmp/x", NULL, TMO), 0);
        CHECK_EQ_INT(r.files, 1);
        CHECK_EQ_INT(r.bytes, sizes[k]);
        pthread_mutex_lock(&d.mu);
        size_t off = start;
        wire w;
        int ok = parse_send(d.rec, d.rlen, &off, &w);
        const mfile *m = fd_find(&d, "/data/local/tmp/x");
        pthread_mutex_unlock(&d.mu);
        CHECK(ok);
        CHECK_STR(w.spec, "/data/local/tmp/x,33184"); /* S_IFREG | 0640 in decimal */
        CHECK_EQ_INT(w.mtime, 1600000000);
        CHECK_EQ_INT(w.data_len, sizes[k]);
        for (int i = 0; i < w.nchunks; i++) {
            CHECK(w.chunks[i] <= 65536);
            if (i + 1 < w.nchunks)
                CHECK_EQ_INT(w.chunks[i], 65536); /* full chunks, then the rest */
        }
        CHECK_EQ_INT(w.nchunks, (int)((sizes[k] + 65535) / 65536));
        CHECK(m != NULL);
        CHECK_EQ_INT(m->len, sizes[k]);
        CHECK(sizes[k] == 0 || memcmp(m->data, data, sizes[k]) == 0);
        free(data);
    }
    adbc_sync_close(s);
    /* close sends QUIT */
    int quit = 0;
    for (int i = 0; i < 200 && !quit; i++) {
        pthread_mutex_lock(&d.mu);
        quit = d.rlen >= 8 && memcmp(d.rec + d.rlen - 8, "QUIT\0\0\0\0", 8) == 0;
        pthread_mutex_unlock(&d.mu);
        if (!quit)
            usleep(5000);
    }
    CHECK(quit);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

TEST(push_fail_names_path_and_device_message)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *data = pattern(300000, 3);
    CHECK_EQ_INT(write_file(test_tmp_path("big"), data, 300000, 0644, 1000), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    int rc = adbc_sync_push(NULL, s, test_tmp_path("big"), "/ro/x", NULL, TMO);
    CHECK_EQ_INT(rc, ADBC_EREMOTE);
    const char *e = adbc_last_error();
    CHECK(strstr(e, "Read-only file system") != NULL);
    CHECK(strstr(e, "/ro/x") != NULL);
    CHECK(strstr(e, test_tmp_path("big")) != NULL);
    /* the device ended that session; the handle opens a new one */
    CHECK_EQ_INT(adbc_sync_push(NULL, s, test_tmp_path("big"), "/data/ok", NULL, TMO), 0);
    pthread_mutex_lock(&d.mu);
    CHECK_EQ_INT(d.sync_opens, 2);
    const mfile *m = fd_find(&d, "/data/ok");
    CHECK(m && m->len == 300000 && memcmp(m->data, data, 300000) == 0);
    pthread_mutex_unlock(&d.mu);
    /* a missing local file is a local error */
    CHECK_EQ_INT(adbc_sync_push(NULL, s, test_tmp_path("none"), "/data/n", NULL, TMO), ADBC_ENOTFOUND);
    free(data);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

typedef struct prog {
    uint64_t last_bytes, total, files, calls, last_files;
    int monotonic, file_done_seen;
} prog;

static int on_prog(void *u, const adbc_sync_progress *p)
{
    prog *g = u;
    if (p->bytes < g->last_bytes)
        g->monotonic = 0;
    g->last_bytes = p->bytes;
    g->total = p->total;
    g->files = p->files_total;
    g->last_files = p->files;
    g->calls++;
    g->file_done_seen += p->file_done;
    return 0;
}

TEST(push_tree_is_pipelined)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    mkdir(test_tmp_path("t"), 0755);
    mkdir(test_tmp_path("t/sub"), 0755);
    mkdir(test_tmp_path("t/empty"), 0755);
    mkdir(test_tmp_path("t/empty/deeper"), 0755);
    uint64_t total = 0;
    for (int i = 0; i < 30; i++) {
        char rel[64], data[64];
        snprintf(rel, sizeof rel, i % 2 ? "t/sub/f%02d" : "t/f%02d", i);
        int n = snprintf(data, sizeof data, "file %d contents", i);
        total += (uint64_t)n;
        CHECK_EQ_INT(write_file(test_tmp_path(rel), data, (size_t)n, i % 3 ? 0644 : 0755,
                                1500000000 + i),
                     0);
    }
    CHECK_EQ_INT(symlink("f00", test_tmp_path("t/zlink")), 0);
    /* The device answers no SEND until the 30 files have completed: a client
     * waiting for each OKAY before the next file would time out here. (A
     * link waits for its answer: the device may refuse links, and then its
     * target's contents go instead.) */
    d.hold_okays = 30;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    prog g = {.monotonic = 1};
    o.progress = on_prog;
    o.user = &g;
    adbc_sync_result r;
    int prc = adbc_sync_push(&r, s, test_tmp_path("t"), "/data/t", &o, 2000);
    if (prc)
        fprintf(stderr, "  %s\n", adbc_last_error());
    CHECK_EQ_INT(prc, 0);
    CHECK_EQ_INT(r.files, 31);
    CHECK_EQ_INT(r.bytes, total + 4); /* the link's "f00" and its NUL, as adb counts them */
    CHECK_EQ_INT(r.dirs, 1); /* only the empty leaf needs mkdir */
    CHECK(g.monotonic);
    CHECK_EQ_INT(g.last_bytes, total);
    CHECK_EQ_INT(g.total, total);
    CHECK_EQ_INT(g.files, 31);
    CHECK_EQ_INT(g.file_done_seen, 31);
    pthread_mutex_lock(&d.mu);
    const mfile *f7 = fd_find(&d, "/data/t/sub/f07");
    CHECK(f7 && f7->len == strlen("file 7 contents") && memcmp(f7->data, "file 7", 6) == 0);
    CHECK_EQ_INT(f7->mtime, 1500000007);
    CHECK_EQ_INT(f7->mode, S_IFREG | 0644);
    const mfile *f6 = fd_find(&d, "/data/t/f06");
    CHECK(f6 && f6->mode == (S_IFREG | 0755));
    const mfile *l = fd_find(&d, "/data/t/zlink");
    CHECK(l && S_ISLNK(l->mode));
    CHECK_STR(l->link, "f00");
    CHECK_EQ_INT(d.nservices, 1);
    CHECK(strstr(d.services[0], "mkdir -p '/data/t/empty/deeper'") != NULL);
    pthread_mutex_unlock(&d.mu);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* A device whose file system has no symlinks (FAT-like /sdcard) refuses the
 * link: its target's contents go instead. */
static int no_links_hook(fdev *d, const adbc_sync_event *ev)
{
    size_t plen;
    uint32_t mode;
    if (ev->id != ADBC_SYNC_SEND ||
        sync_parse_send_spec(ev->text, ev->text_len, &plen, &mode) != 0 || !S_ISLNK(mode))
        return 0;
    d->sending = 1;
    d->send_failed = 1;
    fd_fail(d, "symlink failed: Operation not permitted");
    return 1;
}

TEST(links_as_contents_where_the_device_has_none)
{
    test_tmp_make("sync-test");
    static fdev d;
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    d.hook = no_links_hook;
    mkdir(test_tmp_path("t"), 0755);
    CHECK_EQ_INT(write_file(test_tmp_path("t/real"), "target!", 7, 0644, 50), 0);
    CHECK_EQ_INT(symlink("real", test_tmp_path("t/link")), 0);
    CHECK_EQ_INT(write_file(test_tmp_path("t/zafter"), "after", 5, 0644, 60), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_result r;
    CHECK_EQ_INT(adbc_sync_push(&r, s, test_tmp_path("t"), "/sdcard/t", NULL, TMO), 0);
    CHECK_EQ_INT(r.files, 3);
    pthread_mutex_lock(&d.mu);
    const mfile *l = fd_find(&d, "/sdcard/t/link");
    CHECK(l && S_ISREG(l->mode) && l->len == 7 && memcmp(l->data, "target!", 7) == 0);
    const mfile *z = fd_find(&d, "/sdcard/t/zafter");
    CHECK(z && z->len == 5);
    CHECK_EQ_INT(d.sync_opens, 2); /* the FAIL ended the first session */
    pthread_mutex_unlock(&d.mu);
    /* with ADBC_SYNC_FOLLOW_LINKS no link is even tried */
    d.hook = NULL;
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.flags = ADBC_SYNC_FOLLOW_LINKS;
    CHECK_EQ_INT(adbc_sync_push(&r, s, test_tmp_path("t/link"), "/data/l2", &o, TMO), 0);
    pthread_mutex_lock(&d.mu);
    const mfile *l2 = fd_find(&d, "/data/l2");
    CHECK(l2 && S_ISREG(l2->mode) && l2->len == 7);
    CHECK_EQ_INT(d.sync_opens, 2);
    pthread_mutex_unlock(&d.mu);
    /* without it, a single link goes as a link */
    CHECK_EQ_INT(adbc_sync_push(&r, s, test_tmp_path("t/link"), "/data/l3", NULL, TMO), 0);
    pthread_mutex_lock(&d.mu);
    const mfile *l3 = fd_find(&d, "/data/l3");
    CHECK(l3 && S_ISLNK(l3->mode));
    CHECK_STR(l3->link, "real");
    pthread_mutex_unlock(&d.mu);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

TEST(push_tree_without_fixed_push_mkdir)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, "device::features=shell_v2,stat_v2,ls_v2", &c), 0);
    mkdir(test_tmp_path("t"), 0755);
    mkdir(test_tmp_path("t/a"), 0755);
    CHECK_EQ_INT(write_file(test_tmp_path("t/a/f"), "z", 1, 0644, 1), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_push(NULL, s, test_tmp_path("t"), "/sdcard/t", NULL, TMO), 0);
    pthread_mutex_lock(&d.mu);
    CHECK_EQ_INT(d.nservices, 1);
    CHECK(strstr(d.services[0], "mkdir -p '/sdcard/t' '/sdcard/t/a'") != NULL);
    pthread_mutex_unlock(&d.mu);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* ---- pull ---- */

TEST(pull_file_atomic_with_attrs)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *data = pattern(200000, 9);
    fd_put(&d, "/sdcard/p.bin", S_IFREG | 0750, data, 200000, 1400000000);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    prog g = {.monotonic = 1};
    o.progress = on_prog;
    o.user = &g;
    adbc_sync_result r;
    CHECK_EQ_INT(adbc_sync_pull(&r, s, "/sdcard/p.bin", test_tmp_path("deep/er/p.bin"), &o, TMO), 0);
    CHECK_EQ_INT(r.files, 1);
    CHECK_EQ_INT(r.bytes, 200000);
    CHECK(g.monotonic && g.last_bytes == 200000 && g.file_done_seen == 1);
    size_t n;
    uint8_t *got = test_read_file(test_tmp_path("deep/er/p.bin"), &n);
    CHECK(got && n == 200000 && memcmp(got, data, n) == 0);
    free(got);
    struct stat st;
    CHECK_EQ_INT(stat(test_tmp_path("deep/er/p.bin"), &st), 0);
    CHECK_EQ_INT(st.st_mtime, 1400000000);
    mode_t um = umask(022);
    umask(um);
    CHECK_EQ_INT(st.st_mode & 0777, 0750 & ~um);
    CHECK_EQ_INT(count_entries(test_tmp_path("deep/er")), 1); /* no temporary left */
    /* without attributes: a new file's mode, the current time */
    o.flags = ADBC_SYNC_NO_ATTRS;
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/sdcard/p.bin", test_tmp_path("q.bin"), &o, TMO), 0);
    CHECK_EQ_INT(stat(test_tmp_path("q.bin"), &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0666 & ~um);
    CHECK(st.st_mtime > 1500000000);
    /* a FAIL from RECV: the device's message, nothing left behind */
    fd_put(&d, "/sdcard/dir/x", S_IFREG | 0644, "x", 1, 1);
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/sdcard/missing", test_tmp_path("m"), NULL, TMO),
                 ADBC_ENOTFOUND);
    free(data);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* The last progress report counts the file as done in both directions,
 * and a success leaves no message behind from the polls it made on the
 * way (adbc_last_error() after a success is empty), whatever the timeout. */
TEST(last_report_counts_the_file_and_success_leaves_no_error)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *data = pattern(300000, 4);
    CHECK_EQ_INT(write_file(test_tmp_path("up.bin"), data, 300000, 0644, 1000), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    prog g = {.monotonic = 1};
    o.progress = on_prog;
    o.user = &g;
    int timeouts[] = {TMO, -1};
    for (int i = 0; i < 2; i++) {
        memset(&g, 0, sizeof g);
        CHECK_EQ_INT(adbc_sync_push(NULL, s, test_tmp_path("up.bin"), "/sdcard/up.bin", &o,
                                    timeouts[i]), 0);
        CHECK_STR(adbc_last_error(), "");
        CHECK(g.calls > 0 && g.last_files == 1 && g.files == 1);
        memset(&g, 0, sizeof g);
        CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/sdcard/up.bin", test_tmp_path("down.bin"), &o,
                                    timeouts[i]), 0);
        CHECK_STR(adbc_last_error(), "");
        CHECK(g.calls > 0 && g.last_files == 1 && g.files == 1);
    }
    free(data);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* The pull reserves the file's blocks from the size the device's stat
 * gave. A file that is smaller by the time it is read comes out with its
 * real bytes and no reservation left past its end; a size no disk could
 * hold (a hostile device) is not reserved at all. */
TEST(pull_reservation_follows_the_bytes_received)
{
    test_tmp_make("sync-test");
    static fdev d;
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *data = pattern(5000, 3);
    mfile *m = fd_put(&d, "/sdcard/shrunk", S_IFREG | 0644, data, 5000, 1400000000);
    m->stat_size = 8u << 20; /* stat: 8 MiB; the read: 5000 bytes */
    mfile *h = fd_put(&d, "/sdcard/huge", S_IFREG | 0644, data, 5000, 1400000000);
    h->stat_size = 1ull << 62;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    const char *names[2] = {"shrunk", "huge"};
    for (int i = 0; i < 2; i++) {
        char remote[64];
        snprintf(remote, sizeof remote, "/sdcard/%s", names[i]);
        CHECK_EQ_INT(adbc_sync_pull(NULL, s, remote, test_tmp_path(names[i]), NULL, TMO), 0);
        size_t n;
        uint8_t *got = test_read_file(test_tmp_path(names[i]), &n);
        CHECK(got && n == 5000 && memcmp(got, data, n) == 0);
        free(got);
        struct stat st;
        CHECK_EQ_INT(stat(test_tmp_path(names[i]), &st), 0);
        CHECK_EQ_INT(st.st_size, 5000);
        /* what the file holds on disk: its bytes' blocks, not 8 MiB */
        CHECK((uint64_t)st.st_blocks * 512 < 1u << 20);
    }
    free(data);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

TEST(pull_tree_follows_links_and_stops_loops)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    fd_put(&d, "/data/t/a", S_IFREG | 0644, "A", 1, 10);
    fd_put(&d, "/data/t/sub/b", S_IFREG | 0600, "BB", 2, 20);
    fd_put(&d, "/data/t/sub/deep/c", S_IFREG | 0644, "CCC", 3, 30);
    fd_put(&d, "/data/t/emptydir/.x", S_IFREG | 0644, "", 0, 1);
    fd_link(&d, "/data/t/la", "/data/t/a");       /* pulled as a copy of a */
    fd_link(&d, "/data/t/loop", "/data/t");       /* back to an ancestor: skipped */
    fd_link(&d, "/data/t/dangling", "/data/nope"); /* skipped */
    fd_put(&d, "/data/t/fifo", S_IFIFO | 0644, "", 0, 1); /* special: skipped */
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_result r;
    CHECK_EQ_INT(adbc_sync_pull(&r, s, "/data/t", test_tmp_path("out"), NULL, TMO), 0);
    CHECK_EQ_INT(r.files, 5); /* a, la, b, c, .x */
    CHECK_EQ_INT(r.skipped, 3);
    CHECK_EQ_INT(r.bytes, 1 + 1 + 2 + 3);
    size_t n;
    uint8_t *got = test_read_file(test_tmp_path("out/sub/deep/c"), &n);
    CHECK(got && n == 3 && memcmp(got, "CCC", 3) == 0);
    free(got);
    got = test_read_file(test_tmp_path("out/la"), &n);
    CHECK(got && n == 1 && got[0] == 'A');
    free(got);
    struct stat st;
    CHECK_EQ_INT(stat(test_tmp_path("out/sub/b"), &st), 0);
    CHECK_EQ_INT(st.st_mtime, 20);
    CHECK_EQ_INT(lstat(test_tmp_path("out/loop"), &st), -1);
    CHECK_EQ_INT(count_entries(test_tmp_path("out")), 4); /* a, la, sub, emptydir */
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* RECV replies held back until 5 requests have arrived (the 5 files of one
 * directory): a client asking for one file at a time would time out. A tree
 * pull asks for a directory's files as it lists them, and this device serves
 * one sync session, so the listing of the next directory waits for them. */
static char held_paths[16][64];
static int nheld;

static void reply_recv(fdev *d, const char *path)
{
    const mfile *m = fd_follow(d, path);
    fd_hdr(d, ADBC_SYNC_DATA, (uint32_t)m->len);
    fd_out(d, m->data, m->len);
    fd_hdr(d, ADBC_SYNC_DONE, 0);
}

static int hold_recv_hook(fdev *d, const adbc_sync_event *ev)
{
    if (ev->id != ADBC_SYNC_RECV)
        return 0;
    snprintf(held_paths[nheld++], 64, "%s", ev->text);
    if (nheld == 5) {
        for (int i = 0; i < nheld; i++)
            reply_recv(d, held_paths[i]);
        nheld = 0;
    }
    return 1;
}

TEST(pull_tree_is_pipelined)
{
    test_tmp_make("sync-test");
    static fdev d;
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    for (int i = 0; i < 10; i++) {
        char p[64], body[16];
        snprintf(p, sizeof p, i < 5 ? "/data/many/f%d" : "/data/many/sub/f%d", i);
        int n = snprintf(body, sizeof body, "body %d", i);
        fd_put(&d, p, S_IFREG | 0644, body, (size_t)n, 100 + i);
    }
    nheld = 0;
    d.hook = hold_recv_hook;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_result r;
    int rc = adbc_sync_pull(&r, s, "/data/many", test_tmp_path("many"), NULL, 2000);
    if (rc)
        fprintf(stderr, "  %s\n", adbc_last_error());
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(r.files, 10);
    size_t n;
    uint8_t *got = test_read_file(test_tmp_path("many/sub/f7"), &n);
    CHECK(got && n == 6 && memcmp(got, "body 7", 6) == 0);
    free(got);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* ---- malformed replies and failures, in context ---- */

static const char *bad_recv_reply;
static size_t bad_recv_len;

static int recv_hook(fdev *d, const adbc_sync_event *ev)
{
    if (ev->id != ADBC_SYNC_RECV)
        return 0;
    fd_out(d, bad_recv_reply, bad_recv_len);
    d->end_after_out = 1;
    return 1;
}

static int pull_with_reply(const char *reply, size_t len, int *code, char *msg, size_t msglen)
{
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    if (fd_start(&d, NULL, &c) != 0)
        return -1;
    fd_put(&d, "/data/f", S_IFREG | 0644, "0123456789", 10, 1);
    bad_recv_reply = reply;
    bad_recv_len = len;
    d.hook = recv_hook;
    adbc_sync *s;
    if (adbc_sync_open(&s, c, TMO) != 0)
        return -1;
    *code = adbc_sync_pull(NULL, s, "/data/f", test_tmp_path("f"), NULL, TMO);
    snprintf(msg, msglen, "%s", adbc_last_error());
    /* the handle recovers: a new session, a good pull */
    d.hook = NULL;
    int again = adbc_sync_pull(NULL, s, "/data/f", test_tmp_path("g"), NULL, TMO);
    adbc_sync_close(s);
    fd_stop(&d, c);
    unlink(test_tmp_path("g"));
    return again;
}

TEST(malformed_recv_replies_leave_no_file)
{
    test_tmp_make("sync-test");
    static const struct {
        const char *bytes;
        size_t len;
        int code;
        const char *needle;
    } cases[] = {
        {"DATA\x01\x00\x01\x00", 8, ADBC_EPROTO, "oversize DATA"},
        {"DATA\x02\x00\x00\x00xyZZZZ\x00\x00\x00\x00", 18, ADBC_EPROTO, "ZZZZ"},
        {"DATA\x0a\x00\x00\x00" "01234", 13, ADBC_ECLOSED, "ended the sync session"},
        {"DATA\x02\x00\x00\x00" "01", 10, ADBC_ECLOSED, "ended the sync session"},
        {"FAIL\x01\x10\x00\x00", 8, ADBC_EPROTO, "oversize FAIL"},
        {"OKAY\x00\x00\x00\x00", 8, ADBC_EPROTO, "'OKAY'"},
        {"FAIL\x1e\x00\x00\x00open failed: Permission denied", 38, ADBC_EREMOTE,
         "open failed: Permission denied"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int code = 0;
        char msg[1024];
        CHECK_EQ_INT(pull_with_reply(cases[i].bytes, cases[i].len, &code, msg, sizeof msg), 0);
        if (code != cases[i].code || !strstr(msg, cases[i].needle))
            fprintf(stderr, "  case %zu: code %d, message \"%s\"\n", i, code, msg);
        CHECK_EQ_INT(code, cases[i].code);
        CHECK(strstr(msg, cases[i].needle) != NULL);
        CHECK(strstr(msg, "/data/f") != NULL);
        CHECK_EQ_INT(count_entries(test_tmp()), 0); /* no target, no temporary */
    }
    test_rm_rf(test_tmp());
}

static int evil_list_hook(fdev *d, const adbc_sync_event *ev)
{
    if (ev->id != ADBC_SYNC_LIS2)
        return 0;
    uint8_t b[80];
    adbc_sync_statbuf st = {.mode = S_IFREG | 0644, .size = 1, .v2 = 1};
    fd_out(d, b, sync_enc_dent_v2(b, 0, &st, 9));
    fd_out(d, "../escape", 9);
    fd_out(d, b, sync_enc_list_end(b, 1));
    return 1;
}

TEST(hostile_entry_name_cannot_escape_a_tree_pull)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    fd_put(&d, "/data/t/x", S_IFREG | 0644, "x", 1, 1);
    d.hook = evil_list_hook;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    mkdir(test_tmp_path("in"), 0755);
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/t", test_tmp_path("in/t"), NULL, TMO), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "'/'") != NULL);
    CHECK_EQ_INT(count_entries(test_tmp()), 1);  /* only in/ */
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

static int silent_hook(fdev *d, const adbc_sync_event *ev)
{
    (void)d;
    return ev->id == ADBC_SYNC_STA2; /* never answered */
}

TEST(timeout_then_recovery)
{
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    fd_put(&d, "/data/f", S_IFREG | 0644, "x", 1, 1);
    d.hook = silent_hook;
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_statbuf st;
    int64_t t0 = core_now_ms();
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/f", 300), ADBC_ETIMEDOUT);
    int64_t el = core_now_ms() - t0;
    CHECK(el >= 250 && el < 3000);
    CHECK(strstr(adbc_last_error(), "300 ms") != NULL);
    /* the session was abandoned; the next call uses a new one */
    d.hook = NULL;
    usleep(50000);
    pthread_mutex_lock(&d.mu);
    pthread_mutex_unlock(&d.mu);
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/f", TMO), 0);
    CHECK_EQ_INT(st.size, 1);
    adbc_sync_close(s);
    fd_stop(&d, c);
}

TEST(local_disk_full_removes_the_temporary)
{
    test_tmp_make("sync-test");
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    adbc_conn *c;
    CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
    uint8_t *data = pattern(300000, 5);
    fd_put(&d, "/data/big", S_IFREG | 0644, data, 300000, 1);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    /* A file-size limit makes writes past 100 kB fail (EFBIG), as a full
     * disk would (ENOSPC). */
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 100000;
    signal(SIGXFSZ, SIG_IGN);
    CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = adbc_sync_pull(NULL, s, "/data/big", test_tmp_path("big"), NULL, TMO);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK_EQ_INT(rc, ADBC_EIO);
    CHECK(strstr(adbc_last_error(), "cannot write") != NULL);
    CHECK(strstr(adbc_last_error(), test_tmp_path("big")) != NULL);
    CHECK_EQ_INT(count_entries(test_tmp()), 0);
    /* and the handle still works */
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/big", test_tmp_path("big"), NULL, TMO), 0);
    free(data);
    adbc_sync_close(s);
    fd_stop(&d, c);
    test_rm_rf(test_tmp());
}

/* The connection is cut after exactly `cut` bytes of sync replies (the
 * STA2 reply, then the RECV stream). */
static int pull_cut_at(long cut, const uint8_t *data, size_t len, char *msg, size_t msglen)
{
    static fdev d; /* outlives a failed CHECK with its thread */
    memset(&d, 0, sizeof d);
    d.cut = 1;
    d.cut_at = cut;
    adbc_conn *c;
    if (fd_start(&d, NULL, &c) != 0)
        return -100;
    fd_put(&d, "/data/f", S_IFREG | 0644, data, len, 1);
    adbc_sync *s;
    int rc = adbc_sync_open(&s, c, TMO);
    if (rc == 0) {
        rc = adbc_sync_pull(NULL, s, "/data/f", test_tmp_path("f"), NULL, TMO);
        snprintf(msg, msglen, "%s", adbc_last_error());
        adbc_sync_close(s);
    }
    fd_stop(&d, c);
    return rc;
}

TEST(connection_cut_at_many_offsets_during_pull)
{
    test_tmp_make("sync-test");
    const size_t len = 3 * 65536 + 1000;
    uint8_t *data = pattern(len, 77);
    /* replies: STA2 (72), 4 chunks with headers, DONE (8) */
    const long stat_len = 72;
    const long total = stat_len + (long)(len + 4 * 8 + 8);
    long offsets[400];
    int n = 0;
    for (long k = 0; k < 8; k++)
        offsets[n++] = k * 9; /* inside and around the STA2 reply */
    for (int ch = 0; ch <= 4; ch++) {
        long base = stat_len + ch * (65536 + 8);
        for (long dlt = -2; dlt <= 9; dlt++) /* around each chunk header */
            if (base + dlt > 0 && base + dlt < total)
                offsets[n++] = base + dlt;
    }
    for (long o = 100; o < total - 8; o += 2711)
        offsets[n++] = o;
    offsets[n++] = total - 8; /* all data, no DONE */
    offsets[n++] = total - 1; /* DONE's last byte missing */
    int tested = 0;
    for (int i = 0; i < n; i++) {
        char msg[1024] = "";
        int rc = pull_cut_at(offsets[i], data, len, msg, sizeof msg);
        if (rc >= 0 || count_entries(test_tmp()) != 0 || !strstr(msg, "connection to the device was lost"))
            fprintf(stderr, "  cut at %ld: rc %d, %d entries, \"%s\"\n", offsets[i], rc,
                    count_entries(test_tmp()), msg);
        CHECK(rc < 0);
        CHECK(rc != -100);
        CHECK_EQ_INT(count_entries(test_tmp()), 0);
        CHECK(strstr(msg, "connection to the device was lost") != NULL);
        /* cut during the RECV: the message says how far it got and that
         * nothing was written */
        if (offsets[i] > stat_len)
            CHECK(strstr(msg, "nothing was written to") != NULL);
        if (i == n / 2)
            printf("  sample (cut at %ld): %s\n", offsets[i], msg);
        tested++;
    }
    CHECK(tested > 60);
    /* with every byte delivered, the pull completes */
    char msg[1024];
    CHECK_EQ_INT(pull_cut_at(total, data, len, msg, sizeof msg), 0);
    size_t got_n;
    uint8_t *got = test_read_file(test_tmp_path("f"), &got_n);
    CHECK(got && got_n == len && memcmp(got, data, len) == 0);
    free(got);
    free(data);
    test_rm_rf(test_tmp());
}


/* Every allocation of a tree push and a tree pull made to fail in turn (the
 * device's engine shares the counter, so some runs lose the connection
 * instead): never a crash or a leak (under ASan), always a clean error or a
 * complete result, and never a partial file under a target name. */
TEST(allocation_failures)
{
    test_tmp_make("sync-test");
    mkdir(test_tmp_path("src"), 0755);
    mkdir(test_tmp_path("src/d"), 0755);
    CHECK_EQ_INT(write_file(test_tmp_path("src/a"), "aaaa", 4, 0644, 1), 0);
    uint8_t *data = pattern(150000, 11);
    CHECK_EQ_INT(write_file(test_tmp_path("src/d/b"), data, 150000, 0644, 2), 0);
    int failures = 0, successes = 0;
    for (long k = 1; k <= 120; k++) {
        static fdev d;
        memset(&d, 0, sizeof d);
        adbc_conn *c;
        CHECK_EQ_INT(fd_start(&d, NULL, &c), 0);
        fd_put(&d, "/data/t/x", S_IFREG | 0644, data, 150000, 3);
        fd_put(&d, "/data/t/sub/y", S_IFREG | 0644, "y", 1, 4);
        adbc_sync *s;
        CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
        core_test_fail_alloc_at(k);
        /* short timeouts: a lost packet (the device engine failed) stalls */
        int rc1 = adbc_sync_push(NULL, s, test_tmp_path("src"), "/data/p", NULL, 700);
        int rc2 = adbc_sync_pull(NULL, s, "/data/t", test_tmp_path("out"), NULL, 700);
        core_test_fail_alloc_at(0);
        if ((rc1 == ADBC_ETIMEDOUT || rc2 == ADBC_ETIMEDOUT) && getenv("SYNC_TEST_VERBOSE"))
            fprintf(stderr, "  alloc %ld: %d %d %s\n", k, rc1, rc2, adbc_last_error());
        if (rc1 < 0 || rc2 < 0) {
            failures++;
            CHECK(adbc_last_error()[0] != '\0');
        } else {
            successes++;
        }
        /* whatever was pulled is complete */
        size_t n;
        uint8_t *got = test_read_file(test_tmp_path("out/x"), &n);
        if (got)
            CHECK(n == 150000 && memcmp(got, data, n) == 0);
        free(got);
        adbc_sync_close(s);
        fd_stop(&d, c);
        test_rm_rf(test_tmp_path("out"));
    }
    CHECK(failures > 10);
    CHECK(successes > 0); /* past the last allocation both succeed */
    free(data);
    test_rm_rf(test_tmp());
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(stat_and_lstat_v2);
    RUN(stat_v1_emulation);
    RUN(list_v1_and_v2);
    RUN(push_bytes_on_the_wire);
    RUN(push_fail_names_path_and_device_message);
    RUN(push_tree_is_pipelined);
    RUN(links_as_contents_where_the_device_has_none);
    RUN(push_tree_without_fixed_push_mkdir);
    RUN(pull_file_atomic_with_attrs);
    RUN(last_report_counts_the_file_and_success_leaves_no_error);
    RUN(pull_reservation_follows_the_bytes_received);
    RUN(pull_tree_follows_links_and_stops_loops);
    RUN(pull_tree_is_pipelined);
    RUN(malformed_recv_replies_leave_no_file);
    RUN(hostile_entry_name_cannot_escape_a_tree_pull);
    RUN(timeout_then_recovery);
    RUN(local_disk_full_removes_the_temporary);
    RUN(connection_cut_at_many_offsets_during_pull);
    RUN(allocation_failures);
    return T_DONE();
}
