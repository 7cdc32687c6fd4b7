/* Device discovery and selection: the `adb devices -l` listing over USB and
 * given TCP targets, each probed with a short handshake, and connecting to
 * the device a serial names. */
#include "adbc/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/usb.h"
#include "core/internal.h"

void adbc_devices_opts_init_sized(adbc_devices_opts *out, size_t size)
{
    adbc_devices_opts d, *o = &d;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->usb = 1;
    o->probe = 1;
    o->timeout_ms = 3000;
    adbc_abi_give(out, size, &d, sizeof d);
}

static void note_error(adbc_device_entry *e, int rc)
{
    e->error = rc;
    snprintf(e->message, sizeof e->message, "%s",
             *adbc_last_error() ? adbc_last_error() : adbc_strerror(rc));
}

/* Copy into a fixed field, cutting what does not fit (fields are labels). */
static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = src ? strnlen(src, len - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Run the handshake on t (taken) and record what it shows. */
static void probe_conn(adbc_device_entry *e, adbc_transport *t, const adbc_devices_opts *o,
                       adbc_keyring *keys)
{
    adbc_conn_opts co;
    adbc_conn_opts_init(&co);
    co.connect_timeout_ms = o->timeout_ms;
    co.io_timeout_ms = o->timeout_ms;
    co.auth_timeout_ms = 1; /* a prompt on the device is an answer: unauthorized */
    co.keys = keys;
    adbc_conn *c;
    int rc = t ? adbc_conn_open(&c, t, &co) : adbc_connect(&c, e->serial, &co);
    if (rc == 0) {
        const adbc_banner *b = adbc_conn_banner(c);
        e->state = b->state;
        copy_str(e->product, sizeof e->product, b->product);
        copy_str(e->model, sizeof e->model, b->model);
        copy_str(e->device, sizeof e->device, b->device);
        adbc_conn_close(c);
        return;
    }
    e->state = rc == ADBC_EUNAUTHORIZED ? ADBC_DEV_UNAUTHORIZED : ADBC_DEV_OFFLINE;
    note_error(e, rc);
    if (rc == ADBC_EUNAUTHORIZED)
        snprintf(e->message, sizeof e->message,
                 "device unauthorized: this computer's key is not accepted yet; accept the "
                 "\"Allow USB debugging?\" prompt on the device (tick \"Always allow\") and "
                 "retry");
}

static void usb_entry(adbc_device_entry *e, const adbc_usb_device *u, const adbc_devices_opts *o,
                      adbc_keyring *keys)
{
    copy_str(e->transport, sizeof e->transport, "usb");
    copy_str(e->usb_path, sizeof e->usb_path, u->path);
    if (u->serial[0])
        copy_str(e->serial, sizeof e->serial, u->serial);
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
        copy_str(sel, sizeof sel, u->serial);
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, sel);
    if (rc < 0) {
        note_error(e, rc);
        return;
    }
    if (!o->probe) {
        adbc_transport_free(t);
        return;
    }
    probe_conn(e, t, o, keys);
}

int adbc_devices_list(adbc_device_entry **out, size_t *count, const char *const *tcp, size_t ntcp,
                      const adbc_devices_opts *opts)
{
    *out = NULL;
    *count = 0;
    adbc_devices_opts def;
    adbc_devices_opts_init(&def);
    if (adbc_abi_take(&def, sizeof def, opts, "adbc_devices_opts") < 0)
        return ADBC_EINVAL;
    opts = &def;
    adbc_usb_device *usb = NULL;
    size_t nusb = 0;
    if (opts->usb) {
        int rc = adbc_usb_list(&usb, &nusb);
        if (rc < 0)
            return rc;
    }
    size_t n = nusb + ntcp;
    if (n == 0)
        return 0;
    adbc_device_entry *list = adbc_calloc(n, sizeof *list);
    if (!list) {
        adbc_usb_list_free(usb);
        return adbc_fail(ADBC_ENOMEM, "out of memory listing devices");
    }
    /* One keyring for every probe rather than loading it per device; if it
     * cannot be loaded, each handshake reports why. */
    adbc_keyring *keys = opts->keys, *own = NULL;
    if (!keys && opts->probe && adbc_keyring_load_default(&own, 1) == 0)
        keys = own;
    for (size_t i = 0; i < nusb; i++)
        usb_entry(&list[i], &usb[i], opts, keys);
    for (size_t i = 0; i < ntcp; i++) {
        adbc_device_entry *e = &list[nusb + i];
        copy_str(e->serial, sizeof e->serial, tcp[i]);
        copy_str(e->transport, sizeof e->transport, "tcp");
        e->state = ADBC_DEV_UNKNOWN;
        if (opts->probe)
            probe_conn(e, NULL, opts, keys);
    }
    adbc_keyring_free(own);
    adbc_usb_list_free(usb);
    adbc_clear_error();
    *out = list;
    *count = n;
    return 0;
}

void adbc_devices_free(adbc_device_entry *list)
{
    adbc_free(list);
}

const char *adbc_device_state_text(const adbc_device_entry *e)
{
    if (e->error == ADBC_EPERM)
        return "no permissions";
    if (e->error == ADBC_EBUSY)
        return "busy";
    if (e->state == ADBC_DEV_UNKNOWN)
        return e->error ? "offline" : "unknown";
    return adbc_dev_state_name(e->state);
}

/* adb's rule: a serial with a colon is a TCP address, except adbc's
 * "usb:PATH" and "fd:N". */
static int is_tcp(const char *serial)
{
    return strncmp(serial, "usb:", 4) != 0 && strncmp(serial, "fd:", 3) != 0 &&
           strchr(serial, ':') != NULL;
}

/* "fd:N": a usbfs descriptor this process was handed (termux-usb). */
static int connect_fd(adbc_conn **out, const char *serial, const adbc_conn_opts *opts)
{
    char *end;
    long fd = strtol(serial + 3, &end, 10);
    if (serial[3] == '\0' || *end != '\0' || fd < 0 || fd > 1000000)
        return adbc_fail(ADBC_EINVAL, "\"%s\": expected fd:N, N an open USB device descriptor",
                         serial);
    adbc_transport *t;
    int rc = adbc_transport_usb_fd(&t, (int)fd, 0);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, opts);
}

int adbc_device_connect(adbc_conn **out, const char *serial, const adbc_conn_opts *opts)
{
    *out = NULL;
    if (!serial || !*serial)
        serial = getenv("ANDROID_SERIAL");
    if (serial && !*serial)
        serial = NULL;
    if (serial && is_tcp(serial))
        return adbc_connect(out, serial, opts);
    if (serial && strncmp(serial, "fd:", 3) == 0)
        return connect_fd(out, serial, opts);
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, serial);
    if (rc < 0)
        return rc;
    return adbc_conn_open(out, t, opts);
}
