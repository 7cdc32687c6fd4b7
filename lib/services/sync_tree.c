/* SPDX-License-Identifier: Apache-2.0 */
/* Directory trees: walking the local tree for a push and the device's tree
 * (LIST/LIS2) for a pull, building the list of files first so progress knows
 * the total, then moving the files one by one with the single-file code.
 *
 * The sync protocol has no mkdir: the device creates a file's missing parent
 * directories itself (fixed_push_mkdir), so only directories that would stay
 * empty, and every directory on devices without that feature, are made with
 * `mkdir -p` over the shell service. */
#include "services/sync_int.h"
#include "adbc/shell.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TREE_DEPTH_MAX 64
#define MKDIR_CMD_MAX (32 * 1024) /* adb's bound for one mkdir command line */
#define PULL_AHEAD 16              /* RECVs asked for ahead (< SYNC_QMAX) */

typedef struct tree_item {
    char *src, *dst;
    int dir;
    int filled;              /* dir: a file will be pushed somewhere below it */
    int has_subdir;
    struct stat lst;         /* push: local (l)stat */
    adbc_sync_statbuf rst;   /* pull: the device's stat */
} tree_item;

typedef struct tree {
    tree_item *v;
    size_t n, cap;
} tree;

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        adbc_free(t->v[i].src);
        adbc_free(t->v[i].dst);
    }
    adbc_free(t->v);
    memset(t, 0, sizeof *t);
}

/* Append an item taking src and dst (freed on failure). Returns its index. */
static long tree_add(tree *t, char *src, char *dst, int dir)
{
    if (!src || !dst) {
        adbc_free(src);
        adbc_free(dst);
        return adbc_fail(ADBC_ENOMEM, "out of memory");
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        tree_item *nv = adbc_realloc(t->v, nc * sizeof *nv);
        if (!nv) {
            adbc_free(src);
            adbc_free(dst);
            return adbc_fail(ADBC_ENOMEM, "out of memory");
        }
        t->v = nv;
        t->cap = nc;
    }
    tree_item *it = &t->v[t->n];
    memset(it, 0, sizeof *it);
    it->src = src;
    it->dst = dst;
    it->dir = dir;
    return (long)t->n++;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dotdot(const char *n)
{
    return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* ---- push ---- */

/* Sorted names in a local directory (so pushes are in a stable order). */
static int local_names(const char *dir, char ***names, size_t *count)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return adbc_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO, "cannot read directory %s: %s",
                         dir, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (dotdot(e->d_name))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            char **nv = adbc_realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = adbc_fail(ADBC_ENOMEM, "out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        if (!(v[n] = adbc_strdup(e->d_name))) {
            rc = adbc_fail(ADBC_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            adbc_free(v[i]);
        adbc_free(v);
        return rc;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_name);
    *names = v;
    *count = n;
    return 0;
}

static int walk_local(sync_job *j, tree *t, size_t parent, int depth)
{
    if (depth > TREE_DEPTH_MAX)
        return adbc_fail(ADBC_EINVAL, "%s: deeper than %d levels (a symlink loop?)",
                         t->v[parent].src, TREE_DEPTH_MAX);
    char **names;
    size_t count;
    int rc = local_names(t->v[parent].src, &names, &count);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < count && rc >= 0; i++) {
        long k = tree_add(t, sync_join(t->v[parent].src, names[i]),
                          sync_join(t->v[parent].dst, names[i]), 0);
        if (k < 0) {
            rc = (int)k;
            break;
        }
        tree_item *it = &t->v[k];
        struct stat st;
        if (lstat(it->src, &st) != 0) {
            rc = adbc_fail(ADBC_EIO, "cannot stat %s: %s", it->src, strerror(errno));
            break;
        }
        if (S_ISLNK(st.st_mode) && (j->opts->flags & ADBC_SYNC_FOLLOW_LINKS) &&
            stat(it->src, &st) != 0) {
            rc = adbc_fail(ADBC_ENOTFOUND, "%s: the link's target is missing: %s", it->src,
                           strerror(errno));
            break;
        }
        it->lst = st;
        if (S_ISDIR(st.st_mode)) {
            it->dir = 1;
            t->v[parent].has_subdir = 1;
            rc = walk_local(j, t, (size_t)k, depth + 1);
            if (rc == 0 && t->v[k].filled)
                t->v[parent].filled = 1;
        } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            t->v[parent].filled = 1;
            j->p.files_total++;
            if (S_ISREG(st.st_mode))
                j->p.total += (uint64_t)st.st_size;
        }
    }
    for (size_t i = 0; i < count; i++)
        adbc_free(names[i]);
    adbc_free(names);
    return rc;
}

/* Run `mkdir -p` on the device for the queued directories. The command
 * reads no input, so stdin is left alone: it may finish (and the device close
 * the stream) before anything more could be written. */
