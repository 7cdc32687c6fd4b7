/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap core commands: info, shell, exec. */
#include "snap.h"
#include "write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_info(snap_ctx *ctx, int argc, char **argv);
static int cmd_shell(snap_ctx *ctx, int argc, char **argv);
static int cmd_exec(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_core[] = {
    {"info", cmd_info, "info [--json]", "the device's state, properties and features"},
    {"shell", cmd_shell, "shell [-n] [--json] CMD...",
     "run a command; exits with its status (shell v2), stderr kept apart"},
    {"exec", cmd_exec, "exec [--json] CMD...", "run a command binary-safe (exec:), output to stdout"},
    {NULL, NULL, NULL, NULL},
};

static int cmd_info(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return snap_usage(&snap_cmds_core[0], "unknown argument");
    }
    adbc_conn *c;
    ctx->no_session = 1; /* it describes the transport: always the direct one */
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    const adbc_banner *b = adbc_conn_banner(c);
    if (json) {
        printf("{\"transport\":");
        snap_json_str(stdout, adbc_conn_desc(c));
        printf(",\"state\":");
        snap_json_str(stdout, adbc_dev_state_name(b->state));
        printf(",\"protocol_version\":\"0x%08x\",\"max_payload\":%u,\"delayed_ack\":%s",
               adbc_conn_version(c), adbc_conn_max_payload(c),
               adbc_conn_delayed_ack(c) ? "true" : "false");
        printf(",\"properties\":{");
        for (size_t i = 0; i < b->nprops; i++) {
            if (i)
                putchar(',');
            snap_json_str(stdout, b->props[i].key);
            putchar(':');
            snap_json_str(stdout, b->props[i].value);
        }
        printf("},\"features\":[");
        for (size_t i = 0; i < b->nfeatures; i++) {
            if (i)
                putchar(',');
            snap_json_str(stdout, b->features[i]);
        }
        printf("],\"banner\":");
        snap_json_str(stdout, b->raw);
        printf("}\n");
        return 0;
    }
    printf("transport:        %s\n", adbc_conn_desc(c));
    printf("state:            %s\n", adbc_dev_state_name(b->state));
    printf("protocol:         0x%08x, max payload %u, delayed_ack %s\n", adbc_conn_version(c),
           adbc_conn_max_payload(c), adbc_conn_delayed_ack(c) ? "on" : "off");
    for (size_t i = 0; i < b->nprops; i++) {
        char k[256], v[4096];
        printf("%-17s %s\n", snap_tty_safe(b->props[i].key, k, sizeof k),
               snap_tty_safe(b->props[i].value, v, sizeof v));
    }
    printf("features:         ");
    for (size_t i = 0; i < b->nfeatures; i++)
        printf("%s%s", i ? "," : "", b->features[i]);
    printf("\n");
    return 0;
}

struct pump {
    adbc_shell *sh;
    int timeout_ms;
    _Atomic int done; /* the command ended: stop forwarding */
    int wake[2];      /* written when done is set; -1 when there is no pipe */
};

/* Forward our stdin to the command until EOF, then close its stdin. Polls
 * stdin and the wake pipe, so it stops (and is joined) at once when the
 * command ends first: a caller whose stdin is a pipe it never closes (an
 * agent's subprocess) must not wait for it. Without the pipe it looks at
 * done every 100 ms. */
static void *stdin_pump(void *arg)
{
    struct pump *p = arg;
    char buf[65536];
    for (;;) {
        struct pollfd pf[2] = {{.fd = 0, .events = POLLIN}, {.fd = p->wake[0], .events = POLLIN}};
        int pr = poll(pf, 2, p->wake[0] >= 0 ? -1 : 100);
        if (p->done)
            return NULL;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (adbc_shell_write(p->sh, buf, (size_t)n, p->timeout_ms) < 0)
            return NULL;
    }
    adbc_shell_close_stdin(p->sh, p->timeout_ms);
    return NULL;
}

static int run_stream(snap_ctx *ctx, const char *cmd, adbc_shell_mode mode, int forward_stdin)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_shell_opts o = {.size = sizeof(adbc_shell_opts), .mode = mode};
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, c, cmd, &o, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail(cmd, rc);
    pthread_t th;
    struct pump p = {sh, ctx->timeout_ms, 0, {-1, -1}};
    int pumping = forward_stdin && adbc_shell_is_v2(sh) && !isatty(0);
    if (pumping && pipe2(p.wake, O_CLOEXEC) != 0)
        p.wake[0] = p.wake[1] = -1;
    if (pumping && pthread_create(&th, NULL, stdin_pump, &p) != 0)
        pumping = 0;
    if (!pumping && adbc_shell_is_v2(sh))
        adbc_shell_close_stdin(sh, ctx->timeout_ms);
    char buf[65536];
    int status = 0;
    for (;;) {
        int fd;
        /* A running command may stay quiet for long: without --timeout no
         * read timeout here (a dead connection still ends the read with an
         * error, and ^C cancels); with it, --timeout bounds the silence. */
        ssize_t n = adbc_shell_read(sh, &fd, buf, sizeof buf, ctx->stream_timeout_ms);
        if (n == ADBC_ETIMEDOUT) {
            fprintf(stderr,
                    "adbc-snap: %s: nothing from the device for %.1f s (--timeout bounds the "
                    "silence of shell and exec); the command may still be running there\n",
                    cmd, ctx->stream_timeout_ms / 1000.0);
            status = SNAP_EXIT_FAIL;
            break;
        }
        if (n < 0) {
            status = snap_fail(cmd, (int)n);
            break;
        }
        if (n == 0) {
            int code = adbc_shell_exit_code(sh);
            if (code < 0 && adbc_shell_is_v2(sh)) {
                fprintf(stderr,
                        "adbc-snap: %s: the device's shell ended without an exit status "
                        "(missing or empty exit packet): the command's result is unknown and "
                        "its output may be cut short; exit %d\n",
                        cmd, SNAP_EXIT_NO_STATUS);
                status = SNAP_EXIT_NO_STATUS;
            } else {
                status = code >= 0 ? code : 0;
            }
            break;
        }
        if (snap_write_all(fd == 2 ? 2 : 1, buf, (size_t)n) < 0) {
            status = SNAP_EXIT_FAIL;
            break;
        }
    }
    if (pumping) {
        p.done = 1;
        if (p.wake[1] >= 0) { /* closing the write end wakes the pump's poll (POLLHUP) */
            close(p.wake[1]);
            p.wake[1] = -1;
        }
        pthread_join(th, NULL);
    }
    for (int k = 0; k < 2; k++)
        if (p.wake[k] >= 0)
            close(p.wake[k]);
    adbc_shell_close(sh);
    return status;
}

