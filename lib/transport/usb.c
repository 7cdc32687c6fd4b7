/* SPDX-License-Identifier: Apache-2.0 */
/* The USB transport: ADB packets over a claimed ADB interface.
 *
 * Writes: the connection hands over one segment at a time (packet_mode), a
 * 24-byte header or a payload, and each becomes one bulk OUT transfer,
 * followed by a zero-length packet when it fills its last USB packet.
 * Reads: exactly 24 bytes for a header, then exactly the payload length the
 * header announced (adbd never sends zero-length packets, so a larger read
 * could wait forever for the end of a payload that is a multiple of the
 * packet size). Both limits come from the ADB framing, which this file
 * follows by peeking at the headers that pass through it. */
#include "transport/usb_int.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adbc/session.h"

/* Largest payload allowed now: the smaller of both CNXN offers once both are
 * seen, before that the host's offer (or adbc's default). */
static uint32_t payload_limit(usb_transport *t)
{
    uint32_t host = atomic_load(&t->host_max), dev = atomic_load(&t->device_max);
    uint32_t lim = host ? host : ADBC_MAX_PAYLOAD;
    if (dev && dev < lim)
        lim = dev;
    return lim < USB_PAYLOAD_LIMIT ? lim : USB_PAYLOAD_LIMIT;
}

/* A header is valid when its magic is the command's complement. */
static int header_ok(const uint8_t *h)
{
    return (core_rd32(h) ^ 0xffffffffu) == core_rd32(h + 20);
}

static int rx_fatal(usb_transport *t, int code)
{
    t->rx_err = code;
    snprintf(t->rx_msg, sizeof t->rx_msg, "%s", adbc_last_error());
    return code;
}

static int usb_read(adbc_transport *bt, void *buf, size_t len, int timeout_ms)
{
    usb_transport *t = (usb_transport *)bt;
    if (t->rx_err)
        return core_fail(t->rx_err, "%s", t->rx_msg);
    int64_t deadline = core_deadline(timeout_ms);
    for (;;) {
        if (t->pend_len > 0) {
            size_t n = t->pend_len < len ? t->pend_len : len;
            if (n > 0x7fffffff)
                n = 0x7fffffff;
            memcpy(buf, t->pend, n);
            t->pend += n;
            t->pend_len -= n;
            return (int)n;
        }
        if (!atomic_load(&t->rx.busy) && !t->rx.done) {
            int rc = usb_xfer_submit(t, &t->rx, t->rx_payload ? t->rx_len : ADBC_HEADER_SIZE);
            if (rc < 0)
                return rc == ADBC_ECLOSED ? rc : rx_fatal(t, rc);
        }
        int w = usb_xfer_wait(t, &t->rx, deadline);
        if (w == ADBC_ETIMEDOUT) /* the read stays in flight for the next call */
            return core_fail(ADBC_ETIMEDOUT, "%s: nothing received for %d ms", t->base.desc,
                             timeout_ms);
        if (w == ADBC_ECLOSED)
            return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
        if (w < 0)
            return rx_fatal(t, w);
        t->rx.done = 0;
        int rc = usb_xfer_status(t, &t->rx, "IN");
        if (rc < 0)
            return rc == ADBC_ECLOSED ? rc : rx_fatal(t, rc);
        size_t got = (size_t)t->rx.t->actual_length;
        if (!t->rx_payload) {
            if (got == 0) /* a stray zero-length packet between packets */
                continue;
            if (got != ADBC_HEADER_SIZE || !header_ok(t->rx.buf))
                return rx_fatal(t, core_fail(ADBC_EPROTO,
                                             "%s: received a %zu-byte USB transfer where a "
                                             "24-byte ADB packet header was expected",
                                             t->base.desc, got));
            uint32_t dlen = core_rd32(t->rx.buf + 12);
            if (core_rd32(t->rx.buf) == ADBC_A_CNXN)
                atomic_store(&t->device_max, core_rd32(t->rx.buf + 8));
            if (dlen > payload_limit(t))
                return rx_fatal(t, core_fail(ADBC_EPROTO,
                                             "%s: the device announced a %u-byte payload, more "
                                             "than the %u bytes negotiated",
                                             t->base.desc, dlen, payload_limit(t)));
            t->rx_payload = dlen > 0;
            t->rx_len = dlen;
        } else {
            if (got != t->rx_len)
                return rx_fatal(t, core_fail(ADBC_EPROTO,
                                             "%s: received %zu of the %u payload bytes the "
                                             "packet header announced",
                                             t->base.desc, got, t->rx_len));
            t->rx_payload = 0;
        }
        t->pend = t->rx.buf;
        t->pend_len = got;
    }
}

