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
 *  - an emulator is told from a physical device by facts only:
 *    ro.kernel.qemu / ro.boot.qemu = 1 read from the device itself, never
 *    its name (ops_device_kind); if those cannot be read it is refused;
 *  - a physical device is used only when its serial (as listed, or its
 *    ro.serialno) is on the allowlist;
 *  - a call holds the device's lock for its whole run, taken within the
 *    call's deadline. */
#include "mcp.h"
#include "ops_termux.h"
#include "ops_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adbc/devices.h"
#include "adbc/error.h"
#include "adbc/mdns.h"

static mcp_server *srv(const ops_call *c)
{
    return c->fe->user;
}

static void log_line(void *user, const char *line)
{
    (void)user;
    mcp_log("%s", line);
}

void mcp_front(const mcp_server *s, ops_front *fe)
{
    memset(fe, 0, sizeof *fe);
    fe->device = call_device;
    fe->device_done = call_device_done;
    fe->list_devices = device_list_text;
    fe->select_device = device_select;
    fe->log = log_line;
    fe->user = (void *)s;
    fe->allow = OPS_TOOL_DEVICES | OPS_TOOL_HOSTFILE | (s->allow_shell ? OPS_TOOL_SHELL : 0) |
                (ops_termux_available() ? OPS_TOOL_TERMUX : 0) | s->optin;
    fe->call_ms = s->cfg.call_ms;
    fe->settle_ms = s->cfg.settle_ms;
    fe->shot_dir = s->cfg.screenshot_dir;
    fe->uninstall = s->uninstall;
}

int devices_init(mcp_server *s)
{
    ops_pool_opts o;
    ops_pool_opts_init(&o);
    o.name = MCP_NAME;
    o.connect_ms = s->cfg.connect_ms;
    o.io_ms = s->cfg.call_ms;
    o.check_kind = 1;
    o.busy_hint = " (the call's timeout, [timeouts] call_ms)";
    ops_err e;
    if (ops_pool_init(&s->pool, &o, &e) != 0) {
        mcp_log("%s", e.msg);
        return -1;
    }
    ops_cond_init(&s->probe_done);
    return 0;
}

void devices_free(mcp_server *s)
{
    ops_pool_free(&s->pool);
    pthread_cond_destroy(&s->probe_done);
    s->active = NULL;
}

static ops_dev *dev_find(ops_call *c, const char *serial)
{
    ops_err e;
    ops_dev *d = ops_pool_dev(&srv(c)->pool, serial, &e);
    if (!d)
        ops_call_err(c, &e);
    return d;
}

/* The phones announced by mDNS ([device] mdns = true): each connect
 * service, probed at its address and named INSTANCE.SERVICE, appended to
 * *l. A phone announcing _adb-tls-connect._tcp and _adb._tcp on one
 * address is one device, probed once and named by the first (the name
 * docs/mcp.md gives; device_select takes the other too). A browse that
 * cannot run (no multicast interface) adds nothing. */
