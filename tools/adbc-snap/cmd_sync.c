/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap file commands: push, pull, ls, stat (the sync: service).
 *
 * push and pull resolve their destination as adb does: into an existing
 * directory a source goes under its own name; several sources need one. They
 * print adb's summary line per source, and on a terminal a progress line with
 * rate and ETA (on stderr; nothing with -q or when stderr is not a TTY). */
#include "snap.h"

#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adbc/sync.h"

static int cmd_push(snap_ctx *ctx, int argc, char **argv);
static int cmd_pull(snap_ctx *ctx, int argc, char **argv);
static int cmd_ls(snap_ctx *ctx, int argc, char **argv);
static int cmd_stat(snap_ctx *ctx, int argc, char **argv);
static int cmd_sync(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_sync[] = {
    {"push", cmd_push,
     "push [-L] [-n] [--sync] [-z ALGORITHM|-Z] [--deadline S] [--max-entries N] "
     "[--max-depth N] [--json] LOCAL... REMOTE",
     "copy files or trees to the device (-L: send links' targets)"},
    {"pull", cmd_pull,
     "pull [-a] [-z ALGORITHM|-Z] [--deadline S] [--max-entries N] [--max-depth N] [--json] "
     "REMOTE... LOCAL",
     "copy files or trees from the device (-a: keep mtime and mode)"},
    {"ls", cmd_ls, "ls [-l] [--json] REMOTE", "list a directory on the device"},
    {"stat", cmd_stat, "stat [--json] REMOTE", "what the device reports about a path"},
    {"sync", cmd_sync,
     "sync [-l] [-n] [-q] [-z ALGORITHM|-Z] "
     "[all|data|odm|oem|product|system|system_ext|vendor]",
     "push a build's changed files from $ANDROID_PRODUCT_OUT (as adb sync; -l: only list them)"},
    {NULL, NULL, NULL, NULL},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- progress ---- */

typedef struct bar {
    int on;           /* drawing (a TTY, not -q) */
    double start, last;
    int drawn;        /* a line is on screen */
} bar;

static void fmt_size(char *out, size_t n, double b)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4) {
        b /= 1024;
        i++;
    }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

static int on_progress(void *user, const adbc_sync_progress *p)
{
    bar *b = user;
    double t = now_s();
    if (!b->on || (t - b->last < 0.1 && !(p->file_done && p->files == p->files_total)))
        return 0;
    b->last = t;
    double el = t - b->start;
    double rate = el > 0 ? (double)p->bytes / el : 0;
    char done[32], total[32], rs[32], eta[32] = "--:--";
    fmt_size(done, sizeof done, (double)p->bytes);
    fmt_size(total, sizeof total, (double)p->total);
    fmt_size(rs, sizeof rs, rate);
    if (rate > 0 && p->total >= p->bytes) {
        long s = (long)((double)(p->total - p->bytes) / rate + 0.5);
        snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
    int pct = p->total ? (int)(p->bytes * 100 / p->total) : 100;
    if (pct > 100)
        pct = 100;
    const char *name = p->dst ? p->dst : "";
    size_t nl = strlen(name);
    if (nl > 40)
        name += nl - 40; /* the end of a long path says the most */
    fprintf(stderr, "\r\033[K[%3d%%] %s  %s/%s  %s/s  ETA %s", pct, name, done, total, rs, eta);
    fflush(stderr);
    b->drawn = 1;
    return 0;
}

static void bar_clear(bar *b)
{
    if (b->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        b->drawn = 0;
    }
}

static void bar_init(bar *b, const snap_ctx *ctx)
{
    memset(b, 0, sizeof *b);
    b->on = !ctx->quiet && isatty(2);
    b->start = now_s();
}

/* --json for push and pull: one object for the run, an entry per source,
 * printed when all are done:
 *   {"files":N,"skipped":N,"bytes":N,"seconds":S,"sources":[
 *     {"source":..,"target":..,"files":..,"skipped":..,"bytes":..,"seconds":..}
 *     or {"source":..,"error":{"code":..,"reason":..,"message":..}}]} */
typedef struct jrun {
    int on, n;
    unsigned long long files, skipped, bytes;
    double t0;
} jrun;

static void jrun_begin(jrun *j, int on)
{
    memset(j, 0, sizeof *j);
    j->on = on;
    j->t0 = now_s();
    if (on) {
        /* From here on errors belong to their source's entry. */
        snap_json_mark();
        printf("{\"sources\":[");
    }
}

static void jrun_source(jrun *j, const char *src, const char *target, const adbc_sync_result *r,
                        double secs, int rc, const char *msg)
{
    if (!j->on)
        return;
    printf("%s{\"source\":", j->n++ ? "," : "");
    snap_json_str(stdout, src);
    if (target) {
        printf(",\"target\":");
        snap_json_str(stdout, target);
    }
    if (rc != 0) {
        printf(",\"error\":{");
        if (rc < 0) {
            printf("\"code\":%d,\"reason\":", rc);
            snap_json_str(stdout, adbc_strerror(rc));
            putchar(',');
        }
        printf("\"message\":");
        snap_json_str(stdout, msg);
        printf("}}");
        return;
    }
    printf(",\"files\":%llu,\"skipped\":%llu,\"bytes\":%llu,\"seconds\":%.3f}",
           (unsigned long long)r->files, (unsigned long long)r->skipped,
           (unsigned long long)r->bytes, secs);
    j->files += r->files;
    j->skipped += r->skipped;
    j->bytes += r->bytes;
}

static void jrun_end(jrun *j, int status)
{
    if (!j->on)
        return;
    printf("],\"files\":%llu,\"skipped\":%llu,\"bytes\":%llu,\"seconds\":%.3f,"
           "\"exit_status\":%d}\n",
           j->files, j->skipped, j->bytes, now_s() - j->t0, status);
    fflush(stdout);
}

/* adb's summary: "<src>: 1 file pushed, 0 skipped. 12.3 MB/s (N bytes in T s)" */
static void summary(const snap_ctx *ctx, const char *src, const char *verb,
                    const adbc_sync_result *r, double secs)
{
    if (ctx->quiet || snap_json_on())
        return;
    printf("%s: %llu file%s %s, %llu skipped.", src, (unsigned long long)r->files,
           r->files == 1 ? "" : "s", verb, (unsigned long long)r->skipped);
    if (r->bytes > 0 && secs > 0)
        printf(" %.1f MB/s (%llu bytes in %.3fs)", (double)r->bytes / secs / (1024 * 1024),
               (unsigned long long)r->bytes, secs);
    if (r->compression != ADBC_SYNC_COMPRESS_NONE && r->bytes > 0)
        printf(" %s: %llu bytes on the wire (%.1f%%)", adbc_sync_compression_name(r->compression),
               (unsigned long long)r->wire_bytes, 100.0 * (double)r->wire_bytes / (double)r->bytes);
    printf("\n");
    fflush(stdout);
}

/* Last path component (ignoring trailing slashes), malloc'd. */
static char *base_name(const char *p)
{
    char *dup = strdup(p);
    if (!dup)
        return NULL;
    size_t n = strlen(dup);
    while (n > 1 && dup[n - 1] == '/')
        dup[--n] = '\0';
    char *b = strdup(basename(dup));
    free(dup);
    return b;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    char *out = malloc(n + strlen(name) + 2);
    if (out)
        sprintf(out, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return out;
}

static int open_sync(snap_ctx *ctx, adbc_sync **s)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return -1;
    int rc = adbc_sync_open(s, c, ctx->timeout_ms);
    if (rc < 0) {
        snap_fail("sync", rc);
        return -1;
    }
    return 0;
}

/* Where SRC goes: into an existing directory under its own name, else to
 * DST itself. malloc'd; NULL when out of memory. */
static char *target_for(const char *dst, int dst_isdir, const char *src)
{
    if (!dst_isdir)
        return strdup(dst);
    char *b = base_name(src);
    char *t = b ? join(dst, b) : NULL;
    free(b);
    return t;
}

/* What push and pull take from their options. */
typedef struct xopts {
    unsigned flags;
    adbc_sync_compression comp;
    uint64_t max_entries;
    int max_depth;
    int deadline_ms;   /* --deadline: the whole command, 0: none */
    double t_end;      /* ... ending then (now_s()) */
} xopts;

/* One push (from a local path) or pull, with the progress bar and adb's
 * summary line naming LABEL. 0, or -1 once the error is printed. */
static int transfer(snap_ctx *ctx, adbc_sync *s, int push, const char *from, const char *label,
                    const char *target, const xopts *x, jrun *j)
{
    bar b;
    bar_init(&b, ctx);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.progress = on_progress;
    o.user = &b;
    o.flags = x->flags;
    o.compression = x->comp;
    o.max_entries = x->max_entries;
    o.max_depth = x->max_depth;
    if (x->deadline_ms > 0) {
        /* several sources share the command's deadline */
        double left = x->t_end - now_s();
        o.deadline_ms = left * 1000 < 1 ? 1 : (int)(left * 1000);
    }
    adbc_sync_result r;
    double t0 = now_s();
    int rc = push ? adbc_sync_push(&r, s, from, target, &o, ctx->timeout_ms)
                  : adbc_sync_pull(&r, s, from, target, &o, ctx->timeout_ms);
    bar_clear(&b);
    if (rc < 0) {
        int late = rc == ADBC_ETIMEDOUT && x->deadline_ms > 0 &&
                   strstr(adbc_last_error(), "within its deadline");
        snap_fail(push ? "push" : "pull", rc);
        if (late)
            fprintf(stderr, "adbc-snap: %s: stopped at --deadline %g s\n", push ? "push" : "pull",
                    x->deadline_ms / 1000.0);
        const char *msg = adbc_last_error();
        jrun_source(j, label, target, NULL, 0, rc, *msg ? msg : adbc_strerror(rc));
        return -1;
    }
    summary(ctx, label, push ? "pushed" : "pulled", &r, now_s() - t0);
    jrun_source(j, label, target, &r, now_s() - t0, 0, NULL);
    return 0;
}

/* -z ALGORITHM / -Z, as adb spells them. 1 when argv[*i] was one (taking
 * its argument), 0 when not, -1 after printing the usage error. */
static int compression_opt(const snap_cmd *cmd, int argc, char **argv, int *i,
                           adbc_sync_compression *comp)
{
    if (strcmp(argv[*i], "-Z") == 0) {
        *comp = ADBC_SYNC_COMPRESS_NONE;
        return 1;
    }
    if (strcmp(argv[*i], "-z") != 0)
        return 0;
    if (*i + 1 >= argc) {
        snap_usage(cmd, "-z needs an algorithm: any, none, brotli, lz4 or zstd");
        return -1;
    }
    if (adbc_sync_compression_parse(comp, argv[++*i]) < 0) {
        snap_usage(cmd, adbc_last_error());
        return -1;
    }
    return 1;
}

/* --deadline S, --max-entries N, --max-depth N: 1 when argv[*i] was one
 * (taking its argument), 0 when not, -1 after printing the usage error. */
static int tree_opt(const snap_cmd *cmd, int argc, char **argv, int *i, xopts *x)
{
    const char *a = argv[*i];
    if (strcmp(a, "--deadline") != 0 && strcmp(a, "--max-entries") != 0 &&
        strcmp(a, "--max-depth") != 0)
        return 0;
    if (*i + 1 >= argc) {
        char msg[64];
        snprintf(msg, sizeof msg, "%s needs a value", a);
        snap_usage(cmd, msg);
        return -1;
    }
    const char *v = argv[++*i];
    if (strcmp(a, "--deadline") == 0) {
        if (snap_seconds(v, 86400 * 7, &x->deadline_ms) < 0) {
            snap_usage(cmd, "--deadline takes seconds (a number above 0, at most 604800)");
            return -1;
        }
        x->t_end = now_s() + x->deadline_ms / 1000.0;
        return 1;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int depth = a[6] == 'd';
    if (end == v || *end || errno == ERANGE || n == 0 || v[0] == '-' ||
        (depth && n > 100000)) {
        snap_usage(cmd, depth ? "--max-depth takes a whole number from 1 to 100000"
                              : "--max-entries takes a whole number above 0");
        return -1;
    }
    if (depth)
        x->max_depth = (int)n;
    else
        x->max_entries = n;
    return 1;
}

/* ---- push ---- */

static int cmd_push(snap_ctx *ctx, int argc, char **argv)
{
    xopts x = {.comp = ADBC_SYNC_COMPRESS_AUTO};
    if (snap_adb_compression(&x.comp) < 0)
        return SNAP_EXIT_USAGE;
    int i = 1, json = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        int z = compression_opt(&snap_cmds_sync[0], argc, argv, &i, &x.comp);
        if (z == 0)
            z = tree_opt(&snap_cmds_sync[0], argc, argv, &i, &x);
        if (z < 0)
            return SNAP_EXIT_USAGE;
        if (z)
            continue;
        if (strcmp(argv[i], "-L") == 0)
            x.flags |= ADBC_SYNC_FOLLOW_LINKS;
        else if (strcmp(argv[i], "-n") == 0)
            x.flags |= ADBC_SYNC_DRY_RUN;
        else if (strcmp(argv[i], "--sync") == 0)
            x.flags |= ADBC_SYNC_SKIP_SAME;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            return snap_usage(&snap_cmds_sync[0], "unknown option");
    }
    if (argc - i < 2)
        return snap_usage(&snap_cmds_sync[0], "give at least one LOCAL and the REMOTE path");
    const char *dst = argv[argc - 1];
    int nsrc = argc - i - 1;
    adbc_sync *s;
    if (open_sync(ctx, &s) < 0)
        return SNAP_EXIT_FAIL;
    adbc_sync_statbuf dst_st;
    int rc = adbc_sync_stat(&dst_st, s, dst, ctx->timeout_ms);
    int dst_exists = rc == 0;
    if (rc < 0 && rc != ADBC_ENOTFOUND) {
        snap_fail(dst, rc);
        adbc_sync_close(s);
        return SNAP_EXIT_FAIL;
    }
    int dst_isdir = dst_exists && S_ISDIR(dst_st.mode);
    if (!dst_isdir && nsrc > 1) {
        adbc_sync_close(s);
        return snap_error(SNAP_EXIT_FAIL, "push", "target '%s' is not a directory", dst);
    }
    if (!dst_isdir && dst_exists && dst[strlen(dst) - 1] == '/') {
        adbc_sync_close(s);
        return snap_error(SNAP_EXIT_FAIL, "push", "failed to access '%s': Not a directory", dst);
    }
    int status = 0;
    jrun j;
    jrun_begin(&j, json);
    for (; i < argc - 1; i++) {
        const char *src = argv[i];
        struct stat st;
        if (stat(src, &st) != 0 && lstat(src, &st) != 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "cannot stat '%s': %s", src, strerror(errno));
            fprintf(stderr, "adbc-snap: push: %s\n", msg);
            jrun_source(&j, src, NULL, NULL, 0, 1, msg);
            status = SNAP_EXIT_FAIL;
            continue;
        }
        /* As adb, a link named on the command line stands for its target
         * (links inside a tree go over as links). */
        char *real = NULL;
        struct stat lst;
        if (lstat(src, &lst) == 0 && S_ISLNK(lst.st_mode) && !(x.flags & ADBC_SYNC_FOLLOW_LINKS))
            real = realpath(src, NULL);
        char *target = target_for(dst, dst_isdir, src);
        if (!target) {
            fprintf(stderr, "adbc-snap: out of memory\n");
            free(real);
            status = SNAP_EXIT_FAIL;
            break;
        }
        if (transfer(ctx, s, 1, real ? real : src, src, target, &x, &j) < 0)
            status = SNAP_EXIT_FAIL;
        free(real);
        free(target);
    }
    adbc_sync_close(s);
    jrun_end(&j, status);
    return status;
}

/* ---- pull ---- */

static int cmd_pull(snap_ctx *ctx, int argc, char **argv)
{
    xopts x = {.flags = ADBC_SYNC_NO_ATTRS, .comp = ADBC_SYNC_COMPRESS_AUTO};
    if (snap_adb_compression(&x.comp) < 0)
        return SNAP_EXIT_USAGE;
    int i = 1, json = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        int z = compression_opt(&snap_cmds_sync[1], argc, argv, &i, &x.comp);
        if (z == 0)
            z = tree_opt(&snap_cmds_sync[1], argc, argv, &i, &x);
        if (z < 0)
            return SNAP_EXIT_USAGE;
        if (z)
            continue;
        if (strcmp(argv[i], "-a") == 0)
            x.flags &= ~(unsigned)ADBC_SYNC_NO_ATTRS;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            return snap_usage(&snap_cmds_sync[1], "unknown option");
    }
    if (argc - i < 1)
        return snap_usage(&snap_cmds_sync[1], "give at least one REMOTE path");
    /* As adb: a single REMOTE without LOCAL goes to the current directory. */
    const char *dst = argc - i >= 2 ? argv[argc - 1] : ".";
    int last = argc - i >= 2 ? argc - 1 : argc;
    int nsrc = last - i;
    struct stat lst;
    int dst_exists = stat(dst, &lst) == 0;
    int dst_isdir = dst_exists && S_ISDIR(lst.st_mode);
    if (!dst_isdir && nsrc > 1)
        return snap_error(SNAP_EXIT_FAIL, "pull", "target '%s' is not a directory", dst);
    if (!dst_isdir && dst_exists && dst[strlen(dst) - 1] == '/')
        return snap_error(SNAP_EXIT_FAIL, "pull", "failed to access '%s': Not a directory", dst);
    adbc_sync *s;
    if (open_sync(ctx, &s) < 0)
        return SNAP_EXIT_FAIL;
    int status = 0;
    jrun j;
    jrun_begin(&j, json);
    for (; i < last; i++) {
        const char *src = argv[i];
        char *target = target_for(dst, dst_isdir, src);
        if (!target) {
            fprintf(stderr, "adbc-snap: out of memory\n");
            status = SNAP_EXIT_FAIL;
            break;
        }
        if (transfer(ctx, s, 0, src, src, target, &x, &j) < 0)
            status = SNAP_EXIT_FAIL;
        free(target);
    }
    adbc_sync_close(s);
    jrun_end(&j, status);
    return status;
}

