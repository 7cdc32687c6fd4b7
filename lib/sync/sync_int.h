/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of an adbc_sync handle and the helpers its files share:
 * sync.c (session, I/O, stat, list), sync_push.c, sync_pull.c and
 * sync_pull_direct.c (a plain pull written from the reader thread),
 * sync_tree.c (walking local and remote trees) and sync_local.c (local
 * file-system helpers). */
#ifndef ADBC_SYNC_INT_H
#define ADBC_SYNC_INT_H

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "adbc/sync.h"
#include "conn/conn_svc.h"
#include "core/internal.h"
#include "sync/sync_comp.h"
#include "sync/sync_proto.h"

/* Received bytes are decoded from here; pulls write DATA straight out of it. */
#define SYNC_RX_CAP (512 * 1024)
/* Requests and DATA chunks are batched here and handed to the stream in one
 * write (4 full chunks with their headers). One batch waits here while the
 * previous one is being sent: enough to keep the link busy, small enough
 * that `adbc-snap push` of any size stays under 8 MB of memory. */
#define SYNC_TX_CAP (4 * (ADBC_SYNC_HDR + ADBC_SYNC_DATA_MAX))
/* Replies still due (pipelined requests): a push leaves up to SYNC_QMAX - 1
 * files unacknowledged (adb defers 128), and a tree pull asks for up to
 * PULL_AHEAD files ahead, so that many small files keep a link of a few
 * hundred KB in flight (20 ms x 200 Mbit/s) busy. */
#define SYNC_QMAX 256

/* One reply still due, and what to say if it is a FAIL. */
typedef struct sync_pending {
    adbc_sync_expect expect;
    uint32_t id;
    char *what;      /* "push a -> b" etc., malloc'd (may be NULL) */
} sync_pending;

struct adbc_sync {
    adbc_conn *c;
    adbc_stream *st;        /* NULL once the session ended: reopened on demand */
    int stat_v2, ls_v2, mkdir_fixed;
    int send_v2, dry_run_v2; /* sendrecv_v2, sendrecv_v2_dry_run_send */
    uint32_t comp_dev;       /* ADBC_SYNC_FLAG_* the device offers */
    int link_fast;           /* the link outruns compression (loopback TCP) */
    adbc_sync_rdec dec;
    uint8_t *rx;            /* traded with the stream's buffer by each read */
    size_t rx_cap, rx_off, rx_len;
    int rx_copy;            /* a compressed pull was asked for: read by copy, see sync.c */
    uint8_t *tx;
    size_t tx_len;
    int peer_closed;        /* a write found the stream closed: only reading is left */
    sync_pending q[SYNC_QMAX];
    size_t q_head, q_len;
    char *last_what;        /* description of the last reply completed */
    char fail_text[ADBC_SYNC_TEXT_MAX + 1];
};

/* A transfer in progress: options, counters and the progress throttle. */
typedef struct sync_job {
    const adbc_sync_opts *opts; /* &opts_store */
    adbc_sync_opts opts_store;  /* the caller's options over the defaults */
    adbc_sync_result res;
    adbc_sync_progress p;
    uint64_t last_report;   /* p.bytes at the last report */
    uint64_t reported_files; /* p.files as of the last report */
    int timeout_ms;         /* per wait */
    int64_t deadline;       /* the whole call must end by then (0: no bound) */
    const char *verb, *what; /* "pull", and its source: for messages */
    uint64_t entries;       /* tree walk: entries met so far */
    uint64_t max_entries;   /* ... and the cap */
    int max_depth;
    mode_t umask;           /* pull: the process umask */
    int v2;                 /* SND2/RCV2 rather than SEND/RECV */
    uint32_t flags;         /* their flags: one compression, dry run */
    uint8_t *zbuf;          /* compression: file bytes in (push) or out (pull) */
} sync_job;

#define SYNC_ZBUF (256 * 1024)

/* ---- session and I/O (sync.c) ---- */

/* Open the stream if the session ended. */
int sync_ensure(adbc_sync *s, int timeout_ms);

/* End the session at once (after a failure or a timeout): the stream is
 * closed, pending replies and buffered bytes are dropped. */
void sync_abort(adbc_sync *s);

/* Append a request to the batch (flushing first when full). */
int sync_put_req(adbc_sync *s, uint32_t id, const char *path, size_t len, int timeout_ms);

