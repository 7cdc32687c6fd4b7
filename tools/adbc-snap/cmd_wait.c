/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap wait-for-*, get-state, get-serialno: adb's commands about the
 * selected device itself, answered by the library's selection rule
 * (adbc_device_find, adbc_device_wait) without an adb server. */
#include "snap.h"

#include <stdlib.h>
#include <string.h>

#include "adbc/devices.h"

static int cmd_wait(snap_ctx *ctx, int argc, char **argv);
static int cmd_get_state(snap_ctx *ctx, int argc, char **argv);
static int cmd_get_serialno(snap_ctx *ctx, int argc, char **argv);
static int cmd_features(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_wait[] = {
    {"wait-for-device", cmd_wait, "wait-for-device [-t SECONDS]",
     "wait until the device is ready; also wait-for[-usb|-local|-any]-STATE (STATE: "
     "device, recovery, rescue, sideload, bootloader, disconnect)"},
    {"get-state", cmd_get_state, "get-state", "print the device's state (device, unauthorized, ...)"},
    {"get-serialno", cmd_get_serialno, "get-serialno", "print the selected device's serial"},
    {"features", cmd_features, "features",
     "print the device's features adbc-snap can use, one a line, as adb"},
    {NULL, NULL, NULL, NULL},
};

static const struct {
    const char *name;
    adbc_dev_state state;
} wait_states[] = {
    {"device", ADBC_DEV_DEVICE},     {"recovery", ADBC_DEV_RECOVERY},
    {"rescue", ADBC_DEV_RESCUE},     {"sideload", ADBC_DEV_SIDELOAD},
    {"bootloader", ADBC_DEV_BOOTLOADER}, {"disconnect", ADBC_DEV_UNKNOWN},
};

/* "wait-for[-TRANSPORT]-STATE", as adb parses it. */
static int parse_wait(const char *name, adbc_wait_transport *tr, adbc_dev_state *st)
{
    if (strncmp(name, "wait-for-", 9) != 0)
        return -1;
    const char *p = name + 9;
    *tr = ADBC_WAIT_ANY;
    if (strncmp(p, "usb-", 4) == 0) {
        *tr = ADBC_WAIT_USB;
        p += 4;
    } else if (strncmp(p, "local-", 6) == 0) {
        *tr = ADBC_WAIT_LOCAL;
        p += 6;
    } else if (strncmp(p, "any-", 4) == 0) {
        p += 4;
    }
    for (size_t i = 0; i < sizeof wait_states / sizeof wait_states[0]; i++) {
        if (strcmp(p, wait_states[i].name) == 0) {
            *st = wait_states[i].state;
            return 0;
        }
    }
    return -1;
}

int snap_is_wait_cmd(const char *name)
{
    adbc_wait_transport tr;
    adbc_dev_state st;
    return parse_wait(name, &tr, &st) == 0;
}

static const char *selected(const snap_ctx *ctx)
{
    return ctx->target ? ctx->target : ctx->serial;
}

static int cmd_wait(snap_ctx *ctx, int argc, char **argv)
{
    adbc_wait_transport tr;
    adbc_dev_state st;
    if (parse_wait(argv[0], &tr, &st) != 0)
        return snap_usage(&snap_cmds_wait[0],
                          "expected wait-for[-usb|-local|-any]-(device|recovery|rescue|"
                          "sideload|bootloader|disconnect)");
    int timeout_ms = ctx->timeout_set ? ctx->timeout_ms : -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "0") == 0)
                timeout_ms = 0; /* check once */
            else if (snap_seconds(argv[i], 86400, &timeout_ms) < 0)
                return snap_usage(&snap_cmds_wait[0], "-t takes seconds (0 to 86400)");
        } else {
            return snap_usage(&snap_cmds_wait[0], "unknown argument");
        }
    }
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (tr == ADBC_WAIT_LOCAL)
        o.usb = 0;
    int rc = adbc_device_wait(NULL, selected(ctx), tr, st, timeout_ms, &o);
    if (rc == 0 || rc == ADBC_ETIMEDOUT || rc == ADBC_EINVAL || !o.usb)
        return rc < 0 ? snap_fail(argv[0], rc) : 0;
    /* No USB on this machine: still wait for emulators and TCP devices. */
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: USB devices not listed: %s\n", adbc_last_error());
    o.usb = 0;
    rc = adbc_device_wait(NULL, selected(ctx), tr, st, timeout_ms, &o);
    return rc < 0 ? snap_fail(argv[0], rc) : 0;
}

