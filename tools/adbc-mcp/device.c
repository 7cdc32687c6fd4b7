/* SPDX-License-Identifier: Apache-2.0 */
/* Which device a call goes to, and whether it may. The rules:
 *  - one device is active; until one is selected, the selection rule of
 *    every adbc tool applies: -s, then $ANDROID_SERIAL, then [device]
 *    default, then the only device (as adbc_device_find counts them: USB
 *    devices not in fastboot and emulators, in whatever state, plus the
 *    configured TCP targets, as adb counts `adb connect`ed ones); with
 *    several and none chosen the call fails listing them. A phone announced
 *    by mDNS is never chosen implicitly: it is named (-s, default,
 *    select_device) or not used;
 *  - an emulator is told from a physical device by facts only: an
 *    "emulator-" serial, or ro.kernel.qemu / ro.boot.qemu = 1 read from the
 *    device itself; if those cannot be read the device is refused;
 *  - a physical device is used only when its serial (as listed, or its
 *    ro.serialno) is on the allowlist;
 *  - a call holds the device's lock for its whole run, taken within the
 *    call's deadline. */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/devices.h"
#include "adbc/error.h"
#include "adbc/mdns.h"

const char *device_kind_name(int kind)
{
    return kind == DEV_KIND_EMULATOR ? "emulator" : kind == DEV_KIND_PHYSICAL ? "physical"
                                                                              : "not connected";
}

static mcp_dev *dev_find(mcp_server *s, const char *serial)
{
    pthread_mutex_lock(&s->state_lock);
    mcp_dev *d = s->devs;
    while (d && strcmp(d->serial, serial) != 0)
        d = d->next;
    if (!d && strlen(serial) < sizeof(d->serial) && (d = calloc(1, sizeof(*d)))) {
        strcpy(d->serial, serial);
        pthread_mutex_init(&d->lock, NULL);
        d->next = s->devs;
        s->devs = d;
    }
    pthread_mutex_unlock(&s->state_lock);
    return d;
}

void devices_free(mcp_server *s)
{
    mcp_dev *d = s->devs;
    while (d) {
        mcp_dev *next = d->next;
        if (d->conn)
            adbc_conn_close(d->conn);
        adbc_ui_snap_free(d->last);
        pthread_mutex_destroy(&d->lock);
        free(d);
        d = next;
    }
    s->devs = s->active = NULL;
}

/* The phones announced by mDNS ([device] mdns = true): each connect
 * service, probed at its address and named INSTANCE.SERVICE, appended to
 * *l. A browse that cannot run (no multicast interface) adds nothing. */
static int add_mdns(mcp_call *c, adbc_device_entry **l, size_t *n, int timeout_ms)
{
    adbc_mdns_opts mo;
    adbc_mdns_opts_init(&mo);
    mo.timeout_ms = timeout_ms;
    adbc_mdns_service *sv = NULL;
    size_t nsv = 0;
    if (adbc_mdns_browse(&sv, &nsv, &mo) < 0) {
        mcp_log("mDNS browse: %s", adbc_last_error());
        return 0;
    }
    char (*addr)[80] = calloc(nsv ? nsv : 1, sizeof *addr);
    const char **addrs = calloc(nsv ? nsv : 1, sizeof *addrs);
    size_t *which = calloc(nsv ? nsv : 1, sizeof *which);
    size_t k = 0;
    if (!addr || !addrs || !which) {
        free(addr);
        free(addrs);
        free(which);
        adbc_mdns_free(sv);
        return call_fail(c, "out of memory");
    }
    for (size_t i = 0; i < nsv; i++) {
        if (!sv[i].port || !sv[i].addr[0] || strcmp(sv[i].service, ADBC_MDNS_TLS_PAIRING) == 0)
            continue;
        adbc_mdns_addr(addr[k], sizeof addr[k], &sv[i]);
        addrs[k] = addr[k];
        which[k++] = i;
    }
    adbc_device_entry *m = NULL;
    size_t nm = 0;
    int rc = 0;
    if (k) {
        adbc_devices_opts o;
        adbc_devices_opts_init(&o);
        o.usb = 0;
        o.local = 0;
        int left = call_remaining(c);
        if (o.timeout_ms > left)
            o.timeout_ms = left;
        rc = adbc_devices_list(&m, &nm, addrs, k, &o);
    }
    adbc_device_entry *grown = rc == 0 && nm ? realloc(*l, (*n + nm) * sizeof **l) : NULL;
    if (rc < 0 || (nm && !grown)) {
        rc = rc < 0 ? call_fail_adbc(c, rc, "probing the phones announced by mDNS")
                    : call_fail(c, "out of memory");
    } else {
        if (nm)
            *l = grown;
        for (size_t i = 0; i < nm; i++) {
            adbc_device_entry *e = &(*l)[(*n)++];
            *e = m[i];
            for (size_t j = 0; j < k; j++)
                if (strcmp(m[i].serial, addrs[j]) == 0) {
                    snprintf(e->serial, sizeof e->serial, "%s.%s", sv[which[j]].instance,
                             sv[which[j]].service);
                    snprintf(e->transport, sizeof e->transport, "mdns");
                }
        }
    }
    adbc_devices_free(m);
    free(addr);
    free(addrs);
    free(which);
    adbc_mdns_free(sv);
    return rc < 0 ? -1 : 0;
}

