/* SPDX-License-Identifier: Apache-2.0 */
/* The act tests' handle on the test device (fixtures/testdevice): start one
 * on a free loopback port with a private sandbox, connect to it, read what
 * the stand-ins recorded ($ctl/calls) and give them their canned answers
 * (files in $ctl). Stopped by process id; the sandbox is removed. */
#ifndef TEST_ACT_TD_H
#define TEST_ACT_TD_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"

typedef struct td {
    pid_t pid;
    char dir[256];   /* sandbox root */
    char ctl[320];   /* its control directory */
    char addr[256];
    adbc_conn *conn;
} td;

/* Start the device; extra: NULL-terminated adbc-testdevice options. 0 or -1
 * (after printing why). */
static inline int td_start(td *t, const char *const *extra)
{
    memset(t, 0, sizeof *t);
    t->pid = -1;
    const char *build = getenv("ADBC_BUILD_DIR");
    char bin[512];
    snprintf(bin, sizeof bin, "%s/fixtures/adbc-testdevice", build ? build : "build");
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "  test device not built: %s\n", bin);
        return -1;
    }
    snprintf(t->dir, sizeof t->dir, "%s/adbc-act.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                           : "/tmp");
    if (!mkdtemp(t->dir))
        return -1;
    snprintf(t->ctl, sizeof t->ctl, "%s/data/local/tmp/.adbc-test", t->dir);
    const char *argv[40] = {bin, "--port", "0", "--sandbox", t->dir, "--no-auth"};
    int n = 6;
    for (int i = 0; extra && extra[i] && n < 38; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    t->pid = pid;
    char line[256];
    size_t len = 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t r = read(fd[0], line + len, sizeof line - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        line[len] = '\0';
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            break;
        }
    }
    close(fd[0]);
    const char *pre = "listening on ";
    if (strncmp(line, pre, strlen(pre)) != 0) {
        fprintf(stderr, "  test device did not start (said \"%s\")\n", len ? line : "");
        return -1;
    }
    snprintf(t->addr, sizeof t->addr, "%s", line + strlen(pre));
    adbc_keyring *ring;
    if (adbc_keyring_new(&ring) != 0)
        return -1;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = ring;
    int rc = adbc_connect(&t->conn, t->addr, &o);
    adbc_keyring_free(ring);
    if (rc != 0) {
        fprintf(stderr, "  connect %s: %s\n", t->addr, adbc_last_error());
        return -1;
    }
    return 0;
}

static inline void td_rm_rf(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid > 0)
        waitpid(pid, &st, 0);
}

static inline void td_stop(td *t)
{
    if (t->conn)
        adbc_conn_close(t->conn);
    t->conn = NULL;
    if (t->pid > 0) {
        kill(t->pid, SIGTERM);
        int st;
        waitpid(t->pid, &st, 0);
        t->pid = -1;
    }
    if (t->dir[0])
        td_rm_rf(t->dir);
}

static inline void td_path(char *out, size_t cap, const td *t, const char *name)
{
    snprintf(out, cap, "%s/%s", t->ctl, name);
}

/* Write a control file (the stand-ins' canned answer). */
static inline int td_put(const td *t, const char *name, const void *data, size_t len)
{
    char p[512];
    td_path(p, sizeof p, t, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static inline int td_puts(const td *t, const char *name, const char *text)
{
    return td_put(t, name, text, strlen(text));
}

static inline void td_drop(const td *t, const char *name)
{
    char p[512];
    td_path(p, sizeof p, t, name);
    unlink(p);
}

/* Read a control file (malloc'd, NUL-terminated; "" when missing). */
static inline char *td_get(const td *t, const char *name, size_t *len)
{
    char p[512];
    td_path(p, sizeof p, t, name);
    FILE *f = fopen(p, "rb");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (f) {
        size_t r;
        while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
            n += r;
            if (n + 1 == cap)
                buf = realloc(buf, cap *= 2);
        }
        fclose(f);
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* The stand-ins' record since the last td_reset. */
static inline char *td_calls(const td *t)
{
    return td_get(t, "calls", NULL);
}

static inline void td_reset(const td *t)
{
    td_drop(t, "calls");
}

/* 1 when a file exists anywhere under the sandbox's /data/local/tmp. */
static inline int td_exists(const td *t, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", t->dir, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

/* Compare the record with want; print both when they differ. */
static inline int td_calls_are(const td *t, const char *want)
{
    char *got = td_calls(t);
    int ok = strcmp(got, want) == 0;
    if (!ok)
        fprintf(stderr, "  calls:\n---got---\n%s---want---\n%s---\n", got, want);
    free(got);
    return ok;
}

#endif
