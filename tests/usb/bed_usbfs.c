/* SPDX-License-Identifier: Apache-2.0 */
/* The usbdevfs side of an emulated device: what the Linux kernel's usbfs
 * does for libusb, answered in umockdev's ioctl handler.
 *
 * URBs are held here until they complete. Bulk IN URBs complete by USB's
 * rules on the packets the device queued: a short packet (or zero-length
 * one) ends a transfer, so does a full buffer, and a packet that does not
 * fit overflows it. So a host that reads more than the device sent in one
 * transfer, when that transfer is a multiple of the packet size, waits (and
 * merges it with the next one) exactly as on real hardware. Bulk OUT URBs
 * complete at once and their bytes go, packet by packet, to the device's
 * reader in bed_adbd.c. */
#include "bed_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/usbdevice_fs.h>

#define CAPS                                                                                \
    (USBDEVFS_CAP_ZERO_PACKET | USBDEVFS_CAP_BULK_CONTINUATION |                            \
     USBDEVFS_CAP_NO_PACKET_SIZE_LIM | USBDEVFS_CAP_BULK_SCATTER_GATHER |                   \
     USBDEVFS_CAP_REAP_AFTER_DISCONNECT)

static UMockdevIoctlData *arg_struct(UMockdevIoctlClient *c, size_t len)
{
    GError *e = NULL;
    UMockdevIoctlData *data =
        umockdev_ioctl_data_resolve(umockdev_ioctl_client_get_arg(c), 0, len, &e);
    g_clear_error(&e);
    return data;
}

static void urb_free(bed_urb *r)
{
    if (r->bd)
        g_object_unref(r->bd);
    g_object_unref(r->ud);
    g_free(r);
}

static void finish(bed_dev *d, bed_urb *r, int status, unsigned actual)
{
    r->u->status = status;
    r->u->actual_length = (int)actual;
    d->done_urbs = g_list_append(d->done_urbs, r);
}

/* Give queued IN data to waiting IN URBs, packet by packet. */
static void serve_in(bed_dev *d)
{
    while (d->in_urbs && !g_queue_is_empty(&d->in_xfers)) {
        bed_urb *r = d->in_urbs->data;
        bed_in *x = g_queue_peek_head(&d->in_xfers);
        size_t pkt = x->len - x->off;
        if (pkt > d->maxp)
            pkt = d->maxp;
        unsigned room = (unsigned)r->u->buffer_length - r->filled;
        if (pkt > room) {
            /* Babble: the packet is lost and the URB fails. */
            x->off += pkt;
            d->in_urbs = g_list_remove(d->in_urbs, r);
            finish(d, r, -EOVERFLOW, r->filled);
        } else {
            if (pkt > 0)
                memcpy((uint8_t *)r->u->buffer + r->filled, x->data + x->off, pkt);
            r->filled += (unsigned)pkt;
            x->off += pkt;
            if (pkt < d->maxp || r->filled == (unsigned)r->u->buffer_length) {
                d->in_urbs = g_list_remove(d->in_urbs, r);
                d->stats.in_transfers++;
                finish(d, r, 0, r->filled);
            }
        }
        if (x->off >= x->len) {
            g_queue_pop_head(&d->in_xfers);
            g_free(x->data);
            g_free(x);
        }
    }
}

static void control(bed_dev *d, const uint8_t *setup, uint8_t *data, size_t room, int *status,
                    unsigned *actual)
{
    uint8_t type = setup[0], req = setup[1];
    uint16_t value = (uint16_t)(setup[2] | setup[3] << 8);
    uint16_t index = (uint16_t)(setup[4] | setup[5] << 8);
    uint16_t length = (uint16_t)(setup[6] | setup[7] << 8);
    size_t want = length < room ? length : room;
    *status = 0;
    *actual = 0;
    if ((type & 0x80) && req == 6) { /* GET_DESCRIPTOR */
        int n = bed_get_descriptor(d, value, index, data, want);
        if (n < 0)
            *status = -EPIPE;
        else
            *actual = (unsigned)n;
    } else if ((type & 0x80) && req == 8 && want >= 1) { /* GET_CONFIGURATION */
        data[0] = 1;
        *actual = 1;
    }
}

