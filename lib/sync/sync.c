/* SPDX-License-Identifier: Apache-2.0 */
/* The sync session: opening and reopening the stream, batching requests,
 * the queue of replies still due (requests are pipelined), and the
 * one-round-trip operations stat, lstat and list. */
#include "sync/sync_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Prefix the calling thread's last error with context. */
static int fail_ctx(int code, const char *ctx)
{
    char prev[768];
    snprintf(prev, sizeof prev, "%s", adbc_last_error());
    return core_fail(code, "%s: %s", ctx, *prev ? prev : adbc_strerror(code));
}

/* When the whole connection failed (device unplugged, adbd gone), say so
 * before the transport's own words ("write failed: Broken pipe"). */
static int lost(int code, adbc_conn *c)
{
    if (adbc_conn_status(c) == 0)
        return code;
    return fail_ctx(code, "the connection to the device was lost");
}

void adbc_sync_opts_init_sized(adbc_sync_opts *out, size_t size)
{
    adbc_sync_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->compression = ADBC_SYNC_COMPRESS_AUTO;
    o->size = sizeof *o;
    core_abi_give(out, size, &d, sizeof d);
}

int adbc_sync_open(adbc_sync **out, adbc_conn *c, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_sync_open: no connection");
    adbc_sync *s = core_calloc(1, sizeof *s);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory opening a sync session");
    s->c = c;
    s->rx = core_malloc(SYNC_RX_CAP);
    s->rx_cap = SYNC_RX_CAP;
    s->tx = core_malloc(SYNC_TX_CAP);
    if (!s->rx || !s->tx) {
        adbc_sync_close(s);
        return core_fail(ADBC_ENOMEM, "out of memory opening a sync session");
    }
    s->stat_v2 = adbc_conn_has_feature(c, "stat_v2");
    s->ls_v2 = adbc_conn_has_feature(c, "ls_v2");
    s->mkdir_fixed = adbc_conn_has_feature(c, "fixed_push_mkdir");
    sync_v2_init(s);
    int rc = sync_ensure(s, timeout_ms);
    if (rc < 0) {
        adbc_sync_close(s);
        return core_fail_keep(rc);
    }
    *out = s;
    return 0;
}

int adbc_sync_has_stat_v2(const adbc_sync *s)
{
    if (!s)
        return 0;
    return s->stat_v2;
}

int adbc_sync_has_ls_v2(const adbc_sync *s)
{
    if (!s)
        return 0;
    return s->ls_v2;
}

static void drop_queue(adbc_sync *s)
{
    for (size_t i = 0; i < s->q_len; i++) {
        sync_pending *p = &s->q[(s->q_head + i) % SYNC_QMAX];
        core_free(p->what);
        p->what = NULL;
    }
    s->q_head = s->q_len = 0;
}

void adbc_sync_close(adbc_sync *s)
{
    if (!s)
        return;
    if (s->st && !s->peer_closed && s->q_len == 0) {
        /* QUIT lets adbd end the session cleanly (adb does the same). */
        uint8_t quit[ADBC_SYNC_HDR];
        sync_enc_hdr(quit, ADBC_SYNC_QUIT, 0);
        s->tx_len = 0;
        adbc_stream_write(s->st, quit, sizeof quit, 1000);
    }
    sync_abort(s);
    core_free(s->last_what);
    core_free(s->rx);
    core_free(s->tx);
    core_free(s);
}

void sync_abort(adbc_sync *s)
{
    if (s->st)
        adbc_stream_close(s->st);
    s->st = NULL;
    s->peer_closed = 0;
    s->rx_off = s->rx_len = 0;
    s->tx_len = 0;
    drop_queue(s);
    sync_rdec_expect(&s->dec, ADBC_SYNC_X_NONE, 0);
}

int sync_ensure(adbc_sync *s, int timeout_ms)
{
    if (s->st)
        return 0;
    int rc = adbc_stream_open(&s->st, s->c, "sync:", timeout_ms);
    if (rc < 0)
        return fail_ctx(rc, "cannot start the device's sync service");
    s->peer_closed = 0;
    sync_rdec_expect(&s->dec, ADBC_SYNC_X_NONE, 0);
    return 0;
}

