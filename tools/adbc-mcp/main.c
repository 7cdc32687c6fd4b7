/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp: a Model Context Protocol server (stdio) that gives an agent one
 * Android device through adbc, with a safety model: no shell unless
 * --allow-shell, emulators allowed, physical devices only by allowlist,
 * every call bounded in time. */
#include "mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "ops_config.h"

/* A line longer than this is refused (and skipped) rather than buffered. */
#define MCP_MAX_LINE (16u << 20)

static void usage(FILE *f)
{
    fputs("usage: adbc-mcp [options]\n"
          "\n"
          "A Model Context Protocol server on stdin/stdout that lets an agent see and\n"
          "drive one Android device: snapshots with refs, taps, typing, keys, swipes,\n"
          "screenshots, apps, logcat. No adb server is needed.\n"
          "\n"
          "options:\n"
          "  --config FILE      configuration (default $XDG_CONFIG_HOME/adbc/mcp.toml,\n"
          "                     else ~/.config/adbc/mcp.toml; missing is fine)\n"
          "  -t, --target HOST:PORT  also list this TCP device (repeatable)\n"
          "  -s, --serial SERIAL     the device to use (else $ANDROID_SERIAL, else\n"
          "                     [device] default, else the only one connected: USB\n"
          "                     devices, emulators found on 127.0.0.1:5555-5585 and\n"
          "                     the TCP targets)\n"
          "  --no-usb           do not look for USB devices\n"
          "  --allow-shell      add a 'shell' tool that runs any command on the device\n"
          "                     (each command is logged to stderr); off by default\n"
          "  --check-config     read the configuration, report errors, exit\n"
          "  -h, --help         this text;  --version  the version\n"
          "\n"
          "safety: emulators (the device says ro.kernel.qemu or ro.boot.qemu = 1; an\n"
          "emulator-N name alone is not enough) are always allowed; a physical device\n"
          "only when its serial is listed in [device] allowlist = [\"SERIAL\"] in the\n"
          "configuration. Every call has a timeout ([timeouts] call_ms). Logs go to\n"
          "stderr; stdout is protocol only.\n"
          "\n"
          "add to Claude Code:  claude mcp add adbc -- adbc-mcp\n"
          "more: docs/mcp.md\n",
          f);
}

static int add_target(mcp_config *cfg, const char *t)
{
    char **v = realloc(cfg->targets, (cfg->ntargets + 1) * sizeof(*v));
    if (!v)
        return -1;
    cfg->targets = v;
    if (!(v[cfg->ntargets] = strdup(t)))
        return -1;
    cfg->ntargets++;
    return 0;
}

