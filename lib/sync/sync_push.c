/* SPDX-License-Identifier: Apache-2.0 */
/* Pushing files: SEND "<path>,<mode>" (or SND2 <path> with its mode and
 * flags), DATA chunks, DONE <mtime>, then the device's OKAY or FAIL. With
 * compression the DATA chunks carry one compressed stream per file.
 *
 * Nothing waits for a round trip: chunks are read from the file straight into
 * the batch buffer behind their headers, the batch goes to the stream in one
 * write (up to 15 chunks), and OKAYs are collected whenever they have
 * arrived, up to SYNC_QMAX files later (as adb defers them too). Memory is
 * the batch buffer and the connection's bounded send queue, whatever the
 * file size. */
#include "sync/sync_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* local: NULL for a stream */
static char *describe(const char *local, const char *remote)
{
    size_t n = (local ? strlen(local) : 0) + strlen(remote) + 16;
    char *w = core_malloc(n);
    if (w && local)
        snprintf(w, n, "push %s to %s", local, remote);
    else if (w)
        snprintf(w, n, "push to %s", remote);
    return w;
}

/* One reply to a SEND arrived. */
static int on_status(adbc_sync *s, sync_job *j, const adbc_sync_event *ev)
{
    if (ev->type == ADBC_SYNC_EV_FAIL)
        return core_fail(ADBC_EREMOTE, "%s: the device refused: %s", sync_last_what(s),
                         ev->text);
    j->res.files++;
    j->p.files++;
    return 0;
}

int sync_push_collect(adbc_sync *s, sync_job *j, size_t keep)
{
    while (sync_due(s) > keep) {
        adbc_sync_event ev;
        int rc = sync_next(s, &ev, sync_job_wait(j));
        if (rc < 0)
            return rc;
        if ((rc = on_status(s, j, &ev)) < 0)
            return rc;
    }
    return 0;
}

/* Take whatever replies have already arrived, without waiting. */
static int poll_replies(adbc_sync *s, sync_job *j)
{
    while (sync_due(s) > 0) {
        adbc_sync_event ev;
        int rc = sync_next(s, &ev, 0);
        if (rc <= 0)
            return rc;
        if ((rc = on_status(s, j, &ev)) < 0)
            return rc;
    }
    return 0;
}

/* A write found the stream closed: adbd does that right after a FAIL, which
 * is then waiting to be read. Report it rather than the closed stream. */
static int after_write_error(adbc_sync *s, sync_job *j, int rc)
{
    if (!s->peer_closed)
        return rc;
    int r2 = sync_push_collect(s, j, 0);
    if (r2 < 0)
        return r2;
    sync_abort(s);
    return core_fail(ADBC_ECLOSED, "the device ended the sync session without saying why");
}

/* Make room for one more chunk; after each batch goes out, take any replies
 * that came back meanwhile (an early FAIL stops the push). */
static int chunk_room(adbc_sync *s, sync_job *j)
{
    if (SYNC_TX_CAP - s->tx_len >= ADBC_SYNC_HDR + ADBC_SYNC_DATA_MAX)
        return 0;
    int rc = sync_flush(s, sync_job_wait(j));
    if (rc < 0)
        return after_write_error(s, j, rc);
    return poll_replies(s, j);
}

static int put_hdr(adbc_sync *s, sync_job *j, uint32_t id, uint32_t len)
{
    int rc = sync_tx_room(s, ADBC_SYNC_HDR, sync_job_wait(j));
    if (rc < 0)
        return after_write_error(s, j, rc);
    s->tx_len += sync_enc_hdr(s->tx + s->tx_len, id, len);
    return 0;
}

/* Queue SEND "<path>,<mode>", or with v2 flags (compression, dry run)
 * SND2, and at once the reply it is due: a device may answer FAIL in the
 * middle of the file (disk full) and close the session, and that FAIL must
 * be read as this file's reply before the closed stream is reported. */