int sync_flush(adbc_sync *s, int timeout_ms)
{
    if (s->tx_len == 0)
        return 0;
    if (!s->st)
        return core_fail(ADBC_ECLOSED, "the sync session has ended");
    if (s->peer_closed)
        return core_fail(ADBC_ECLOSED, "the device ended the sync session");
    /* Let the previous batch reach the socket first: the kernel's socket
     * buffer keeps the link busy meanwhile, and what sits in our memory stays
     * one batch, not the connection's whole queue (over 2 MiB when the
     * device grants a large window). */
    int rc = adbc_stream_flush(s->st, timeout_ms);
    if (rc == 0)
        rc = adbc_stream_write(s->st, s->tx, s->tx_len, timeout_ms);
    s->tx_len = 0;
    if (rc == ADBC_ECLOSED && adbc_conn_status(s->c) == 0) {
        /* adbd closes the session after a FAIL; the FAIL itself may be
         * waiting in the receive buffer. Keep the stream so the caller can
         * read it. */
        s->peer_closed = 1;
        return rc;
    }
    if (rc < 0) {
        int code = lost(rc, s->c);
        if (s->q_len > 0 && s->q[s->q_head].what)
            fail_ctx(code, s->q[s->q_head].what);
        sync_abort(s);
        return code;
    }
    return 0;
}

int sync_tx_room(adbc_sync *s, size_t n, int timeout_ms)
{
    if (SYNC_TX_CAP - s->tx_len >= n)
        return 0;
    return sync_flush(s, timeout_ms);
}

int sync_put_req(adbc_sync *s, uint32_t id, const char *path, size_t len, int timeout_ms)
{
    int rc = sync_tx_room(s, ADBC_SYNC_HDR + len, timeout_ms);
    if (rc < 0)
        return rc;
    long n = sync_enc_req(s->tx + s->tx_len, SYNC_TX_CAP - s->tx_len, id, path, len);
    if (n < 0)
        return (int)n;
    s->tx_len += (size_t)n;
    return 0;
}

int sync_expect(adbc_sync *s, adbc_sync_expect x, uint32_t id, char *what)
{
    if (s->q_len == SYNC_QMAX) {
        core_free(what);
        return core_fail(ADBC_EINVAL, "too many sync requests in flight");
    }
    sync_pending *p = &s->q[(s->q_head + s->q_len) % SYNC_QMAX];
    p->expect = x;
    p->id = id;
    p->what = what;
    s->q_len++;
    return 0;
}

const char *sync_last_what(const adbc_sync *s)
{
    return s->last_what ? s->last_what : "";
}

size_t sync_due(const adbc_sync *s)
{
    return s->q_len;
}

/* The reply at the head of the queue is complete. */
static void pop(adbc_sync *s)
{
    sync_pending *p = &s->q[s->q_head];
    core_free(s->last_what);
    s->last_what = p->what;
    p->what = NULL;
    s->q_head = (s->q_head + 1) % SYNC_QMAX;
    s->q_len--;
}

static int is_terminal(adbc_sync_ev_type t)
{
    return t == ADBC_SYNC_EV_STAT || t == ADBC_SYNC_EV_LIST_END || t == ADBC_SYNC_EV_DONE ||
           t == ADBC_SYNC_EV_OKAY || t == ADBC_SYNC_EV_FAIL;
}