static int find(snap_ctx *ctx, const char *cmd, adbc_device_entry *e)
{
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (ctx->timeout_ms < o.timeout_ms)
        o.timeout_ms = ctx->timeout_ms;
    int rc = adbc_device_find(e, selected(ctx), &o);
    if (rc == ADBC_ENOTFOUND && selected(ctx))
        return snap_error(SNAP_EXIT_FAIL, NULL, "device '%s' not found: %s", selected(ctx),
                          adbc_last_error());
    if (rc < 0)
        return snap_fail(cmd, rc);
    return 0;
}

/* adb's get-state answers only for a device it can use or name: an
 * unauthorized or offline one, or one it does not know, is an error (exit
 * 1) with adb's words first, then adbc's cause and remedy. */
static int cmd_get_state(snap_ctx *ctx, int argc, char **argv)
{
    if (argc != 1)
        return snap_usage(&snap_cmds_wait[1], "takes no arguments");
    adbc_device_entry e;
    if (find(ctx, argv[0], &e) != 0)
        return SNAP_EXIT_FAIL;
    if (!e.error && e.state != ADBC_DEV_UNKNOWN) {
        printf("%s\n", adbc_device_state_text(&e));
        return 0;
    }
    const char *msg = e.message[0] ? e.message : adbc_strerror(e.error);
    switch (e.error) {
    case ADBC_EUNAUTHORIZED:
        return snap_error(SNAP_EXIT_FAIL, NULL, "device unauthorized: %s", msg);
    case ADBC_EPERM:
        return snap_error(SNAP_EXIT_FAIL, NULL, "insufficient permissions for device %s: %s",
                          e.serial, msg);
    case ADBC_ETIMEDOUT:
    case ADBC_EOFFLINE:
    case ADBC_EBUSY:
        return snap_error(SNAP_EXIT_FAIL, NULL, "device offline: %s", msg);
    default:
        return snap_error(SNAP_EXIT_FAIL, NULL, "device '%s' not found: %s", e.serial, msg);
    }
}

static int cmd_get_serialno(snap_ctx *ctx, int argc, char **argv)
{
    if (argc != 1)
        return snap_usage(&snap_cmds_wait[2], "takes no arguments");
    adbc_device_entry e;
    if (find(ctx, argv[0], &e) != 0)
        return SNAP_EXIT_FAIL;
    printf("%s\n", e.serial);
    return 0;
}

/* adb's features: those of the device (its banner) that this adb can use,
 * one a line, as adb lists "the features common to both the adb client
 * and the device"; tools read them to decide on shell protocol v2,
 * stat_v2, abb_exec, sync v2 and its compression. The list is what the
 * library acts on (adbc_conn_has_feature's callers). */
static int cmd_features(snap_ctx *ctx, int argc, char **argv)
{
    static const char *const usable[] = {
        "shell_v2",   "cmd",           "stat_v2",           "ls_v2",           "fixed_push_mkdir",
        "abb_exec",   "delayed_ack",   "sendrecv_v2",       "sendrecv_v2_brotli",
        "sendrecv_v2_lz4", "sendrecv_v2_zstd", "sendrecv_v2_dry_run_send"};
    (void)argv;
    if (argc != 1)
        return snap_usage(&snap_cmds_wait[3], "takes no arguments");
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    const adbc_banner *b = adbc_conn_banner(c);
    for (size_t i = 0; b && i < b->nfeatures; i++)
        for (size_t k = 0; k < sizeof usable / sizeof *usable; k++)
            if (strcmp(b->features[i], usable[k]) == 0)
                printf("%s\n", b->features[i]);
    return 0;
}