static int add_mdns(ops_call *c, adbc_device_entry **l, size_t *n, int timeout_ms)
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
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    for (size_t i = 0; i < nsv; i++) {
        if (!sv[i].port || !sv[i].addr[0] || strcmp(sv[i].service, ADBC_MDNS_TLS_PAIRING) == 0)
            continue;
        adbc_mdns_addr(addr[k], sizeof addr[k], &sv[i]);
        size_t j = 0;
        while (j < k && strcmp(addr[j], addr[k]) != 0)
            j++;
        if (j < k) { /* the same adbd under a second service */
            if (strcmp(sv[i].service, ADBC_MDNS_TLS_CONNECT) == 0)
                which[j] = i;
            continue;
        }
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
        int left = ops_call_remaining(c);
        if (o.timeout_ms > left)
            o.timeout_ms = left;
        rc = adbc_devices_list(&m, &nm, addrs, k, &o);
    }
    adbc_device_entry *grown = rc == 0 && nm ? realloc(*l, (*n + nm) * sizeof **l) : NULL;
    if (rc < 0 || (nm && !grown)) {
        rc = rc < 0 ? ops_call_adbc(c, rc, "probing the phones announced by mDNS")
                    : ops_call_fail(c, OPS_EFAIL, "out of memory");
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
static int list_all(ops_call *c, adbc_device_entry **out, size_t *n, int with_mdns)
{
    mcp_server *s = srv(c);
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.usb = s->cfg.usb;
    int left = ops_call_remaining(c);
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
        return ops_call_adbc(c, rc, "listing devices");
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

/* The allowlist rule (ops_allowed, shared with the agent). */
static int listed(const mcp_server *s, const char *serial)
{
    return ops_listed(serial, (const char *const *)s->cfg.allowlist, s->cfg.nallow);
}

static int allowed(const mcp_server *s, const ops_dev *d)
{
    return ops_allowed(d->kind, d->serial, d->serialno, (const char *const *)s->cfg.allowlist,
                       s->cfg.nallow);
}

/* Lock d, connect if needed, apply the safety rules. */
static int take(ops_call *c, ops_dev *d)
{
    mcp_server *s = srv(c);
    ops_err e;
    if (ops_dev_take(&s->pool, d, ops_call_remaining(c), c->deadline, &e) != 0)
        return ops_call_err(c, &e);
    if (!allowed(s, d)) {
        mcp_log("refused %s: physical device not on the allowlist", d->serial);
        char serials[512];
        snprintf(serials, sizeof(serials), "\"%s\"%s%s%s", d->serial,
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? " (or its ro.serialno \"" : "",
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? d->serialno : "",
                 d->serialno[0] && strcmp(d->serialno, d->serial) ? "\")" : "");
        ops_call_fail(c, OPS_EFAIL,
                      "refused: %s is a physical device (not an emulator: neither "
                     "ro.kernel.qemu nor ro.boot.qemu is 1 on it, whatever its name) and it "
                     "is not on the allowlist. Physical devices are off unless allowed by "
                     "name: a person must add %s to allowlist under [device] in %s and restart "
                     "adbc-mcp. Until then use an emulator.",
                  d->serial, serials, s->config_path ? s->config_path : "the config file");
        ops_dev_drop(d);
        ops_dev_give(&s->pool, d, OPS_OK);
        return -1;
    }
    c->dev = d;
    return 0;
}

/* The only device, by the selection rule: its serial into serial, or -1
 * failing c (none, several, not ready). */
static int pick_only(ops_call *c, char *serial, size_t cap)
{
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
            rc = ops_call_fail(c, OPS_EFAIL,
                               "no device found: connect one by USB, start an emulator, "
                              "list a TCP device under [device] targets in the config, or "
                              "name one (a phone announced by mDNS is used only when "
                              "named: -s INSTANCE, [device] default or select_device)");
        else if (n == 1)
            rc = ops_call_fail(c, OPS_EFAIL,
                               "the only device, %s, is not ready: %s%s%s. Fix the state "
                              "shown (accept the USB debugging prompt, reconnect), then "
                              "retry", l[0].serial, adbc_device_state_text(&l[0]),
                           l[0].message[0] ? ": " : "", l[0].message);
        else
            rc = ops_call_fail(c, OPS_EFAIL,
                               "%zu devices are connected and none is selected: call "
                              "select_device with one of: %s", n, names);
        adbc_devices_free(l);
        return rc;
    }
    snprintf(serial, cap, "%s", l[0].serial);
    adbc_devices_free(l);
    return 0;
}

/* Take d for c and make it the active device (when none is yet). */
static int take_active(ops_call *c, ops_dev *d)
{
    mcp_server *s = srv(c);
    if (!d || take(c, d) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    if (!s->active)
        s->active = d;
    pthread_mutex_unlock(&s->state_lock);
    return 0;
}

/* The first choice of the device (no active one, no default), once for all
 * the calls that need it at the same time: the first lists the devices,
 * takes the only one and makes it active; those that came meanwhile wait
 * for that (within their own deadlines), then take the active device, or
 * fail as it failed. Twenty first calls at once would otherwise each probe
 * every device, and a TCP device answering twenty handshakes at once can
 * look offline to some of them. */
static int first_choice(ops_call *c)
{
    mcp_server *s = srv(c);
    pthread_mutex_lock(&s->state_lock);
    if (s->probing) {
        unsigned long gen = s->probe_gen;
        while (s->probing && s->probe_gen == gen)
            if (ops_cond_wait_until(&s->probe_done, &s->state_lock, c->deadline) == ETIMEDOUT)
                break;
        int done = s->probe_gen != gen;
        ops_dev *d = s->active;
        ops_err e = s->probe_err;
        pthread_mutex_unlock(&s->state_lock);
        if (!done)
            return ops_call_fail(c, OPS_ETIMEOUT, "the devices were still being listed when "
                                 "this call's time ran out ([timeouts] call_ms): retry");
        return d ? take(c, d) : ops_call_err(c, &e);
    }
    ops_dev *d = s->active;
    if (!d)
        s->probing = 1;
    pthread_mutex_unlock(&s->state_lock);
    if (d) /* chosen while this call looked */
        return take(c, d);
    char serial[sizeof d->serial];
    int rc = pick_only(c, serial, sizeof serial) != 0 ? -1 : take_active(c, dev_find(c, serial));
    pthread_mutex_lock(&s->state_lock);
    s->probe_err = c->err;
    s->probing = 0;
    s->probe_gen++;
    pthread_cond_broadcast(&s->probe_done);
    pthread_mutex_unlock(&s->state_lock);
    return rc;
}

int call_device(ops_call *c)
{
    mcp_server *s = srv(c);
    pthread_mutex_lock(&s->state_lock);
    ops_dev *d = s->active;
    pthread_mutex_unlock(&s->state_lock);
    if (d)
        return take(c, d);
    if (!s->cfg.default_serial)
        return first_choice(c);
    return take_active(c, dev_find(c, s->cfg.default_serial));
}

void call_device_done(ops_call *c)
{
    ops_dev *d = c->dev;
    if (!d)
        return;
    c->dev = NULL;
    ops_dev_give(&srv(c)->pool, d, OPS_OK);
}

int device_select(ops_call *c, const char *serial)
{
    mcp_server *s = srv(c);
    adbc_device_entry *l = NULL;
    size_t n = 0;
    if (list_all(c, &l, &n, 1) != 0)
        return -1;
    const adbc_device_entry *e = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].serial, serial) == 0)
            e = &l[i];
    /* A phone listed under one mDNS service is found by its instance with
     * the other too (add_mdns lists it once). */
    char inst[256], other[256];
    for (size_t i = 0; i < n && !e; i++)
        if (strcmp(l[i].transport, "mdns") == 0 && ops_mdns_instance(inst, sizeof inst, serial) &&
            ops_mdns_instance(other, sizeof other, l[i].serial) && strcmp(inst, other) == 0)
            e = &l[i];
    char names[2048];
    describe(names, sizeof(names), l, n);
    if (!e) {
        int rc = ops_call_fail(c, OPS_EFAIL, "no device '%s'. Connected: %s%s", serial,
                           n ? names : "none (connect one, or list a TCP device under [device] "
                                       "targets in the config)",
                           ops_mdns_instance(inst, sizeof inst, serial) && !s->cfg.mdns
                               ? ". Phones announced by mDNS are listed and selectable only "
                                 "with mdns = true under [device] in the config"
                               : "");
        adbc_devices_free(l);
        return rc;
    }
    if (e->state != ADBC_DEV_DEVICE || e->error) {
        int rc = ops_call_fail(c, OPS_EFAIL,
                               "device %s is %s%s%s: fix that first, then select it again",
                           serial, adbc_device_state_text(e), e->message[0] ? ": " : "",
                           e->message);
        adbc_devices_free(l);
        return rc;
    }
    char listed_as[sizeof e->serial];
    snprintf(listed_as, sizeof listed_as, "%s", e->serial);
    adbc_devices_free(l);
    ops_dev *d = dev_find(c, listed_as);
    if (!d)
        return -1;
    if (take(c, d) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    s->active = d;
    pthread_mutex_unlock(&s->state_lock);
    ops_call_text(c, "selected %s (%s%s%s)", d->serial, ops_kind_name(d->kind),
              d->kind == OPS_KIND_PHYSICAL ? ", on the allowlist" : "",
              "");
    call_device_done(c);
    return 0;
}

