/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptor matching: which interface of a USB device speaks ADB, and its
 * endpoints. Pure functions over libusb's parsed descriptors, so they are
 * tested with hand-built descriptors. */
#include "transport/usb_int.h"

/* The bulk endpoints of one interface setting; 1 when both exist. */
static int bulk_pair(const struct libusb_interface_descriptor *alt, usb_iface *out)
{
    int have_in = 0, have_out = 0;
    for (int e = 0; e < alt->bNumEndpoints; e++) {
        const struct libusb_endpoint_descriptor *ep = &alt->endpoint[e];
        if ((ep->bmAttributes & LIBUSB_TRANSFER_TYPE_MASK) != LIBUSB_TRANSFER_TYPE_BULK)
            continue;
        if (ep->bEndpointAddress & LIBUSB_ENDPOINT_IN) {
            if (!have_in) {
                out->ep_in = ep->bEndpointAddress;
                have_in = 1;
            }
        } else if (!have_out) {
            /* Bits 11..12 are high-bandwidth multipliers; bulk never uses them. */
            out->max_packet = ep->wMaxPacketSize & 0x7ff;
            out->ep_out = ep->bEndpointAddress;
            have_out = 1;
        }
    }
    return have_in && have_out && out->max_packet > 0;
}

int usb_match_config(const struct libusb_config_descriptor *cfg, usb_iface *out)
{
    int found_fastboot = 0;
    usb_iface fastboot = {0};
    for (int i = 0; cfg && i < cfg->bNumInterfaces; i++) {
        const struct libusb_interface *itf = &cfg->interface[i];
        if (itf->num_altsetting < 1)
            continue;
        /* adb only ever uses the first setting. */
        const struct libusb_interface_descriptor *alt = &itf->altsetting[0];
        if (alt->bInterfaceClass != ADBC_USB_CLASS || alt->bInterfaceSubClass != ADBC_USB_SUBCLASS)
            continue;
        if (alt->bInterfaceProtocol != ADBC_USB_PROTOCOL_ADB &&
            alt->bInterfaceProtocol != ADBC_USB_PROTOCOL_FASTBOOT)
            continue;
        usb_iface cand = {.number = alt->bInterfaceNumber, .protocol = alt->bInterfaceProtocol};
        if (!bulk_pair(alt, &cand))
            continue;
        if (cand.protocol == ADBC_USB_PROTOCOL_ADB) {
            *out = cand;
            return 1;
        }
        if (!found_fastboot) {
            fastboot = cand;
            found_fastboot = 1;
        }
    }
    if (found_fastboot)
        *out = fastboot;
    return found_fastboot;
}

int usb_needs_zlp(size_t len, unsigned max_packet)
{
    return len > 0 && max_packet > 0 && len % max_packet == 0;
}
