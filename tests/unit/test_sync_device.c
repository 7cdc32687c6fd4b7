/* SPDX-License-Identifier: Apache-2.0 */
/* The sync client against the test device (adbc-testdevice, a separate
 * process serving sync: over a sandbox directory): byte-exact round trips at
 * the chunk boundaries, adbd's mode and mtime handling, trees with links and
 * empty directories, errors with the device's words, the sandbox holding
 * against ".." and symlinks, the stream calls (adbc_sync_push_stream and
 * adbc_sync_pull_stream: contents from and to the caller), and the v1
 * protocol when the device lacks the v2 features. */
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "adbc/adbc.h"
#include "adbc/sync.h"

#define TMO 10000

static char tmp[256];

typedef struct tdev {
    pid_t pid;
    char addr[64];
    char sandbox[300];
} tdev;

static int td_start(tdev *d, const char *name, const char *features)
{
    const char *bd = getenv("ADBC_BUILD_DIR");
    char bin[512];
    snprintf(bin, sizeof bin, "%s/fixtures/adbc-testdevice", bd ? bd : ".");
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "  %s not built (set ADBC_BUILD_DIR)\n", bin);
        return -1;
    }
    snprintf(d->sandbox, sizeof d->sandbox, "%s/%s", tmp, name);
    int p[2];
    if (pipe(p) != 0)
        return -1;
    d->pid = fork();
    if (d->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        char *argv[12];
        int n = 0;
        argv[n++] = bin;
        argv[n++] = "--no-auth";
        argv[n++] = "--port";
        argv[n++] = "0";
        argv[n++] = "--sandbox";
        argv[n++] = d->sandbox;
        if (features) {
            argv[n++] = "--features";
            argv[n++] = (char *)features;
        }
        argv[n] = NULL;
        execv(bin, argv);
        _exit(127);
    }
    close(p[1]);
    char line[256];
    size_t len = 0;
    /* "listening on 127.0.0.1:PORT\n" */
    while (len < sizeof line - 1) {
        ssize_t r = read(p[0], line + len, 1);
        if (r <= 0)
            break;
        if (line[len++] == '\n')
            break;
    }
    close(p[0]);
    line[len] = '\0';
    const char *on = strstr(line, "listening on ");
    if (!on)
        return -1;
    snprintf(d->addr, sizeof d->addr, "%.*s", (int)strcspn(on + 13, "\n"), on + 13);
    return 0;
}

static void td_stop(tdev *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, NULL, 0);
    }
}

static int connect_to(tdev *d, adbc_conn **c)
{
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    static adbc_keyring *ring;
    if (!ring && adbc_keyring_new(&ring) < 0)
        return -1;
    o.keys = ring; /* --no-auth */
    return adbc_connect(c, d->addr, &o);
}

static char *P(const char *fmt, const char *a)
{
    static char b[8][600];
    static int k;
    char *p = b[k++ % 8];
    snprintf(p, 600, fmt, a);
    return p;
}

static int write_file(const char *path, const void *data, size_t n, mode_t mode, time_t mtime)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, (const char *)data + off, n - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    close(fd);
    chmod(path, mode);
    struct utimbuf ut = {mtime, mtime};
    return utime(path, &ut);
}

static int same_file(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *b = malloc(n + 1);
    size_t got = fread(b, 1, n + 1, f);
    fclose(f);
    int ok = got == n && (n == 0 || memcmp(b, data, n) == 0);
    free(b);
    return ok;
}

static uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (uint8_t)(seed >> 24);
    }
    return b;
}

static tdev dev; /* the v2 device shared by most tests */

