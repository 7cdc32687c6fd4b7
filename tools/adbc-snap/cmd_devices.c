/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap devices: what `adb devices [-l]` shows, without an adb server:
 * USB devices with an ADB (or fastboot) interface, then the TCP targets given
 * (arguments, -t, or a HOST:PORT serial), each with the state a short
 * handshake shows. */
#include "snap.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/devices.h"

static int cmd_devices(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_devices[] = {
    {"devices", cmd_devices, "devices [-l] [--json] [HOST:PORT...]",
     "list USB devices and TCP targets with their state (as adb devices)"},
    {NULL, NULL, NULL, NULL},
};

/* adb -l prints the model with anything but [A-Za-z0-9._-] as '_'. */
static void print_field(const char *key, const char *value, int sanitize)
{
    if (!value || !*value)
        return;
    printf(" %s", key);
    for (const char *p = value; *p; p++)
        putchar(!sanitize || isalnum((unsigned char)*p) || strchr("._-", *p) ? *p : '_');
}

static void print_json(const adbc_device_entry *l, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const adbc_device_entry *e = &l[i];
        printf("%s{\"serial\":", i ? "," : "");
        snap_json_str(stdout, e->serial);
        printf(",\"state\":");
        snap_json_str(stdout, adbc_device_state_text(e));
        printf(",\"transport\":");
        snap_json_str(stdout, e->transport);
        if (e->usb_path[0]) {
            printf(",\"usb\":");
            snap_json_str(stdout, e->usb_path);
            printf(",\"vendor_id\":\"%04x\",\"product_id\":\"%04x\"", e->vendor_id,
                   e->product_id);
        }
        printf(",\"product\":");
        snap_json_str(stdout, e->product);
        printf(",\"model\":");
        snap_json_str(stdout, e->model);
        printf(",\"device\":");
        snap_json_str(stdout, e->device);
        printf(",\"error\":");
        if (e->error)
            snap_json_str(stdout, e->message);
        else
            printf("null");
        printf("}");
    }
    printf("]\n");
}

static void print_text(const adbc_device_entry *l, size_t n, int lng)
{
    printf("List of devices attached\n");
    for (size_t i = 0; i < n; i++) {
        const adbc_device_entry *e = &l[i];
        if (!lng) {
            printf("%s\t%s\n", e->serial, adbc_device_state_text(e));
            continue;
        }
        printf("%-22s %s", e->serial, adbc_device_state_text(e));
        if (e->usb_path[0])
            printf(" usb:%s", e->usb_path);
        print_field("product:", e->product, 0);
        print_field("model:", e->model, 1);
        print_field("device:", e->device, 0);
        printf(" transport:%s\n", e->transport);
    }
    printf("\n");
}

static int cmd_devices(snap_ctx *ctx, int argc, char **argv)
{
    int lng = 0, json = 0;
    const char **tcp = calloc((size_t)argc + 2, sizeof *tcp);
    size_t ntcp = 0;
    if (!tcp)
        return SNAP_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0)
            lng = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] != '-' && adbc_device_is_tcp(argv[i]))
            tcp[ntcp++] = argv[i];
        else {
            free(tcp);
            return snap_usage(&snap_cmds_devices[0], "unknown argument (TCP targets are HOST:PORT)");
        }
    }
    /* The TCP devices a running session holds are listed too (USB ones are
     * in the USB listing already). */
    static char sessions[16][256];
    int nses = snap_session_devices(sessions, 16);
    const char **more = realloc(tcp, ((size_t)argc + 2 + (size_t)nses) * sizeof *tcp);
    if (!more) {
        free(tcp);
        return SNAP_EXIT_FAIL;
    }
    tcp = more;
    for (int s = 0; s < nses; s++) {
        int dup = !adbc_device_is_tcp(sessions[s]);
        for (size_t i = 0; i < ntcp && !dup; i++)
            dup = strcmp(tcp[i], sessions[s]) == 0;
        if (!dup)
            tcp[ntcp++] = sessions[s];
    }
    const char *extra[2] = {ctx->target, adbc_device_is_tcp(ctx->serial) ? ctx->serial : NULL};
    for (int k = 0; k < 2; k++) {
        int dup = !extra[k];
        for (size_t i = 0; i < ntcp && !dup; i++)
            dup = strcmp(tcp[i], extra[k]) == 0;
        if (!dup)
            tcp[ntcp++] = extra[k];
    }
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (ctx->timeout_ms < o.timeout_ms)
        o.timeout_ms = ctx->timeout_ms;
    adbc_device_entry *list;
    size_t n;
    int rc = adbc_devices_list(&list, &n, tcp, ntcp, &o);
    if (rc < 0 && rc != ADBC_ENOMEM) {
        /* No USB here at all: still show the TCP targets. */
        if (!ctx->quiet)
            fprintf(stderr, "adbc-snap: USB devices not listed: %s\n", adbc_last_error());
        o.usb = 0;
        rc = adbc_devices_list(&list, &n, tcp, ntcp, &o);
    }
    free(tcp);
    if (rc < 0)
        return snap_fail("devices", rc);
    if (json)
        print_json(list, n);
    else
        print_text(list, n, lng);
    for (size_t i = 0; i < n && !ctx->quiet; i++)
        if (list[i].error)
            fprintf(stderr, "adbc-snap: %s: %s\n", list[i].serial, list[i].message);
    adbc_devices_free(list);
    return 0;
}