static int queue_request(adbc_sync *s, sync_job *j, const char *remote, uint32_t mode,
                         uint32_t flags)
{
    if (!flags) {
        char spec[ADBC_SYNC_PATH_MAX + 1];
        long n = sync_send_spec(spec, sizeof spec, remote, mode);
        if (n < 0)
            return (int)n;
        int rc = sync_put_req(s, ADBC_SYNC_SEND, spec, (size_t)n, sync_job_wait(j));
        return rc < 0 ? after_write_error(s, j, rc) : 0;
    }
    size_t len = strlen(remote);
    if (len > ADBC_SYNC_PATH_MAX)
        return core_fail(ADBC_EINVAL, "remote path too long: \"%.80s...\" is over the %d bytes "
                         "the device accepts", remote, ADBC_SYNC_PATH_MAX);
    int rc = sync_tx_room(s, ADBC_SYNC_HDR + len + ADBC_SYNC_SEND2_SETUP, sync_job_wait(j));
    if (rc < 0)
        return after_write_error(s, j, rc);
    long n = sync_enc_send2(s->tx + s->tx_len, SYNC_TX_CAP - s->tx_len, remote, len, mode,
                                 flags);
    if (n < 0)
        return (int)n;
    s->tx_len += (size_t)n;
    return 0;
}

static int send_request(adbc_sync *s, sync_job *j, const char *local, const char *remote,
                        uint32_t mode, uint32_t flags)
{
    int rc = queue_request(s, j, remote, mode, flags);
    if (rc < 0)
        return rc;
    return sync_expect(s, ADBC_SYNC_X_STATUS, flags ? ADBC_SYNC_SND2 : ADBC_SYNC_SEND,
                       describe(local, remote));
}

/* Fill iov in order from src: the bytes read (> 0), 0 at the end, or a
 * negative error (set). After an error the caller ends the session: the
 * device has a partial file, and closing the session makes adbd delete it. */
static ssize_t src_read(const sync_job *j, sync_src *src, struct iovec *iov, int n)
{
    if (src->fd >= 0) {
        for (;;) {
            ssize_t r = readv(src->fd, iov, n);
            if (r >= 0)
                return r;
            if (errno != EINTR)
                return core_fail(ADBC_EIO, "cannot read %s: %s", src->what, strerror(errno));
        }
    }
    /* The caller's function, until the pieces are full or it says the end:
     * DATA chunks go out full however few bytes it hands over at a time. */
    size_t got = 0, off = 0;
    for (int i = 0; i < n && !src->eof;) {
        size_t cap = iov[i].iov_len - off;
        ssize_t r = src->fn(src->user, (uint8_t *)iov[i].iov_base + off, cap, &src->mtime);
        if (r < 0) {
            int code = r < INT_MIN ? ADBC_EIO : (int)r;
            return core_fail(code, "push to %s: the read function failed (%s) after %llu bytes; "
                             "the push was abandoned (the device drops any partial copy)",
                             src->what, adbc_strerror(code),
                             (unsigned long long)(j->p.file_bytes + got));
        }
        if ((size_t)r > cap)
            return core_fail(ADBC_EINVAL, "push to %s: the read function returned %zd for a "
                             "buffer of %zu bytes; return at most what fits",
                             src->what, r, cap);
        if (r == 0) {
            src->eof = 1;
            break;
        }
        got += (size_t)r;
        off += (size_t)r;
        if (off == iov[i].iov_len) {
            i++;
            off = 0;
        }
    }
    return (ssize_t)got;
}

/* A file shorter at its end than when the push began was truncated
 * meanwhile: what the device got is not that file. Ending the session
 * before DONE makes adbd delete its copy. */
static int shrank(adbc_sync *s, sync_job *j, const char *local, uint64_t size)
{
    sync_abort(s);
    return core_fail(ADBC_EIO,
                     "%s shrank while it was pushed: it had %llu bytes when the push began, "
                     "only %llu could be read; the device's copy was dropped",
                     local, (unsigned long long)size, (unsigned long long)j->p.file_bytes);
}
/* The file's contents as one compressed stream: the file is read into
 * j->zbuf, and the compressor writes straight into DATA chunk slots of the
 * batch, each filled before its header is written. ahead: bytes already read
 * into j->zbuf (a stream's first chunk, read to tell its size). */
