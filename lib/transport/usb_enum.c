/* SPDX-License-Identifier: Apache-2.0 */
/* Finding ADB devices on USB: a private libusb context, a scan that matches
 * descriptors and reads each device's serial, and adbc_usb_list().
 *
 * The serial comes from sysfs when it is there (as adb does on Linux): it
 * needs no access to the device node, so a device this user may not open
 * still shows its serial. Otherwise the device is opened briefly and the
 * string descriptor read. */
#include "transport/usb_int.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int usb_context_new(libusb_context **out, int discovery)
{
    *out = NULL;
    int rc;
    if (discovery) {
        rc = libusb_init(out);
    } else {
#if defined(LIBUSB_API_VERSION) && LIBUSB_API_VERSION >= 0x0100010A
        struct libusb_init_option opt = {.option = LIBUSB_OPTION_NO_DEVICE_DISCOVERY};
        rc = libusb_init_context(out, &opt, 1);
#else
        /* Before libusb 1.0.27 the option is process-wide and only read at
         * init. Try a normal context first and fall back to the option only
         * where scanning fails (Android), so other contexts keep hotplug. */
        rc = libusb_init(out);
        if (rc < 0) {
            libusb_set_option(NULL, LIBUSB_OPTION_NO_DEVICE_DISCOVERY);
            rc = libusb_init(out);
        }
#endif
    }
    if (rc < 0) {
        *out = NULL;
        return core_fail(ADBC_EIO, "cannot initialise libusb: %s", libusb_strerror(rc));
    }
    return 0;
}

void usb_describe(const adbc_usb_device *d, char *buf, size_t len)
{
    if (d->serial[0] && d->path[0])
        snprintf(buf, len, "usb:%.80s (%s)", d->serial, d->path);
    else if (d->serial[0])
        snprintf(buf, len, "usb:%.80s", d->serial);
    else if (d->path[0])
        snprintf(buf, len, "usb:%s (%04x:%04x)", d->path, d->vendor_id, d->product_id);
    else
        snprintf(buf, len, "usb:%04x:%04x", d->vendor_id, d->product_id);
}

/* Keep printable ASCII; drop trailing whitespace (sysfs ends with '\n'). */
static void clean_string(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            s[i] = '?';
}

/* Read a small sysfs attribute of the device at `path` ("1-4.2"). */
static void sysfs_attr(const char *path, const char *attr, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!path[0])
        return;
    char file[160];
    snprintf(file, sizeof file, "/sys/bus/usb/devices/%s/%s", path, attr);
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    clean_string(buf);
}

void usb_read_strings(libusb_device_handle *h, const struct libusb_device_descriptor *dd,
                      adbc_usb_device *info)
{
    unsigned char s[256];
    if (!info->serial[0] && dd->iSerialNumber) {
        int n = libusb_get_string_descriptor_ascii(h, dd->iSerialNumber, s, sizeof s);
        if (n > 0 && (size_t)n < sizeof info->serial) {
            memcpy(info->serial, s, (size_t)n);
            info->serial[n] = '\0';
            clean_string(info->serial);
        }
    }
    if (!info->product[0] && dd->iProduct) {
        int n = libusb_get_string_descriptor_ascii(h, dd->iProduct, s, sizeof s);
        if (n > 0 && (size_t)n < sizeof info->product) {
            memcpy(info->product, s, (size_t)n);
            info->product[n] = '\0';
            clean_string(info->product);
        }
    }
}

static void port_path(libusb_device *dev, char *buf, size_t len)
{
    uint8_t ports[8];
    int n = libusb_get_port_numbers(dev, ports, (int)sizeof ports);
    buf[0] = '\0';
    if (n <= 0)
        return;
    size_t off = (size_t)snprintf(buf, len, "%u-%u", libusb_get_bus_number(dev), ports[0]);
    for (int i = 1; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, ".%u", ports[i]);
}

