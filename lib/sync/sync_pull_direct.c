/* SPDX-License-Identifier: Apache-2.0 */
/* The direct receive of a pull.
 *
 * A plain pull with large packets writes the file from the connection's
 * reader thread, as the data arrives, straight out of its read buffer
 * (conn_stream_set_sink): no copy into the stream's buffer, no hand-off to
 * this thread, and the OKAYs go out from the reader after each batch, the
 * shape of the single-threaded floor (tests/bench/bench_pull_floor). This
 * thread only waits, reports progress and watches the timeout. Data the
 * stream buffered before (or while) this thread looks at it goes through
 * the same sink from here (conn_stream_read_to); the two never run at once.
 *
 * The sink follows the reply only through DATA chunks. At any other header
 * (DONE, FAIL, or one that is not valid) it stops for good and leaves the
 * rest to receive() and the session's decoder, which the sink left at a
 * chunk boundary: the header bytes a previous call took are handed back
 * in front of the session's receive buffer. A file write that fails stops
 * it too. With small packets (legacy devices, 4 KiB) the stream's batching
 * makes fewer, larger writes, so they keep the buffered path.
 *
 * The reader thread writes with the connection's lock held (the sink runs
 * inside its batch of input): other streams of the connection wait for one
 * write of at most one read (256 KiB) into the page cache. Only regular
 * files (the temporary) are written so; a FIFO or device node, whose write
 * may block for as long as its reader likes, keeps the buffered path. */
#include "sync/sync_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>

#define DIRECT_MIN_PAYLOAD (64 * 1024)
#define DIRECT_SLICE_MS 100 /* progress reports and the timeout check */

typedef struct direct {
    int fd;
    sync_reserve *res;
    uint64_t written;       /* file bytes written, by the sink */
    _Atomic uint64_t shown; /* ... as the waiting thread may read them */
    _Atomic int stop;       /* the sink handed over: it takes nothing more */
    int err;                /* errno of a failed write */
    uint32_t left;          /* DATA bytes still to come in this chunk */
    uint8_t hdr[ADBC_SYNC_HDR];
    size_t hdr_len;         /* header bytes taken so far */
} direct;

static long direct_take(void *user, const uint8_t *p, size_t n)
{
    direct *d = user;
    if (n == 0 || atomic_load(&d->stop))
        return 0; /* n 0: the stream's end, which the pull's own reader meets */
    struct iovec iov[SYNC_PULL_IOV];
    int k = 0, handover = 0;
    size_t pos = 0, file = 0;
    while (pos < n) {
        if (d->left > 0) {
            size_t t = d->left < n - pos ? d->left : n - pos;
            if (k == SYNC_PULL_IOV) {
                if (sync_write_iov(d->fd, iov, k) != 0)
                    goto failed;
                k = 0;
            }
            iov[k++] = (struct iovec){(void *)(p + pos), t};
            d->left -= (uint32_t)t;
            pos += t;
            file += t;
            continue;
        }
        size_t t = ADBC_SYNC_HDR - d->hdr_len;
        if (t > n - pos)
            t = n - pos;
        memcpy(d->hdr + d->hdr_len, p + pos, t);
        if (d->hdr_len + t < ADBC_SYNC_HDR) {
            d->hdr_len += t;
            pos += t;
            break;
        }
        uint32_t len = core_rd32(d->hdr + 4);
        if (core_rd32(d->hdr) != ADBC_SYNC_DATA || len > ADBC_SYNC_DATA_MAX) {
            /* not ours: this call's part of the header stays in the stream,
             * the part earlier calls took is in hdr[0 .. hdr_len) */
            handover = 1;
            break;
        }
        d->hdr_len = 0;
        d->left = len;
        pos += t;
    }
    if (k > 0 && sync_write_iov(d->fd, iov, k) != 0)
        goto failed;
    d->written += file;
    sync_reserve_ahead(d->fd, d->res, d->written);
    atomic_store(&d->shown, d->written);
    if (handover)
        atomic_store(&d->stop, 1);
    return (long)pos;
failed:
    d->err = errno;
    atomic_store(&d->stop, 1);
    return 0;
}

