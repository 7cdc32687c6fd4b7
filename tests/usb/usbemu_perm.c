/* SPDX-License-Identifier: Apache-2.0 */
/* A device node this user may not open (no udev rule): it is still listed,
 * with its serial from sysfs, and opening it fails with ADBC_EPERM and a
 * message naming the fix. File modes do not bind root, so the test drops to
 * an unprivileged user first when it runs as root. */
#include "t.h"

#include <grp.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/usb.h"
#include "bed.h"

TEST(listed_without_access)
{
    adbc_usb_device *l;
    size_t n;
    CHECK_EQ_INT(adbc_usb_list(&l, &n), 0);
    CHECK_EQ_INT(n, 2);
    const adbc_usb_device *locked = strcmp(l[0].serial, "PERM0001") == 0 ? &l[0] : &l[1];
    const adbc_usb_device *open = locked == &l[0] ? &l[1] : &l[0];
    CHECK_STR(locked->serial, "PERM0001");
    CHECK_EQ_INT(locked->access, ADBC_EPERM);
    CHECK_STR(open->serial, "OPEN0001");
    CHECK_EQ_INT(open->access, 0);
    adbc_usb_list_free(l);
}

TEST(open_says_how_to_fix)
{
    adbc_transport *t;
    CHECK_EQ_INT(adbc_transport_usb(&t, "PERM0001"), ADBC_EPERM);
    const char *m = adbc_last_error();
    CHECK(strstr(m, "permission denied"));
    CHECK(strstr(m, "/dev/bus/usb/001/002"));
    CHECK(strstr(m, "ATTR{idVendor}==\"18d1\""));
    CHECK(strstr(m, "plugdev"));
    CHECK(strstr(m, "docs/usb.md"));
    /* the other device is fine */
    CHECK_EQ_INT(adbc_transport_usb(&t, "OPEN0001"), 0);
    adbc_transport_free(t);
}

int main(void)
{
    if (geteuid() == 0) {
        /* nobody:nogroup */
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
            fprintf(stderr, "cannot drop root privileges\n");
            return 1;
        }
    }
    unsetenv("ANDROID_USER_HOME");
    bed *b = bed_new();
    if (!b)
        return 1;
    bed_dev_spec s = {.port = "1", .bus = 1, .devnum = 2, .vid = 0x18d1, .pid = 0x4ee7,
                      .serial = "PERM0001", .sysfs_serial = 1, .no_access = 1};
    bed_dev_spec s2 = {.port = "2", .bus = 1, .devnum = 3, .vid = 0x2717, .pid = 0xff48,
                       .serial = "OPEN0001", .sysfs_serial = 1};
    if (!bed_add(b, &s) || !bed_add(b, &s2))
        return 1;
    RUN(listed_without_access);
    RUN(open_says_how_to_fix);
    bed_free(b);
    return T_DONE();
}