/* ---- ls, stat ---- */

static const char *type_name(uint32_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "file";
    case S_IFDIR: return "dir";
    case S_IFLNK: return "link";
    case S_IFCHR: return "char";
    case S_IFBLK: return "block";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    default: return "unknown";
    }
}

/* "drwxr-xr-x" */
static void mode_str(uint32_t m, char out[11])
{
    static const char types[] = "?pc?d?b?-?l?s???";
    out[0] = types[(m >> 12) & 15];
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        out[1 + i] = (m & (0400u >> i)) ? rwx[i] : '-';
    if (m & S_ISUID)
        out[3] = (m & 0100) ? 's' : 'S';
    if (m & S_ISGID)
        out[6] = (m & 0010) ? 's' : 'S';
    if (m & S_ISVTX)
        out[9] = (m & 0001) ? 't' : 'T';
    out[10] = '\0';
}

static void time_str(int64_t t, char *out, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%d %H:%M", &tm))
        snprintf(out, n, "%lld", (long long)t);
}

static void json_stat(FILE *f, const adbc_sync_statbuf *st, int error)
{
    fprintf(f, "\"type\":\"%s\",\"mode\":%u,\"perm\":\"0%03o\",\"size\":%llu,\"mtime\":%lld",
           type_name(st->mode), st->mode, st->mode & 07777, (unsigned long long)st->size,
           (long long)st->mtime);
    if (st->v2)
        fprintf(f, ",\"atime\":%lld,\"ctime\":%lld,\"uid\":%u,\"gid\":%u,\"nlink\":%u,\"dev\":%llu,"
               "\"ino\":%llu",
               (long long)st->atime, (long long)st->ctime, st->uid, st->gid, st->nlink,
               (unsigned long long)st->dev, (unsigned long long)st->ino);
    if (error)
        fprintf(f, ",\"error\":\"%s\"", adbc_sync_errno_name((uint32_t)error));
}