/* Match one device; 1 and *f filled when it has an ADB/fastboot interface. */
static int probe_device(libusb_device *dev, usb_found *f)
{
    struct libusb_device_descriptor dd;
    if (libusb_get_device_descriptor(dev, &dd) < 0)
        return 0;
    struct libusb_config_descriptor *cfg = NULL;
    if (libusb_get_active_config_descriptor(dev, &cfg) < 0 &&
        libusb_get_config_descriptor(dev, 0, &cfg) < 0)
        return 0;
    int ok = usb_match_config(cfg, &f->iface);
    libusb_free_config_descriptor(cfg);
    if (!ok)
        return 0;
    adbc_usb_device *d = &f->info;
    memset(d, 0, sizeof *d);
    d->bus = libusb_get_bus_number(dev);
    d->address = libusb_get_device_address(dev);
    d->vendor_id = dd.idVendor;
    d->product_id = dd.idProduct;
    d->protocol = f->iface.protocol;
    d->interface_number = f->iface.number;
    d->ep_in = f->iface.ep_in;
    d->ep_out = f->iface.ep_out;
    d->max_packet = f->iface.max_packet;
    port_path(dev, d->path, sizeof d->path);
    sysfs_attr(d->path, "serial", d->serial, sizeof d->serial);
    sysfs_attr(d->path, "product", d->product, sizeof d->product);
    char node[64];
    snprintf(node, sizeof node, "/dev/bus/usb/%03u/%03u", d->bus, d->address);
    d->access = access(node, R_OK | W_OK) == 0 ? 0 : ADBC_EPERM;
    if (d->access == 0 && (!d->serial[0] || !d->product[0])) {
        libusb_device_handle *h;
        if (libusb_open(dev, &h) == 0) {
            usb_read_strings(h, &dd, d);
            libusb_close(h);
        }
    }
    f->dev = libusb_ref_device(dev);
    return 1;
}

#ifdef __ANDROID__
/* Bionic has no strverscmp: port chains ("1-2.10") compared with runs of
 * digits by value, which is what strverscmp does for them (they have no
 * leading zeros). */
static int ver_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            size_t na = 0, nb = 0;
            while (isdigit((unsigned char)a[na]))
                na++;
            while (isdigit((unsigned char)b[nb]))
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = strncmp(a, b, na);
            if (c)
                return c;
            a += na;
            b += nb;
        } else {
            if (*a != *b)
                return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++;
            b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}
#else
#define ver_cmp strverscmp
#endif

/* Bus, then port chain, numerically ("1-2" before "1-10"). */
static int by_place(const void *a, const void *b)
{
    const adbc_usb_device *x = &((const usb_found *)a)->info, *y = &((const usb_found *)b)->info;
    if (x->bus != y->bus)
        return x->bus < y->bus ? -1 : 1;
    int c = ver_cmp(x->path, y->path);
    return c ? c : (x->address > y->address) - (x->address < y->address);
}

int usb_scan(libusb_context *ctx, usb_found **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    libusb_device **list;
    ssize_t n = libusb_get_device_list(ctx, &list);
    if (n < 0)
        return core_fail(ADBC_EIO, "cannot list USB devices: %s", libusb_strerror((int)n));
    usb_found *found = NULL;
    size_t nfound = 0;
    if (n > 0) {
        found = core_calloc((size_t)n, sizeof *found);
        if (!found) {
            libusb_free_device_list(list, 1);
            return core_fail(ADBC_ENOMEM, "out of memory listing USB devices");
        }
    }
    for (ssize_t i = 0; i < n; i++)
        if (probe_device(list[i], &found[nfound]))
            nfound++;
    libusb_free_device_list(list, 1);
    if (nfound > 1)
        qsort(found, nfound, sizeof *found, by_place);
    if (nfound == 0) {
        core_free(found);
        found = NULL;
    }
    *out = found;
    *count = nfound;
    return 0;
}

void usb_found_free(usb_found *list, size_t count)
{
    for (size_t i = 0; list && i < count; i++)
        libusb_unref_device(list[i].dev);
    core_free(list);
}

int adbc_usb_list(adbc_usb_device **out, size_t *count)
{
    if (!out || !count)
        return core_null(__func__, !out ? "out" : "count");
    *out = NULL;
    *count = 0;
    libusb_context *ctx;
    int rc = usb_context_new(&ctx, 1);
    if (rc < 0)
        return rc;
    usb_found *found;
    size_t n;
    rc = usb_scan(ctx, &found, &n);
    if (rc == 0 && n > 0) {
        adbc_usb_device *list = core_calloc(n, sizeof *list);
        if (!list) {
            rc = core_fail(ADBC_ENOMEM, "out of memory listing USB devices");
        } else {
            for (size_t i = 0; i < n; i++)
                list[i] = found[i].info;
            *out = list;
            *count = n;
        }
    }
    usb_found_free(found, n);
    libusb_exit(ctx);
    return rc;
}

void adbc_usb_list_free(adbc_usb_device *list)
{
    core_free(list);
}