TEST(features_advertised)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    CHECK(adbc_conn_has_feature(c, "stat_v2"));
    CHECK(adbc_conn_has_feature(c, "ls_v2"));
    CHECK(adbc_conn_has_feature(c, "fixed_push_mkdir"));
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_has_stat_v2(s), 1);
    CHECK_EQ_INT(adbc_sync_has_ls_v2(s), 1);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(round_trips_at_chunk_boundaries)
{
    static const size_t sizes[] = {0,      1,      65535,  65536,   65537,
                                   131072, 655360, 999999, 3145735};
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint8_t *data = pattern(n, (unsigned)k + 1);
        char name[64], remote[128];
        snprintf(name, sizeof name, "s%zu", n);
        snprintf(remote, sizeof remote, "/data/local/tmp/%s", name);
        CHECK_EQ_INT(write_file(P("%s/src", tmp), data, n, 0644, 1000000), 0);
        adbc_sync_result r;
        CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/src", tmp), remote, NULL, TMO), 0);
        CHECK_EQ_INT(r.bytes, n);
        char host[700];
        snprintf(host, sizeof host, "%s/data/local/tmp/%s", dev.sandbox, name);
        CHECK(same_file(host, data, n));
        adbc_sync_statbuf st;
        CHECK_EQ_INT(adbc_sync_stat(&st, s, remote, TMO), 0);
        CHECK_EQ_INT(st.size, n);
        CHECK(S_ISREG(st.mode));
        CHECK_EQ_INT(adbc_sync_pull(&r, s, remote, P("%s/back", tmp), NULL, TMO), 0);
        CHECK_EQ_INT(r.bytes, n);
        CHECK(same_file(P("%s/back", tmp), data, n));
        free(data);
    }
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(modes_and_mtimes_as_adbd_sets_them)
{
    /* adbd copies the owner's permission bits to group and other */
    static const struct {
        mode_t local, device;
    } m[] = {{0755, 0777}, {0644, 0666}, {0600, 0666}, {0700, 0777}, {0640, 0666}, {0444, 0444}};
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        CHECK_EQ_INT(write_file(P("%s/m", tmp), "mode", 4, m[i].local, 1234567890 + (time_t)i),
                     0);
        CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/m", tmp), "/data/local/tmp/m", NULL, TMO), 0);
        struct stat st;
        CHECK_EQ_INT(stat(P("%s/data/local/tmp/m", dev.sandbox), &st), 0);
        CHECK_EQ_INT(st.st_mode & 07777, m[i].device);
        CHECK_EQ_INT(st.st_mtime, 1234567890 + (time_t)i);
        adbc_sync_statbuf sb;
        CHECK_EQ_INT(adbc_sync_stat(&sb, s, "/data/local/tmp/m", TMO), 0);
        CHECK_EQ_INT(sb.mode & 07777, m[i].device);
        CHECK_EQ_INT(sb.mtime, 1234567890 + (time_t)i);
        /* pulled back with attributes: the device's mode through our umask */
        CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/local/tmp/m", P("%s/mb", tmp), NULL, TMO),
                     0);
        CHECK_EQ_INT(stat(P("%s/mb", tmp), &st), 0);
        mode_t um = umask(022);
        umask(um);
        CHECK_EQ_INT(st.st_mode & 0777, m[i].device & ~um);
        CHECK_EQ_INT(st.st_mtime, 1234567890 + (time_t)i);
        unlink(P("%s/mb", tmp));
    }
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(tree_push_and_pull)
{
    char t[300];
    snprintf(t, sizeof t, "%s/tree", tmp);
    mkdir(t, 0755);
    mkdir(P("%s/tree/a", tmp), 0755);
    mkdir(P("%s/tree/a/b", tmp), 0755);
    mkdir(P("%s/tree/empty", tmp), 0755);
    CHECK_EQ_INT(write_file(P("%s/tree/top", tmp), "top", 3, 0644, 111), 0);
    CHECK_EQ_INT(write_file(P("%s/tree/a/b/deep", tmp), "deep!", 5, 0755, 222), 0);
    uint8_t *big = pattern(200000, 42);
    CHECK_EQ_INT(write_file(P("%s/tree/a/big", tmp), big, 200000, 0644, 333), 0);
    CHECK_EQ_INT(symlink("b/deep", P("%s/tree/a/link", tmp)), 0);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_result r;
    CHECK_EQ_INT(adbc_sync_push(&r, s, t, "/sdcard/tree", NULL, TMO), 0);
    CHECK_EQ_INT(r.files, 4);
    CHECK_EQ_INT(r.bytes, 3 + 5 + 200000 + 7); /* and the link's "b/deep" with its NUL */
    CHECK(same_file(P("%s/sdcard/tree/a/b/deep", dev.sandbox), (const uint8_t *)"deep!", 5));
    CHECK(same_file(P("%s/sdcard/tree/a/big", dev.sandbox), big, 200000));
    char target[64] = "";
    CHECK(readlink(P("%s/sdcard/tree/a/link", dev.sandbox), target, sizeof target - 1) > 0);
    CHECK_STR(target, "b/deep");
    struct stat st;
    CHECK_EQ_INT(lstat(P("%s/sdcard/tree/a/link", dev.sandbox), &st), 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK_EQ_INT(st.st_mtime, lstat(P("%s/tree/a/link", tmp), &st) == 0 ? st.st_mtime : -1);
    /* the empty directory is made too */
    CHECK_EQ_INT(stat(P("%s/sdcard/tree/empty", dev.sandbox), &st), 0);
    CHECK(S_ISDIR(st.st_mode));

    /* and back: the link comes as a copy of its target */
    CHECK_EQ_INT(adbc_sync_pull(&r, s, "/sdcard/tree", P("%s/tree2", tmp), NULL, TMO), 0);
    CHECK_EQ_INT(r.files, 4);
    CHECK(same_file(P("%s/tree2/a/link", tmp), (const uint8_t *)"deep!", 5));
    CHECK(same_file(P("%s/tree2/a/big", tmp), big, 200000));
    CHECK(same_file(P("%s/tree2/top", tmp), (const uint8_t *)"top", 3));
    CHECK_EQ_INT(stat(P("%s/tree2/a/b/deep", tmp), &st), 0);
    CHECK_EQ_INT(st.st_mtime, 222);
    CHECK_EQ_INT(stat(P("%s/tree2/empty", tmp), &st), 0);
    CHECK(S_ISDIR(st.st_mode));
    free(big);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

typedef struct listed {
    int n, done;
    char dst[8][128];
} listed;

static int on_listed(void *u, const adbc_sync_progress *p)
{
    listed *l = u;
    if (p->file_done && p->file_bytes == 0 && l->n < 8)
        snprintf(l->dst[l->n++], sizeof l->dst[0], "%s", p->dst);
    l->done += p->file_done;
    return 0;
}

/* ADBC_SYNC_LIST_ONLY reports what would go and sends nothing;
 * ADBC_SYNC_DIR_ORDER walks a directory's files before its subdirectories
 * (adb's order), without it names go in order. */
TEST(list_only_and_adb_order)
{
    mkdir(P("%s/lo", tmp), 0755);
    mkdir(P("%s/lo/a", tmp), 0755);
    CHECK_EQ_INT(write_file(P("%s/lo/a/f", tmp), "f", 1, 0644, 1000), 0);
    CHECK_EQ_INT(write_file(P("%s/lo/m", tmp), "m", 1, 0644, 1000), 0);
    CHECK_EQ_INT(write_file(P("%s/lo/z1", tmp), "z1", 2, 0644, 1000), 0);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    listed l = {0};
    o.progress = on_listed;
    o.user = &l;
    o.flags = ADBC_SYNC_LIST_ONLY | ADBC_SYNC_SKIP_SAME;
    adbc_sync_result r;
    CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/lo", tmp), "/sdcard/lo", &o, TMO), 0);
    CHECK_EQ_INT(l.n, 3);
    CHECK_STR(l.dst[0], "/sdcard/lo/a/f"); /* by name: a/ first */
    CHECK_EQ_INT(r.files, 0);
    CHECK_EQ_INT(r.skipped, 0);
    CHECK_EQ_INT(r.bytes, 0);
    struct stat st;
    CHECK(stat(P("%s/sdcard/lo", dev.sandbox), &st) != 0); /* nothing made */

    memset(&l, 0, sizeof l);
    o.flags |= ADBC_SYNC_DIR_ORDER;
    CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/lo", tmp), "/sdcard/lo", &o, TMO), 0);
    CHECK_EQ_INT(l.n, 3);
    CHECK_STR(l.dst[2], "/sdcard/lo/a/f"); /* adb's: the files of lo/, then a/ */

    /* pushed, then nothing would go; a file with a new mtime would */
    o.flags = ADBC_SYNC_DIR_ORDER;
    o.progress = NULL;
    CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/lo", tmp), "/sdcard/lo", &o, TMO), 0);
    CHECK_EQ_INT(r.files, 3);
    CHECK(same_file(P("%s/sdcard/lo/a/f", dev.sandbox), (const uint8_t *)"f", 1));
    memset(&l, 0, sizeof l);
    o.progress = on_listed;
    o.flags = ADBC_SYNC_LIST_ONLY | ADBC_SYNC_SKIP_SAME | ADBC_SYNC_DIR_ORDER;
    CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/lo", tmp), "/sdcard/lo", &o, TMO), 0);
    CHECK_EQ_INT(l.n, 0);
    CHECK_EQ_INT(r.skipped, 3);
    CHECK_EQ_INT(write_file(P("%s/lo/m", tmp), "m", 1, 0644, 2000), 0);
    CHECK_EQ_INT(adbc_sync_push(&r, s, P("%s/lo", tmp), "/sdcard/lo", &o, TMO), 0);
    CHECK_EQ_INT(l.n, 1);
    CHECK_STR(l.dst[0], "/sdcard/lo/m");
    CHECK_EQ_INT(r.skipped, 2);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

typedef struct seen {
    int data, sdcard, pushed;
} seen;

static int look(void *u, const adbc_sync_dirent *e)
{
    seen *s = u;
    s->data |= strcmp(e->name, "data") == 0;
    s->sdcard |= strcmp(e->name, "sdcard") == 0;
    s->pushed |= strcmp(e->name, "s65536") == 0 && e->st.size == 65536 && e->st.v2;
    return 0;
}

TEST(list_and_errors)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    seen w = {0};
    CHECK_EQ_INT(adbc_sync_list(s, "/", look, &w, TMO), 0);
    CHECK(w.data && w.sdcard);
    CHECK_EQ_INT(adbc_sync_list(s, "/data/local/tmp", look, &w, TMO), 0);
    CHECK(w.pushed);
    CHECK_EQ_INT(adbc_sync_list(s, "/data/nothing", look, &w, TMO), ADBC_ENOTFOUND);

    CHECK_EQ_INT(write_file(P("%s/e", tmp), "e", 1, 0644, 1), 0);
    CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/e", tmp), "/system/e", NULL, TMO), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "Read-only file system") != NULL);
    CHECK(strstr(adbc_last_error(), "/system/e") != NULL);
    /* a directory in the way: adbd's own words */
    CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/e", tmp), "/data/local", NULL, TMO), ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "Is a directory") != NULL);
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/none", P("%s/none", tmp), NULL, TMO),
                 ADBC_ENOTFOUND);
    CHECK_EQ_INT(access(P("%s/none", tmp), F_OK), -1);
    /* parents are made on the device (fixed_push_mkdir) */
    CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/e", tmp), "/sdcard/new/deeper/e", NULL, TMO), 0);
    CHECK(same_file(P("%s/sdcard/new/deeper/e", dev.sandbox), (const uint8_t *)"e", 1));
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(sandbox_holds)
{
    /* links planted in the sandbox that point at the host's files */
    CHECK_EQ_INT(symlink("/etc/passwd", P("%s/data/local/tmp/abs", dev.sandbox)), 0);
    CHECK_EQ_INT(symlink("../../../../../../../../etc/passwd",
                         P("%s/data/local/tmp/rel", dev.sandbox)),
                 0);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    adbc_sync_statbuf st;
    static const char *const paths[] = {"/data/local/tmp/abs", "/data/local/tmp/rel",
                                        "/data/../../../../etc/passwd", "/etc/passwd",
                                        "/sdcard/../../etc/passwd"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        CHECK_EQ_INT(adbc_sync_stat(&st, s, paths[i], TMO), ADBC_ENOTFOUND);
        CHECK(adbc_sync_pull(NULL, s, paths[i], P("%s/leak", tmp), NULL, TMO) < 0);
        CHECK_EQ_INT(access(P("%s/leak", tmp), F_OK), -1);
    }
    /* writing through a link cannot leave the sandbox either */
    CHECK_EQ_INT(symlink("/tmp", P("%s/data/local/tmp/out", dev.sandbox)), 0);
    CHECK_EQ_INT(write_file(P("%s/w", tmp), "w", 1, 0644, 1), 0);
    char name[64];
    snprintf(name, sizeof name, "adbc-sync-escape-%d", (int)getpid());
    char remote[128];
    snprintf(remote, sizeof remote, "/data/local/tmp/out/%s", name);
    adbc_sync_push(NULL, s, P("%s/w", tmp), remote, NULL, TMO);
    CHECK_EQ_INT(access(P("/tmp/%s", name), F_OK), -1);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

/* ---- streams: adbc_sync_push_stream / adbc_sync_pull_stream ---- */

/* A source over a buffer that hands out bytes in a cycle of uneven sizes,
 * sets the mtime at the end, or fails after fail_at bytes. */
typedef struct src {
    const uint8_t *data;
    size_t len, off;
    const size_t *steps;
    size_t nsteps, step;
    uint32_t end_mtime;      /* nonzero: set at the end */
    uint32_t start_mtime;    /* what *mtime must hold until then */
    int mtime_wrong;         /* *mtime differed from start_mtime before the end */
    size_t fail_at;          /* nonzero: fail once this many bytes went */
    int fail_code;
    int calls, after_end;    /* calls; calls after it returned 0 */
    int ended;
    size_t too_many;         /* nonzero: return this many more than asked, once */
} src;

static ssize_t src_read(void *u, void *buf, size_t cap, uint32_t *mtime)
{
    src *r = u;
    r->calls++;
    if (r->ended)
        r->after_end++;
    if (*mtime != r->start_mtime)
        r->mtime_wrong = 1;
    if (r->too_many)
        return (ssize_t)(cap + r->too_many);
    if (r->fail_at && r->off >= r->fail_at)
        return r->fail_code;
    if (r->off == r->len) {
        r->ended = 1;
        if (r->end_mtime)
            *mtime = r->end_mtime;
        return 0;
    }
    size_t n = r->nsteps ? r->steps[r->step++ % r->nsteps] : cap;
    if (n > cap)
        n = cap;
    if (n > r->len - r->off)
        n = r->len - r->off;
    memcpy(buf, r->data + r->off, n);
    r->off += n;
    return (ssize_t)n;
}

/* A sink into memory that fails on call fail_call (1-based) with fail_code;
 * calls after that failure are counted. */
typedef struct sink {
    uint8_t *buf;
    size_t len, cap;
    int calls, fail_call, fail_code, after_fail, failed;
    size_t max_piece;
} sink;

static int sink_write(void *u, const void *p, size_t n)
{
    sink *k = u;
    k->calls++;
    if (k->failed) {
        k->after_fail++;
        return k->fail_code;
    }
    if (k->fail_call && k->calls == k->fail_call) {
        k->failed = 1;
        return k->fail_code;
    }
    if (n > k->max_piece)
        k->max_piece = n;
    if (k->len + n > k->cap) {
        k->cap = (k->len + n) * 2;
        k->buf = realloc(k->buf, k->cap);
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
    return 0;
}

/* Whether the sandbox path is gone within 10 s (the device removes a partial
 * file once it sees the session end, in its own process). */
static int gone_soon(const char *path)
{
    for (int i = 0; i < 1000; i++) {
        if (access(path, F_OK) != 0)
            return 1;
        usleep(10000);
    }
    return 0;
}

TEST(stream_push_in_uneven_reads_and_pull_back)
{
    static const size_t steps[] = {1, 7, 65536, 65537, 3, 4096, 131073, 65535, 100000};
    const size_t n = 3 * 1024 * 1024 + 12345;
    uint8_t *data = pattern(n, 99);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    src r = {.data = data, .len = n, .steps = steps, .nsteps = 9, .end_mtime = 1234567,
             .start_mtime = 1000};
    adbc_sync_result res;
    CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r, "/data/local/tmp/stream1",
                                       S_IFREG | 0640, 1000, NULL, TMO),
                 0);
    CHECK_EQ_INT(res.files, 1);
    CHECK_EQ_INT(res.bytes, n);
    CHECK_EQ_INT(res.wire_bytes, n); /* loopback: no compression by default */
    CHECK_EQ_INT(r.after_end, 0);
    CHECK_EQ_INT(r.mtime_wrong, 0);
    CHECK(same_file(P("%s/data/local/tmp/stream1", dev.sandbox), data, n));
    struct stat hst;
    CHECK_EQ_INT(stat(P("%s/data/local/tmp/stream1", dev.sandbox), &hst), 0);
    CHECK_EQ_INT(hst.st_mode & 07777, 0666); /* adbd widens the owner's bits */
    adbc_sync_statbuf st;
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/stream1", TMO), 0);
    CHECK_EQ_INT(st.mtime, 1234567);
    CHECK_EQ_INT(st.size, n);

    /* the mtime argument stands when the source does not set one */
    src r2 = {.data = data, .len = 100, .start_mtime = 4444};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r2, "/data/local/tmp/stream2",
                                       S_IFREG | 0600, 4444, NULL, TMO),
                 0);
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/stream2", TMO), 0);
    CHECK_EQ_INT(st.mtime, 4444);
    CHECK(same_file(P("%s/data/local/tmp/stream2", dev.sandbox), data, 100));

    /* and back through a sink, with the stat the pull found */
    sink k = {0};
    adbc_sync_statbuf pst;
    CHECK_EQ_INT(adbc_sync_pull_stream(&res, &pst, s, "/data/local/tmp/stream1", sink_write, &k,
                                       NULL, TMO),
                 0);
    CHECK_EQ_INT(k.len, n);
    CHECK(memcmp(k.buf, data, n) == 0);
    CHECK(k.max_piece <= ADBC_SYNC_DATA_MAX);
    CHECK_EQ_INT(res.files, 1);
    CHECK_EQ_INT(res.bytes, n);
    CHECK_EQ_INT(pst.size, n);
    CHECK_EQ_INT(pst.mtime, 1234567);
    CHECK(S_ISREG(pst.mode));
    /* an empty file: no call at all, and a success */
    CHECK_EQ_INT(write_file(P("%s/data/local/tmp/empty", dev.sandbox), "", 0, 0644, 5), 0);
    sink e = {0};
    CHECK_EQ_INT(adbc_sync_pull_stream(&res, NULL, s, "/data/local/tmp/empty", sink_write, &e,
                                       NULL, TMO),
                 0);
    CHECK_EQ_INT(e.calls, 0);
    CHECK_EQ_INT(res.files, 1);
    free(k.buf);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_push_of_a_link)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    /* as adb sends it: the target and a NUL, here one byte at a time */
    static const size_t one[] = {1};
    static const char t1[] = "stream1";
    src r = {.data = (const uint8_t *)t1, .len = sizeof t1, .steps = one, .nsteps = 1};
    adbc_sync_result res;
    CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r, "/data/local/tmp/slink",
                                       S_IFLNK | 0777, 0, NULL, TMO),
                 0);
    CHECK_EQ_INT(res.bytes, sizeof t1);
    char target[64] = "";
    CHECK(readlink(P("%s/data/local/tmp/slink", dev.sandbox), target, sizeof target - 1) > 0);
    CHECK_STR(target, "stream1");
    struct stat hst;
    CHECK_EQ_INT(lstat(P("%s/data/local/tmp/slink", dev.sandbox), &hst), 0);
    CHECK(S_ISLNK(hst.st_mode));
    /* without the NUL it is added */
    src r2 = {.data = (const uint8_t *)"stream2", .len = 7};
    CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r2, "/data/local/tmp/slink",
                                       S_IFLNK | 0777, 0, NULL, TMO),
                 0);
    memset(target, 0, sizeof target);
    CHECK(readlink(P("%s/data/local/tmp/slink", dev.sandbox), target, sizeof target - 1) > 0);
    CHECK_STR(target, "stream2");
    CHECK_EQ_INT(res.bytes, 8);
    /* a target longer than one DATA chunk, and an empty one: refused */
    uint8_t *big = pattern(ADBC_SYNC_DATA_MAX + 10, 3);
    src r3 = {.data = big, .len = ADBC_SYNC_DATA_MAX + 10};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r3, "/data/local/tmp/slink2",
                                       S_IFLNK | 0777, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "too long") != NULL);
    src r4 = {.data = (const uint8_t *)"", .len = 0};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r4, "/data/local/tmp/slink2",
                                       S_IFLNK | 0777, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "empty") != NULL);
    CHECK(access(P("%s/data/local/tmp/slink2", dev.sandbox), F_OK) != 0);
    free(big);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_push_dry_run)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    uint8_t *data = pattern(300000, 5);
    src r = {.data = data, .len = 300000};
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.flags = ADBC_SYNC_DRY_RUN;
    adbc_sync_result res;
    CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r, "/data/local/tmp/dry", S_IFREG | 0644,
                                       1, &o, TMO),
                 0);
    CHECK_EQ_INT(res.bytes, 300000);
    CHECK_EQ_INT(r.off, 300000); /* everything was read and sent */
    CHECK(access(P("%s/data/local/tmp/dry", dev.sandbox), F_OK) != 0);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_compressed_both_ways)
{
    static const adbc_sync_compression algs[] = {ADBC_SYNC_COMPRESS_ZSTD, ADBC_SYNC_COMPRESS_LZ4,
                                                 ADBC_SYNC_COMPRESS_BROTLI};
    static const size_t steps[] = {65537, 1, 7, 300000};
    /* compressible: a pattern with long runs */
    const size_t n = 2 * 1024 * 1024 + 77;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)((i / 97) % 13 + 'a');
    uint8_t *noise = pattern(n, 21);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    int tried = 0;
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        if (!adbc_sync_has_compression(s, algs[a])) {
            fprintf(stderr, "  (%s: not in this build)\n", adbc_sync_compression_name(algs[a]));
            continue;
        }
        tried++;
        adbc_sync_opts o;
        adbc_sync_opts_init(&o);
        o.compression = algs[a];
        src r = {.data = data, .len = n, .steps = steps, .nsteps = 4, .end_mtime = 777,
                 .start_mtime = 1};
        adbc_sync_result res;
        CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r, "/data/local/tmp/zs",
                                           S_IFREG | 0644, 1, &o, TMO),
                     0);
        CHECK_EQ_INT(res.compression, algs[a]);
        CHECK_EQ_INT(res.bytes, n);
        CHECK(res.wire_bytes > 0 && res.wire_bytes < n / 4);
        CHECK(same_file(P("%s/data/local/tmp/zs", dev.sandbox), data, n));
        adbc_sync_statbuf st;
        CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/zs", TMO), 0);
        CHECK_EQ_INT(st.mtime, 777);
        sink k = {0};
        CHECK_EQ_INT(adbc_sync_pull_stream(&res, NULL, s, "/data/local/tmp/zs", sink_write, &k,
                                           &o, TMO),
                     0);
        CHECK_EQ_INT(res.compression, algs[a]);
        CHECK(res.wire_bytes > 0 && res.wire_bytes < n / 4);
        CHECK_EQ_INT(k.len, n);
        CHECK(memcmp(k.buf, data, n) == 0);
        /* as a local file: under one chunk it goes plain, from one chunk on
         * compressed (the stream's first chunk is read before the request) */
        static const size_t small[] = {1, 1000, 65535, 65536};
        for (size_t m = 0; m < sizeof small / sizeof small[0]; m++) {
            src q = {.data = data, .len = small[m], .steps = steps + 1, .nsteps = 3};
            CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &q, "/data/local/tmp/zsmall",
                                               S_IFREG | 0644, 1, &o, TMO),
                         0);
            CHECK_EQ_INT(res.bytes, small[m]);
            if (small[m] < ADBC_SYNC_DATA_MAX)
                CHECK_EQ_INT(res.wire_bytes, small[m]);
            else
                CHECK(res.wire_bytes < small[m] / 4);
            CHECK(same_file(P("%s/data/local/tmp/zsmall", dev.sandbox), data, small[m]));
        }
        /* a sink that fails in a compressed pull: its code, and no call after */
        sink f = {.fail_call = 2, .fail_code = ADBC_EBUSY};
        CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "/data/local/tmp/zs", sink_write, &f,
                                           &o, TMO),
                     ADBC_EBUSY);
        CHECK_EQ_INT(f.after_fail, 0);
        free(f.buf);
        /* a source that fails in a compressed push: its code, and no file
         * (random bytes, so that batches reach the device before it fails:
         * it replaced the older copy, then dropped the partial one) */
        CHECK_EQ_INT(write_file(P("%s/data/local/tmp/zsf", dev.sandbox), "old", 3, 0644, 9), 0);
        src e = {.data = noise, .len = n, .fail_at = 1024 * 1024, .fail_code = ADBC_EPERM};
        CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &e, "/data/local/tmp/zsf",
                                           S_IFREG | 0644, 1, &o, TMO),
                     ADBC_EPERM);
        CHECK(gone_soon(P("%s/data/local/tmp/zsf", dev.sandbox)));
        free(k.buf);
    }
    CHECK(tried > 0); /* scripts/build-options builds all three */
    free(noise);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_source_failing_mid_file)
{
    const size_t n = 4 * 1024 * 1024;
    uint8_t *data = pattern(n, 11);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    /* an older copy is there: adbd replaces it, so a failed push leaves none */
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &(src){.data = data, .len = 10},
                                       "/data/local/tmp/half", S_IFREG | 0644, 1, NULL, TMO),
                 0);
    CHECK(same_file(P("%s/data/local/tmp/half", dev.sandbox), data, 10));
    /* past 1 MiB: several batches are on the device when it fails */
    src r = {.data = data, .len = n, .fail_at = 1024 * 1024 + 5, .fail_code = ADBC_EPERM};
    adbc_sync_result res;
    CHECK_EQ_INT(adbc_sync_push_stream(&res, s, src_read, &r, "/data/local/tmp/half",
                                       S_IFREG | 0644, 1, NULL, TMO),
                 ADBC_EPERM);
    CHECK(strstr(adbc_last_error(), "read function") != NULL);
    CHECK(strstr(adbc_last_error(), "/data/local/tmp/half") != NULL);
    CHECK_EQ_INT(res.files, 0);
    CHECK(gone_soon(P("%s/data/local/tmp/half", dev.sandbox)));
    /* a source that returns more than it was given room for */
    src m = {.data = data, .len = n, .too_many = 1};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &m, "/data/local/tmp/half",
                                       S_IFREG | 0644, 1, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "returned") != NULL);
    /* the handle goes on with a new session */
    src ok = {.data = data, .len = 70000};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &ok, "/data/local/tmp/half",
                                       S_IFREG | 0644, 1, NULL, TMO),
                 0);
    CHECK(same_file(P("%s/data/local/tmp/half", dev.sandbox), data, 70000));
    /* the device's refusal, in its words, as adbc_sync_push gives it */
    src ro = {.data = data, .len = 10};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &ro, "/system/x", S_IFREG | 0644, 1,
                                       NULL, TMO),
                 ADBC_EREMOTE);
    CHECK(strstr(adbc_last_error(), "Read-only file system") != NULL);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_sink_failing_mid_pull)
{
    const size_t n = 3 * 1024 * 1024;
    uint8_t *data = pattern(n, 12);
    CHECK_EQ_INT(write_file(P("%s/data/local/tmp/big", dev.sandbox), data, n, 0644, 9), 0);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    sink k = {.fail_call = 5, .fail_code = ADBC_EBUSY};
    adbc_sync_result res;
    CHECK_EQ_INT(adbc_sync_pull_stream(&res, NULL, s, "/data/local/tmp/big", sink_write, &k, NULL,
                                       TMO),
                 ADBC_EBUSY);
    CHECK(strstr(adbc_last_error(), "write function") != NULL);
    CHECK_EQ_INT(k.calls, 5);
    CHECK_EQ_INT(k.after_fail, 0);
    CHECK_EQ_INT(res.files, 0);
    /* what came before the failure came in order */
    CHECK(k.len > 0 && memcmp(k.buf, data, k.len) == 0);
    /* a sink that returns a count instead of 0 is told so */
    sink bad = {.fail_call = 1, .fail_code = 1};
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "/data/local/tmp/big", sink_write, &bad,
                                       NULL, TMO),
                 ADBC_EINVAL);
    /* the handle goes on */
    sink all = {0};
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "/data/local/tmp/big", sink_write, &all,
                                       NULL, TMO),
                 0);
    CHECK_EQ_INT(all.len, n);
    CHECK(memcmp(all.buf, data, n) == 0);
    free(k.buf);
    free(all.buf);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_pull_of_what_is_not_a_file)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    sink k = {0};
    adbc_sync_statbuf st;
    /* missing: the error adbc_sync_pull gives */
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/local/tmp/none", P("%s/none", tmp), NULL, TMO),
                 ADBC_ENOTFOUND);
    char want[512];
    snprintf(want, sizeof want, "%s", adbc_last_error());
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, &st, s, "/data/local/tmp/none", sink_write, &k, NULL,
                                       TMO),
                 ADBC_ENOTFOUND);
    CHECK_STR(adbc_last_error(), want);
    CHECK_EQ_INT(k.calls, 0);
    CHECK_EQ_INT(st.mode, 0);
    /* a directory: refused before any byte, its stat given */
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, &st, s, "/data/local/tmp", sink_write, &k, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "directory") != NULL);
    CHECK_EQ_INT(k.calls, 0);
    CHECK(S_ISDIR(st.mode));
    /* a link to a file is followed */
    CHECK_EQ_INT(write_file(P("%s/data/local/tmp/lt", dev.sandbox), "linked", 6, 0644, 9), 0);
    CHECK_EQ_INT(symlink("lt", P("%s/data/local/tmp/ln", dev.sandbox)), 0);
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, &st, s, "/data/local/tmp/ln", sink_write, &k, NULL,
                                       TMO),
                 0);
    CHECK(k.len == 6 && memcmp(k.buf, "linked", 6) == 0);
    CHECK(S_ISREG(st.mode));
    free(k.buf);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(stream_arguments_checked)
{
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    src r = {.data = (const uint8_t *)"x", .len = 1};
    sink k = {0};
    const char *f = "/data/local/tmp/args";
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, NULL, src_read, &r, f, S_IFREG | 0644, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "need a handle") != NULL);
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, NULL, &r, f, S_IFREG | 0644, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, NULL, S_IFREG | 0644, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, "", S_IFREG | 0644, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, f, S_IFDIR | 0755, 0, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "S_IFREG") != NULL);
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, f, 0644, 0, NULL, TMO), ADBC_EINVAL);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.flags = ADBC_SYNC_FOLLOW_LINKS | ADBC_SYNC_SKIP_SAME | ADBC_SYNC_DRY_RUN;
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, f, S_IFREG | 0644, 0, &o, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "ADBC_SYNC_FOLLOW_LINKS, ADBC_SYNC_SKIP_SAME") != NULL);
    CHECK(strstr(adbc_last_error(), "DRY_RUN") == NULL);
    CHECK_EQ_INT(r.calls, 0);
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, NULL, f, sink_write, &k, NULL, TMO),
                 ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "need a handle") != NULL);
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, NULL, sink_write, &k, NULL, TMO),
                 ADBC_EINVAL);
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "", sink_write, &k, NULL, TMO), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, f, NULL, &k, NULL, TMO), ADBC_EINVAL);
    o.flags = ADBC_SYNC_NO_ATTRS;
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, f, sink_write, &k, &o, TMO), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "ADBC_SYNC_NO_ATTRS") != NULL);
    CHECK_EQ_INT(k.calls, 0);
    CHECK(access(P("%s/data/local/tmp/args", dev.sandbox), F_OK) != 0);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

