/* SPDX-License-Identifier: Apache-2.0 */
/* Library-internal helpers shared by every layer. Not installed. */
#ifndef ADBC_CORE_INTERNAL_H
#define ADBC_CORE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "adbc/error.h"

#if defined(__GNUC__)
#define ADBC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ADBC_PRINTF(a, b)
#endif

/* Set the thread's last-error message and return code (always negative). */
int core_fail(int code, const char *fmt, ...) ADBC_PRINTF(2, 3);

/* Return code, keeping the message a lower layer already set (or the bare
 * strerror text when there is none). */
int core_fail_keep(int code);

/* A public function's argument that may not be NULL was: ADBC_EINVAL with
 * "FN: WHAT is NULL". */
int core_null(const char *fn, const char *what);

/* Allocation wrappers. They go through one place so the fault-injection
 * build can fail the Nth allocation. */
void *core_malloc(size_t n);
void *core_calloc(size_t n, size_t size);
void *core_realloc(void *p, size_t n);
char *core_strdup(const char *s);
char *core_strndup(const char *s, size_t n);
void core_free(void *p);

/* The size rule for structs callers fill in (docs/abi.md): their first
 * member is size_t size, the struct's size as the caller compiled it.
 * core_abi_take copies a caller's struct over dst, which holds the defaults
 * of this library's (possibly larger) version; fields the caller's header
 * did not have keep their defaults. ADBC_EINVAL when size is 0 (never
 * initialised) or larger than this library knows (headers newer than the
 * library). src NULL: dst is left as it is. */
int core_abi_take(void *dst, size_t dst_size, const void *src, const char *type);
/* An _init function's half: copy the defaults in src (src_size bytes, size
 * member included) into a caller's struct of size bytes, and set its size. */
void core_abi_give(void *dst, size_t size, const void *src, size_t src_size);

/* A growable buffer (buf.c): doubles as it grows, always NUL-terminated
 * once anything was added. Zero-initialise it; set limit to bound len
 * (0: none). The first failure is kept in err (ADBC_ENOMEM, or ADBC_ELIMIT
 * past limit, with a bare message callers replace with their own) and makes
 * every later call a no-op, so a builder checks once, at the end. */
typedef struct core_buf {
    char *p;
    size_t len, cap;
    size_t limit;
    int err;
} core_buf;
/* Room for more bytes (and the NUL) after len: 0 or b->err. */
int core_buf_reserve(core_buf *b, size_t more);
void core_buf_add_slow(core_buf *b, const void *s, size_t n);
static inline void core_buf_add(core_buf *b, const void *s, size_t n)
{
    if (!b->err && b->cap - b->len > n) { /* the common case, inline */
        if (n)
            memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    core_buf_add_slow(b, s, n);
}
void core_buf_puts(core_buf *b, const char *s);
void core_buf_printf(core_buf *b, const char *fmt, ...) ADBC_PRINTF(2, 3);
/* Hand the contents over (*out core_malloc'd, "" when nothing was added) and
 * reset b; on an earlier failure free b and return its err. len may be NULL. */
int core_buf_take(core_buf *b, char **out, size_t *len);
void core_buf_free(core_buf *b);

/* Writing a file whole or not at all (file.c): a temporary file beside the
 * target, moved over it once complete. */
typedef struct core_tmpfile {
    char *tmp; /* its name */
    int fd;    /* open for writing, mode 0600 */
} core_tmpfile;
enum {
    CORE_FILE_SYNC = 1,      /* fsync the file before it is moved */
    CORE_FILE_SYNC_DIR = 2,  /* and the directory after (the move survives a crash) */
    CORE_FILE_NOREPLACE = 4, /* ADBC_EBUSY when the target exists (of two, one wins) */
};
/* Create the temporary file beside path. */
int core_tmpfile_open(core_tmpfile *f, const char *path);
/* Close it and move it over path (flags: CORE_FILE_*). Consumes f: on
 * failure the temporary file is removed. */
int core_tmpfile_commit(core_tmpfile *f, const char *path, unsigned flags);
/* Close and remove the temporary file. */
void core_tmpfile_abort(core_tmpfile *f);
/* The whole of it for data in memory, with mode (set before anything is
 * written; flags: CORE_FILE_*). */
int core_file_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
                           unsigned flags);

/* Monotonic clock in milliseconds. */
int64_t core_now_ms(void);
/* Wall clock in milliseconds since 1970, for timestamps shown to people
 * and seeds, never for measuring or bounding a wait. */
int64_t core_wall_ms(void);

/* A condition variable whose timed waits count on the monotonic clock
 * (core_now_ms), so a step of the wall clock neither cuts a wait short nor
 * stretches it. Every timed wait in adbc goes through these two. 0 or an
 * errno value. */
int core_cond_init(pthread_cond_t *cv);
/* Wait on cv (mu held) until signalled or core_now_ms() reaches deadline
 * (< 0: no deadline). 0 when woken (perhaps spuriously: check the
 * condition), ETIMEDOUT once the deadline has passed. cv must come from
 * core_cond_init. */
int core_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline);

/* Deadline helpers: timeout_ms < 0 means wait forever. */
int64_t core_deadline(int timeout_ms);
/* Milliseconds left until deadline (>= 0), or -1 for no deadline. */
int core_remaining(int64_t deadline);

static inline uint32_t core_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void core_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t core_rd64(const uint8_t *p)
{
    return (uint64_t)core_rd32(p) | (uint64_t)core_rd32(p + 4) << 32;
}

static inline void core_wr64(uint8_t *p, uint64_t v)
{
    core_wr32(p, (uint32_t)v);
    core_wr32(p + 4, (uint32_t)(v >> 32));
}

#endif
