/* SPDX-License-Identifier: Apache-2.0 */
/* Pulling a directory tree as it is listed.
 *
 * Two sync sessions share the connection: one lists directories (LIS2 or
 * LIST), the caller's own moves files (RECV/RCV2). Each file is asked for
 * as soon as its entry arrives, up to PULL_AHEAD files ahead, so a tree of
 * small files costs no round trip per file, and no list of the tree's files
 * is ever built: what is kept is
 *  - the files asked for and not yet received (at most PULL_AHEAD);
 *  - the subdirectories found and not yet walked, along the current path
 *    only, as packed records (name, mode, mtime, dev, ino: about 35 bytes
 *    and the name each), at most DIRS_MAX bytes of them;
 *  - directories whose mode and time are due once their files are in.
 * A device that serves an endless or enormous tree meets the caps
 * (max_entries, max_depth, DIRS_MAX) and the deadline with a clear error,
 * with memory bounded whatever it sends. adb, for comparison, lists the
 * whole tree before it pulls anything.
 *
 * Symbolic links are followed, as adb does (RECV reads through them): each
 * is resolved with a stat on the listing session after its directory's
 * listing ended. A link back to an ancestor (same dev/ino, v2) is skipped. */
#include "sync/sync_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PULL_AHEAD 192                   /* RECVs in flight (< SYNC_QMAX) */
#define PULL_AHEAD_BYTES (8 * 1024 * 1024) /* ... unless their files are larger */
#define DIRS_MAX (16 * 1024 * 1024)      /* subdirectories waiting to be walked */
#define ATTRS_MAX 64                     /* directories waiting for their mode and time */

/* An entry kept in the stack: a subdirectory to walk, a link to resolve
 * after the listing, or (one session only) a file to ask for after it. */
enum { K_DIR = 'd', K_LINK = 'l', K_FILE = 'f', K_GONE = 'x' };
typedef struct rec {
    uint32_t len;   /* of the whole record */
    uint32_t mode;
    int64_t mtime;
    uint64_t dev, ino, size;
    uint8_t kind, v2;
} rec;
#define REC_HDR (4 + 4 + 8 + 8 + 8 + 8 + 1 + 1)

typedef struct inflight {
    char *src, *dst;
    adbc_sync_statbuf st;
} inflight;

typedef struct dirattr {
    char *dst;
    uint32_t mode;
    int64_t mtime;
    uint64_t after; /* set once this many files were received */
} dirattr;

/* Directories being walked, to stop at a symlink that loops back (v2 only:
 * v1 has no inode numbers; the depth cap catches those loops). */
typedef struct ancestry {
    const struct ancestry *up;
    uint64_t dev, ino;
} ancestry;

typedef struct walk {
    adbc_sync *s;  /* files */
    adbc_sync *ls; /* listings and link stats (s itself when the device
                      refused a second session) */
    sync_job *j;
    const char *root;
    inflight fl[PULL_AHEAD];
    size_t fl_head, fl_len;
    uint64_t fl_bytes;  /* sizes of the files in flight */
    uint64_t received;  /* files received (or failed: the pull then ends) */
    uint64_t asked;
    uint8_t *ds;        /* the stack of records */
    size_t ds_len, ds_cap;
    dirattr da[ATTRS_MAX];
    size_t da_len;
} walk;