typedef struct prog {
    int reports, last_files, done;
    uint64_t last_bytes, file_total;
    int src_empty;
} prog;

static int on_prog(void *u, const adbc_sync_progress *p)
{
    prog *g = u;
    g->reports++;
    g->last_files = (int)p->files;
    g->last_bytes = p->bytes;
    g->file_total = p->file_total;
    g->done += p->file_done;
    g->src_empty = p->src && !*p->src;
    return 0;
}

TEST(stream_progress)
{
    const size_t n = 1000000;
    uint8_t *data = pattern(n, 13);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&dev, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    prog g = {0};
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.progress = on_prog;
    o.user = &g;
    src r = {.data = data, .len = n};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, "/data/local/tmp/pg", S_IFREG | 0644,
                                       1, &o, TMO),
                 0);
    CHECK(g.reports >= 3); /* a batch of 256 KiB at a time, the file's last, the ack */
    CHECK_EQ_INT(g.last_files, 1); /* the last report counts the acknowledged file */
    CHECK_EQ_INT(g.last_bytes, n);
    CHECK_EQ_INT(g.file_total, 0); /* unknown */
    CHECK_EQ_INT(g.done, 1);
    CHECK_EQ_INT(g.src_empty, 1);
    prog h = {0};
    o.user = &h;
    sink k = {0};
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "/data/local/tmp/pg", sink_write, &k, &o,
                                       TMO),
                 0);
    /* one report at least as bytes arrive (how many depends on how they come
     * in), and the last */
    CHECK(h.reports >= 2);
    CHECK_EQ_INT(h.last_files, 1);
    CHECK_EQ_INT(h.last_bytes, n);
    CHECK_EQ_INT(h.file_total, n);
    CHECK_EQ_INT(h.done, 1);
    free(k.buf);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