/* USB (when configured and available), the emulators, the configured TCP
 * targets and, with [device] mdns, the phones announced by mDNS. */
static int list_all(mcp_call *c, adbc_device_entry **out, size_t *n, int with_mdns)
{
    mcp_server *s = c->srv;
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.usb = s->cfg.usb;
    int left = call_remaining(c);
    if (o.timeout_ms > left)
        o.timeout_ms = left;
    int rc = adbc_devices_list(out, n, (const char *const *)s->cfg.targets, s->cfg.ntargets, &o);
    if (rc < 0 && o.usb) {
        mcp_log("USB devices cannot be listed (%s); listing TCP targets only", adbc_last_error());
        o.usb = 0;
        rc = adbc_devices_list(out, n, (const char *const *)s->cfg.targets, s->cfg.ntargets,
                               &o);
    }
    if (rc < 0)
        return call_fail_adbc(c, rc, "listing devices");
    if (with_mdns && s->cfg.mdns && add_mdns(c, out, n, left < 1000 ? left : 1000) != 0) {
        adbc_devices_free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

static void describe(char *buf, size_t cap, const adbc_device_entry *l, size_t n)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && off + 1 < cap; i++) {
        int w = snprintf(buf + off, cap - off, "%s%s (%s%s%s)", i ? ", " : "", l[i].serial,
                         adbc_device_state_text(&l[i]), l[i].model[0] ? ", " : "", l[i].model);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

/* "NAME._adb-tls-connect._tcp" (or "._adb._tcp", ".local" after it): NAME,
 * the mDNS instance, which the allowlist may name alone. */
static int mdns_instance(char *out, size_t len, const char *serial)
{
    const char *p = strstr(serial, "._adb-tls-connect._tcp");
    if (!p)
        p = strstr(serial, "._adb._tcp");
    if (!p || p == serial || (size_t)(p - serial) >= len)
        return 0;
    memcpy(out, serial, (size_t)(p - serial));
    out[p - serial] = 0;
    return 1;
}

/* The serial, or the mDNS instance it names, is on the allowlist. */
static int listed(const mcp_server *s, const char *serial)
{
    char inst[256];
    return mcp_config_allowed(&s->cfg, serial) ||
           (mdns_instance(inst, sizeof inst, serial) && mcp_config_allowed(&s->cfg, inst));
}

static int allowed(const mcp_server *s, const mcp_dev *d)
{
    return d->kind == DEV_KIND_EMULATOR || listed(s, d->serial) ||
           mcp_config_allowed(&s->cfg, d->serialno);
}

static void drop_conn(mcp_dev *d)
{
    if (d->conn)
        adbc_conn_close(d->conn);
    d->conn = NULL;
    d->kind = DEV_KIND_UNKNOWN;
    d->serialno[0] = 0;
}

/* Connect (the device lock held) and decide what the device is. */
static int dev_connect(mcp_call *c, mcp_dev *d)
{
    mcp_server *s = c->srv;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    int left = call_remaining(c);
    o.connect_timeout_ms = s->cfg.connect_ms < left ? s->cfg.connect_ms : left;
    o.auth_timeout_ms = o.connect_timeout_ms;
    o.io_timeout_ms = s->cfg.call_ms;
    char what[640];
    snprintf(what, sizeof(what), "connecting to %s", d->serial);
    int rc = adbc_device_connect(&d->conn, d->serial, &o);
    if (rc < 0) {
        d->conn = NULL;
        return call_fail_adbc(c, rc, what);
    }
    d->kind = DEV_KIND_PHYSICAL;
    if (strncmp(d->serial, "emulator-", 9) == 0)
        d->kind = DEV_KIND_EMULATOR;
    static const char *const qemu[] = {"ro.kernel.qemu", "ro.boot.qemu"};
    for (int i = 0; i < 2 && d->kind != DEV_KIND_EMULATOR; i++) {
        char *v = NULL;
        rc = adbc_getprop(&v, d->conn, qemu[i], call_remaining(c));
        if (rc < 0) {
            snprintf(what, sizeof(what),
                     "reading %s from %s (needed to tell an emulator from a physical device; "
                     "the device is refused until it can be read)", qemu[i], d->serial);
            drop_conn(d);
            return call_fail_adbc(c, rc, what);
        }
        if (strcmp(v, "1") == 0)
            d->kind = DEV_KIND_EMULATOR;
        free(v);
    }
    char *sn = NULL;
    if (adbc_getprop(&sn, d->conn, "ro.serialno", call_remaining(c)) == 0) {
        snprintf(d->serialno, sizeof(d->serialno), "%s", sn);
        free(sn);
    }
    mcp_log("connected to %s: %s%s%s", d->serial, device_kind_name(d->kind),
            d->serialno[0] ? ", ro.serialno " : "", d->serialno);
    return 0;
}

static int lock_dev(mcp_call *c, mcp_dev *d)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = call_remaining(c);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    int rc = pthread_mutex_timedlock(&d->lock, &ts);
    if (rc != 0)
        return call_fail(c, "device %s is busy: another call held it until this call's "
                            "timeout; retry when that call has finished", d->serial);
    return 0;
}

/* Lock d, connect if needed, apply the safety rules. */
static int take(mcp_call *c, mcp_dev *d)
{
    mcp_server *s = c->srv;
    if (lock_dev(c, d) != 0)
        return -1;
    if (d->conn && adbc_conn_status(d->conn) != 0) {
        mcp_log("%s: connection lost earlier; reconnecting", d->serial);
        drop_conn(d);
    }
    if (!d->conn && dev_connect(c, d) != 0) {
        pthread_mutex_unlock(&d->lock);
        return -1;
    }
    if (!allowed(s, d)) {
        mcp_log("refused %s: physical device not on the allowlist", d->serial);
        char serials[512];
        snprintf(serials, sizeof(serials), "\"%s\"%s%s%s", d->serial,
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? " (or its ro.serialno \"" : "",
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? d->serialno : "",
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? "\")" : "");
        call_fail(c, "refused: %s is a physical device (not an emulator: its serial does not "
                     "start with emulator- and ro.kernel.qemu / ro.boot.qemu are not 1) and it "
                     "is not on the allowlist. Physical devices are off unless allowed by "
                     "name: a person must add %s to allowlist under [device] in %s and restart "
                     "adbc-mcp. Until then use an emulator.",
                  d->serial, serials, s->config_path ? s->config_path : "the config file");
        drop_conn(d);
        pthread_mutex_unlock(&d->lock);
        return -1;
    }
    c->dev = d;
    return 0;
}

int call_device(mcp_call *c)
{
    mcp_server *s = c->srv;
    pthread_mutex_lock(&s->state_lock);
    mcp_dev *d = s->active;
    pthread_mutex_unlock(&s->state_lock);
    if (d)
        return take(c, d);
    if (s->cfg.default_serial) {
        d = dev_find(s, s->cfg.default_serial);
    } else {
        adbc_device_entry *l = NULL;
        size_t n = 0, k = 0;
        if (list_all(c, &l, &n, 0) != 0)
            return -1;
        for (size_t i = 0; i < n; i++) /* a device in fastboot speaks no adb */
            if (l[i].state != ADBC_DEV_BOOTLOADER)
                l[k++] = l[i];
        n = k;
        char names[2048];
        describe(names, sizeof(names), l, n);
        if (n != 1 || l[0].state != ADBC_DEV_DEVICE || l[0].error) {
            int rc;
            if (n == 0)
                rc = call_fail(c, "no device found: connect one by USB, start an emulator, "
                                  "list a TCP device under [device] targets in the config, or "
                                  "name one (a phone announced by mDNS is used only when "
                                  "named: -s INSTANCE, [device] default or select_device)");
            else if (n == 1)
                rc = call_fail(c, "the only device, %s, is not ready: %s%s%s. Fix the state "
                                  "shown (accept the USB debugging prompt, reconnect), then "
                                  "retry", l[0].serial, adbc_device_state_text(&l[0]),
                               l[0].message[0] ? ": " : "", l[0].message);
            else
                rc = call_fail(c, "%zu devices are connected and none is selected: call "
                                  "select_device with one of: %s", n, names);
            adbc_devices_free(l);
            return rc;
        }
        size_t pick = 0;
        d = dev_find(s, l[pick].serial);
        adbc_devices_free(l);
    }
    if (!d)
        return call_fail(c, "out of memory");
    if (take(c, d) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    if (!s->active)
        s->active = d;
    pthread_mutex_unlock(&s->state_lock);
    return 0;
}

void call_device_done(mcp_call *c)
{
    mcp_dev *d = c->dev;
    if (!d)
        return;
    if (d->conn && adbc_conn_status(d->conn) != 0) {
        mcp_log("%s: connection lost (%s); will reconnect on the next call", d->serial,
                adbc_strerror(adbc_conn_status(d->conn)));
        drop_conn(d);
    }
    c->dev = NULL;
    pthread_mutex_unlock(&d->lock);
}

int device_select(mcp_call *c, const char *serial)
{
    mcp_server *s = c->srv;
    adbc_device_entry *l = NULL;
    size_t n = 0;
    if (list_all(c, &l, &n, 1) != 0)
        return -1;
    const adbc_device_entry *e = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].serial, serial) == 0)
            e = &l[i];
    char names[2048];
    describe(names, sizeof(names), l, n);
    char inst[256];
    if (!e) {
        int rc = call_fail(c, "no device '%s'. Connected: %s%s", serial,
                           n ? names : "none (connect one, or list a TCP device under [device] "
                                       "targets in the config)",
                           mdns_instance(inst, sizeof inst, serial) && !s->cfg.mdns
                               ? ". Phones announced by mDNS are listed and selectable only "
                                 "with mdns = true under [device] in the config"
                               : "");
        adbc_devices_free(l);
        return rc;
    }
    if (e->state != ADBC_DEV_DEVICE || e->error) {
        int rc = call_fail(c, "device %s is %s%s%s: fix that first, then select it again",
                           serial, adbc_device_state_text(e), e->message[0] ? ": " : "",
                           e->message);
        adbc_devices_free(l);
        return rc;
    }
    adbc_devices_free(l);
    mcp_dev *d = dev_find(s, serial);
    if (!d)
        return call_fail(c, "out of memory");
    if (take(c, d) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    s->active = d;
    pthread_mutex_unlock(&s->state_lock);
    call_text(c, "selected %s (%s%s%s)", d->serial, device_kind_name(d->kind),
              d->kind == DEV_KIND_PHYSICAL ? ", on the allowlist" : "",
              "");
    call_device_done(c);
    return 0;
}

