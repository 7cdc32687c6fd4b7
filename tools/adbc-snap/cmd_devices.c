/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap devices: what `adb devices [-l]` shows, without an adb server:
 * USB devices with an ADB (or fastboot) interface, then the TCP targets given
 * (arguments, -t, or a HOST:PORT serial), each with the state a short
 * handshake shows. */
#include "snap.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/devices.h"
#include "ops_hostproto.h"

static int cmd_devices(snap_ctx *ctx, int argc, char **argv);
static int cmd_track_devices(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_devices[] = {
    {"devices", cmd_devices, "devices [-l] [--json] [HOST:PORT...]",
     "list USB devices and TCP targets with their state (as adb devices)"},
    {"track-devices", cmd_track_devices, "track-devices [-l]",
     "the device list as adb's server sends it, again each time it changes (as adb)"},
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

/* The devices `devices` lists: USB, emulators and remembered devices (the
 * library's listing), the TCP targets given (tcp, ntcp), those a running
 * session holds, and -t / a HOST:PORT -s. *usb_off is set (and said once,
 * unless quiet) when USB cannot be listed here. */
static int list_now(snap_ctx *ctx, const char *const *given, size_t ngiven,
                    adbc_device_entry **list, size_t *n, int *usb_off)
{
    static char sessions[16][256];
    int nses = snap_session_devices(sessions, 16);
    const char **tcp = calloc(ngiven + 2 + (size_t)(nses > 0 ? nses : 0), sizeof *tcp);
    if (!tcp)
        return ADBC_ENOMEM;
    size_t ntcp = 0;
    for (size_t i = 0; i < ngiven; i++)
        tcp[ntcp++] = given[i];
    /* The TCP devices a running session holds are listed too (USB ones are
     * in the USB listing already). */
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
    o.usb = !*usb_off;
    int rc = adbc_devices_list(list, n, tcp, ntcp, &o);
    if (rc < 0 && rc != ADBC_ENOMEM && o.usb) {
        /* No USB here at all: still show the TCP targets. */
        if (!ctx->quiet)
            fprintf(stderr, "adbc-snap: USB devices not listed: %s\n", adbc_last_error());
        *usb_off = 1;
        o.usb = 0;
        rc = adbc_devices_list(list, n, tcp, ntcp, &o);
    }
    free(tcp);
    return rc;
}

static int cmd_devices(snap_ctx *ctx, int argc, char **argv)
{
    int lng = 0, json = 0;
    const char **tcp = calloc((size_t)argc + 1, sizeof *tcp);
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
    adbc_device_entry *list;
    size_t n;
    int usb_off = 0;
    int rc = list_now(ctx, tcp, ntcp, &list, &n, &usb_off);
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

/* ---- track-devices ---- */

#define TRACK_EVERY_MS 1000 /* how often the list is taken again */

/* Transport ids as adb's server gives them: a number for each device from
 * when it is listed until it leaves (one that comes back gets a new one). */
typedef struct track_ids {
    char (*serial)[sizeof ((adbc_device_entry *)0)->serial];
    uint64_t *id;
    size_t n, cap;
    uint64_t next;
} track_ids;

static uint64_t track_id(track_ids *t, const char *serial)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->serial[i], serial) == 0)
            return t->id[i];
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 16;
        void *a = realloc(t->serial, nc * sizeof *t->serial);
        if (a)
            t->serial = a;
        void *b = a ? realloc(t->id, nc * sizeof *t->id) : NULL;
        if (!b)
            return 0;
        t->id = b;
        t->cap = nc;
    }
    snprintf(t->serial[t->n], sizeof t->serial[t->n], "%s", serial);
    t->id[t->n++] = ++t->next;
    return t->next;
}

/* Forget the devices no longer listed. */
static void track_prune(track_ids *t, const adbc_device_entry *l, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        int still = 0;
        for (size_t j = 0; j < n && !still; j++)
            still = strcmp(l[j].serial, t->serial[i]) == 0;
        if (still) {
            memmove(t->serial[k], t->serial[i], sizeof t->serial[k]);
            t->id[k++] = t->id[i];
        }
    }
    t->n = k;
}

/* adb's server lists its transports USB first, then the rest, each by serial
 * (transport.cpp, list_transports). */
static int adb_order(const void *a, const void *b)
{
    const adbc_device_entry *x = a, *y = b;
    int ux = strcmp(x->transport, "usb") == 0, uy = strcmp(y->transport, "usb") == 0;
    if (ux != uy)
        return uy - ux;
    return strcmp(x->serial, y->serial);
}

/* adb track-devices [-l]: the list as adb's server sends it to a tracker
 * (each list framed by its length in 4 hex digits), at once and again each
 * time it changes, until stopped. adbc has no server to be told of a
 * change: the list is taken again every TRACK_EVERY_MS. */
static int cmd_track_devices(snap_ctx *ctx, int argc, char **argv)
{
    int lng = argc == 2 && strcmp(argv[1], "-l") == 0;
    if (argc > 2 || (argc == 2 && !lng))
        return snap_usage(&snap_cmds_devices[1], "the one option is -l");
    track_ids ids = {0};
    char *last = NULL;
    int usb_off = 0, status = 0;
    size_t cap = 64 * 1024;
    char *text = malloc(cap), *framed = malloc(cap + 8);
    if (!text || !framed) {
        free(text);
        free(framed);
        return snap_error(SNAP_EXIT_FAIL, "track-devices", "out of memory");
    }
    for (;;) {
        adbc_device_entry *list;
        size_t n;
        int rc = list_now(ctx, NULL, 0, &list, &n, &usb_off);
        if (rc < 0) {
            status = snap_fail("track-devices", rc);
            break;
        }
        if (n > 1)
            qsort(list, n, sizeof *list, adb_order);
        track_prune(&ids, list, n);
        size_t used = 0;
        text[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            char devpath[sizeof list[i].usb_path + 8] = "";
            if (list[i].usb_path[0])
                snprintf(devpath, sizeof devpath, "usb:%s", list[i].usb_path);
            if (ops_hp_device_line(text, cap, &used, lng, list[i].serial,
                                   adbc_device_state_text(&list[i]), devpath, list[i].product,
                                   list[i].model, list[i].device,
                                   track_id(&ids, list[i].serial)) != 0)
                break; /* a list longer than a frame holds: the rest is left out */
        }
        adbc_devices_free(list);
        if (!last || strcmp(last, text) != 0) {
            size_t len = ops_hp_string(framed, cap + 8, text);
            if (fwrite(framed, 1, len, stdout) != len || fflush(stdout) != 0)
                break; /* whoever read the list is gone */
            free(last);
            if (!(last = strdup(text))) {
                status = snap_error(SNAP_EXIT_FAIL, "track-devices", "out of memory");
                break;
            }
        }
        struct timespec ts = {TRACK_EVERY_MS / 1000, (TRACK_EVERY_MS % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    free(last);
    free(text);
    free(framed);
    free(ids.serial);
    free(ids.id);
    return status;
}
