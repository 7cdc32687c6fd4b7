/* SPDX-License-Identifier: Apache-2.0 */
/* Installing and removing apps, as adb does (client/adb_install.cpp).
 *
 * With the cmd feature (Android 7+) the APK is streamed straight into
 * `cmd package install FLAGS -S SIZE` on the exec: stream's stdin: no copy
 * on the device's storage, one round trip. Older devices get the APK pushed
 * with sync to /data/local/tmp, `pm install FLAGS`, and the copy removed.
 * Several files of one app go through a package-installer session
 * (install-create, an install-write per file streamed on stdin,
 * install-commit). Success is judged by the "Success" line the tools print
 * (adb looks at the first 7 bytes), since their exit status is not reliable
 * across versions. The flags are pm install's, from a bit set: no caller
 * text goes into a command but the split names, through act_buf_quote. */
#include "act/act_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/sync.h"
#include "core/internal.h"

#define CHUNK (64 * 1024)
#define OUT_MAX (64 * 1024)

/* A line "Success" (or "Success: ..."); else the failure text to show. */
static int judge(const char *out, const char *what)
{
    for (const char *p = out; p && *p;) {
        if (strncmp(p, "Success", 7) == 0 && (p[7] == '\n' || p[7] == '\r' || p[7] == '\0' ||
                                              p[7] == ':'))
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

/* Stream size bytes of fd into the exec: service svc's stdin, then read its
 * answer to the end and judge it. */
static int stream_file(adbc_conn *c, const char *svc, int fd, uint64_t size, const char *path,
                       const char *what, int64_t deadline)
{
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
    /* The device answers once it has the whole file: read to the end. */
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
        rc = judge(buf, what);
    }
    core_free(buf);
    return rc;
}

/* Push to /data/local/tmp, pm install, remove the copy. */
static int install_pushed(adbc_conn *c, const char *path, const char *flags, int64_t deadline)
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
    char cmd[512];
    /* The copy goes whatever pm says. */
    snprintf(cmd, sizeof cmd, "pm install%s '%s'; rm -f '%s'", flags, remote, remote);
    act_out o;
    rc = act_run(&o, c, cmd, OUT_MAX, act_left(deadline));
    if (rc < 0)
        return rc;
    rc = judge(o.text, "install");
    act_out_free(&o);
    return rc;
}

void adbc_install_opts_init_sized(adbc_install_opts *out, size_t size)
{
    adbc_install_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.timeout_ms = 120000;
    core_abi_give(out, size, &d, sizeof d);
}

#define ALL_FLAGS 0x7fu

