/* SPDX-License-Identifier: Apache-2.0 */
/* The sync client against the test device (adbc-testdevice, a separate
 * process serving sync: over a sandbox directory): byte-exact round trips at
 * the chunk boundaries, adbd's mode and mtime handling, trees with links and
 * empty directories, errors with the device's words, the sandbox holding
 * against ".." and symlinks, and the v1 protocol when the device lacks the
 * v2 features. */
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
    RUN(v1_protocol_without_v2_features);
    td_stop(&dev);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return T_DONE();
}
