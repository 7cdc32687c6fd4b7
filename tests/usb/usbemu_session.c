/* SPDX-License-Identifier: Apache-2.0 */
/* An ADB session over emulated USB: handshake with AUTH, shell v2, and data
 * both ways at sizes around the USB packet and adbd read-block boundaries,
 * where a missing zero-length packet or an over-long read would stall. */
#include "t.h"

#include <pthread.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "adbc/usb.h"
#include "bed.h"
#include "transport/usb_int.h"

static bed *B;
static bed_dev *DEV, *SMALL, *PROMPT, *SILENT;

static int open_conn(adbc_conn **c, const char *serial, adbc_transport **tout, int zlp)
{
    adbc_transport *t;
    int rc = adbc_transport_usb(&t, serial);
    if (rc < 0)
        return rc;
    usb_transport_set_zlp(t, zlp);
    if (tout)
        *tout = t;
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.connect_timeout_ms = 5000;
    o.auth_timeout_ms = 500;
    o.io_timeout_ms = 5000;
    return adbc_conn_open(c, t, &o);
}

TEST(handshake_with_auth)
{
    adbc_conn *c;
    unsigned before = bed_dev_stats(DEV).packets_in;
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 1), 0);
    const adbc_banner *b = adbc_conn_banner(c);
    CHECK_EQ_INT(b->state, ADBC_DEV_DEVICE);
    CHECK_STR(b->model, "Bed Phone");
    CHECK(adbc_conn_has_feature(c, "shell_v2"));
    CHECK_STR(adbc_conn_desc(c), "usb:EMU0001 (1-1)");
    CHECK_EQ_INT(adbc_conn_max_payload(c), ADBC_MAX_PAYLOAD);
    /* CNXN, then a signed AUTH: at least two packets reached the device */
    CHECK(bed_dev_stats(DEV).packets_in >= before + 2);
    adbc_conn_close(c);
}

TEST(shell_v2)
{
    adbc_conn *c;
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 1), 0);
    adbc_run_result r;
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_AUTO, "echo hello over usb", NULL, 0, 0, 5000), 0);
    CHECK_STR((char *)r.out, "hello over usb\n");
    CHECK_EQ_INT(r.exit_code, 0);
    adbc_run_result_clear(&r);
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_AUTO, "bed-fail", NULL, 0, 0, 5000), 0);
    CHECK_EQ_INT(r.exit_code, 3);
    CHECK_EQ_INT(r.err_len, 5);
    CHECK_MEM(r.err, "oops\n", 5);
    adbc_run_result_clear(&r);
    adbc_conn_close(c);
}

static uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 13 + seed);
    return p;
}

/* Send n bytes through exec:cat and read them back. */
static int echo_size(adbc_conn *c, size_t n)
{
    adbc_stream *s;
    if (adbc_stream_open(&s, c, "exec:cat", 5000) < 0)
        return -1;
    uint8_t *out = pattern(n, (unsigned)n), *in = malloc(n ? n : 1);
    int rc = adbc_stream_write(s, out, n, 10000);
    if (rc == 0)
        rc = adbc_stream_read_full(s, in, n, 10000);
    if (rc == 0 && memcmp(in, out, n) != 0)
        rc = -2;
    adbc_stream_close(s);
    free(out);
    free(in);
    return rc;
}

TEST(out_sizes_around_boundaries)
{
    adbc_conn *c;
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 1), 0);
    static const size_t sizes[] = {1,     23,    24,    25,    511,   512,   513,  1024,
                                   4096,  16383, 16384, 16385, 65536, 65537, 1 << 20,
                                   (1 << 20) + 1};
    bed_stats s0 = bed_dev_stats(DEV);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int rc = echo_size(c, sizes[i]);
        if (rc != 0)
            fprintf(stderr, "  size %zu: %d %s\n", sizes[i], rc, adbc_last_error());
        CHECK_EQ_INT(rc, 0);
    }
    bed_stats s1 = bed_dev_stats(DEV);
    CHECK_STR(s1.error, "");
    /* payloads of 512, 1024, 4096, 16384, 65536 and 1 MiB needed one */
    CHECK(s1.out_zlps >= s0.out_zlps + 6);
    /* reads never asked for more than a packet can carry */
    CHECK(s1.max_in_request <= adbc_conn_max_payload(c));
    CHECK(s1.max_in_request >= 65536);
    adbc_conn_close(c);
}

/* The device sends payloads that fill their last USB packet exactly and
 * no zero-length packet; only reads sized from the header finish. */
TEST(in_sizes_around_boundaries)
{
    adbc_conn *c;
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 1), 0);
    static const size_t sizes[] = {512, 1024, 16384, 65536, 1 << 20, 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "bed-gen %zu", sizes[i]);
        adbc_run_result r;
        CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_EXEC, cmd, NULL, 0, 0, 10000), 0);
        CHECK_EQ_INT(r.out_len, sizes[i]);
        for (size_t k = 0; k < sizes[i]; k++)
            if (r.out[k] != (uint8_t)(k * 7 + 3))
                CHECK(!"pattern mismatch");
        adbc_run_result_clear(&r);
    }
    CHECK_STR(bed_dev_stats(DEV).error, "");
    adbc_conn_close(c);
}

