/* SPDX-License-Identifier: Apache-2.0 */
/* shell: (v1), shell,v2: and exec: on top of a stream: the streaming API
 * and the one-call adbc_run(). */
#include "adbc/shell.h"
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

#define RX_BUF (64 * 1024)
#define STDIN_CHUNK (64 * 1024)

struct adbc_shell {
    adbc_stream *st;
    int v2;
    int exit_code;
    int ended;
    adbc_shellv2_demux demux;
    uint8_t *rx; /* v2: bytes received, not yet demultiplexed: rx[rxoff..rxlen) */
    size_t rxoff, rxlen;
    char exit_byte_pending;
};

int adbc_shell_quote(char **out, const char *s)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!s)
        return core_fail(ADBC_EINVAL, "adbc_shell_quote: NULL string");
    size_t n = 2;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = core_malloc(n + 1);
    if (!q)
        return core_fail(ADBC_ENOMEM, "out of memory quoting a string");
    char *w = q;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    *w++ = '\'';
    *w = '\0';
    *out = q;
    return 0;
}

static int build_service(adbc_conn *c, const char *command, const adbc_shell_opts *o, int *v2,
                         char **out)
{
    adbc_shell_mode mode = o ? o->mode : ADBC_SHELL_AUTO;
    int has_v2 = adbc_conn_has_feature(c, "shell_v2");
    if (mode == ADBC_SHELL_V2 && !has_v2)
        return core_fail(ADBC_EUNSUPPORTED,
                         "the device does not support shell v2 (no shell_v2 feature): use shell "
                         "v1 or exec");
    *v2 = mode == ADBC_SHELL_V2 || (mode == ADBC_SHELL_AUTO && has_v2);
    if (!command)
        command = "";
    size_t n = strlen(command) + 128 + (o && o->term ? strlen(o->term) : 0);
    char *svc = core_malloc(n);
    if (!svc)
        return core_fail(ADBC_ENOMEM, "out of memory");
    if (mode == ADBC_SHELL_EXEC)
        snprintf(svc, n, "exec:%s", command);
    else if (!*v2)
        snprintf(svc, n, "shell:%s", command);
    else {
        int pty = o && o->pty;
        if (pty && o->term && *o->term) {
            if (strpbrk(o->term, ",:")) {
                core_free(svc);
                return core_fail(ADBC_EINVAL, "TERM value may not contain ',' or ':'");
            }
            snprintf(svc, n, "shell,v2,TERM=%s,pty:%s", o->term, command);
        } else {
            snprintf(svc, n, "shell,v2,%s:%s", pty ? "pty" : "raw", command);
        }
    }
    *out = svc;
    return 0;
}

