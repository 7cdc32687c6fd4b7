/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap session start|stop|status, and the session side of connecting.
 *
 * A session is an adbc-serve process holding the device's connection and
 * answering on a unix socket in $XDG_RUNTIME_DIR/adbc/ (else
 * /tmp/adbc-UID/; the directory 0700 and ours, the socket 0600), named
 * session-<device, %-escaped>.sock with its .pid and .log beside it. While it
 * runs, every adbc-snap command for that device connects through the socket:
 * a local CNXN answered at once, no key or TLS exchange with the device,
 * each stream relayed over the connection the session holds. Output and
 * exit status are the commands' own. --no-session connects directly; `info`
 * always does, since it describes the transport itself. A socket no server
 * answers is a stale session file: it is ignored (and removed by `session
 * status` and `session start`). The server exits on its own once its device
 * has been gone and no command has used it for 10 minutes
 * (ADBC_SESSION_IDLE_EXIT=SECONDS changes that; 0: never). */
#include "snap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef ADBC_SNAP_BIN_DIR
#define ADBC_SNAP_BIN_DIR "../../bin"
#endif

/* How long a session's server stays once its device is gone and no
 * command uses it (ADBC_SESSION_IDLE_EXIT overrides). */
#define SESSION_IDLE_EXIT_S 600

/* The device a session is for: what -t or -s named. */
static const char *session_name(const snap_ctx *ctx)
{
    snap_globals g = {.serial = ctx->serial, .target = ctx->target};
    return snap_session_name(&g);
}

int snap_session_connect(snap_ctx *ctx, adbc_conn **out)
{
    const char *name = session_name(ctx);
    char sock[PATH_MAX];
    if (ctx->no_session || !name || snap_session_path(sock, sizeof sock, name, "sock", 0) != 0)
        return -1;
    int fd = snap_session_dial(sock);
    if (fd < 0)
        return -1;
    adbc_transport *t = NULL;
    if (adbc_transport_fd(&t, fd, 1) < 0) {
        close(fd);
        return -1;
    }
    /* The server answers CNXN itself and never asks for AUTH: an empty
     * keyring spares loading the user's key (and OpenSSL's start-up). */
    if (!ctx->session_keys && adbc_keyring_new(&ctx->session_keys) < 0) {
        adbc_transport_free(t);
        return -1;
    }
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = ctx->session_keys;
    if (ctx->timeout_ms < o.connect_timeout_ms)
        o.connect_timeout_ms = ctx->timeout_ms;
    return adbc_conn_open(out, t, &o) < 0 ? -1 : 0;
}

int snap_session_devices(char (*names)[256], int max)
{
    char probe[PATH_MAX];
    if (snap_session_path(probe, sizeof probe, "x", "sock", 0) != 0)
        return 0;
    char *slash = strrchr(probe, '/');
    *slash = '\0';
    DIR *d = opendir(probe);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while (n < max && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (strncmp(de->d_name, "session-", 8) != 0 || len < 13 ||
            strcmp(de->d_name + len - 5, ".sock") != 0)
            continue;
        /* The name, %-escaped by snap_session_path, back as given. */
        char name[256];
        size_t k = 0;
        for (const char *p = de->d_name + 8; p < de->d_name + len - 5 && k + 1 < sizeof name;
             p++) {
            unsigned v;
            if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1) {
                name[k++] = (char)v;
                p += 2;
            } else {
                name[k++] = *p;
            }
        }
        name[k] = '\0';
        char sock[PATH_MAX];
        if (snprintf(sock, sizeof sock, "%s/%s", probe, de->d_name) >= (int)sizeof sock)
            continue;
        int fd = snap_session_dial(sock); /* a stale file answers nothing */
        if (fd < 0)
            continue;
        close(fd);
        memcpy(names[n++], name, k + 1);
    }
    closedir(d);
    return n;
}

static long read_pid(const char *path)
{
    FILE *f = fopen(path, "re");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid;
}

