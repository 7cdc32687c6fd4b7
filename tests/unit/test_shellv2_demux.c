/* SPDX-License-Identifier: Apache-2.0 */
/* The public shell v2 demultiplexer (adbc/shell.h) as both sides use it:
 * byte vectors of the format AOSP's adb defines in shell_protocol.h
 * ([u8 id][u32 little-endian length][data]; ids stdin 0, stdout 1, stderr 2,
 * exit 3, close-stdin 4, window-size 5 with ASCII "ROWSxCOLS,XxY"), any
 * split, the host's strict refusal of unknown ids, the device's lenient
 * skipping of them (as adbd), giving back part of a fragment a consumer
 * could not take, a stream cut inside a packet, and every argument check. */
#include "adbc/error.h"
#include "adbc/shell.h"
#include "t.h"

#include <string.h>

/* stdin "abc", an unknown id 9 with "zz", close-stdin (empty) */
static const uint8_t WIRE[] = {0, 3, 0, 0, 0, 'a', 'b', 'c', 9, 2, 0, 0, 0, 'z', 'z', 4, 0, 0, 0, 0};

/* What a device sends for `echo hi; echo err >&2; exit 42` with a window
 * size packet echoed first: the bytes as shell_protocol.cpp writes them. */
static const uint8_t SESSION[] = {
    5, 9, 0, 0, 0, '2', '4', 'x', '8', '0', ',', '0', 'x', '0', /* window-size "24x80,0x0" */
    1, 3, 0, 0, 0, 'h', 'i', '\n',                              /* stdout "hi\n" */
    2, 4, 0, 0, 0, 'e', 'r', 'r', '\n',                         /* stderr "err\n" */
    3, 1, 0, 0, 0, 42,                                          /* exit 42 */
};

/* Feed in[0..len) in pieces of `step` bytes; print each whole packet as
 * "id:data " (data reassembled), or return the error. */
static int drain(char *got, size_t cap, adbc_shellv2_demux *d, const uint8_t *in, size_t len,
                 size_t step)
{
    char pkt[256];
    size_t plen = 0, n = 0;
    got[0] = '\0';
    for (size_t off = 0; off < len;) {
        size_t chunk = len - off < step ? len - off : step;
        const uint8_t *p = in + off;
        size_t left = chunk;
        for (;;) {
            adbc_shellv2_frag fr;
            size_t used = 99;
            int r = adbc_shellv2_next(&fr, &used, d, p, left);
            if (r < 0)
                return r;
            if (used > left)
                return -1000;
            p += used;
            left -= used;
            if (r == 0) {
                if (left != 0)
                    return -1001; /* 0 means every byte was taken */
                break;
            }
            if (fr.len > sizeof pkt - plen)
                return -1002;
            memcpy(pkt + plen, fr.data, fr.len);
            plen += fr.len;
            if (fr.last) {
                n += (size_t)snprintf(got + n, cap - n, "%d:%.*s ", fr.id, (int)plen, pkt);
                plen = 0;
            }
        }
        off += chunk;
    }
    return 0;
}

TEST(header_bytes_as_adb_writes_them)
{
    uint8_t h[ADBC_SHELLV2_HEADER];
    CHECK_EQ_INT(adbc_shellv2_header(h, ADBC_SHELL_STDOUT, 0x01020304), 0);
    static const uint8_t want[] = {1, 4, 3, 2, 1}; /* little-endian length */
    CHECK_MEM(h, want, sizeof want);
    CHECK_EQ_INT(adbc_shellv2_header(h, 255, 0), 0);
    CHECK_EQ_INT(h[0], 255);
    CHECK_EQ_INT(adbc_shellv2_header(h, 256, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_header(h, -1, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_header(NULL, 1, 0), ADBC_EINVAL);
}

TEST(a_device_session_in_every_split)
{
    for (size_t step = 1; step <= sizeof SESSION; step++) {
        adbc_shellv2_demux d;
        CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
        char got[256];
        CHECK_EQ_INT(drain(got, sizeof got, &d, SESSION, sizeof SESSION, step), 0);
        CHECK_STR(got, "5:24x80,0x0 1:hi\n 2:err\n 3:* ");
        CHECK_EQ_INT(adbc_shellv2_finish(&d), 0);
    }
}

TEST(strict_refuses_unknown_id)
{
    adbc_shellv2_demux d;
    CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
    adbc_shellv2_frag fr;
    size_t used;
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, WIRE, sizeof WIRE), 1);
    CHECK_EQ_INT(fr.id, ADBC_SHELL_STDIN);
    CHECK_EQ_INT(fr.len, 3);
    CHECK_EQ_INT(fr.last, 1);
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, WIRE + used, sizeof WIRE - used), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "unknown id 9") != NULL);
}

