/* SPDX-License-Identifier: Apache-2.0 */
/* The selection rule every tool shares (devices.h): which device a serial,
 * $ANDROID_SERIAL or "the only device" names; finding it, connecting to it,
 * and waiting for it to become ready. */
#include "adbc/devices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/mdns.h"
#include "adbc/usb.h"
#include "devices/devices_int.h"
#include "core/internal.h"

const char *adbc_device_serial(const char *given)
{
    if (given && *given)
        return given;
    const char *env = getenv("ANDROID_SERIAL");
    return env && *env ? env : NULL;
}

/* adb's rule: a serial with a colon is a TCP address, except adbc's
 * "usb:PATH" and "fd:N". */
int adbc_device_is_tcp(const char *serial)
{
    return serial && strncmp(serial, "usb:", 4) != 0 && strncmp(serial, "fd:", 3) != 0 &&
           strchr(serial, ':') != NULL;
}

/* "fd:N": a usbfs descriptor this process was handed (termux-usb). */
static int parse_fd(const char *serial, int *fd)
{
    char *end;
    errno = 0;
    long v = strtol(serial + 3, &end, 10);
    if (serial[3] == '\0' || *end != '\0' || errno || v < 0 || v > 1000000)
        return core_fail(ADBC_EINVAL, "\"%s\": expected fd:N, N an open USB device descriptor",
                         serial);
    *fd = (int)v;
    return 0;
}

static int connect_fd(adbc_conn **out, const char *serial, const adbc_conn_opts *opts)
{
    int fd;
    int rc = parse_fd(serial, &fd);
    if (rc < 0)
        return rc;
    adbc_transport *t;
    rc = adbc_transport_usb_fd(&t, fd, 0);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, opts);
}

/* The address of an "emulator-N" serial. */
static int emu_addr(char *addr, size_t len, const char *serial)
{
    unsigned port = emu_serial_port(serial);
    if (!port)
        return 0;
    snprintf(addr, len, "127.0.0.1:%u", port);
    return 1;
}

/* How long a serial naming an mDNS instance waits for its answer. */
#define MDNS_RESOLVE_MS 2000

/* "NAME._adb-tls-connect._tcp", "NAME._adb._tcp" (".local" and a final dot
 * may follow): a serial that can only be an mDNS service instance. */
static int is_mdns(const char *serial)
{
    static const char *const types[] = {"._adb-tls-connect._tcp", "._adb._tcp"};
    for (int i = 0; i < 2; i++) {
        const char *p = strstr(serial, types[i]);
        if (!p || p == serial)
            continue;
        p += strlen(types[i]);
        if (!*p || strcmp(p, ".") == 0 || strcmp(p, ".local") == 0 || strcmp(p, ".local.") == 0)
            return 1;
    }
    return 0;
}

/* Resolve an mDNS instance to the "HOST:PORT" to connect to. */
static int mdns_addr(char *addr, size_t len, const char *serial, int timeout_ms)
{
    adbc_mdns_service sv;
    int t = timeout_ms > 0 && timeout_ms < MDNS_RESOLVE_MS ? timeout_ms : MDNS_RESOLVE_MS;
    int rc = adbc_mdns_resolve(&sv, serial, t);
    if (rc < 0)
        return rc;
    adbc_mdns_addr(addr, len, &sv);
    return 0;
}

/* A name that is no USB serial here may still be an mDNS instance: try it,
 * and when that fails too, say both. */
static int usb_or_mdns(char *addr, size_t len, const char *serial, int usb_rc, int timeout_ms)
{
    char usb_msg[300];
    snprintf(usb_msg, sizeof usb_msg, "%s", adbc_last_error());
    int rc = mdns_addr(addr, len, serial, timeout_ms);
    if (rc == 0)
        return 0;
    if (rc == ADBC_EINVAL || rc == ADBC_EIO)
        return core_fail(usb_rc, "%s", usb_msg); /* no mDNS here: the USB answer stands */
    return core_fail(ADBC_ENOTFOUND, "%s; and %s", usb_msg, adbc_last_error());
}

/* How long "the only device" asks this machine's own mDNS responder. */
#define OWN_MDNS_MS 300

/* One entry for a TCP or emulator device, probed when asked. */
static int tcp_entry(adbc_device_entry *out, const char *serial, const char *addr,
                     const char *transport, const adbc_devices_opts *o);