static int dotdot(const char *n)
{
    return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

static int pullable(uint32_t mode)
{
    return S_ISREG(mode) || S_ISBLK(mode) || S_ISCHR(mode);
}

static int loops(const ancestry *a, const adbc_sync_statbuf *st)
{
    if (!st->v2)
        return 0;
    for (; a; a = a->up)
        if (a->dev == st->dev && a->ino == st->ino)
            return 1;
    return 0;
}

/* ---- directory modes and times ---- */

static void set_dir_attrs(sync_job *j, const dirattr *d)
{
    if ((j->opts->flags & ADBC_SYNC_NO_ATTRS) || d->mode == 0)
        return;
    /* Best effort, like adb -a: a directory we cannot chmod is not an error
     * worth failing a finished pull for. */
    if (chmod(d->dst, (mode_t)(d->mode & 0777) & ~j->umask) != 0)
        return;
    struct timespec ts[2] = {{.tv_sec = (time_t)d->mtime}, {.tv_sec = (time_t)d->mtime}};
    utimensat(AT_FDCWD, d->dst, ts, 0);
}

/* Apply the attributes whose files have all arrived (writing a file into a
 * directory changes its mtime, so they wait for them). */
static void attrs_due(walk *w)
{
    size_t k = 0;
    for (size_t i = 0; i < w->da_len; i++) {
        if (w->da[i].after <= w->received) {
            set_dir_attrs(w->j, &w->da[i]);
            core_free(w->da[i].dst);
        } else {
            w->da[k++] = w->da[i];
        }
    }
    w->da_len = k;
}

/* ---- files ---- */

static void fl_drop(walk *w)
{
    for (; w->fl_len > 0; w->fl_len--) {
        inflight *f = &w->fl[w->fl_head];
        core_free(f->src);
        core_free(f->dst);
        w->fl_head = (w->fl_head + 1) % PULL_AHEAD;
    }
    w->fl_bytes = 0;
}

/* Receive the oldest file asked for. */
static int receive_one(walk *w)
{
    inflight *f = &w->fl[w->fl_head];
    int rc = sync_pull_receive(w->s, w->j, f->src, f->dst, &f->st);
    w->fl_bytes -= f->st.size;
    core_free(f->src);
    core_free(f->dst);
    w->fl_head = (w->fl_head + 1) % PULL_AHEAD;
    w->fl_len--;
    w->received++;
    if (rc == 0)
        attrs_due(w);
    return rc;
}

static int receive_all(walk *w)
{
    int rc = 0;
    while (rc == 0 && w->fl_len > 0)
        rc = receive_one(w);
    return rc;
}

/* Ask for one file (taking src and dst). */
static int want_file(walk *w, char *src, char *dst, const adbc_sync_statbuf *st)
{
    int rc = 0;
    if (!src || !dst)
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    while (rc == 0 && w->fl_len > 0 &&
           (w->fl_len == PULL_AHEAD || w->fl_bytes + st->size > PULL_AHEAD_BYTES))
        rc = receive_one(w);
    if (rc == 0)
        rc = sync_ensure(w->s, sync_job_wait(w->j));
    if (rc == 0)
        rc = sync_pull_request(w->s, w->j, src);
    if (rc < 0) {
        core_free(src);
        core_free(dst);
        return rc;
    }
    inflight *f = &w->fl[(w->fl_head + w->fl_len) % PULL_AHEAD];
    f->src = src;
    f->dst = dst;
    f->st = *st;
    w->fl_len++;
    w->fl_bytes += st->size;
    w->asked++;
    w->j->p.files_total++; /* the totals grow as the walk finds files */
    w->j->p.total += st->size;
    return 0;
}

/* ---- the stack of subdirectories to walk ---- */

static void set_rec(walk *w, size_t off, const adbc_sync_statbuf *st, int kind)
{
    uint8_t *p = w->ds + off;
    memcpy(p + 4, &st->mode, 4);
    memcpy(p + 8, &st->mtime, 8);
    memcpy(p + 16, &st->dev, 8);
    memcpy(p + 24, &st->ino, 8);
    memcpy(p + 32, &st->size, 8);
    p[40] = (uint8_t)kind;
    p[41] = (uint8_t)st->v2;
}

static int push_rec(walk *w, const char *dir, const char *name, const adbc_sync_statbuf *st,
                    int kind)
{
    size_t nl = strlen(name);
    size_t len = REC_HDR + nl + 1;
    if (w->ds_len + len > DIRS_MAX)
        return core_fail(ADBC_ELIMIT,
                         "%s: more than %d MiB of entries found under %s wait to be walked "
                         "(subdirectories, and files on a device that serves one sync "
                         "session at a time); pull its subdirectories separately",
                         w->root, DIRS_MAX >> 20, dir);
    if (w->ds_len + len > w->ds_cap) {
        size_t nc = w->ds_cap ? w->ds_cap * 2 : 64 * 1024;
        while (nc < w->ds_len + len)
            nc *= 2;
        if (nc > DIRS_MAX)
            nc = DIRS_MAX;
        uint8_t *nb = core_realloc(w->ds, nc);
        if (!nb)
            return core_fail(ADBC_ENOMEM, "out of memory");
        w->ds = nb;
        w->ds_cap = nc;
    }
    uint32_t rl = (uint32_t)len;
    uint8_t *p = w->ds + w->ds_len;
    memcpy(p, &rl, 4);
    memcpy(p + REC_HDR, name, nl + 1);
    w->ds_len += len;
    set_rec(w, (size_t)(p - w->ds), st, kind);
    return 0;
}

static void get_rec(const walk *w, size_t off, rec *r, adbc_sync_statbuf *st, const char **name)
{
    const uint8_t *p = w->ds + off;
    memcpy(&r->len, p, 4);
    memcpy(&r->mode, p + 4, 4);
    memcpy(&r->mtime, p + 8, 8);
    memcpy(&r->dev, p + 16, 8);
    memcpy(&r->ino, p + 24, 8);
    memcpy(&r->size, p + 32, 8);
    r->kind = p[40];
    r->v2 = p[41];
    memset(st, 0, sizeof *st);
    st->mode = r->mode;
    st->mtime = r->mtime;
    st->dev = r->dev;
    st->ino = r->ino;
    st->size = r->size;
    st->v2 = r->v2;
    *name = (const char *)p + REC_HDR;
}

/* ---- listing ---- */

typedef struct dirpos {
    const char *src, *dst;
    const ancestry *here;
} dirpos;

static int on_entry(walk *w, const dirpos *d, const adbc_sync_event *ev)
{
    const char *name = ev->text;
    if (dotdot(name))
        return 0;
    sync_job *j = w->j;
    int rc = sync_job_entry(j, w->root);
    if (rc < 0)
        return rc;
    if (ev->error) {
        j->res.skipped++; /* the device could not lstat it */
        return 0;
    }
    uint32_t mode = ev->st.mode;
    if (S_ISLNK(mode))
        return push_rec(w, d->src, name, &ev->st, K_LINK);
    if (S_ISDIR(mode)) {
        if (loops(d->here, &ev->st)) {
            j->res.skipped++;
            return 0;
        }
        return push_rec(w, d->src, name, &ev->st, K_DIR);
    }
    if (!pullable(mode)) {
        j->res.skipped++; /* sockets, FIFOs: as adb, left out */
        return 0;
    }
    if (w->ls == w->s) /* one session: its RECVs wait for the listing's end */
        return push_rec(w, d->src, name, &ev->st, K_FILE);
    return want_file(w, sync_join(d->src, name), sync_join(d->dst, name), &ev->st);
}

/* List one directory on the listing session, handling entries as they come. */
static int list_dir(walk *w, const dirpos *d)
{
    adbc_sync *ls = w->ls;
    sync_job *j = w->j;
    /* One session: the files asked for come back before the listing. */
    int rc = ls == w->s ? receive_all(w) : 0;
    if (rc == 0)
        rc = sync_ensure(ls, sync_job_wait(j));
    if (rc < 0)
        return rc;
    uint32_t id = ls->ls_v2 ? ADBC_SYNC_LIS2 : ADBC_SYNC_LIST;
    size_t len = strlen(d->src);
    if ((rc = sync_put_req(ls, id, d->src, len, sync_job_wait(j))) < 0)
        return rc;
    char *what = core_malloc(len + 8);
    if (what)
        snprintf(what, len + 8, "list %s", d->src);
    rc = sync_expect(ls, ls->ls_v2 ? ADBC_SYNC_X_LIST_V2 : ADBC_SYNC_X_LIST_V1, id, what);
    while (rc == 0) {
        /* Files asked for go out before this session waits for the device. */
        if (w->s->tx_len > 0 && ls->rx_len == 0 && (rc = sync_flush(w->s, sync_job_wait(j))) < 0)
            break;
        adbc_sync_event ev;
        if ((rc = sync_next(ls, &ev, sync_job_wait(j))) < 0)
            break;
        rc = 0;
        if (ev.type == ADBC_SYNC_EV_LIST_END)
            return 0;
        if (ev.type == ADBC_SYNC_EV_FAIL)
            return core_fail(ADBC_EREMOTE, "list %s: the device's sync service failed: %s",
                             d->src, ev.text);
        if (ev.type == ADBC_SYNC_EV_DENT)
            rc = on_entry(w, d, &ev);
    }
    sync_abort(ls); /* an endless listing is not drained */
    return rc;
}

/* After a directory's listing: links become directories, files or skips
 * (all stats first: on one session a RECV asked for would come before
 * them), then the files kept are asked for. */
static int resolve_links(walk *w, size_t from, size_t to, const dirpos *d)
{
    sync_job *j = w->j;
    for (size_t off = from; off < to;) {
        rec r;
        adbc_sync_statbuf st;
        const char *name;
        get_rec(w, off, &r, &st, &name);
        size_t here = off;
        off += r.len;
        if (r.kind != K_LINK)
            continue;
        char *src = sync_join(d->src, name);
        if (!src)
            return core_fail(ADBC_ENOMEM, "out of memory");
        int rc = adbc_sync_stat(&st, w->ls, src, sync_job_wait(j));
        if (rc < 0) {
            core_free(src);
            if (!w->ls->st) /* the session failed, not just the stat */
                return rc;
            j->res.skipped++; /* a dangling link */
            set_rec(w, here, &st, K_GONE);
            continue;
        }
        if (S_ISDIR(st.mode) && !loops(d->here, &st)) {
            core_free(src);
            set_rec(w, here, &st, K_DIR);
            continue;
        }
        core_free(src);
        if (S_ISDIR(st.mode) || !pullable(st.mode)) {
            set_rec(w, here, &st, K_GONE);
            j->res.skipped++;
            continue;
        }
        set_rec(w, here, &st, K_FILE);
    }
    for (size_t off = from; off < to;) {
        rec r;
        adbc_sync_statbuf st;
        const char *name;
        get_rec(w, off, &r, &st, &name);
        off += r.len;
        if (r.kind != K_FILE)
            continue;
        int rc = want_file(w, sync_join(d->src, name), sync_join(d->dst, name), &st);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int walk_dir(walk *w, const char *src, const char *dst, const adbc_sync_statbuf *st,
                    int depth, const ancestry *up)
{
    sync_job *j = w->j;
    if (depth > j->max_depth)
        return core_fail(ADBC_ELIMIT,
                         "%s: deeper than %d levels on the device (a symlink loop?); raise the "
                         "cap (adbc_sync_opts.max_depth, adbc-snap --max-depth)",
                         src, j->max_depth);
    int rc = sync_mkdirs(dst);
    if (rc < 0)
        return rc;
    j->res.dirs++;
    ancestry here = {up, st->dev, st->ino};
    dirpos d = {src, dst, &here};
    size_t from = w->ds_len;
    rc = list_dir(w, &d);
    size_t to = w->ds_len;
    if (rc == 0)
        rc = resolve_links(w, from, to, &d);
    for (size_t off = from; off < to && rc == 0;) {
        rec r;
        adbc_sync_statbuf cst;
        const char *name;
        get_rec(w, off, &r, &cst, &name);
        off += r.len;
        if (r.kind != K_DIR)
            continue;
        char *csrc = sync_join(src, name), *cdst = sync_join(dst, name);
        if (!csrc || !cdst)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        else
            rc = walk_dir(w, csrc, cdst, &cst, depth + 1, &here);
        core_free(csrc);
        core_free(cdst);
    }
    w->ds_len = from;
    if (rc < 0)
        return rc;
    /* This directory's mode and time, once the files asked for so far are
     * in (every file below it has been asked for by now). */
    if (w->da_len == ATTRS_MAX && (rc = receive_all(w)) < 0)
        return rc;
    char *copy = core_strdup(dst);
    if (!copy)
        return core_fail(ADBC_ENOMEM, "out of memory");
    w->da[w->da_len++] = (dirattr){copy, st->mode, st->mtime, w->asked};
    attrs_due(w);
    return 0;
}

int sync_pull_tree(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                   const adbc_sync_statbuf *root)
{
    walk *w = core_calloc(1, sizeof *w);
    if (!w)
        return core_fail(ADBC_ENOMEM, "out of memory");
    w->s = s;
    w->j = j;
    w->root = remote;
    int rc = sync_ensure(s, sync_job_wait(j));
    if (rc == 0) {
        rc = adbc_sync_open(&w->ls, s->c, sync_job_wait(j));
        if (rc == ADBC_EREFUSED) {
            /* A device that serves one sync session at a time: list on the
             * same one, asking for each directory's files after its listing
             * (they wait in the stack, within its DIRS_MAX). */
            w->ls = s;
            rc = 0;
        }
    }
    if (rc == 0)
        rc = walk_dir(w, remote, local, root, 0, NULL);
    if (rc == 0)
        rc = receive_all(w);
    if (rc < 0) {
        /* Replies still due on the file session are dropped with it. */
        if (w->fl_len > 0)
            sync_abort(s);
        fl_drop(w);
    }
    for (size_t i = 0; i < w->da_len; i++)
        core_free(w->da[i].dst);
    if (w->ls != s)
        adbc_sync_close(w->ls);
    core_free(w->ds);
    core_free(w);
    return rc;
}
