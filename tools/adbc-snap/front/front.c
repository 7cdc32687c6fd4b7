/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap's front end: the program installed as adbc-snap.
 *
 * `adbc-snap shell CMD` through a running session is what an agent's shell
 * tool calls on every step, and most of its time was the program starting:
 * the full tool loads OpenSSL, libusb, zstd, brotli... and starts threads
 * before it sends a byte, while the session needs none of them (no key, no
 * TLS, no USB). This program does only that command: it finds the session
 * exactly as the full tool does (session_find.c, compiled into both),
 * speaks the ADB protocol to the session's socket with the library's sans-IO
 * engine (lib/session) in its one thread, and prints what the full tool
 * prints, exiting with the same status. It needs the C library alone, so
 * it can be linked statically (against musl when the build finds musl-gcc:
 * ADBC_WITH_MUSL).
 *
 * Everything else (other commands, shell --json or --help, a device without
 * shell v2, no session, --no-session, a session that does not answer the
 * handshake) runs the full tool, adbc-snap-core, with the same arguments:
 * from this program's directory (the build tree), else from
 * ADBC_SNAP_CORE_DIR relative to it (the install: libexec/adbc). */
#include "session_find.h"
#include "write_all.h"

#include "adbc/error.h"
#include "adbc/version.h"
#include "adbc/session.h"
#include "adbc/shell.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef ADBC_SNAP_CORE_DIR
#define ADBC_SNAP_CORE_DIR "../libexec/adbc"
#endif

#define EXIT_FAIL 1        /* SNAP_EXIT_FAIL */
#define EXIT_NO_STATUS 255 /* SNAP_EXIT_NO_STATUS */
#define CONNECT_TIMEOUT_MS 10000 /* adbc_conn_opts' default */

/* Run the full tool with our arguments; returns only when it cannot. */
static int run_core(char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "adbc-snap: cannot find this program's directory (/proc/self/exe: %s), "
                        "so not adbc-snap-core either\n", strerror(errno));
        return EXIT_FAIL;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    *slash = '\0';
    snprintf(path, sizeof path, "%s/adbc-snap-core", self);
    if (access(path, X_OK) != 0)
        snprintf(path, sizeof path, "%s/%s/adbc-snap-core", self, ADBC_SNAP_CORE_DIR);
    execv(path, argv);
    fprintf(stderr, "adbc-snap: cannot run %s (the commands of adbc-snap, installed with it): "
                    "%s\n", path, strerror(errno));
    return EXIT_FAIL;
}

typedef struct front {
    adbc_session *s;
    int fd;
    uint32_t id;
    int ready, closed, refused;
    int code;          /* the command's exit status, -1 before the exit packet */
    int exited;        /* the exit packet came */
    int bad;           /* a malformed shell v2 packet */
    int out_failed;    /* writing our stdout or stderr failed */
    size_t consumed;   /* data taken, to give back as credit */
    adbc_shellv2_demux dx;
} front;

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

static void cb_ready(void *user, uint32_t id)
{
    front *f = user;
    if (id == f->id)
        f->ready = 1;
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    front *f = user;
    if (id != f->id)
        return;
    f->closed = 1;
    f->refused = reason != 0;
}

/* The shell v2 packets: stdout and stderr to ours, the exit status kept;
 * what else the device sends (stdin echo, window size) is skipped, as the
 * library's shell reader skips it. */
static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    front *f = user;
    if (id != f->id)
        return;
    f->consumed += len;
    while (len > 0 && !f->bad) {
        size_t used;
        adbc_shellv2_frag fr;
        int r = adbc_shellv2_next(&fr, &used, &f->dx, data, len);
        if (r < 0) {
            f->bad = 1;
            break;
        }
        data += used;
        len -= used;
        if (r == 0)
            break;
        int pid = fr.id, last = fr.last;
        const uint8_t *d = fr.data;
        size_t dlen = fr.len;
        if ((pid == ADBC_SHELL_STDOUT || pid == ADBC_SHELL_STDERR) && dlen && !f->out_failed &&
            snap_write_all(pid == ADBC_SHELL_STDERR ? 2 : 1, d, dlen) < 0)
            f->out_failed = 1;
        /* adbd sends the status as the packet's one byte; an empty exit
         * packet carries none. */
        if (pid == ADBC_SHELL_EXIT) {
            if (dlen > 0 && f->code < 0)
                f->code = d[0];
            f->exited |= last;
        }
    }
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Write what the engine queued (the socket has a send timeout); 0 or -1. */
static int flush(front *f)
{
    struct iovec iov[16];
    int n;
    while ((n = adbc_session_peek_send(f->s, iov, 16)) > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(f->fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR && !got_signal)
            continue;
        if (w <= 0)
            return -1;
        adbc_session_sent(f->s, (size_t)w);
    }
    return 0;
}