typedef struct ls_out {
    int lng, json, n;
    FILE *f; /* --json: the listing is collected and printed when complete */
} ls_out;

static int ls_entry(void *user, const adbc_sync_dirent *e)
{
    ls_out *o = user;
    const adbc_sync_statbuf *st = &e->st;
    if (o->json) {
        fprintf(o->f, "%s{\"name\":", o->n++ ? "," : "");
        snap_json_str(o->f, e->name);
        fputc(',', o->f);
        json_stat(o->f, st, e->error);
        fputc('}', o->f);
        return 0;
    }
    char safe[ADBC_SYNC_NAME_MAX + 1];
    const char *name = snap_tty_safe(e->name, safe, sizeof safe);
    if (o->lng) {
        char m[11], t[32];
        mode_str(st->mode, m);
        time_str(st->mtime, t, sizeof t);
        if (e->error)
            printf("?????????? %s (%s)\n", name, adbc_sync_errno_text((uint32_t)e->error));
        else if (st->v2)
            printf("%s %3u %5u %5u %10llu %s %s\n", m, st->nlink, st->uid, st->gid,
                   (unsigned long long)st->size, t, name);
        else
            printf("%s %10llu %s %s\n", m, (unsigned long long)st->size, t, name);
    } else {
        /* adb ls's own format */
        printf("%08x %08llx %08llx %s\n", st->mode, (unsigned long long)st->size,
               (unsigned long long)st->mtime, name);
    }
    return 0;
}

