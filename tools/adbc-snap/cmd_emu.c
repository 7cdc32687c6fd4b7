/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap emu COMMAND...: an emulator console command, as adb sends it
 * (packages/modules/adb client/console.cpp): a TCP connection to the
 * console port on 127.0.0.1 (emulator-N's console is port N, the one below
 * its adb port), "auth TOKEN" first when ~/.emulator_console_auth_token
 * holds one, the command, "quit"; what the console says after its two
 * greetings' "OK\r\n" (before and after auth) is printed. Without -s the
 * only emulator is used, as adb does. */
#include "snap.h"
#include "write_all.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "ops_core.h"
#include "portable.h"

static int cmd_emu(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_emu[] = {
    {"emu", cmd_emu, "emu COMMAND...",
     "run an emulator console command (emulator-N: the console on port N)"},
    {NULL, NULL, NULL, NULL},
};

/* Say why there is no console; -1. */
#define NO_CONSOLE(...) (snap_error(SNAP_EXIT_FAIL, "emu", __VA_ARGS__), -1)

/* The console port of the selected emulator, or -1 after saying why. */
static int console_port(snap_ctx *ctx)
{
    const char *serial = ctx->target ? ctx->target : adbc_device_serial(ctx->serial);
    int port;
    char tail;
    if (serial) {
        if (sscanf(serial, "emulator-%d%c", &port, &tail) == 1 && port > 0 && port < 65535)
            return port;
        return NO_CONSOLE("%s is not an emulator: emu talks to an emulator's "
                          "console (-s emulator-N)", serial);
    }
    adbc_device_entry *list = NULL;
    size_t n = 0;
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (adbc_devices_list(&list, &n, NULL, 0, &o) < 0)
        return NO_CONSOLE("listing the devices: %s", adbc_last_error());
    int found = -1, count = 0;
    for (size_t i = 0; i < n; i++)
        if (sscanf(list[i].serial, "emulator-%d%c", &port, &tail) == 1) {
            found = port;
            count++;
        }
    adbc_devices_free(list);
    if (count == 0)
        return NO_CONSOLE("no emulator found (`adbc-snap devices` lists what is "
                          "found)");
    if (count > 1)
        return NO_CONSOLE("more than one emulator: name one with -s emulator-N");
    return found;
}

/* "auth TOKEN\n" from ~/.emulator_console_auth_token into buf ("" without
 * a token). */
static void auth_line(char *buf, size_t cap)
{
    buf[0] = '\0';
    const char *home = getenv("HOME");
    char path[4096];
    if (!home || snprintf(path, sizeof path, "%s/.emulator_console_auth_token", home) >=
                     (int)sizeof path)
        return;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char tok[512];
    size_t n = fread(tok, 1, sizeof tok - 1, f);
    fclose(f);
    tok[n] = '\0';
    char *s = tok, *e = tok + n;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    if (*s && !strpbrk(s, "\r\n"))
        snprintf(buf, cap, "auth %s\n", s);
}

/* A TCP connection to 127.0.0.1:port within ms, or -1 (errno set). */
static int dial(int port, int ms)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return portable_dial((struct sockaddr *)&sa, sizeof sa, ms);
}

static int cmd_emu(snap_ctx *ctx, int argc, char **argv)
{
    if (argc < 2)
        return snap_usage(&snap_cmds_emu[0], "give the console command (`adbc-snap emu help` "
                                             "lists them)");
    /* One console line: a line break would smuggle in another command. */
    size_t len = 0;
    for (int i = 1; i < argc; i++) {
        if (strpbrk(argv[i], "\r\n"))
            return snap_usage(&snap_cmds_emu[0], "a console command is one line: no line "
                                                 "breaks in its words");
        len += strlen(argv[i]) + 1;
    }
    int port = console_port(ctx);
    if (port < 0)
        return SNAP_EXIT_FAIL;
    char auth[600];
    auth_line(auth, sizeof auth);
    char *cmd = malloc(strlen(auth) + len + 8);
    if (!cmd)
        return snap_error(SNAP_EXIT_FAIL, "emu", "out of memory");
    strcpy(cmd, auth);
    for (int i = 1; i < argc; i++) {
        strcat(cmd, argv[i]);
        strcat(cmd, i == argc - 1 ? "\n" : " ");
    }
    strcat(cmd, "quit\n");
    int fd = dial(port, ctx->timeout_ms);
    if (fd < 0) {
        free(cmd);
        return snap_error(SNAP_EXIT_FAIL, "emu", "cannot reach the emulator console on "
                          "127.0.0.1:%d: %s", port, strerror(errno));
    }
    int64_t deadline = ops_now_ms() + ctx->timeout_ms;
    int rc = 0;
    size_t off = 0, clen = strlen(cmd), cap = 65536, got = 0;
    char *out = malloc(cap);
    while (out && rc == 0) {
        int left = (int)(deadline - ops_now_ms());
        if (left <= 0) {
            rc = snap_error(SNAP_EXIT_FAIL, "emu", "the console did not finish within "
                            "--timeout %.0f s", ctx->timeout_ms / 1000.0);
            break;
        }
        struct pollfd pf = {fd, (short)(POLLIN | (off < clen ? POLLOUT : 0)), 0};
        if (poll(&pf, 1, left) <= 0)
            continue;
        if (off < clen && (pf.revents & POLLOUT)) {
            ssize_t k = send(fd, cmd + off, clen - off, MSG_NOSIGNAL);
            if (k > 0)
                off += (size_t)k;
            else if (k < 0 && errno != EAGAIN && errno != EINTR)
                rc = snap_error(SNAP_EXIT_FAIL, "emu", "writing to the console: %s",
                                strerror(errno));
        }
        if (pf.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (got + 1 >= cap) {
                char *nb = cap < (16u << 20) ? realloc(out, cap * 2) : NULL;
                if (!nb) {
                    rc = snap_error(SNAP_EXIT_FAIL, "emu", "the console said over 16 MiB");
                    break;
                }
                out = nb;
                cap *= 2;
            }
            ssize_t k = recv(fd, out + got, cap - got - 1, 0);
            if (k > 0)
                got += (size_t)k;
            else if (k == 0 || (errno != EAGAIN && errno != EINTR))
                break; /* closed after quit (or reset by kill, as adb takes it) */
        }
    }
    close(fd);
    free(cmd);
    if (!out)
        return snap_error(SNAP_EXIT_FAIL, "emu", "out of memory");
    out[got] = '\0';
    /* Past the greeting's "OK\r\n" and auth's. */
    const char *p = out;
    for (int i = 0; i < 2; i++) {
        const char *ok = strstr(p, "OK\r\n");
        if (!ok)
            break;
        p = ok + 4;
    }
    if (rc == 0)
        snap_write_all(1, p, strlen(p));
    free(out);
    return rc;
}