static int tx_fatal(usb_transport *t, int code)
{
    t->tx_err = code;
    snprintf(t->tx_msg, sizeof t->tx_msg, "%s", adbc_last_error());
    return code;
}

/* One OUT transfer of the bytes already in t->tx.buf. */
static int send_one(usb_transport *t, size_t len, int64_t deadline, int timeout_ms)
{
    int rc = usb_xfer_submit(t, &t->tx, len);
    if (rc < 0)
        return rc == ADBC_ECLOSED ? rc : tx_fatal(t, rc);
    int w = usb_xfer_wait(t, &t->tx, deadline);
    if (w == ADBC_ETIMEDOUT) {
        /* Part of it may have gone out: the stream is out of step for good. */
        usb_xfer_cancel(t, &t->tx, 1000);
        return tx_fatal(t, core_fail(ADBC_ETIMEDOUT,
                                     "%s: the device took no data for %d ms: it is stalled or "
                                     "gone; reconnect it and retry",
                                     t->base.desc, timeout_ms));
    }
    if (w == ADBC_ECLOSED)
        return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
    if (w < 0)
        return tx_fatal(t, w);
    rc = usb_xfer_status(t, &t->tx, "OUT");
    if (rc < 0)
        return rc == ADBC_ECLOSED ? rc : tx_fatal(t, rc);
    if ((size_t)t->tx.t->actual_length != len)
        return tx_fatal(t, core_fail(ADBC_EIO, "%s: the device accepted %d of %zu bytes",
                                     t->base.desc, t->tx.t->actual_length, len));
    return 0;
}

static int usb_write(adbc_transport *bt, const void *buf, size_t len, int timeout_ms)
{
    usb_transport *t = (usb_transport *)bt;
    if (t->tx_err)
        return core_fail(t->tx_err, "%s", t->tx_msg);
    if (len > 0x7fffffff)
        return core_fail(ADBC_EINVAL, "%s: a %zu-byte USB transfer is too large", t->base.desc,
                         len);
    /* Follow the framing to learn the host's max payload from its CNXN. */
    if (!t->tx_payload && len == ADBC_HEADER_SIZE && header_ok(buf)) {
        if (core_rd32(buf) == ADBC_A_CNXN)
            atomic_store(&t->host_max, core_rd32((const uint8_t *)buf + 8));
        t->tx_payload = core_rd32((const uint8_t *)buf + 12) > 0;
    } else {
        t->tx_payload = 0;
    }
    int64_t deadline = core_deadline(timeout_ms);
    if (len > t->tx.cap) {
        uint8_t *nb = core_realloc(t->tx.buf, len);
        if (!nb)
            return core_fail(ADBC_ENOMEM, "out of memory for a %zu-byte USB transfer", len);
        t->tx.buf = nb;
        t->tx.cap = len;
    }
    if (len > 0)
        memcpy(t->tx.buf, buf, len);
    int rc = send_one(t, len, deadline, timeout_ms);
    if (rc == 0 && t->zlp && usb_needs_zlp(len, t->info.max_packet))
        rc = send_one(t, 0, deadline, timeout_ms);
    return rc;
}

static void usb_shutdown(adbc_transport *bt)
{
    usb_transport *t = (usb_transport *)bt;
    if (atomic_exchange(&t->down, 1))
        return;
    pthread_mutex_lock(&t->mu);
    if (atomic_load(&t->rx.busy))
        libusb_cancel_transfer(t->rx.t);
    if (atomic_load(&t->tx.busy))
        libusb_cancel_transfer(t->tx.t);
    pthread_mutex_unlock(&t->mu);
    libusb_interrupt_event_handler(t->ctx);
}

