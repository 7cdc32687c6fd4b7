/* SPDX-License-Identifier: Apache-2.0 */
/* The pairing state machine fed a peer's bytes in chunks (SPAKE2 message,
 * then the encrypted PeerInfo), in both roles. Each run does SPAKE2 work, so
 * this harness is slow (about a thousand runs a second). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tls/pair_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    /* The state machine, as the peer's bytes arrive in chunks. */
    static const uint8_t password[] = "123456" "0123456789012345678901234567890123456789012345678901234567890123";
    adbc_pair_machine *m = NULL;
    if (pair_machine_new(&m, (mode & 1) ? ADBC_PAIR_SERVER : ADBC_PAIR_CLIENT, password,
                              sizeof password - 1, ADBC_PEER_RSA_PUB_KEY, "QUFB fuzz@adbc") != 0)
        return 0;
    const uint8_t *d;
    size_t sn;
    while ((sn = pair_machine_next_send(m, &d)) > 0)
        pair_machine_sent(m, sn);
    size_t chunk = (mode >> 1) ? (mode >> 1) : (in.len ? in.len : 1);
    int rc = 0;
    while (in.len > 0 && rc >= 0) {
        size_t k = in.len < chunk ? in.len : chunk;
        rc = pair_machine_recv(m, in.p, k);
        in.p += k;
        in.len -= k;
        while ((sn = pair_machine_next_send(m, &d)) > 0)
            pair_machine_sent(m, sn);
    }
    if (rc < 0)
        FUZZ_ASSERT(pair_machine_state(m) == ADBC_PAIR_FAILED);
    if (pair_machine_state(m) == ADBC_PAIR_DONE)
        FUZZ_ASSERT(pair_machine_peer_string(m) != NULL);
    pair_machine_free(m);
    return 0;
}
