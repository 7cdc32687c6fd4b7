/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap logcat: the device's logcat with adb's arguments. adb runs
 *   export ANDROID_LOG_TAGS="'$ANDROID_LOG_TAGS'"; exec logcat 'ARG'...
 * in a shell on the device with every argument quoted, and so does this
 * command, with one difference: adb's double quotes keep its single quotes
 * in the value (the device sees ANDROID_LOG_TAGS='' with the quote
 * characters, and the first and last filter spec of a value get a quote
 * glued on), so here the value is one single-quoted word and the device
 * sees exactly $ANDROID_LOG_TAGS. The rest: -d, -c, -t N, -T N, -v FORMAT, -b BUFFER, -s, filter specs and
 * whatever else the device's logcat knows mean what they mean there, and an
 * option it does not know is its own error ("logcat: invalid option").
 * Two options are adbc's own, named so they collide with none of logcat's:
 *   --for SECONDS  follow the log for that long, then stop (exit 0)
 *   --json         {"lines":[...]}; needs a log that ends: -d, -c, -t N,
 *                  or --for
 * Everything after "--" goes to logcat as it is. */
#include "snap.h"
#include "write_all.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops_core.h"

static int cmd_logcat(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_logcat[] = {
    {"logcat", cmd_logcat, "logcat [--for SECONDS] [--json] [LOGCAT-ARGS...]",
     "the device's logcat with adb's arguments (-d, -t N, -c, -v, -b, FILTERS...)"},
    {NULL, NULL, NULL, NULL},
};

/* --json holds the whole output: at most this much. */
#define LOGCAT_JSON_MAX (64u << 20)

/* Whether logcat ends on its own with this argument (it dumps, clears, or
 * reports instead of following the log), as logcat's own usage says. */
static int ends_by_itself(const char *a)
{
    static const char *const words[] = {"-d", "-c", "--clear", "-g", "--get-buffer-size",
                                        "-S", "--statistics", "-L", "--last", "-p",
                                        "--prune", "-h", "--help", NULL};
    for (int k = 0; words[k]; k++)
        if (strcmp(a, words[k]) == 0)
            return 1;
    /* -t N and -tN imply -d (-T N does not) */
    return strncmp(a, "-t", 2) == 0;
}

/* Append " 'word'" (or the word bare when raw) to *cmd. */
static int append(char **cmd, size_t *len, const char *word, int quote)
{
    char *q = NULL;
    if (quote && adbc_shell_quote(&q, word) < 0)
        return -1;
    const char *w = quote ? q : word;
    size_t n = strlen(w);
    char *p = realloc(*cmd, *len + n + 2);
    if (!p) {
        adbc_free(q);
        return -1;
    }
    p[(*len)++] = ' ';
    memcpy(p + *len, w, n + 1);
    *len += n;
    *cmd = p;
    adbc_free(q);
    return 0;
}

/* The command adb sends for `adb logcat ARGS`. */
static char *logcat_command(int argc, char **argv, const char *tags)
{
    char *q = NULL;
    if (adbc_shell_quote(&q, tags ? tags : "") < 0)
        return NULL;
    size_t len = strlen(q) + 48;
    char *cmd = malloc(len);
    if (!cmd) {
        adbc_free(q);
        return NULL;
    }
    len = (size_t)snprintf(cmd, len, "export ANDROID_LOG_TAGS=%s; exec logcat", q);
    adbc_free(q);
    for (int i = 0; i < argc; i++)
        if (append(&cmd, &len, argv[i], 1) < 0) {
            free(cmd);
            return NULL;
        }
    return cmd;
}

static void print_json_lines(const char *out, size_t len)
{
    printf("{\"lines\":[");
    size_t i = 0, k = 0;
    while (i < len) {
        const char *nl = memchr(out + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - out) : len, ve = e;
        if (ve > i && out[ve - 1] == '\r')
            ve--;
        printf(k++ ? "," : "");
        snap_json_strn(stdout, out + i, ve - i);
        i = e + 1;
    }
    printf("]}\n");
    fflush(stdout);
    snap_json_mark();
}

static int cmd_logcat(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_logcat[0];
    int for_ms = 0, json = 0, ends = 0, n = 0;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return snap_fail("logcat", ADBC_ENOMEM);
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--for") == 0) {
            if (i + 1 >= argc || snap_seconds(argv[i + 1], 86400, &for_ms) < 0) {
                free(args);
                return snap_usage(self, "--for takes seconds (0 < S <= 86400)");
            }
            i++;
        } else {
            ends |= ends_by_itself(argv[i]);
            args[n++] = argv[i];
        }
    }
    for (i++; i < argc; i++) {
        ends |= ends_by_itself(argv[i]);
        args[n++] = argv[i];
    }
    if (json && !ends && !for_ms) {
        free(args);
        return snap_usage(self, "--json reads the whole log: give -d, -t N or --for SECONDS "
                                "(logcat alone follows the log until stopped)");
    }
    char *cmd = logcat_command(n, args, getenv("ANDROID_LOG_TAGS"));
    free(args);
    if (!cmd)
        return snap_fail("logcat", ADBC_ENOMEM);
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0) {
        free(cmd);
        return SNAP_EXIT_FAIL;
    }
    adbc_shell_opts o = {.size = sizeof o, .mode = ADBC_SHELL_AUTO};
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, c, cmd, &o, ctx->timeout_ms);
    free(cmd);
    if (rc < 0)
        return snap_fail("logcat", rc);
    if (adbc_shell_is_v2(sh))
        adbc_shell_close_stdin(sh, ctx->timeout_ms);
    char *jbuf = NULL;
    size_t jlen = 0;
    FILE *jf = json ? open_memstream(&jbuf, &jlen) : NULL;
    if (json && !jf) {
        adbc_shell_close(sh);
        return snap_fail("logcat", ADBC_ENOMEM);
    }
    int64_t end = for_ms ? ops_now_ms() + for_ms : 0;
    int status = 0;
    char buf[65536];
    for (;;) {
        int wait = ctx->stream_timeout_ms;
        if (end) {
            int64_t left = end - ops_now_ms();
            if (left <= 0)
                break; /* --for: the time is up */
            if (wait < 0 || left < wait)
                wait = (int)left;
        }
        int fd;
        ssize_t r = adbc_shell_read(sh, &fd, buf, sizeof buf, wait);
        if (r == ADBC_ETIMEDOUT && end && ops_now_ms() >= end)
            break;
        if (r == ADBC_ETIMEDOUT) {
            status = snap_error(SNAP_EXIT_FAIL, "logcat",
                                "nothing from the device for %.1f s (--timeout bounds the "
                                "silence; --for SECONDS follows the log for a time)",
                                ctx->stream_timeout_ms / 1000.0);
            break;
        }
        if (r < 0) {
            status = snap_signal_received() ? SNAP_EXIT_FAIL : snap_fail("logcat", (int)r);
            break;
        }
        if (r == 0) {
            int code = adbc_shell_exit_code(sh);
            status = code >= 0 ? code : 0;
            break;
        }
        if (jf && fd != 2) {
            if (jlen + (size_t)r > LOGCAT_JSON_MAX) {
                status = snap_error(SNAP_EXIT_FAIL, "logcat",
                                    "the log passed %u MiB: run it without --json",
                                    LOGCAT_JSON_MAX >> 20);
                break;
            }
            fwrite(buf, 1, (size_t)r, jf);
        } else if (snap_write_all(fd == 2 ? 2 : 1, buf, (size_t)r) < 0) {
            status = SNAP_EXIT_FAIL;
            break;
        }
    }
    adbc_shell_close(sh);
    if (jf) {
        int ok = fclose(jf) == 0;
        if (!ok && status == 0)
            status = snap_fail("logcat", ADBC_ENOMEM);
        if (status == 0)
            print_json_lines(jbuf ? jbuf : "", jlen);
        free(jbuf);
    }
    return status;
}
