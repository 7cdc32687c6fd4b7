/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap connect, disconnect, keygen, version: adb's host commands.
 *
 * connect/disconnect keep the remembered TCP devices (adbc_remembered_*,
 * a per-user file: adbc has no server to hold transports), which `devices`
 * lists and the selection rule counts: with one device remembered and no
 * other, it is the default, as the one connected device is with adb. */
#include "snap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/devices.h"

static int cmd_connect(snap_ctx *ctx, int argc, char **argv);
static int cmd_disconnect(snap_ctx *ctx, int argc, char **argv);
static int cmd_keygen(snap_ctx *ctx, int argc, char **argv);
static int cmd_version(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_host[] = {
    {"connect", cmd_connect, "connect HOST[:PORT]",
     "remember a TCP device (port 5555 by default): listed, and the default when alone"},
    {"disconnect", cmd_disconnect, "disconnect [HOST[:PORT]]",
     "forget a remembered TCP device, or all of them"},
    {"keygen", cmd_keygen, "keygen FILE", "write a new adb key to FILE and FILE.pub"},
    {"version", cmd_version, "version",
     "adb's version line (1.0.41), adbc-snap's and adbc's version, where it is installed"},
    {NULL, NULL, NULL, NULL},
};

/* HOST[:PORT] as adb completes it: a missing port is 5555 ("[v6]" too). */
static int with_port(const char *arg, char *buf, size_t n)
{
    const char *colon = strrchr(arg, ':');
    const char *bracket = strrchr(arg, ']');
    int has_port = colon && (!bracket || colon > bracket) &&
                   (arg[0] == '[' || strchr(arg, ':') == colon);
    int w = has_port ? snprintf(buf, n, "%s", arg) : snprintf(buf, n, "%s:5555", arg);
    if (w < 0 || (size_t)w >= n || !*arg)
        return -1;
    return adbc_device_is_tcp(buf) ? 0 : -1;
}

static int cmd_connect(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_host[0];
    if (argc != 2)
        return snap_usage(self, "give the device's HOST[:PORT]");
    char addr[300];
    if (with_port(argv[1], addr, sizeof addr) < 0)
        return snap_usage(self, "expected HOST[:PORT] or [IPv6]:PORT");
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (ctx->timeout_ms < o.timeout_ms)
        o.timeout_ms = ctx->timeout_ms;
    o.remembered = 0;
    adbc_device_entry e;
    int rc = adbc_device_find(&e, addr, &o);
    if (rc < 0)
        return snap_fail(addr, rc);
    /* As adb: a device that answers is kept even when it asks for the key
     * prompt first (it is listed "unauthorized" until accepted); one that
     * does not answer at all is not. */
    if (e.error && e.error != ADBC_EUNAUTHORIZED)
        return snap_error(SNAP_EXIT_FAIL, NULL, "failed to connect to '%s': %s", addr,
                          e.message[0] ? e.message : adbc_strerror(e.error));
    rc = adbc_remembered_add(addr);
    if (rc < 0)
        return snap_fail("connect", rc);
    if (e.error == ADBC_EUNAUTHORIZED) {
        printf("failed to authenticate to %s\n", addr);
        fflush(stdout);
        if (!ctx->quiet)
            fprintf(stderr, "adbc-snap: %s is remembered; %s\n", addr, e.message);
        return 0;
    }
    printf("%s %s\n", rc == 1 ? "already connected to" : "connected to", addr);
    return 0;
}

static int cmd_disconnect(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    const snap_cmd *self = &snap_cmds_host[1];
    if (argc > 2)
        return snap_usage(self, "takes one HOST[:PORT] at most");
    if (argc == 1) {
        int rc = adbc_remembered_remove(NULL);
        if (rc < 0)
            return snap_fail("disconnect", rc);
        printf("disconnected everything\n");
        return 0;
    }
    char addr[300];
    if (with_port(argv[1], addr, sizeof addr) < 0)
        return snap_usage(self, "expected HOST[:PORT] or [IPv6]:PORT");
    int rc = adbc_remembered_remove(addr);
    if (rc == ADBC_ENOTFOUND)
        return snap_error(SNAP_EXIT_FAIL, NULL, "no such device '%s' (`adbc-snap devices` "
                                                "lists the remembered ones)",
                          addr);
    if (rc < 0)
        return snap_fail("disconnect", rc);
    printf("disconnected %s\n", addr);
    return 0;
}

static int cmd_keygen(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    if (argc != 2 || argv[1][0] == '-')
        return snap_usage(&snap_cmds_host[2], "give the FILE to write (FILE.pub beside it)");
    adbc_key *k;
    int rc = adbc_key_generate(&k, 2048);
    if (rc < 0)
        return snap_fail("keygen", rc);
    rc = adbc_key_save(k, argv[1]);
    adbc_key_free(k);
    if (rc < 0)
        return snap_fail(argv[1], rc);
    return 0;
}

static int cmd_version(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    (void)argv;
    if (argc != 1)
        return snap_usage(&snap_cmds_host[3], "takes no arguments");
    const char *lib;
    adbc_version(&lib);
    /* adb's first line, which tools parse for the protocol version adbc-snap
     * speaks (adb's 1.0.41: adb_client's ADB_SERVER_VERSION 41), then
     * adbc's own. */
    printf("Android Debug Bridge version 1.0.41\n");
    printf("Version %s (adbc-snap; adbc %s: the adb wire protocol, no adb server)\n",
           ADBC_VERSION_STRING, lib);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        printf("Installed as %s\n", self);
    }
    return 0;
}