/* Feed the engine what the socket has: 1, 0 on the end of the stream, -1
 * on an error (engine errors leave their message in adbc_last_error). */
static int receive(front *f)
{
    uint8_t buf[65536];
    ssize_t n = recv(f->fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0)
        return n == 0 ? 0 : -1;
    if (adbc_session_recv(f->s, buf, (size_t)n) < 0)
        return -1;
    if (f->consumed && f->id && !f->closed) {
        adbc_session_consume(f->s, f->id, f->consumed);
        f->consumed = 0;
    }
    return 1;
}

/* One wait for the socket (and stdin when in_fd >= 0), signals let in only
 * here. Returns poll's result with revents in pf[0] (socket), pf[1]. */
static int wait_io(front *f, int in_fd, int timeout_ms, const sigset_t *open_mask,
                   struct pollfd pf[2])
{
    pf[0] = (struct pollfd){.fd = f->fd, .events = POLLIN};
    pf[1] = (struct pollfd){.fd = in_fd, .events = POLLIN};
    if (adbc_session_send_queued(f->s))
        pf[0].events |= POLLOUT;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    int r = ppoll(pf, in_fd >= 0 ? 2 : 1, timeout_ms < 0 ? NULL : &ts, open_mask);
    if (r < 0 && errno == EINTR)
        return 0;
    return r;
}

/* Connect and shake hands; 0, or -1 when the session does not answer (the
 * caller then runs the full tool, which connects directly, as it does
 * when a session's handshake fails). */
