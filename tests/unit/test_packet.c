/* SPDX-License-Identifier: Apache-2.0 */
/* The 24-byte packet header: exact encodings of every command, decoding and
 * its two checks (magic, data_length against the limit), the data check as a
 * plain byte sum, and command names. The expected bytes are written out by
 * hand from protocol.txt's layout: six little-endian words, command, arg0,
 * arg1, data_length, data_check, magic = command ^ 0xffffffff. */
#include "t.h"

#include "adbc/error.h"
#include "adbc/session.h"

typedef struct vec {
    uint32_t cmd, a0, a1, len, check;
    uint8_t bytes[24];
} vec;

static const vec vectors[] = {
    /* CNXN(0x01000001, 1 MiB) carrying the 70-byte default host banner,
     * whose bytes sum to 0x1ab1. */
    {ADBC_A_CNXN, 0x01000001u, 0x100000u, 70, 0x1ab1,
     {0x43, 0x4e, 0x58, 0x4e, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,
      0x46, 0x00, 0x00, 0x00, 0xb1, 0x1a, 0x00, 0x00, 0xbc, 0xb1, 0xa7, 0xb1}},
    {ADBC_A_AUTH, 1, 0, 20, 0xbe,
     {0x41, 0x55, 0x54, 0x48, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x14, 0x00, 0x00, 0x00, 0xbe, 0x00, 0x00, 0x00, 0xbe, 0xaa, 0xab, 0xb7}},
    {ADBC_A_OPEN, 1, 0x400000u, 10, 0x3a1,
     {0x4f, 0x50, 0x45, 0x4e, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00,
      0x0a, 0x00, 0x00, 0x00, 0xa1, 0x03, 0x00, 0x00, 0xb0, 0xaf, 0xba, 0xb1}},
    {ADBC_A_OKAY, 7, 1, 4, 0x40,
     {0x4f, 0x4b, 0x41, 0x59, 0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x04, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xb0, 0xb4, 0xbe, 0xa6}},
    {ADBC_A_WRTE, 1, 7, 5, 0x214,
     {0x57, 0x52, 0x54, 0x45, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
      0x05, 0x00, 0x00, 0x00, 0x14, 0x02, 0x00, 0x00, 0xa8, 0xad, 0xab, 0xba}},
    {ADBC_A_CLSE, 0, 1, 0, 0,
     {0x43, 0x4c, 0x53, 0x45, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xbc, 0xb3, 0xac, 0xba}},
    {ADBC_A_SYNC, 1, 2, 0, 0,
     {0x53, 0x59, 0x4e, 0x43, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xac, 0xa6, 0xb1, 0xbc}},
    {ADBC_A_STLS, 0x01000000u, 0, 0, 0,
     {0x53, 0x54, 0x4c, 0x53, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xac, 0xab, 0xb3, 0xac}},
};
#define NVEC (sizeof vectors / sizeof vectors[0])

TEST(command_constants_are_ascii)
{
    const struct {
        uint32_t cmd;
        const char *ascii;
    } c[] = {{ADBC_A_SYNC, "SYNC"}, {ADBC_A_CNXN, "CNXN"}, {ADBC_A_AUTH, "AUTH"},
             {ADBC_A_OPEN, "OPEN"}, {ADBC_A_OKAY, "OKAY"}, {ADBC_A_CLSE, "CLSE"},
             {ADBC_A_WRTE, "WRTE"}, {ADBC_A_STLS, "STLS"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint32_t v = (uint32_t)(uint8_t)c[i].ascii[0] | (uint32_t)(uint8_t)c[i].ascii[1] << 8 |
                     (uint32_t)(uint8_t)c[i].ascii[2] << 16 |
                     (uint32_t)(uint8_t)c[i].ascii[3] << 24;
        CHECK_EQ_INT(c[i].cmd, v);
    }
    CHECK_EQ_INT(ADBC_VERSION_MIN, 0x01000000);
    CHECK_EQ_INT(ADBC_VERSION_SKIP_CHECKSUM, 0x01000001);
    CHECK_EQ_INT(ADBC_MAX_PAYLOAD, 1048576);
    CHECK_EQ_INT(ADBC_MAX_PAYLOAD_V1, 4096);
}

TEST(encode_matches_vectors)
{
    for (size_t i = 0; i < NVEC; i++) {
        uint8_t out[24];
        memset(out, 0xee, sizeof out);
        adbc_header_encode(out, vectors[i].cmd, vectors[i].a0, vectors[i].a1, vectors[i].len,
                           vectors[i].check);
        if (memcmp(out, vectors[i].bytes, 24) != 0)
            fprintf(stderr, "  vector %zu differs\n", i);
        CHECK_MEM(out, vectors[i].bytes, 24);
    }
}

TEST(decode_matches_vectors)
{
    for (size_t i = 0; i < NVEC; i++) {
        adbc_header h;
        memset(&h, 0xee, sizeof h);
        CHECK_EQ_INT(adbc_header_decode(&h, vectors[i].bytes, ADBC_MAX_PAYLOAD), 0);
        CHECK_EQ_INT(h.command, vectors[i].cmd);
        CHECK_EQ_INT(h.arg0, vectors[i].a0);
        CHECK_EQ_INT(h.arg1, vectors[i].a1);
        CHECK_EQ_INT(h.data_length, vectors[i].len);
        CHECK_EQ_INT(h.data_check, vectors[i].check);
        CHECK_EQ_INT(h.magic, vectors[i].cmd ^ 0xffffffffu);
    }
}

TEST(decode_bad_magic_is_eproto)
{
    uint8_t b[24];
    memcpy(b, vectors[4].bytes, 24); /* WRTE */
    b[20] ^= 0x01;
    adbc_header h;
    adbc_clear_error();
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "magic") != NULL);
    /* the message shows the command word that arrived */
    CHECK(strstr(adbc_last_error(), "45545257") != NULL);

    /* magic equal to the command itself (a classic corruption) */
    memcpy(b, vectors[3].bytes, 24);
    memcpy(b + 20, b, 4);
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), ADBC_EPROTO);

    /* all zeroes: command 0, magic 0 */
    memset(b, 0, sizeof b);
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), ADBC_EPROTO);
}

