/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap start-server, kill-server: adb's names for starting and
 * stopping adb's server, here adbc-serve's (--adb-server,
 * docs/adb-server.md), so scripts that begin with `adb start-server` and
 * end with `adb kill-server` run with adbc-snap as their adb, and the
 * clients of adb's server (adb itself, Android Studio, scrcpy) find one.
 *
 * The address is adb's: ADB_SERVER_SOCKET, else
 * tcp:ANDROID_ADB_SERVER_ADDRESS:ANDROID_ADB_SERVER_PORT (127.0.0.1:5037).
 * start-server does nothing when a server of adb's version (41) answers
 * there; else it starts adbc-serve detached, holding the device named by
 * -s/-t, else the devices `adbc-snap devices` lists (USB, emulators,
 * remembered TCP devices) as they come and go, and waits until it answers. kill-server sends
 * host:kill, as adb's does, to whichever server answers. */
#include "snap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "ops_core.h"
#include "ops_hostproto.h"
#include "portable.h"

static int cmd_start_server(snap_ctx *ctx, int argc, char **argv);
static int cmd_kill_server(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_server[] = {
    {"start-server", cmd_start_server, "start-server",
     "start adb's server (adbc-serve --adb-server) unless one answers"},
    {"kill-server", cmd_kill_server, "kill-server", "stop adb's server (host:kill)"},
    {NULL, NULL, NULL, NULL},
};

/* A connected socket to the server at addr (adb's syntax) within ms, or
 * -1 with errno set. */
int snap_srv_dial(const char *addr, int ms)
{
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    if (strncmp(addr, "localfilesystem:", 16) == 0 || strncmp(addr, "localabstract:", 14) == 0) {
        int abstract = addr[5] == 'a';
        const char *path = strchr(addr, ':') + 1;
        struct sockaddr_un *un = (struct sockaddr_un *)&ss;
        memset(un, 0, sizeof *un);
        un->sun_family = AF_UNIX;
        if (strlen(path) + 1 >= sizeof un->sun_path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(un->sun_path + abstract, path, strlen(path));
        sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)abstract + strlen(path));
    } else if (strncmp(addr, "tcp:", 4) == 0) {
        char host[256] = "127.0.0.1";
        const char *spec = addr + 4, *port = spec, *colon = strrchr(spec, ':');
        if (colon) {
            size_t n = (size_t)(colon - spec);
            if (spec[0] == '[' && n >= 2)
                spec++, n -= 2;
            if (n == 0 || n >= sizeof host) {
                errno = EINVAL;
                return -1;
            }
            memcpy(host, spec, n);
            host[n] = '\0';
            port = colon + 1;
        }
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *ai = NULL;
        if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai) {
            errno = EINVAL;
            return -1;
        }
        memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
        sl = ai->ai_addrlen;
        freeaddrinfo(ai);
    } else {
        errno = EINVAL;
        return -1;
    }
    return portable_dial((struct sockaddr *)&ss, sl, ms);
}