static int next_event(adbc_sync *s, adbc_sync_event *ev, int timeout_ms, int may_read)
{
    if (!s->st)
        return core_fail(ADBC_ECLOSED, "the sync session has ended");
    if (may_read && s->tx_len > 0 && !s->peer_closed) {
        int rc = sync_flush(s, timeout_ms == 0 ? -1 : timeout_ms);
        if (rc < 0 && !s->peer_closed)
            return rc;
    }
    for (;;) {
        if (s->dec.expect == ADBC_SYNC_X_NONE) {
            if (s->q_len == 0) {
                if (s->rx_len > 0) {
                    sync_abort(s);
                    return core_fail(ADBC_EPROTO, "sync protocol error: the device sent data "
                                                  "when no reply was due");
                }
                return core_fail(ADBC_EINVAL, "no sync reply is due");
            }
            sync_pending *p = &s->q[s->q_head];
            sync_rdec_expect(&s->dec, p->expect, p->id);
        }
        if (s->rx_len > 0) {
            size_t used = 0;
            int rc = sync_rdec_next(&s->dec, s->rx + s->rx_off, s->rx_len, &used, ev);
            s->rx_off += used;
            s->rx_len -= used;
            if (rc < 0) {
                int code = rc;
                if (s->q_len > 0 && s->q[s->q_head].what)
                    fail_ctx(code, s->q[s->q_head].what);
                sync_abort(s);
                return code;
            }
            if (rc == 1) {
                if (is_terminal(ev->type))
                    pop(s);
                if (ev->type == ADBC_SYNC_EV_FAIL) {
                    /* adbd ends the session after a FAIL. Keep the text:
                     * the abort resets the decoder that holds it. */
                    snprintf(s->fail_text, sizeof s->fail_text, "%s", ev->text);
                    ev->text = s->fail_text;
                    sync_abort(s);
                }
                return 1;
            }
            continue;
        }
        if (!may_read)
            return 0;
        /* Pulled file data is read without a copy: the stream hands over
         * its buffer, and the DATA in it goes from there to the file.
         * Compressed, the bytes are few and decompressing them is slower
         * than the link, so the stream's buffer fills to the window: a
         * swap would then keep two window-sized buffers alive, and a copy
         * into rx (much smaller) keeps one. */
        size_t off = 0;
        ssize_t n = s->rx_copy ? adbc_stream_read(s->st, s->rx, s->rx_cap, timeout_ms)
                               : conn_stream_read_swap(s->st, &s->rx, &s->rx_cap, &off,
                                                       timeout_ms);
        if (n > 0) {
            s->rx_off = off;
            s->rx_len = (size_t)n;
            continue;
        }
        if (n == ADBC_ETIMEDOUT && timeout_ms == 0)
            return 0;
        int code;
        if (n == 0)
            code = core_fail(ADBC_ECLOSED,
                             "the device ended the sync session before its reply was complete");
        else if (n == ADBC_ETIMEDOUT)
            code = core_fail(ADBC_ETIMEDOUT, "no reply from the device's sync service within "
                                             "%d ms",
                             timeout_ms);
        else
            code = lost((int)n, s->c);
        if (s->q_len > 0 && s->q[s->q_head].what)
            fail_ctx(code, s->q[s->q_head].what);
        sync_abort(s);
        return code;
    }
}

int sync_next(adbc_sync *s, adbc_sync_event *ev, int timeout_ms)
{
    return next_event(s, ev, timeout_ms, 1);
}

int sync_next_buffered(adbc_sync *s, adbc_sync_event *ev)
{
    if (s->rx_len == 0)
        return 0;
    return next_event(s, ev, 0, 0);
}

/* ---- stat ---- */

static int stat_error(const char *path, uint32_t err)
{
    return core_fail(sync_errno_code(err), "%s: %s (%s, on the device)", path,
                     adbc_sync_errno_text(err), adbc_sync_errno_name(err));
}

/* One stat round trip. id: STAT, STA2 or LST2. *missing (v1 only): the
 * device answered all zeros, its way of saying it could not stat. */
static int stat_once(adbc_sync *s, uint32_t id, const char *path, adbc_sync_statbuf *st,
                     int *missing, int timeout_ms)
{
    memset(st, 0, sizeof *st);
    *missing = 0;
    int rc = sync_ensure(s, timeout_ms);
    if (rc < 0)
        return rc;
    size_t len = strlen(path);
    if ((rc = sync_put_req(s, id, path, len, timeout_ms)) < 0)
        return rc;
    char *what = core_malloc(len + 8);
    if (what)
        snprintf(what, len + 8, "stat %s", path);
    rc = sync_expect(s, id == ADBC_SYNC_STAT ? ADBC_SYNC_X_STAT_V1 : ADBC_SYNC_X_STAT_V2, id,
                     what);
    if (rc < 0)
        return rc;
    adbc_sync_event ev;
    rc = sync_next(s, &ev, timeout_ms);
    if (rc < 0)
        return rc;
    if (ev.type == ADBC_SYNC_EV_FAIL)
        return core_fail(ADBC_EREMOTE, "stat %s: the device's sync service failed: %s", path,
                         ev.text);
    if (id != ADBC_SYNC_STAT && ev.error)
        return stat_error(path, ev.error);
    *st = ev.st;
    if (id == ADBC_SYNC_STAT && st->mode == 0 && st->size == 0 && st->mtime == 0)
        *missing = 1;
    return 0;
}

static int v1_missing(const char *path)
{
    return core_fail(ADBC_ENOTFOUND,
                     "%s: does not exist on the device, or cannot be read there (its v1 stat "
                     "does not say which)",
                     path);
}

