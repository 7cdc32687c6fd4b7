/* SPDX-License-Identifier: Apache-2.0 */
/* Pulling files: RECV <path> (or RCV2 <path> with compression flags), then
 * DATA chunks and DONE, or FAIL. Compressed, the chunks carry one stream,
 * decompressed through j->zbuf on its way to the file.
 *
 * The device streams without waiting for us; DATA is written to disk straight
 * out of the receive buffer. The file goes into a temporary beside the target
 * and is renamed over it only once DONE arrived and every byte is on disk, so
 * a pull that fails for any reason (device gone, FAIL, local disk full)
 * leaves no partial file under the target name. */
#include "sync/sync_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

static int local_error(int e)
{
    return e == EACCES || e == EPERM ? ADBC_EPERM : ADBC_EIO;
}

/* Write the gathered pieces; iov is consumed. */
int sync_write_iov(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Reserve the file's blocks ahead of the writes, without changing its size:
 * the file system then skips its per-write block reservation (ext4 writes
 * about a quarter faster). Best effort: where it is not supported the
 * writes go on as before and report what goes wrong themselves.
 *
 * The size comes from the device, so the reservation is bounded twice: it
 * runs at most PREALLOC_AHEAD beyond what has been written (a pull killed
 * outright, where no cleanup runs, leaves a temporary holding at most that
 * much unwritten space, whatever size the device claimed), and never takes
 * more than half of the free space. Small files are written as they come:
 * two more system calls per file would cost a tree of them more than the
 * reservation saves. */
#define PREALLOC_MIN (1024 * 1024)
#define PREALLOC_AHEAD (16 * 1024 * 1024)

/* Written bytes so far: reserve the next step when they come near the end
 * of the reservation. */
void sync_reserve_ahead(int fd, sync_reserve *r, uint64_t written)
{
    if (!r->on || r->reserved >= r->size || written + PREALLOC_AHEAD / 2 < r->reserved)
        return;
    uint64_t end = written + PREALLOC_AHEAD;
    if (end > r->size)
        end = r->size;
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0) {
        r->on = 0;
        return;
    }
    uint64_t free_bytes = (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize;
    if (end - r->reserved > free_bytes / 2 ||
        fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)r->reserved, (off_t)(end - r->reserved)) != 0) {
        r->on = 0;
        return;
    }
    r->reserved = end;
}

static void reserve_init(int fd, sync_reserve *r, uint64_t size)
{
    r->on = size >= PREALLOC_MIN && size <= (uint64_t)INT64_MAX;
    r->size = size;
    r->reserved = 0;
    sync_reserve_ahead(fd, r, 0);
}

/* A failure while receiving: say how far it got and that no file was made. */
int sync_pull_arrived_fail(sync_job *j, int rc, const char *local)
{
    char prev[768];
    snprintf(prev, sizeof prev, "%s", adbc_last_error());
    if (!local)
        return core_fail(rc, "%s; %llu bytes had arrived, each given to the write function",
                         prev, (unsigned long long)j->p.file_bytes);
    return core_fail(rc, "%s; %llu bytes had arrived; nothing was written to %s", prev,
                     (unsigned long long)j->p.file_bytes, local);
}

int sync_pull_write_failed(adbc_sync *s, int e, const char *local)
{
    /* The device keeps streaming: end the session to stop it. */
    sync_abort(s);
    return core_fail(local_error(e), "cannot write %s: %s%s", local, strerror(e),
                     e == ENOSPC || e == EDQUOT ? " (local disk full)" : "");
}

int sync_sink_write(adbc_sync *s, sync_job *j, sync_sink *k, struct iovec *iov, int n)
{
    if (k->fd >= 0)
        return sync_write_iov(k->fd, iov, n) == 0 ? 0 : sync_pull_write_failed(s, errno, k->local);
    uint64_t given = j->p.file_bytes;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len == 0)
            continue;
        int rc = k->fn(k->user, iov[i].iov_base, iov[i].iov_len);
        if (rc == 0) {
            given += iov[i].iov_len;
            continue;
        }
        sync_abort(s); /* the device keeps streaming: end the session to stop it */
        if (rc > 0)
            return core_fail(ADBC_EINVAL, "pull %s: the write function returned %d; return 0 "
                             "when it took the bytes, or a negative ADBC_E* code",
                             k->remote, rc);
        return core_fail(rc, "pull %s: the write function failed (%s) after %llu bytes; the "
                         "pull stopped there", k->remote, adbc_strerror(rc),
                         (unsigned long long)given);
    }
    return 0;
}