/* Whether pid is an adbc-serve of ours. */
static int is_server(long pid)
{
    if (pid <= 1 || kill((pid_t)pid, 0) != 0)
        return 0;
    char p[64], cmd[4096];
    snprintf(p, sizeof p, "/proc/%ld/cmdline", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    if (n <= 0)
        return 0;
    cmd[n] = '\0';
    return strstr(cmd, "adbc-serve") != NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmd_session(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_session[] = {
    {"session", cmd_session, "session start|stop|status",
     "hold the device's connection in a background server; commands go through it"},
    {NULL, NULL, NULL, NULL},
};

void snap_serve_exe(char *exe, size_t cap)
{
    char self[PATH_MAX];
    const char *env = getenv("ADBC_SERVE");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (env && *env) {
        snprintf(exe, cap, "%s", env);
    } else if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        *slash = '\0';
        /* Beside us (the build tree), else in the bin directory of the
         * install (adbc-snap-core is in libexec/adbc), else from PATH. */
        snprintf(exe, cap, "%s/adbc-serve", self);
        if (access(exe, X_OK) != 0)
            snprintf(exe, cap, "%s/%s/adbc-serve", self, ADBC_SNAP_BIN_DIR);
        if (access(exe, X_OK) != 0)
            snprintf(exe, cap, "adbc-serve");
    } else {
        snprintf(exe, cap, "adbc-serve");
    }
}

static int start(snap_ctx *ctx, const char *name, const char *sock, const char *pidf,
                 const char *logf)
{
    char exe[2 * PATH_MAX];
    snap_serve_exe(exe, sizeof exe);
    char ready[PATH_MAX + 8], tmo[16], idle[16];
    snprintf(ready, sizeof ready, "%s.ready", pidf);
    snprintf(tmo, sizeof tmo, "%d", ctx->timeout_ms / 1000 > 0 ? ctx->timeout_ms / 1000 : 1);
    /* A session whose device is gone and that nobody uses ends on its own
     * (so one left behind by a killed script does not stay forever). */
    const char *ie = getenv("ADBC_SESSION_IDLE_EXIT");
    long idle_s = SESSION_IDLE_EXIT_S;
    if (ie && *ie) {
        char *end;
        idle_s = strtol(ie, &end, 10);
        if (*end || idle_s < 0 || idle_s > 7 * 86400) {
            fprintf(stderr, "adbc-snap: ADBC_SESSION_IDLE_EXIT takes seconds, 0..604800 (0: "
                            "never), not \"%s\"\n", ie);
            return SNAP_EXIT_USAGE;
        }
    }
    snprintf(idle, sizeof idle, "%ld", idle_s);
    unlink(ready);
    pid_t pid = fork();
    if (pid < 0)
        return snap_fail("session start: fork", ADBC_EIO);
    if (pid == 0) {
        setsid();
        int in = open("/dev/null", O_RDONLY), lg = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in >= 0)
            dup2(in, 0);
        if (lg >= 0) {
            dup2(lg, 1);
            dup2(lg, 2);
        }
        const char *sel = ctx->target ? "-t" : "-s";
        execlp(exe, exe, sel, name, "--control", sock, "--no-http", "--pid-file", pidf,
               "--ready-file", ready, "--connect-timeout", tmo, "--idle-exit", idle,
               (char *)NULL);
        fprintf(stderr, "adbc-snap: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    for (int waited = 0;; waited += 20) {
        int st;
        if (access(ready, F_OK) == 0)
            break;
        if (waitpid(pid, &st, WNOHANG) == pid || waited > ctx->timeout_ms) {
            fprintf(stderr, "adbc-snap: the session server did not start (see %s)\n", logf);
            if (waited > ctx->timeout_ms)
                kill(pid, SIGTERM);
            return SNAP_EXIT_FAIL;
        }
        sleep_ms(20);
    }
    unlink(ready);
    /* The device must answer through it, or there is no session. */
    adbc_conn *c = NULL;
    if (snap_session_connect(ctx, &c) != 0) {
        fprintf(stderr, "adbc-snap: session for %s: the device did not answer through the "
                        "server (%s); stopped it (log: %s)\n", name, adbc_last_error(), logf);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return SNAP_EXIT_FAIL;
    }
    adbc_conn_close(c);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: session for %s started (pid %ld, %s)\n", name, (long)pid,
                sock);
    return 0;
}

static int cmd_session(snap_ctx *ctx, int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "start") && strcmp(argv[1], "stop") &&
                      strcmp(argv[1], "status")))
        return snap_usage(&snap_cmds_session[0], "start, stop or status");
    const char *name = session_name(ctx);
    if (!name) {
        fprintf(stderr, "adbc-snap session: name the device with -s SERIAL or -t HOST:PORT (or "
                        "ANDROID_SERIAL)\n");
        return SNAP_EXIT_USAGE;
    }
    char sock[PATH_MAX], pidf[PATH_MAX], logf[PATH_MAX];
    if (snap_session_path(sock, sizeof sock, name, "sock", 1) ||
        snap_session_path(pidf, sizeof pidf, name, "pid", 1) ||
        snap_session_path(logf, sizeof logf, name, "log", 1))
        return SNAP_EXIT_FAIL;
    long pid = read_pid(pidf);
    int fd = snap_session_dial(sock);
    int alive = fd >= 0;
    if (fd >= 0)
        close(fd);
    int stale = !alive && (access(sock, F_OK) == 0 || access(pidf, F_OK) == 0);
    if (stale && (!pid || !is_server(pid))) {
        unlink(sock);
        unlink(pidf);
        if (!ctx->quiet)
            fprintf(stderr, "adbc-snap: removed a stale session file for %s\n", name);
    }
    if (strcmp(argv[1], "status") == 0) {
        if (!alive) {
            printf("no session for %s\n", name);
            return SNAP_EXIT_FAIL;
        }
        printf("session for %s: running, pid %ld, socket %s\n", name, pid, sock);
        return 0;
    }
    if (strcmp(argv[1], "start") == 0) {
        if (alive) {
            if (!ctx->quiet)
                fprintf(stderr, "adbc-snap: a session for %s is already running (pid %ld)\n",
                        name, pid);
            return 0;
        }
        return start(ctx, name, sock, pidf, logf);
    }
    if (!alive && !(pid && is_server(pid))) {
        fprintf(stderr, "adbc-snap: no session for %s\n", name);
        return SNAP_EXIT_FAIL;
    }
    if (!is_server(pid)) {
        fprintf(stderr, "adbc-snap: the session's pid file (%s) does not name an adbc-serve; "
                        "not stopping anything\n", pidf);
        return SNAP_EXIT_FAIL;
    }
    kill((pid_t)pid, SIGTERM);
    for (int waited = 0; kill((pid_t)pid, 0) == 0; waited += 20) {
        if (waited > 10000) {
            fprintf(stderr, "adbc-snap: the session server (pid %ld) did not stop in 10 s\n",
                    pid);
            return SNAP_EXIT_FAIL;
        }
        waitpid((pid_t)pid, NULL, WNOHANG);
        sleep_ms(20);
    }
    unlink(sock);
    unlink(pidf);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: session for %s stopped\n", name);
    return 0;
}
