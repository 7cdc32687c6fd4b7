/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the small files keys live in.
 *
 * Reads never block: a key path that names a FIFO or a device is opened
 * non-blocking and refused by type before anything is read. Writes go
 * through core_file_write_atomic (temporary file, fsync, rename), so a
 * crash or a full disk never leaves a truncated adbkey behind that the next
 * run would fail to parse. */
#include "auth/auth_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_error(const char *what, const char *path, const char *verb)
{
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
        return core_fail(ADBC_ENOTFOUND, "%s %s does not exist", what, path);
    if (e == EACCES || e == EPERM || e == EROFS)
        return core_fail(ADBC_EPERM, "cannot %s %s %s: %s: check its permissions and owner",
                         verb, what, path, strerror(e));
    return core_fail(ADBC_EIO, "cannot %s %s %s: %s", verb, what, path, strerror(e));
}

int auth_read_file(const char *path, const char *what, size_t max, char **data,
                        size_t *len, unsigned *mode)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return open_error(what, path, "open");

    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = open_error(what, path, "stat");
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return core_fail(ADBC_EFORMAT, "%s %s is not a regular file", what, path);
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return core_fail(ADBC_EFORMAT, "%s %s is too large (%lld bytes; at most %zu expected)",
                         what, path, (long long)st.st_size, max);
    }

    /* Read up to max + 1 bytes: the file may grow between fstat and read. */
    char *buf = core_malloc(max + 1);
    if (!buf) {
        close(fd);
        return core_fail(ADBC_ENOMEM, "out of memory reading %s %s", what, path);
    }
    size_t got = 0;
    while (got <= max) {
        ssize_t r = read(fd, buf + got, max + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int rc = core_fail(ADBC_EIO, "cannot read %s %s: %s", what, path, strerror(errno));
            core_free(buf);
            close(fd);
            return rc;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got > max) {
        core_free(buf);
        return core_fail(ADBC_EFORMAT, "%s %s is too large (more than %zu bytes)", what, path,
                         max);
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    if (mode)
        *mode = (unsigned)st.st_mode & 07777;
    return 0;
}
