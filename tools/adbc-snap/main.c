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
                                       snap_cmds_apps, snap_cmds_device, snap_cmds_logcat, snap_cmds_admin, snap_cmds_debug, snap_cmds_emu, snap_cmds_host, snap_cmds_pair,   snap_cmds_wait,
                                       snap_cmds_mdns,   snap_cmds_forward,
                                       snap_cmds_webviews, snap_cmds_session, snap_cmds_server, snap_cmds_agent,
                                       snap_cmds_farm,
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
        "get-serialno", "apps", "open-url", "screen-info", "rotate", "crashlog", "shade", NULL};
    for (int k = 0; names[k]; k++)
        if (strcmp(name, names[k]) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    snap_globals g;
    int bad = 0;
    int i = snap_globals_parse(argc, argv, &g, &bad);
    switch (i) {
    case SNAP_G_HELP:
        snap_usage_all(stdout);
        return 0;
    case SNAP_G_VERSION:
        printf("adbc-snap %s\n", ADBC_VERSION_STRING);
        return 0;
    case SNAP_G_BAD_TIMEOUT:
        fprintf(stderr, "adbc-snap: --timeout takes seconds, a number with 0 < S <= 86400 (not "
                        "\"%s\")\n",
                argv[bad]);
        return SNAP_EXIT_USAGE;
    case SNAP_G_UNKNOWN:
        fprintf(stderr, "adbc-snap: unknown option %s (see adbc-snap --help)\n", argv[bad]);
        return SNAP_EXIT_USAGE;
    case SNAP_G_CONFLICT:
        fprintf(stderr, "adbc-snap: -s and -t both name the device: give one of them (-t "
                        "HOST:PORT is the same as -s HOST:PORT)\n");
        return SNAP_EXIT_USAGE;
    case SNAP_G_NO_COMMAND:
        snap_usage_all(stderr);
        return SNAP_EXIT_USAGE;
    default: break;
    }
    snap_ctx ctx = {.timeout_ms = g.timeout_ms, .stream_timeout_ms = g.stream_timeout_ms,
                    .timeout_set = g.timeout_set, .quiet = g.quiet, .no_session = g.no_session,
                    .serial = g.serial, .target = g.target, .argv0 = argv[0]};
    if (!ctx.target)
        ctx.serial = adbc_device_serial(ctx.serial);
    const snap_cmd *cmd = snap_cmd_find(argv[i]);
    if (!cmd) {
        fprintf(stderr, "adbc-snap: unknown command \"%s\" (see adbc-snap --help)\n", argv[i]);
        return SNAP_EXIT_USAGE;
    }
    if (snap_has_opt(cmd->name, argc - i, argv + i, "--help"))
        return snap_help_show(cmd);
    snap_adb_env_check(&ctx);
    snap_json_set(snap_has_opt(cmd->name, argc - i, argv + i, "--json"));
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