/* Decompress one DATA piece into the sink. */
static int inflate_piece(adbc_sync *s, sync_job *j, adbc_sync_zdec *d, sync_sink *sk,
                         const adbc_sync_event *ev)
{
    const uint8_t *in = ev->data;
    size_t in_len = ev->len;
    j->res.wire_bytes += ev->len;
    size_t cap;
    do {
        uint8_t *o = j->zbuf;
        cap = SYNC_ZBUF;
        int rc = sync_zdec_run(d, &in, &in_len, &o, &cap);
        if (rc < 0) {
            sync_abort(s);
            return sync_pull_arrived_fail(j, rc, sk->local);
        }
        size_t k = SYNC_ZBUF - cap;
        struct iovec v = {j->zbuf, k};
        if (k > 0 && (rc = sync_sink_write(s, j, sk, &v, 1)) < 0)
            return rc;
        j->p.file_bytes += k;
        j->p.bytes += k;
        j->res.bytes += k;
        if (sk->res)
            sync_reserve_ahead(sk->fd, sk->res, j->p.file_bytes);
    } while (in_len > 0 || cap == 0);
    int rc = sync_job_report(j, 0);
    if (rc < 0)
        sync_abort(s); /* stop the device's stream */
    return rc;
}

/* The reply to a compressed RCV2. */
static int receive_z(adbc_sync *s, sync_job *j, sync_sink *sk, const char *remote,
                     uint64_t expected)
{
    adbc_sync_zdec *d;
    int rc = sync_zdec_new(&d, j->flags & ADBC_SYNC_FLAGS_COMP, expected);
    if (rc < 0) {
        sync_abort(s);
        return rc;
    }
    for (;;) {
        adbc_sync_event ev;
        rc = sync_next(s, &ev, sync_job_wait(j));
        if (rc < 0) {
            rc = sync_pull_arrived_fail(j, rc, sk->local);
            break;
        }
        if (ev.type == ADBC_SYNC_EV_DATA) {
            if ((rc = inflate_piece(s, j, d, sk, &ev)) < 0)
                break;
            continue;
        }
        if (ev.type == ADBC_SYNC_EV_DONE) {
            rc = sync_zdec_finish(d);
            if (rc < 0 && sk->local)
                rc = core_fail(rc, "pull %s: %s; nothing was written to %s", remote,
                               adbc_last_error(), sk->local);
            else if (rc < 0)
                rc = core_fail(rc, "pull %s: %s; the write function had %llu bytes of it", remote,
                               adbc_last_error(), (unsigned long long)j->p.file_bytes);
        } else {
            rc = core_fail(ADBC_EREMOTE, "pull %s: the device failed: %s", remote, ev.text);
        }
        break;
    }
    sync_zdec_free(d);
    return rc;
}

/* Receive the DATA/DONE reply into the sink. The DATA pieces already in
 * the receive buffer go to a file in one writev. */
