/* SPDX-License-Identifier: Apache-2.0 */
/* The 24-byte ADB packet header: encode, decode and describe. */
#include "adbc/session.h"
#include "core/internal.h"

#include <stdio.h>

void adbc_header_encode(uint8_t out[ADBC_HEADER_SIZE], uint32_t command, uint32_t arg0,
                        uint32_t arg1, uint32_t data_length, uint32_t data_check)
{
    if (!out)
        return;
    core_wr32(out, command);
    core_wr32(out + 4, arg0);
    core_wr32(out + 8, arg1);
    core_wr32(out + 12, data_length);
    core_wr32(out + 16, data_check);
    core_wr32(out + 20, command ^ 0xffffffffu);
}

uint32_t adbc_payload_sum(const uint8_t *data, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += data[i];
    return sum;
}

const char *adbc_command_name(uint32_t command, char buf[5])
{
    if (!buf)
        return "????";
    switch (command) {
    case ADBC_A_SYNC: case ADBC_A_CNXN: case ADBC_A_AUTH: case ADBC_A_OPEN:
    case ADBC_A_OKAY: case ADBC_A_CLSE: case ADBC_A_WRTE: case ADBC_A_STLS:
        buf[0] = (char)command;
        buf[1] = (char)(command >> 8);
        buf[2] = (char)(command >> 16);
        buf[3] = (char)(command >> 24);
        buf[4] = '\0';
        return buf;
    default:
        snprintf(buf, 5, "????");
        return buf;
    }
}

int adbc_header_decode(adbc_header *h, const uint8_t in[ADBC_HEADER_SIZE], uint32_t max_payload)
{
    if (!h || !in)
        return core_null(__func__, !h ? "the header" : "in");
    h->command = core_rd32(in);
    h->arg0 = core_rd32(in + 4);
    h->arg1 = core_rd32(in + 8);
    h->data_length = core_rd32(in + 12);
    h->data_check = core_rd32(in + 16);
    h->magic = core_rd32(in + 20);
    if (h->magic != (h->command ^ 0xffffffffu))
        return core_fail(ADBC_EPROTO,
                         "protocol violation: packet header with bad magic (command 0x%08x, "
                         "magic 0x%08x): the peer is not speaking ADB or the stream is corrupt",
                         h->command, h->magic);
    if (h->data_length > max_payload) {
        char nb[5];
        return core_fail(ADBC_EPROTO,
                         "protocol violation: %s packet with %u data bytes, above the "
                         "negotiated maximum of %u",
                         adbc_command_name(h->command, nb), h->data_length, max_payload);
    }
    return 0;
}