TEST(v1_protocol_without_v2_features)
{
    tdev old = {0};
    CHECK_EQ_INT(td_start(&old, "old", "shell_v2"), 0);
    adbc_conn *c;
    CHECK_EQ_INT(connect_to(&old, &c), 0);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, TMO), 0);
    CHECK_EQ_INT(adbc_sync_has_stat_v2(s), 0);
    CHECK_EQ_INT(adbc_sync_has_ls_v2(s), 0);
    uint8_t *data = pattern(100000, 7);
    CHECK_EQ_INT(write_file(P("%s/v1", tmp), data, 100000, 0644, 4242), 0);
    CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/v1", tmp), "/data/local/tmp/v1", NULL, TMO), 0);
    adbc_sync_statbuf st;
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/v1", TMO), 0);
    CHECK_EQ_INT(st.size, 100000);
    CHECK_EQ_INT(st.mtime, 4242);
    CHECK_EQ_INT(st.v2, 0);
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/zzz", TMO), ADBC_ENOTFOUND);
    seen w = {0};
    CHECK_EQ_INT(adbc_sync_list(s, "/", look, &w, TMO), 0);
    CHECK(w.data && w.sdcard);
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/data/local/tmp/v1", P("%s/v1b", tmp), NULL, TMO), 0);
    CHECK(same_file(P("%s/v1b", tmp), data, 100000));
    /* a tree: without fixed_push_mkdir the directories are made first */
    mkdir(P("%s/t1", tmp), 0755);
    mkdir(P("%s/t1/x", tmp), 0755);
    CHECK_EQ_INT(write_file(P("%s/t1/x/f", tmp), "f", 1, 0644, 1), 0);
    CHECK_EQ_INT(adbc_sync_push(NULL, s, P("%s/t1", tmp), "/sdcard/t1", NULL, TMO), 0);
    CHECK(same_file(P("%s/sdcard/t1/x/f", old.sandbox), (const uint8_t *)"f", 1));
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/sdcard/t1", P("%s/t1b", tmp), NULL, TMO), 0);
    CHECK(same_file(P("%s/t1b/x/f", tmp), (const uint8_t *)"f", 1));
    /* streams over v1: SEND and RECV */
    src r = {.data = data, .len = 100000, .end_mtime = 5151};
    CHECK_EQ_INT(adbc_sync_push_stream(NULL, s, src_read, &r, "/data/local/tmp/v1s",
                                       S_IFREG | 0644, 0, NULL, TMO),
                 0);
    CHECK(same_file(P("%s/data/local/tmp/v1s", old.sandbox), data, 100000));
    CHECK_EQ_INT(adbc_sync_stat(&st, s, "/data/local/tmp/v1s", TMO), 0);
    CHECK_EQ_INT(st.mtime, 5151);
    sink k = {0};
    CHECK_EQ_INT(adbc_sync_pull_stream(NULL, NULL, s, "/data/local/tmp/v1s", sink_write, &k, NULL,
                                       TMO),
                 0);
    CHECK(k.len == 100000 && memcmp(k.buf, data, 100000) == 0);
    free(k.buf);
    free(data);
    adbc_sync_close(s);
    adbc_conn_close(c);
    td_stop(&old);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmp, sizeof tmp, "/tmp/adbc-sync-dev.XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    if (td_start(&dev, "dev", NULL) != 0) {
        fprintf(stderr, "cannot start the test device\n");
        return 1;
    }
    RUN(features_advertised);
    RUN(round_trips_at_chunk_boundaries);
    RUN(modes_and_mtimes_as_adbd_sets_them);
    RUN(tree_push_and_pull);
    RUN(list_only_and_adb_order);
    RUN(list_and_errors);
    RUN(sandbox_holds);
    RUN(stream_push_in_uneven_reads_and_pull_back);
    RUN(stream_push_of_a_link);
    RUN(stream_push_dry_run);
    RUN(stream_compressed_both_ways);
    RUN(stream_source_failing_mid_file);
    RUN(stream_sink_failing_mid_pull);
    RUN(stream_pull_of_what_is_not_a_file);
    RUN(stream_arguments_checked);
    RUN(stream_progress);
    RUN(v1_protocol_without_v2_features);
    td_stop(&dev);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return T_DONE();
}
