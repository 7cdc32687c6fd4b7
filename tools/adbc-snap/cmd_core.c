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
    {"shell", cmd_shell, "shell [-e C|none] [-n] [-t|-tt|-T] [-x] [--json] [CMD...]",
     "run a command (exits with its status, stderr kept apart), or a PTY shell"},
    {"exec", cmd_exec, "exec [--json] CMD...", "run a command binary-safe (exec:), output to stdout"},
    {"exec-out", cmd_exec, "exec-out [--json] CMD...", "adb's name for exec"},
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
    int winch;        /* readable after SIGWINCH (pty shells); -1: none */
    int size_fd;      /* the terminal whose size is sent */
    unsigned size[2]; /* the device's PTY's rows and columns, as last sent */
    char escape;      /* raw terminal: the escape character (0: none) */
    int esc_state;    /* ESC_* */
};

/* adb's escape (as ssh's): on a raw terminal, the escape character at the
 * start of a line followed by '.' disconnects; twice sends it once; followed
 * by anything else it is sent with it (client/commandline.cpp,
 * stdin_read_thread_loop). */
enum { ESC_MID = 0, ESC_LINE_START, ESC_SEEN };

/* Filter n bytes of in through the escape state into out (room for 2n);
 * the bytes to send, or -1 when the user asked to disconnect. */
static ssize_t escape_filter(struct pump *p, const char *in, ssize_t n, char *out)
{
    ssize_t k = 0;
    for (ssize_t i = 0; i < n; i++) {
        char ch = in[i];
        if (ch == p->escape) {
            if (p->esc_state == ESC_LINE_START) {
                p->esc_state = ESC_SEEN;
                continue; /* swallowed until the next byte says what it is */
            }
            p->esc_state = ESC_MID;
            out[k++] = ch;
            continue;
        }
        if (p->esc_state == ESC_SEEN) {
            if (ch == '.')
                return -1;
            out[k++] = p->escape;
        }
        p->esc_state = ch == '\n' || ch == '\r' ? ESC_LINE_START : ESC_MID;
        out[k++] = ch;
    }
    return k;
}

/* The terminal's size to the device's PTY when it changed: after SIGWINCH,
 * and before any input is sent. The signal may be taken by another thread
 * and reach the pump's pipe after the keys typed at the new size; reading
 * the size before forwarding keeps the two in the order they happened. */
static void send_size(struct pump *p)
{
    unsigned r, c, x, y;
    if (p->winch < 0)
        return;
    snap_winch_take();
    if (snap_tty_size(p->size_fd, &r, &c, &x, &y) != 0)
        return;
    if (r == p->size[0] && c == p->size[1])
        return;
    if (adbc_shell_resize(p->sh, r, c, x, y, p->timeout_ms) == 0)
        p->size[0] = r, p->size[1] = c;
}

/* Forward our stdin to the command until EOF, then close its stdin. Polls
 * stdin and the wake pipe, so it stops (and is joined) at once when the
 * command ends first: a caller whose stdin is a pipe it never closes (an
 * agent's subprocess) must not wait for it. Without the pipe it looks at
 * done every 100 ms. A PTY shell's pump also sends window size changes. */
static void *stdin_pump(void *arg)
{
    struct pump *p = arg;
    static char buf[32768], filtered[65536];
    int in_open = 1;
    p->esc_state = ESC_LINE_START;
    for (;;) {
        struct pollfd pf[3] = {{.fd = in_open ? 0 : -1, .events = POLLIN},
                               {.fd = p->wake[0], .events = POLLIN},
                               {.fd = p->winch, .events = POLLIN}};
        int pr = poll(pf, 3, p->wake[0] >= 0 ? -1 : 100);
        if (p->done)
            return NULL;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr > 0 && (pf[2].revents & POLLIN))
            send_size(p);
        if (pr <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* EOF: a v2 command sees it; v1 has no way to say it. */
            if (adbc_shell_is_v2(p->sh))
                adbc_shell_close_stdin(p->sh, p->timeout_ms);
            if (p->winch < 0)
                return NULL;
            in_open = 0; /* a PTY shell still gets its size changes */
            continue;
        }
        const char *send = buf;
        if (p->escape) {
            n = escape_filter(p, buf, n, filtered);
            if (n < 0) {
                /* As adb: the terminal back, a word, exit 0 at once. */
                snap_tty_restore();
                static const char bye[] = "\r\n[ disconnected ]\r\n";
                snap_write_all(2, bye, sizeof bye - 1);
                _exit(0);
            }
            send = filtered;
        }
        if (n > 0)
            send_size(p);
        if (n > 0 && adbc_shell_write(p->sh, send, (size_t)n, p->timeout_ms) < 0)
            return NULL;
    }
}