static int handshake(front *f, int timeout_ms, const sigset_t *open_mask)
{
    int64_t deadline = now_ms() + timeout_ms;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(f->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (adbc_session_start(f->s) < 0)
        return -1;
    while (adbc_session_state_get(f->s) != ADBC_SESSION_ONLINE) {
        if (adbc_session_state_get(f->s) != ADBC_SESSION_HANDSHAKE || flush(f) < 0)
            return -1;
        int left = (int)(deadline - now_ms());
        struct pollfd pf[2];
        if (left <= 0 || wait_io(f, -1, left, open_mask, pf) < 0)
            return -1;
        if (got_signal)
            _exit(128 + got_signal); /* nothing to clean up yet, as in the full tool */
        if ((pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && receive(f) <= 0)
            return -1;
    }
    return 0;
}

static int fail(const char *cmd, const char *msg)
{
    fprintf(stderr, "adbc-snap: %s: %s\n", cmd, msg);
    return EXIT_FAIL;
}

/* Hand the engine as much of p[*off..len) as the stream takes now; -1 on
 * an engine error. */
static int put_some(front *f, const uint8_t *p, size_t len, size_t *off)
{
    long k = *off < len ? adbc_session_write(f->s, f->id, p + *off, len - *off) : 0;
    if (k < 0)
        return -1;
    *off += (size_t)k;
    return 0;
}

static int run_shell(front *f, const snap_globals *g, const char *cmd, int forward,
                     const sigset_t *open_mask)
{
    char *svc = malloc(strlen(cmd) + 16);
    if (!svc)
        return fail(cmd, "out of memory");
    sprintf(svc, "shell,v2,raw:%s", cmd);
    int rc = adbc_session_open(&f->id, f->s, svc);
    if (rc < 0) {
        free(svc);
        return fail(cmd, adbc_last_error());
    }
    int64_t deadline = now_ms() + g->timeout_ms;
    while (!f->ready && !f->closed) {
        struct pollfd pf[2];
        int left = (int)(deadline - now_ms());
        if (flush(f) < 0) {
            free(svc);
            return fail(cmd, "the session's server closed the connection");
        }
        if (left <= 0) {
            fprintf(stderr, "adbc-snap: %s: the device did not answer the request to open "
                            "\"%.100s\" within %d ms\n", cmd, svc, g->timeout_ms);
            free(svc);
            return EXIT_FAIL;
        }
        int r = wait_io(f, -1, left, open_mask, pf);
        if (got_signal)
            break;
        if (r > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && receive(f) <= 0) {
            free(svc);
            return fail(cmd, "the session's server closed the connection");
        }
    }
    if (f->closed && f->refused && !got_signal) {
        fprintf(stderr, "adbc-snap: %s: the device refused \"%.100s\": the service does not "
                        "exist there or failed to start\n", cmd, svc);
        free(svc);
        return EXIT_FAIL;
    }
    free(svc);
    struct timeval tv = {g->timeout_ms / 1000, (g->timeout_ms % 1000) * 1000};
    setsockopt(f->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

    /* stdin: forwarded until its end when it is not a terminal (and no -n),
     * else closed at once, as the full tool does. */
    int in_fd = forward && !isatty(0) ? 0 : -1;
    /* One shell v2 packet at a time: [id][len][data], stdin's data or at
     * its end the close. */
    uint8_t inbuf[ADBC_SHELLV2_HEADER + 16384];
    size_t in_len = 0, in_off = 0;
    if (in_fd < 0) {
        adbc_shellv2_header(inbuf, ADBC_SHELL_CLOSE_STDIN, 0);
        in_len = ADBC_SHELLV2_HEADER;
    }
    int64_t last_rx = now_ms();
    int status = 0;
    for (;;) {
        if (got_signal) {
            fprintf(stderr, "adbc-snap: %s: interrupted: the operation was cancelled before it "
                            "finished\n", cmd);
            fprintf(stderr, "adbc-snap: stopped by signal %d (%s)\n", (int)got_signal,
                    strsignal(got_signal));
            status = 128 + got_signal;
            break;
        }
        if (f->out_failed) { /* our stdout or stderr is gone */
            status = EXIT_FAIL;
            break;
        }
        if (f->bad) {
            status = fail(cmd, "protocol violation: a malformed shell v2 packet");
            break;
        }
        if (f->exited || f->closed) {
            if (f->code < 0) {
                fprintf(stderr, "adbc-snap: %s: the device's shell ended without an exit status "
                                "(missing or empty exit packet): the command's result is "
                                "unknown and its output may be cut short; exit %d\n",
                        cmd, EXIT_NO_STATUS);
                status = EXIT_NO_STATUS;
            } else {
                status = f->code;
            }
            break;
        }
        /* stdin's data (and at its end the close) waits for room in the
         * stream; nothing more is read from stdin meanwhile. */
        if (in_len && put_some(f, inbuf, in_len, &in_off) < 0) {
            status = fail(cmd, adbc_last_error());
            break;
        }
        if (in_len && in_off == in_len)
            in_len = in_off = 0;
        if (flush(f) < 0) {
            status = fail(cmd, "the session's server closed the connection (the command may "
                               "still be running on the device)");
            break;
        }
        int timeout = -1;
        if (g->stream_timeout_ms >= 0) {
            timeout = (int)(last_rx + g->stream_timeout_ms - now_ms());
            if (timeout <= 0) {
                fprintf(stderr, "adbc-snap: %s: nothing from the device for %.1f s (--timeout "
                                "bounds the silence of shell and exec); the command may still "
                                "be running there\n", cmd, g->stream_timeout_ms / 1000.0);
                status = EXIT_FAIL;
                break;
            }
        }
        struct pollfd pf[2];
        int r = wait_io(f, in_fd >= 0 && !in_len ? in_fd : -1, timeout, open_mask, pf);
        if (r < 0) {
            status = fail(cmd, strerror(errno));
            break;
        }
        if (r == 0)
            continue;
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            int k = receive(f);
            if (k <= 0) {
                status = fail(cmd, k == 0 ? "the session's server closed the connection (the "
                                            "command may still be running on the device)"
                                          : adbc_last_error());
                break;
            }
            last_rx = now_ms();
        }
        if (in_fd >= 0 && !in_len && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = read(in_fd, inbuf + ADBC_SHELLV2_HEADER,
                             sizeof inbuf - ADBC_SHELLV2_HEADER);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) /* its end (or an error, as the full tool takes it) */
                in_fd = -1;
            adbc_shellv2_header(inbuf, n > 0 ? ADBC_SHELL_STDIN : ADBC_SHELL_CLOSE_STDIN,
                                n > 0 ? (uint32_t)n : 0);
            in_len = ADBC_SHELLV2_HEADER + (n > 0 ? (size_t)n : 0);
        }
    }
    if (!f->closed)
        adbc_session_close_stream(f->s, f->id);
    flush(f);
    return status;
}

int main(int argc, char **argv)
{
    snap_globals g;
    int bad = 0;
    int i = snap_globals_parse(argc, argv, &g, &bad);
    if (i == SNAP_G_VERSION) { /* answered here: needs no adbc-snap-core */
        printf("adbc-snap %s\n", ADBC_VERSION_STRING);
        return 0;
    }
    if (i < 0 || strcmp(argv[i], "shell") != 0 || g.no_session ||
        snap_has_opt("shell", argc - i, argv + i, "--help") ||
        snap_has_opt("shell", argc - i, argv + i, "--json"))
        return run_core(argv);
    /* shell's leading options, as the full tool reads them: -n and "--"
     * here; adb's -t, -T, -x (a PTY, shell v1) and anything else are the
     * full tool's, as is a shell with no command (interactive). */
    int forward = 1, from = i + 1;
    for (; from < argc && argv[from][0] == '-' && argv[from][1]; from++) {
        if (strcmp(argv[from], "--") == 0) {
            from++;
            break;
        }
        if (strcmp(argv[from], "-n") != 0)
            return run_core(argv);
        forward = 0;
    }
    const char *name = snap_session_name(&g);
    char sock[PATH_MAX];
    if (from >= argc || !name || snap_session_path(sock, sizeof sock, name, "sock", 0) != 0)
        return run_core(argv);
    /* SIGINT, SIGTERM, SIGHUP are let in only while waiting (ppoll), so
     * one is never lost between a check and the wait. */
    sigset_t block, open_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &open_mask);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(k == 0 ? SIGINT : k == 1 ? SIGTERM : SIGHUP, &sa, NULL);
    front f = {.fd = snap_session_dial(sock), .code = -1};
    if (f.fd < 0) {
        sigprocmask(SIG_SETMASK, &open_mask, NULL);
        return run_core(argv);
    }
    adbc_shellv2_init(&f.dx, 0);
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_HOST);
    static const adbc_session_callbacks cbs = {
        .size = sizeof(adbc_session_callbacks),
        .on_ready = cb_ready,
        .on_data = cb_data,
        .on_closed = cb_closed,
    };
    int ct = g.timeout_ms < CONNECT_TIMEOUT_MS ? g.timeout_ms : CONNECT_TIMEOUT_MS;
    if (adbc_session_new(&f.s, &cfg, &cbs, &f) < 0 || handshake(&f, ct, &open_mask) < 0 ||
        !adbc_banner_has_feature(adbc_session_peer(f.s), "shell_v2")) {
        /* No answer from the session, or a device with shell v1 only: the
         * full tool does both (and the first directly). */
        adbc_session_free(f.s);
        close(f.fd);
        sigprocmask(SIG_SETMASK, &open_mask, NULL);
        return run_core(argv);
    }
    char *cmd = snap_join(argc, argv, from);
    int status = cmd ? run_shell(&f, &g, cmd, forward, &open_mask) : fail("shell", "out of memory");
    free(cmd);
    adbc_session_free(f.s);
    close(f.fd);
    /* A signal that came after the command ended is not ours to report;
     * none stays pending and blocked while the process exits. */
    sigprocmask(SIG_SETMASK, &open_mask, NULL);
    return status;
}