static int send_compressed(adbc_sync *s, sync_job *j, sync_src *src, uint64_t size, size_t ahead)
{
    adbc_sync_zenc *e;
    int rc = sync_zenc_new(&e, j->flags & ADBC_SYNC_FLAGS_COMP);
    if (rc < 0) {
        sync_abort(s);
        return rc;
    }
    const uint8_t *in = j->zbuf;
    size_t in_len = ahead;
    j->p.file_bytes += ahead;
    j->p.bytes += ahead;
    j->res.bytes += ahead;
    int eof = 0, done = 0;
    while (!done) {
        if ((rc = chunk_room(s, j)) < 0)
            break;
        uint8_t *slot = s->tx + s->tx_len + ADBC_SYNC_HDR, *o = slot;
        size_t cap = ADBC_SYNC_DATA_MAX;
        while (cap > 0 && !done) {
            if (in_len == 0 && !eof) {
                struct iovec v = {j->zbuf, SYNC_ZBUF};
                ssize_t n = src_read(j, src, &v, 1);
                if (n < 0) {
                    sync_abort(s);
                    rc = (int)n;
                    break;
                }
                eof = n == 0;
                if (eof && j->p.file_bytes < size) {
                    rc = shrank(s, j, src->what, size);
                    break;
                }
                in = j->zbuf;
                in_len = (size_t)n;
                j->p.file_bytes += (uint64_t)n;
                j->p.bytes += (uint64_t)n;
                j->res.bytes += (uint64_t)n;
            }
            rc = sync_zenc_run(e, &in, &in_len, &o, &cap, eof);
            if (rc < 0) {
                sync_abort(s);
                break;
            }
            done = rc == 1;
            rc = 0;
        }
        if (rc < 0)
            break;
        size_t k = (size_t)(o - slot);
        if (k > 0) {
            sync_enc_hdr(s->tx + s->tx_len, ADBC_SYNC_DATA, (uint32_t)k);
            s->tx_len += ADBC_SYNC_HDR + k;
            j->res.wire_bytes += k;
        }
        if ((rc = sync_job_report(j, 0)) < 0) {
            sync_abort(s); /* adbd deletes the partial file */
            break;
        }
    }
    sync_zenc_free(e);
    return rc;
}

/* The file's contents as DATA chunks read straight into the batch: one
 * readv fills every chunk slot left in it, each behind room for its header.
 * size: the file's size when the push began; a file that turns out shorter
 * was truncated meanwhile, and what the device got is not that file. */
static int send_contents(adbc_sync *s, sync_job *j, sync_src *src, uint64_t size)
{
    const size_t slot = ADBC_SYNC_HDR + ADBC_SYNC_DATA_MAX;
    for (;;) {
        int rc = chunk_room(s, j);
        if (rc < 0)
            return rc;
        struct iovec iov[SYNC_TX_CAP / (ADBC_SYNC_HDR + ADBC_SYNC_DATA_MAX)];
        int slots = 0;
        for (size_t at = s->tx_len; SYNC_TX_CAP - at >= slot; at += slot) {
            iov[slots].iov_base = s->tx + at + ADBC_SYNC_HDR;
            iov[slots].iov_len = ADBC_SYNC_DATA_MAX;
            slots++;
        }
        ssize_t n = src_read(j, src, iov, slots);
        if (n < 0) {
            sync_abort(s);
            return (int)n;
        }
        if (n == 0 && j->p.file_bytes < size)
            return shrank(s, j, src->what, size);
        if (n == 0)
            return 0;
        /* readv fills the slots in order: full chunks, then the rest */
        for (size_t left = (size_t)n; left > 0;) {
            size_t k = left < ADBC_SYNC_DATA_MAX ? left : ADBC_SYNC_DATA_MAX;
            sync_enc_hdr(s->tx + s->tx_len, ADBC_SYNC_DATA, (uint32_t)k);
            s->tx_len += ADBC_SYNC_HDR + k;
            left -= k;
        }
        j->p.file_bytes += (uint64_t)n;
        j->p.bytes += (uint64_t)n;
        j->res.bytes += (uint64_t)n;
        j->res.wire_bytes += (uint64_t)n;
        if ((rc = sync_job_report(j, 0)) < 0) {
            sync_abort(s); /* adbd deletes the partial file */
            return rc;
        }
    }
}

/* One DATA chunk of n bytes (at most ADBC_SYNC_DATA_MAX) copied from buf,
 * counted as file contents. */
