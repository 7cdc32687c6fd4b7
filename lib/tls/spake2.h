/* SPDX-License-Identifier: Apache-2.0 */
/* SPAKE2 over edwards25519, byte-compatible with the implementation adbd's
 * pairing uses (BoringSSL's spake25519): same M and N points, same password
 * scalar, same transcript hash, same 64-byte key. Library-internal. */
#ifndef ADBC_TLS_SPAKE2_H
#define ADBC_TLS_SPAKE2_H

#include <stddef.h>
#include <stdint.h>

#define ADBC_SPAKE2_MSG_SIZE 32
#define ADBC_SPAKE2_KEY_SIZE 64
#define ADBC_SPAKE2_MAX_NAME 64

/* The two parties must take different roles: in adb pairing the host (client)
 * is alice and the device (server) is bob. */
typedef enum adbc_spake2_role { ADBC_SPAKE2_ALICE = 0, ADBC_SPAKE2_BOB = 1 } adbc_spake2_role;

typedef struct adbc_spake2 adbc_spake2;

/* A context for one run of the protocol. Names are bound into the key (adb
 * uses "adb pair client" and "adb pair server", each with its trailing NUL).
 * ADBC_EUNSUPPORTED when adbc was built without libsodium. */
int spake2_new(adbc_spake2 **out, adbc_spake2_role role, const uint8_t *my_name,
                    size_t my_name_len, const uint8_t *their_name, size_t their_name_len);

/* Our message for the password, with a fresh random private scalar. Only
 * once per context. */
int spake2_generate_msg(adbc_spake2 *s, uint8_t out[ADBC_SPAKE2_MSG_SIZE],
                             const uint8_t *password, size_t password_len);

/* Same, with the 64 bytes the private scalar is reduced from given by the
 * caller (tests use it for reproducible vectors). */
int spake2_generate_msg_seeded(adbc_spake2 *s, uint8_t out[ADBC_SPAKE2_MSG_SIZE],
                                    const uint8_t *password, size_t password_len,
                                    const uint8_t seed[64]);

/* Process the peer's message and derive the shared key. Only after
 * generate_msg, only once. ADBC_EPROTO if the message is not a usable curve
 * point. A wrong password does NOT fail here: the two sides simply get
 * different keys, which shows when the first encrypted message fails to
 * decrypt. */
int spake2_process_msg(adbc_spake2 *s, uint8_t key[ADBC_SPAKE2_KEY_SIZE],
                            const uint8_t *their_msg, size_t their_msg_len);

/* Wipe and free. NULL is fine. */
void spake2_free(adbc_spake2 *s);

#endif
