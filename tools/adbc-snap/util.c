/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap helpers: device selection, errors, argument joining. */
#include "snap.h"
#include "ops_core.h"

#include "adbc/devices.h"
#include "adbc/forward.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

int snap_error(int status, const char *what, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (what)
        fprintf(stderr, "adbc-snap: %s: %s\n", what, msg);
    else
        fprintf(stderr, "adbc-snap: %s\n", msg);
    snap_json_error(what, 0, msg, NULL, status);
    return status;
}

static void on_prompt(void *user, const char *message)
{
    (void)user;
    fprintf(stderr, "adbc-snap: %s\n", message);
}

int snap_connect(snap_ctx *ctx, adbc_conn **out)
{
    if (ctx->conn) {
        *out = ctx->conn;
        return 0;
    }
    /* -t HOST:PORT, else the selection rule (adbc_device_connect): -s or
     * ANDROID_SERIAL (already in ctx->serial), else the only device. */
    const char *sel = ctx->target ? ctx->target : ctx->serial;
    if (snap_session_connect(ctx, &ctx->conn) == 0) {
        ctx->via_session = 1;
        snap_signals_watch(ctx->conn);
        *out = ctx->conn;
        return 0;
    }
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.on_auth_prompt = on_prompt;
    if (ctx->window)
        o.window = ctx->window;
    if (ctx->max_payload)
        o.max_payload = ctx->max_payload;
    if (ctx->send_ahead)
        o.send_ahead = ctx->send_ahead;
    if (ctx->reverse)
        adbc_reverse_conn_opts(&o, ctx->reverse);
    if (ctx->timeout_ms < o.connect_timeout_ms)
        o.connect_timeout_ms = ctx->timeout_ms;
    /* --timeout also bounds the wait for the user at the key prompt. */
    if (ctx->timeout_ms < o.auth_timeout_ms)
        o.auth_timeout_ms = ctx->timeout_ms;
    int rc = adbc_device_connect(&ctx->conn, sel, &o);
    if (rc == ADBC_ENOTFOUND && !sel) {
        snap_json_error("connect", rc,
                        "no device found: connect one over USB with USB debugging on, give "
                        "-t HOST:PORT, or set ANDROID_SERIAL",
                        NULL, SNAP_EXIT_FAIL);
        fprintf(stderr,
                "adbc-snap: no device found. Connect one of:\n"
                "  - a USB device with USB debugging on (Settings > Developer options); on "
                "Linux the\n    device node needs a udev rule (see docs/usb.md); "
                "`adbc-snap devices` lists what is found\n"
                "  - an emulator (found on 127.0.0.1 ports 5555-5585, as adb finds it)\n"
                "  - a device with adbd on TCP: `adbc-snap connect HOST:PORT` remembers it, or\n"
                "    give -t HOST:PORT (wireless debugging, or `adbc-snap tcpip 5555` over USB)\n"
                "  - set ANDROID_SERIAL=SERIAL or HOST:PORT\n");
        return rc;
    }
    if (rc == ADBC_ENOTFOUND && sel) {
        snap_error(SNAP_EXIT_FAIL, NULL, "device '%s' not found: %s", sel, adbc_last_error());
        return rc;
    }
    if (rc < 0) {
        snap_fail(sel ? sel : "device", rc);
        return rc;
    }
    snap_signals_watch(ctx->conn);
    *out = ctx->conn;
    return 0;
}

int snap_fail_status(const char *what, int rc, int status)
{
    const char *msg = adbc_last_error();
    if (!*msg)
        msg = adbc_strerror(rc);
    fprintf(stderr, "adbc-snap: %s: %s\n", what, msg);
    snap_json_error(what, rc, msg, NULL, status);
    return status;
}

int snap_fail(const char *what, int rc)
{
    return snap_fail_status(what, rc, SNAP_EXIT_FAIL);
}

