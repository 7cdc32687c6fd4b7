/* SPDX-License-Identifier: Apache-2.0 */
/* The shell v2 demultiplexer as both sides use it: byte vectors of the
 * documented framing ([u8 id][u32 le length][data]), any split, the host's
 * strict refusal of unknown ids, the device's lenient skipping of them (as
 * adbd), and giving back part of a fragment a consumer could not take. */
#include "services/shell_proto.h"

#include "adbc/error.h"
#include "adbc/shell.h"
#include "t.h"

/* stdin "abc", an unknown id 9 with "zz", close-stdin (empty) */
static const uint8_t WIRE[] = {0, 3, 0, 0, 0, 'a', 'b', 'c', 9, 2, 0, 0, 0, 'z', 'z', 3, 0, 0, 0, 0};

TEST(strict_refuses_unknown_id)
{
    adbc_shellv2_demux d = {0};
    size_t used, dlen;
    int id, last;
    const uint8_t *data;
    CHECK_EQ_INT(shellv2_next(&d, WIRE, sizeof WIRE, &used, &id, &data, &dlen, &last), 1);
    CHECK_EQ_INT(id, ADBC_SHELL_STDIN);
    CHECK_EQ_INT(dlen, 3);
    CHECK_EQ_INT(shellv2_next(&d, WIRE + used, sizeof WIRE - used, &used, &id, &data, &dlen,
                                   &last),
                 ADBC_EPROTO);
}

TEST(lenient_skips_unknown_id_byte_by_byte)
{
    adbc_shellv2_demux d = {.lenient = 1};
    char got[64] = "";
    size_t n = 0;
    for (size_t i = 0; i < sizeof WIRE; i++) { /* one byte at a time */
        size_t used, dlen;
        int id, last;
        const uint8_t *data;
        int r = shellv2_next(&d, WIRE + i, 1, &used, &id, &data, &dlen, &last);
        CHECK(r >= 0);
        CHECK_EQ_INT(used, 1);
        if (r == 1 && dlen)
            n += (size_t)snprintf(got + n, sizeof got - n, "%d:%c ", id, data[0]);
        if (r == 1 && last)
            n += (size_t)snprintf(got + n, sizeof got - n, "%d. ", id);
    }
    CHECK_STR(got, "0:a 0:b 0:c 0. 9:z 9:z 9. 3. ");
}

TEST(unread_hands_the_rest_out_again)
{
    adbc_shellv2_demux d = {.lenient = 1};
    size_t used, dlen;
    int id, last;
    const uint8_t *data;
    const uint8_t *p = WIRE;
    size_t left = sizeof WIRE;
    CHECK_EQ_INT(shellv2_next(&d, p, left, &used, &id, &data, &dlen, &last), 1);
    CHECK_EQ_INT(dlen, 3);
    CHECK_EQ_INT(last, 1);
    /* the consumer took one byte of "abc" */
    shellv2_unread(&d, 2);
    used -= 2;
    p += used;
    left -= used;
    CHECK_EQ_INT(shellv2_next(&d, p, left, &used, &id, &data, &dlen, &last), 1);
    CHECK_EQ_INT(id, ADBC_SHELL_STDIN);
    CHECK_EQ_INT(dlen, 2);
    CHECK_MEM(data, "bc", 2);
    CHECK_EQ_INT(last, 1);
    p += used;
    left -= used;
    CHECK_EQ_INT(shellv2_next(&d, p, left, &used, &id, &data, &dlen, &last), 1);
    CHECK_EQ_INT(id, 9); /* the unknown packet follows, not a misread header */
}

int main(void)
{
    RUN(strict_refuses_unknown_id);
    RUN(lenient_skips_unknown_id_byte_by_byte);
    RUN(unread_hands_the_rest_out_again);
    return T_DONE();
}