int adbc_sync_lstat(adbc_sync_statbuf *st, adbc_sync *s, const char *path, int timeout_ms)
{
    if (!s || !path || !st)
        return core_fail(ADBC_EINVAL, "adbc_sync_lstat: NULL argument");
    int missing;
    int rc = stat_once(s, s->stat_v2 ? ADBC_SYNC_LST2 : ADBC_SYNC_STAT, path, st, &missing,
                       timeout_ms);
    if (rc == 0 && missing)
        return v1_missing(path);
    return rc;
}

int adbc_sync_stat(adbc_sync_statbuf *st, adbc_sync *s, const char *path, int timeout_ms)
{
    if (!s || !path || !st)
        return core_fail(ADBC_EINVAL, "adbc_sync_stat: NULL argument");
    int64_t deadline = core_deadline(timeout_ms);
    int missing;
    if (s->stat_v2)
        return stat_once(s, ADBC_SYNC_STA2, path, st, &missing, timeout_ms);
    /* v1 has only lstat. As adb does: a link is probed as "path/", which
     * resolves it, to tell a directory from anything else. */
    int rc = stat_once(s, ADBC_SYNC_STAT, path, st, &missing, timeout_ms);
    if (rc < 0)
        return rc;
    if (missing)
        return v1_missing(path);
    if (!S_ISLNK(st->mode))
        return 0;
    size_t len = strlen(path);
    char *probe = core_malloc(len + 2);
    if (!probe)
        return core_fail(ADBC_ENOMEM, "out of memory");
    memcpy(probe, path, len);
    probe[len] = '/';
    probe[len + 1] = '\0';
    adbc_sync_statbuf dir;
    rc = stat_once(s, ADBC_SYNC_STAT, probe, &dir, &missing, core_remaining(deadline));
    core_free(probe);
    if (rc < 0)
        return rc;
    st->mode = (st->mode & ~(uint32_t)S_IFMT) | (!missing && S_ISDIR(dir.mode) ? S_IFDIR : S_IFREG);
    st->size = 0;
    return 0;
}

/* ---- list ---- */

int sync_list_raw(adbc_sync *s, const char *path, adbc_sync_list_fn fn, void *user,
                  int timeout_ms)
{
    int rc = sync_ensure(s, timeout_ms);
    if (rc < 0)
        return rc;
    uint32_t id = s->ls_v2 ? ADBC_SYNC_LIS2 : ADBC_SYNC_LIST;
    size_t len = strlen(path);
    if ((rc = sync_put_req(s, id, path, len, timeout_ms)) < 0)
        return rc;
    char *what = core_malloc(len + 8);
    if (what)
        snprintf(what, len + 8, "list %s", path);
    rc = sync_expect(s, s->ls_v2 ? ADBC_SYNC_X_LIST_V2 : ADBC_SYNC_X_LIST_V1, id, what);
    if (rc < 0)
        return rc;
    int stop = 0;
    for (;;) {
        adbc_sync_event ev;
        rc = sync_next(s, &ev, timeout_ms);
        if (rc < 0)
            return rc;
        if (ev.type == ADBC_SYNC_EV_LIST_END)
            return 0;
        if (ev.type == ADBC_SYNC_EV_FAIL)
            return core_fail(ADBC_EREMOTE, "list %s: the device's sync service failed: %s",
                             path, ev.text);
        if (ev.type != ADBC_SYNC_EV_DENT || stop)
            continue; /* after the callback asked to stop, drain to the end */
        adbc_sync_dirent e;
        e.name = ev.text;
        e.st = ev.st;
        e.error = (int)ev.error;
        stop = fn(user, &e) != 0;
    }
}

int adbc_sync_list(adbc_sync *s, const char *path, adbc_sync_list_fn fn, void *user,
                   int timeout_ms)
{
    if (!s || !path || !fn)
        return core_fail(ADBC_EINVAL, "adbc_sync_list: NULL argument");
    int64_t deadline = core_deadline(timeout_ms);
    /* The device lists a path it cannot open as empty: stat first so a
     * missing or wrong path is an error, not an empty directory. */
    adbc_sync_statbuf st;
    int rc = adbc_sync_stat(&st, s, path, timeout_ms);
    if (rc < 0)
        return rc;
    if (!S_ISDIR(st.mode))
        return core_fail(ADBC_EINVAL, "%s: not a directory on the device", path);
    return sync_list_raw(s, path, fn, user, core_remaining(deadline));
}

