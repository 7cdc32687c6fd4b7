/* SPDX-License-Identifier: Apache-2.0 */
/* Device discovery: the `adb devices -l` listing over USB, the emulator
 * ports and given TCP targets, each probed with a short handshake. Choosing
 * one device is select.c. */
#include "adbc/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/usb.h"
#include "devices/devices_int.h"
#include "core/internal.h"

void adbc_devices_opts_init_sized(adbc_devices_opts *out, size_t size)
{
    adbc_devices_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->usb = 1;
    o->probe = 1;
    o->timeout_ms = 3000;
    o->local = 1;
    o->remembered = 1;
    core_abi_give(out, size, &d, sizeof d);
}

void devices_note_error(adbc_device_entry *e, int rc)
{
    e->error = rc;
    snprintf(e->message, sizeof e->message, "%s",
             *adbc_last_error() ? adbc_last_error() : adbc_strerror(rc));
}

void devices_copy(char *dst, size_t len, const char *src)
{
    size_t n = src ? strnlen(src, len - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

void devices_probe(adbc_device_entry *e, adbc_transport *t, int timeout_ms, adbc_keyring *keys)
{
    adbc_conn_opts co;
    adbc_conn_opts_init(&co);
    co.connect_timeout_ms = timeout_ms;
    co.io_timeout_ms = timeout_ms;
    co.auth_timeout_ms = 1; /* a prompt on the device is an answer: unauthorized */
    co.keys = keys;
    adbc_conn *c;
    int rc = t ? adbc_conn_open(&c, t, &co) : adbc_connect(&c, e->serial, &co);
    if (rc == 0) {
        const adbc_banner *b = adbc_conn_banner(c);
        e->state = b->state;
        devices_copy(e->product, sizeof e->product, b->product);
        devices_copy(e->model, sizeof e->model, b->model);
        devices_copy(e->device, sizeof e->device, b->device);
        adbc_conn_close(c);
        return;
    }
    e->state = rc == ADBC_EUNAUTHORIZED ? ADBC_DEV_UNAUTHORIZED : ADBC_DEV_OFFLINE;
    devices_note_error(e, rc);
    if (rc == ADBC_EUNAUTHORIZED)
        snprintf(e->message, sizeof e->message,
                 "device unauthorized: this computer's key is not accepted yet; accept the "
                 "\"Allow USB debugging?\" prompt on the device (tick \"Always allow\") and "
                 "retry");
}

static void usb_entry(adbc_device_entry *e, const adbc_usb_device *u, const adbc_devices_opts *o,
                      adbc_keyring *keys)
{
    devices_copy(e->transport, sizeof e->transport, "usb");
    devices_copy(e->usb_path, sizeof e->usb_path, u->path);
    if (u->serial[0])
        devices_copy(e->serial, sizeof e->serial, u->serial);
    else
        snprintf(e->serial, sizeof e->serial, "usb:%s", u->path);
    e->vendor_id = u->vendor_id;
    e->product_id = u->product_id;
    e->state = ADBC_DEV_UNKNOWN;
    if (u->protocol == ADBC_USB_PROTOCOL_FASTBOOT) {
        e->state = ADBC_DEV_BOOTLOADER;
        return;
    }
    if (!o->probe && !u->access)
        return;
    char sel[80];
    if (u->path[0])
        snprintf(sel, sizeof sel, "usb:%s", u->path);
    else
        devices_copy(sel, sizeof sel, u->serial);
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, sel);
    if (rc < 0) {
        devices_note_error(e, rc);
        return;
    }
    if (!o->probe) {
        adbc_transport_free(t);
        return;
    }
    devices_probe(e, t, o->timeout_ms, keys);
}

int adbc_devices_list(adbc_device_entry **out, size_t *count, const char *const *tcp, size_t ntcp,
                      const adbc_devices_opts *opts)
{
    if (!out || !count)
        return core_null(__func__, !out ? "out" : "count");
    *out = NULL;
    *count = 0;
    adbc_devices_opts def;
    adbc_devices_opts_init(&def);
    if (core_abi_take(&def, sizeof def, opts, "adbc_devices_opts") < 0)
        return ADBC_EINVAL;
    opts = &def;
    adbc_usb_device *usb = NULL;
    size_t nusb = 0;
    if (opts->usb) {
        int rc = adbc_usb_list(&usb, &nusb);
        if (rc < 0)
            return rc;
    }
    /* One keyring for every probe rather than loading it per device; if it
     * cannot be loaded, each handshake reports why. */
    adbc_keyring *keys = opts->keys, *own = NULL;
    if (!keys && opts->probe && adbc_keyring_load_default(&own, 1) == 0)
        keys = own;
    adbc_device_entry *emu = NULL;
    size_t nemu = 0;
    if (opts->local) {
        int rc = emu_scan(&emu, &nemu, opts->probe, opts->timeout_ms, keys);
        if (rc < 0) {
            adbc_keyring_free(own);
            adbc_usb_list_free(usb);
            return rc;
        }
    }
    /* The remembered devices after the targets given, each once. */
    char **mem = NULL;
    size_t nmem = 0;
    if (opts->remembered && adbc_remembered_list(&mem, &nmem) < 0) {
        mem = NULL; /* an unreadable file leaves the rest of the listing */
        nmem = 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < nmem; i++) {
        int dup = 0;
        for (size_t j = 0; j < ntcp && !dup; j++)
            dup = strcmp(tcp[j], mem[i]) == 0;
        if (dup)
            core_free(mem[i]);
        else
            mem[k++] = mem[i];
    }
    nmem = k;
    size_t n = nusb + nemu + ntcp + nmem;
    adbc_device_entry *list = n ? core_calloc(n, sizeof *list) : NULL;
    if (n && !list) {
        adbc_remembered_free(mem, nmem);
        adbc_keyring_free(own);
        core_free(emu);
        adbc_usb_list_free(usb);
        return core_fail(ADBC_ENOMEM, "out of memory listing devices");
    }
    for (size_t i = 0; i < nusb; i++)
        usb_entry(&list[i], &usb[i], opts, keys);
    if (nemu)
        memcpy(&list[nusb], emu, nemu * sizeof *emu);
    core_free(emu);
    for (size_t i = 0; i < ntcp + nmem; i++) {
        adbc_device_entry *e = &list[nusb + nemu + i];
        devices_copy(e->serial, sizeof e->serial, i < ntcp ? tcp[i] : mem[i - ntcp]);
        devices_copy(e->transport, sizeof e->transport, "tcp");
        e->state = ADBC_DEV_UNKNOWN;
        if (opts->probe)
            devices_probe(e, NULL, opts->timeout_ms, keys);
    }
    adbc_remembered_free(mem, nmem);
    adbc_keyring_free(own);
    adbc_usb_list_free(usb);
    adbc_clear_error();
    *out = list;
    *count = n;
    return 0;
}

void adbc_devices_free(adbc_device_entry *list)
{
    core_free(list);
}

const char *adbc_device_state_text(const adbc_device_entry *e)
{
    if (!e)
        return "";
    if (e->error == ADBC_EPERM)
        return "no permissions";
    if (e->error == ADBC_EBUSY)
        return "busy";
    if (e->state == ADBC_DEV_UNKNOWN)
        return e->error ? "offline" : "unknown";
    return adbc_dev_state_name(e->state);
}