/* Room for n more bytes in the batch, flushing it first if needed. */
int sync_tx_room(adbc_sync *s, size_t n, int timeout_ms);

/* Hand the batch to the stream. */
int sync_flush(adbc_sync *s, int timeout_ms);

/* Record that a reply of kind x is due (what: description for errors,
 * taken over). ADBC_EINVAL when SYNC_QMAX replies are already due. */
int sync_expect(adbc_sync *s, adbc_sync_expect x, uint32_t id, char *what);

/* The next reply event. Flushes the batch first. timeout_ms 0 polls: returns
 * 0 when nothing has arrived. Returns 1 with *ev, or a negative error (the
 * session is then aborted). A DATA event points into the receive buffer and
 * is valid until the next call. An event that completes a reply takes it
 * off the queue. A FAIL event ends the session: the handle is aborted after
 * it, as adbd closes it (its text stays valid until the next FAIL). */
int sync_next(adbc_sync *s, adbc_sync_event *ev, int timeout_ms);

/* Like sync_next, but only from bytes already received: 0 when they hold
 * no complete event. Events from one call and the next stay valid together
 * as long as no sync_next() read more in between, so a caller can gather
 * several DATA pieces for one write. */
int sync_next_buffered(adbc_sync *s, adbc_sync_event *ev);

/* The description given to sync_expect for the reply that the last
 * terminal event (STAT, LIST_END, DONE, OKAY, FAIL) completed; "" if none. */
const char *sync_last_what(const adbc_sync *s);

/* Replies still due. */
size_t sync_due(const adbc_sync *s);

/* List without the directory check (tree walking). */
int sync_list_raw(adbc_sync *s, const char *path, adbc_sync_list_fn fn, void *user,
                  int timeout_ms);

/* ---- jobs ---- */

int sync_job_init(sync_job *j, const adbc_sync_opts *opts, int timeout_ms);
/* The bound for the next wait: the timeout, shortened to what is left
 * before the deadline (at least 1 ms; sync_job_check then fails). */
int sync_job_wait(const sync_job *j);
/* ADBC_ETIMEDOUT, with a message naming the deadline, once it has passed. */
int sync_job_check(const sync_job *j);
/* At the end of a push or pull: a wait that timed out because the deadline
 * cut it short is reported as the deadline. */
int sync_job_finish(const sync_job *j, int rc);
/* One more directory entry met by a tree walk under root: ADBC_ELIMIT past
 * the cap, and the deadline is checked. */
int sync_job_entry(sync_job *j, const char *root);
/* Report progress (throttled to every 64 KiB unless force). ADBC_ECANCELED
 * when the callback asked to stop (the caller aborts the session). */
int sync_job_report(sync_job *j, int force);
/* ADBC_SYNC_LIST_ONLY: report src -> dst as a file that would be pushed. */
int sync_job_listed(sync_job *j, const char *src, const char *dst, const struct stat *st);

/* ---- sync v2 (sync_v2.c) ---- */

/* Read the v2 features from the connection (at open). */
void sync_v2_init(adbc_sync *s);

/* Decide SND2/RCV2, compression and dry run for a push (push = 1) or pull
 * from j->opts; allocates j->zbuf when compressing. ADBC_EUNSUPPORTED when
 * an explicit choice cannot be had. */
int sync_job_setup(adbc_sync *s, sync_job *j, int push);

/* Free what sync_job_setup allocated. */
void sync_job_done(sync_job *j);

/* ---- single files (sync_push.c, sync_pull.c) ---- */

/* Queue one local file's SEND, DATA and DONE; its OKAY is collected later
 * (sync_push_collect). st: the local lstat. */
int sync_push_one(adbc_sync *s, sync_job *j, const char *local, const char *remote,
                  const struct stat *st);

/* Where a pushed file's contents come from: a local file (fd >= 0) or the
 * caller's read function (adbc_sync_push_stream; fd -1). The send loops
 * read through it, so both take the same path. */
typedef struct sync_src {
    int fd;
    adbc_sync_read_fn fn;
    void *user;
    const char *what;   /* fd: the local file; fn: the remote path (messages) */
    uint32_t mtime;     /* fn: what DONE carries; the function may set it at the end */
    int eof;            /* fn: it returned 0 and is not called again */
} sync_src;

/* Push a local entry (file or link: as a link, or its target's contents
 * with ADBC_SYNC_FOLLOW_LINKS or when the device cannot make links there). */
