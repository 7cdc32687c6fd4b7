/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — USB: find the ADB interface of Android devices and open it as a
 * transport (libusb-1.0).
 *
 * An ADB interface is a vendor-class interface (class 0xff, subclass 0x42,
 * protocol 0x01) with one bulk IN and one bulk OUT endpoint; any vendor's
 * device that has one is found. Fastboot (protocol 0x03) is listed so a
 * device in its bootloader shows up, but it is not ADB and is never opened.
 *
 * Packets go over USB the way adb sends them: each 24-byte header and each
 * payload is its own bulk transfer, a zero-length packet follows every OUT
 * transfer whose length is a multiple of the endpoint's max packet size
 * (adbd reads in fixed-size blocks and would otherwise wait for more), and
 * reads ask for exactly the 24 header bytes, then exactly the payload the
 * header announced. docs/usb.md covers Linux permissions and Termux.
 */
#ifndef ADBC_USB_H
#define ADBC_USB_H

#include "adbc/version.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADBC_USB_CLASS 0xff
#define ADBC_USB_SUBCLASS 0x42
#define ADBC_USB_PROTOCOL_ADB 0x01
#define ADBC_USB_PROTOCOL_FASTBOOT 0x03

/* One USB device with an ADB (or fastboot) interface. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_usb_device {
    char serial[256];       /* iSerialNumber, printable ASCII; "" if it has none or it
                               could not be read (see access) */
    char path[64];          /* "1-4.2": bus and port chain; "" when unknown (a wrapped fd) */
    uint8_t bus, address;   /* the node is /dev/bus/usb/BBB/AAA */
    uint16_t vendor_id, product_id;
    char product[128];      /* iProduct string, "" if unknown */
    uint8_t protocol;       /* ADBC_USB_PROTOCOL_ADB or ADBC_USB_PROTOCOL_FASTBOOT */
    uint8_t interface_number;
    uint8_t ep_in, ep_out;  /* bulk endpoint addresses */
    uint16_t max_packet;    /* wMaxPacketSize of the bulk OUT endpoint */
    int access;             /* 0, or ADBC_EPERM when this user may not open the node */
} adbc_usb_device;

/* Every attached USB device with an ADB or fastboot interface, in bus order.
 * *out is an array of *count entries (NULL when there are none), freed with
 * adbc_usb_list_free(). Devices that cannot be opened are still listed (with
 * access = ADBC_EPERM and their serial from sysfs when readable). */
ADBC_API int adbc_usb_list(adbc_usb_device **out, size_t *count);
ADBC_API void adbc_usb_list_free(adbc_usb_device *list);

/* Open a device's ADB interface and claim it. serial selects by serial
 * number, or by port path as "usb:1-4.2"; NULL takes the only ADB device
 * attached (ADBC_EINVAL when there are several: the message lists them).
 * ADBC_ENOTFOUND: no such device. ADBC_EPERM: the device node is not
 * accessible (the message names the udev rule or group that fixes it).
 * ADBC_EBUSY: another program, usually an adb server, holds the interface.
 * ADBC_EOFFLINE: the device is in fastboot mode. */
ADBC_API int adbc_transport_usb(adbc_transport **out, const char *serial);

/* Open the ADB interface of the device behind an already-open usbfs
 * descriptor (/dev/bus/usb/BBB/AAA opened read-write). This is how Termux
 * programs reach USB: `termux-usb -r -e PROGRAM /dev/bus/usb/...` runs
 * PROGRAM with the descriptor number as its last argument. own: close fd when
 * the transport is destroyed (also on failure). */
ADBC_API int adbc_transport_usb_fd(adbc_transport **out, int fd, int own);

/* The device behind a USB transport. ADBC_EINVAL when t is not one. */
ADBC_API int adbc_transport_usb_info(adbc_usb_device *out, const adbc_transport *t);

#ifdef __cplusplus
}
#endif
#endif