static int cmd_ls(snap_ctx *ctx, int argc, char **argv)
{
    ls_out o = {0};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0)
            o.lng = 1;
        else if (strcmp(argv[i], "--json") == 0)
            o.json = 1;
        else if (!path)
            path = argv[i];
        else
            return snap_usage(&snap_cmds_sync[2], "give one REMOTE directory");
    }
    if (!path)
        return snap_usage(&snap_cmds_sync[2], "give the REMOTE directory");
    adbc_sync *s;
    if (open_sync(ctx, &s) < 0)
        return SNAP_EXIT_FAIL;
    char *buf = NULL;
    size_t len = 0;
    if (o.json && !(o.f = open_memstream(&buf, &len))) {
        adbc_sync_close(s);
        return snap_error(SNAP_EXIT_FAIL, "ls", "out of memory");
    }
    int rc = adbc_sync_list(s, path, ls_entry, &o, ctx->timeout_ms);
    if (o.f) {
        fclose(o.f);
        if (rc >= 0)
            printf("[%.*s]\n", (int)len, buf);
        free(buf);
    }
    adbc_sync_close(s);
    return rc < 0 ? snap_fail("ls", rc) : 0;
}

static int cmd_stat(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (!path)
            path = argv[i];
        else
            return snap_usage(&snap_cmds_sync[3], "give one REMOTE path");
    }
    if (!path)
        return snap_usage(&snap_cmds_sync[3], "give the REMOTE path");
    adbc_sync *s;
    if (open_sync(ctx, &s) < 0)
        return SNAP_EXIT_FAIL;
    adbc_sync_statbuf st;
    int rc = adbc_sync_lstat(&st, s, path, ctx->timeout_ms);
    adbc_sync_close(s);
    if (rc < 0)
        return snap_fail("stat", rc);
    if (json) {
        printf("{\"path\":");
        snap_json_str(stdout, path);
        putchar(',');
        json_stat(stdout, &st, 0);
        printf("}\n");
        return 0;
    }
    char m[11], t[32];
    mode_str(st.mode, m);
    time_str(st.mtime, t, sizeof t);
    printf("  File: %s\n  Type: %s\n  Mode: %04o (%s)\n  Size: %llu\nModify: %s\n", path,
           type_name(st.mode), st.mode & 07777, m, (unsigned long long)st.size, t);
    if (st.v2) {
        char a[32], c[32];
        time_str(st.atime, a, sizeof a);
        time_str(st.ctime, c, sizeof c);
        printf("Access: %s\nChange: %s\n   Uid: %u  Gid: %u  Links: %u\nDevice: %llu  Inode: "
               "%llu\n",
               a, c, st.uid, st.gid, st.nlink, (unsigned long long)st.dev,
               (unsigned long long)st.ino);
    }
    return 0;
}

