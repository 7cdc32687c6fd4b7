/* SPDX-License-Identifier: Apache-2.0 */
/* Installing and removing apps, as adb does (client/adb_install.cpp).
 *
 * With the cmd feature (Android 7+) the APK is streamed straight into the
 * package installer's stdin (`cmd package install FLAGS -S SIZE`): through
 * abb_exec (Android 10+: the package service's shell command run in the
 * binder, arguments separated by NUL bytes, no shell on the way) when the
 * device has it, else on an exec: stream. No copy on the device's storage,
 * one round trip. Older devices get the APK pushed with sync to
 * /data/local/tmp, `pm install FLAGS`, and the copy removed. Several files
 * of one app go through a package-installer session (install-create, an
 * install-write per file streamed on stdin, install-commit). Success is
 * judged by the "Success" line the tools print (adb looks at the first 7
 * bytes), since their exit status is not reliable across versions. The
 * flags are pm install's, from a bit set; caller text (split names, a
 * package name) goes in as abb_exec arguments, or through act_buf_quote
 * where a shell runs the command. */
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

/* How the device's package installer is reached: decided here only, as adb
 * decides (client/adb_install.cpp). VIA_ABB: abb_exec:, the package
 * service's shell command run in the binder with the arguments as its argv
 * (separated by NUL bytes, no shell); VIA_CMD: `cmd package` on exec:;
 * VIA_PM: `pm` (a single APK pushed first). */
typedef enum { VIA_ABB, VIA_CMD, VIA_PM } via;

/* A single APK is streamed only with the cmd feature (adb's
 * best_install_mode), through abb_exec when the device has it; an install
 * session takes abb_exec whenever the device has it, as adb_install.cpp's
 * install-multiple does (adb 29 still sent its session commands over
 * exec:). */
static via installer(adbc_conn *c, int single)
{
    int cmd = adbc_conn_has_feature(c, "cmd");
    if (adbc_conn_has_feature(c, "abb_exec") && (cmd || !single))
        return VIA_ABB;
    return cmd ? VIA_CMD : VIA_PM;
}

/* The service running the installer with args (NULL-terminated): for
 * VIA_ABB "abb_exec:package" and each argument after a NUL byte; else
 * "exec:cmd package" / "exec:pm" and each argument as one quoted shell
 * word. The arguments are C strings, so none holds a NUL byte; an empty one
 * is refused, since abb drops empty arguments and the ones after it would
 * move up (and for abb_exec the name may not end in a NUL). */
static int installer_service(char **svc, size_t *len, via v, const char *const *args)
{
    core_buf b = {0};
    core_buf_puts(&b, v == VIA_ABB ? "abb_exec:package" : v == VIA_CMD ? "exec:cmd package"
                                                                       : "exec:pm");
    for (size_t i = 0; args[i]; i++) {
        if (!*args[i]) {
            core_buf_free(&b);
            return core_fail(ADBC_EINVAL, "an installer argument is empty (argument %zu after "
                             "\"%s\"): nothing was sent", i, i ? args[i - 1] : "package");
        }
        if (v == VIA_ABB) {
            core_buf_add(&b, "", 1);
            core_buf_puts(&b, args[i]);
        } else {
            core_buf_add(&b, " ", 1);
            act_buf_quote(&b, args[i]);
        }
    }
    int rc = core_buf_take(&b, svc, len);
    return rc < 0 ? core_fail(ADBC_ENOMEM, "out of memory building an installer command") : 0;
}

/* Run the installer with args: size bytes of fd (fd -1: none) on its stdin,
 * then its answer read to the end into *out (core_malloc'd). */
