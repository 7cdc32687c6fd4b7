/* SPDX-License-Identifier: Apache-2.0 */
/* Reading and writing the small files keys live in.
 *
 * Reads never block: a key path that names a FIFO or a device is opened
 * non-blocking and refused by type before anything is read. Writes are
 * atomic (temporary file, fsync, rename), so a crash or a full disk never
 * leaves a truncated adbkey behind that the next run would fail to parse. */
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

/* Move the finished temporary file into place. Without replace, link()
 * fails with EEXIST when path already exists, so of two processes creating
 * the same key only one wins; filesystems without hard links fall back to
 * rename. */
static int install(const char *tmp, const char *path, int replace)
{
    if (!replace) {
        if (link(tmp, path) == 0) {
            unlink(tmp);
            return 0;
        }
        if (errno == EEXIST)
            return -1;
        if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP && errno != EXDEV)
            return -1;
    }
    return rename(tmp, path);
}

int auth_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode,
                                int replace)
{
    size_t plen = strlen(path);
    char *tmp = core_malloc(plen + sizeof ".tmp-XXXXXX");
    if (!tmp)
        return core_fail(ADBC_ENOMEM, "out of memory writing %s", path);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");

    /* mkstemp creates the file 0600, so a private key is never readable by
     * others, not even for the moment before fchmod. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int rc = errno == ENOENT || errno == ENOTDIR
                     ? core_fail(ADBC_ENOTFOUND, "cannot write %s: its directory does not exist",
                                 path)
                     : open_error("file", path, "create a temporary file for");
        core_free(tmp);
        return rc;
    }
    int rc = 0;
    if (fchmod(fd, (mode_t)mode) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        rc = core_fail(ADBC_EIO, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
    } else if (close(fd) != 0) {
        rc = core_fail(ADBC_EIO, "cannot write %s: %s", tmp, strerror(errno));
    } else if (install(tmp, path, replace) != 0) {
        rc = errno == EEXIST ? core_fail(ADBC_EBUSY, "%s was created by someone else meanwhile",
                                         path)
                             : open_error("file", path, "replace");
    }
    if (rc) {
        unlink(tmp);
        core_free(tmp);
        return rc;
    }
    core_free(tmp);

    /* Make the rename itself durable; failure here loses nothing written. */
    char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}