/* Exactly n bytes within ms (-1: the end, an error or the bound). */
static int read_all(int fd, void *p, size_t n, int ms)
{
    char *b = p;
    int64_t end = ops_now_ms() + ms;
    while (n > 0) {
        int left = (int)(end - ops_now_ms());
        struct pollfd pf = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, left) != 1)
            return -1;
        ssize_t k = recv(fd, b, n, 0);
        if (k <= 0) {
            if (k < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            return -1;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Send req and read the status: 1 OKAY, 0 FAIL (its message in msg), -1
 * no answer. */
static int request(int fd, const char *req, char *msg, size_t cap, int ms)
{
    char out[OPS_HP_MAX + 8];
    size_t n = ops_hp_string(out, sizeof out, req);
    if (send(fd, out, n, MSG_NOSIGNAL) != (ssize_t)n)
        return -1;
    char st[5] = {0}, hdr[4];
    if (read_all(fd, st, 4, ms) != 0)
        return -1;
    if (strcmp(st, "OKAY") == 0)
        return 1;
    if (strcmp(st, "FAIL") != 0 || read_all(fd, hdr, 4, ms) != 0)
        return -1;
    long len = ops_hp_header((const uint8_t *)hdr);
    if (len < 0)
        len = 0;
    char *m = calloc(1, (size_t)len + 1);
    if (!m || read_all(fd, m, (size_t)len, ms) != 0) {
        free(m);
        return -1;
    }
    snprintf(msg, cap, "%s", m);
    free(m);
    return 0;
}

long snap_srv_version(const char *addr, int ms)
{
    int fd = snap_srv_dial(addr, ms);
    if (fd < 0)
        return -1;
    char msg[256], hdr[4], val[5] = {0};
    long v = -1;
    if (request(fd, "host:version", msg, sizeof msg, ms) == 1 && read_all(fd, hdr, 4, ms) == 0 &&
        ops_hp_header((const uint8_t *)hdr) == 4 && read_all(fd, val, 4, ms) == 0)
        v = strtol(val, NULL, 16);
    close(fd);
    return v;
}

int snap_hp_reply(char *buf, size_t len)
{
    int failed = len >= 4 && memcmp(buf, "FAIL", 4) == 0;
    if (len < 4 || (!failed && memcmp(buf, "OKAY", 4) != 0))
        return -1;
    /* OKAY [OKAY] [%04x STRING], or FAIL %04x MESSAGE: the string alone. */
    size_t off = 4;
    if (!failed && len >= 8 && memcmp(buf + 4, "OKAY", 4) == 0)
        off = 8;
    if (len >= off + 4)
        off += 4;
    memmove(buf, buf + off, len - off + 1);
    return failed;
}

int snap_srv_query(const char *req, char **reply, int ms)
{
    *reply = NULL;
    char abuf[300];
    const char *addr = ops_hp_server_addr(abuf, sizeof abuf);
    /* Only a server of adb's version: what answers there may be anything
     * (and one that accepts and never answers costs a short wait only). */
    if (snap_srv_version(addr, ms < 5000 ? ms : 5000) != 41)
        return -1;
    int fd = snap_srv_dial(addr, ms);
    if (fd < 0)
        return -1;
    char out[OPS_HP_MAX + 8];
    size_t n = ops_hp_string(out, sizeof out, req);
    if (n == 0 || send(fd, out, n, MSG_NOSIGNAL) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    /* The server answers and closes, as adb's does after a host request. */
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int64_t end = ops_now_ms() + ms;
    while (buf) {
        int left = (int)(end - ops_now_ms());
        struct pollfd pf = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, left) != 1)
            break;
        ssize_t k = recv(fd, buf + len, cap - len - 1, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            break;
        len += (size_t)k;
        if (len + 1 == cap) {
            char *nb = cap < (1u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    close(fd);
    if (!buf)
        return -1;
    buf[len] = '\0';
    int rc = snap_hp_reply(buf, len);
    if (rc < 0) {
        free(buf);
        return -1;
    }
    *reply = buf;
    return rc;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmd_start_server(snap_ctx *ctx, int argc, char **argv)
{
    (void)argv;
    if (argc != 1)
        return snap_usage(&snap_cmds_server[0], "takes no arguments");
    char buf[300];
    const char *addr = ops_hp_server_addr(buf, sizeof buf);
    long v = snap_srv_version(addr, 2000);
    if (v == 41)
        return 0; /* running: as adb, nothing to say */
    if (v >= 0)
        return snap_error(SNAP_EXIT_FAIL, NULL, "a server of version %ld answers at %s (not adb's "
                          "41): stop it first (kill-server)", v, addr);
    /* The devices it holds: the one named, else those adbc lists, followed
     * as they come and go (adbc-serve's adb server with no device named). */
    const char *args[12];
    int na = 0;
    char exe[2 * PATH_MAX];
    snap_serve_exe(exe, sizeof exe);
    args[na++] = exe;
    args[na++] = "--no-http";
    args[na++] = "--adb-server";
    args[na++] = addr;
    if (ctx->target || ctx->serial) {
        args[na++] = ctx->target ? "-t" : "-s";
        args[na++] = ctx->target ? ctx->target : ctx->serial;
    }
    char logf[PATH_MAX], pidf[PATH_MAX];
    if (snap_session_path(logf, sizeof logf, "adb-server", "log", 1) != 0 ||
        snap_session_path(pidf, sizeof pidf, "adb-server", "pid", 1) != 0) {
        return SNAP_EXIT_FAIL;
    }
    args[na++] = "--pid-file";
    args[na++] = pidf;
    args[na] = NULL;
    fprintf(stderr, "* daemon not running; starting now at %s\n", addr);
    pid_t pid = fork();
    if (pid < 0)
        return snap_fail("start-server: fork", ADBC_EIO);
    if (pid == 0) {
        setsid();
        int in = open("/dev/null", O_RDONLY), lg = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in >= 0)
            dup2(in, 0);
        if (lg >= 0) {
            dup2(lg, 1);
            dup2(lg, 2);
        }
        execvp(exe, (char *const *)args);
        fprintf(stderr, "adbc-snap: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    for (int waited = 0;; waited += 50) {
        int st;
        if (snap_srv_version(addr, 1000) == 41)
            break;
        if (waitpid(pid, &st, WNOHANG) == pid || waited > ctx->timeout_ms) {
            if (waited > ctx->timeout_ms)
                kill(pid, SIGTERM);
            return snap_error(SNAP_EXIT_FAIL, NULL, "the adb server did not start (its log: %s)",
                              logf);
        }
        pause_ms(50);
    }
    fprintf(stderr, "* daemon started successfully\n");
    return 0;
}

static int cmd_kill_server(snap_ctx *ctx, int argc, char **argv)
{
    (void)argv;
    if (argc != 1)
        return snap_usage(&snap_cmds_server[1], "takes no arguments");
    char buf[300], msg[512];
    const char *addr = ops_hp_server_addr(buf, sizeof buf);
    int fd = snap_srv_dial(addr, ctx->timeout_ms < 5000 ? ctx->timeout_ms : 5000);
    if (fd < 0) {
        /* As adb: nothing to stop is not an error. */
        if (!ctx->quiet)
            fprintf(stderr, "cannot connect to daemon at %s: %s\n", addr, strerror(errno));
        return 0;
    }
    int rc = request(fd, "host:kill", msg, sizeof msg, ctx->timeout_ms);
    if (rc == 1) {
        /* adb waits for the server to close the connection: it has gone. */
        char b;
        read_all(fd, &b, 1, ctx->timeout_ms);
    }
    close(fd);
    if (rc == 0)
        return snap_error(SNAP_EXIT_FAIL, NULL, "the server at %s refused: %s", addr, msg);
    if (rc < 0)
        return snap_error(SNAP_EXIT_FAIL, NULL, "the server at %s did not answer host:kill",
                          addr);
    /* Gone once nothing answers there (a start-server right after must
     * not find the old one still closing). */
    for (int waited = 0; waited < 10000; waited += 50) {
        int probe = snap_srv_dial(addr, 1000);
        if (probe < 0)
            return 0;
        close(probe);
        pause_ms(50);
    }
    return snap_error(SNAP_EXIT_FAIL, NULL, "the server at %s still answers 10 s after "
                      "host:kill", addr);
}