static int run_mkdir(adbc_sync *s, sync_job *j, const char *cmd)
{
    if (j->flags & ADBC_SYNC_FLAG_DRY_RUN)
        return 0; /* a dry run changes nothing on the device */
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, s->c, cmd, NULL, j->timeout_ms);
    char out[512];
    size_t olen = 0;
    while (rc == 0) {
        int fd;
        char buf[4096];
        ssize_t n = adbc_shell_read(sh, &fd, buf, sizeof buf, j->timeout_ms);
        if (n < 0)
            rc = (int)n;
        if (n <= 0)
            break;
        size_t k = (size_t)n < sizeof out - 1 - olen ? (size_t)n : sizeof out - 1 - olen;
        memcpy(out + olen, buf, k); /* keep the start of what it said */
        olen += k;
    }
    out[olen] = '\0';
    if (rc < 0) {
        char prev[768];
        snprintf(prev, sizeof prev, "%s", adbc_last_error());
        if (sh)
            adbc_shell_close(sh);
        return adbc_fail(rc, "creating directories on the device: %s", prev);
    }
    int code = adbc_shell_exit_code(sh);
    adbc_shell_close(sh);
    /* Without shell v2 there is no exit status: any output means an error. */
    if (code > 0 || (code < 0 && olen > 0))
        return adbc_fail(ADBC_EREMOTE, "creating directories on the device failed%s: %.300s",
                         code > 0 ? "" : " (it printed an error)", out);
    return 0;
}

static int make_remote_dirs(adbc_sync *s, sync_job *j, tree *t)
{
    char *cmd = adbc_malloc(MKDIR_CMD_MAX + ADBC_SYNC_PATH_MAX * 4 + 16);
    if (!cmd)
        return adbc_fail(ADBC_ENOMEM, "out of memory");
    size_t len = 0;
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        tree_item *it = &t->v[i];
        if (!it->dir)
            continue;
        /* With fixed_push_mkdir the device makes a file's parents; a leaf
         * directory with nothing pushed into it needs mkdir. Without the
         * feature every directory does (adb works around the same bug). */
        if (s->mkdir_fixed && (it->filled || it->has_subdir))
            continue;
        char *q;
        if ((rc = adbc_shell_quote(it->dst, &q)) < 0)
            break;
        size_t ql = strlen(q);
        if (len > 0 && len + ql + 1 > MKDIR_CMD_MAX) {
            rc = run_mkdir(s, j, cmd);
            len = 0;
        }
        if (rc == 0 && ql <= ADBC_SYNC_PATH_MAX * 4) {
            if (len == 0)
                len = (size_t)sprintf(cmd, "mkdir -p");
            cmd[len++] = ' ';
            memcpy(cmd + len, q, ql + 1);
            len += ql;
            j->res.dirs++;
        } else if (rc == 0) {
            rc = adbc_fail(ADBC_EINVAL, "remote path too long: %.80s...", it->dst);
        }
        adbc_free(q);
    }
    if (rc == 0 && len > 0)
        rc = run_mkdir(s, j, cmd);
    adbc_free(cmd);
    return rc;
}

int sync_push_tree(adbc_sync *s, sync_job *j, const char *local, const char *remote)
{
    tree t = {0};
    long root = tree_add(&t, adbc_strdup(local), adbc_strdup(remote), 1);
    if (root < 0)
        return (int)root;
    int rc = walk_local(j, &t, 0, 0);
    if (rc == 0)
        rc = make_remote_dirs(s, j, &t);
    for (size_t i = 1; i < t.n && rc == 0; i++) {
        tree_item *it = &t.v[i];
        if (it->dir)
            continue;
        if (!S_ISREG(it->lst.st_mode) && !S_ISLNK(it->lst.st_mode)) {
            j->res.skipped++; /* sockets, fifos, devices: as adb, left out */
            continue;
        }
        rc = sync_push_entry(s, j, it->src, it->dst, &it->lst);
    }
    if (rc == 0)
        rc = sync_push_collect(s, j, 0);
    tree_free(&t);
    return rc;
}

/* ---- pull ---- */

typedef struct rentry {
    char *name;
    adbc_sync_statbuf st;
    int error;
} rentry;

typedef struct rlist {
    rentry *v;
    size_t n, cap;
    int rc;
} rlist;

static int collect_entry(void *user, const adbc_sync_dirent *e)
{
    rlist *l = user;
    if (dotdot(e->name))
        return 0;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 32;
        rentry *nv = adbc_realloc(l->v, nc * sizeof *nv);
        if (!nv) {
            l->rc = adbc_fail(ADBC_ENOMEM, "out of memory");
            return 1;
        }
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n].name = adbc_strdup(e->name))) {
        l->rc = adbc_fail(ADBC_ENOMEM, "out of memory");
        return 1;
    }
    l->v[l->n].st = e->st;
    l->v[l->n].error = e->error;
    l->n++;
    return 0;
}

static int cmp_rentry(const void *a, const void *b)
{
    return strcmp(((const rentry *)a)->name, ((const rentry *)b)->name);
}

static void rlist_free(rlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        adbc_free(l->v[i].name);
    adbc_free(l->v);
}

