/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — finding devices and choosing one: the `adb devices -l` listing
 * across USB, emulators and given TCP targets, the one rule every tool uses
 * to choose a device, connecting by serial, and waiting for a device.
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
                             has none), "emulator-N" or HOST:PORT */
    char transport[8];    /* "usb", "local" (an emulator port) or "tcp" */
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
    int local;           /* 1 (default): also the emulators: an adbd answering on
                            127.0.0.1 at an odd port P from 5555 up to
                            $ADB_LOCAL_TRANSPORT_MAX_PORT (default 5585) is
                            "emulator-(P-1)"; 0: not scanned */
    int remembered;      /* 1 (default): also the remembered TCP devices
                            (adbc_remembered_list), after the targets given; 0: not */
} adbc_devices_opts;

/* Defaults as documented above. */
ADBC_API void adbc_devices_opts_init_sized(adbc_devices_opts *opts, size_t size);
#define adbc_devices_opts_init(o) adbc_devices_opts_init_sized((o), sizeof *(o))

/* List the USB devices with an ADB or fastboot interface (bus order), the
 * emulators (port order; all ports are tried at once, so with none running
 * this costs a few milliseconds, and ports that accept but never answer are
 * probed in parallel, costing one timeout_ms in all), then each of the ntcp
 * "HOST:PORT" targets in tcp. *out is an array of *count
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

/* Remembered TCP devices: what `adb connect HOST:PORT` keeps in an adb
 * server's list, kept by adbc in a per-user file (one HOST:PORT a line):
 * $ADBC_DEVICES_FILE, else $XDG_STATE_HOME/adbc/devices, else
 * ~/.local/state/adbc/devices. Listings show them (as "tcp" entries) and
 * the selection rule counts them as it counts USB devices and emulators.
 *
 * adbc_remembered_path: the file's path into buf. adbc_remembered_list:
 * the serials (*out NULL and *count 0 when none; free with
 * adbc_remembered_free). adbc_remembered_add: 0, or 1 when it was there
 * already; ADBC_EINVAL when serial is not HOST:PORT. adbc_remembered_remove:
 * that one (ADBC_ENOTFOUND when it is not remembered), or all with NULL. */
ADBC_API int adbc_remembered_path(char *buf, size_t cap);
ADBC_API int adbc_remembered_list(char ***out, size_t *count);
ADBC_API void adbc_remembered_free(char **list, size_t count);
ADBC_API int adbc_remembered_add(const char *serial);
ADBC_API int adbc_remembered_remove(const char *serial);

/* The selection rule, the same in adbc-snap, adbc-mcp and here. A serial is
 *   "HOST:PORT" or "[v6]:PORT"  a TCP device (adb connect's form);
 *   "emulator-N"                the adbd on 127.0.0.1:N+1;
 *   "usb:PATH"                  the USB device at that port path ("1-4.2");
 *   "fd:N"                      the usbfs descriptor N this process holds (termux-usb);
 *   "NAME._adb-tls-connect._tcp", "NAME._adb._tcp"
 *                               the mDNS/DNS-SD service instance NAME (see mdns.h);
 *   anything else               a USB serial, else an mDNS instance of that name.
 * With none given: $ANDROID_SERIAL if set and not empty, else the only
 * device among the USB devices, the emulators and the remembered devices (ADBC_EINVAL when there are
 * several, the message lists them; ADBC_ENOTFOUND when there is none).
 *
 * adbc_device_serial returns the serial to use: given when not NULL or "",
 * else $ANDROID_SERIAL when set and not "", else NULL (the only device). */
ADBC_API const char *adbc_device_serial(const char *given);

/* 1 when serial names a TCP device by its address (adb's rule: it has a
 * colon, and is not adbc's "usb:PATH" or "fd:N"), else 0 (also for NULL).
 * "emulator-N" and mDNS instances are reached over TCP too but are names,
 * not addresses: 0. The one place this is decided, for listings that take
 * TCP targets apart from USB serials. */
ADBC_API int adbc_device_is_tcp(const char *serial);

/* Find the device the rule selects (serial as above; NULL: the rule's
 * default) and fill *out as a listing would (probed when opts->probe).
 * opts may be NULL. ADBC_ENOTFOUND: no such device; ADBC_EINVAL: several. */
ADBC_API int adbc_device_find(adbc_device_entry *out, const char *serial, const adbc_devices_opts *opts);

/* Connect to the device the rule selects. opts may be NULL. */
ADBC_API int adbc_device_connect(adbc_conn **out, const char *serial, const adbc_conn_opts *opts);

/* Which transports adbc_device_wait accepts (adb's wait-for-TRANSPORT-...). */
typedef enum adbc_wait_transport {
    ADBC_WAIT_ANY = 0,  /* wait-for-device, wait-for-any-... */
    ADBC_WAIT_USB,      /* wait-for-usb-...: USB devices */
    ADBC_WAIT_LOCAL     /* wait-for-local-...: emulators and TCP devices */
} adbc_wait_transport;

/* Wait until the device the rule selects is listed over transport in
 * state (ADBC_DEV_DEVICE, ADBC_DEV_RECOVERY, ADBC_DEV_RESCUE,
 * ADBC_DEV_SIDELOAD, ADBC_DEV_BOOTLOADER), polling every 250 ms with a
 * listing as adbc_devices_list makes it; state ADBC_DEV_UNKNOWN waits until
 * it is gone instead (adb's wait-for-disconnect). *out (may be NULL) gets
 * its entry. timeout_ms < 0 waits forever. ADBC_ETIMEDOUT when it is not
 * ready in time (the message says what was seen last); ADBC_EINVAL when
 * no serial is given and several devices are ready. opts may be NULL. */
ADBC_API int adbc_device_wait(adbc_device_entry *out, const char *serial, adbc_wait_transport transport,
                     adbc_dev_state state, int timeout_ms, const adbc_devices_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