static int submit(bed_dev *d, UMockdevIoctlClient *c)
{
    bed_urb *r = g_new0(bed_urb, 1);
    r->client = c;
    r->ud = arg_struct(c, sizeof(struct usbdevfs_urb));
    if (!r->ud) {
        g_free(r);
        return -EFAULT;
    }
    r->u = (struct usbdevfs_urb *)r->ud->data;
    if (r->u->buffer_length > 0) {
        GError *e = NULL;
        r->bd = umockdev_ioctl_data_resolve(r->ud, offsetof(struct usbdevfs_urb, buffer),
                                            (gsize)r->u->buffer_length, &e);
        g_clear_error(&e);
        if (!r->bd) {
            urb_free(r);
            return -EFAULT;
        }
    }
    uint8_t *buf = r->bd ? r->bd->data : NULL;
    unsigned len = (unsigned)r->u->buffer_length;
    if (r->u->type == USBDEVFS_URB_TYPE_CONTROL) {
        if (len < 8) {
            urb_free(r);
            return -EINVAL;
        }
        int status;
        unsigned actual;
        control(d, buf, buf + 8, len - 8, &status, &actual);
        finish(d, r, status, actual);
        return 0;
    }
    if (r->u->type != USBDEVFS_URB_TYPE_BULK) {
        urb_free(r);
        return -EINVAL;
    }
    if (r->u->endpoint & 0x80) {
        if (len > d->stats.max_in_request)
            d->stats.max_in_request = len;
        d->in_urbs = g_list_append(d->in_urbs, r);
        return 0;
    }
    int zlp_flag = (r->u->flags & USBDEVFS_URB_ZERO_PACKET) != 0;
    d->stats.out_transfers++;
    if (len == 0 || (zlp_flag && len % d->maxp == 0))
        d->stats.out_zlps++;
    bed_adbd_out(d, buf, len, zlp_flag);
    finish(d, r, 0, len);
    return 0;
}

static int reap(bed_dev *d, UMockdevIoctlClient *c)
{
    for (GList *l = d->done_urbs; l; l = l->next) {
        bed_urb *r = l->data;
        if (r->client != c)
            continue;
        UMockdevIoctlData *slot = arg_struct(c, sizeof(void *));
        if (!slot)
            return -EFAULT;
        d->done_urbs = g_list_delete_link(d->done_urbs, l);
        /* The client's pointer variable gets the URB's address; the URB
         * (status, length) and its buffer are written back with it. */
        umockdev_ioctl_data_set_ptr(slot, 0, r->ud);
        g_object_unref(slot);
        urb_free(r);
        return 0;
    }
    return d->gone ? -ENODEV : -EAGAIN;
}

static int discard(bed_dev *d, UMockdevIoctlClient *c)
{
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c);
    gulong addr = *(gulong *)arg->data;
    for (GList *l = d->in_urbs; l; l = l->next) {
        bed_urb *r = l->data;
        if (r->client == c && r->ud->client_addr == addr) {
            d->in_urbs = g_list_delete_link(d->in_urbs, l);
            finish(d, r, -ENOENT, r->filled);
            return 0;
        }
    }
    return -EINVAL;
}

static int claim(bed_dev *d, UMockdevIoctlClient *c)
{
    UMockdevIoctlData *a = arg_struct(c, sizeof(unsigned));
    if (!a)
        return -EFAULT;
    unsigned iface = *(unsigned *)a->data;
    g_object_unref(a);
    unsigned count = d->desc[18 + 4];
    if (iface >= count)
        return -ENOENT;
    if (d->spec.claimed || (d->claimer && d->claimer != c))
        return -EBUSY;
    if (d->claimer != c) {
        d->claimer = c;
        d->stats.claims++;
        bed_adbd_reset(d);
    }
    return 0;
}

static int small_ioctl(bed_dev *d, UMockdevIoctlClient *c, gulong req)
{
    if (req == USBDEVFS_GET_CAPABILITIES) {
        UMockdevIoctlData *a = arg_struct(c, sizeof(guint32));
        if (!a)
            return -EFAULT;
        *(guint32 *)a->data = CAPS;
        g_object_unref(a);
        return 0;
    }
    if (req == USBDEVFS_CONNECTINFO) {
        UMockdevIoctlData *a = arg_struct(c, sizeof(struct usbdevfs_connectinfo));
        if (!a)
            return -EFAULT;
        struct usbdevfs_connectinfo *ci = (void *)a->data;
        ci->devnum = d->spec.devnum;
        ci->slow = 0;
        g_object_unref(a);
        return 0;
    }
    if (req == USBDEVFS_CONTROL) {
        UMockdevIoctlData *a = arg_struct(c, sizeof(struct usbdevfs_ctrltransfer));
        if (!a)
            return -EFAULT;
        struct usbdevfs_ctrltransfer *ct = (void *)a->data;
        uint8_t setup[8] = {ct->bRequestType, ct->bRequest, (uint8_t)ct->wValue,
                            (uint8_t)(ct->wValue >> 8), (uint8_t)ct->wIndex,
                            (uint8_t)(ct->wIndex >> 8), (uint8_t)ct->wLength,
                            (uint8_t)(ct->wLength >> 8)};
        UMockdevIoctlData *buf = NULL;
        if (ct->wLength > 0) {
            GError *e = NULL;
            buf = umockdev_ioctl_data_resolve(a, offsetof(struct usbdevfs_ctrltransfer, data),
                                              ct->wLength, &e);
            g_clear_error(&e);
        }
        int status = 0;
        unsigned actual = 0;
        if (buf)
            control(d, setup, buf->data, ct->wLength, &status, &actual);
        if (buf)
            g_object_unref(buf);
        g_object_unref(a);
        return status < 0 ? status : (int)actual;
    }
    if (req == USBDEVFS_GETDRIVER)
        return -ENODATA;
    if (req == USBDEVFS_GET_SPEED)
        return d->maxp >= 512 ? 3 : 2; /* USB_SPEED_HIGH / _FULL */
    if (req == USBDEVFS_CLEAR_HALT || req == USBDEVFS_RESETEP || req == USBDEVFS_SETINTERFACE ||
        req == USBDEVFS_SETCONFIGURATION || req == USBDEVFS_RESET)
        return 0;
    if (req == USBDEVFS_RELEASEINTERFACE) {
        if (d->claimer == c)
            d->claimer = NULL;
        return 0;
    }
    return -ENOTTY;
}

