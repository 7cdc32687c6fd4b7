/* SPDX-License-Identifier: Apache-2.0 */
/* A device that disappears mid-transfer: its URBs fail with ENODEV, later
 * ioctls too, and a "remove" uevent goes out. Blocked reads and writes must
 * end with a clear error, and closing must not hang. */
#include "t.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/usb.h"
#include "bed.h"

static bed *B;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

struct unplug_later {
    bed_dev *d;
    int ms;
};

static void *unplug_thread(void *arg)
{
    struct unplug_later *u = arg;
    usleep((useconds_t)u->ms * 1000);
    bed_unplug(u->d);
    return NULL;
}

TEST(read_in_flight)
{
    bed_dev *d = plug("GONE0001", 1);
    CHECK(d);
    adbc_conn *c;
    CHECK_EQ_INT(connect_usb(&c, "GONE0001"), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "exec:cat", 5000), 0);
    CHECK_EQ_INT(adbc_stream_write(s, "ping", 4, 5000), 0);
    char buf[16];
    CHECK_EQ_INT(adbc_stream_read_full(s, buf, 4, 5000), 0);
    /* now a read waits for data that will never come */
    pthread_t th;
    struct unplug_later u = {d, 300};
    pthread_create(&th, NULL, unplug_thread, &u);
    int64_t t0 = now_ms();
    ssize_t n = adbc_stream_read(s, buf, sizeof buf, 20000);
    int64_t took = now_ms() - t0;
    pthread_join(th, NULL);
    CHECK_EQ_INT(n, ADBC_EIO);
    CHECK(strstr(adbc_last_error(), "disconnected"));
    CHECK(strstr(adbc_last_error(), "usb:GONE0001"));
    CHECK(took < 5000);
    CHECK_EQ_INT(adbc_conn_status(c), ADBC_EIO);
    /* later calls fail the same way, at once */
    CHECK_EQ_INT(adbc_stream_write(s, "x", 1, 5000), ADBC_EIO);
    adbc_stream *s2;
    CHECK(adbc_stream_open(&s2, c, "exec:cat", 5000) < 0);
    adbc_stream_close(s);
    t0 = now_ms();
    adbc_conn_close(c);
    CHECK(now_ms() - t0 < 5000);
}

TEST(write_after_unplug)
{
    bed_dev *d = plug("GONE0002", 2);
    CHECK(d);
    adbc_conn *c;
    CHECK_EQ_INT(connect_usb(&c, "GONE0002"), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "exec:cat", 5000), 0);
    bed_unplug(d);
    /* whichever of the reader or the writer notices first ends the
     * connection; the write reports it */
    static uint8_t big[256 * 1024];
    int rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++)
        rc = adbc_stream_write(s, big, sizeof big, 5000);
    CHECK_EQ_INT(rc, ADBC_EIO);
    CHECK(strstr(adbc_last_error(), "disconnected"));
    adbc_stream_close(s);
    adbc_conn_close(c);
}

TEST(gone_before_open)
{
    bed_dev *d = plug("GONE0003", 3);
    CHECK(d);
    bed_unplug(d);
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, "GONE0003");
    CHECK(rc == ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "GONE0003"));
}

int main(void)
{
    B = bed_new();
    if (!B)
        return 1;
    RUN(read_in_flight);
    RUN(write_after_unplug);
    RUN(gone_before_open);
    bed_free(B);
    return T_DONE();
}
