/* SPDX-License-Identifier: Apache-2.0 */
/* Push and pull over emulated USB with adbc's sync client against the
 * bed's sync: service: file contents survive the trip both ways, at sizes
 * whose DATA chunks and ADB payloads land on USB packet boundaries. */
#include "t.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/sync.h"
#include "adbc/usb.h"
#include "bed.h"

static bed_dev *DEV;
static char DIR_[64];

static adbc_conn *connect_usb(void)
{
    adbc_transport *t;
    if (adbc_transport_usb(&t, "SYNC0001") < 0)
        return NULL;
    adbc_conn *c;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = 5000;
    return adbc_conn_open(&c, t, &o) == 0 ? c : NULL;
}

static uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i >> 8) * 31 + i * 5 + seed);
    return p;
}

static int write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, data, len);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    fstat(fd, &st);
    uint8_t *p = malloc((size_t)st.st_size + 1);
    ssize_t n = read(fd, p, (size_t)st.st_size);
    close(fd);
    *len = n < 0 ? 0 : (size_t)n;
    return p;
}

TEST(push_then_pull)
{
    adbc_conn *c = connect_usb();
    CHECK(c);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, 5000), 0);
    static const size_t sizes[] = {0, 1, 512, 65536, 65536 - 8, 300001};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        uint8_t *data = pattern(n, (unsigned)i);
        char local[128], back[128], remote[64];
        snprintf(local, sizeof local, "%s/up%zu", DIR_, i);
        snprintf(back, sizeof back, "%s/down%zu", DIR_, i);
        snprintf(remote, sizeof remote, "/data/local/tmp/f%zu", i);
        CHECK_EQ_INT(write_file(local, data, n), 0);
        adbc_sync_result r;
        CHECK_EQ_INT(adbc_sync_push(&r, s, local, remote, NULL, 10000), 0);
        CHECK_EQ_INT(r.bytes, n);
        size_t got_len = 0;
        unsigned mode;
        uint8_t *on_dev = bed_dev_get_file(DEV, remote, &got_len, &mode);
        if (!on_dev)
            fprintf(stderr, "  %s not on the device (size %zu)\n", remote, n);
        CHECK(on_dev);
        CHECK_EQ_INT(got_len, n);
        CHECK_MEM(on_dev, data, n);
        CHECK(S_ISREG(mode));
        free(on_dev);
        adbc_sync_statbuf st;
        CHECK_EQ_INT(adbc_sync_stat(&st, s, remote, 5000), 0);
        CHECK_EQ_INT(st.size, n);
        CHECK_EQ_INT(adbc_sync_pull(&r, s, remote, back, NULL, 10000), 0);
        uint8_t *pulled = read_file(back, &got_len);
        CHECK(pulled);
        CHECK_EQ_INT(got_len, n);
        CHECK_MEM(pulled, data, n);
        free(pulled);
        free(data);
        unlink(local);
        unlink(back);
    }
    adbc_sync_close(s);
    CHECK_STR(bed_dev_stats(DEV).error, "");
    adbc_conn_close(c);
}

TEST(pull_missing_fails_cleanly)
{
    adbc_conn *c = connect_usb();
    CHECK(c);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, c, 5000), 0);
    char back[128];
    snprintf(back, sizeof back, "%s/none", DIR_);
    CHECK(adbc_sync_pull(NULL, s, "/sdcard/missing", back, NULL, 5000) < 0);
    CHECK(access(back, F_OK) != 0); /* nothing left behind */
    /* the session recovers for the next call */
    bed_dev_put_file(DEV, "/sdcard/hello.txt", "hello\n", 6, 0100644);
    CHECK_EQ_INT(adbc_sync_pull(NULL, s, "/sdcard/hello.txt", back, NULL, 5000), 0);
    size_t n;
    uint8_t *p = read_file(back, &n);
    CHECK(p && n == 6 && memcmp(p, "hello\n", 6) == 0);
    free(p);
    unlink(back);
    adbc_sync_close(s);
    adbc_conn_close(c);
}

int main(void)
{
    bed *b = bed_new();
    if (!b)
        return 1;
    bed_dev_spec s = {.port = "1", .bus = 1, .devnum = 2, .vid = 0x18d1, .pid = 0x4ee7,
                      .serial = "SYNC0001", .sysfs_serial = 1};
    DEV = bed_add(b, &s);
    snprintf(DIR_, sizeof DIR_, "/tmp/adbc-usbsync-XXXXXX");
    if (!DEV || !mkdtemp(DIR_))
        return 1;
    RUN(push_then_pull);
    RUN(pull_missing_fails_cleanly);
    rmdir(DIR_);
    bed_free(b);
    return T_DONE();
}
