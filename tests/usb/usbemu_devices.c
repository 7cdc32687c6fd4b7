/* SPDX-License-Identifier: Apache-2.0 */
/* The devices listing and selection API over emulated USB: states from the
 * handshake (device, unauthorized, offline, busy, bootloader), listing
 * without probing, TCP targets, and adbc_device_connect's choice of device
 * by serial, ANDROID_SERIAL or as the only one. */
#include "t.h"

#include "adbc/adbc.h"
#include "adbc/devices.h"
#include "bed.h"

static bed *B;
static bed_dev *DEVS[5];

static const adbc_device_entry *find(const adbc_device_entry *l, size_t n, const char *serial)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].serial, serial) == 0)
            return &l[i];
    return NULL;
}

TEST(states_from_handshake)
{
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.timeout_ms = 800;
    const char *tcp[] = {"127.0.0.1:1"};
    adbc_device_entry *l;
    size_t n;
    CHECK_EQ_INT(adbc_devices_list(&l, &n, tcp, 1, &o), 0);
    CHECK_EQ_INT(n, 6);
    const adbc_device_entry *ok = find(l, n, "DEV00001"), *un = find(l, n, "DEV00002"),
                            *off = find(l, n, "DEV00003"), *busy = find(l, n, "DEV00004"),
                            *fb = find(l, n, "DEV00005"), *t = find(l, n, "127.0.0.1:1");
    CHECK(ok && un && off && busy && fb && t);
    CHECK(ok == &l[0] && t == &l[5]); /* USB in port order, then TCP */
    CHECK_EQ_INT(ok->state, ADBC_DEV_DEVICE);
    CHECK_STR(adbc_device_state_text(ok), "device");
    CHECK_STR(ok->transport, "usb");
    CHECK_STR(ok->usb_path, "1-1");
    CHECK_STR(ok->model, "Bed Phone");
    CHECK_STR(ok->product, "bed_prod");
    CHECK_STR(ok->device, "bed");
    CHECK_EQ_INT(ok->error, 0);
    CHECK_EQ_INT(ok->vendor_id, 0x18d1);
    CHECK_STR(adbc_device_state_text(un), "unauthorized");
    CHECK_EQ_INT(un->error, ADBC_EUNAUTHORIZED);
    CHECK(strstr(un->message, "Allow USB debugging"));
    CHECK_STR(adbc_device_state_text(off), "offline");
    CHECK_EQ_INT(off->error, ADBC_ETIMEDOUT);
    CHECK_STR(adbc_device_state_text(busy), "busy");
    CHECK(strstr(busy->message, "adb kill-server"));
    CHECK_STR(adbc_device_state_text(fb), "bootloader");
    CHECK_EQ_INT(fb->error, 0);
    CHECK_STR(t->transport, "tcp");
    CHECK_STR(adbc_device_state_text(t), "offline");
    CHECK(t->error < 0);
    adbc_devices_free(l);
}

TEST(without_probing)
{
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.probe = 0;
    adbc_device_entry *l;
    size_t n;
    unsigned before = bed_dev_stats(DEVS[0]).claims;
    CHECK_EQ_INT(adbc_devices_list(&l, &n, NULL, 0, &o), 0);
    CHECK_EQ_INT(bed_dev_stats(DEVS[0]).claims, before); /* nothing was opened */
    CHECK_EQ_INT(n, 5);
    CHECK_STR(adbc_device_state_text(find(l, n, "DEV00001")), "unknown");
    CHECK_STR(adbc_device_state_text(find(l, n, "DEV00005")), "bootloader");
    CHECK_STR(find(l, n, "DEV00001")->model, "");
    adbc_devices_free(l);
    o.usb = 0;
    CHECK_EQ_INT(adbc_devices_list(&l, &n, NULL, 0, &o), 0);
    CHECK_EQ_INT(n, 0);
    CHECK(l == NULL);
}

TEST(connect_by_serial)
{
    adbc_conn *c;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = 3000;
    o.auth_timeout_ms = 200;
    unsetenv("ANDROID_SERIAL");
    /* several attached: a serial is needed */
    CHECK_EQ_INT(adbc_device_connect(&c, NULL, &o), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_device_connect(&c, "DEV00001", &o), 0);
    CHECK_STR(adbc_conn_desc(c), "usb:DEV00001 (1-1)");
    adbc_conn_close(c);
    setenv("ANDROID_SERIAL", "usb:1-1", 1);
    CHECK_EQ_INT(adbc_device_connect(&c, NULL, &o), 0);
    CHECK_STR(adbc_conn_desc(c), "usb:DEV00001 (1-1)");
    adbc_conn_close(c);
    setenv("ANDROID_SERIAL", "127.0.0.1:1", 1); /* a TCP serial goes to TCP */
    CHECK(adbc_device_connect(&c, "", &o) < 0);
    CHECK(strstr(adbc_last_error(), "127.0.0.1"));
    unsetenv("ANDROID_SERIAL");
    CHECK_EQ_INT(adbc_device_connect(&c, "DEV00002", &o), ADBC_EUNAUTHORIZED);
}

int main(void)
{
    B = bed_new();
    if (!B)
        return 1;
    static const struct {
        const char *serial;
        bed_auth auth;
        int silent, claimed;
        bed_kind kind;
    } d[5] = {{"DEV00001", BED_AUTH_KEY, 0, 0, BED_ADB},
              {"DEV00002", BED_AUTH_PROMPT, 0, 0, BED_ADB},
              {"DEV00003", BED_AUTH_KEY, 1, 0, BED_ADB},
              {"DEV00004", BED_AUTH_KEY, 0, 1, BED_ADB},
              {"DEV00005", BED_AUTH_KEY, 0, 0, BED_FASTBOOT}};
    static const char *ports[5] = {"1", "2", "3", "4", "5"};
    for (int i = 0; i < 5; i++) {
        bed_dev_spec s = {.port = ports[i], .bus = 1, .devnum = (unsigned)i + 2, .vid = 0x18d1,
                          .pid = 0x4ee7, .serial = d[i].serial, .sysfs_serial = 1,
                          .auth = d[i].auth, .silent = d[i].silent, .claimed = d[i].claimed,
                          .kind = d[i].kind};
        if (!(DEVS[i] = bed_add(B, &s)))
            return 1;
    }
    RUN(states_from_handshake);
    RUN(without_probing);
    RUN(connect_by_serial);
    bed_free(B);
    return T_DONE();
}
