/* SPDX-License-Identifier: Apache-2.0 */
/* Pushing a directory tree: the local tree is walked first (sorted, so
 * progress knows the total and the order is stable; the entry and depth caps
 * apply), then the files go out with the single-file code, their OKAYs
 * collected as they arrive. With ADBC_SYNC_SKIP_SAME (push --sync) the
 * device's lstat of every file is asked for first, in pipelined batches, and
 * files it already has are left out. A tree pull is sync_pull_tree.c.
 *
 * The sync protocol has no mkdir: the device creates a file's missing parent
 * directories itself (fixed_push_mkdir), so only directories that would stay
 * empty, and every directory on devices without that feature, are made with
 * `mkdir -p` over the shell service. */
#include "sync/sync_int.h"
#include "adbc/shell.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MKDIR_CMD_MAX (32 * 1024) /* adb's bound for one mkdir command line */

typedef struct tree_item {
    char *src, *dst;
    int dir;
    int filled;              /* dir: a file will be pushed somewhere below it */
    int has_subdir;
    int same;                /* push --sync: the device has it already */
    struct stat lst;         /* local (l)stat */
} tree_item;

typedef struct tree {
    tree_item *v;
    size_t n, cap;
} tree;

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        core_free(t->v[i].src);
        core_free(t->v[i].dst);
    }
    core_free(t->v);
    memset(t, 0, sizeof *t);
}

