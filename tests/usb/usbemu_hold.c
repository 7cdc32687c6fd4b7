/* SPDX-License-Identifier: Apache-2.0 */
/* A USB device this process holds stays usable while other things happen on
 * the bus: a second device is plugged in (and used, and unplugged), and the
 * devices are listed, with and without a handshake. adbc-serve's adb server
 * lists the devices every second while it holds some of them. */
#include "t.h"

#include "adbc/adbc.h"
#include "adbc/devices.h"
#include "adbc/usb.h"
#include "bed.h"

static bed *B;

static bed_dev *plug(const char *serial, unsigned port)
{
    static char ports[8][8];
    snprintf(ports[port], sizeof ports[port], "%u", port);
    bed_dev_spec s = {.port = ports[port], .bus = 1, .devnum = port + 1, .vid = 0x18d1,
                      .pid = 0x4ee7, .serial = serial, .sysfs_serial = 1};
    return bed_add(B, &s);
}

static int connect_usb(adbc_conn **c, const char *serial)
{
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, serial);
    if (rc < 0)
        return rc;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = 5000;
    o.io_timeout_ms = 5000;
    return adbc_conn_open(c, t, &o);
}

/* One round trip through exec:cat on the held stream. */
static int echo(adbc_stream *s, const char *what)
{
    size_t n = strlen(what);
    char buf[64] = {0};
    int rc = adbc_stream_write(s, what, n, 5000);
    if (rc == 0)
        rc = adbc_stream_read_full(s, buf, n, 5000);
    if (rc == 0 && memcmp(buf, what, n) != 0)
        rc = -1;
    return rc;
}

static const adbc_device_entry *find(const adbc_device_entry *l, size_t n, const char *serial)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].serial, serial) == 0)
            return &l[i];
    return NULL;
}

TEST(held_device_survives_the_bus)
{
    bed_dev *a = plug("HOLD0001", 1);
    CHECK(a);
    adbc_conn *c;
    CHECK_EQ_INT(connect_usb(&c, "HOLD0001"), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "exec:cat", 5000), 0);
    CHECK_EQ_INT(echo(s, "before"), 0);
    unsigned claims = bed_dev_stats(a).claims;

    /* the bed refuses a device on a taken port or node (umockdev would
     * abort), and the held one is not disturbed */
    CHECK(plug("HOLD0009", 1) == NULL);
    CHECK_EQ_INT(echo(s, "after refused plug"), 0);

    /* a second device appears while the first is held */
    bed_dev *b = plug("HOLD0002", 2);
    CHECK(b);
    CHECK_EQ_INT(echo(s, "after plug"), 0);

    /* listing without a handshake (what adbc-serve does every second) */
    adbc_devices_opts o;
    adbc_devices_opts_init(&o);
    o.probe = 0;
    o.local = 0;
    o.remembered = 0;
    adbc_device_entry *l;
    size_t n;
    CHECK_EQ_INT(adbc_devices_list(&l, &n, NULL, 0, &o), 0);
    CHECK(find(l, n, "HOLD0001") && find(l, n, "HOLD0002"));
    adbc_devices_free(l);
    CHECK_EQ_INT(echo(s, "after list"), 0);

    /* listing with a handshake: the held device is busy, the other answers */
    o.probe = 1;
    o.timeout_ms = 3000;
    CHECK_EQ_INT(adbc_devices_list(&l, &n, NULL, 0, &o), 0);
    const adbc_device_entry *ea = find(l, n, "HOLD0001"), *eb = find(l, n, "HOLD0002");
    CHECK(ea && eb);
    if (ea && eb) {
        CHECK_STR(adbc_device_state_text(ea), "busy");
        CHECK_STR(adbc_device_state_text(eb), "device");
    }
    adbc_devices_free(l);
    CHECK_EQ_INT(echo(s, "after probe"), 0);

    /* the second device is used, and leaves */
    adbc_conn *c2;
    CHECK_EQ_INT(connect_usb(&c2, "HOLD0002"), 0);
    adbc_stream *s2;
    CHECK_EQ_INT(adbc_stream_open(&s2, c2, "exec:cat", 5000), 0);
    CHECK_EQ_INT(echo(s2, "second"), 0);
    CHECK_EQ_INT(echo(s, "both held"), 0);
    adbc_stream_close(s2);
    adbc_conn_close(c2);
    bed_unplug(b);
    CHECK_EQ_INT(echo(s, "after unplug"), 0);

    /* the first was never claimed again (nor reset): one session all along */
    CHECK_EQ_INT(bed_dev_stats(a).claims, claims);
    CHECK_STR(bed_dev_stats(a).error, "");
    CHECK_EQ_INT(adbc_conn_status(c), 0);
    adbc_stream_close(s);
    adbc_conn_close(c);
}

int main(void)
{
    B = bed_new();
    if (!B)
        return 1;
    RUN(held_device_survives_the_bus);
    bed_free(B);
    return T_DONE();
}
