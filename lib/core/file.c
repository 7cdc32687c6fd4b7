/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a file whole or not at all: into a temporary file beside the
 * target (".<name>.adbc-XXXXXX": the same file system, so the final rename
 * is atomic; the leading dot keeps it out of listings), then moved over the
 * target once complete. A crash, a full disk or a failed transfer never
 * leaves a half-written file under the target's name, and on failure the
 * temporary file is removed. */
#include "core/internal.h"
#include "portable/portable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int file_code(int e)
{
    if (e == ENOENT || e == ENOTDIR)
        return ADBC_ENOTFOUND;
    if (e == EACCES || e == EPERM || e == EROFS)
        return ADBC_EPERM;
    if (e == ENOMEM)
        return ADBC_ENOMEM;
    return ADBC_EIO;
}

int core_tmpfile_open(core_tmpfile *f, const char *path)
{
    f->tmp = NULL;
    f->fd = -1;
    size_t n = portable_tmp_size(path);
    char *t = core_malloc(n);
    if (!t)
        return core_fail(ADBC_ENOMEM, "out of memory writing %s", path);
    portable_tmp_name(t, n, path);
    /* mkostemp creates it 0600: a private key is never readable by others,
     * not even for the moment before its mode is set. */
    int fd = mkostemp(t, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        core_free(t);
        if (e == ENOENT || e == ENOTDIR)
            return core_fail(ADBC_ENOTFOUND, "cannot write %s: its directory does not exist",
                             path);
        return core_fail(file_code(e), "cannot create a file beside %s: %s%s", path,
                         strerror(e), e == EACCES || e == EPERM || e == EROFS
                                          ? ": check the directory's permissions and owner"
                                          : "");
    }
    f->tmp = t;
    f->fd = fd;
    return 0;
}

void core_tmpfile_abort(core_tmpfile *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->tmp)
        unlink(f->tmp);
    core_free(f->tmp);
    f->tmp = NULL;
    f->fd = -1;
}

/* Move the finished temporary file into place. Without replace, link()
 * fails with EEXIST when path already exists, so of two processes creating
 * the same file only one wins; file systems without hard links fall back to
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

int core_tmpfile_commit(core_tmpfile *f, const char *path, unsigned flags)
{
    int rc = 0;
    if ((flags & CORE_FILE_SYNC) && fsync(f->fd) != 0)
        rc = core_fail(file_code(errno), "cannot write %s: %s", path, strerror(errno));
    int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0 && rc == 0)
        rc = core_fail(file_code(errno), "cannot write %s: %s", path, strerror(errno));
    if (rc == 0 && install(f->tmp, path, !(flags & CORE_FILE_NOREPLACE)) != 0) {
        int e = errno;
        rc = e == EEXIST ? core_fail(ADBC_EBUSY, "%s was created by someone else meanwhile", path)
                         : core_fail(file_code(e), "cannot replace %s: %s", path, strerror(e));
    }
    if (rc < 0) {
        core_tmpfile_abort(f);
        return rc;
    }
    core_free(f->tmp);
    f->tmp = NULL;
    if (flags & CORE_FILE_SYNC_DIR) {
        /* Make the rename itself durable; failure here loses nothing written. */
        const char *slash = strrchr(path, '/');
        char dir[4096];
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    return 0;
}

int core_file_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
                           unsigned flags)
{
    core_tmpfile f;
    int rc = core_tmpfile_open(&f, path);
    if (rc < 0)
        return rc;
    if (fchmod(f.fd, (mode_t)mode) != 0) {
        rc = core_fail(file_code(errno), "cannot write %s: %s", path, strerror(errno));
        core_tmpfile_abort(&f);
        return rc;
    }
    const char *p = data;
    while (len) {
        ssize_t w = write(f.fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = core_fail(file_code(errno), "cannot write %s: %s", path, strerror(errno));
            core_tmpfile_abort(&f);
            return rc;
        }
        p += w;
        len -= (size_t)w;
    }
    return core_tmpfile_commit(&f, path, flags);
}