/* How `shell` runs its command (adb's options decide it, see cmd_shell). */
typedef struct shell_how {
    adbc_shell_mode mode;
    int pty;     /* the device gives the command a PTY (shell v2 "pty") */
    int raw_tty; /* our stdin is a terminal: make it raw while the command runs */
    int forward; /* forward our stdin */
    char escape; /* with raw_tty: the escape character (-e; 0: none) */
} shell_how;

static int run_stream(snap_ctx *ctx, const char *cmd, const shell_how *how)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_shell_opts o = {.size = sizeof(adbc_shell_opts), .mode = how->mode, .pty = how->pty};
    /* As adb: the terminal type and the window size go with a PTY. */
    int size_fd = isatty(0) ? 0 : 1;
    if (how->pty) {
        const char *term = getenv("TERM");
        o.term = term && *term && !strpbrk(term, ",:") ? term : NULL;
        if (snap_tty_size(size_fd, &o.rows, &o.cols, NULL, NULL) != 0)
            o.rows = o.cols = 0;
    }
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, c, cmd, &o, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail(*cmd ? cmd : "shell", rc);
    int v2 = adbc_shell_is_v2(sh);
    pthread_t th;
    struct pump p = {.sh = sh,
                     .timeout_ms = ctx->timeout_ms,
                     .wake = {-1, -1},
                     .winch = -1,
                     .size_fd = size_fd,
                     .size = {o.rows, o.cols},
                     .escape = how->raw_tty ? how->escape : 0,
                     .esc_state = ESC_LINE_START};
    /* stdin goes to a v2 command when it is not a terminal (a terminal
     * left in line mode would be read by nobody's prompt), and to any shell
     * that is interactive: a PTY shell, or one with no command. */
    int pumping = how->forward && (how->pty || !*cmd || (v2 && !isatty(0)));
    if (pumping && pipe2(p.wake, O_CLOEXEC) != 0)
        p.wake[0] = p.wake[1] = -1;
    if (pumping && how->pty && v2 && isatty(size_fd))
        p.winch = snap_winch_start();
    if (pumping && how->raw_tty && snap_tty_raw(0) != 0)
        fprintf(stderr, "adbc-snap: cannot make the terminal raw: keys go to the device "
                        "line by line\n");
    if (pumping && pthread_create(&th, NULL, stdin_pump, &p) != 0)
        pumping = 0;
    if (!pumping && v2)
        adbc_shell_close_stdin(sh, ctx->timeout_ms);
    char buf[65536];
    int status = 0;
    const char *what = *cmd ? cmd : "shell";
    for (;;) {
        int fd;
        /* A running command may stay quiet for long: without --timeout no
         * read timeout here (a dead connection still ends the read with an
         * error, and ^C cancels); with it, --timeout bounds the silence. An
         * interactive shell waits for its user: no bound. */
        int wait = pumping && (how->pty || !*cmd) ? -1 : ctx->stream_timeout_ms;
        ssize_t n = adbc_shell_read(sh, &fd, buf, sizeof buf, wait);
        if (n == ADBC_ETIMEDOUT) {
            snap_tty_restore();
            fprintf(stderr,
                    "adbc-snap: %s: nothing from the device for %.1f s (--timeout bounds the "
                    "silence of shell and exec); the command may still be running there\n",
                    what, ctx->stream_timeout_ms / 1000.0);
            status = SNAP_EXIT_FAIL;
            break;
        }
        if (n < 0) {
            snap_tty_restore();
            status = snap_fail(what, (int)n);
            break;
        }
        if (n == 0) {
            snap_tty_restore();
            int code = adbc_shell_exit_code(sh);
            if (code < 0 && v2) {
                fprintf(stderr,
                        "adbc-snap: %s: the device's shell ended without an exit status "
                        "(missing or empty exit packet): the command's result is unknown and "
                        "its output may be cut short; exit %d\n",
                        what, SNAP_EXIT_NO_STATUS);
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
    snap_tty_restore();
    if (p.winch >= 0)
        snap_winch_stop();
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

/* The leading options of exec: --json, "--". Returns the index of the
 * command's first word. */
static int lead_opts(int argc, char **argv, int *json)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1;
        if (strcmp(argv[i], "--json") == 0)
            *json = 1;
        else
            break; /* the command itself */
    }
    return i;
}

/* Output collected for --json, bounded: JSON is for results a program
 * reads whole, not for streams. */
#define JSON_MAX_OUTPUT (64u << 20)

/* --json: run to the end with stdin closed, then print one object:
 * {"exit_code": N or null, "stdout": ..., "stderr": ...} (exec: stdout
 * only); byte strings that are not UTF-8 as "<name>_base64". Exits with the
 * command's status as without --json. */
static int run_json(snap_ctx *ctx, const char *cmd, adbc_shell_mode mode)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    /* No bound on the time a command may run (^C cancels), only on what
     * it may print. */
    adbc_run_result r;
    int rc = adbc_run(&r, c, mode, cmd, NULL, 0, JSON_MAX_OUTPUT, -1);
    if (rc < 0)
        return snap_fail(cmd, rc);
    int code = r.exit_code, status = code >= 0 ? code : 0;
    printf("{");
    if (mode != ADBC_SHELL_EXEC) {
        if (code >= 0)
            printf("\"exit_code\":%d,", code);
        else
            printf("\"exit_code\":null,");
    }
    snap_json_bytes(stdout, "stdout", r.out, r.out_len);
    if (mode != ADBC_SHELL_EXEC) {
        putchar(',');
        snap_json_bytes(stdout, "stderr", r.err, r.err_len);
    }
    printf("}\n");
    fflush(stdout);
    snap_json_mark();
    adbc_run_result_clear(&r);
    return status;
}