/* Read stdin line by line until EOF; each line is one message. */
static void serve(mcp_server *s)
{
    size_t cap = 65536, len = 0, scan = 0;
    char *buf = malloc(cap);
    int skipping = 0; /* inside an over-long line: drop bytes to its newline */
    if (!buf) {
        mcp_log("out of memory");
        return;
    }
    for (;;) {
        if (len == cap) {
            if (cap >= MCP_MAX_LINE) {
                if (!skipping)
                    rpc_error(s, NULL, -32600, "invalid request: message longer than %u MiB",
                              MCP_MAX_LINE >> 20);
                skipping = 1;
                len = scan = 0;
            } else {
                char *b = realloc(buf, cap * 2);
                if (!b) {
                    rpc_error(s, NULL, -32603, "out of memory reading a message");
                    skipping = 1;
                    len = scan = 0;
                } else {
                    buf = b;
                    cap *= 2;
                }
            }
        }
        ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        size_t start = 0;
        for (; scan < len; scan++) {
            if (buf[scan] != '\n')
                continue;
            if (!skipping) {
                size_t l = scan - start;
                if (l && buf[start + l - 1] == '\r')
                    l--;
                int blank = 1;
                for (size_t i = start; i < start + l && blank; i++)
                    blank = buf[i] == ' ' || buf[i] == '\t';
                if (!blank)
                    rpc_handle_line(s, buf + start, l);
            }
            skipping = 0;
            start = scan + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        scan -= start;
    }
    if (len && !skipping)
        rpc_handle_line(s, buf, len);
    free(buf);
}

int main(int argc, char **argv)
{
    mcp_server s;
    memset(&s, 0, sizeof(s));
    mcp_config_init(&s.cfg);
    const char *config = NULL, *serial = NULL;
    int no_usb = 0, check = 0;
    char **targets = calloc((size_t)argc, sizeof(*targets));
    size_t ntargets = 0;
    if (!targets)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(targets);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf(MCP_NAME " " MCP_VERSION "\n");
            free(targets);
            return 0;
        } else if (strcmp(a, "--config") == 0 && more) {
            config = argv[++i];
        } else if ((strcmp(a, "-t") == 0 || strcmp(a, "--target") == 0) && more) {
            targets[ntargets++] = argv[++i];
        } else if ((strcmp(a, "-s") == 0 || strcmp(a, "--serial") == 0) && more) {
            serial = argv[++i];
        } else if (strcmp(a, "--no-usb") == 0) {
            no_usb = 1;
        } else if (strcmp(a, "--allow-shell") == 0) {
            s.allow_shell = 1;
        } else if (strcmp(a, "--check-config") == 0) {
            check = 1;
        } else {
            fprintf(stderr, MCP_NAME ": %s '%s' (see --help)\n",
                    a[0] == '-' && !more ? "missing value or unknown option" : "unknown argument",
                    a);
            free(targets);
            return 2;
        }
    }
    char err[1024];
    int rc = 1;
    s.config_path = config ? strdup(config) : ops_cfg_path("mcp.toml");
    if (s.config_path &&
        mcp_config_load(&s.cfg, s.config_path, config != NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, MCP_NAME ": %s\n", err);
        rc = 2;
        goto out;
    }
    for (size_t i = 0; i < ntargets; i++)
        if (add_target(&s.cfg, targets[i]) != 0)
            goto out;
    /* The selection rule of every adbc tool: -s, then ANDROID_SERIAL, then
     * (here) the config's default, then the only device. */
    serial = adbc_device_serial(serial);
    if (serial) {
        free(s.cfg.default_serial);
        s.cfg.default_serial = strdup(serial);
    }
    if (no_usb)
        s.cfg.usb = 0;
    if (!s.cfg.screenshot_dir)
        s.cfg.screenshot_dir = strdup("./screenshots");
    s.uninstall = calloc(s.cfg.nuninstall + 1, sizeof *s.uninstall);
    if (!s.uninstall)
        goto out;
    for (size_t i = 0; i < s.cfg.nuninstall; i++) {
        if (!ops_android_name(s.cfg.uninstall[i])) {
            fprintf(stderr, MCP_NAME ": %s: [apps] uninstall: '%s' is not an Android package "
                            "name\n", s.config_path ? s.config_path : "config",
                    s.cfg.uninstall[i]);
            rc = 2;
            goto out;
        }
        s.uninstall[i] = s.cfg.uninstall[i];
    }
    for (size_t i = 0; i < s.cfg.nallow_tools; i++) {
        unsigned bit = ops_tools_optin(s.cfg.allow_tools[i]);
        if (!bit) {
            fprintf(stderr, MCP_NAME ": %s: [tools] allow: '%s' is not a tool that needs "
                            "allowing (termux_sms_send, termux_call, system_keys, intent_call, "
                            "intent_sms, intent_any)\n",
                    s.config_path ? s.config_path : "config", s.cfg.allow_tools[i]);
            rc = 2;
            goto out;
        }
        s.optin |= bit;
    }
    if (check) {
        printf("%s: ok (%zu allowed, %zu targets)\n", s.config_path ? s.config_path : "(none)",
               s.cfg.nallow, s.cfg.ntargets);
        rc = 0;
        goto out;
    }
    if (ops_tools_init() != 0)
        goto out;
    mcp_front(&s, &s.fe);

    /* stdout is the protocol: keep it private and send fd 1 to stderr, so
     * nothing printed by accident can corrupt the stream. Close-on-exec: a
     * program a tool runs (termux-api's commands) must not be able to write
     * an answer into the client's stream. */
    signal(SIGPIPE, SIG_IGN);
    fflush(stdout);
    s.out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (s.out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror(MCP_NAME ": dup");
        goto out;
    }
    pthread_mutex_init(&s.out_lock, NULL);
    pthread_mutex_init(&s.state_lock, NULL);
    if (devices_init(&s) != 0)
        goto out;
    pthread_mutex_init(&s.flight_lock, NULL);
    pthread_cond_init(&s.flight_cond, NULL);
    mcp_log("serving on stdio (%s; config %s; shell %s)", MCP_VERSION,
            s.config_path ? s.config_path : "none", s.allow_shell ? "ALLOWED" : "off");

    serve(&s);

    /* EOF: let running calls finish (each is bounded by its timeout). */
    pthread_mutex_lock(&s.flight_lock);
    while (s.inflight > 0)
        pthread_cond_wait(&s.flight_cond, &s.flight_lock);
    pthread_mutex_unlock(&s.flight_lock);
    rpc_join_done(&s);
    mcp_log("stdin closed: exiting");
    devices_free(&s);
    close(s.out_fd);
    rc = 0;
out:
    ops_tools_free();
    free(s.uninstall);
    mcp_config_free(&s.cfg);
    free(s.config_path);
    free(targets);
    return rc;
}
