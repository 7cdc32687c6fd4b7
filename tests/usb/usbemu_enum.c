/* SPDX-License-Identifier: Apache-2.0 */
/* Enumeration over emulated USB: which devices adbc finds (an ADB interface
 * on any vendor's device, not other interfaces or devices), what it reads
 * from them, and how a device is chosen by serial or port. */
#include "t.h"

#include "adbc/adbc.h"
#include "adbc/usb.h"
#include "bed.h"

static bed *B;

static const adbc_usb_device *by_path(const adbc_usb_device *l, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].path, path) == 0)
            return &l[i];
    return NULL;
}

TEST(lists_adb_and_fastboot_only)
{
    adbc_usb_device *l;
    size_t n;
    CHECK_EQ_INT(adbc_usb_list(&l, &n), 0);
    CHECK_EQ_INT(n, 3);
    const adbc_usb_device *a = by_path(l, n, "1-1");
    const adbc_usb_device *c = by_path(l, n, "1-3");
    const adbc_usb_device *f = by_path(l, n, "1-4");
    CHECK(a && c && f);
    CHECK(by_path(l, n, "1-2") == NULL); /* a vendor interface that is not ADB */
    CHECK(by_path(l, n, "1-5") == NULL); /* a device without any */
    /* serial from sysfs */
    CHECK_STR(a->serial, "EMU0001");
    CHECK_STR(a->product, "Bed Phone");
    CHECK_EQ_INT(a->vendor_id, 0x18d1);
    CHECK_EQ_INT(a->protocol, ADBC_USB_PROTOCOL_ADB);
    CHECK_EQ_INT(a->interface_number, 0);
    CHECK_EQ_INT(a->ep_in, 0x81);
    CHECK_EQ_INT(a->ep_out, 0x01);
    CHECK_EQ_INT(a->max_packet, 512);
    CHECK_EQ_INT(a->bus, 1);
    CHECK_EQ_INT(a->address, 2);
    CHECK_EQ_INT(a->access, 0);
    /* ADB behind an MTP interface; serial only in a string descriptor */
    CHECK_STR(c->serial, "EMU0003");
    CHECK_EQ_INT(c->vendor_id, 0x04e8);
    CHECK_EQ_INT(c->interface_number, 1);
    CHECK_EQ_INT(c->ep_in, 0x83);
    CHECK_EQ_INT(c->ep_out, 0x02);
    CHECK_EQ_INT(c->max_packet, 64);
    CHECK_EQ_INT(f->protocol, ADBC_USB_PROTOCOL_FASTBOOT);
    CHECK_STR(f->serial, "EMU0004");
    adbc_usb_list_free(l);
}

TEST(select_by_serial_and_port)
{
    adbc_transport *t;
    adbc_usb_device info;
    CHECK_EQ_INT(adbc_transport_usb(&t, "EMU0003"), 0);
    CHECK_EQ_INT(adbc_transport_usb_info(&info, t), 0);
    CHECK_STR(info.path, "1-3");
    CHECK_STR(t->desc, "usb:EMU0003 (1-3)");
    CHECK_EQ_INT(t->packet_mode, 1);
    adbc_transport_free(t);

    CHECK_EQ_INT(adbc_transport_usb(&t, "usb:1-1"), 0);
    CHECK_EQ_INT(adbc_transport_usb_info(&info, t), 0);
    CHECK_STR(info.serial, "EMU0001");
    adbc_transport_free(t);
}

TEST(selection_errors)
{
    adbc_transport *t;
    /* two ADB devices: the caller must choose */
    CHECK_EQ_INT(adbc_transport_usb(&t, NULL), ADBC_EINVAL);
    CHECK(t == NULL);
    CHECK(strstr(adbc_last_error(), "EMU0001") && strstr(adbc_last_error(), "EMU0003"));
    CHECK_EQ_INT(adbc_transport_usb(&t, "NOPE"), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "NOPE"));
    CHECK_EQ_INT(adbc_transport_usb(&t, "usb:9-9"), ADBC_ENOTFOUND);
    /* the bootloader is listed but never opened */
    CHECK_EQ_INT(adbc_transport_usb(&t, "EMU0004"), ADBC_EOFFLINE);
    CHECK(strstr(adbc_last_error(), "fastboot"));
    CHECK_EQ_INT(adbc_transport_usb_info(NULL, NULL), ADBC_EINVAL);
}

TEST(claimed_interface_is_busy)
{
    adbc_transport *t, *t2;
    CHECK_EQ_INT(adbc_transport_usb(&t, "EMU0001"), 0);
    /* a second opener (another adb server) cannot claim it */
    CHECK_EQ_INT(adbc_transport_usb(&t2, "EMU0001"), ADBC_EBUSY);
    CHECK(strstr(adbc_last_error(), "adb kill-server"));
    adbc_transport_free(t);
    /* released: free again */
    CHECK_EQ_INT(adbc_transport_usb(&t2, "EMU0001"), 0);
    adbc_transport_free(t2);
}

int main(void)
{
    B = bed_new();
    if (!B)
        return 1;
    bed_dev_spec s[5] = {
        {.port = "1", .bus = 1, .devnum = 2, .vid = 0x18d1, .pid = 0x4ee7, .serial = "EMU0001",
         .sysfs_serial = 1, .product = "Bed Phone"},
        {.port = "2", .bus = 1, .devnum = 3, .vid = 0x18d1, .pid = 0x0001, .serial = "OTHER",
         .sysfs_serial = 1, .kind = BED_NOT_ADB},
        {.port = "3", .bus = 1, .devnum = 4, .vid = 0x04e8, .pid = 0x6860, .serial = "EMU0003",
         .mtp_first = 1, .max_packet = 64},
        {.port = "4", .bus = 1, .devnum = 5, .vid = 0x18d1, .pid = 0x4ee0, .serial = "EMU0004",
         .sysfs_serial = 1, .kind = BED_FASTBOOT},
        {.port = "5", .bus = 1, .devnum = 6, .vid = 0x046d, .pid = 0xc52b, .serial = "MOUSE",
         .kind = BED_NOT_ADB, .mtp_first = 1},
    };
    for (int i = 0; i < 5; i++)
        if (!bed_add(B, &s[i]))
            return 1;
    RUN(lists_adb_and_fastboot_only);
    RUN(select_by_serial_and_port);
    RUN(selection_errors);
    RUN(claimed_interface_is_busy);
    bed_free(B);
    return T_DONE();
}
