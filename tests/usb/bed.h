/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated USB test bed.
 *
 * USB devices that exist only in this process: umockdev puts them in a fake
 * /sys and /dev (the program must run under umockdev-wrapper), libusb finds
 * them through its normal sysfs/udev paths, and every usbdevfs ioctl on
 * their device nodes is answered here: URBs are cut into USB packets, bulk
 * OUT data is read the way adbd reads it (fixed 16 KiB blocks, a header
 * transfer then payload transfers), and an adbc session in the device role
 * answers as adbd would, with a few built-in services. docs/usb.md explains
 * the design.
 *
 * Create the bed before anything calls libusb_init().
 */
#ifndef ADBC_TEST_USB_BED_H
#define ADBC_TEST_USB_BED_H

#include <stddef.h>
#include <stdint.h>

typedef struct bed bed;
typedef struct bed_dev bed_dev;

typedef enum bed_kind {
    BED_ADB = 0,      /* an ADB interface (ff/42/01) */
    BED_FASTBOOT,     /* a fastboot interface (ff/42/03): the bootloader */
    BED_NOT_ADB       /* a vendor interface that is not ADB (ff/ff/00) */
} bed_kind;

typedef enum bed_auth {
    BED_AUTH_KEY = 0,   /* AUTH required; the bed's host key is authorized */
    BED_AUTH_NONE,      /* CNXN at once, no AUTH */
    BED_AUTH_PROMPT     /* AUTH required, no key accepted: the prompt stays up */
} bed_auth;

typedef struct bed_dev_spec {
    const char *port;       /* "1" -> sysfs name 1-1 on bus 1; "2.3" for a hub */
    unsigned bus, devnum;   /* node /dev/bus/usb/BBB/DDD */
    uint16_t vid, pid;
    const char *serial;     /* iSerialNumber; NULL: none */
    int sysfs_serial;       /* also give sysfs a "serial" attribute */
    const char *product;    /* iProduct; NULL: none */
    bed_kind kind;
    int mtp_first;          /* a non-ADB interface before the ADB one */
    uint16_t max_packet;    /* bulk wMaxPacketSize; 0 = 512 */
    uint32_t max_payload;   /* what the device offers in CNXN; 0 = 1 MiB */
    const char *banner;     /* the device's CNXN banner; NULL: a "device::" default */
    bed_auth auth;
    int silent;             /* the device never answers (offline) */
    int claimed;            /* another program holds the interface (EBUSY) */
    int no_access;          /* the node is not readable/writable (EACCES) */
} bed_dev_spec;

typedef struct bed_stats {
    unsigned out_transfers;   /* bulk OUT URBs */
    unsigned out_zlps;        /* zero-length OUT transfers (or ZERO_PACKET flags) */
    unsigned in_transfers;    /* bulk IN URBs completed */
    unsigned max_in_request;  /* largest bulk IN URB length submitted */
    unsigned packets_in;      /* ADB packets the device received */
    unsigned claims;          /* successful CLAIMINTERFACE */
    char error[256];          /* what broke the device's USB reader, "" if nothing */
} bed_stats;

/* Create the test bed (and $ANDROID_USER_HOME with a host key, unless the
 * variable is set already). NULL when not run under umockdev-wrapper. */
bed *bed_new(void);

/* Plug in a device. NULL (and a message) when its port or device node was
 * taken by a device plugged in before, even one since unplugged. */
bed_dev *bed_add(bed *b, const bed_dev_spec *spec);

/* Unplug it: URBs in flight fail with ENODEV, later ioctls too, and a
 * "remove" uevent goes out. */
void bed_unplug(bed_dev *d);

bed_stats bed_dev_stats(bed_dev *d);

/* Put a file on the device (what sync: serves), or get a copy of one:
 * free() it; NULL when there is none. */
void bed_dev_put_file(bed_dev *d, const char *path, const void *data, size_t len, unsigned mode);
void *bed_dev_get_file(bed_dev *d, const char *path, size_t *len, unsigned *mode);

/* The device node path, "/dev/bus/usb/001/002". */
const char *bed_dev_node(const bed_dev *d);

void bed_free(bed *b);

#endif
