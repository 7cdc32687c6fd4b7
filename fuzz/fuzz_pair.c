/* SPDX-License-Identifier: Apache-2.0 */
/* Pairing's parsers: the 6-byte packet header, the PeerInfo record and the
 * AES-GCM opening of an encrypted PeerInfo. Cheap enough for millions of
 * runs; the SPAKE2-driven state machine has its own harness
 * (fuzz_pair_machine.c). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tls/pair_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    fuzz_u8(&in); /* the mode byte of fuzz_pair_machine's seeds */

    if (in.len >= ADBC_PAIR_HEADER_SIZE) {
        uint8_t type = 0;
        uint32_t len = 0;
        if (pair_header_decode(in.p, &type, &len) == 0)
            FUZZ_ASSERT(len > 0 && len <= ADBC_PAIR_MAX_PAYLOAD && type <= 1);
    }

    /* PeerInfo: the input, zero padded or cut to 8192 bytes. */
    static uint8_t info[ADBC_PEER_INFO_SIZE];
    size_t n = in.len < sizeof info ? in.len : sizeof info;
    memset(info, 0, sizeof info);
    memcpy(info, in.p, n);
    uint8_t ptype = 0;
    char *str = NULL;
    if (peer_info_decode(info, &ptype, &str) == 0) {
        FUZZ_ASSERT(str && str[0] && strlen(str) <= ADBC_PEER_INFO_MAX_STRING + 1);
        free(str);
    }

    /* Opening a (forged) encrypted record: must fail cleanly, never read
     * past the input. */
    adbc_pair_cipher c;
    static const uint8_t km[32] = {1, 2, 3};
    if (in.len >= ADBC_PAIR_GCM_TAG && pair_cipher_init(&c, km, sizeof km) == 0) {
        uint8_t *plain = malloc(in.len);
        if (plain) {
            int rc = pair_cipher_decrypt(&c, in.p, in.len, plain);
            FUZZ_ASSERT(rc < 0 && c.dec_seq == 0);
            free(plain);
        }
        pair_cipher_wipe(&c);
    }
    return 0;
}