/* ---- jobs ---- */

int sync_job_init(sync_job *j, const adbc_sync_opts *opts, int timeout_ms)
{
    memset(j, 0, sizeof *j);
    adbc_sync_opts_init(&j->opts_store);
    j->opts = &j->opts_store;
    j->timeout_ms = timeout_ms;
    int rc = core_abi_take(&j->opts_store, sizeof j->opts_store, opts, "adbc_sync_opts");
    if (rc < 0)
        return rc;
    const adbc_sync_opts *o = j->opts;
    if (o->max_depth < 0)
        return core_fail(ADBC_EINVAL, "adbc_sync_opts.max_depth is negative (%d)", o->max_depth);
    j->max_entries = o->max_entries ? o->max_entries : ADBC_SYNC_MAX_ENTRIES_DEFAULT;
    j->max_depth = o->max_depth ? o->max_depth : ADBC_SYNC_MAX_DEPTH_DEFAULT;
    if (o->deadline_ms > 0)
        j->deadline = core_now_ms() + o->deadline_ms;
    return 0;
}

int sync_job_wait(const sync_job *j)
{
    if (!j->deadline)
        return j->timeout_ms;
    int64_t left = j->deadline - core_now_ms();
    if (left < 1)
        left = 1; /* 0 would mean "poll"; the check after the wait fails */
    if (j->timeout_ms >= 0 && j->timeout_ms < left)
        return j->timeout_ms;
    return left > INT32_MAX ? INT32_MAX : (int)left;
}

static int deadline_error(const sync_job *j)
{
    return core_fail(ADBC_ETIMEDOUT,
                     "%s %s did not finish within its deadline of %d ms (%llu files, %llu "
                     "bytes done); give it a longer deadline (adbc-snap --deadline) or move "
                     "less",
                     j->verb ? j->verb : "the transfer", j->what ? j->what : "",
                     j->opts->deadline_ms, (unsigned long long)j->res.files,
                     (unsigned long long)j->res.bytes);
}

int sync_job_check(const sync_job *j)
{
    if (j->deadline && core_now_ms() >= j->deadline)
        return deadline_error(j);
    return 0;
}

int sync_job_finish(const sync_job *j, int rc)
{
    if (rc == 0) {
        /* Waits that polled (timeout 0) and found nothing yet left their
         * "no data within 0 ms" behind: a success says nothing. */
        adbc_clear_error();
        return 0;
    }
    if (rc != ADBC_ETIMEDOUT || !j->deadline || core_now_ms() < j->deadline ||
        strstr(adbc_last_error(), "deadline"))
        return rc;
    /* A wait the deadline cut short says "no reply within N ms"; say why. */
    return deadline_error(j);
}

int sync_job_entry(sync_job *j, const char *root)
{
    if (++j->entries > j->max_entries)
        return core_fail(ADBC_ELIMIT,
                         "%s: the tree holds more than %llu entries, the cap for one push or "
                         "pull; raise it (adbc_sync_opts.max_entries, adbc-snap --max-entries) "
                         "or copy it in parts",
                         root, (unsigned long long)j->max_entries);
    return sync_job_check(j);
}

int sync_job_report(sync_job *j, int force)
{
    int rc = sync_job_check(j);
    if (rc < 0)
        return rc;
    if (!j->opts->progress)
        return 0;
    if (!force && j->p.bytes - j->last_report < ADBC_SYNC_DATA_MAX)
        return 0;
    j->last_report = j->p.bytes;
    j->reported_files = j->p.files;
    if (j->opts->progress(j->opts->user, &j->p) == 0)
        return 0;
    return core_fail(ADBC_ECANCELED, "%s: cancelled by the progress callback after %llu bytes",
                     j->p.src ? j->p.src : "transfer", (unsigned long long)j->p.file_bytes);
}

int sync_job_listed(sync_job *j, const char *src, const char *dst, const struct stat *st)
{
    j->p.src = src;
    j->p.dst = dst;
    j->p.file_bytes = 0;
    j->p.file_total = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
    j->p.file_done = 1;
    int rc = sync_job_report(j, 1);
    j->p.src = j->p.dst = NULL; /* valid during the callback only */
    return rc;
}