int snap_usage(const snap_cmd *cmd, const char *msg)
{
    fprintf(stderr, "adbc-snap %s: %s\nusage: adbc-snap %s\n", cmd->name, msg, cmd->usage);
    snap_json_error(cmd->name, 0, msg, cmd->usage, SNAP_EXIT_USAGE);
    return SNAP_EXIT_USAGE;
}

/* The length of the terminal control sequence at p (p[0] is ESC, or the
 * first byte of a C1 introducer whose UTF-8 is 2 bytes, c1 its code): CSI
 * runs to its final byte (0x40..0x7E); OSC, DCS, SOS, PM and APC strings
 * to BEL or ST (ESC \ or U+009C); other escapes are two bytes. Cut at the
 * end of the string when unterminated. */
static size_t escape_len(const unsigned char *p, size_t n, int c1)
{
    size_t i;
    int kind;
    if (c1) {
        i = 2;
        kind = c1 == 0x9b ? '[' : (c1 == 0x9d || c1 == 0x90 || c1 == 0x98 || c1 == 0x9e ||
                                   c1 == 0x9f) ? ']' : 0;
    } else {
        if (n < 2)
            return n;
        i = 2;
        kind = p[1] == '[' ? '[' : (p[1] == ']' || p[1] == 'P' || p[1] == 'X' || p[1] == '^' ||
                                    p[1] == '_') ? ']' : 0;
    }
    if (kind == '[') {
        while (i < n && !(p[i] >= 0x40 && p[i] <= 0x7e))
            i++;
        return i < n ? i + 1 : n;
    }
    if (kind == ']') {
        for (; i < n; i++) {
            if (p[i] == 0x07)
                return i + 1;
            if (p[i] == 0x1b && i + 1 < n && p[i + 1] == '\\')
                return i + 2;
            if (p[i] == 0xc2 && i + 1 < n && p[i + 1] == 0x9c)
                return i + 2;
        }
        return n;
    }
    return i;
}

const char *snap_text_safe(const char *s, char *buf, size_t n)
{
    if (!buf || n == 0)
        return "";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p), o = 0;
    for (size_t i = 0; i < len && o + 1 < n;) {
        size_t l = ops_utf8_len(p + i, len - i);
        if (p[i] == 0x1b) { /* an escape sequence, whole */
            i += escape_len(p + i, len - i, 0);
            continue;
        }
        if (l == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) { /* C1, U+0080..U+009F */
            i += escape_len(p + i, len - i, p[i + 1]);
            continue;
        }
        if (l == 1 && (p[i] == '\n' || p[i] == '\t' || p[i] == '\r')) {
            buf[o++] = ' ';
            i++;
            continue;
        }
        if (l == 0 || (l == 1 && (p[i] < 0x20 || p[i] == 0x7f))) {
            i++; /* other C0 controls, DEL, and bytes that are not UTF-8 (raw C1 too) */
            continue;
        }
        if (o + l >= n)
            break;
        memcpy(buf + o, p + i, l);
        o += l;
        i += l;
    }
    buf[o] = '\0';
    return buf;
}

const char *snap_tty_safe(const char *s, char *buf, size_t n)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(1);
    if (!tty || !s || n == 0)
        return s;
    return snap_text_safe(s, buf, n);
}

const char *snap_net_safe(const char *s, char *buf, size_t n)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p), o = 0;
    for (size_t i = 0; i < len && o + 1 < n;) {
        size_t l = ops_utf8_len(p + i, len - i);
        /* C1 controls (U+0080..U+009F) are C2 80..C2 9F. */
        int ctl = l == 0 || (l == 1 && (p[i] < 0x20 || p[i] == 0x7f)) ||
                  (l == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0);
        if (ctl) {
            buf[o++] = '?';
            i += l ? l : 1;
            continue;
        }
        if (o + l >= n)
            break;
        memcpy(buf + o, p + i, l);
        o += l;
        i += l;
    }
    if (n)
        buf[o] = '\0';
    return buf;
}