/* No USB device and no emulator: this machine's own wireless-debugging
 * service (Termux: the phone's own), asked host-only (unicast to this
 * machine's own addresses: the query never leaves it, and only a responder
 * on it can answer). Each found is appended as NAME._adb-tls-connect._tcp
 * (else NAME._adb._tcp). */
static int own_services(adbc_device_entry **list, size_t *n, const adbc_devices_opts *o)
{
    adbc_mdns_opts mo;
    adbc_mdns_opts_init(&mo);
    mo.host_only = 1;
    mo.timeout_ms = o->timeout_ms > 0 && o->timeout_ms < OWN_MDNS_MS ? o->timeout_ms
                                                                       : OWN_MDNS_MS;
    adbc_mdns_service *sv;
    size_t nsv;
    if (adbc_mdns_browse(&sv, &nsv, &mo) < 0) {
        adbc_clear_error(); /* no multicast interface: no own service either */
        return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < nsv && rc == 0; i++) {
        int tls = strcmp(sv[i].service, ADBC_MDNS_TLS_CONNECT) == 0;
        if (!sv[i].local || !sv[i].port || (!tls && strcmp(sv[i].service, ADBC_MDNS_ADB) != 0))
            continue;
        int dup = 0; /* an instance with both services: the TLS one, as -s NAME */
        for (size_t k = 0; k < nsv && !tls && !dup; k++)
            dup = k != i && sv[k].local && sv[k].port &&
                  strcmp(sv[k].service, ADBC_MDNS_TLS_CONNECT) == 0 &&
                  strcmp(sv[k].instance, sv[i].instance) == 0;
        if (dup)
            continue;
        adbc_device_entry *l = core_realloc(*list, (*n + 1) * sizeof *l);
        if (!l) {
            rc = core_fail(ADBC_ENOMEM, "out of memory listing devices");
            break;
        }
        *list = l;
        char serial[128], addr[80];
        snprintf(serial, sizeof serial, "%s.%s", sv[i].instance, sv[i].service);
        adbc_mdns_addr(addr, sizeof addr, &sv[i]);
        tcp_entry(&l[*n], serial, addr, "tcp", o);
        (*n)++;
    }
    adbc_mdns_free(sv);
    return rc;
}

/* The devices "the only device" chooses from: USB (not in fastboot),
 * emulators and remembered TCP devices; with none at all, this machine's
 * own mDNS service. */
static int candidates(adbc_device_entry **list, size_t *n, const adbc_devices_opts *o,
                      size_t *nfastboot)
{
    int rc = adbc_devices_list(list, n, NULL, 0, o);
    if (rc < 0 && rc != ADBC_ENOMEM && o->usb) {
        /* No USB here at all (no /dev/bus/usb): the emulators still count. */
        adbc_devices_opts o2 = *o;
        o2.usb = 0;
        rc = adbc_devices_list(list, n, NULL, 0, &o2);
    }
    if (rc < 0)
        return rc;
    if (*n == 0 && o->local && (rc = own_services(list, n, o)) < 0) {
        adbc_devices_free(*list);
        *list = NULL;
        *n = 0;
        return rc;
    }
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if ((*list)[i].state != ADBC_DEV_BOOTLOADER)
            (*list)[k++] = (*list)[i];
    if (nfastboot)
        *nfastboot = *n - k;
    *n = k;
    return 0;
}

static int none_found(void)
{
    return core_fail(ADBC_ENOTFOUND,
                     "no device found: no USB device with USB debugging, no emulator "
                     "(nothing answers on 127.0.0.1 ports 5555-%u) and no wireless-debugging "
                     "service of this machine's own and none remembered; connect one, "
                     "remember a TCP device with `adbc-snap connect HOST:PORT`, or name a "
                     "phone on the network by its mDNS name (-s NAME, see `adbc-snap mdns "
                     "services`)",
                     emu_max_port());
}

static int several(const adbc_device_entry *l, size_t n)
{
    char names[400] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && len + 2 < sizeof names; i++) {
        int w = l[i].usb_path[0]
                    ? snprintf(names + len, sizeof names - len, "%s%s (%s)", i ? ", " : "",
                               l[i].serial, l[i].usb_path)
                    : snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                               l[i].serial);
        if (w < 0)
            break;
        len += (size_t)w;
        if (len >= sizeof names)
            len = sizeof names - 1;
    }
    return core_fail(ADBC_EINVAL,
                     "more than one device (%zu: %s): choose one with -s SERIAL or "
                     "ANDROID_SERIAL",
                     n, names);
}

