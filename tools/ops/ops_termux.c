/* SPDX-License-Identifier: Apache-2.0 */
/* Running termux-api's commands (ops_termux.h). */
#include "ops_termux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TERMUX_MAX_OUTPUT (1u << 20)

extern char **environ;

int ops_termux_available(void)
{
    const char *v = getenv("TERMUX_VERSION"), *path = getenv("PATH");
    if (!v || !*v || !path)
        return 0;
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char file[4096];
        struct stat st;
        if (n && n < sizeof file - 32) {
            snprintf(file, sizeof file, "%.*s/termux-battery-status", (int)n, p);
            if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0)
                return 1;
        }
        p += n + (end ? 1 : 0);
    }
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

int ops_termux_run(ops_err *e, const char *const *argv, const char *stdin_text, int timeout_ms,
                   char **out, size_t *out_len)
{
    return ops_termux_run_stop(e, argv, stdin_text, timeout_ms, NULL, NULL, out, out_len);
}

/* How often a run asks whether it was cancelled. */
#define STOP_POLL_MS 100

int ops_termux_run_stop(ops_err *e, const char *const *argv, const char *stdin_text,
                        int timeout_ms, int (*stopped)(void *), void *arg, char **out,
                        size_t *out_len)
{
    if (!e || !argv || !argv[0] || !out || !out_len)
        return e ? ops_fail(e, OPS_EARG, "internal: ops_termux_run needs argv and out") : -1;
    *out = NULL;
    *out_len = 0;
    int in[2] = {-1, -1}, op[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(op, O_CLOEXEC) != 0) {
        close_fd(&in[0]);
        close_fd(&in[1]);
        return ops_fail(e, OPS_EFAIL, "%s: cannot make a pipe: %s", argv[0], strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, op[1], 1);
    posix_spawn_file_actions_adddup2(&fa, op[1], 2);
    /* Its own process group, so a timeout kills the script and what it
     * started (termux-api's helper) together; default signal handling. */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close_fd(&in[0]);
    close_fd(&op[1]);
    if (rc != 0) {
        close_fd(&in[1]);
        close_fd(&op[0]);
        return ops_fail(e, OPS_EFAIL, "%s: cannot run it: %s (is the termux-api package "
                        "installed? pkg install termux-api)", argv[0], strerror(rc));
    }
    size_t ilen = stdin_text ? strlen(stdin_text) : 0, ioff = 0;
    if (!ilen)
        close_fd(&in[1]);
    else
        fcntl(in[1], F_SETFL, O_NONBLOCK);
    char *buf = malloc(TERMUX_MAX_OUTPUT + 1);
    size_t n = 0;
    int64_t deadline = ops_now_ms() + timeout_ms;
    int timed_out = 0, too_big = 0, cancelled = 0;
    while (buf && op[0] >= 0) {
        int64_t left = deadline - ops_now_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        if (stopped && stopped(arg)) {
            cancelled = 1;
            break;
        }
        if (stopped && left > STOP_POLL_MS)
            left = STOP_POLL_MS;
        struct pollfd p[2] = {{op[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        int np = in[1] >= 0 ? 2 : 1;
        int k = poll(p, (nfds_t)np, (int)left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        if (np == 2 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            /* SIGPIPE: the front ends ignore it; a reader gone is EPIPE. */
            ssize_t w = write(in[1], stdin_text + ioff, ilen - ioff);
            if (w > 0)
                ioff += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                ioff = ilen;
            if (ioff == ilen)
                close_fd(&in[1]);
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(op[0], buf + n, TERMUX_MAX_OUTPUT - n);
            if (r > 0) {
                n += (size_t)r;
                if (n == TERMUX_MAX_OUTPUT) {
                    too_big = 1;
                    break;
                }
            } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                close_fd(&op[0]);
            }
        }
    }
    close_fd(&in[1]);
    close_fd(&op[0]);
    int status = 0;
    if (timed_out || too_big || cancelled || !buf) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    /* The output ended: the command is exiting; its helper may linger a
     * moment, so wait within what is left, then kill the group. */
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (ops_now_ms() >= deadline) {
            timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!buf)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    buf[n] = 0;
    if (cancelled) {
        free(buf);
        return ops_fail(e, OPS_EFAIL, "%s: cancelled by the client, the command was stopped",
                        argv[0]);
    }
    if (timed_out) {
        free(buf);
        return ops_fail(e, OPS_ETIMEOUT, "%s did not finish within %d ms and was stopped (the "
                        "Termux:API app must be installed and allowed what %s needs)", argv[0],
                        timeout_ms, argv[0]);
    }
    if (too_big) {
        free(buf);
        return ops_fail(e, OPS_EFAIL, "%s printed more than %u bytes: stopped", argv[0],
                        TERMUX_MAX_OUTPUT);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ops_fail(e, OPS_EFAIL, "%s failed (%s %d): %.600s", argv[0],
                 WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                 n ? buf : "(it printed nothing)");
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    return 0;
}