int adbc_shell_open(adbc_shell **out, adbc_conn *c, const char *command,
                    const adbc_shell_opts *opts, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_shell_open: no connection");
    adbc_shell_opts o = {.size = sizeof o, .mode = ADBC_SHELL_AUTO};
    if (core_abi_take(&o, sizeof o, opts, "adbc_shell_opts") < 0)
        return ADBC_EINVAL;
    opts = &o;
    adbc_shell *sh = core_calloc(1, sizeof *sh);
    if (!sh)
        return core_fail(ADBC_ENOMEM, "out of memory");
    sh->exit_code = -1;
    adbc_shellv2_init(&sh->demux, 0);
    char *svc = NULL;
    int rc = build_service(c, command, opts, &sh->v2, &svc);
    if (rc == 0 && sh->v2 && !(sh->rx = core_malloc(RX_BUF)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    if (rc == 0)
        rc = adbc_stream_open(&sh->st, c, svc, timeout_ms);
    core_free(svc);
    if (rc < 0) {
        core_free(sh->rx);
        core_free(sh);
        return rc;
    }
    if (sh->v2 && opts && opts->pty && opts->rows && opts->cols)
        adbc_shell_resize(sh, opts->rows, opts->cols, 0, 0, timeout_ms);
    *out = sh;
    return 0;
}

ssize_t adbc_shell_read(adbc_shell *sh, int *fd, void *buf, size_t len, int timeout_ms)
{
    if (!sh || !fd || (!buf && len))
        return core_null(__func__, !sh ? "the shell" : !fd ? "fd" : "buf");
    *fd = 1;
    if (sh->ended)
        return 0;
    if (!sh->v2) {
        ssize_t n = adbc_stream_read(sh->st, buf, len, timeout_ms);
        if (n == 0)
            sh->ended = 1;
        return n;
    }
    int64_t deadline = core_deadline(timeout_ms);
    for (;;) {
        while (sh->rxoff < sh->rxlen) {
            size_t used;
            adbc_shellv2_frag fr;
            int r = adbc_shellv2_next(&fr, &used, &sh->demux, sh->rx + sh->rxoff,
                                      sh->rxlen - sh->rxoff);
            if (r < 0)
                return r;
            if (r == 0) {
                sh->rxoff += used;
                break;
            }
            if (fr.id == ADBC_SHELL_STDOUT || fr.id == ADBC_SHELL_STDERR) {
                /* Hand out at most len bytes; the rest stays for next time. */
                if (fr.len > len) {
                    adbc_shellv2_unread(&sh->demux, fr.len - len);
                    used -= fr.len - len;
                    fr.len = len;
                }
                sh->rxoff += used;
                if (fr.len == 0)
                    continue;
                memcpy(buf, fr.data, fr.len);
                *fd = fr.id;
                return (ssize_t)fr.len;
            }
            sh->rxoff += used;
            /* adbd sends the status as the packet's one byte (and adb reads
             * the first byte); an empty exit packet carries none. */
            if (fr.id == ADBC_SHELL_EXIT && fr.len > 0)
                sh->exit_code = fr.data[0];
            /* stdin echo, close-stdin and window-size from the device: ignored */
        }
        if (sh->rxoff == sh->rxlen)
            sh->rxoff = sh->rxlen = 0;
        ssize_t n = adbc_stream_read(sh->st, sh->rx + sh->rxlen, RX_BUF - sh->rxlen,
                                     core_remaining(deadline));
        if (n < 0)
            return n;
        if (n == 0) {
            sh->ended = 1;
            return adbc_shellv2_finish(&sh->demux);
        }
        sh->rxlen += (size_t)n;
    }
}

static int write_packet(adbc_shell *sh, int id, const void *buf, size_t len, int64_t deadline)
{
    uint8_t hdr[ADBC_SHELLV2_HEADER];
    int rc = adbc_shellv2_header(hdr, id, (uint32_t)len);
    if (rc == 0)
        rc = adbc_stream_write(sh->st, hdr, sizeof hdr, core_remaining(deadline));
    if (rc == 0 && len)
        rc = adbc_stream_write(sh->st, buf, len, core_remaining(deadline));
    return rc;
}

int adbc_shell_write(adbc_shell *sh, const void *buf, size_t len, int timeout_ms)
{
    if (!sh || (!buf && len))
        return core_null(__func__, !sh ? "the shell" : "buf");
    if (!sh->v2)
        return adbc_stream_write(sh->st, buf, len, timeout_ms);
    int64_t deadline = core_deadline(timeout_ms);
    const uint8_t *p = buf;
    while (len > 0) {
        size_t n = len < STDIN_CHUNK ? len : STDIN_CHUNK;
        int rc = write_packet(sh, ADBC_SHELL_STDIN, p, n, deadline);
        if (rc < 0)
            return rc;
        p += n;
        len -= n;
    }
    return 0;
}

int adbc_shell_close_stdin(adbc_shell *sh, int timeout_ms)
{
    if (!sh)
        return core_null(__func__, "the shell");
    if (!sh->v2)
        return core_fail(ADBC_EUNSUPPORTED,
                         "closing stdin needs shell v2; with shell v1 or exec, close the stream");
    return write_packet(sh, ADBC_SHELL_CLOSE_STDIN, NULL, 0, core_deadline(timeout_ms));
}

int adbc_shell_resize(adbc_shell *sh, unsigned rows, unsigned cols, unsigned xpixels,
                      unsigned ypixels, int timeout_ms)
{
    if (!sh)
        return core_null(__func__, "the shell");
    if (!sh->v2)
        return core_fail(ADBC_EUNSUPPORTED, "window size changes need shell v2");
    char msg[64];
    int n = snprintf(msg, sizeof msg, "%ux%u,%ux%u", rows, cols, xpixels, ypixels);
    return write_packet(sh, ADBC_SHELL_WINDOW_SIZE, msg, (size_t)n, core_deadline(timeout_ms));
}

int adbc_shell_exit_code(const adbc_shell *sh)
{
    if (!sh)
        return -1;
    return sh->exit_code;
}

int adbc_shell_is_v2(const adbc_shell *sh)
{
    if (!sh)
        return 0;
    return sh->v2;
}

void adbc_shell_close(adbc_shell *sh)
{
    if (!sh)
        return;
    adbc_stream_close(sh->st);
    core_free(sh->rx);
    core_free(sh);
}

void adbc_run_result_clear(adbc_run_result *res)
{
    if (!res)
        return;
    core_free(res->out);
    core_free(res->err);
    memset(res, 0, sizeof *res);
}

int adbc_run(adbc_run_result *res, adbc_conn *c, adbc_shell_mode mode, const char *command,
             const void *stdin_data, size_t stdin_len, size_t max_output, int timeout_ms)
{
    if (!res)
        return core_fail(ADBC_EINVAL, "adbc_run: the result pointer is NULL");
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    if (!c || !command)
        return core_fail(ADBC_EINVAL, "adbc_run: the %s is NULL",
                         !c ? "connection" : "command");
    if (!max_output)
        max_output = 64u * 1024 * 1024;
    int64_t deadline = core_deadline(timeout_ms);
    adbc_shell_opts o = {.size = sizeof o, .mode = mode};
    adbc_shell *sh;
    int rc = adbc_shell_open(&sh, c, command, &o, core_remaining(deadline));
    if (rc < 0)
        return rc;
    if (stdin_data && stdin_len)
        rc = adbc_shell_write(sh, stdin_data, stdin_len, core_remaining(deadline));
    if (rc == 0 && sh->v2)
        rc = adbc_shell_close_stdin(sh, core_remaining(deadline));
    /* A quick command may finish and the device close the stream before
     * our stdin reaches it: its output and exit status are already here,
     * so read them rather than fail. A lost connection still fails below. */
    if (rc == ADBC_ECLOSED && adbc_conn_status(c) == 0)
        rc = 0;
    /* Read straight into the output buffers: stdout in place, and a v2
     * stderr packet moved over to its own. */
    core_buf out = {0}, err = {0};
    while (rc == 0) {
        if (out.cap - out.len < 4096 + 1 && core_buf_reserve(&out, 4096) < 0) {
            rc = core_fail(ADBC_ENOMEM, "out of memory collecting command output");
            break;
        }
        size_t want = out.cap - out.len - 1, room = max_output - out.len - err.len;
        if (want > RX_BUF)
            want = RX_BUF;
        if (want > room + 1)
            want = room + 1; /* one byte past the limit tells it was passed */
        int fd;
        ssize_t n = adbc_shell_read(sh, &fd, out.p + out.len, want, core_remaining(deadline));
        if (n < 0) {
            rc = (int)n;
            if (rc == ADBC_ETIMEDOUT)
                rc = core_fail(ADBC_ETIMEDOUT, "command \"%.80s\" did not finish within %d ms",
                               command ? command : "", timeout_ms);
            break;
        }
        if (n == 0)
            break;
        if (out.len + err.len + (size_t)n > max_output) {
            rc = core_fail(ADBC_EIO, "command output exceeded the %zu-byte limit", max_output);
            break;
        }
        if (fd == 2) {
            core_buf_add(&err, out.p + out.len, (size_t)n);
            if (err.err)
                rc = core_fail(ADBC_ENOMEM, "out of memory collecting command output");
        } else {
            out.len += (size_t)n;
        }
    }
    if (out.p)
        out.p[out.len] = '\0';
    if (rc == 0) {
        res->exit_code = adbc_shell_exit_code(sh);
        /* Always hand back NUL-terminated (possibly empty) buffers. */
        size_t olen, elen;
        char *o, *e;
        rc = core_buf_take(&out, &o, &olen);
        if (rc == 0) {
            res->out = (uint8_t *)o;
            res->out_len = olen;
            rc = core_buf_take(&err, &e, &elen);
        }
        if (rc == 0) {
            res->err = (uint8_t *)e;
            res->err_len = elen;
        }
        if (rc < 0)
            rc = core_fail(ADBC_ENOMEM, "out of memory collecting command output");
        if (rc == 0 && sh->v2 && res->exit_code < 0)
            rc = core_fail(ADBC_EPROTO, "the shell v2 stream ended without an exit status");
    }
    core_buf_free(&out);
    core_buf_free(&err);
    adbc_shell_close(sh);
    if (rc < 0)
        adbc_run_result_clear(res);
    return rc;
}
