/* adbc — finding devices and choosing one: the `adb devices -l` listing
 * across USB and given TCP targets, and connecting by serial.
 *
 * A device's state comes from a short ADB handshake, as an adb server learns
 * it: "device", "recovery", "sideload", "rescue" from the banner it sends;
 * "unauthorized" when it asks for the "Allow USB debugging?" prompt (adbc
 * offers its key, so the prompt appears on the device); "offline" when it
 * does not answer in time. A device in fastboot mode is listed as
 * "bootloader" without a handshake: fastboot is not ADB.
 */
#ifndef ADBC_DEVICES_H
#define ADBC_DEVICES_H

#include "adbc/version.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/auth.h"
#include "adbc/banner.h"
#include "adbc/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_device_entry {
    char serial[256];     /* what -s takes: the USB serial ("usb:PATH" when the device
                             has none) or HOST:PORT */
    char transport[8];    /* "usb" or "tcp" */
    char usb_path[64];    /* "1-4.2"; "" for TCP */
    adbc_dev_state state; /* from the handshake (see above); ADBC_DEV_UNKNOWN when it
                             was not probed or could not be (see error) */
    int error;            /* 0, or why the handshake failed or could not be tried:
                             ADBC_EPERM no permission, ADBC_EBUSY another program holds
                             the interface, ADBC_EUNAUTHORIZED, ADBC_ETIMEDOUT ... */
    char message[512];    /* that error's message (cause and remedy); "" when none */
    char product[96];     /* ro.product.name, ro.product.model, ro.product.device */
    char model[96];       /* from the banner; "" when unknown */
    char device[96];
    uint16_t vendor_id, product_id; /* USB only */
} adbc_device_entry;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_devices_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int usb;             /* 1 (default): list USB devices; 0: only the TCP targets */
    int probe;           /* 1 (default): a handshake with each device for its state */
    int timeout_ms;      /* per device, for the handshake; default 3000 */
    adbc_keyring *keys;  /* keys to offer; NULL: the default keys (created if missing,
                            as adb does) */
} adbc_devices_opts;

/* Defaults as documented above. */
ADBC_API void adbc_devices_opts_init_sized(adbc_devices_opts *opts, size_t size);
#define adbc_devices_opts_init(o) adbc_devices_opts_init_sized((o), sizeof *(o))

/* List the USB devices with an ADB or fastboot interface (bus order), then
 * each of the ntcp "HOST:PORT" targets in tcp. *out is an array of *count
 * entries, freed with adbc_devices_free (NULL when there are none). A device
 * that cannot be reached is still an entry, with its error. opts may be NULL.
 * Fails only when memory runs out or USB cannot be listed at all (no
 * libusb backend, no /dev/bus/usb): then opts->usb = 0 still lists the TCP
 * targets. */
ADBC_API int adbc_devices_list(adbc_device_entry **out, size_t *count, const char *const *tcp, size_t ntcp,
                      const adbc_devices_opts *opts);
ADBC_API void adbc_devices_free(adbc_device_entry *list);

/* The state as `adb devices` words it: "device", "unauthorized", "offline",
 * "bootloader", "recovery", ..., "no permissions" (ADBC_EPERM), "busy"
 * (ADBC_EBUSY), "unknown" (not probed). */
ADBC_API const char *adbc_device_state_text(const adbc_device_entry *e);

/* Connect to the device serial names: "HOST:PORT" (or "[v6]:PORT") over TCP,
 * "usb:PATH" or a USB serial over USB, "fd:N" over the usbfs descriptor N
 * this process holds (termux-usb; it stays open). NULL or "": $ANDROID_SERIAL if set,
 * else the only USB device with ADB (ADBC_EINVAL when there are several, the
 * message lists them; ADBC_ENOTFOUND when there is none). opts may be NULL. */
ADBC_API int adbc_device_connect(adbc_conn **out, const char *serial, const adbc_conn_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
