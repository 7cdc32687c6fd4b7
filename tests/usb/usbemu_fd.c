/* SPDX-License-Identifier: Apache-2.0 */
/* Opening a device from an already-open usbfs descriptor, as Termux hands
 * one over (termux-usb -e): libusb_wrap_sys_device reads the descriptors
 * through the descriptor, the serial through a control transfer. */
#include "t.h"

#include <fcntl.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/devices.h"
#include "adbc/usb.h"
#include "bed.h"

static bed_dev *ADB, *OTHER;

TEST(session_over_fd)
{
    int fd = open(bed_dev_node(ADB), O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0);
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_usb_fd(&t, fd, 1), 0);
    adbc_usb_device info;
    CHECK_EQ_INT(adbc_transport_usb_info(&info, t), 0);
    CHECK_STR(info.serial, "FD000001"); /* not in sysfs: read from the device */
    CHECK_STR(info.product, "Bed Phone");
    CHECK_EQ_INT(info.vendor_id, 0x18d1);
    CHECK_EQ_INT(info.ep_in, 0x83);
    CHECK_EQ_INT(info.interface_number, 1);
    CHECK_STR(t->desc, "usb:FD000001");
    adbc_conn *c;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = 5000;
    CHECK_EQ_INT(adbc_conn_open(&c, t, &o), 0);
    adbc_run_result r;
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_AUTO, "echo termux", NULL, 0, 0, 5000), 0);
    CHECK_STR((char *)r.out, "termux\n");
    CHECK_EQ_INT(r.exit_code, 0);
    adbc_run_result_clear(&r);
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_EXEC, "bed-gen 16384", NULL, 0, 0, 5000), 0);
    CHECK_EQ_INT(r.out_len, 16384);
    adbc_run_result_clear(&r);
    adbc_conn_close(c);
    /* own = 1: the transport closed the descriptor */
    CHECK(fcntl(fd, F_GETFD) < 0);
}

TEST(fd_kept_when_not_owned)
{
    int fd = open(bed_dev_node(ADB), O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0);
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_usb_fd(&t, fd, 0), 0);
    adbc_transport_free(t);
    CHECK(fcntl(fd, F_GETFD) >= 0);
    close(fd);
}

TEST(connect_by_fd_serial)
{
    int fd = open(bed_dev_node(ADB), O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0);
    char serial[32];
    snprintf(serial, sizeof serial, "fd:%d", fd);
    adbc_conn *c;
    CHECK_EQ_INT(adbc_device_connect(&c, serial, NULL), 0);
    CHECK_STR(adbc_conn_desc(c), "usb:FD000001");
    adbc_conn_close(c);
    CHECK(fcntl(fd, F_GETFD) >= 0); /* not ours to close */
    close(fd);
    CHECK_EQ_INT(adbc_device_connect(&c, "fd:x", NULL), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_device_connect(&c, "fd:", NULL), ADBC_EINVAL);
}

TEST(fd_errors)
{
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_usb_fd(&t, -1, 0), ADBC_EINVAL);
    /* a device without an ADB interface */
    int fd = open(bed_dev_node(OTHER), O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(adbc_transport_usb_fd(&t, fd, 1), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "no ADB interface"));
    CHECK(fcntl(fd, F_GETFD) < 0); /* owned: closed on failure too */
    /* not a USB device node at all */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(adbc_transport_usb_fd(&t, p[0], 0) < 0);
    CHECK(t == NULL);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    bed *b = bed_new();
    if (!b)
        return 1;
    bed_dev_spec s = {.port = "1", .bus = 1, .devnum = 2, .vid = 0x18d1, .pid = 0x4ee7,
                      .serial = "FD000001", .product = "Bed Phone", .mtp_first = 1};
    ADB = bed_add(b, &s);
    bed_dev_spec o = {.port = "2", .bus = 1, .devnum = 3, .vid = 0x0bda, .pid = 0x8153,
                      .serial = "NIC", .kind = BED_NOT_ADB};
    OTHER = bed_add(b, &o);
    if (!ADB || !OTHER)
        return 1;
    RUN(session_over_fd);
    RUN(fd_kept_when_not_owned);
    RUN(connect_by_fd_serial);
    RUN(fd_errors);
    bed_free(b);
    return T_DONE();
}