/* The leading options of shell and exec: -n (shell only), --json, "--".
 * Returns the index of the command's first word. */
static int lead_opts(const snap_cmd *cmd, int argc, char **argv, int *forward, int *json)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1;
        if (strcmp(argv[i], "--json") == 0)
            *json = 1;
        else if (forward && strcmp(argv[i], "-n") == 0)
            *forward = 0;
        else
            break; /* the command itself, such as `shell -x` is not ours */
    }
    (void)cmd;
    return i;
}

/* Output collected for --json, bounded: JSON is for results a program
 * reads whole, not for streams. */
#define JSON_MAX_OUTPUT (64u << 20)

typedef struct obuf {
    char *p;
    size_t len, cap;
} obuf;

static int obuf_add(obuf *b, const char *d, size_t n)
{
    if (b->len + n > JSON_MAX_OUTPUT)
        return -1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

/* --json: run to the end with stdin closed, then print one object:
 * {"exit_code": N or null, "stdout": ..., "stderr": ...} (exec: stdout
 * only); byte strings that are not UTF-8 as "<name>_base64". Exits with the
 * command's status as without --json. */
static int run_json(snap_ctx *ctx, const char *cmd, adbc_shell_mode mode)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_shell_opts o = {.size = sizeof o, .mode = mode};
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, c, cmd, &o, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail(cmd, rc);
    if (adbc_shell_is_v2(sh))
        adbc_shell_close_stdin(sh, ctx->timeout_ms);
    obuf out = {0}, err = {0};
    char buf[65536];
    int status = 0, code = -1, failed = 0;
    for (;;) {
        int fd;
        ssize_t n = adbc_shell_read(sh, &fd, buf, sizeof buf, -1);
        if (n < 0) {
            status = snap_fail(cmd, (int)n);
            failed = 1;
            break;
        }
        if (n == 0) {
            code = adbc_shell_exit_code(sh);
            status = code >= 0 ? code : 0;
            break;
        }
        if (obuf_add(fd == 2 ? &err : &out, buf, (size_t)n) < 0) {
            status = snap_error(SNAP_EXIT_FAIL, cmd,
                                "the output passed %u MiB: run it without --json",
                                JSON_MAX_OUTPUT >> 20);
            failed = 1;
            break;
        }
    }
    adbc_shell_close(sh);
    if (!failed) {
        printf("{");
        if (mode != ADBC_SHELL_EXEC) {
            if (code >= 0)
                printf("\"exit_code\":%d,", code);
            else
                printf("\"exit_code\":null,");
        }
        snap_json_bytes(stdout, "stdout", out.p ? out.p : "", out.len);
        if (mode != ADBC_SHELL_EXEC) {
            putchar(',');
            snap_json_bytes(stdout, "stderr", err.p ? err.p : "", err.len);
        }
        printf("}\n");
        fflush(stdout);
        snap_json_mark();
    }
    free(out.p);
    free(err.p);
    return status;
}

static int cmd_shell(snap_ctx *ctx, int argc, char **argv)
{
    int forward = 1, json = 0;
    int from = lead_opts(&snap_cmds_core[1], argc, argv, &forward, &json);
    if (from >= argc)
        return snap_usage(&snap_cmds_core[1],
                          "give the command to run (interactive shells are not supported)");
    char *cmd = snap_join(argc, argv, from);
    if (!cmd)
        return SNAP_EXIT_FAIL;
    int rc = json ? run_json(ctx, cmd, ADBC_SHELL_AUTO) : run_stream(ctx, cmd, ADBC_SHELL_AUTO, forward);
    free(cmd);
    return rc;
}

static int cmd_exec(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0;
    int from = lead_opts(&snap_cmds_core[2], argc, argv, NULL, &json);
    if (from >= argc)
        return snap_usage(&snap_cmds_core[2], "give the command to run");
    char *cmd = snap_join(argc, argv, from);
    if (!cmd)
        return SNAP_EXIT_FAIL;
    int rc = json ? run_json(ctx, cmd, ADBC_SHELL_EXEC) : run_stream(ctx, cmd, ADBC_SHELL_EXEC, 0);
    free(cmd);
    return rc;
}