int sync_push_entry(adbc_sync *s, sync_job *j, const char *local, const char *remote,
                    const struct stat *lst);

/* ADBC_EINVAL naming the flags beyond `allowed` (fn: the public call). */
int sync_refuse_flags(const char *fn, unsigned flags, unsigned allowed);

/* Wait for replies due until at most `keep` remain. */
int sync_push_collect(adbc_sync *s, sync_job *j, size_t keep);

/* Receive remote into local atomically. size/mtime/mode: from the device's
 * stat (mode 0: unknown). */
int sync_pull_one(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                  const adbc_sync_statbuf *st);

/* sync_pull_one in two halves, so a tree pull can ask for the next files
 * while one is arriving: queue the RECV; then take its reply. Replies come
 * in request order. */
int sync_pull_request(adbc_sync *s, sync_job *j, const char *remote);
int sync_pull_receive(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                      const adbc_sync_statbuf *st);

/* What a pulled file is written through (a link is followed, a FIFO or
 * device node written in place: *inplace = 1); *final malloc'd. */
int sync_pull_dest(const char *local, char **final, int *inplace);

/* ---- trees (sync_tree.c) ---- */

int sync_push_tree(adbc_sync *s, sync_job *j, const char *local, const char *remote);
/* ---- pulling a file's bytes (sync_pull.c, sync_pull_direct.c) ---- */

#define SYNC_PULL_IOV 64 /* pieces gathered into one writev */

/* The file's blocks reserved ahead of the writes (sync_pull.c). */
typedef struct sync_reserve {
    int on;
    uint64_t size;     /* the device's size for the file */
    uint64_t reserved; /* blocks reserved up to here */
} sync_reserve;

/* Written bytes so far: reserve the next step when they near its end. */
void sync_reserve_ahead(int fd, sync_reserve *r, uint64_t written);

/* Write the gathered pieces (iov is consumed): 0, or -1 with errno. */
int sync_write_iov(int fd, struct iovec *iov, int n);

/* Where a pulled file's bytes go: a local file (fd >= 0; local names it) or
 * the caller's write function (adbc_sync_pull_stream; fd -1, local NULL).
 * The receive loops write through it, so both take the same path. */
typedef struct sync_sink {
    int fd;
    sync_reserve *res;      /* fd: the blocks reserved ahead; NULL: none */
    adbc_sync_write_fn fn;
    void *user;
    const char *local;      /* fd: the file written, for messages */
    const char *remote;     /* fn: the file pulled, for messages */
} sync_sink;

/* Write the gathered pieces (iov is consumed), in order: 0, or a negative
 * error after which the session is ended and nothing more is written. */
int sync_sink_write(adbc_sync *s, sync_job *j, sync_sink *k, struct iovec *iov, int n);

/* A failure while receiving: says how far it got and that no file was made
 * (local NULL: a stream, whose caller had every byte that arrived). */
int sync_pull_arrived_fail(sync_job *j, int rc, const char *local);

/* A local write failed (errno e): end the session, say what happened. */
int sync_pull_write_failed(adbc_sync *s, int e, const char *local);

/* A plain pull's DATA written from the connection's reader thread
 * (sync_pull_direct.c), where it applies. 0: receive the rest (or all of
 * it) as usual; < 0: failed, the session is ended. */
int sync_pull_direct(adbc_sync *s, sync_job *j, int fd, sync_reserve *res, const char *remote,
                     const char *local);

/* sync_pull_tree.c */
int sync_pull_tree(adbc_sync *s, sync_job *j, const char *remote, const char *local,
                   const adbc_sync_statbuf *root);

/* push --sync (ADBC_SYNC_SKIP_SAME): the device's lstat of each remote path,
 * asked for in pipelined batches; same[i] = 1 where the device's copy has
 * the local size (when check_size) and mtime. */
int sync_same_on_device(adbc_sync *s, sync_job *j, const char *const *remote,
                        const struct stat *const *local, size_t n, int check_size, uint8_t *same);

/* ---- local helpers (sync_local.c) ---- */

/* "a" + "/" + "b", malloc'd; NULL after setting ENOMEM. */
char *sync_join(const char *a, const char *b);
/* mkdir -p (mode 0777 before umask). */
int sync_mkdirs(const char *path);
/* The process umask, read without changing it. */
mode_t sync_umask(void);

#endif