/* Append an item taking src and dst (freed on failure). Returns its index. */
static long tree_add(tree *t, char *src, char *dst, int dir)
{
    if (!src || !dst) {
        core_free(src);
        core_free(dst);
        return core_fail(ADBC_ENOMEM, "out of memory");
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        tree_item *nv = core_realloc(t->v, nc * sizeof *nv);
        if (!nv) {
            core_free(src);
            core_free(dst);
            return core_fail(ADBC_ENOMEM, "out of memory");
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

/* The names in a local directory: sorted (so pushes are in a stable
 * order), or as the directory gives them (ADBC_SYNC_DIR_ORDER). */
static int local_names(const char *dir, int sorted, char ***names, size_t *count)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return core_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO, "cannot read directory %s: %s",
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
            char **nv = core_realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = core_fail(ADBC_ENOMEM, "out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        if (!(v[n] = core_strdup(e->d_name))) {
            rc = core_fail(ADBC_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            core_free(v[i]);
        core_free(v);
        return rc;
    }
    if (n > 1 && sorted)
        qsort(v, n, sizeof *v, cmp_name);
    *names = v;
    *count = n;
    return 0;
}

static int walk_local(sync_job *j, tree *t, size_t parent, int depth)
{
    if (depth > j->max_depth)
        return core_fail(ADBC_ELIMIT,
                         "%s: deeper than %d levels (a symlink loop?); raise the cap "
                         "(adbc_sync_opts.max_depth, adbc-snap --max-depth)",
                         t->v[parent].src, j->max_depth);
    char **names;
    size_t count;
    /* adb's order: this directory's files first, its subdirectories after */
    int adb_order = (j->opts->flags & ADBC_SYNC_DIR_ORDER) != 0;
    int rc = local_names(t->v[parent].src, !adb_order, &names, &count);
    if (rc < 0)
        return rc;
    size_t *later = NULL, nlater = 0;
    if (adb_order && count > 0 && !(later = core_malloc(count * sizeof *later)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    for (size_t i = 0; i < count && rc >= 0; i++) {
        if ((rc = sync_job_entry(j, t->v[0].src)) < 0)
            break;
        long k = tree_add(t, sync_join(t->v[parent].src, names[i]),
                          sync_join(t->v[parent].dst, names[i]), 0);
        if (k < 0) {
            rc = (int)k;
            break;
        }
        tree_item *it = &t->v[k];
        struct stat st;
        if (lstat(it->src, &st) != 0) {
            rc = core_fail(ADBC_EIO, "cannot stat %s: %s", it->src, strerror(errno));
            break;
        }
        if (S_ISLNK(st.st_mode) && (j->opts->flags & ADBC_SYNC_FOLLOW_LINKS) &&
            stat(it->src, &st) != 0) {
            rc = core_fail(ADBC_ENOTFOUND, "%s: the link's target is missing: %s", it->src,
                           strerror(errno));
            break;
        }
        it->lst = st;
        if (S_ISDIR(st.st_mode)) {
            it->dir = 1;
            t->v[parent].has_subdir = 1;
            if (later) {
                later[nlater++] = (size_t)k;
                continue;
            }
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
    for (size_t i = 0; i < nlater && rc >= 0; i++) {
        rc = walk_local(j, t, later[i], depth + 1);
        if (rc == 0 && t->v[later[i]].filled)
            t->v[parent].filled = 1;
    }
    core_free(later);
    for (size_t i = 0; i < count; i++)
        core_free(names[i]);
    core_free(names);
    return rc;
}

/* Run `mkdir -p` on the device for the queued directories. The command
 * reads no input, so stdin is left alone: it may finish (and the device close
 * the stream) before anything more could be written. */
static int run_mkdir(adbc_sync *s, sync_job *j, const char *cmd)
{
    if (j->flags & ADBC_SYNC_FLAG_DRY_RUN)
        return 0; /* a dry run changes nothing on the device */
    adbc_run_result r;
    int rc = adbc_run(&r, s->c, ADBC_SHELL_AUTO, cmd, NULL, 0, 1u << 20, sync_job_wait(j));
    if (rc < 0) {
        char prev[768];
        snprintf(prev, sizeof prev, "%s", adbc_last_error());
        return core_fail(rc, "creating directories on the device: %s", prev);
    }
    /* Without shell v2 there is no exit status: any output means an error. */
    int code = r.exit_code;
    const char *said = r.err_len ? (const char *)r.err : (const char *)r.out;
    if (code > 0 || (code < 0 && r.out_len + r.err_len > 0))
        rc = core_fail(ADBC_EREMOTE, "creating directories on the device failed%s: %.300s",
                       code > 0 ? "" : " (it printed an error)", said);
    adbc_run_result_clear(&r);
    return rc;
}

static int make_remote_dirs(adbc_sync *s, sync_job *j, tree *t)
{
    char *cmd = core_malloc(MKDIR_CMD_MAX + ADBC_SYNC_PATH_MAX * 4 + 16);
    if (!cmd)
        return core_fail(ADBC_ENOMEM, "out of memory");
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
        if ((rc = adbc_shell_quote(&q, it->dst)) < 0)
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
            rc = core_fail(ADBC_EINVAL, "remote path too long: %.80s...", it->dst);
        }
        core_free(q);
    }
    if (rc == 0 && len > 0)
        rc = run_mkdir(s, j, cmd);
    core_free(cmd);
    return rc;
}

/* push --sync: mark the files the device already has (same size and
 * mtime, adb's rule for a tree), asking in batches of pipelined lstats. */
static int mark_same(adbc_sync *s, sync_job *j, tree *t)
{
    enum { BATCH = SYNC_QMAX - 1 };
    const char *remote[BATCH];
    const struct stat *local[BATCH];
    size_t idx[BATCH];
    uint8_t same[BATCH];
    size_t i = 1;
    while (i < t->n) {
        size_t n = 0;
        for (; i < t->n && n < BATCH; i++) {
            tree_item *it = &t->v[i];
            if (it->dir || (!S_ISREG(it->lst.st_mode) && !S_ISLNK(it->lst.st_mode)))
                continue;
            remote[n] = it->dst;
            local[n] = &it->lst;
            idx[n++] = i;
        }
        int rc = sync_same_on_device(s, j, remote, local, n, 1, same);
        if (rc < 0)
            return rc;
        for (size_t k = 0; k < n; k++) {
            tree_item *it = &t->v[idx[k]];
            if (!same[k])
                continue;
            it->same = 1;
            j->p.files_total--;
            if (S_ISREG(it->lst.st_mode))
                j->p.total -= (uint64_t)it->lst.st_size;
        }
    }
    return 0;
}

int sync_push_tree(adbc_sync *s, sync_job *j, const char *local, const char *remote)
{
    tree t = {0};
    long root = tree_add(&t, core_strdup(local), core_strdup(remote), 1);
    if (root < 0)
        return (int)root;
    int rc = walk_local(j, &t, 0, 0);
    if (rc == 0 && (j->opts->flags & ADBC_SYNC_SKIP_SAME))
        rc = mark_same(s, j, &t);
    int list_only = (j->opts->flags & ADBC_SYNC_LIST_ONLY) != 0;
    if (rc == 0 && !list_only)
        rc = make_remote_dirs(s, j, &t);
    for (size_t i = 1; i < t.n && rc == 0; i++) {
        tree_item *it = &t.v[i];
        if (it->dir)
            continue;
        if (it->same || (!S_ISREG(it->lst.st_mode) && !S_ISLNK(it->lst.st_mode))) {
            j->res.skipped++; /* sockets, fifos, devices: as adb, left out */
            continue;
        }
        rc = list_only ? sync_job_listed(j, it->src, it->dst, &it->lst)
                       : sync_push_entry(s, j, it->src, it->dst, &it->lst);
    }
    if (rc == 0)
        rc = sync_push_collect(s, j, 0);
    tree_free(&t);
    return rc;
}
