/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — file transfer over the sync: service (what `adb push`, `adb pull`
 * and `adb ls` use).
 *
 * An adbc_sync is one sync session on a connection. It speaks v1 (STAT,
 * LIST, SEND, RECV) and, when the device advertises stat_v2 / ls_v2, the v2
 * stat and list requests with 64-bit sizes, full stat fields and the
 * device's errno; with sendrecv_v2 (and sendrecv_v2_brotli / _lz4 / _zstd /
 * _dry_run_send) it sends and receives with SND2/RCV2, compressed when both
 * sides have the algorithm. Transfers stream: memory use does not depend on
 * file size.
 *
 * adbd ends the session after any failure it reports (FAIL); the handle then
 * opens a new one on its next call, so one failed file does not spoil it.
 *
 * A handle is used by one thread at a time; several handles may share a
 * connection. Timeouts are in milliseconds (< 0 waits forever): for stat and
 * lstat they bound the whole call; for list, push and pull they bound each
 * wait for the device, so a large transfer may take as long as it needs as
 * long as it keeps moving. A push or pull can also be given a bound on the
 * whole call (adbc_sync_opts.deadline_ms), and tree walks have caps on the
 * entries and levels they take (max_entries, max_depth).
 */
#ifndef ADBC_SYNC_H
#define ADBC_SYNC_H

#include "adbc/version.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adbc/conn.h"
#include "adbc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADBC_SYNC_DATA_MAX (64 * 1024) /* largest DATA chunk either side may send */
#define ADBC_SYNC_PATH_MAX 1024        /* longest request path adbd accepts */
#define ADBC_SYNC_NAME_MAX 255         /* longest directory entry name */

typedef struct adbc_sync adbc_sync;

/* What the device reports about a file. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_sync_statbuf {
    uint32_t mode;   /* st_mode: type and permission bits (S_IFREG | 0644 ...) */
    uint64_t size;   /* bytes (v1: only the low 32 bits reach the host) */
    int64_t mtime;   /* seconds since the epoch */
    int64_t atime;   /* v2 only (else 0) */
    int64_t ctime;   /* v2 only */
    uint64_t dev;    /* v2 only */
    uint64_t ino;    /* v2 only */
    uint32_t nlink;  /* v2 only */
    uint32_t uid;    /* v2 only */
    uint32_t gid;    /* v2 only */
    int v2;          /* 1 when every field came from the device (stat_v2 / ls_v2) */
} adbc_sync_statbuf;

/* One directory entry, as the list callback sees it. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_sync_dirent {
    const char *name; /* NUL-terminated; valid during the callback only */
    adbc_sync_statbuf st;
    int error;        /* ls_v2: the device's errno when it could not lstat the
                         entry (st is then all zero); 0 otherwise */
} adbc_sync_dirent;

/* Open a sync session ("sync:") on c. */
ADBC_API int adbc_sync_open(adbc_sync **out, adbc_conn *c, int timeout_ms);

/* End the session (QUIT) and free the handle. NULL is a no-op. */
ADBC_API void adbc_sync_close(adbc_sync *s);

/* 1 when the device speaks the v2 stat (stat_v2) / list (ls_v2) requests. */
ADBC_API int adbc_sync_has_stat_v2(const adbc_sync *s);
ADBC_API int adbc_sync_has_ls_v2(const adbc_sync *s);

/* Stat a path, following a final symlink. Without stat_v2 this is emulated
 * as adb does: lstat, then a link is probed as "path/" to tell a directory
 * from a file (its size is then 0). ADBC_ENOTFOUND when it does not exist,
 * ADBC_EPERM when the device may not look, ADBC_EREMOTE for other errors
 * (the message names the device's errno). */
ADBC_API int adbc_sync_stat(adbc_sync_statbuf *st, adbc_sync *s, const char *path, int timeout_ms);

/* Stat a path without following a final symlink. */
ADBC_API int adbc_sync_lstat(adbc_sync_statbuf *st, adbc_sync *s, const char *path, int timeout_ms);

/* Called once per directory entry ("." and ".." included, as the device
 * sends them). Return 0 to go on, nonzero to skip the rest. */
