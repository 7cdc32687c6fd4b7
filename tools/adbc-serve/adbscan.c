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
 * Devices found by mDNS join the set as adb's server adds them
 * (ADB_MDNS_AUTO_CONNECT, by default the wireless-debugging service
 * "_adb-tls-connect._tcp"): every MDNS_EVERY scans the services are
 * browsed (adbc_mdns_browse, up to a second), and each instance resolved
 * is a device named "INSTANCE.SERVICE", the serial adb's server gives it
 * and adbc's selection rule resolves. One that no longer answers
 * MDNS_MISSES browses in a row leaves the set. A device that does not
 * know this host's key (not paired) fails its handshake and is not
 * listed; the pool tries it again with its backoff. ADB_MDNS=0 turns the
 * browsing off, as it turns off adb's.
 *
 * The listing takes no handshake (probe 0): a device's state is the
 * server's connection's. One thread; it connects a new device itself, each
 * connect bounded by the server's --connect-timeout. */
#include "serve.h"
#include "ops_hostproto.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "adbc/mdns.h"

#define SCAN_MS 1000
#define MDNS_EVERY 3  /* scans between two mDNS browses */
#define MDNS_MISSES 2 /* browses an instance may miss before it leaves */
#define MDNS_MAX 64

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

/* The mDNS services browsed (ADB_MDNS_AUTO_CONNECT), and the instances
 * found: "INSTANCE.SERVICE", with the browses each missed since. */
static const char *mdns_services[2];
static int nmdns_services;
static struct {
    char serial[256];
    int misses;
} found[MDNS_MAX];
static int nfound;

/* adb's ADB_MDNS_AUTO_CONNECT: "0" none, "1" every service, else a comma
 * list of adb, adb-tls-connect (adb-tls-pairing is never connected); unset,
 * adb-tls-connect alone. ADB_MDNS=0: none. */
static void mdns_choose(void)
{
    nmdns_services = 0;
    if (!ops_hp_mdns_enabled())
        return;
    const char *v = getenv("ADB_MDNS_AUTO_CONNECT");
    int tls = 1, plain = 0;
    if (v) {
        tls = strcmp(v, "1") == 0;
        plain = tls;
        for (const char *p = v; *p && strcmp(v, "1") != 0;) {
            size_t n = strcspn(p, ",");
            if (n == 15 && strncmp(p, "adb-tls-connect", 15) == 0)
                tls = 1;
            else if (n == 3 && strncmp(p, "adb", 3) == 0)
                plain = 1;
            p += n + (p[n] == ',');
        }
    }
    if (tls)
        mdns_services[nmdns_services++] = ADBC_MDNS_TLS_CONNECT;
    if (plain)
        mdns_services[nmdns_services++] = ADBC_MDNS_ADB;
}

/* An instance name from the network that can be a serial: no control
 * character (a serial is a line of host:devices) and no colon (a serial
 * with one is a HOST:PORT to adbc's selection rule, as to adb's). */
static int usable_name(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == ':')
            return 0;
    return *name != '\0';
}

/* Browse each chosen service and update found[]. */
static void mdns_browse_all(void)
{
    int seen[MDNS_MAX] = {0};
    for (int k = 0; k < nmdns_services && !scan_stop; k++) {
        adbc_mdns_opts o;
        adbc_mdns_opts_init(&o);
        o.service = mdns_services[k];
        adbc_mdns_service *l = NULL;
        size_t n = 0;
        if (adbc_mdns_browse(&l, &n, &o) < 0)
            continue; /* no multicast interface: nothing found */
        for (size_t i = 0; i < n; i++) {
            if (l[i].port == 0 || !usable_name(l[i].instance))
                continue; /* not resolved (not reachable yet), or not a serial */
            char serial[256];
            snprintf(serial, sizeof serial, "%s.%s", l[i].instance, l[i].service);
            int j = 0;
            while (j < nfound && strcmp(found[j].serial, serial) != 0)
                j++;
            if (j == nfound) {
                if (nfound == MDNS_MAX)
                    continue;
                snprintf(found[nfound++].serial, sizeof found[0].serial, "%s", serial);
            }
            found[j].misses = 0;
            seen[j] = 1;
        }
        adbc_mdns_free(l);
    }
    for (int j = 0; j < nfound;) {
        if (!seen[j] && ++found[j].misses >= MDNS_MISSES) {
            found[j] = found[--nfound];
            seen[j] = seen[nfound];
            continue;
        }
        j++;
    }
}

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
    /* What is listed now: adbc's listing, then the mDNS instances. */
    const char *names[SERVE_MAX_DEVICES * 4];
    size_t nn = 0;
    for (size_t i = 0; i < n && nn < sizeof names / sizeof *names; i++)
        names[nn++] = list[i].serial;
    for (int j = 0; j < nfound && nn < sizeof names / sizeof *names; j++)
        names[nn++] = found[j].serial;
    for (size_t i = 0; i < nn && !scan_stop; i++) {
        ops_err e;
        ops_dev *d = ops_pool_find(&scan_srv->pool, names[i]);
        int k = d ? find(d) : -1;
        if (!d) {
            if (nscanned == (int)(sizeof scanned / sizeof *scanned))
                continue; /* as many as the server follows */
            if (!(d = ops_pool_dev(&scan_srv->pool, names[i], &e))) {
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
        for (size_t i = 0; i < nn && !still; i++)
            still = strcmp(names[i], scanned[k].d->serial) == 0;
        if (!still) {
            scanned[k].down = 1;
            serve_adbsrv_dev_down(scanned[k].d, "no longer listed (unplugged, the emulator "
                                                "stopped, or no longer announced by mDNS)");
        }
    }
    adbc_devices_free(list);
}

static void *scan_main(void *arg)
{
    (void)arg;
    int usb_off = 0;
    for (unsigned round = 0; !scan_stop && !scan_srv->stopping; round++) {
        scan_once(&usb_off);
        if (nmdns_services && round % MDNS_EVERY == 0 && !scan_stop) {
            /* After the listing, which a browse (up to a second) would hold up. */
            mdns_browse_all();
            scan_once(&usb_off);
        }
        for (int t = 0; t < SCAN_MS / 50 && !scan_stop && !scan_srv->stopping; t++)
            usleep(50 * 1000);
    }
    return NULL;
}

int serve_adbscan_start(serve *s)
{
    scan_srv = s;
    scan_stop = 0;
    mdns_choose();
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
