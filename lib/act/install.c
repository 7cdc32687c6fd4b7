/* SPDX-License-Identifier: Apache-2.0 */
/* Installing and removing apps.
 *
 * With the cmd feature (Android 7+) the APK is streamed straight into
 * `cmd package install -S SIZE` on the exec: stream's stdin: no copy on the
 * device's storage, one round trip. Older devices get the APK pushed with
 * sync to /data/local/tmp, `pm install -r`, and the copy removed. Success
 * is judged by the "Success" line both tools print, since their exit status
 * is not reliable across versions. */
#include "act/act_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/sync.h"
#include "core/internal.h"

#define CHUNK (64 * 1024)
#define OUT_MAX (64 * 1024)

/* "Success" on a line of its own; else the failure text to show. */
static int judge(const char *out, const char *what)
{
    for (const char *p = out; p && *p;) {
        if (strncmp(p, "Success", 7) == 0 && (p[7] == '\n' || p[7] == '\r' || p[7] == '\0'))
            return 0;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    const char *f = strstr(out, "Failure");
    return core_fail(ADBC_EREMOTE, "%s refused by the device: %.300s", what,
                     f ? f : *out ? out : "no output");
}

static int open_apk(int *fd, uint64_t *size, const char *path)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        int e = errno;
        return core_fail(e == ENOENT ? ADBC_ENOTFOUND : e == EACCES ? ADBC_EPERM : ADBC_EIO,
                         "cannot open APK %s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(*fd);
        *fd = -1;
        return core_fail(ADBC_EINVAL, "%s is not a non-empty regular file: give an APK file",
                         path);
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

/* Stream the file into `cmd package install -S SIZE`. */
static int install_streamed(adbc_conn *c, int fd, uint64_t size, const char *path,
                            int64_t deadline)
{
    char svc[96];
    snprintf(svc, sizeof svc, "exec:cmd package install -S %llu", (unsigned long long)size);
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, svc, act_left(deadline));
    if (rc < 0)
        return rc;
    char *buf = core_malloc(CHUNK);
    if (!buf) {
        adbc_stream_close(st);
        return core_fail(ADBC_ENOMEM, "out of memory installing %s", path);
    }
    uint64_t sent = 0;
    while (rc == 0 && sent < size) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = core_fail(ADBC_EIO, "reading %s failed after %llu of %llu bytes%s%s", path,
                           (unsigned long long)sent, (unsigned long long)size,
                           n < 0 ? ": " : " (the file shrank)", n < 0 ? strerror(errno) : "");
            break;
        }
        if ((uint64_t)n > size - sent)
            n = (ssize_t)(size - sent); /* the file grew: send what was announced */
        rc = adbc_stream_write(st, buf, (size_t)n, act_left(deadline));
        sent += (uint64_t)n;
    }
    /* The device answers once it has the whole APK: read to the end. */
    size_t olen = 0;
    while (rc == 0) {
        if (olen + 1 >= CHUNK) {
            rc = core_fail(ADBC_EREMOTE, "the installer printed more than %d bytes", CHUNK);
            break;
        }
        ssize_t n = adbc_stream_read(st, buf + olen, CHUNK - 1 - olen, act_left(deadline));
        if (n < 0)
            rc = (int)n;
        if (n <= 0)
            break;
        olen += (size_t)n;
    }
    adbc_stream_close(st);
    if (rc == 0) {
        buf[olen] = '\0';
        rc = judge(buf, "install");
    }
    core_free(buf);
    return rc;
}

/* Push to /data/local/tmp, pm install, remove the copy. */
static int install_pushed(adbc_conn *c, const char *path, int64_t deadline)
{
    static atomic_uint seq;
    char remote[96];
    snprintf(remote, sizeof remote, "/data/local/tmp/adbc-install-%ld-%u.apk", (long)getpid(),
             atomic_fetch_add(&seq, 1));
    adbc_sync *s;
    int rc = adbc_sync_open(&s, c, act_left(deadline));
    if (rc < 0)
        return rc;
    adbc_sync_opts so;
    adbc_sync_opts_init(&so);
    so.flags |= ADBC_SYNC_FOLLOW_LINKS;
    rc = adbc_sync_push(NULL, s, path, remote, &so, act_left(deadline));
    adbc_sync_close(s);
    if (rc < 0)
        return rc;
    char cmd[256];
    /* The copy goes whatever pm says. */
    snprintf(cmd, sizeof cmd, "pm install -r '%s'; rm -f '%s'", remote, remote);
    act_out o;
    rc = act_run(&o, c, cmd, OUT_MAX, act_left(deadline));
    if (rc < 0)
        return rc;
    rc = judge(o.text, "install");
    act_out_free(&o);
    return rc;
}

int adbc_app_install(adbc_conn *c, const char *apk_path, int timeout_ms)
{
    if (!c || !apk_path)
        return core_fail(ADBC_EINVAL, "adbc_app_install: c and apk_path must not be NULL");
    int64_t deadline = core_deadline(timeout_ms);
    int fd;
    uint64_t size = 0;
    int rc = open_apk(&fd, &size, apk_path);
    if (rc < 0)
        return rc;
    if (adbc_conn_has_feature(c, "cmd")) {
        rc = install_streamed(c, fd, size, apk_path, deadline);
        close(fd);
        return rc;
    }
    close(fd);
    return install_pushed(c, apk_path, deadline);
}

int adbc_app_uninstall(adbc_conn *c, const char *package, int timeout_ms)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_app_uninstall: no connection");
    if (!package || !*package || strlen(package) > 255)
        return core_fail(ADBC_EINVAL, "a package name is 1 to 255 characters");
    core_buf b = {0};
    core_buf_add(&b, "pm uninstall ", 13);
    act_buf_quote(&b, package);
    char *cmd;
    int rc = act_buf_take(&b, &cmd);
    if (rc < 0)
        return rc;
    act_out o;
    rc = act_run(&o, c, cmd, OUT_MAX, timeout_ms);
    core_free(cmd);
    if (rc < 0)
        return rc;
    rc = judge(o.text, "uninstall");
    act_out_free(&o);
    return rc;
}
