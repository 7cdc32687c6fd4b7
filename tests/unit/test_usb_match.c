/* SPDX-License-Identifier: Apache-2.0 */
/* USB descriptor matching and the zero-length-packet rule, on hand-built
 * descriptors (no device, no libusb context). */
#include "t.h"

#include "transport/usb_int.h"

static struct libusb_endpoint_descriptor ep(uint8_t addr, uint8_t type, uint16_t maxp)
{
    struct libusb_endpoint_descriptor e = {.bLength = 7, .bDescriptorType = 5,
                                           .bEndpointAddress = addr, .bmAttributes = type,
                                           .wMaxPacketSize = maxp};
    return e;
}

static struct libusb_interface_descriptor alt(uint8_t num, uint8_t cls, uint8_t sub,
                                              uint8_t proto,
                                              const struct libusb_endpoint_descriptor *eps,
                                              uint8_t neps)
{
    struct libusb_interface_descriptor a = {.bLength = 9, .bDescriptorType = 4,
                                            .bInterfaceNumber = num, .bNumEndpoints = neps,
                                            .bInterfaceClass = cls, .bInterfaceSubClass = sub,
                                            .bInterfaceProtocol = proto, .endpoint = eps};
    return a;
}

TEST(adb_interface_found)
{
    struct libusb_endpoint_descriptor eps[2] = {ep(0x81, 2, 512), ep(0x01, 2, 512)};
    struct libusb_interface_descriptor a = alt(0, 0xff, 0x42, 1, eps, 2);
    struct libusb_interface itf = {.altsetting = &a, .num_altsetting = 1};
    struct libusb_config_descriptor cfg = {.bNumInterfaces = 1, .interface = &itf};
    usb_iface m;
    CHECK_EQ_INT(usb_match_config(&cfg, &m), 1);
    CHECK_EQ_INT(m.number, 0);
    CHECK_EQ_INT(m.protocol, ADBC_USB_PROTOCOL_ADB);
    CHECK_EQ_INT(m.ep_in, 0x81);
    CHECK_EQ_INT(m.ep_out, 0x01);
    CHECK_EQ_INT(m.max_packet, 512);
}

TEST(skips_other_interfaces)
{
    /* MTP (still image), a vendor interface with the wrong subclass, then
     * ADB with an interrupt endpoint first and OUT before IN. */
    struct libusb_endpoint_descriptor mtp_eps[3] = {ep(0x81, 2, 512), ep(0x01, 2, 512),
                                                    ep(0x82, 3, 28)};
    struct libusb_endpoint_descriptor v_eps[2] = {ep(0x83, 2, 512), ep(0x02, 2, 512)};
    struct libusb_endpoint_descriptor adb_eps[3] = {ep(0x86, 3, 8), ep(0x04, 2, 0x1200),
                                                    ep(0x85, 2, 1024)};
    struct libusb_interface_descriptor alts[3] = {alt(0, 6, 1, 1, mtp_eps, 3),
                                                  alt(1, 0xff, 0x43, 1, v_eps, 2),
                                                  alt(2, 0xff, 0x42, 1, adb_eps, 3)};
    struct libusb_interface itfs[3] = {{.altsetting = &alts[0], .num_altsetting = 1},
                                       {.altsetting = &alts[1], .num_altsetting = 1},
                                       {.altsetting = &alts[2], .num_altsetting = 1}};
    struct libusb_config_descriptor cfg = {.bNumInterfaces = 3, .interface = itfs};
    usb_iface m;
    CHECK_EQ_INT(usb_match_config(&cfg, &m), 1);
    CHECK_EQ_INT(m.number, 2);
    CHECK_EQ_INT(m.ep_in, 0x85);
    CHECK_EQ_INT(m.ep_out, 0x04);
    CHECK_EQ_INT(m.max_packet, 0x200); /* multiplier bits dropped */
}

TEST(rejects_incomplete)
{
    usb_iface m;
    /* no bulk OUT */
    struct libusb_endpoint_descriptor e1[2] = {ep(0x81, 2, 512), ep(0x01, 3, 512)};
    struct libusb_interface_descriptor a1 = alt(0, 0xff, 0x42, 1, e1, 2);
    struct libusb_interface i1 = {.altsetting = &a1, .num_altsetting = 1};
    struct libusb_config_descriptor c1 = {.bNumInterfaces = 1, .interface = &i1};
    CHECK_EQ_INT(usb_match_config(&c1, &m), 0);
    /* zero max packet size */
    struct libusb_endpoint_descriptor e2[2] = {ep(0x81, 2, 512), ep(0x01, 2, 0)};
    struct libusb_interface_descriptor a2 = alt(0, 0xff, 0x42, 1, e2, 2);
    struct libusb_interface i2 = {.altsetting = &a2, .num_altsetting = 1};
    struct libusb_config_descriptor c2 = {.bNumInterfaces = 1, .interface = &i2};
    CHECK_EQ_INT(usb_match_config(&c2, &m), 0);
    /* an interface without settings, and no configuration at all */
    struct libusb_interface i3 = {.altsetting = NULL, .num_altsetting = 0};
    struct libusb_config_descriptor c3 = {.bNumInterfaces = 1, .interface = &i3};
    CHECK_EQ_INT(usb_match_config(&c3, &m), 0);
    CHECK_EQ_INT(usb_match_config(NULL, &m), 0);
}

TEST(adb_preferred_over_fastboot)
{
    struct libusb_endpoint_descriptor eps[2] = {ep(0x81, 2, 512), ep(0x01, 2, 512)};
    struct libusb_interface_descriptor alts[2] = {alt(0, 0xff, 0x42, 3, eps, 2),
                                                  alt(1, 0xff, 0x42, 1, eps, 2)};
    struct libusb_interface itfs[2] = {{.altsetting = &alts[0], .num_altsetting = 1},
                                       {.altsetting = &alts[1], .num_altsetting = 1}};
    struct libusb_config_descriptor cfg = {.bNumInterfaces = 2, .interface = itfs};
    usb_iface m;
    CHECK_EQ_INT(usb_match_config(&cfg, &m), 1);
    CHECK_EQ_INT(m.protocol, ADBC_USB_PROTOCOL_ADB);
    CHECK_EQ_INT(m.number, 1);
    cfg.bNumInterfaces = 1; /* the bootloader alone */
    CHECK_EQ_INT(usb_match_config(&cfg, &m), 1);
    CHECK_EQ_INT(m.protocol, ADBC_USB_PROTOCOL_FASTBOOT);
}

TEST(zlp_rule)
{
    CHECK_EQ_INT(usb_needs_zlp(0, 512), 0);
    CHECK_EQ_INT(usb_needs_zlp(24, 512), 0);
    CHECK_EQ_INT(usb_needs_zlp(511, 512), 0);
    CHECK_EQ_INT(usb_needs_zlp(512, 512), 1);
    CHECK_EQ_INT(usb_needs_zlp(513, 512), 0);
    CHECK_EQ_INT(usb_needs_zlp(1 << 20, 512), 1);
    CHECK_EQ_INT(usb_needs_zlp(1 << 20, 1024), 1);
    CHECK_EQ_INT(usb_needs_zlp(24, 8), 1); /* a full-speed 8-byte endpoint: even a header */
    CHECK_EQ_INT(usb_needs_zlp(64, 64), 1);
    CHECK_EQ_INT(usb_needs_zlp(100, 0), 0);
}

int main(void)
{
    RUN(adb_interface_found);
    RUN(skips_other_interfaces);
    RUN(rejects_incomplete);
    RUN(adb_preferred_over_fastboot);
    RUN(zlp_rule);
    return T_DONE();
}