static int receive(adbc_sync *s, sync_job *j, sync_sink *sk, const char *remote)
{
    struct iovec iov[SYNC_PULL_IOV];
    for (;;) {
        adbc_sync_event ev;
        int rc = sync_next(s, &ev, sync_job_wait(j));
        int n = 0;
        size_t bytes = 0;
        while (rc == 1 && ev.type == ADBC_SYNC_EV_DATA) {
            iov[n].iov_base = (void *)ev.data;
            iov[n].iov_len = ev.len;
            bytes += ev.len;
            if (++n == SYNC_PULL_IOV) {
                rc = 0;
                break;
            }
            rc = sync_next_buffered(s, &ev);
        }
        /* Pieces gathered before a failure are still in the receive
         * buffer; writing them costs nothing and the file is dropped (a
         * stream's caller gets every byte that came before the failure). */
        if (n > 0) {
            int w = sync_sink_write(s, j, sk, iov, n);
            if (w < 0)
                return w;
        }
        j->p.file_bytes += bytes;
        j->p.bytes += bytes;
        j->res.bytes += bytes;
        j->res.wire_bytes += bytes;
        if (sk->res)
            sync_reserve_ahead(sk->fd, sk->res, j->p.file_bytes);
        if (bytes && rc >= 0) {
            int r = sync_job_report(j, 0);
            if (r < 0) {
                sync_abort(s); /* stop the device's stream */
                return r;
            }
        }
        if (rc < 0)
            return sync_pull_arrived_fail(j, rc, sk->local);
        if (rc == 1 && ev.type == ADBC_SYNC_EV_DONE)
            return 0;
        if (rc == 1 && ev.type == ADBC_SYNC_EV_FAIL)
            return core_fail(ADBC_EREMOTE, "pull %s: the device failed: %s", remote, ev.text);
    }
}

/* Mode and mtime from the device, as `adb pull -a` sets them: the mode bits
 * through the umask. Without them the file gets what a new file would. */
static int set_attrs(sync_job *j, int fd, const adbc_sync_statbuf *st, const char *local)
{
    int keep = !(j->opts->flags & ADBC_SYNC_NO_ATTRS) && st->mode != 0;
    mode_t mode = keep ? (mode_t)(st->mode & 0777) : 0666;
    if (fchmod(fd, mode & ~j->umask) != 0)
        return core_fail(local_error(errno), "cannot set the mode of %s: %s", local,
                         strerror(errno));
    if (keep) {
        struct timespec ts[2] = {{.tv_sec = (time_t)st->mtime}, {.tv_sec = (time_t)st->mtime}};
        if (futimens(fd, ts) != 0)
            return core_fail(local_error(errno), "cannot set the time of %s: %s", local,
                             strerror(errno));
    }
    return 0;
}

int sync_pull_request(adbc_sync *s, sync_job *j, const char *remote)
{
    size_t len = strlen(remote);
    int rc;
    if (j->flags & ADBC_SYNC_FLAGS_COMP) {
        s->rx_copy = 1; /* for the session's life: see next_event in sync.c */
        if (len > ADBC_SYNC_PATH_MAX)
            return core_fail(ADBC_EINVAL, "RCV2 request: the path is %zu bytes long; the device "
                             "accepts at most %d", len, ADBC_SYNC_PATH_MAX);
        rc = sync_tx_room(s, ADBC_SYNC_HDR + len + ADBC_SYNC_RECV2_SETUP, sync_job_wait(j));
        if (rc < 0)
            return rc;
        long n = sync_enc_recv2(s->tx + s->tx_len, SYNC_TX_CAP - s->tx_len, remote, len,
                                     j->flags & ADBC_SYNC_FLAGS_COMP);
        if (n < 0)
            return (int)n;
        s->tx_len += (size_t)n;
    } else {
        rc = sync_put_req(s, ADBC_SYNC_RECV, remote, len, sync_job_wait(j));
        if (rc < 0)
            return rc;
    }
    char *what = core_malloc(len + 8);
    if (what)
        snprintf(what, len + 8, "pull %s", remote);
    return sync_expect(s, ADBC_SYNC_X_RECV, ADBC_SYNC_RECV, what);
}

/* What is at the local path decides how a pulled file is written (as adb
 * does, a pull writes through what is there instead of replacing it):
 * nothing or a regular file gets the temporary-then-rename; a symlink is
 * followed (to any depth, dangling or not) and its target gets the same
 * treatment, in the target's directory; a FIFO or a device node is opened
 * and written in place (there is no atomicity to have: *inplace = 1); a
 * socket or a directory is refused. *final: the path to write (malloc'd). */
