/* SPDX-License-Identifier: Apache-2.0 */
/* Running act commands over exec: and building their command lines.
 *
 * exec: is the cheapest way to run a command (no PTY, no shell protocol)
 * but reports no exit status, so each command is followed by an echo of
 * "$?" behind a marker. A command too long for the service name (old
 * devices take 4 KiB) is fed to `sh` on its stdin instead. */
#include "act/act_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/shell.h"
#include "core/internal.h"

#define STATUS_MARK "@adbc-status:"

/* ---- command lines ------------------------------------------------------------ */

void act_buf_quote(core_buf *b, const char *s)
{
    if (b->err)
        return;
    char *q;
    int rc = adbc_shell_quote(&q, s);
    if (rc < 0) {
        b->err = rc;
        return;
    }
    core_buf_add(b, q, strlen(q));
    core_free(q);
}

int act_buf_take(core_buf *b, char **out)
{
    if (core_buf_take(b, out, NULL) < 0)
        return core_fail(ADBC_ENOMEM, "out of memory building a device command");
    return 0;
}

/* ---- running ---------------------------------------------------------------- */

int act_left(int64_t deadline)
{
    int left = core_remaining(deadline);
    return left == 0 ? 1 : left;
}

void act_out_free(act_out *o)
{
    if (!o)
        return;
    core_free(o->text);
    o->text = NULL;
    o->len = 0;
}

/* Find the last marker; it must be followed by digits and a newline that
 * end the output. */
static int split_status(act_out *o, const char *cmd)
{
    size_t ml = strlen(STATUS_MARK);
    for (size_t i = o->len >= ml ? o->len - ml + 1 : 0; i-- > 0;) {
        if (memcmp(o->text + i, STATUS_MARK, ml) != 0)
            continue;
        const char *p = o->text + i + ml;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || *end != '\n' || (size_t)(end + 1 - o->text) != o->len || v < 0 || v > 255)
            break;
        o->status = (int)v;
        o->len = i;
        o->text[i] = '\0';
        return 0;
    }
    return core_fail(ADBC_EREMOTE,
                     "the device shell ended without finishing \"%.80s\" (output: \"%.120s\"): "
                     "check that the device is still connected",
                     cmd, o->text ? o->text : "");
}

int act_run(act_out *o, adbc_conn *c, const char *cmd, size_t max_out, int timeout_ms)
{
    memset(o, 0, sizeof *o);
    o->status = -1;
    if (!c || !cmd)
        return core_fail(ADBC_EINVAL, "act_run: need a connection and a command");
    if (!max_out)
        max_out = 1u << 20;
    core_buf b = {0};
    size_t n = strlen(cmd);
    uint32_t maxp = adbc_conn_max_payload(c);
    size_t limit = maxp > 4096 ? 4096 : maxp; /* service names past 4 KiB are not portable */
    int via_stdin = n + 64 > limit;
    if (via_stdin)
        core_buf_printf(&b, "%s\necho \"%s$?\"\nexit\n", cmd, STATUS_MARK);
    else
        core_buf_printf(&b, "%s; echo \"%s$?\"", cmd, STATUS_MARK);
    char *line;
    int rc = act_buf_take(&b, &line);
    if (rc < 0)
        return rc;
    adbc_run_result r;
    if (via_stdin)
        rc = adbc_run(&r, c, ADBC_SHELL_EXEC, "sh", line, strlen(line), max_out + 64,
                      timeout_ms);
    else
        rc = adbc_run(&r, c, ADBC_SHELL_EXEC, line, NULL, 0, max_out + 64, timeout_ms);
    core_free(line);
    if (rc < 0) {
        adbc_run_result_clear(&r);
        return rc;
    }
    /* Take the output over: adbc_run NUL-terminates it. */
    o->len = r.out_len;
    o->text = (char *)r.out;
    r.out = NULL;
    adbc_run_result_clear(&r);
    if (!o->text) {
        o->len = 0;
        o->text = core_strdup("");
        if (!o->text)
            return core_fail(ADBC_ENOMEM, "out of memory for the output of \"%.80s\"", cmd);
    }
    rc = split_status(o, cmd);
    if (rc < 0) {
        act_out_free(o);
        return rc;
    }
    return 0;
}

/* Error text of Android's command-line tools: a line starting "Error" or
 * "Exception", or one whose first word is an exception class
 * ("java.lang.SecurityException: ..."). Only line starts count: `am start`
 * echoes the intent, whose data may hold any word. */
static const char *error_text(const char *s)
{
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t w = strcspn(p, ": \t\r\n");
        if (w > n)
            w = n;
        if (strncmp(p, "Error", 5) == 0 || strncmp(p, "Exception", 9) == 0 ||
            (w >= 9 && memcmp(p + w - 9, "Exception", 9) == 0))
            return p;
        if (!nl)
            break;
        p = nl + 1;
    }
    return NULL;
}

int act_out_ok(const act_out *o, const char *what)
{
    const char *err = error_text(o->text);
    if (o->status != 0 || err)
        return core_fail(ADBC_EREMOTE, "%s failed on the device (status %d): %.300s", what,
                         o->status, err ? err : o->len ? o->text : "no output");
    return 0;
}

int act_run_ok(adbc_conn *c, const char *cmd, const char *what, int timeout_ms)
{
    act_out o;
    int rc = act_run(&o, c, cmd, 0, timeout_ms);
    if (rc < 0)
        return rc;
    rc = act_out_ok(&o, what);
    act_out_free(&o);
    return rc;
}

int act_run_input(adbc_conn *c, const char *cmd, const char *what, int64_t deadline)
{
    const char *pre = act_input_prefix(c, act_left(deadline));
    if (!*pre)
        return act_run_ok(c, cmd, what, act_left(deadline));
    core_buf b = {0};
    core_buf_printf(&b, "%s%s", pre, cmd);
    char *line;
    int rc = act_buf_take(&b, &line);
    if (rc < 0)
        return rc;
    rc = act_run_ok(c, line, what, act_left(deadline));
    core_free(line);
    return rc;
}

/* ---- options ------------------------------------------------------------------ */

void adbc_act_opts_init_sized(adbc_act_opts *out, size_t size)
{
    adbc_act_opts d, *opts = &d;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->timeout_ms = 30000;
    opts->settle_ms = 400;
    opts->long_press_ms = 1000;
    opts->scroll_ms = 300;
    core_abi_give(out, size, &d, sizeof d);
}

const adbc_act_opts *act_opts(const adbc_act_opts *opts, adbc_act_opts *store)
{
    adbc_act_opts_init(store);
    if (core_abi_take(store, sizeof *store, opts, "adbc_act_opts") < 0)
        return NULL;
    return store;
}
