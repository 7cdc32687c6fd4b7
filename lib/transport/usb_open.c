/* SPDX-License-Identifier: Apache-2.0 */
/* Choosing and opening a USB device: by serial, by port path, or the only
 * one attached; and the messages for what usually goes wrong (permissions,
 * an adb server holding the interface, a device that went away). */
#include "transport/usb_int.h"

#include <stdio.h>
#include <string.h>

int usb_fail(int lrc, const char *what, const adbc_usb_device *d)
{
    char name[160];
    usb_describe(d, name, sizeof name);
    switch (lrc) {
    case LIBUSB_ERROR_ACCESS:
        return core_fail(ADBC_EPERM,
                         "%s: permission denied %s /dev/bus/usb/%03u/%03u: add a udev rule such as "
                         "SUBSYSTEM==\"usb\", ATTR{idVendor}==\"%04x\", MODE=\"0660\", "
                         "GROUP=\"plugdev\", TAG+=\"uaccess\" (in "
                         "/etc/udev/rules.d/51-android.rules), be in the plugdev group, then "
                         "`sudo udevadm control --reload-rules` and replug the device; see "
                         "docs/usb.md",
                         name, what, d->bus, d->address, d->vendor_id);
    case LIBUSB_ERROR_BUSY:
        return core_fail(ADBC_EBUSY,
                         "%s: the ADB interface is claimed by another program: a running adb "
                         "server (`adb kill-server` stops it, adbc-serve's --adb-server too), or "
                         "adbc-serve or an adbc-snap session holding the device (go through it: "
                         "adbc-snap uses a session by itself; or stop it), then retry",
                         name);
    case LIBUSB_ERROR_NO_DEVICE:
        return core_fail(ADBC_ENOTFOUND,
                         "%s: the device disconnected while %s it: reconnect it and retry", name,
                         strncmp(what, "opening", 7) == 0 ? "opening" : "setting up");
    case LIBUSB_ERROR_NO_MEM:
        return core_fail(ADBC_ENOMEM, "%s: out of memory %s it", name, what);
    default:
        return core_fail(ADBC_EIO, "%s: failed %s it: %s", name, what, libusb_strerror(lrc));
    }
}

/* "SERIAL (1-4), SERIAL2 (1-5)" for messages. */
static void list_names(const usb_found *f, size_t n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off + 1 < len; i++) {
        char one[160];
        usb_describe(&f[i].info, one, sizeof one);
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", one + 4);
    }
}

/* Index of the device serial selects, or a negative error. */
static int choose(const usb_found *f, size_t n, const char *serial)
{
    char names[512];
    list_names(f, n, names, sizeof names);
    if (serial && strncmp(serial, "usb:", 4) == 0) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].info.path, serial + 4) == 0)
                return (int)i;
        return core_fail(ADBC_ENOTFOUND, "no ADB device on USB port %s%s%s", serial + 4,
                         n ? "; attached: " : " (none attached)", names);
    }
    if (serial) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].info.serial, serial) == 0)
                return (int)i;
        return core_fail(ADBC_ENOTFOUND, "no USB device with serial \"%s\"%s%s", serial,
                         n ? "; attached: " : " (no ADB device on USB)", names);
    }
    size_t adb = 0, pick = 0;
    for (size_t i = 0; i < n; i++)
        if (f[i].info.protocol == ADBC_USB_PROTOCOL_ADB) {
            adb++;
            pick = i;
        }
    if (adb == 1)
        return (int)pick;
    if (adb > 1)
        return core_fail(ADBC_EINVAL,
                         "%zu USB devices are attached (%s): choose one by serial (-s SERIAL or "
                         "ANDROID_SERIAL)",
                         adb, names);
    if (n > 0) /* only devices in fastboot mode: let the open say so */
        return 0;
    return core_fail(ADBC_ENOTFOUND,
                     "no device with an ADB interface on USB: connect it with a data cable, "
                     "enable USB debugging (Settings > Developer options) and allow this "
                     "computer; `adbc-snap devices` lists what is found");
}

int adbc_transport_usb(adbc_transport **out, const char *serial)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    libusb_context *ctx;
    int rc = usb_context_new(&ctx, 1);
    if (rc < 0)
        return rc;
    usb_found *found;
    size_t n;
    rc = usb_scan(ctx, &found, &n);
    if (rc == 0) {
        rc = choose(found, n, serial);
        if (rc >= 0)
            rc = usb_transport_open(out, ctx, &found[rc]);
    }
    usb_found_free(found, n);
    if (rc < 0)
        libusb_exit(ctx);
    return rc < 0 ? core_fail_keep(rc) : 0;
}