#define LINK_DEPTH_MAX 40
int sync_pull_dest(const char *local, char **final, int *inplace)
{
    *final = NULL;
    *inplace = 0;
    char *path = core_strdup(local);
    for (int depth = 0; path; depth++) {
        struct stat st;
        if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) {
            *final = path; /* missing (or unreadable: creating the temporary says why) */
            return 0;
        }
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
            *final = path;
            *inplace = 1;
            return 0;
        }
        if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)) {
            int rc = core_fail(ADBC_EINVAL, "cannot pull into %s: a %s is in the way", path,
                               S_ISDIR(st.st_mode) ? "directory" : "socket");
            core_free(path);
            return rc;
        }
        /* a symlink: where it points, relative to its own directory */
        if (depth == LINK_DEPTH_MAX) {
            int rc = core_fail(ADBC_EINVAL, "cannot pull into %s: more than %d levels of "
                                            "symbolic links", local, LINK_DEPTH_MAX);
            core_free(path);
            return rc;
        }
        char to[4096];
        ssize_t n = readlink(path, to, sizeof to - 1);
        if (n < 0) {
            int rc = core_fail(local_error(errno), "cannot read the link %s: %s", path,
                               strerror(errno));
            core_free(path);
            return rc;
        }
        to[n] = '\0';
        char *next;
        const char *slash = strrchr(path, '/');
        if (to[0] == '/' || !slash) {
            next = core_strdup(to);
        } else {
            size_t dl = (size_t)(slash - path) + 1;
            next = core_malloc(dl + (size_t)n + 1);
            if (next) {
                memcpy(next, path, dl);
                memcpy(next + dl, to, (size_t)n + 1);
            }
        }
        core_free(path);
        path = next;
    }
    return core_fail(ADBC_ENOMEM, "out of memory");
}

/* Open a FIFO or device node for writing. Non-blocking first: a FIFO that
 * nobody reads would otherwise block the open for ever. */
static int open_inplace(const char *path, int *fd)
{
    int f = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        int e = errno;
        if (e == ENXIO)
            return core_fail(ADBC_EIO, "cannot write to %s: nothing is reading that FIFO", path);
        return core_fail(local_error(e), "cannot open %s: %s", path, strerror(e));
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0)
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    return 0;
}

/* A file arrived whole: counted, and its last progress report. */
static int pulled(sync_job *j)
{
    j->res.files++;
    j->p.files++;
    j->p.file_done = 1;
    return sync_job_report(j, 1);
}

/* Written in place into a FIFO or device: no temporary, no mode or time. */
static int receive_inplace(adbc_sync *s, sync_job *j, const char *remote, const char *path)
{
    int fd = -1;
    int rc = open_inplace(path, &fd);
    if (rc < 0) {
        sync_abort(s); /* its reply is on the way: drop the session */
        return rc;
    }
    sync_sink sk = {.fd = fd, .local = path};
    rc = receive(s, j, &sk, remote);
    if (close(fd) != 0 && rc == 0)
        rc = core_fail(local_error(errno), "cannot write %s: %s", path, strerror(errno));
    return rc < 0 ? rc : pulled(j);
}

int sync_pull_receive(adbc_sync *s, sync_job *j, const char *remote, const char *target,
                      const adbc_sync_statbuf *st)
{
    j->p.src = remote;
    j->p.dst = target;
    j->p.file_bytes = 0;
    j->p.file_total = st->size;
    j->p.file_done = 0;
    char *local;
    int inplace;
    int rc = sync_pull_dest(target, &local, &inplace);
    if (rc < 0) {
        sync_abort(s);
        return rc;
    }
    if (inplace) {
        rc = receive_inplace(s, j, remote, local);
        core_free(local);
        return rc;
    }
    core_tmpfile tf;
    rc = core_tmpfile_open(&tf, local);
    if (rc < 0) {
        core_free(local);
        sync_abort(s); /* its reply is on the way: drop the session */
        return rc;
    }
    int fd = tf.fd;
    sync_reserve rs;
    reserve_init(fd, &rs, st->size);
    sync_sink sk = {.fd = fd, .res = &rs, .local = local};
    if (j->flags & ADBC_SYNC_FLAGS_COMP) {
        rc = receive_z(s, j, &sk, remote, st->size);
    } else {
        rc = sync_pull_direct(s, j, fd, &rs, remote, local);
        if (rc == 0)
            rc = receive(s, j, &sk, remote);
    }
    /* A file that shrank on the device since its stat keeps no blocks
     * reserved beyond its end: truncating to its own size releases them
     * (best effort, like the reservation: the bytes are right either way). */
    if (rc == 0 && rs.reserved > j->p.file_bytes)
        (void)!ftruncate(fd, (off_t)j->p.file_bytes);
    if (rc == 0)
        rc = set_attrs(j, fd, st, local);
    /* Like adb, no fsync: the file is complete when moved into place. */
    if (rc == 0)
        rc = core_tmpfile_commit(&tf, local, 0);
    else
        core_tmpfile_abort(&tf);
    core_free(local);
    return rc < 0 ? rc : pulled(j);
}