/* adb's shell options (getopt "+e:ntTx": they may be combined, the first
 * word that is not an option starts the command), and adbc's --json and
 * "--". As adb decides the PTY: -T never; -t when stdin is a terminal;
 * -tt always; with neither, when there is no command and stdin is a
 * terminal; the last of -T and -t counts (-T -tt: always). -x: shell v1 (no exit status, stderr mixed in; the escape back
 * to '~'); -n: stdin is not read; -e C: the escape character on a raw
 * terminal ("none": no escape; default '~'). */
static int cmd_shell(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_core[1];
    int forward = 1, json = 0, t = 0, v1 = 0, from = 1;
    char escape = '~';
    for (; from < argc && argv[from][0] == '-' && argv[from][1]; from++) {
        const char *a = argv[from];
        if (strcmp(a, "--") == 0) {
            from++;
            break;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
            continue;
        }
        for (const char *o = a + 1; *o; o++) {
            if (*o == 'e') {
                /* getopt: the rest of this word, else the next word. */
                const char *e = o[1] ? o + 1 : from + 1 < argc ? argv[++from] : NULL;
                if (!e || !(strlen(e) == 1 || strcmp(e, "none") == 0))
                    return snap_usage(self, "-e requires a single-character argument or "
                                            "'none'");
                escape = strcmp(e, "none") == 0 ? 0 : e[0];
                break;
            }
            if (*o == 'n') {
                forward = 0;
            } else if (*o == 't') {
                /* As adb: cumulative, and after -T a -t starts again from
                 * one (-T -tt forces a PTY, -tt -T gives none). */
                t = t >= 1 ? 2 : 1;
            } else if (*o == 'T') {
                t = -1;
            } else if (*o == 'x') {
                v1 = 1;
                escape = '~';
            } else {
                char msg[160];
                snprintf(msg, sizeof msg,
                         "unknown option -%c in %.40s (-e C, -n, -t, -tt, -T, -x, --json; put -- "
                         "before a command that starts with -)",
                         *o, a);
                return snap_usage(self, msg);
            }
        }
    }
    int interactive = from >= argc, tty = isatty(0);
    int pty = t >= 2 || (t == 1 && tty) || (t == 0 && tty && interactive);
    if (t == 1 && !tty)
        fprintf(stderr, "adbc-snap: no PTY for the command: stdin is not a terminal (-tt "
                        "forces one)\n");
    char *cmd = interactive ? strdup("") : snap_join(argc, argv, from);
    if (!cmd)
        return SNAP_EXIT_FAIL;
    int rc;
    if (json && (interactive || pty))
        rc = snap_usage(self, "--json runs a command to its end: give the command, without -t");
    else if (json)
        rc = run_json(ctx, cmd, v1 ? ADBC_SHELL_V1 : ADBC_SHELL_AUTO);
    else {
        shell_how how = {.mode = v1 ? ADBC_SHELL_V1 : ADBC_SHELL_AUTO, .pty = pty,
                         .raw_tty = pty && tty, .forward = forward, .escape = escape};
        rc = run_stream(ctx, cmd, &how);
    }
    free(cmd);
    return rc;
}

static int cmd_exec(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0;
    int from = lead_opts(argc, argv, &json);
    if (from >= argc)
        return snap_usage(&snap_cmds_core[2], "give the command to run");
    char *cmd = snap_join(argc, argv, from);
    if (!cmd)
        return SNAP_EXIT_FAIL;
    shell_how how = {.mode = ADBC_SHELL_EXEC};
    int rc = json ? run_json(ctx, cmd, ADBC_SHELL_EXEC) : run_stream(ctx, cmd, &how);
    free(cmd);
    return rc;
}