TEST(decode_unknown_command_with_valid_magic_is_accepted)
{
    /* check_header in adb checks only magic and length; what an unknown
     * command means is the session's business. */
    uint8_t b[24];
    adbc_header_encode(b, 0x58585858u, 1, 2, 0, 0);
    adbc_header h;
    CHECK_EQ_INT(adbc_header_decode(&h, b, 4096), 0);
    CHECK_EQ_INT(h.command, 0x58585858u);
}

TEST(decode_data_length_limit)
{
    uint8_t b[24];
    adbc_header h;
    adbc_header_encode(b, ADBC_A_WRTE, 1, 2, 4096, 0);
    CHECK_EQ_INT(adbc_header_decode(&h, b, 4096), 0); /* exactly the limit */
    adbc_header_encode(b, ADBC_A_WRTE, 1, 2, 4097, 0);
    adbc_clear_error();
    CHECK_EQ_INT(adbc_header_decode(&h, b, 4096), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "WRTE") != NULL);
    CHECK(strstr(adbc_last_error(), "4097") != NULL);
    CHECK(strstr(adbc_last_error(), "4096") != NULL);

    adbc_header_encode(b, ADBC_A_CNXN, 1, 2, 0xffffffffu, 0);
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), ADBC_EPROTO);
    CHECK(strstr(adbc_last_error(), "CNXN") != NULL);

    adbc_header_encode(b, ADBC_A_OKAY, 1, 2, ADBC_MAX_PAYLOAD, 0);
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), 0);
    adbc_header_encode(b, ADBC_A_OKAY, 1, 2, ADBC_MAX_PAYLOAD + 1, 0);
    CHECK_EQ_INT(adbc_header_decode(&h, b, ADBC_MAX_PAYLOAD), ADBC_EPROTO);
}

TEST(payload_sum_is_plain_byte_sum)
{
    CHECK_EQ_INT(adbc_payload_sum(NULL, 0), 0);
    CHECK_EQ_INT(adbc_payload_sum((const uint8_t *)"\xff\xff\xff", 3), 0x2fd);
    const char *banner = "host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack";
    CHECK_EQ_INT(adbc_payload_sum((const uint8_t *)banner, strlen(banner)), 0x1ab1);
    CHECK_EQ_INT(adbc_payload_sum((const uint8_t *)"host::\0", 7), 0x232);
    /* not a CRC: order does not matter */
    CHECK_EQ_INT(adbc_payload_sum((const uint8_t *)"\x01\x02", 2),
                 adbc_payload_sum((const uint8_t *)"\x02\x01", 2));
}

TEST(payload_sum_wraps_at_32_bits)
{
    /* 0xff * 16843010 = 0x1_0000_00fe: the sum is taken modulo 2^32. */
    size_t n = 16843010;
    uint8_t *b = malloc(n);
    CHECK(b != NULL);
    memset(b, 0xff, n);
    uint32_t s = adbc_payload_sum(b, n);
    free(b);
    CHECK_EQ_INT(s, 0xfe);
}

TEST(command_names)
{
    char nb[5];
    CHECK_STR(adbc_command_name(ADBC_A_CNXN, nb), "CNXN");
    CHECK_STR(adbc_command_name(ADBC_A_AUTH, nb), "AUTH");
    CHECK_STR(adbc_command_name(ADBC_A_OPEN, nb), "OPEN");
    CHECK_STR(adbc_command_name(ADBC_A_OKAY, nb), "OKAY");
    CHECK_STR(adbc_command_name(ADBC_A_WRTE, nb), "WRTE");
    CHECK_STR(adbc_command_name(ADBC_A_CLSE, nb), "CLSE");
    CHECK_STR(adbc_command_name(ADBC_A_SYNC, nb), "SYNC");
    CHECK_STR(adbc_command_name(ADBC_A_STLS, nb), "STLS");
    CHECK_STR(adbc_command_name(0, nb), "????");
    CHECK_STR(adbc_command_name(0x00ffffffu, nb), "????");
    CHECK_STR(adbc_command_name(0x58585858u, nb), "????");
}

int main(void)
{
    RUN(command_constants_are_ascii);
    RUN(encode_matches_vectors);
    RUN(decode_matches_vectors);
    RUN(decode_bad_magic_is_eproto);
    RUN(decode_unknown_command_with_valid_magic_is_accepted);
    RUN(decode_data_length_limit);
    RUN(payload_sum_is_plain_byte_sum);
    RUN(payload_sum_wraps_at_32_bits);
    RUN(command_names);
    return T_DONE();
}