TEST(small_negotiated_payload)
{
    adbc_conn *c;
    CHECK_EQ_INT(open_conn(&c, "EMU0002", NULL, 1), 0);
    CHECK_EQ_INT(adbc_conn_max_payload(c), 4096);
    CHECK_EQ_INT(echo_size(c, 100000), 0);
    adbc_run_result r;
    CHECK_EQ_INT(adbc_run(&r, c, ADBC_SHELL_EXEC, "bed-gen 70000", NULL, 0, 0, 10000), 0);
    CHECK_EQ_INT(r.out_len, 70000);
    adbc_run_result_clear(&r);
    bed_stats s = bed_dev_stats(SMALL);
    CHECK_STR(s.error, "");
    CHECK(s.max_in_request <= 4096); /* reads sized to the negotiated payload */
    adbc_conn_close(c);
}

/* Without zero-length packets, a 512-byte payload does not end adbd's read
 * block: the next header is appended to it and the device's reader fails.
 * This is what the ZLP after aligned transfers prevents. */
TEST(missing_zlp_breaks_the_device)
{
    adbc_conn *c;
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 0), 0);
    adbc_stream *s;
    CHECK_EQ_INT(adbc_stream_open(&s, c, "exec:cat", 5000), 0);
    uint8_t *p = pattern(512, 1);
    CHECK_EQ_INT(adbc_stream_write(s, p, 512, 5000), 0);
    CHECK_EQ_INT(adbc_stream_write(s, p, 10, 5000), 0);
    free(p);
    uint8_t buf[600];
    CHECK(adbc_stream_read_full(s, buf, 522, 1500) < 0);
    int broke = 0;
    for (int i = 0; i < 50 && !broke; i++) {
        broke = strstr(bed_dev_stats(DEV).error, "too many bytes") != NULL;
        usleep(20000);
    }
    CHECK(broke);
    adbc_stream_close(s);
    adbc_conn_close(c);
    /* a new host resets the device */
    CHECK_EQ_INT(open_conn(&c, "EMU0001", NULL, 1), 0);
    CHECK_EQ_INT(echo_size(c, 512), 0);
    CHECK_STR(bed_dev_stats(DEV).error, "");
    adbc_conn_close(c);
}

static int prompted;
static void on_prompt(void *user, const char *msg)
{
    (void)user;
    (void)msg;
    prompted = 1;
}

TEST(unauthorized_and_silent)
{
    adbc_transport *t;
    adbc_conn *c;
    CHECK_EQ_INT(adbc_transport_usb(&t, "EMU0003"), 0);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.auth_timeout_ms = 300;
    o.on_auth_prompt = on_prompt;
    CHECK_EQ_INT(adbc_conn_open(&c, t, &o), ADBC_EUNAUTHORIZED);
    CHECK(prompted);
    CHECK(bed_dev_stats(PROMPT).packets_in >= 3); /* CNXN, SIGNATURE, RSAPUBLICKEY */

    CHECK_EQ_INT(adbc_transport_usb(&t, "EMU0004"), 0);
    o.connect_timeout_ms = 400;
    CHECK_EQ_INT(adbc_conn_open(&c, t, &o), ADBC_ETIMEDOUT);
    CHECK(strstr(adbc_last_error(), "usb:EMU0004"));
    CHECK(bed_dev_stats(SILENT).packets_in == 0);
}

int main(void)
{
    B = bed_new();
    if (!B)
        return 1;
    bed_dev_spec s = {.port = "1", .bus = 1, .devnum = 2, .vid = 0x18d1, .pid = 0x4ee7,
                      .serial = "EMU0001", .sysfs_serial = 1, .product = "Bed Phone"};
    DEV = bed_add(B, &s);
    bed_dev_spec s2 = s;
    s2.port = "2", s2.devnum = 3, s2.serial = "EMU0002", s2.max_payload = 4096;
    s2.max_packet = 64;
    SMALL = bed_add(B, &s2);
    bed_dev_spec s3 = s;
    s3.port = "3", s3.devnum = 4, s3.serial = "EMU0003", s3.auth = BED_AUTH_PROMPT;
    PROMPT = bed_add(B, &s3);
    bed_dev_spec s4 = s;
    s4.port = "4", s4.devnum = 5, s4.serial = "EMU0004", s4.silent = 1;
    SILENT = bed_add(B, &s4);
    if (!DEV || !SMALL || !PROMPT || !SILENT)
        return 1;
    RUN(handshake_with_auth);
    RUN(shell_v2);
    RUN(out_sizes_around_boundaries);
    RUN(in_sizes_around_boundaries);
    RUN(small_negotiated_payload);
    RUN(missing_zlp_breaks_the_device);
    RUN(unauthorized_and_silent);
    bed_free(B);
    return T_DONE();
}
