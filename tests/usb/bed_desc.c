/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptors of an emulated device, and the umockdev record (sysfs
 * attributes, udev properties, device node) that makes libusb find it. */
#include "bed_int.h"

#include <stdio.h>
#include <string.h>

static size_t put_interface(uint8_t *p, uint8_t number, uint8_t cls, uint8_t sub, uint8_t proto,
                            uint8_t ep_in, uint8_t ep_out, uint16_t maxp, int interrupt_ep)
{
    uint8_t neps = (uint8_t)(interrupt_ep ? 3 : 2);
    uint8_t itf[9] = {9, 4, number, 0, neps, cls, sub, proto, 0};
    memcpy(p, itf, 9);
    size_t n = 9;
    uint8_t eps[2] = {ep_in, ep_out};
    for (int i = 0; i < 2; i++) {
        uint8_t ep[7] = {7, 5, eps[i], 2, (uint8_t)(maxp & 0xff), (uint8_t)(maxp >> 8), 0};
        memcpy(p + n, ep, 7);
        n += 7;
    }
    if (interrupt_ep) {
        uint8_t ep[7] = {7, 5, (uint8_t)(ep_in + 1), 3, 28, 0, 6};
        memcpy(p + n, ep, 7);
        n += 7;
    }
    return n;
}

void bed_build_descriptors(bed_dev *d)
{
    const bed_dev_spec *s = &d->spec;
    uint8_t *p = d->desc;
    uint8_t dev[18] = {18, 1, 0x00, 0x02, 0, 0, 0, 64,
                       (uint8_t)(s->vid & 0xff), (uint8_t)(s->vid >> 8),
                       (uint8_t)(s->pid & 0xff), (uint8_t)(s->pid >> 8),
                       0x00, 0x01, 1, (uint8_t)(s->product ? 2 : 0),
                       (uint8_t)(s->serial ? 3 : 0), 1};
    memcpy(p, dev, 18);
    uint8_t *cfg = p + 18;
    size_t n = 9;
    uint8_t nitf = 0;
    if (s->mtp_first) /* still-image class, as phones in MTP mode show it */
        n += put_interface(cfg + n, nitf++, 6, 1, 1, 0x81, 0x01, d->maxp, 1);
    uint8_t in = (uint8_t)(s->mtp_first ? 0x83 : 0x81), out = (uint8_t)(s->mtp_first ? 0x02 : 0x01);
    if (s->kind == BED_ADB)
        n += put_interface(cfg + n, nitf++, 0xff, 0x42, 0x01, in, out, d->maxp, 0);
    else if (s->kind == BED_FASTBOOT)
        n += put_interface(cfg + n, nitf++, 0xff, 0x42, 0x03, in, out, d->maxp, 0);
    else
        n += put_interface(cfg + n, nitf++, 0xff, 0xff, 0x00, in, out, d->maxp, 0);
    uint8_t hdr[9] = {9, 2, (uint8_t)(n & 0xff), (uint8_t)(n >> 8), nitf, 1, 0, 0x80, 250};
    memcpy(cfg, hdr, 9);
    d->desc_len = 18 + n;
}

static void hex(GString *g, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(g, "%02x", p[i]);
}

char *bed_device_record(const bed_dev *d)
{
    const bed_dev_spec *s = &d->spec;
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "P: /devices/pci0000:00/0000:00:14.0/usb%u/%s\n", s->bus,
                           d->sysname);
    /* read() on the node (the descriptors) is answered by the ioctl handler. */
    g_string_append_printf(g, "N: bus/usb/%03u/%03u\n", s->bus, s->devnum);
    g_string_append_printf(g,
                           "E: DEVNAME=/dev/bus/usb/%03u/%03u\nE: DEVTYPE=usb_device\n"
                           "E: DRIVER=usb\nE: SUBSYSTEM=usb\nE: BUSNUM=%03u\nE: DEVNUM=%03u\n"
                           "E: PRODUCT=%x/%x/100\n",
                           s->bus, s->devnum, s->bus, s->devnum, s->vid, s->pid);
    g_string_append_printf(g,
                           "A: busnum=%u\nA: devnum=%u\nA: speed=%s\nA: bConfigurationValue=1\n"
                           "A: idVendor=%04x\nA: idProduct=%04x\nA: manufacturer=Bed\n",
                           s->bus, s->devnum, d->maxp >= 512 ? "480" : "12", s->vid, s->pid);
    if (s->serial && s->sysfs_serial)
        g_string_append_printf(g, "A: serial=%s\n", s->serial);
    if (s->product)
        g_string_append_printf(g, "A: product=%s\n", s->product);
    g_string_append(g, "H: descriptors=");
    hex(g, d->desc, d->desc_len);
    g_string_append(g, "\n");
    return g_string_free(g, FALSE);
}

/* A string descriptor: UTF-16LE of an ASCII string. */
static int string_desc(const char *str, uint8_t *out, size_t len)
{
    uint8_t buf[256];
    size_t n = strlen(str);
    if (n > 126)
        n = 126;
    buf[0] = (uint8_t)(2 + 2 * n);
    buf[1] = 3;
    for (size_t i = 0; i < n; i++) {
        buf[2 + 2 * i] = (uint8_t)str[i];
        buf[3 + 2 * i] = 0;
    }
    size_t total = 2 + 2 * n;
    if (total > len)
        total = len;
    memcpy(out, buf, total);
    return (int)total;
}

int bed_get_descriptor(const bed_dev *d, uint16_t value, uint16_t index, uint8_t *out, size_t len)
{
    uint8_t type = (uint8_t)(value >> 8), idx = (uint8_t)value;
    (void)index;
    size_t n;
    switch (type) {
    case 1:
        n = len < 18 ? len : 18;
        memcpy(out, d->desc, n);
        return (int)n;
    case 2:
        n = d->desc_len - 18;
        if (n > len)
            n = len;
        memcpy(out, d->desc + 18, n);
        return (int)n;
    case 3:
        if (idx == 0) {
            uint8_t langs[4] = {4, 3, 0x09, 0x04};
            n = len < 4 ? len : 4;
            memcpy(out, langs, n);
            return (int)n;
        }
        if (idx == 1)
            return string_desc("Bed", out, len);
        if (idx == 2 && d->spec.product)
            return string_desc(d->spec.product, out, len);
        if (idx == 3 && d->spec.serial)
            return string_desc(d->spec.serial, out, len);
        return -1;
    default:
        return -1;
    }
}
