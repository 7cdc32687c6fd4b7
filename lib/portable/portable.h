/* SPDX-License-Identifier: Apache-2.0 */
/* Plain POSIX pieces with no library state, shared by libadbc (lib/core)
 * and the tools (tools/ops), which see only the public API and so cannot
 * call lib/core: one source for both instead of a copy in each. Static
 * inline, nothing allocated, no error reporting of its own: each side wraps
 * them in its own way of failing (core_fail, errno). The tools' include
 * path holds this folder and no other of lib/ (tests/sh/layers.sh). */
#ifndef ADBC_PORTABLE_H
#define ADBC_PORTABLE_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Monotonic milliseconds: the clock every deadline counts on. */
static inline int64_t portable_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Initialise cv so its timed waits count on CLOCK_MONOTONIC: a step of the
 * wall clock neither cuts a wait short nor stretches it. 0 or an errno. */
static inline int portable_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

/* Wait on cv (mu held, cv from portable_cond_init) until signalled or the
 * monotonic clock reaches deadline_ms (< 0: no deadline). 0 when woken
 * (perhaps spuriously), ETIMEDOUT once the deadline has passed. */
static inline int portable_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return pthread_cond_wait(cv, mu);
    if (portable_now_ms() >= deadline_ms)
        return ETIMEDOUT;
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    return pthread_cond_timedwait(cv, mu, &ts);
}

/* A stream connection to sa within ms: a non-blocking socket (close-on-exec)
 * whose connect has completed, or -1 with errno set (ETIMEDOUT when ms
 * passed first, the socket's own error when the peer refused). */
static inline int portable_dial(const struct sockaddr *sa, socklen_t sl, int ms)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, sa, sl) == 0)
        return fd;
    int err = errno;
    if (err == EINPROGRESS) {
        int64_t end = portable_now_ms() + (ms < 0 ? 0 : ms);
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r;
        for (;;) {
            int64_t left = end - portable_now_ms();
            r = poll(&pf, 1, left > 0 ? (int)left : 0);
            if (r >= 0 || errno != EINTR)
                break;
        }
        socklen_t el = sizeof err;
        if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
            return fd;
        if (r == 0)
            err = ETIMEDOUT;
        else if (r < 0 || err == 0)
            err = errno ? errno : EIO;
    }
    close(fd);
    errno = err;
    return -1;
}

/* The temporary file a whole-or-nothing write of path goes through:
 * ".<name>.adbc-XXXXXX" beside it (the same file system, so the final
 * rename is atomic; the leading dot keeps it out of listings), ready for
 * mkostemp. The size to allocate for it, and the name written into tmp. */
static inline size_t portable_tmp_size(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t blen = strlen(path + dirlen);
    return dirlen + 1 + (blen > 200 ? 200 : blen) + 13 + 1;
}

static inline void portable_tmp_name(char *tmp, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t blen = strlen(path + dirlen);
    if (blen > 200)
        blen = 200; /* stay under NAME_MAX with the suffix */
    snprintf(tmp, size, "%.*s.%.*s.adbc-XXXXXX", (int)dirlen, path, (int)blen, path + dirlen);
}

/* Length of the UTF-8 sequence at p[0..n): 1 to 4, or 0 when it is not
 * valid UTF-8 (a stray continuation byte, a cut sequence, an overlong
 * form, a surrogate, beyond U+10FFFF). */
static inline size_t portable_utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0)
        len = 2, v = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        len = 3, v = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return len;
}

/* How every JSON string adbc writes is escaped (the snapshot's JSON and
 * text, adbc-snap's --json): backslash and double quote escaped; newline,
 * carriage return and tab in their short forms; every other control
 * character (C0, DEL, C1 U+0080..U+009F) as \u00XX; a byte that is not
 * UTF-8 as \ufffd; everything else copied. For the unit at p[0..n) (n >= 1):
 * *span is the bytes it takes; the return is the length of its escaped form
 * written to out, or 0 when it is copied as it is. */
static inline size_t portable_json_unit(const unsigned char *p, size_t n, char out[6],
                                        size_t *span)
{
    static const char hex[] = "0123456789abcdef";
    unsigned c = p[0];
    *span = 1;
    if (c >= 0x80) {
        size_t l = portable_utf8_len(p, n);
        if (!l) {
            memcpy(out, "\\ufffd", 6);
            return 6;
        }
        *span = l;
        if (l != 2 || c != 0xc2 || p[1] > 0x9f)
            return 0;
        c = p[1]; /* C2 80..9F is U+0080..U+009F */
    }
    out[0] = '\\';
    switch (c) {
    case '"': out[1] = '"'; return 2;
    case '\\': out[1] = '\\'; return 2;
    case '\n': out[1] = 'n'; return 2;
    case '\r': out[1] = 'r'; return 2;
    case '\t': out[1] = 't'; return 2;
    default:
        if (c >= 0x20 && c != 0x7f && c < 0x80)
            return 0;
        out[1] = 'u';
        out[2] = '0';
        out[3] = '0';
        out[4] = hex[c >> 4];
        out[5] = hex[c & 15];
        return 6;
    }
}

#endif