typedef int (*adbc_sync_list_fn)(void *user, const adbc_sync_dirent *e);

/* List a directory (LIS2 with ls_v2, else LIST). The device answers a path it
 * cannot open with an empty list, so adbc stats it first: ADBC_ENOTFOUND for a
 * missing path, ADBC_EINVAL for one that is not a directory. */
ADBC_API int adbc_sync_list(adbc_sync *s, const char *path, adbc_sync_list_fn fn, void *user,
                   int timeout_ms);

/* Progress of a push or pull. Byte counts are of file contents. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_sync_progress {
    const char *src;        /* the file in transfer (local for push, remote for pull) */
    const char *dst;
    uint64_t file_bytes;    /* done of this file */
    uint64_t file_total;    /* its size as known beforehand (it may change) */
    uint64_t bytes;         /* done of the whole operation */
    uint64_t total;         /* expected for the whole operation */
    uint64_t files;         /* files finished (a push's are acknowledged by the
                               device after their last report: one more report
                               at the end, file_done 0, counts them all) */
    uint64_t files_total;   /* files to transfer */
    int file_done;          /* 1 on the last report for this file */
} adbc_sync_progress;

/* Return 0 to go on; nonzero stops the push or pull with ADBC_ECANCELED
 * (the file in transfer is dropped: a pull removes its temporary, and the
 * device deletes a partly pushed file when the session ends). */
typedef int (*adbc_sync_progress_fn)(void *user, const adbc_sync_progress *p);

enum {
    /* push: send a symlink's target contents instead of the link itself */
    ADBC_SYNC_FOLLOW_LINKS = 1u << 0,
    /* pull: do not copy the device's mtime and mode bits to the local files */
    ADBC_SYNC_NO_ATTRS = 1u << 1,
    /* push: send everything, but the device writes nothing (adb push -n;
       needs sendrecv_v2_dry_run_send, else ADBC_EUNSUPPORTED) */
    ADBC_SYNC_DRY_RUN = 1u << 2,
    /* push: leave out files the device already has, by adb push --sync's
       (and adb sync's) rule: in a tree, a file whose device copy has the same
       size and type and the same mtime (a link: a device mtime not older);
       a single file, the same without the size. They are counted in
       adbc_sync_result.skipped. */
    ADBC_SYNC_SKIP_SAME = 1u << 3,
    /* push of a tree: walk it in adb's order (adb sync, adb push): each
       directory's entries in the order the directory gives them, its files
       before its subdirectories. Without it, entries go in name order. */
    ADBC_SYNC_DIR_ORDER = 1u << 4,
    /* push: send nothing and change nothing on the device (adb sync -l);
       each file that would be sent (after ADBC_SYNC_SKIP_SAME) is reported
       once to the progress callback, with file_done 1 and no bytes. Such a
       file is counted in neither files nor skipped. */
    ADBC_SYNC_LIST_ONLY = 1u << 5,
};

/* Defaults of adbc_sync_opts.max_entries and .max_depth (0 takes them). */
#define ADBC_SYNC_MAX_ENTRIES_DEFAULT 1000000u
#define ADBC_SYNC_MAX_DEPTH_DEFAULT 64