static int run_installer(char **out, adbc_conn *c, via v, const char *const *args, int fd,
                         uint64_t size, const char *path, int64_t deadline)
{
    *out = NULL;
    char *svc;
    size_t svclen;
    int rc = installer_service(&svc, &svclen, v, args);
    if (rc < 0)
        return rc;
    adbc_stream *st;
    rc = adbc_stream_open_bytes(&st, c, svc, svclen, act_left(deadline));
    core_free(svc);
    if (rc < 0)
        return rc;
    char *buf = core_malloc(CHUNK);
    if (!buf) {
        adbc_stream_close(st);
        return core_fail(ADBC_ENOMEM, "out of memory running the installer");
    }
    uint64_t sent = 0;
    while (rc == 0 && fd >= 0 && sent < size) {
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
    if (rc < 0) {
        core_free(buf);
        return rc;
    }
    buf[olen] = '\0';
    *out = buf;
    return 0;
}

/* run_installer, then judge its answer. */
static int run_judged(adbc_conn *c, via v, const char *const *args, int fd, uint64_t size,
                      const char *path, const char *what, int64_t deadline)
{
    char *out;
    int rc = run_installer(&out, c, v, args, fd, size, path, deadline);
    if (rc < 0)
        return rc;
    rc = judge(out, what);
    core_free(out);
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

/* The most arguments the options make: every flag, then --user U. */
#define FLAG_ARGS_MAX 10

/* pm install's arguments for the options, checked (ADBC_EINVAL), into
 * args (FLAG_ARGS_MAX slots); *n gets their count. */
static int flag_args(const char **args, size_t *n, const adbc_install_opts *o)
{
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {{ADBC_INSTALL_FORWARD_LOCK, "-l"}, {ADBC_INSTALL_REPLACE, "-r"},
                 {ADBC_INSTALL_TEST, "-t"},         {ADBC_INSTALL_EXTERNAL, "-s"},
                 {ADBC_INSTALL_DOWNGRADE, "-d"},    {ADBC_INSTALL_GRANT, "-g"},
                 {ADBC_INSTALL_INSTANT, "--instant"}};
    if (o->flags & ~ALL_FLAGS)
        return core_fail(ADBC_EINVAL, "unknown install flags 0x%x (ADBC_INSTALL_* only)",
                         o->flags & ~ALL_FLAGS);
    *n = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (o->flags & words[i].bit)
            args[(*n)++] = words[i].word;
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
        args[(*n)++] = "--user";
        args[(*n)++] = u;
    }
    return 0;
}

/* args = VERB FLAGS... -S SIZE, NULL-terminated (FLAG_ARGS_MAX + 4 slots);
 * num holds SIZE's digits. */
static void sized_args(const char **args, const char *verb, const char *const *flags,
                       size_t nflags, char num[24], uint64_t size)
{
    size_t n = 0;
    args[n++] = verb;
    for (size_t i = 0; i < nflags; i++)
        args[n++] = flags[i];
    snprintf(num, 24, "%llu", (unsigned long long)size);
    args[n++] = "-S";
    args[n++] = num;
    args[n] = NULL;
}

/* One APK: streamed, else pushed. push_r: -r for a pushed install without
 * flags (adbc_app_install's old behaviour). */
static int install_one(adbc_conn *c, const char *path, const char *const *flags, size_t nflags,
                       int push_r, int64_t deadline)
{
    int fd;
    uint64_t size = 0;
    int rc = open_apk(&fd, &size, path);
    if (rc < 0)
        return rc;
    via v = installer(c, 1);
    if (v != VIA_PM) {
        const char *args[FLAG_ARGS_MAX + 4];
        char num[24];
        sized_args(args, "install", flags, nflags, num, size);
        rc = run_judged(c, v, args, fd, size, path, "install", deadline);
        close(fd);
        return rc;
    }
    close(fd);
    /* The flags are fixed words and a checked user id: no caller text. */
    char words[160] = "";
    size_t w = 0;
    if (push_r && nflags == 0)
        w += (size_t)snprintf(words, sizeof words, " -r");
    for (size_t i = 0; i < nflags && w < sizeof words; i++)
        w += (size_t)snprintf(words + w, sizeof words - w, " %s", flags[i]);
    return install_pushed(c, path, words, deadline);
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
static int install_session(adbc_conn *c, const char *const *apks, size_t n,
                           const char *const *flags, size_t nflags, int64_t deadline)
{
    via v = installer(c, 0);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) { /* every file is checked before anything is sent */
        int fd;
        uint64_t size;
        int rc = open_apk(&fd, &size, apks[i]);
        if (rc < 0)
            return rc;
        close(fd);
        total += size;
        const char *base = strrchr(apks[i], '/');
        if (!*(base ? base + 1 : apks[i]))
            return core_fail(ADBC_EINVAL, "%s names no file", apks[i]);
    }
    const char *args[FLAG_ARGS_MAX + 4];
    char num[24], sid[24];
    sized_args(args, "install-create", flags, nflags, num, total);
    char *out;
    int rc = run_installer(&out, c, v, args, -1, 0, NULL, deadline);
    if (rc < 0)
        return rc;
    long id = -1;
    rc = session_id(&id, out);
    core_free(out);
    if (rc < 0)
        return rc;
    snprintf(sid, sizeof sid, "%ld", id);
    for (size_t i = 0; i < n && rc == 0; i++) {
        int fd;
        uint64_t size;
        rc = open_apk(&fd, &size, apks[i]);
        if (rc < 0)
            break;
        const char *base = strrchr(apks[i], '/');
        base = base ? base + 1 : apks[i];
        snprintf(num, sizeof num, "%llu", (unsigned long long)size);
        const char *wargs[] = {"install-write", "-S", num, sid, base, "-", NULL};
        rc = run_judged(c, v, wargs, fd, size, apks[i], "install-write", deadline);
        close(fd);
    }
    int wrote = rc;
    /* Commit what was written, else abandon the session (as adb does). */
    const char *fargs[] = {wrote == 0 ? "install-commit" : "install-abandon", sid, NULL};
    int crc = run_installer(&out, c, v, fargs, -1, 0, NULL, deadline);
    if (wrote < 0) {
        if (crc == 0)
            core_free(out);
        return wrote;
    }
    if (crc < 0)
        return crc;
    rc = judge(out, "install-commit");
    core_free(out);
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
    const char *flags[FLAG_ARGS_MAX];
    size_t nflags = 0;
    int rc = flag_args(flags, &nflags, &o);
    if (rc < 0)
        return rc;
    int64_t deadline = core_deadline(o.timeout_ms);
    if (napks == 1)
        return install_one(c, apks[0], flags, nflags, 0, deadline);
    return install_session(c, apks, napks, flags, nflags, deadline);
}

int adbc_app_install(adbc_conn *c, const char *apk_path, int timeout_ms)
{
    if (!c || !apk_path)
        return core_fail(ADBC_EINVAL, "adbc_app_install: c and apk_path must not be NULL");
    /* As before the flags: streamed as given, pushed with -r. */
    return install_one(c, apk_path, NULL, 0, 1, core_deadline(timeout_ms));
}

int adbc_app_uninstall(adbc_conn *c, const char *package, int timeout_ms)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_app_uninstall: no connection");
    if (!package || !*package || strlen(package) > 255)
        return core_fail(ADBC_EINVAL, "a package name is 1 to 255 characters");
    /* abb_exec where the device has it (the name reaches the package
     * service as an argument, through no shell); else `pm uninstall`, as
     * adbc always sent it. */
    const char *args[] = {"uninstall", package, NULL};
    return run_judged(c, installer(c, 0) == VIA_ABB ? VIA_ABB : VIA_PM, args, -1, 0, NULL,
                      "uninstall", core_deadline(timeout_ms));
}
