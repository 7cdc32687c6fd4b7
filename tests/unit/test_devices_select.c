/* SPDX-License-Identifier: Apache-2.0 */
/* The selection rule's pure parts (lib/devices/select.c): which serials
 * are TCP addresses, and which serial is used when none is given. */
#include "t.h"

#include <stdlib.h>

#include "adbc/devices.h"

TEST(tcp_addresses)
{
    CHECK_EQ_INT(adbc_device_is_tcp("127.0.0.1:5555"), 1);
    CHECK_EQ_INT(adbc_device_is_tcp("[::1]:5555"), 1);
    CHECK_EQ_INT(adbc_device_is_tcp("phone.lan:37001"), 1);
}

TEST(names_are_not_tcp)
{
    CHECK_EQ_INT(adbc_device_is_tcp(NULL), 0);
    CHECK_EQ_INT(adbc_device_is_tcp(""), 0);
    CHECK_EQ_INT(adbc_device_is_tcp("R58M12ABCDE"), 0);
    CHECK_EQ_INT(adbc_device_is_tcp("emulator-5554"), 0);
    CHECK_EQ_INT(adbc_device_is_tcp("usb:1-4.2"), 0);
    CHECK_EQ_INT(adbc_device_is_tcp("usb:1-4:1.0"), 0); /* a colon after usb: is a path */
    CHECK_EQ_INT(adbc_device_is_tcp("fd:7"), 0);
    CHECK_EQ_INT(adbc_device_is_tcp("adb-R58M-x._adb-tls-connect._tcp"), 0);
}

TEST(serial_default)
{
    setenv("ANDROID_SERIAL", "emulator-5556", 1);
    CHECK_STR(adbc_device_serial(NULL), "emulator-5556");
    CHECK_STR(adbc_device_serial(""), "emulator-5556");
    CHECK_STR(adbc_device_serial("127.0.0.1:5555"), "127.0.0.1:5555");
    setenv("ANDROID_SERIAL", "", 1);
    CHECK(adbc_device_serial(NULL) == NULL);
    unsetenv("ANDROID_SERIAL");
    CHECK(adbc_device_serial(NULL) == NULL);
}

int main(void)
{
    RUN(tcp_addresses);
    RUN(names_are_not_tcp);
    RUN(serial_default);
    return T_DONE();
}
