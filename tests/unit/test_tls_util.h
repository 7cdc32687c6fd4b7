/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the TLS and pairing tests: running the BoringSSL reference
 * program (tests/ref) as a child with line-based pipes, and hex helpers.
 *
 * The reference program is found at $ADBC_REF_BIN, else
 * $ADBC_BUILD_DIR/tests/ref/adbc-ref. When it is missing the tests that need
 * it FAIL (they never skip): build it with tests/ref/build.sh or the
 * top-level CMake option that adds tests/ref. */
#ifndef ADBC_TEST_TLS_UTIL_H
#define ADBC_TEST_TLS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct refproc {
    pid_t pid;
    int to_child;   /* child's stdin */
    int from_child; /* child's stdout */
    char buf[32768];
    size_t have;
} refproc;

static inline const char *ref_bin_path(void)
{
    static char path[4096];
    const char *env = getenv("ADBC_REF_BIN");
    if (env && *env)
        return env;
    const char *build = getenv("ADBC_BUILD_DIR");
    snprintf(path, sizeof path, "%s/tests/ref/adbc-ref", build && *build ? build : ".");
    return path;
}

/* 1 if the reference program exists; prints why not otherwise. */
static inline int ref_available(void)
{
    const char *p = ref_bin_path();
    if (access(p, X_OK) == 0)
        return 1;
    fprintf(stderr,
            "  reference program %s is missing: build it with tests/ref/build.sh "
            "(or set ADBC_REF_BIN); this test cannot pass without it\n", p);
    return 0;
}

/* Start `adbc-ref args...` (args NULL-terminated). 0 on success. */
static inline int refproc_start(refproc *rp, const char *const *args)
{
    int in[2], out[2];
    memset(rp, 0, sizeof *rp);
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    const char *argv[16];
    size_t n = 0;
    argv[n++] = ref_bin_path();
    for (; args && args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    rp->pid = pid;
    rp->to_child = in[1];
    rp->from_child = out[0];
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Next line from the child (without newline) into line; 0 on success, -1 on
 * EOF or when nothing came within timeout_ms. */
static inline int refproc_line(refproc *rp, char *line, size_t size, int timeout_ms)
{
    for (;;) {
        char *nl = memchr(rp->buf, '\n', rp->have);
        if (nl) {
            size_t len = (size_t)(nl - rp->buf);
            size_t copy = len < size - 1 ? len : size - 1;
            memcpy(line, rp->buf, copy);
            line[copy] = '\0';
            memmove(rp->buf, nl + 1, rp->have - len - 1);
            rp->have -= len + 1;
            return 0;
        }
        if (rp->have == sizeof rp->buf)
            return -1;
        struct pollfd p = {.fd = rp->from_child, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1)
            return -1;
        ssize_t r = read(rp->from_child, rp->buf + rp->have, sizeof rp->buf - rp->have);
        if (r <= 0)
            return -1;
        rp->have += (size_t)r;
    }
}

/* Send one line (a newline is appended). */
static inline int refproc_send(refproc *rp, const char *line)
{
    size_t len = strlen(line);
    if (write(rp->to_child, line, len) != (ssize_t)len || write(rp->to_child, "\n", 1) != 1)
        return -1;
    return 0;
}

/* Close pipes and reap the child; returns its exit status (or -1). Kills it
 * if it does not exit within timeout_ms. */
static inline int refproc_finish(refproc *rp, int timeout_ms)
{
    if (rp->pid <= 0)
        return -1;
    close(rp->to_child);
    int status = 0;
    for (int waited = 0;; waited += 10) {
        pid_t w = waitpid(rp->pid, &status, WNOHANG);
        if (w == rp->pid)
            break;
        if (waited >= timeout_ms) {
            kill(rp->pid, SIGKILL);
            waitpid(rp->pid, &status, 0);
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    close(rp->from_child);
    rp->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void hexify(char *out, const uint8_t *in, size_t n)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[in[i] >> 4];
        out[2 * i + 1] = d[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static inline long unhexify(uint8_t *out, size_t max, const char *hex)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return (long)(n / 2);
}

#endif
