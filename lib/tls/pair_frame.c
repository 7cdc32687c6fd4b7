/* SPDX-License-Identifier: Apache-2.0 */
/* Pairing packet headers: {u8 version, u8 type, u32 big-endian length}.
 * Checked the way adbd checks them, so a hostile or confused peer is refused
 * before any payload is read. */
#include "tls/pair_proto.h"

#include "core/internal.h"

void pair_header_encode(uint8_t out[ADBC_PAIR_HEADER_SIZE], uint8_t type, uint32_t len)
{
    out[0] = ADBC_PAIR_VERSION;
    out[1] = type;
    out[2] = (uint8_t)(len >> 24);
    out[3] = (uint8_t)(len >> 16);
    out[4] = (uint8_t)(len >> 8);
    out[5] = (uint8_t)len;
}

int pair_header_decode(const uint8_t in[ADBC_PAIR_HEADER_SIZE], uint8_t *type, uint32_t *len)
{
    uint32_t n = (uint32_t)in[2] << 24 | (uint32_t)in[3] << 16 | (uint32_t)in[4] << 8 | in[5];
    if (in[0] != ADBC_PAIR_VERSION)
        return core_fail(ADBC_EPROTO,
                         "pairing: the peer speaks pairing packet version %u, adbc knows only %u: "
                         "update adbc or the device",
                         in[0], ADBC_PAIR_VERSION);
    if (in[1] != ADBC_PAIR_TYPE_SPAKE2_MSG && in[1] != ADBC_PAIR_TYPE_PEER_INFO)
        return core_fail(ADBC_EPROTO, "pairing: the peer sent a packet of unknown type %u", in[1]);
    if (n == 0 || n > ADBC_PAIR_MAX_PAYLOAD)
        return core_fail(ADBC_EPROTO,
                         "pairing: the peer announced a %u-byte packet (allowed: 1..%u)", n,
                         ADBC_PAIR_MAX_PAYLOAD);
    *type = in[1];
    *len = n;
    return 0;
}