TEST(lenient_skips_unknown_id_byte_by_byte)
{
    adbc_shellv2_demux d;
    CHECK_EQ_INT(adbc_shellv2_init(&d, ADBC_SHELLV2_LENIENT), 0);
    char got[64];
    CHECK_EQ_INT(drain(got, sizeof got, &d, WIRE, sizeof WIRE, 1), 0);
    CHECK_STR(got, "0:abc 9:zz 4: ");
}

TEST(unread_hands_the_rest_out_again)
{
    adbc_shellv2_demux d;
    CHECK_EQ_INT(adbc_shellv2_init(&d, ADBC_SHELLV2_LENIENT), 0);
    adbc_shellv2_frag fr;
    size_t used;
    const uint8_t *p = WIRE;
    size_t left = sizeof WIRE;
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, p, left), 1);
    CHECK_EQ_INT(fr.len, 3);
    CHECK_EQ_INT(fr.last, 1);
    /* more than was handed out is refused and changes nothing */
    CHECK_EQ_INT(adbc_shellv2_unread(&d, 4), ADBC_EINVAL);
    /* the consumer took one byte of "abc" */
    CHECK_EQ_INT(adbc_shellv2_unread(&d, 2), 0);
    CHECK_EQ_INT(adbc_shellv2_finish(&d), ADBC_EPROTO); /* "bc" still due */
    used -= 2;
    p += used;
    left -= used;
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, p, left), 1);
    CHECK_EQ_INT(fr.id, ADBC_SHELL_STDIN);
    CHECK_EQ_INT(fr.len, 2);
    CHECK_MEM(fr.data, "bc", 2);
    CHECK_EQ_INT(fr.last, 1);
    p += used;
    left -= used;
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, p, left), 1);
    CHECK_EQ_INT(fr.id, 9); /* the unknown packet follows, not a misread header */
}

TEST(a_stream_cut_inside_a_packet)
{
    adbc_shellv2_demux d;
    char got[64];
    /* inside a header */
    CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
    CHECK_EQ_INT(drain(got, sizeof got, &d, SESSION, 3, 1), 0);
    CHECK_EQ_INT(adbc_shellv2_finish(&d), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "header") != NULL);
    /* inside data */
    CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
    CHECK_EQ_INT(drain(got, sizeof got, &d, SESSION, 10, 4), 0);
    CHECK_EQ_INT(adbc_shellv2_finish(&d), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "data") != NULL);
    /* an empty input is fine, and so is an empty packet's end */
    CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
    CHECK_EQ_INT(adbc_shellv2_finish(&d), 0);
    adbc_shellv2_frag fr;
    size_t used = 7;
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, NULL, 0), 0);
    CHECK_EQ_INT(used, 0);
}

TEST(arguments_checked)
{
    adbc_shellv2_demux d;
    adbc_shellv2_frag fr;
    size_t used;
    CHECK_EQ_INT(adbc_shellv2_init(NULL, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_init(&d, 2), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "ADBC_SHELLV2_LENIENT") != NULL);
    /* a state never set up (zeroed, as `= {0}` leaves it) is refused */
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, WIRE, sizeof WIRE), ADBC_EINVAL);
    CHECK(strstr(adbc_last_error(), "adbc_shellv2_init") != NULL);
    CHECK_EQ_INT(adbc_shellv2_unread(&d, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_finish(&d), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_init(&d, 0), 0);
    CHECK_EQ_INT(adbc_shellv2_next(NULL, &used, &d, WIRE, sizeof WIRE), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_next(&fr, NULL, &d, WIRE, sizeof WIRE), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, NULL, WIRE, sizeof WIRE), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_next(&fr, &used, &d, NULL, 1), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_unread(NULL, 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_shellv2_finish(NULL), ADBC_EINVAL);
    /* nothing handed out yet: nothing to give back */
    CHECK_EQ_INT(adbc_shellv2_unread(&d, 1), ADBC_EINVAL);
    /* the checks left the state untouched: the stream still parses */
    char got[128];
    CHECK_EQ_INT(drain(got, sizeof got, &d, SESSION, sizeof SESSION, 7), 0);
    CHECK_STR(got, "5:24x80,0x0 1:hi\n 2:err\n 3:* ");
}

int main(void)
{
    RUN(header_bytes_as_adb_writes_them);
    RUN(a_device_session_in_every_split);
    RUN(strict_refuses_unknown_id);
    RUN(lenient_skips_unknown_id_byte_by_byte);
    RUN(unread_hands_the_rest_out_again);
    RUN(a_stream_cut_inside_a_packet);
    RUN(arguments_checked);
    return T_DONE();
}