static int direct_ok(const adbc_sync *s, const sync_job *j)
{
    return !(j->flags & ADBC_SYNC_FLAGS_COMP) && s->st && s->rx_len == 0 &&
           s->dec.expect == ADBC_SYNC_X_NONE && adbc_conn_max_payload(s->c) >= DIRECT_MIN_PAYLOAD;
}

/* Bytes the sink wrote since the last look: into the job's counters. */
static void direct_count(sync_job *j, direct *d, uint64_t *seen)
{
    uint64_t now = atomic_load(&d->shown);
    uint64_t add = now - *seen;
    *seen = now;
    j->p.file_bytes += add;
    j->p.bytes += add;
    j->res.bytes += add;
    j->res.wire_bytes += add;
}

/* The DATA of the reply to the RECV, as far as the sink takes it. 0: the
 * rest (DONE, FAIL, or whatever stopped the sink, including a stream that
 * failed or ended) is receive()'s; < 0: failed, the session is ended. */
static int receive_direct(adbc_sync *s, sync_job *j, int fd, sync_reserve *res, const char *remote,
                          const char *local)
{
    direct d = {.fd = fd, .res = res, .written = j->p.file_bytes};
    atomic_init(&d.shown, d.written);
    atomic_init(&d.stop, 0);
    uint64_t seen = d.written;
    adbc_stream *st = s->st;
    conn_stream_set_sink(st, direct_take, &d);
    int wait = sync_job_wait(j);
    int64_t idle_end = core_deadline(wait);
    int rc = 0;
    for (;;) {
        int left = core_remaining(idle_end);
        int slice = left >= 0 && left < DIRECT_SLICE_MS ? left : DIRECT_SLICE_MS;
        int ended = 0;
        ssize_t n = conn_stream_read_to(st, direct_take, &d, &ended, slice);
        uint64_t before = seen;
        direct_count(j, &d, &seen);
        if (seen != before) {
            wait = sync_job_wait(j); /* an inactivity bound: bytes moved */
            idle_end = core_deadline(wait);
            if ((rc = sync_job_report(j, 0)) < 0)
                break;
        }
        if (atomic_load(&d.stop) || ended || (n < 0 && n != ADBC_ETIMEDOUT))
            break; /* receive() reads on and reports what happened */
        if (n == ADBC_ETIMEDOUT && core_remaining(idle_end) == 0) {
            rc = core_fail(ADBC_ETIMEDOUT, "pull %s: no data from the device's sync service "
                                           "within %d ms", remote, wait);
            rc = sync_pull_arrived_fail(j, rc, local);
            break;
        }
    }
    conn_stream_set_sink(st, NULL, NULL); /* from here on the sink never runs */
    direct_count(j, &d, &seen);
    if (rc < 0) {
        sync_abort(s); /* stop the device's stream */
        return rc;
    }
    if (d.err)
        return sync_pull_write_failed(s, d.err, local);
    if (d.hdr_len > 0) {
        /* a header the sink took part of: the decoder reads it first */
        memcpy(s->rx, d.hdr, d.hdr_len);
        s->rx_off = 0;
        s->rx_len = d.hdr_len;
    }
    return 0;
}

int sync_pull_direct(adbc_sync *s, sync_job *j, int fd, sync_reserve *res, const char *remote,
                     const char *local)
{
    if (!direct_ok(s, j))
        return 0;
    /* requests still batched (a tree's next files) go out first, as the
     * session's own reads would send them */
    int wait = sync_job_wait(j);
    int rc = sync_flush(s, wait == 0 ? -1 : wait);
    if (rc == 0)
        return receive_direct(s, j, fd, res, remote, local);
    if (s->peer_closed)
        return 0; /* the device's FAIL may be waiting: receive() reads it */
    return sync_pull_arrived_fail(j, rc, local);
}
