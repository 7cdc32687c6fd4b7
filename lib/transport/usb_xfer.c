/* SPDX-License-Identifier: Apache-2.0 */
/* Blocking USB transfers with timeouts and cancellation, on libusb's
 * asynchronous API. libusb's own synchronous calls cannot be interrupted,
 * and the transport must let shutdown() release a reader blocked forever;
 * so each call submits a transfer and handles events (in short slices, so
 * shutdown and unplugging are noticed) until it completes. */
#include "transport/usb_int.h"

#include <stdio.h>
#include <string.h>

static void LIBUSB_CALL on_done(struct libusb_transfer *xfer)
{
    usb_xfer *x = xfer->user_data;
    atomic_store(&x->busy, 0);
    x->done = 1;
}

int usb_xfer_init(usb_xfer *x, libusb_device_handle *h, uint8_t ep)
{
    memset(x, 0, sizeof *x);
    x->t = libusb_alloc_transfer(0);
    if (!x->t)
        return core_fail(ADBC_ENOMEM, "out of memory allocating a USB transfer");
    libusb_fill_bulk_transfer(x->t, h, ep, NULL, 0, on_done, x, 0);
    return 0;
}

void usb_xfer_free(usb_xfer *x)
{
    if (x->t)
        libusb_free_transfer(x->t);
    core_free(x->buf);
    memset(x, 0, sizeof *x);
}

static int reserve(usb_xfer *x, size_t len)
{
    if (len <= x->cap)
        return 0;
    uint8_t *nb = core_realloc(x->buf, len);
    if (!nb)
        return core_fail(ADBC_ENOMEM, "out of memory for a %zu-byte USB transfer", len);
    x->buf = nb;
    x->cap = len;
    return 0;
}

int usb_xfer_submit(usb_transport *t, usb_xfer *x, size_t len)
{
    int rc = reserve(x, len > 0 ? len : 1);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&t->mu);
    if (atomic_load(&t->down)) {
        pthread_mutex_unlock(&t->mu);
        return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
    }
    x->t->buffer = x->buf;
    x->t->length = (int)len;
    x->done = 0;
    /* Busy before submitting: another thread may handle the completion
     * before libusb_submit_transfer() returns. */
    atomic_store(&x->busy, 1);
    int lrc = libusb_submit_transfer(x->t);
    if (lrc < 0)
        atomic_store(&x->busy, 0);
    pthread_mutex_unlock(&t->mu);
    if (lrc == LIBUSB_ERROR_NO_DEVICE)
        return usb_gone(t);
    if (lrc < 0)
        return core_fail(lrc == LIBUSB_ERROR_NO_MEM ? ADBC_ENOMEM : ADBC_EIO,
                         "%s: cannot start a USB transfer: %s", t->base.desc,
                         libusb_strerror(lrc));
    return 0;
}

int usb_xfer_wait(usb_transport *t, usb_xfer *x, int64_t deadline)
{
    while (!x->done) {
        if (atomic_load(&t->down))
            return ADBC_ECLOSED;
        if (atomic_load(&t->gone))
            return usb_gone(t);
        int left = core_remaining(deadline);
        if (left == 0)
            return ADBC_ETIMEDOUT;
        int slice = left < 0 || left > 200 ? 200 : left;
        struct timeval tv = {.tv_sec = slice / 1000, .tv_usec = (slice % 1000) * 1000};
        int r = libusb_handle_events_timeout_completed(t->ctx, &tv, &x->done);
        if (r < 0 && r != LIBUSB_ERROR_INTERRUPTED && r != LIBUSB_ERROR_TIMEOUT)
            return core_fail(ADBC_EIO, "%s: handling USB events failed: %s", t->base.desc,
                             libusb_strerror(r));
    }
    return 0;
}

void usb_xfer_cancel(usb_transport *t, usb_xfer *x, int ms)
{
    pthread_mutex_lock(&t->mu);
    if (atomic_load(&x->busy))
        libusb_cancel_transfer(x->t);
    pthread_mutex_unlock(&t->mu);
    int64_t deadline = core_deadline(ms);
    while (atomic_load(&x->busy) && core_remaining(deadline) > 0) {
        struct timeval tv = {.tv_sec = 0, .tv_usec = 50000};
        libusb_handle_events_timeout_completed(t->ctx, &tv, &x->done);
    }
}

int usb_gone(usb_transport *t)
{
    atomic_store(&t->gone, 1);
    return core_fail(ADBC_EIO,
                     "%s: the device disconnected (unplugged, rebooting, or its USB mode "
                     "changed): reconnect it and retry",
                     t->base.desc);
}

int usb_xfer_status(usb_transport *t, const usb_xfer *x, const char *dir)
{
    switch (x->t->status) {
    case LIBUSB_TRANSFER_COMPLETED:
        return 0;
    case LIBUSB_TRANSFER_NO_DEVICE:
        return usb_gone(t);
    case LIBUSB_TRANSFER_CANCELLED:
        if (atomic_load(&t->down))
            return core_fail(ADBC_ECLOSED, "%s: connection shut down", t->base.desc);
        return core_fail(ADBC_EIO, "%s: the USB %s transfer was cancelled", t->base.desc, dir);
    case LIBUSB_TRANSFER_STALL:
        return core_fail(ADBC_EIO,
                         "%s: the device stalled its %s endpoint (its ADB function was reset): "
                         "reconnect and retry",
                         t->base.desc, dir);
    case LIBUSB_TRANSFER_OVERFLOW:
        return core_fail(ADBC_EPROTO,
                         "%s: the device sent more data than the USB read asked for (it does not "
                         "frame ADB packets as adbd does)",
                         t->base.desc);
    case LIBUSB_TRANSFER_TIMED_OUT:
        return core_fail(ADBC_ETIMEDOUT, "%s: the USB %s transfer timed out", t->base.desc, dir);
    default:
        return core_fail(ADBC_EIO,
                         "%s: the USB %s transfer failed (a cable, hub or port problem?): "
                         "reconnect and retry",
                         t->base.desc, dir);
    }
}