int device_list_text(ops_call *c)
{
    mcp_server *s = srv(c);
    adbc_device_entry *l = NULL;
    size_t n = 0;
    if (list_all(c, &l, &n, 1) != 0)
        return -1;
    pthread_mutex_lock(&s->state_lock);
    ops_dev *active = s->active;
    pthread_mutex_unlock(&s->state_lock);
    char *out = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&out, &cap);
    if (!f) {
        adbc_devices_free(l);
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    }
    if (!n)
        fprintf(f, "no devices (connect one by USB, start an emulator, or list a TCP device "
                   "under [device] targets in the config)\n");
    for (size_t i = 0; i < n; i++) {
        const adbc_device_entry *e = &l[i];
        fprintf(f, "%s\t%s\ttransport:%s", e->serial, adbc_device_state_text(e), e->transport);
        if (e->model[0])
            fprintf(f, " model:%s", e->model);
        /* The kind only as the device said it when connected: a name such
         * as emulator-5554 says nothing (ops_device_kind). */
        ops_dev *d = ops_pool_find(&s->pool, e->serial);
        ops_kind kind = OPS_KIND_UNKNOWN;
        if (d && pthread_mutex_trylock(&d->lock) == 0) {
            kind = d->conn ? d->kind : OPS_KIND_UNKNOWN;
            pthread_mutex_unlock(&d->lock);
        }
        if (kind != OPS_KIND_UNKNOWN)
            fprintf(f, " kind:%s", ops_kind_name(kind));
        if (listed(s, e->serial))
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
    ops_call_text_raw(c, out ? out : "");
    free(out);
    adbc_devices_free(l);
    return 0;
}