static int put_data(adbc_sync *s, sync_job *j, const void *buf, size_t n)
{
    int rc = chunk_room(s, j);
    if (rc < 0)
        return rc;
    sync_enc_hdr(s->tx + s->tx_len, ADBC_SYNC_DATA, (uint32_t)n);
    memcpy(s->tx + s->tx_len + ADBC_SYNC_HDR, buf, n);
    s->tx_len += ADBC_SYNC_HDR + n;
    j->p.file_bytes += n;
    j->p.bytes += n;
    j->res.bytes += n;
    j->res.wire_bytes += n;
    return 0;
}

/* A link: its target and a NUL, as one DATA chunk (adbd reads exactly one),
 * from readlink for a local link, from src for a stream. */
static int send_link(adbc_sync *s, sync_job *j, sync_src *src, const char *local,
                     const char *remote, uint32_t mode)
{
    char target[PATH_MAX + 1];
    ssize_t n = 0;
    if (!src->fn) {
        n = readlink(local, target, PATH_MAX);
        if (n < 0)
            return core_fail(ADBC_EIO, "cannot read the link %s: %s", local, strerror(errno));
        target[n++] = '\0'; /* adbd takes the target as a C string */
        if ((size_t)n > ADBC_SYNC_DATA_MAX)
            return core_fail(ADBC_EINVAL, "the link %s is too long to push", local);
    }
    /* adbd reads a link's target uncompressed whatever the flags: only the
     * dry-run flag goes with it. */
    int rc = send_request(s, j, local, remote, mode, j->flags & ADBC_SYNC_FLAG_DRY_RUN);
    if (rc == 0)
        rc = chunk_room(s, j);
    if (rc < 0)
        return rc;
    uint8_t *slot = s->tx + s->tx_len + ADBC_SYNC_HDR;
    if (!src->fn) {
        memcpy(slot, target, (size_t)n);
    } else {
        /* the target straight into the chunk; one byte more must be the end */
        struct iovec v = {slot, ADBC_SYNC_DATA_MAX};
        uint8_t more;
        struct iovec m = {&more, 1};
        ssize_t extra = 0;
        n = src_read(j, src, &v, 1);
        if (n >= 0 && !src->eof)
            extra = src_read(j, src, &m, 1);
        if (n < 0 || extra < 0) {
            sync_abort(s);
            return n < 0 ? (int)n : (int)extra;
        }
        if (n > 0 && slot[n - 1] != '\0' && n < ADBC_SYNC_DATA_MAX)
            slot[n++] = '\0'; /* adbd takes the target as a C string */
        if (n <= 1 || extra > 0 || slot[n - 1] != '\0') {
            sync_abort(s);
            return core_fail(ADBC_EINVAL, "push of the link %s: its target is %s; give 1 to %d "
                             "bytes (the target and a NUL)", remote,
                             n <= 1 ? "empty" : "too long", ADBC_SYNC_DATA_MAX);
        }
    }
    sync_enc_hdr(s->tx + s->tx_len, ADBC_SYNC_DATA, (uint32_t)n);
    s->tx_len += ADBC_SYNC_HDR + (size_t)n;
    /* the target is the link's content, counted as adb counts it */
    j->res.bytes += (uint64_t)n;
    j->res.wire_bytes += (uint64_t)n;
    return 0;
}

/* Room for one more file: at most SYNC_QMAX - 1 unacknowledged, and a
 * session (a FAIL among the replies collected ends it). */
static int push_begin(adbc_sync *s, sync_job *j)
{
    int rc = sync_ensure(s, sync_job_wait(j));
    if (rc < 0)
        return rc;
    if ((rc = sync_push_collect(s, j, SYNC_QMAX - 1)) < 0)
        return rc;
    if (!s->st && (rc = sync_ensure(s, sync_job_wait(j))) < 0)
        return rc;
    return 0;
}

/* Queue one file's SEND (or SND2), its contents from src, and DONE with
 * src->mtime. mode: S_IFREG or S_IFLNK and the permission bits; size: a
 * local file's size when the push began (a stream: 0). local: NULL for a
 * stream. */