static gboolean on_ioctl(UMockdevIoctlBase *h, UMockdevIoctlClient *c, gpointer user)
{
    (void)h;
    bed_dev *d = user;
    gulong req = umockdev_ioctl_client_get_request(c);
    int rc;
    bed_note_worker(d->b);
    g_mutex_lock(&d->mu);
    if (req == USBDEVFS_REAPURBNDELAY || req == USBDEVFS_REAPURB)
        rc = reap(d, c);
    else if (d->gone)
        rc = -ENODEV;
    else if (req == USBDEVFS_SUBMITURB)
        rc = submit(d, c);
    else if (req == USBDEVFS_DISCARDURB)
        rc = discard(d, c);
    else if (req == USBDEVFS_CLAIMINTERFACE)
        rc = claim(d, c);
    else
        rc = small_ioctl(d, c, req);
    serve_in(d);
    g_mutex_unlock(&d->mu);
    if (rc < 0)
        umockdev_ioctl_client_complete(c, -1, -rc);
    else
        umockdev_ioctl_client_complete(c, rc, 0);
    return TRUE;
}

/* read() on a usbfs node returns the descriptors (libusb_wrap_sys_device). */
static gboolean on_read(UMockdevIoctlBase *h, UMockdevIoctlClient *c, gpointer user)
{
    (void)h;
    bed_dev *d = user;
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c);
    gsize off = GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(c), "bed-read-offset"));
    gsize n = off < d->desc_len ? d->desc_len - off : 0;
    if (n > (gsize)arg->data_len)
        n = (gsize)arg->data_len;
    memcpy(arg->data, d->desc + off, n);
    g_object_set_data(G_OBJECT(c), "bed-read-offset", GSIZE_TO_POINTER(off + n));
    umockdev_ioctl_client_complete(c, (glong)n, 0);
    return TRUE;
}

static void on_vanished(UMockdevIoctlBase *h, UMockdevIoctlClient *c, gpointer user)
{
    (void)h;
    bed_dev *d = user;
    g_mutex_lock(&d->mu);
    for (GList *l = d->in_urbs; l;) {
        GList *next = l->next;
        bed_urb *r = l->data;
        if (r->client == c) {
            d->in_urbs = g_list_delete_link(d->in_urbs, l);
            urb_free(r);
        }
        l = next;
    }
    for (GList *l = d->done_urbs; l;) {
        GList *next = l->next;
        bed_urb *r = l->data;
        if (r->client == c) {
            d->done_urbs = g_list_delete_link(d->done_urbs, l);
            urb_free(r);
        }
        l = next;
    }
    if (d->claimer == c)
        d->claimer = NULL;
    g_mutex_unlock(&d->mu);
}

void bed_usbfs_attach(bed_dev *d)
{
    d->handler = umockdev_ioctl_base_new();
    g_signal_connect(d->handler, "handle-ioctl", G_CALLBACK(on_ioctl), d);
    g_signal_connect(d->handler, "handle-read", G_CALLBACK(on_read), d);
    g_signal_connect(d->handler, "client-vanished", G_CALLBACK(on_vanished), d);
    GError *e = NULL;
    if (!umockdev_testbed_attach_ioctl(d->b->tb, d->node, d->handler, &e)) {
        g_printerr("bed: cannot attach the ioctl handler to %s: %s\n", d->node,
                   e ? e->message : "?");
        g_clear_error(&e);
    }
}

/* Unplugging: what the kernel does when the device goes away. */
void bed_usbfs_unplug(bed_dev *d)
{
    g_mutex_lock(&d->mu);
    d->gone = 1;
    while (d->in_urbs) {
        bed_urb *r = d->in_urbs->data;
        d->in_urbs = g_list_delete_link(d->in_urbs, d->in_urbs);
        finish(d, r, -ENODEV, r->filled);
    }
    g_mutex_unlock(&d->mu);
}

void bed_usbfs_detach(bed_dev *d)
{
    if (d->handler) {
        umockdev_testbed_detach_ioctl(d->b->tb, d->node, NULL);
        g_object_unref(d->handler);
        d->handler = NULL;
    }
    g_mutex_lock(&d->mu);
    g_list_free_full(d->in_urbs, (GDestroyNotify)urb_free);
    g_list_free_full(d->done_urbs, (GDestroyNotify)urb_free);
    d->in_urbs = d->done_urbs = NULL;
    g_mutex_unlock(&d->mu);
}