/* ---- sync ---- */

/* adb's partitions, in the order adb syncs them. */
static const char *const partitions[] = {"data",   "odm",        "oem",    "product",
                                         "system", "system_ext", "vendor", NULL};

typedef struct sync_out {
    int list; /* -l: print what would be pushed */
    bar b;
} sync_out;

static int sync_progress(void *user, const adbc_sync_progress *p)
{
    sync_out *o = user;
    if (!o->list)
        return on_progress(&o->b, p);
    char a[4096], b[4096];
    printf("would push: %s -> %s\n", snap_tty_safe(p->src, a, sizeof a),
           snap_tty_safe(p->dst, b, sizeof b));
    return 0;
}

/* adb sync: each partition directory of $ANDROID_PRODUCT_OUT that exists
 * (or the one named) is pushed to /PARTITION, leaving out the files the
 * device has already (same size and mtime: ADBC_SYNC_SKIP_SAME), walking the
 * tree in adb's order; a summary line per partition. */
static int cmd_sync(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = &snap_cmds_sync[4];
    xopts x = {.flags = ADBC_SYNC_SKIP_SAME | ADBC_SYNC_DIR_ORDER, .comp = ADBC_SYNC_COMPRESS_AUTO};
    if (snap_adb_compression(&x.comp) < 0)
        return SNAP_EXIT_USAGE;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        int z = compression_opt(cmd, argc, argv, &i, &x.comp);
        if (z < 0)
            return SNAP_EXIT_USAGE;
        if (z)
            continue;
        if (strcmp(argv[i], "-l") == 0)
            x.flags |= ADBC_SYNC_LIST_ONLY;
        else if (strcmp(argv[i], "-n") == 0)
            x.flags |= ADBC_SYNC_DRY_RUN;
        else if (strcmp(argv[i], "-q") == 0)
            ctx->quiet = 1;
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            return snap_usage(cmd, "unknown option");
    }
    if (argc - i > 1)
        return snap_usage(cmd, "give at most one PARTITION");
    const char *which = i < argc ? argv[i] : "all";
    int known = strcmp(which, "all") == 0;
    for (int k = 0; partitions[k] && !known; k++)
        known = strcmp(which, partitions[k]) == 0;
    if (!known)
        return snap_usage(cmd, "PARTITION is all, data, odm, oem, product, system, system_ext "
                               "or vendor");
    const char *out = getenv("ANDROID_PRODUCT_OUT");
    if (!out || !*out)
        return snap_error(SNAP_EXIT_FAIL, "sync",
                          "product directory not specified; set $ANDROID_PRODUCT_OUT (a "
                          "build's out/target/product/NAME)");
    adbc_sync *s = NULL;
    int found = 0, status = 0;
    for (int k = 0; partitions[k] && status == 0; k++) {
        if (strcmp(which, "all") != 0 && strcmp(which, partitions[k]) != 0)
            continue;
        /* as adb: $ANDROID_PRODUCT_OUT/PARTITION, a separator added */
        char local[4096], remote[64], label[64];
        if (snprintf(local, sizeof local, "%s/%s", out, partitions[k]) >= (int)sizeof local) {
            status = snap_error(SNAP_EXIT_FAIL, "sync", "$ANDROID_PRODUCT_OUT is longer than "
                                "%zu bytes: give a shorter path", sizeof local - 16);
            break;
        }
        struct stat st;
        if (stat(local, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        found = 1;
        if (!s && open_sync(ctx, &s) < 0)
            return SNAP_EXIT_FAIL;
        snprintf(remote, sizeof remote, "/%s", partitions[k]);
        snprintf(label, sizeof label, "/%s/", partitions[k]);
        sync_out o = {.list = (x.flags & ADBC_SYNC_LIST_ONLY) != 0};
        bar_init(&o.b, ctx);
        adbc_sync_opts so;
        adbc_sync_opts_init(&so);
        so.progress = sync_progress;
        so.user = &o;
        so.flags = x.flags;
        so.compression = x.comp;
        adbc_sync_result r;
        double t0 = now_s();
        int rc = adbc_sync_push(&r, s, local, remote, &so, ctx->timeout_ms);
        bar_clear(&o.b);
        if (rc < 0) {
            snap_fail("sync", rc);
            status = SNAP_EXIT_FAIL;
            break;
        }
        summary(ctx, label, "pushed", &r, now_s() - t0);
    }
    adbc_sync_close(s);
    if (status)
        return status;
    if (!found)
        return snap_error(SNAP_EXIT_FAIL, "sync",
                          "don't know how to sync %s partition: %s/%s is not a directory", which,
                          out, strcmp(which, "all") == 0 ? "{data,system,vendor,...}" : which);
    return status;
}
