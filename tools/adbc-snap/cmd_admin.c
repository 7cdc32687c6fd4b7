/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap root, unroot, reboot, remount, tcpip, usb, disable-verity,
 * enable-verity: adbd's administration services, asked as adb asks them
 * (one stream, "root:", "reboot:bootloader", "tcpip:5555"..., whose text is
 * printed as it is). root, unroot, tcpip and usb restart adbd when they
 * answer "restarting ...", and reboot takes the device away: these then
 * wait for the connection to end, and root/unroot for the device to answer
 * again (within --timeout), so the next command finds it ready. They always
 * connect directly (a session's server would hold the old connection). */
#include "snap.h"
#include "write_all.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "ops_core.h"

static int cmd_admin(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_admin[] = {
    {"root", cmd_admin, "root", "restart adbd with root permissions (userdebug builds)"},
    {"unroot", cmd_admin, "unroot", "restart adbd without root permissions"},
    {"reboot", cmd_admin, "reboot [bootloader|recovery|sideload|sideload-auto-reboot]",
     "reboot the device, normally or into the bootloader, recovery or sideload"},
    {"remount", cmd_admin, "remount [-R]", "remount /system, /vendor... read-write (as root)"},
    {"tcpip", cmd_admin, "tcpip PORT", "restart adbd listening on TCP PORT"},
    {"usb", cmd_admin, "usb", "restart adbd listening on USB"},
    {"disable-verity", cmd_admin, "disable-verity", "disable dm-verity (userdebug, as root)"},
    {"enable-verity", cmd_admin, "enable-verity", "re-enable dm-verity (userdebug, as root)"},
    {NULL, NULL, NULL, NULL},
};

static const snap_cmd *self_of(const char *name)
{
    for (const snap_cmd *c = snap_cmds_admin; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return &snap_cmds_admin[0];
}

/* The service adb opens for the command, into svc; NULL when the
 * arguments are wrong (msg says why). */
static const char *service_for(int argc, char **argv, char *svc, size_t n, const char **msg)
{
    const char *name = argv[0];
    if (strcmp(name, "reboot") == 0) {
        static const char *const targets[] = {"bootloader", "recovery", "sideload",
                                              "sideload-auto-reboot", "fastboot", NULL};
        if (argc > 2) {
            *msg = "takes one TARGET at most";
            return NULL;
        }
        if (argc == 2) {
            int ok = 0;
            for (int k = 0; targets[k]; k++)
                ok |= strcmp(argv[1], targets[k]) == 0;
            if (!ok) {
                *msg = "TARGET is bootloader, recovery, sideload, sideload-auto-reboot or "
                       "fastboot";
                return NULL;
            }
        }
        snprintf(svc, n, "reboot:%s", argc == 2 ? argv[1] : "");
        return svc;
    }
    if (strcmp(name, "tcpip") == 0) {
        long port;
        char *end;
        if (argc != 2) {
            *msg = "give the PORT adbd is to listen on (5555 is the usual one)";
            return NULL;
        }
        port = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end || port < 1 || port > 65535) {
            *msg = "PORT is a number from 1 to 65535";
            return NULL;
        }
        snprintf(svc, n, "tcpip:%ld", port);
        return svc;
    }
    if (strcmp(name, "remount") == 0) {
        if (argc > 2 || (argc == 2 && strcmp(argv[1], "-R") != 0)) {
            *msg = "takes -R (reboot when needed) only";
            return NULL;
        }
        snprintf(svc, n, "remount:%s", argc == 2 ? argv[1] : "");
        return svc;
    }
    if (argc != 1) {
        *msg = "takes no arguments";
        return NULL;
    }
    snprintf(svc, n, "%s:", name);
    return svc;
}

/* Wait until the device has closed our connection (adbd restarting, the
 * device rebooting); 0, or -1 when it is still there at the deadline. */
static int wait_gone(adbc_conn *c, int64_t deadline)
{
    while (adbc_conn_status(c) == 0) {
        if (ops_now_ms() >= deadline || snap_signal_received())
            return -1;
        usleep(50 * 1000);
    }
    return 0;
}

static int cmd_admin(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = self_of(argv[0]);
    char svc[64];
    const char *msg = NULL;
    if (!service_for(argc, argv, svc, sizeof svc, &msg))
        return snap_usage(self, msg);
    ctx->no_session = 1;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    int64_t deadline = ops_now_ms() + ctx->timeout_ms;
    adbc_stream *s;
    int rc = adbc_stream_open(&s, c, svc, ctx->timeout_ms);
    if (rc == ADBC_EREFUSED)
        return snap_error(SNAP_EXIT_FAIL, argv[0],
                          "the device refused the %s service (adbd answers it on "
                          "userdebug and eng builds of Android, not in recovery or on "
                          "Linux boards)",
                          svc);
    if (rc < 0)
        return snap_fail(argv[0], rc);
    /* adb reads the answer whole (it is a line or two) and prints it. */
    char text[4096];
    size_t len = 0;
    for (;;) {
        int64_t left = deadline - ops_now_ms();
        ssize_t n = left > 0 ? adbc_stream_read(s, text + len, sizeof text - 1 - len, (int)left)
                             : ADBC_ETIMEDOUT;
        if (n == 0 || n == ADBC_ECLOSED)
            break;
        if (n < 0) {
            adbc_stream_close(s);
            return snap_fail(argv[0], (int)n);
        }
        len += (size_t)n;
        if (len == sizeof text - 1)
            break;
    }
    adbc_stream_close(s);
    text[len] = '\0';
    snap_write_all(1, text, len);
    int restarts = strstr(text, "restarting") != NULL;
    int reboots = strcmp(argv[0], "reboot") == 0;
    if (!restarts && !reboots)
        return 0;
    if (wait_gone(c, deadline) != 0) {
        if (reboots)
            return 0; /* the device took the request; it goes when it goes */
        return snap_error(SNAP_EXIT_FAIL, argv[0],
                          "adbd said it restarts, but the connection was still open after "
                          "--timeout %.0f s",
                          ctx->timeout_ms / 1000.0);
    }
    if (strcmp(argv[0], "root") != 0 && strcmp(argv[0], "unroot") != 0)
        return 0; /* tcpip/usb: adbd is now elsewhere; reboot: it takes its time */
    /* root/unroot: the same device comes back on the same transport. */
    const char *sel = ctx->target ? ctx->target : ctx->serial;
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    int left = (int)(deadline - ops_now_ms());
    rc = adbc_device_wait(NULL, sel, ADBC_WAIT_ANY, ADBC_DEV_DEVICE, left > 0 ? left : 0, &o);
    if (rc < 0)
        return snap_error(SNAP_EXIT_FAIL, argv[0],
                          "adbd restarted but did not come back within --timeout: %s",
                          adbc_last_error());
    return 0;
}
