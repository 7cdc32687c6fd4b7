/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' copies of lib/core's mechanisms (ops_util.h says why). */
#include "ops_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ops_core.h"

int ops_cond_init(pthread_cond_t *cv)
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

int ops_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return pthread_cond_wait(cv, mu);
    if (ops_now_ms() >= deadline_ms)
        return ETIMEDOUT;
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    return pthread_cond_timedwait(cv, mu, &ts);
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int ops_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode,
                          unsigned flags)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    size_t blen = strlen(base);
    if (blen > 200)
        blen = 200; /* stay under NAME_MAX with the suffix */
    size_t n = dirlen + 1 + blen + 13 + 1;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%.*s.%.*s.adbc-XXXXXX", (int)dirlen, path, (int)blen, base);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    int rc = fchmod(fd, (mode_t)mode) != 0 || write_all(fd, data, len) != 0 ||
                     ((flags & OPS_FILE_SYNC) && fsync(fd) != 0)
                 ? -1
                 : 0;
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && (flags & OPS_FILE_NOREPLACE)) {
        /* link() fails with EEXIST when path exists: of two, one wins. */
        rc = link(tmp, path);
        e = errno;
    } else if (rc == 0) {
        rc = rename(tmp, path);
        e = errno;
    }
    if (rc != 0 || (flags & OPS_FILE_NOREPLACE))
        unlink(tmp);
    free(tmp);
    errno = e;
    return rc != 0 ? -1 : 0;
}
