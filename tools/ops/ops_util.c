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
#include "portable.h"

int ops_cond_init(pthread_cond_t *cv)
{
    return portable_cond_init(cv);
}

int ops_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    return portable_cond_wait(cv, mu, deadline_ms);
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
    size_t n = portable_tmp_size(path);
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    portable_tmp_name(tmp, n, path);
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