int sync_pull_one(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                  const adbc_sync_statbuf *st)
{
    int rc = sync_ensure(s, sync_job_wait(j));
    if (rc == 0)
        rc = sync_pull_request(s, j, remote);
    /* The request goes out now, not with the first read: the device then
     * starts sending while the temporary file is made and its first blocks
     * reserved (an ext4 reservation of 16 MiB took 12 ms in one run). A
     * session the device already ended keeps its FAIL for the receive. */
    if (rc == 0 && (rc = sync_flush(s, sync_job_wait(j))) < 0 && s->peer_closed)
        rc = 0;
    if (rc == 0)
        rc = sync_pull_receive(s, j, remote, local, st);
    return rc;
}

static int pullable(uint32_t mode)
{
    /* As adb: regular files and device nodes are read; the rest skipped. */
    return S_ISREG(mode) || S_ISBLK(mode) || S_ISCHR(mode);
}

/* Where a single file goes, checked before any byte moves: an existing
 * directory (or a path ending in '/', which must be one) takes the file
 * under the remote's name; missing parents are created; what is at the path
 * must be something a file can be written to (sync_pull_dest). */
static int file_target(const char *remote, const char *local, char **out)
{
    *out = NULL;
    size_t len = strlen(local);
    struct stat sb;
    int found = stat(local, &sb) == 0;
    int e = found ? ENOTDIR : errno;
    int isdir = found && S_ISDIR(sb.st_mode);
    if (local[len - 1] == '/' && !isdir)
        return core_fail(e == ENOENT ? ADBC_ENOTFOUND : ADBC_EINVAL,
                         "cannot pull into %s: %s (nothing was pulled)", local,
                         e == ENOENT ? "no such local directory" : "not a directory");
    char *target;
    if (isdir) {
        size_t rl = strlen(remote);
        while (rl > 1 && remote[rl - 1] == '/')
            rl--;
        size_t b = rl;
        while (b > 0 && remote[b - 1] != '/')
            b--;
        char *name = core_strndup(remote + b, rl - b);
        target = name ? sync_join(local, name) : NULL;
        core_free(name);
    } else {
        target = core_strdup(local);
    }
    if (!target)
        return core_fail(ADBC_ENOMEM, "out of memory");
    int rc = 0;
    const char *slash = strrchr(target, '/');
    if (slash && slash != target) {
        char *dir = core_strndup(target, (size_t)(slash - target));
        rc = dir ? sync_mkdirs(dir) : core_fail(ADBC_ENOMEM, "out of memory");
        core_free(dir);
    }
    char *final = NULL;
    int inplace;
    if (rc == 0)
        rc = sync_pull_dest(target, &final, &inplace);
    core_free(final);
    if (rc < 0) {
        core_free(target);
        return rc;
    }
    *out = target;
    return 0;
}

