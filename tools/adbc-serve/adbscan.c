/* SPDX-License-Identifier: Apache-2.0 */
/* The adb server's device set when no device is named (`adbc-serve
 * --adb-server` alone, `adbc-snap start-server`): the devices adbc lists
 * (adbc_devices_list: USB devices, emulators on their console-paired ports,
 * remembered TCP devices; what `adbc-snap devices` shows), taken again every
 * SCAN_MS, as adb's server follows devices coming and going. A device that
 * appears is added to the pool and connected (serve_adbsrv_dev_up); one that
 * leaves the listing is put away (serve_adbsrv_dev_down: not listed, not
 * reconnected) until it is listed again. Only the devices this thread added
 * are put away: one a client `connect`ed stays, as with adb.
 *
 * The listing takes no handshake (probe 0): a device's state is the
 * server's connection's. One thread; it connects a new device itself, each
 * connect bounded by the server's --connect-timeout. */
#include "serve.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adbc/devices.h"

#define SCAN_MS 1000

static pthread_t scan_thread;
static int scan_started;
static atomic_int scan_stop;
static serve *scan_srv;

/* The devices this thread added, and whether each is put away. */
static struct {
    ops_dev *d;
    int down;
} scanned[SERVE_MAX_DEVICES * 4];
static int nscanned;

static int find(const ops_dev *d)
{
    for (int i = 0; i < nscanned; i++)
        if (scanned[i].d == d)
            return i;
    return -1;
}

static void scan_once(int *usb_off)
{
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.probe = 0;
    o.usb = !*usb_off;
    adbc_device_entry *list;
    size_t n;
    int rc = adbc_devices_list(&list, &n, NULL, 0, &o);
    if (rc < 0 && o.usb && rc != ADBC_ENOMEM) {
        /* No USB here at all: the emulators and remembered devices. */
        fprintf(stderr, SERVE_NAME ": adb server: USB devices not followed: %s\n",
                adbc_last_error());
        *usb_off = 1;
        o.usb = 0;
        rc = adbc_devices_list(&list, &n, NULL, 0, &o);
    }
    if (rc < 0)
        return; /* tried again next time */
    for (size_t i = 0; i < n && !scan_stop; i++) {
        ops_err e;
        ops_dev *d = ops_pool_find(&scan_srv->pool, list[i].serial);
        int k = d ? find(d) : -1;
        if (!d) {
            if (nscanned == (int)(sizeof scanned / sizeof *scanned))
                continue; /* as many as the server follows */
            if (!(d = ops_pool_dev(&scan_srv->pool, list[i].serial, &e))) {
                fprintf(stderr, SERVE_NAME ": adb server: %s\n", e.msg);
                continue;
            }
            k = nscanned++;
            scanned[k].d = d;
            scanned[k].down = 1;
        }
        if (k < 0 || !scanned[k].down)
            continue; /* named, connected by a client, or followed already */
        scanned[k].down = 0;
        if (serve_adbsrv_dev_up(d, &e) != 0)
            fprintf(stderr, SERVE_NAME ": adb server: %s: %s (retried in the background)\n",
                    d->serial, e.msg);
    }
    for (int k = 0; k < nscanned && !scan_stop; k++) {
        if (scanned[k].down)
            continue;
        int still = 0;
        for (size_t i = 0; i < n && !still; i++)
            still = strcmp(list[i].serial, scanned[k].d->serial) == 0;
        if (!still) {
            scanned[k].down = 1;
            serve_adbsrv_dev_down(scanned[k].d, "no longer listed (unplugged, or the "
                                                "emulator stopped)");
        }
    }
    adbc_devices_free(list);
}

static void *scan_main(void *arg)
{
    (void)arg;
    int usb_off = 0;
    while (!scan_stop && !scan_srv->stopping) {
        scan_once(&usb_off);
        for (int t = 0; t < SCAN_MS / 50 && !scan_stop && !scan_srv->stopping; t++)
            usleep(50 * 1000);
    }
    return NULL;
}

int serve_adbscan_start(serve *s)
{
    scan_srv = s;
    scan_stop = 0;
    if (pthread_create(&scan_thread, NULL, scan_main, NULL) != 0) {
        fprintf(stderr, SERVE_NAME ": cannot start the adb server's device scan\n");
        return -1;
    }
    scan_started = 1;
    return 0;
}

void serve_adbscan_stop(void)
{
    if (!scan_started)
        return;
    scan_stop = 1;
    pthread_join(scan_thread, NULL);
    scan_started = 0;
}
