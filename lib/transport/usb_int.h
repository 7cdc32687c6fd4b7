/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the pieces of the USB transport that its files share. */
#ifndef ADBC_TRANSPORT_USB_INT_H
#define ADBC_TRANSPORT_USB_INT_H

#include <libusb.h>
#include <pthread.h>
#include <stdatomic.h>

#include "adbc/usb.h"
#include "core/internal.h"

/* The interface a descriptor match picked. */
typedef struct usb_iface {
    uint8_t number;
    uint8_t protocol;    /* ADBC_USB_PROTOCOL_ADB or _FASTBOOT */
    uint8_t ep_in, ep_out;
    uint16_t max_packet; /* of ep_out, the one zero-length packets depend on */
} usb_iface;

/* Look through a configuration for an ADB interface (preferred) or else a
 * fastboot one: class 0xff, subclass 0x42, protocol 0x01 / 0x03, with a bulk
 * IN and a bulk OUT endpoint. 1 when found (out filled), 0 when not. */
int usb_match_config(const struct libusb_config_descriptor *cfg, usb_iface *out);

/* 1 when an OUT transfer of len bytes must be followed by a zero-length
 * packet: it fills its last USB packet exactly, and the reader on the device
 * (which reads fixed-size blocks, not the ADB framing) would wait for more. */
int usb_needs_zlp(size_t len, unsigned max_packet);

/* A device found by a scan. */
typedef struct usb_found {
    libusb_device *dev; /* one reference held */
    usb_iface iface;
    adbc_usb_device info;
} usb_found;

/* A private libusb context. discovery 0: no device scan and no hotplug, for
 * libusb_wrap_sys_device() where the system hides the device list (Android). */
int usb_context_new(libusb_context **out, int discovery);

/* Every device in ctx with an ADB or fastboot interface. */
int usb_scan(libusb_context *ctx, usb_found **out, size_t *count);
void usb_found_free(usb_found *list, size_t count);

/* Fill a device's serial and product strings through an open handle
 * (string descriptors, first language). Leaves them "" when unreadable. */
void usb_read_strings(libusb_device_handle *h, const struct libusb_device_descriptor *dd,
                      adbc_usb_device *info);

/* "usb:SERIAL (1-4)", the transport's description and the name used in
 * messages. */
void usb_describe(const adbc_usb_device *d, char *buf, size_t len);

/* Turn a libusb error from `what` ("opening", "claiming the ADB interface of")
 * into an adbc error with a message that says what to do. */
int usb_fail(int libusb_rc, const char *what, const adbc_usb_device *d);

/* Open a found device: libusb_open, claim, clear halts. On success the
 * transport owns ctx; on failure the caller still does. */
int usb_transport_open(adbc_transport **out, libusb_context *ctx, const usb_found *f);

/* Largest payload the transport will read whatever was negotiated: a bound
 * on memory against a corrupt header (adbd never sends more than 1 MiB). */
#define USB_PAYLOAD_LIMIT (16u * 1024u * 1024u)

/* Test hook: stop sending zero-length packets, to show what they prevent. */
void usb_transport_set_zlp(adbc_transport *t, int on);

/* One libusb transfer used synchronously: submitted, then waited for while
 * the waiting thread handles the context's events. The buffer is the
 * transfer's own, so a read that times out can stay in flight and a write
 * never points into memory its caller may free. */
typedef struct usb_xfer {
    struct libusb_transfer *t;
    uint8_t *buf;
    size_t cap;
    int done;        /* set by the completion callback */
    atomic_int busy; /* submitted and not yet completed */
} usb_xfer;

/* The USB transport. The reader thread owns the rx fields, the writer the
 * tx ones; shutdown may come from any thread. */
typedef struct usb_transport {
    adbc_transport base;
    libusb_context *ctx;
    int own_ctx;
    libusb_device_handle *h;
    libusb_device *dev; /* referenced */
    adbc_usb_device info;
    int claimed;
    libusb_hotplug_callback_handle hotplug;
    int have_hotplug;
    int zlp;
    int fd, own_fd;
    atomic_int down; /* shut down: calls fail with ADBC_ECLOSED */
    atomic_int gone; /* the device disconnected */
    pthread_mutex_t mu; /* orders submissions against shutdown's cancels */

    /* Negotiated max payload, learnt from the CNXN headers passing through:
     * a payload longer than this is refused before it is read. */
    atomic_uint host_max, device_max;

    usb_xfer rx;
    int rx_payload;        /* the last header announced rx_len payload bytes */
    uint32_t rx_len;
    const uint8_t *pend;   /* received, not yet handed to the caller */
    size_t pend_len;
    int rx_err;            /* sticky after a fatal error */
    char rx_msg[256];

    usb_xfer tx;
    int tx_payload;        /* the next write is a payload, not a header */
    int tx_err;
    char tx_msg[256];
} usb_transport;

int usb_xfer_init(usb_xfer *x, libusb_device_handle *h, uint8_t ep);
void usb_xfer_free(usb_xfer *x);
/* Submit a transfer of len bytes (x->buf holds them for OUT). Fails with
 * ADBC_ECLOSED after shutdown, or with the libusb error mapped. */
int usb_xfer_submit(usb_transport *t, usb_xfer *x, size_t len);
/* Handle events until x completes: 0, ADBC_ETIMEDOUT (x stays in flight),
 * ADBC_ECLOSED (shut down) or a failure (the device is gone...). */
int usb_xfer_wait(usb_transport *t, usb_xfer *x, int64_t deadline);
/* Cancel x if in flight and wait up to ms for libusb to give it back. */
void usb_xfer_cancel(usb_transport *t, usb_xfer *x, int ms);
/* 0 when x completed, else the error its status means. */
int usb_xfer_status(usb_transport *t, const usb_xfer *x, const char *dir);
/* The device disconnected: mark it and say so. */
int usb_gone(usb_transport *t);

#endif