/* Compression of file contents on the wire (sync v2). */
typedef enum adbc_sync_compression {
    /* The default: the best algorithm both sides have (zstd, then lz4, then
       brotli, as adb ranks them), except on a link faster than compressing:
       TCP to this machine (loopback, also under TLS) and USB 3 get none;
       USB 2, remote TCP and handed-over descriptors are compressed (see
       docs/sync.md, "Compression"). */
    ADBC_SYNC_COMPRESS_AUTO = 0,
    ADBC_SYNC_COMPRESS_NONE,   /* never (adb -Z) */
    ADBC_SYNC_COMPRESS_ANY,    /* the best both sides have, on any link (adb -z any) */
    ADBC_SYNC_COMPRESS_BROTLI, /* exactly this one: ADBC_EUNSUPPORTED when the */
    ADBC_SYNC_COMPRESS_LZ4,    /* device or this build lacks it */
    ADBC_SYNC_COMPRESS_ZSTD,
} adbc_sync_compression;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_sync_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    adbc_sync_progress_fn progress; /* may be NULL; called at most every 64 KiB
                                       moved and once at the end of each file */
    void *user;
    unsigned flags;                 /* ADBC_SYNC_* */
    adbc_sync_compression compression; /* ADBC_SYNC_COMPRESS_AUTO after opts_init */
    /* Caps on a tree push or pull, against a device (or a local tree) that
       never ends: past them the call fails with ADBC_ELIMIT and says which.
       0 takes the default. */
    uint64_t max_entries; /* directory entries met in all ("." and ".." not
                             counted); ADBC_SYNC_MAX_ENTRIES_DEFAULT */
    int max_depth;        /* levels below the root; ADBC_SYNC_MAX_DEPTH_DEFAULT */
    /* A bound on the whole push or pull in milliseconds, on top of the
       per-wait timeout; ADBC_ETIMEDOUT when it passes (the file in transfer
       is dropped as after any failure). <= 0: none (the default). */
    int deadline_ms;
} adbc_sync_opts;

/* What a push or pull did. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_sync_result {
    uint64_t files;     /* files transferred */
    uint64_t skipped;   /* special files (sockets, fifos, devices) left out,
                           and files ADBC_SYNC_SKIP_SAME left out */
    uint64_t bytes;     /* content bytes transferred (a pushed link's: its
                           target and the NUL after it, as adb counts them) */
    uint64_t dirs;      /* directories created (tree pull; tree push: empty ones) */
    uint64_t wire_bytes; /* DATA payload bytes that crossed the link for those
                            contents (less than bytes when compressed) */
    adbc_sync_compression compression; /* what the transfer used: NONE, BROTLI,
                                          LZ4 or ZSTD */
} adbc_sync_result;

ADBC_API void adbc_sync_opts_init_sized(adbc_sync_opts *o, size_t size);
#define adbc_sync_opts_init(o) adbc_sync_opts_init_sized((o), sizeof *(o))

/* Copy local to exactly the remote path: a file (regular or, by default, a
 * symlink sent as a link), or a directory tree merged into remote. Files keep
 * their mode bits (adbd widens them: it copies the owner's bits to group and
 * other) and their mtime. The device creates missing parent directories
 * (fixed_push_mkdir); empty directories, and every directory on devices
 * without that feature, are made with `mkdir -p` over exec:. A tree push
 * stops at the first file the device rejects; the error names that file and
 * carries the device's message. opts and res may be NULL. */
ADBC_API int adbc_sync_push(adbc_sync_result *res, adbc_sync *s, const char *local,
                   const char *remote, const adbc_sync_opts *opts, int timeout_ms);

/* Copy remote (a file, or a directory tree; symlinks are followed) to exactly
 * the local path. Each file is received into a temporary file beside its
 * target and renamed over it only when complete: on any failure (device gone,
 * FAIL, local disk full) the temporary is removed and no partial file is left
 * under the target name. Missing local parent directories are created. */
ADBC_API int adbc_sync_pull(adbc_sync_result *res, adbc_sync *s, const char *remote,
                   const char *local, const adbc_sync_opts *opts, int timeout_ms);

/* Streams: a file's contents from and to the caller instead of a local file
 * (what adbc-serve's adb server uses to serve a client's sync: session with
 * this engine; docs/sync.md, "Streams"). One file per call; the progress
 * report's side that is the caller's (src of a push, dst of a pull) is "".
 * The functions run in the calling thread and are not interrupted: one that
 * waits must bound its own wait (timeout_ms bounds the waits for the device). */

/* The contents of a pushed file, from the caller: put up to cap bytes in buf
 * and return how many (any count from 1 to cap), 0 at the end of the file,
 * or a negative ADBC_E* code, which fails the push with that code (the device
 * drops the partial file). After it returned 0 it is not called again. At
 * the end (returning 0) it may set *mtime, the modification time the device
 * gives the file; *mtime holds the mtime argument of the push until then.
 * buf is a DATA chunk's room in the batch that goes to the device: reading
 * straight into it copies nothing. */