/* " -r -t ... --user U" from the options, checked (ADBC_EINVAL). */
static int flag_words(char *out, size_t cap, const adbc_install_opts *o)
{
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {{ADBC_INSTALL_FORWARD_LOCK, " -l"}, {ADBC_INSTALL_REPLACE, " -r"},
                 {ADBC_INSTALL_TEST, " -t"},         {ADBC_INSTALL_EXTERNAL, " -s"},
                 {ADBC_INSTALL_DOWNGRADE, " -d"},    {ADBC_INSTALL_GRANT, " -g"},
                 {ADBC_INSTALL_INSTANT, " --instant"}};
    if (o->flags & ~ALL_FLAGS)
        return core_fail(ADBC_EINVAL, "unknown install flags 0x%x (ADBC_INSTALL_* only)",
                         o->flags & ~ALL_FLAGS);
    out[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (o->flags & words[i].bit)
            n += (size_t)snprintf(out + n, cap - n, "%s", words[i].word);
    if (o->user) {
        const char *u = o->user;
        int ok = strcmp(u, "all") == 0 || strcmp(u, "current") == 0;
        if (!ok && *u && strlen(u) <= 9) {
            ok = 1;
            for (const char *p = u; *p; p++)
                ok &= *p >= '0' && *p <= '9';
        }
        if (!ok)
            return core_fail(ADBC_EINVAL, "--user takes a user id (digits), \"all\" or "
                             "\"current\", not \"%.40s\"", u);
        snprintf(out + n, cap - n, " --user %s", u);
    }
    return 0;
}

/* One APK: streamed, else pushed. */
static int install_one(adbc_conn *c, const char *path, const char *flags, int64_t deadline)
{
    int fd;
    uint64_t size = 0;
    int rc = open_apk(&fd, &size, path);
    if (rc < 0)
        return rc;
    if (adbc_conn_has_feature(c, "cmd")) {
        char svc[256];
        snprintf(svc, sizeof svc, "exec:cmd package install%s -S %llu", flags,
                 (unsigned long long)size);
        rc = stream_file(c, svc, fd, size, path, "install", deadline);
        close(fd);
        return rc;
    }
    close(fd);
    return install_pushed(c, path, flags, deadline);
}

/* The session id of "Success: created install session [ID]". */
static int session_id(long *id, const char *out)
{
    const char *ok = strstr(out, "Success");
    const char *lb = ok ? strrchr(out, '[') : NULL;
    char *end;
    if (!lb)
        return core_fail(ADBC_EREMOTE, "install-create refused by the device: %.300s",
                         *out ? out : "no output");
    *id = strtol(lb + 1, &end, 10);
    if (end == lb + 1 || *end != ']' || *id < 0)
        return core_fail(ADBC_EREMOTE, "install-create answered no session id: %.300s", out);
    return 0;
}

/* Several files of one app in one install session. */
static int install_session(adbc_conn *c, const char *const *apks, size_t n, const char *flags,
                           int64_t deadline)
{
    const char *tool = adbc_conn_has_feature(c, "cmd") ? "cmd package" : "pm";
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) { /* every file is checked before anything is sent */
        int fd;
        uint64_t size;
        int rc = open_apk(&fd, &size, apks[i]);
        if (rc < 0)
            return rc;
        close(fd);
        total += size;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s install-create%s -S %llu", tool, flags,
             (unsigned long long)total);
    act_out o;
    int rc = act_run(&o, c, cmd, OUT_MAX, act_left(deadline));
    if (rc < 0)
        return rc;
    long id = -1;
    rc = session_id(&id, o.text);
    act_out_free(&o);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int fd;
        uint64_t size;
        rc = open_apk(&fd, &size, apks[i]);
        if (rc < 0)
            break;
        const char *base = strrchr(apks[i], '/');
        base = base ? base + 1 : apks[i];
        core_buf b = {0};
        core_buf_printf(&b, "exec:%s install-write -S %llu %ld ", tool, (unsigned long long)size,
                        id);
        act_buf_quote(&b, base);
        core_buf_add(&b, " -", 2);
        char *svc;
        rc = act_buf_take(&b, &svc);
        if (rc == 0) {
            rc = stream_file(c, svc, fd, size, apks[i], "install-write", deadline);
            core_free(svc);
        }
        close(fd);
    }
    int wrote = rc;
    /* Commit what was written, else abandon the session (as adb does). */
    snprintf(cmd, sizeof cmd, "%s %s %ld", tool, wrote == 0 ? "install-commit" : "install-abandon",
             id);
    int crc = act_run(&o, c, cmd, OUT_MAX, act_left(deadline));
    if (wrote < 0) {
        if (crc == 0)
            act_out_free(&o);
        return wrote;
    }
    if (crc < 0)
        return crc;
    rc = judge(o.text, "install-commit");
    act_out_free(&o);
    return rc;
}

int adbc_app_install_apks(adbc_conn *c, const char *const *apks, size_t napks,
                          const adbc_install_opts *opts)
{
    if (!c || !apks || napks == 0)
        return core_fail(ADBC_EINVAL, "adbc_app_install_apks: c and at least one APK needed");
    for (size_t i = 0; i < napks; i++)
        if (!apks[i] || !*apks[i])
            return core_fail(ADBC_EINVAL, "adbc_app_install_apks: APK %zu is NULL or empty", i);
    adbc_install_opts o;
    adbc_install_opts_init(&o);
    if (core_abi_take(&o, sizeof o, opts, "adbc_install_opts") < 0)
        return ADBC_EINVAL;
    char flags[160];
    int rc = flag_words(flags, sizeof flags, &o);
    if (rc < 0)
        return rc;
    int64_t deadline = core_deadline(o.timeout_ms);
    if (napks == 1)
        return install_one(c, apks[0], flags, deadline);
    return install_session(c, apks, napks, flags, deadline);
}

int adbc_app_install(adbc_conn *c, const char *apk_path, int timeout_ms)
{
    if (!c || !apk_path)
        return core_fail(ADBC_EINVAL, "adbc_app_install: c and apk_path must not be NULL");
    /* As before the flags: streamed as given, pushed with -r. */
    return install_one(c, apk_path, adbc_conn_has_feature(c, "cmd") ? "" : " -r",
                       core_deadline(timeout_ms));
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