static void usb_destroy(adbc_transport *bt)
{
    usb_transport *t = (usb_transport *)bt;
    if (t->h) {
        usb_shutdown(bt);
        /* Cancelled transfers must come back before their memory goes; a
         * vanished device may never return them, and closing the handle
         * then detaches them from libusb. */
        if (t->rx.t)
            usb_xfer_cancel(t, &t->rx, 1000);
        if (t->tx.t)
            usb_xfer_cancel(t, &t->tx, 1000);
        if (t->claimed && !atomic_load(&t->gone))
            libusb_release_interface(t->h, t->info.interface_number);
        if (t->have_hotplug)
            libusb_hotplug_deregister_callback(t->ctx, t->hotplug);
        libusb_close(t->h);
    }
    usb_xfer_free(&t->rx);
    usb_xfer_free(&t->tx);
    if (t->dev)
        libusb_unref_device(t->dev);
    if (t->own_ctx)
        libusb_exit(t->ctx);
    if (t->own_fd && t->fd >= 0)
        close(t->fd);
    pthread_mutex_destroy(&t->mu);
    core_free(t);
}

/* The bus speed the device was enumerated at. */
static void usb_link(adbc_transport *bt, adbc_transport_link *out)
{
    const usb_transport *u = (const usb_transport *)bt;
    libusb_device *d = u->dev ? u->dev : u->h ? libusb_get_device(u->h) : NULL;
    if (!d)
        return;
    switch (libusb_get_device_speed(d)) {
    case LIBUSB_SPEED_LOW: out->mbps = 1; break;
    case LIBUSB_SPEED_FULL: out->mbps = 12; break;
    case LIBUSB_SPEED_HIGH: out->mbps = 480; break;
    case LIBUSB_SPEED_SUPER: out->mbps = 5000; break;
    case LIBUSB_SPEED_SUPER_PLUS: out->mbps = 10000; break;
    default: break;
    }
}

static const adbc_transport_ops usb_ops = {
    .size = sizeof(adbc_transport_ops),
    .name = "usb",
    .read = usb_read,
    .write = usb_write,
    .shutdown = usb_shutdown,
    .destroy = usb_destroy,
    .writev = NULL,
    .link = usb_link,
};

static int LIBUSB_CALL on_hotplug(libusb_context *ctx, libusb_device *dev,
                                  libusb_hotplug_event ev, void *user)
{
    (void)ctx;
    usb_transport *t = user;
    if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT && dev == t->dev) {
        atomic_store(&t->gone, 1);
        libusb_interrupt_event_handler(t->ctx);
    }
    return 0;
}

static usb_transport *transport_new(libusb_context *ctx)
{
    usb_transport *t = core_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ctx = ctx;
    t->own_ctx = 1;
    t->fd = -1;
    t->zlp = 1;
    pthread_mutex_init(&t->mu, NULL);
    t->base.size = sizeof t->base;
    t->base.ops = &usb_ops;
    t->base.packet_mode = 1;
    return t;
}

/* Claim the interface and get the endpoints ready. */
static int finish_open(usb_transport *t, int hotplug)
{
    usb_describe(&t->info, t->base.desc, sizeof t->base.desc);
    if (t->info.protocol != ADBC_USB_PROTOCOL_ADB)
        return core_fail(ADBC_EOFFLINE,
                         "%s is in bootloader (fastboot) mode, which does not speak ADB: boot it "
                         "into Android (`fastboot reboot`) and retry",
                         t->base.desc);
    int rc = libusb_claim_interface(t->h, t->info.interface_number);
    if (rc < 0)
        return usb_fail(rc, "claiming the ADB interface of", &t->info);
    t->claimed = 1;
    /* A previous program may have left an endpoint halted (adb does this too). */
    uint8_t eps[2] = {t->info.ep_in, t->info.ep_out};
    for (int i = 0; i < 2; i++) {
        rc = libusb_clear_halt(t->h, eps[i]);
        if (rc < 0)
            return usb_fail(rc, "resetting the endpoints of", &t->info);
    }
    rc = usb_xfer_init(&t->rx, t->h, t->info.ep_in);
    if (rc == 0)
        rc = usb_xfer_init(&t->tx, t->h, t->info.ep_out);
    if (rc < 0)
        return rc;
    if (hotplug && libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG) &&
        libusb_hotplug_register_callback(t->ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0,
                                         t->info.vendor_id, t->info.product_id,
                                         LIBUSB_HOTPLUG_MATCH_ANY, on_hotplug, t,
                                         &t->hotplug) == 0)
        t->have_hotplug = 1;
    return 0;
}