/* Directories being walked, to stop at a symlink that loops back (v2 only:
 * v1 has no inode numbers; the depth limit catches those loops). */
typedef struct ancestry {
    const struct ancestry *up;
    uint64_t dev, ino;
} ancestry;

static int loops(const ancestry *a, const adbc_sync_statbuf *st)
{
    if (!st->v2)
        return 0;
    for (; a; a = a->up)
        if (a->dev == st->dev && a->ino == st->ino)
            return 1;
    return 0;
}

static int pullable(uint32_t mode)
{
    return S_ISREG(mode) || S_ISBLK(mode) || S_ISCHR(mode);
}

static int walk_remote(adbc_sync *s, sync_job *j, tree *t, size_t parent, int depth,
                       const ancestry *up)
{
    if (depth > TREE_DEPTH_MAX)
        return adbc_fail(ADBC_EINVAL, "%s: deeper than %d levels on the device (a symlink "
                                      "loop?)",
                         t->v[parent].src, TREE_DEPTH_MAX);
    ancestry here = {up, t->v[parent].rst.dev, t->v[parent].rst.ino};
    rlist l = {0};
    int rc = sync_list_raw(s, t->v[parent].src, collect_entry, &l, j->timeout_ms);
    if (rc == 0)
        rc = l.rc;
    if (rc == 0 && l.n > 1)
        qsort(l.v, l.n, sizeof *l.v, cmp_rentry);
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        rentry *e = &l.v[i];
        adbc_sync_statbuf st = e->st;
        if (e->error) {
            j->res.skipped++; /* the device could not lstat it */
            continue;
        }
        char *src = sync_join(t->v[parent].src, e->name);
        if (src && S_ISLNK(st.mode)) {
            /* RECV reads through links, so follow them as adb does. */
            int src_rc = adbc_sync_stat(s, src, &st, j->timeout_ms);
            if (src_rc < 0) {
                adbc_free(src);
                if (!s->st) { /* the session failed, not just the stat */
                    rc = src_rc;
                    break;
                }
                j->res.skipped++; /* a dangling link */
                continue;
            }
        }
        int dir = S_ISDIR(st.mode);
        if (!dir && !pullable(st.mode)) {
            adbc_free(src);
            j->res.skipped++;
            continue;
        }
        if (dir && loops(&here, &st)) {
            adbc_free(src);
            j->res.skipped++;
            continue;
        }
        long k = tree_add(t, src, sync_join(t->v[parent].dst, e->name), dir);
        if (k < 0) {
            rc = (int)k;
            break;
        }
        t->v[k].rst = st;
        if (dir) {
            rc = walk_remote(s, j, t, (size_t)k, depth + 1, &here);
        } else {
            j->p.files_total++;
            j->p.total += st.size;
        }
    }
    rlist_free(&l);
    return rc;
}

static void set_dir_attrs(sync_job *j, const tree_item *it)
{
    if ((j->opts->flags & ADBC_SYNC_NO_ATTRS) || it->rst.mode == 0)
        return;
    /* Best effort, like adb -a: a directory we cannot chmod is not an error
     * worth failing a finished pull for. */
    if (chmod(it->dst, (mode_t)(it->rst.mode & 0777) & ~j->umask) != 0)
        return;
    struct timespec ts[2] = {{.tv_sec = (time_t)it->rst.mtime}, {.tv_sec = (time_t)it->rst.mtime}};
    utimensat(AT_FDCWD, it->dst, ts, 0);
}

int sync_pull_tree(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                   const adbc_sync_statbuf *root)
{
    tree t = {0};
    long r = tree_add(&t, adbc_strdup(remote), adbc_strdup(local), 1);
    if (r < 0)
        return (int)r;
    t.v[0].rst = *root;
    int rc = walk_remote(s, j, &t, 0, 0, NULL);
    if (rc == 0)
        rc = sync_ensure(s, j->timeout_ms);
    /* Ask for up to PULL_AHEAD files before the first has arrived, so small
     * files do not each cost a round trip. The first failure ends the pull
     * (and the device ends the session), so nothing needs re-asking. */
    size_t next = 0, inflight = 0;
    for (size_t i = 0; i < t.n && rc == 0; i++) {
        tree_item *it = &t.v[i];
        if (it->dir) {
            if ((rc = sync_mkdirs(it->dst)) == 0)
                j->res.dirs++;
            continue;
        }
        if (next <= i)
            next = i;
        while (rc == 0 && next < t.n && inflight < PULL_AHEAD) {
            if (!t.v[next].dir) {
                rc = sync_pull_request(s, j, t.v[next].src);
                inflight++;
            }
            next++;
        }
        if (rc == 0)
            rc = sync_pull_receive(s, j, it->src, it->dst, &it->rst);
        inflight--;
    }
    /* Directory times last, deepest first: writing files into a directory
     * changes its mtime. */
    for (size_t i = t.n; i-- > 0 && rc == 0;)
        if (t.v[i].dir)
            set_dir_attrs(j, &t.v[i]);
    tree_free(&t);
    return rc;
}