int adbc_sync_pull(adbc_sync_result *res, adbc_sync *s, const char *remote,
                   const char *local, const adbc_sync_opts *opts, int timeout_ms)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (!s || !remote || !local || !*remote || !*local)
        return core_fail(ADBC_EINVAL, "adbc_sync_pull: need a handle, a remote and a local path");
    sync_job j;
    if (sync_job_init(&j, opts, timeout_ms) < 0)
        return ADBC_EINVAL;
    j.verb = "pull";
    j.what = remote;
    j.umask = sync_umask();
    adbc_sync_statbuf st;
    int rc = sync_job_setup(s, &j, 0);
    if (rc == 0)
        rc = adbc_sync_stat(&st, s, remote, sync_job_wait(&j));
    if (rc == 0) {
        if (S_ISDIR(st.mode)) {
            rc = sync_pull_tree(s, &j, remote, local, &st);
        } else if (pullable(st.mode)) {
            j.p.files_total = 1;
            j.p.total = st.size;
            char *target = NULL;
            rc = file_target(remote, local, &target);
            if (rc == 0)
                rc = sync_pull_one(s, &j, remote, target, &st);
            core_free(target);
        } else {
            rc = core_fail(ADBC_EINVAL, "cannot pull %s: not a file or directory (mode 0%o)",
                           remote, st.mode);
        }
    }
    rc = sync_job_finish(&j, rc);
    sync_job_done(&j);
    if (res)
        *res = j.res;
    return rc;
}

/* Pull one file into the caller's write function. The buffered receive, not
 * sync_pull_direct: that one writes from the connection's reader thread with
 * the connection's lock held, where a write function that waits on its own
 * peer would stall every stream of the connection (as a FIFO would: it keeps
 * the buffered path too). The buffered path copies nothing either: the
 * function gets the DATA where the stream's buffer holds it. */
static int pull_to_sink(adbc_sync *s, sync_job *j, const char *remote, sync_sink *sk,
                        const adbc_sync_statbuf *st)
{
    int rc = sync_ensure(s, sync_job_wait(j));
    if (rc == 0)
        rc = sync_pull_request(s, j, remote);
    if (rc == 0 && (rc = sync_flush(s, sync_job_wait(j))) < 0 && s->peer_closed)
        rc = 0; /* the device's FAIL is read by the receive */
    if (rc < 0)
        return rc;
    j->p.src = remote;
    j->p.dst = "";
    j->p.file_bytes = 0;
    j->p.file_total = st->size;
    j->p.file_done = 0;
    rc = j->flags & ADBC_SYNC_FLAGS_COMP ? receive_z(s, j, sk, remote, st->size)
                                         : receive(s, j, sk, remote);
    return rc < 0 ? rc : pulled(j);
}

int adbc_sync_pull_stream(adbc_sync_result *res, adbc_sync_statbuf *st, adbc_sync *s,
                          const char *remote, adbc_sync_write_fn wr, void *user,
                          const adbc_sync_opts *opts, int timeout_ms)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (st)
        memset(st, 0, sizeof *st);
    if (!s || !remote || !*remote || !wr)
        return core_fail(ADBC_EINVAL, "adbc_sync_pull_stream: need a handle, a remote path and "
                                      "a write function");
    sync_job j;
    if (sync_job_init(&j, opts, timeout_ms) < 0)
        return ADBC_EINVAL;
    j.verb = "pull";
    j.what = remote;
    adbc_sync_statbuf sb;
    int rc = sync_refuse_flags("adbc_sync_pull_stream", j.opts->flags, 0);
    if (rc == 0)
        rc = sync_job_setup(s, &j, 0);
    /* the stat adbc_sync_pull makes too: what the remote is, before any byte */
    if (rc == 0)
        rc = adbc_sync_stat(&sb, s, remote, sync_job_wait(&j));
    if (rc == 0 && st)
        *st = sb;
    if (rc == 0 && !S_ISREG(sb.mode))
        rc = core_fail(ADBC_EINVAL, "cannot pull %s into a stream: %s on the device (mode 0%o); "
                       "only a regular file (or a link to one) can be",
                       remote, S_ISDIR(sb.mode) ? "a directory" : "not a regular file", sb.mode);
    if (rc == 0) {
        j.p.files_total = 1;
        j.p.total = sb.size;
        sync_sink sk = {.fd = -1, .fn = wr, .user = user, .remote = remote};
        rc = pull_to_sink(s, &j, remote, &sk, &sb);
    }
    rc = sync_job_finish(&j, rc);
    sync_job_done(&j);
    if (res)
        *res = j.res;
    return rc;
}