int usb_transport_open(adbc_transport **out, libusb_context *ctx, const usb_found *f)
{
    *out = NULL;
    usb_transport *t = transport_new(ctx);
    if (!t)
        return core_fail(ADBC_ENOMEM, "out of memory opening a USB device");
    t->info = f->info;
    t->dev = libusb_ref_device(f->dev);
    usb_describe(&t->info, t->base.desc, sizeof t->base.desc);
    int rc = t->info.protocol == ADBC_USB_PROTOCOL_ADB ? libusb_open(f->dev, &t->h) : 0;
    if (rc < 0)
        rc = usb_fail(rc, "opening", &t->info);
    else
        rc = finish_open(t, 1);
    if (rc < 0) {
        t->own_ctx = 0; /* the caller keeps it */
        usb_destroy(&t->base);
        return core_fail_keep(rc);
    }
    *out = &t->base;
    return 0;
}

int adbc_transport_usb_fd(adbc_transport **out, int fd, int own)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    if (fd < 0)
        return core_fail(ADBC_EINVAL, "adbc_transport_usb_fd: invalid descriptor %d", fd);
    libusb_context *ctx;
    int rc = usb_context_new(&ctx, 0);
    if (rc < 0) {
        if (own)
            close(fd);
        return rc;
    }
    usb_transport *t = transport_new(ctx);
    if (!t) {
        libusb_exit(ctx);
        if (own)
            close(fd);
        return core_fail(ADBC_ENOMEM, "out of memory opening a USB device");
    }
    t->fd = fd;
    t->own_fd = own;
    snprintf(t->base.desc, sizeof t->base.desc, "usb:fd %d", fd);
    rc = libusb_wrap_sys_device(ctx, (intptr_t)fd, &t->h);
    if (rc < 0) {
        rc = rc == LIBUSB_ERROR_ACCESS
                 ? core_fail(ADBC_EPERM,
                             "descriptor %d: permission denied: it must be a USB device node "
                             "opened read-write (with Termux, grant access through termux-usb -r)",
                             fd)
                 : core_fail(ADBC_EIO, "descriptor %d is not a usable USB device: %s", fd,
                             libusb_strerror(rc));
        t->h = NULL;
        goto fail;
    }
    t->dev = libusb_ref_device(libusb_get_device(t->h));
    struct libusb_device_descriptor dd;
    struct libusb_config_descriptor *cfg = NULL;
    usb_iface iface;
    if (libusb_get_device_descriptor(t->dev, &dd) < 0 ||
        (libusb_get_active_config_descriptor(t->dev, &cfg) < 0 &&
         libusb_get_config_descriptor(t->dev, 0, &cfg) < 0)) {
        rc = core_fail(ADBC_EIO, "descriptor %d: cannot read the USB descriptors", fd);
        goto fail;
    }
    int found = usb_match_config(cfg, &iface);
    libusb_free_config_descriptor(cfg);
    if (!found) {
        rc = core_fail(ADBC_ENOTFOUND,
                       "the USB device behind descriptor %d (%04x:%04x) has no ADB interface: "
                       "enable USB debugging on it (Settings > Developer options)",
                       fd, dd.idVendor, dd.idProduct);
        goto fail;
    }
    adbc_usb_device *d = &t->info;
    d->bus = libusb_get_bus_number(t->dev);
    d->address = libusb_get_device_address(t->dev);
    d->vendor_id = dd.idVendor;
    d->product_id = dd.idProduct;
    d->protocol = iface.protocol;
    d->interface_number = iface.number;
    d->ep_in = iface.ep_in;
    d->ep_out = iface.ep_out;
    d->max_packet = iface.max_packet;
    usb_read_strings(t->h, &dd, d);
    rc = finish_open(t, 0);
    if (rc < 0)
        goto fail;
    *out = &t->base;
    return 0;
fail:
    usb_destroy(&t->base);
    return core_fail_keep(rc);
}

int adbc_transport_usb_info(adbc_usb_device *out, const adbc_transport *t)
{
    if (!t || t->ops != &usb_ops)
        return core_fail(ADBC_EINVAL, "not a USB transport");
    *out = ((const usb_transport *)t)->info;
    return 0;
}

void usb_transport_set_zlp(adbc_transport *t, int on)
{
    if (t && t->ops == &usb_ops)
        ((usb_transport *)t)->zlp = on;
}