static int push_contents(adbc_sync *s, sync_job *j, sync_src *src, const char *local,
                         const char *remote, uint32_t mode, uint64_t size)
{
    int rc;
    if (S_ISLNK(mode)) {
        rc = send_link(s, j, src, local, remote, mode);
    } else {
        /* As adb (SendSmallFile): a file under one chunk goes uncompressed.
         * A stream's size is not known: up to one chunk is read first to
         * tell (into j->zbuf, where compressing it starts). */
        uint32_t flags = j->flags;
        size_t ahead = 0;
        if (src->fd >= 0 && size < ADBC_SYNC_DATA_MAX) {
            flags &= ~ADBC_SYNC_FLAGS_COMP;
        } else if (src->fd < 0 && (flags & ADBC_SYNC_FLAGS_COMP)) {
            struct iovec v = {j->zbuf, ADBC_SYNC_DATA_MAX};
            ssize_t n = src_read(j, src, &v, 1);
            if (n < 0)
                return (int)n; /* nothing of this file went out */
            ahead = (size_t)n;
            if (src->eof)
                flags &= ~ADBC_SYNC_FLAGS_COMP;
        }
        rc = send_request(s, j, local, remote, mode, flags);
        if (rc == 0 && ahead > 0 && !(flags & ADBC_SYNC_FLAGS_COMP))
            rc = put_data(s, j, j->zbuf, ahead);
        if (rc == 0)
            rc = flags & ADBC_SYNC_FLAGS_COMP ? send_compressed(s, j, src, size, ahead)
                                              : send_contents(s, j, src, size);
    }
    if (rc == 0)
        rc = put_hdr(s, j, ADBC_SYNC_DONE, src->mtime);
    if (rc < 0)
        return rc;
    j->p.file_done = 1;
    if ((rc = sync_job_report(j, 1)) < 0)
        sync_abort(s);
    return rc;
}