static int tcp_entry(adbc_device_entry *out, const char *serial, const char *addr,
                     const char *transport, const adbc_devices_opts *o)
{
    memset(out, 0, sizeof *out);
    devices_copy(out->serial, sizeof out->serial, addr);
    devices_copy(out->transport, sizeof out->transport, transport);
    if (o->probe)
        devices_probe(out, NULL, o->timeout_ms, o->keys);
    devices_copy(out->serial, sizeof out->serial, serial);
    if (out->error == ADBC_EREFUSED && strcmp(transport, "local") == 0)
        return core_fail(ADBC_ENOTFOUND, "%s not found: nothing listens on %s", serial, addr);
    adbc_clear_error();
    return 0;
}

int adbc_device_find(adbc_device_entry *out, const char *serial, const adbc_devices_opts *opts)
{
    if (!out)
        return core_null(__func__, "out");
    memset(out, 0, sizeof *out);
    adbc_devices_opts def;
    adbc_devices_opts_init(&def);
    if (core_abi_take(&def, sizeof def, opts, "adbc_devices_opts") < 0)
        return ADBC_EINVAL;
    opts = &def;
    serial = adbc_device_serial(serial);
    char addr[128];
    if (serial && adbc_device_is_tcp(serial))
        return tcp_entry(out, serial, serial, "tcp", opts);
    if (serial && emu_addr(addr, sizeof addr, serial))
        return tcp_entry(out, serial, addr, "local", opts);
    if (serial && is_mdns(serial)) {
        int rc = mdns_addr(addr, sizeof addr, serial, opts->timeout_ms);
        return rc < 0 ? rc : tcp_entry(out, serial, addr, "tcp", opts);
    }
    if (serial && strncmp(serial, "fd:", 3) == 0) {
        int fd;
        int rc = parse_fd(serial, &fd);
        if (rc < 0)
            return rc;
        devices_copy(out->serial, sizeof out->serial, serial);
        devices_copy(out->transport, sizeof out->transport, "usb");
        return 0;
    }
    adbc_devices_opts o = *opts;
    if (serial)
        o.local = o.remembered = 0; /* a USB serial or usb:PATH */
    adbc_device_entry *list;
    size_t n;
    int rc = candidates(&list, &n, &o, NULL);
    if (rc < 0)
        return rc;
    if (!serial) {
        rc = n == 0 ? none_found() : n > 1 ? several(list, n) : 0;
        if (rc == 0)
            *out = list[0];
        adbc_devices_free(list);
        return rc;
    }
    int usbpath = strncmp(serial, "usb:", 4) == 0;
    for (size_t i = 0; i < n; i++) {
        if (usbpath ? strcmp(list[i].usb_path, serial + 4) == 0
                    : strcmp(list[i].serial, serial) == 0) {
            *out = list[i];
            adbc_devices_free(list);
            return 0;
        }
    }
    adbc_devices_free(list);
    core_fail(ADBC_ENOTFOUND,
              "no device \"%s\": no USB device with that serial%s (`adbc-snap devices` lists "
              "what is found)",
              serial, usbpath ? " or port path" : "");
    if (usbpath || usb_or_mdns(addr, sizeof addr, serial, ADBC_ENOTFOUND, opts->timeout_ms) < 0)
        return ADBC_ENOTFOUND;
    return tcp_entry(out, serial, addr, "tcp", opts);
}