typedef ssize_t (*adbc_sync_read_fn)(void *user, void *buf, size_t cap, uint32_t *mtime);

/* The contents of a pulled file, to the caller: take all n bytes and return 0,
 * or a negative ADBC_E* code, which fails the pull with that code. buf points
 * into the session's receive buffer (uncompressed: the device's DATA as it
 * arrived) and is valid during the call only. */
typedef int (*adbc_sync_write_fn)(void *user, const void *buf, size_t n);

/* Push one file whose contents come from rd (not from a local file) to
 * exactly the remote path, with mode (the full st_mode: S_IFREG plus
 * permission bits; S_IFLNK for a link, whose contents are its target and NUL
 * as adb sends it: at most ADBC_SYNC_DATA_MAX bytes, a NUL is added when the
 * last byte is not one) and mtime. opts: compression, ADBC_SYNC_DRY_RUN,
 * progress (file_total 0: unknown), deadline_ms as for adbc_sync_push; the
 * flags that are about trees or local files are refused with ADBC_EINVAL
 * naming them. A link, and a file under ADBC_SYNC_DATA_MAX bytes, go
 * uncompressed, as adb sends them (with compression on, up to that much is
 * read before the request to tell). Returns when the
 * device has acknowledged the file (its FAIL message in the error, as
 * adbc_sync_push). res and opts may be NULL. */
ADBC_API int adbc_sync_push_stream(adbc_sync_result *res, adbc_sync *s, adbc_sync_read_fn rd,
                                   void *user, const char *remote, uint32_t mode, uint32_t mtime,
                                   const adbc_sync_opts *opts, int timeout_ms);

/* Pull the remote file into wr, in order, every byte once; nothing more is
 * written after a failure. st, when not NULL, gets the remote file's stat as
 * the pull found it before the first byte (the stat adbc_sync_pull makes
 * too: it costs no extra round trip). A remote that is not a regular file
 * (or a link to one) fails with ADBC_EINVAL (a directory) before any byte;
 * a missing one as adbc_sync_pull's does (ADBC_ENOTFOUND). res, st and opts
 * may be NULL; opts as adbc_sync_pull (compression, progress, deadline_ms;
 * no flags apply: any is refused with ADBC_EINVAL naming it). */
ADBC_API int adbc_sync_pull_stream(adbc_sync_result *res, adbc_sync_statbuf *st, adbc_sync *s,
                                   const char *remote, adbc_sync_write_fn wr, void *user,
                                   const adbc_sync_opts *opts, int timeout_ms);

/* "any", "none", "brotli", "lz4", "zstd" (adb's spellings for -z) into *out;
 * ADBC_EINVAL, with the accepted names in the message, otherwise. */
ADBC_API int adbc_sync_compression_parse(adbc_sync_compression *out, const char *name);

/* The name of c ("auto" for ADBC_SYNC_COMPRESS_AUTO). */
ADBC_API const char *adbc_sync_compression_name(adbc_sync_compression c);

/* 1 when the device speaks SND2/RCV2 (sendrecv_v2). */
ADBC_API int adbc_sync_has_send_v2(const adbc_sync *s);

/* 1 when both the device and this build have compression c (BROTLI, LZ4 or
 * ZSTD); for ANY, when they share at least one. */
ADBC_API int adbc_sync_has_compression(const adbc_sync *s, adbc_sync_compression c);

/* What ADBC_SYNC_COMPRESS_AUTO and ANY resolve to on this session's link
 * (NONE, BROTLI, LZ4 or ZSTD). */
ADBC_API adbc_sync_compression adbc_sync_compression_resolve(const adbc_sync *s, adbc_sync_compression c);

/* The device's errno name and text for a v2 wire errno ("ENOENT", "No such
 * file or directory"); "E?" / "unknown error" for values adb does not define. */
ADBC_API const char *adbc_sync_errno_name(uint32_t wire_errno);
ADBC_API const char *adbc_sync_errno_text(uint32_t wire_errno);

#ifdef __cplusplus
}
#endif
#endif