int sync_push_one(adbc_sync *s, sync_job *j, const char *local, const char *remote,
                  const struct stat *st)
{
    int rc = push_begin(s, j);
    if (rc < 0)
        return rc;
    int link = S_ISLNK(st->st_mode);
    j->p.src = local;
    j->p.dst = remote;
    j->p.file_bytes = 0;
    j->p.file_total = link ? 0 : (uint64_t)st->st_size;
    j->p.file_done = 0;
    sync_src src = {.fd = -1, .what = local, .mtime = (uint32_t)st->st_mtime};
    if (link)
        return push_contents(s, j, &src, local, remote, (uint32_t)st->st_mode, 0);
    src.fd = open(local, O_RDONLY | O_CLOEXEC);
    if (src.fd < 0)
        return core_fail(errno == EACCES ? ADBC_EPERM : ADBC_EIO, "cannot open %s: %s", local,
                         strerror(errno));
    posix_fadvise(src.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    /* Only the permission bits and the type go to the device. */
    rc = push_contents(s, j, &src, local, remote, (uint32_t)(S_IFREG | (st->st_mode & 07777)),
                       (uint64_t)st->st_size);
    close(src.fd);
    return rc;
}

/* A link the device would not create (file systems such as /sdcard have no
 * symlinks) goes over as the contents of its target, when that is a file. */
static int push_link_or_contents(adbc_sync *s, sync_job *j, const char *local,
                                 const char *remote, const struct stat *lst)
{
    int rc = sync_push_collect(s, j, 0);
    if (rc == 0)
        rc = sync_push_one(s, j, local, remote, lst);
    if (rc == 0)
        rc = sync_push_collect(s, j, 0);
    if (rc != ADBC_EREMOTE || !strstr(adbc_last_error(), "symlink"))
        return rc;
    struct stat st;
    if (stat(local, &st) != 0 || !S_ISREG(st.st_mode))
        return rc;
    return sync_push_one(s, j, local, remote, &st);
}

int sync_push_entry(adbc_sync *s, sync_job *j, const char *local, const char *remote,
                    const struct stat *lst)
{
    if (S_ISLNK(lst->st_mode)) {
        if (!(j->opts->flags & ADBC_SYNC_FOLLOW_LINKS))
            return push_link_or_contents(s, j, local, remote, lst);
        struct stat st;
        if (stat(local, &st) != 0)
            return core_fail(ADBC_ENOTFOUND, "%s: the link's target is missing: %s", local,
                             strerror(errno));
        return sync_push_one(s, j, local, remote, &st);
    }
    return sync_push_one(s, j, local, remote, lst);
}

int sync_same_on_device(adbc_sync *s, sync_job *j, const char *const *remote,
                        const struct stat *const *local, size_t n, int check_size, uint8_t *same)
{
    if (n == 0)
        return 0;
    int rc = sync_ensure(s, sync_job_wait(j));
    /* OKAYs of files already sent come first in the reply stream. */
    if (rc == 0)
        rc = sync_push_collect(s, j, 0);
    if (rc == 0 && !s->st)
        rc = sync_ensure(s, sync_job_wait(j));
    if (rc < 0)
        return rc;
    int v2 = s->stat_v2;
    uint32_t id = v2 ? ADBC_SYNC_LST2 : ADBC_SYNC_STAT;
    for (size_t i = 0; i < n; i++) {
        if ((rc = sync_put_req(s, id, remote[i], strlen(remote[i]), sync_job_wait(j))) < 0 ||
            (rc = sync_expect(s, v2 ? ADBC_SYNC_X_STAT_V2 : ADBC_SYNC_X_STAT_V1, id, NULL)) < 0) {
            sync_abort(s);
            return rc;
        }
    }
    for (size_t i = 0; i < n; i++) {
        adbc_sync_event ev;
        if ((rc = sync_next(s, &ev, sync_job_wait(j))) < 0)
            return rc;
        if (ev.type == ADBC_SYNC_EV_FAIL)
            return core_fail(ADBC_EREMOTE, "stat %s: the device's sync service failed: %s",
                             remote[i], ev.text);
        const adbc_sync_statbuf *st = &ev.st;
        /* v1 answers all zeros when it cannot lstat; its size is 32 bits */
        int missing = v2 ? ev.error != 0 : st->mode == 0 && st->size == 0 && st->mtime == 0;
        uint64_t size = (uint64_t)local[i]->st_size;
        if (!v2)
            size &= 0xffffffffu;
        /* adb's rule (copy_local_dir_remote, sync_send): the types ANDed
         * (a link against a file counts as a file), a link's mtime cannot
         * be set on the device, so one not older will do */
        uint32_t both = st->mode & (uint32_t)local[i]->st_mode;
        int64_t lm = (int64_t)local[i]->st_mtime;
        same[i] = !missing && (!check_size || st->size == size) &&
                  ((S_ISREG(both) && st->mtime == lm) || (S_ISLNK(both) && st->mtime >= lm));
    }
    return 0;
}

int adbc_sync_push(adbc_sync_result *res, adbc_sync *s, const char *local,
                   const char *remote, const adbc_sync_opts *opts, int timeout_ms)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (!s || !local || !remote || !*local || !*remote)
        return core_fail(ADBC_EINVAL, "adbc_sync_push: need a handle, a local and a remote path");
    sync_job j;
    if (sync_job_init(&j, opts, timeout_ms) < 0)
        return ADBC_EINVAL;
    j.verb = "push";
    j.what = local;
    struct stat st;
    int rc = sync_job_setup(s, &j, 1);
    if (rc < 0) {
        /* nothing sent */
    } else if (lstat(local, &st) != 0) {
        rc = core_fail(errno == ENOENT ? ADBC_ENOTFOUND : ADBC_EIO, "cannot push %s: %s", local,
                       strerror(errno));
    } else if (S_ISDIR(st.st_mode) ||
               (S_ISLNK(st.st_mode) && (j.opts->flags & ADBC_SYNC_FOLLOW_LINKS) &&
                stat(local, &st) == 0 && S_ISDIR(st.st_mode))) {
        rc = sync_push_tree(s, &j, local, remote);
    } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
        uint8_t same = 0;
        const struct stat *stp = &st;
        /* push --sync of one file: adb's rule is the mtime alone */
        if (j.opts->flags & ADBC_SYNC_SKIP_SAME)
            rc = sync_same_on_device(s, &j, &remote, &stp, 1, 0, &same);
        if (rc == 0 && same) {
            j.res.skipped++;
        } else if (rc == 0 && (j.opts->flags & ADBC_SYNC_LIST_ONLY)) {
            rc = sync_job_listed(&j, local, remote, &st);
        } else if (rc == 0) {
            j.p.files_total = 1;
            j.p.total = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
            rc = sync_push_entry(s, &j, local, remote, &st);
            if (rc == 0)
                rc = sync_push_collect(s, &j, 0);
        }
    } else {
        rc = core_fail(ADBC_EINVAL, "cannot push %s: not a file, link or directory", local);
    }
    /* The device acknowledges a file after its last report went out: one
     * more, so that the last report counts every file done, as a pull's. */
    if (rc == 0 && j.opts->progress && j.p.files != j.reported_files) {
        j.p.file_done = 0; /* the file had its own last report */
        rc = sync_job_report(&j, 1);
    }
    rc = sync_job_finish(&j, rc);
    sync_job_done(&j);
    if (res)
        *res = j.res;
    return rc;
}