int adbc_device_connect(adbc_conn **out, const char *serial, const adbc_conn_opts *opts)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    serial = adbc_device_serial(serial);
    char addr[128];
    if (serial && adbc_device_is_tcp(serial))
        return adbc_connect(out, serial, opts);
    if (serial && emu_addr(addr, sizeof addr, serial))
        return adbc_connect(out, addr, opts);
    if (serial && strncmp(serial, "fd:", 3) == 0)
        return connect_fd(out, serial, opts);
    adbc_conn_opts co;
    adbc_conn_opts_init(&co);
    if (core_abi_take(&co, sizeof co, opts, "adbc_conn_opts") < 0)
        return ADBC_EINVAL;
    int tmo = co.connect_timeout_ms;
    if (serial && is_mdns(serial)) {
        int rc = mdns_addr(addr, sizeof addr, serial, tmo);
        return rc < 0 ? rc : adbc_connect(out, addr, opts);
    }
    adbc_transport *t;
    if (serial) {
        int rc = adbc_transport_usb(&t, serial);
        if (rc == 0)
            return adbc_conn_open(out, t, opts);
        if (strncmp(serial, "usb:", 4) == 0 || (rc != ADBC_ENOTFOUND && rc != ADBC_EIO))
            return rc;
        rc = usb_or_mdns(addr, sizeof addr, serial, rc, tmo);
        return rc < 0 ? rc : adbc_connect(out, addr, opts);
    }
    /* The only device: list without handshakes (an open port or a USB
     * interface is a device), then connect to it. */
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.probe = 0;
    adbc_device_entry *list;
    size_t n;
    size_t nfastboot = 0;
    int rc = candidates(&list, &n, &o, &nfastboot);
    if (rc < 0)
        return rc;
    if (n == 0 && nfastboot > 0) {
        /* Only devices in fastboot mode: opening one says so. */
        adbc_devices_free(list);
        rc = adbc_transport_usb(&t, NULL);
        return rc < 0 ? rc : adbc_conn_open(out, t, opts);
    }
    if (n != 1) {
        rc = n == 0 ? none_found() : several(list, n);
        adbc_devices_free(list);
        return rc;
    }
    adbc_device_entry e = list[0];
    adbc_devices_free(list);
    if (adbc_device_is_tcp(e.serial)) /* the one remembered device */
        return adbc_connect(out, e.serial, opts);
    if (emu_addr(addr, sizeof addr, e.serial))
        return adbc_connect(out, addr, opts);
    if (is_mdns(e.serial)) /* this machine's own service: resolved as -s NAME is */
        return adbc_device_connect(out, e.serial, opts);
    char sel[80];
    if (e.usb_path[0])
        snprintf(sel, sizeof sel, "usb:%s", e.usb_path);
    else
        devices_copy(sel, sizeof sel, e.serial);
    rc = adbc_transport_usb(&t, sel);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, opts);
}

static int transport_ok(const adbc_device_entry *e, adbc_wait_transport tr)
{
    if (tr == ADBC_WAIT_USB)
        return strcmp(e->transport, "usb") == 0;
    if (tr == ADBC_WAIT_LOCAL)
        return strcmp(e->transport, "usb") != 0;
    return 1;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int adbc_device_wait(adbc_device_entry *out, const char *serial, adbc_wait_transport transport,
                     adbc_dev_state state, int timeout_ms, const adbc_devices_opts *opts)
{
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    if (core_abi_take(&o, sizeof o, opts, "adbc_devices_opts") < 0)
        return ADBC_EINVAL;
    o.probe = 1;
    serial = adbc_device_serial(serial);
    int64_t deadline = timeout_ms < 0 ? -1 : core_deadline(timeout_ms);
    char seen[300] = "nothing listed";
    for (;;) {
        adbc_device_entry e;
        int left = deadline < 0 ? -1 : core_remaining(deadline);
        if (left >= 0 && left < o.timeout_ms)
            o.timeout_ms = left > 100 ? left : 100;
        int rc = adbc_device_find(&e, serial, &o);
        int present = rc == 0 && transport_ok(&e, transport);
        if (rc == ADBC_EINVAL && !serial && state != ADBC_DEV_UNKNOWN)
            return rc; /* several devices: the caller must choose */
        if (rc < 0 && rc != ADBC_ENOTFOUND && rc != ADBC_EINVAL)
            return rc;
        if (rc == ADBC_EINVAL && serial)
            return rc; /* a malformed serial */
        if (state == ADBC_DEV_UNKNOWN ? !present && rc != ADBC_EINVAL
                                      : present && e.state == state) {
            if (out)
                *out = present ? e : (adbc_device_entry){0};
            adbc_clear_error();
            return 0;
        }
        if (present)
            snprintf(seen, sizeof seen, "%.200s is %s", e.serial, adbc_device_state_text(&e));
        else if (rc == ADBC_EINVAL)
            snprintf(seen, sizeof seen, "several devices");
        else
            snprintf(seen, sizeof seen, "%.200s", serial ? serial : "no device found");
        left = deadline < 0 ? 250 : core_remaining(deadline);
        if (left == 0)
            return core_fail(ADBC_ETIMEDOUT,
                             "timed out after %d ms waiting for %s to be %s (last seen: %s)",
                             timeout_ms, serial ? serial : "a device",
                             state == ADBC_DEV_UNKNOWN ? "gone" : adbc_dev_state_name(state),
                             seen);
        sleep_ms(left < 250 ? left : 250);
    }
}
