/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: the diagnostic command-line tool. Parses the global options,
 * picks the command, and owns the connection. */
#include "snap.h"

#include "adbc/devices.h"

#include <stdlib.h>
#include <string.h>
#include <signal.h>

const snap_cmd *const snap_tables[] = {snap_cmds_core, snap_cmds_sync,   snap_cmds_devices,
                                       snap_cmds_ui,   snap_cmds_act,    snap_cmds_screen,
                                       snap_cmds_apps, snap_cmds_pair,   snap_cmds_wait,
                                       snap_cmds_mdns,   snap_cmds_forward,
                                       snap_cmds_webviews, snap_cmds_session,
                                       snap_cmds_help};
const size_t snap_ntables = sizeof snap_tables / sizeof snap_tables[0];

void snap_usage_all(FILE *f)
{
    fprintf(f,
            "usage: adbc-snap [-s SERIAL | -t HOST:PORT] [--timeout SECONDS] [-q] [--no-session] COMMAND "
            "[ARGS...]\n\n"
            "Talks to adbd directly (no adb server). A SERIAL of the form HOST:PORT means TCP,\n"
            "emulator-N the emulator on 127.0.0.1:N+1, usb:PATH a USB port, fd:N a USB\n"
            "descriptor (termux-usb), NAME._adb-tls-connect._tcp an mDNS service, anything\n"
            "else a USB serial (else an mDNS instance); ANDROID_SERIAL is used when neither\n"
            "-s nor -t is given, and with neither the only device (USB or emulator).\n\n"
            "commands:\n");
    for (size_t t = 0; t < snap_ntables; t++)
        for (const snap_cmd *c = snap_tables[t]; c->name; c++)
            fprintf(f, "  %-34s %s\n", c->usage, c->help);
    fprintf(f, "\n`adbc-snap help COMMAND` or `adbc-snap COMMAND --help`: a command's options.\n"
               "With --json a command prints its result as JSON on stdout, and an error as\n"
               "{\"error\":{\"what\",\"code\",\"reason\",\"message\"},\"exit_status\":N} (exit\n"
               "status unchanged; the message also goes to stderr).\n");
}

const snap_cmd *snap_cmd_find(const char *name)
{
    for (size_t t = 0; t < snap_ntables; t++)
        for (const snap_cmd *c = snap_tables[t]; c->name; c++)
            if (strcmp(c->name, name) == 0)
                return c;
    if (snap_is_wait_cmd(name))
        return &snap_cmds_wait[0];
    return NULL;
}

/* Whether the command's arguments (argv[1..]) hold the option opt: among
 * the leading options only for commands whose arguments go to the device
 * (shell, exec), else anywhere before "--". */
static int has_opt(const char *name, int argc, char **argv, const char *opt)
{
    int passthrough = strcmp(name, "shell") == 0 || strcmp(name, "exec") == 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0 || (passthrough && argv[i][0] != '-'))
            break;
        if (strcmp(argv[i], opt) == 0)
            return 1;
    }
    return 0;
}

/* The timeout rule (docs/act.md): these commands are bounded operations,
 * with --timeout as a deadline for the whole call. The others are
 * transfers and streams (each wait for the device at most --timeout),
 * waits with their own -t, or serve until stopped (forward, reverse). */
static int bounded_cmd(const char *name)
{
    static const char *const names[] = {
        "info", "ls", "stat", "devices", "snapshot", "find", "tap", "tap-xy", "tap-grid",
        "grid", "type", "press", "swipe", "scroll", "long-press", "back", "home",
        "screenshot", "launch", "intent", "stop", "top", "uninstall", "getprop", "get-state",
        "get-serialno", NULL};
    for (int k = 0; names[k]; k++)
        if (strcmp(name, names[k]) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    snap_ctx ctx = {.timeout_ms = 30000, .stream_timeout_ms = -1, .argv0 = argv[0]};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-s") == 0 || strcmp(a, "-t") == 0) && i + 1 < argc) {
            if (a[1] == 's')
                ctx.serial = argv[++i];
            else
                ctx.target = argv[++i];
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            if (snap_seconds(argv[++i], 86400, &ctx.timeout_ms) < 0) {
                fprintf(stderr, "adbc-snap: --timeout takes seconds, a number with 0 < S <= "
                                "86400 (not \"%s\")\n",
                        argv[i]);
                return SNAP_EXIT_USAGE;
            }
            ctx.stream_timeout_ms = ctx.timeout_ms;
            ctx.timeout_set = 1;
        } else if (strcmp(a, "-q") == 0) {
            ctx.quiet = 1;
        } else if (strcmp(a, "--no-session") == 0) {
            ctx.no_session = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            snap_usage_all(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("adbc-snap %s\n", ADBC_VERSION_STRING);
            return 0;
        } else {
            fprintf(stderr, "adbc-snap: unknown option %s (see adbc-snap --help)\n", a);
            return SNAP_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        snap_usage_all(stderr);
        return SNAP_EXIT_USAGE;
    }
    if (!ctx.target)
        ctx.serial = adbc_device_serial(ctx.serial);
    const snap_cmd *cmd = snap_cmd_find(argv[i]);
    if (!cmd) {
        fprintf(stderr, "adbc-snap: unknown command \"%s\" (see adbc-snap --help)\n", argv[i]);
        return SNAP_EXIT_USAGE;
    }
    if (has_opt(cmd->name, argc - i, argv + i, "--help"))
        return snap_help_show(cmd);
    snap_json_set(has_opt(cmd->name, argc - i, argv + i, "--json"));
    if (snap_signals_start() != 0)
        fprintf(stderr, "adbc-snap: cannot watch for signals: an interrupt will not clean up\n");
    int bounded = bounded_cmd(cmd->name);
    if (bounded && snap_deadline_start(ctx.timeout_ms) != 0)
        fprintf(stderr, "adbc-snap: cannot start the --timeout watchdog\n");
    int rc = cmd->run(&ctx, argc - i, argv + i);
    int expired = bounded && snap_deadline_stop();
    snap_signals_watch(NULL);
    adbc_conn_close(ctx.conn);
    adbc_keyring_free(ctx.session_keys);
    int sig = snap_signal_received();
    if (sig) {
        fprintf(stderr, "adbc-snap: stopped by signal %d (%s)\n", sig, strsignal(sig));
        rc = 128 + sig;
    }
    if (expired && rc != 0 && !sig) {
        fprintf(stderr, "adbc-snap: %s did not finish within --timeout %.1f s\n", cmd->name,
                ctx.timeout_ms / 1000.0);
        rc = SNAP_EXIT_FAIL;
    }
    /* A failure that printed no JSON of its own still gets one document. */
    if (rc != 0)
        snap_json_error(cmd->name, 0, "failed (the cause is on stderr)", NULL, rc);
    return rc;
}