/* The flags of adbc_sync_opts, by name: a stream push refuses those about
 * trees or local files, a stream pull all of them. */
static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {
    {ADBC_SYNC_DRY_RUN, "ADBC_SYNC_DRY_RUN"},
    {ADBC_SYNC_FOLLOW_LINKS, "ADBC_SYNC_FOLLOW_LINKS"},
    {ADBC_SYNC_NO_ATTRS, "ADBC_SYNC_NO_ATTRS"},
    {ADBC_SYNC_SKIP_SAME, "ADBC_SYNC_SKIP_SAME"},
    {ADBC_SYNC_DIR_ORDER, "ADBC_SYNC_DIR_ORDER"},
    {ADBC_SYNC_LIST_ONLY, "ADBC_SYNC_LIST_ONLY"},
};

int sync_refuse_flags(const char *fn, unsigned flags, unsigned allowed)
{
    unsigned bad = flags & ~allowed;
    if (!bad)
        return 0;
    char names[160] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (bad & flag_names[i].flag) {
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                    flag_names[i].name);
            bad &= ~flag_names[i].flag;
        }
    if (bad)
        snprintf(names + len, sizeof names - len, "%sunknown bits 0x%x", len ? ", " : "", bad);
    return core_fail(ADBC_EINVAL, "%s: adbc_sync_opts.flags has %s, which do not apply to one "
                     "file streamed to or from the caller; leave them out",
                     fn, names);
}

int adbc_sync_push_stream(adbc_sync_result *res, adbc_sync *s, adbc_sync_read_fn rd, void *user,
                          const char *remote, uint32_t mode, uint32_t mtime,
                          const adbc_sync_opts *opts, int timeout_ms)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (!s || !rd || !remote || !*remote)
        return core_fail(ADBC_EINVAL, "adbc_sync_push_stream: need a handle, a read function "
                                      "and a remote path");
    if (!S_ISREG(mode) && !S_ISLNK(mode))
        return core_fail(ADBC_EINVAL, "adbc_sync_push_stream: mode 0%o is neither a file "
                         "(S_IFREG) nor a link (S_IFLNK); give the type with the permission bits",
                         mode);
    sync_job j;
    if (sync_job_init(&j, opts, timeout_ms) < 0)
        return ADBC_EINVAL;
    j.verb = "push";
    j.what = remote;
    int rc = sync_refuse_flags("adbc_sync_push_stream", j.opts->flags, ADBC_SYNC_DRY_RUN);
    if (rc == 0)
        rc = sync_job_setup(s, &j, 1);
    if (rc == 0)
        rc = push_begin(s, &j);
    if (rc == 0) {
        sync_src src = {.fd = -1, .fn = rd, .user = user, .what = remote, .mtime = mtime};
        j.p.files_total = 1;
        j.p.src = "";
        j.p.dst = remote;
        rc = push_contents(s, &j, &src, NULL, remote, (mode & S_IFMT) | (mode & 07777), 0);
    }
    if (rc == 0)
        rc = sync_push_collect(s, &j, 0);
    /* as adbc_sync_push: one more report once the device acknowledged it */
    if (rc == 0 && j.opts->progress && j.p.files != j.reported_files) {
        j.p.file_done = 0;
        rc = sync_job_report(&j, 1);
    }
    rc = sync_job_finish(&j, rc);
    sync_job_done(&j);
    if (res)
        *res = j.res;
    return rc;
}