int device_list_text(mcp_call *c)
{
    mcp_server *s = c->srv;
    adbc_device_entry *l = NULL;
    size_t n = 0;
    if (list_all(c, &l, &n, 1) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    mcp_dev *active = s->active;
    pthread_mutex_unlock(&s->state_lock);
    char *out = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&out, &cap);
    if (!f) {
        adbc_devices_free(l);
        return call_fail(c, "out of memory");
    }
    if (!n)
        fprintf(f, "no devices (connect one by USB, start an emulator, or list a TCP device "
                   "under [device] targets in the config)\n");
    for (size_t i = 0; i < n; i++) {
        const adbc_device_entry *e = &l[i];
        fprintf(f, "%s\t%s\ttransport:%s", e->serial, adbc_device_state_text(e), e->transport);
        if (e->model[0])
            fprintf(f, " model:%s", e->model);
        if (strncmp(e->serial, "emulator-", 9) == 0)
            fprintf(f, " kind:emulator");
        else if (listed(s, e->serial))
            fprintf(f, " allowlisted");
        if (active && strcmp(active->serial, e->serial) == 0)
            fprintf(f, " [active]");
        if (e->error && e->message[0])
            fprintf(f, " (%s)", e->message);
        fputc('\n', f);
    }
    fprintf(f, "%s", active ? "" : "no device selected: select_device chooses one (with "
                                   "exactly one ready, it is used automatically)\n");
    fclose(f);
    call_text_raw(c, out ? out : "");
    free(out);
    adbc_devices_free(l);
    return 0;
}
