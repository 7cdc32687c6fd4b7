/* SPDX-License-Identifier: Apache-2.0 */
/* The adb pairing protocol without I/O: packet framing, the AES-128-GCM
 * cipher keyed from SPAKE2, the PeerInfo record, and the state machine both
 * roles run over the (already established) TLS connection. Library-internal;
 * lib/tls/pair_client.c and pair_server.c drive it over a socket.
 *
 * On the wire, inside TLS 1.3, each side sends and then receives:
 *   1. {version 1, type 0 SPAKE2_MSG, length 32} + its SPAKE2 message
 *   2. {version 1, type 1 PEER_INFO, length 8208} + AES-GCM(PeerInfo)
 * The SPAKE2 password is the pairing code's bytes followed by 64 bytes of
 * TLS keying material (label "adb-label\0", no context), so the exchange is
 * bound to this TLS connection. */
#ifndef ADBC_TLS_PAIR_PROTO_H
#define ADBC_TLS_PAIR_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "tls/spake2.h"

/* ---- framing ---- */
#define ADBC_PAIR_HEADER_SIZE 6
#define ADBC_PAIR_VERSION 1
#define ADBC_PAIR_TYPE_SPAKE2_MSG 0
#define ADBC_PAIR_TYPE_PEER_INFO 1
#define ADBC_PEER_INFO_SIZE 8192
#define ADBC_PAIR_MAX_PAYLOAD (2 * ADBC_PEER_INFO_SIZE)
#define ADBC_PAIR_GCM_TAG 16
#define ADBC_PAIR_GCM_NONCE 12

/* {u8 version, u8 type, u32 big-endian payload length}. */
void pair_header_encode(uint8_t out[ADBC_PAIR_HEADER_SIZE], uint8_t type, uint32_t len);

/* Decode and check a header as adbd does: version 1, a known type, and
 * 0 < length <= 16384. ADBC_EPROTO (message says which field) otherwise. */
int pair_header_decode(const uint8_t in[ADBC_PAIR_HEADER_SIZE], uint8_t *type, uint32_t *len);

/* ---- cipher ---- */
typedef struct adbc_pair_cipher {
    uint8_t key[16];
    uint64_t enc_seq; /* nonce counter for what we send */
    uint64_t dec_seq; /* nonce counter for what we receive */
} adbc_pair_cipher;

/* key = HKDF-SHA256(spake2 key, no salt, "adb pairing_auth aes-128-gcm key"). */
int pair_cipher_init(adbc_pair_cipher *c, const uint8_t *key_material, size_t len);

/* out gets len + 16 bytes (ciphertext then tag); nonce = enc_seq as 8
 * little-endian bytes + 4 zero bytes, then enc_seq++. */
int pair_cipher_encrypt(adbc_pair_cipher *c, const uint8_t *in, size_t len, uint8_t *out);

/* Open len bytes (at least the 16-byte tag) into out (len - 16 bytes).
 * ADBC_EPAIRCODE when the tag does not verify: with pairing's key that means
 * the two sides used different codes. dec_seq advances only on success. */
int pair_cipher_decrypt(adbc_pair_cipher *c, const uint8_t *in, size_t len, uint8_t *out);

void pair_cipher_wipe(adbc_pair_cipher *c);

/* ---- PeerInfo: {u8 type; u8 data[8191]}, data a NUL-terminated string ---- */
#define ADBC_PEER_RSA_PUB_KEY 0  /* host -> device: its adbkey.pub line */
#define ADBC_PEER_DEVICE_GUID 1  /* device -> host: the device's GUID */
#define ADBC_PEER_INFO_MAX_STRING (ADBC_PEER_INFO_SIZE - 2)

/* Fill 8192 bytes: type, the string, zero padding. ADBC_EINVAL if the string
 * does not fit with its NUL. */
int peer_info_encode(uint8_t out[ADBC_PEER_INFO_SIZE], uint8_t type, const char *str);

/* Type and string (up to the first NUL, or all 8191 bytes when there is
 * none; *str is malloc'd). ADBC_EPROTO if the string has control
 * characters or is empty. */
int peer_info_decode(const uint8_t in[ADBC_PEER_INFO_SIZE], uint8_t *type, char **str);

/* ---- state machine ---- */
typedef enum adbc_pair_role { ADBC_PAIR_CLIENT = 0, ADBC_PAIR_SERVER = 1 } adbc_pair_role;

typedef enum adbc_pair_state {
    ADBC_PAIR_EXCHANGING_MSGS = 0, /* our SPAKE2 message is queued; waiting for theirs */
    ADBC_PAIR_EXCHANGING_INFO,     /* our PeerInfo is queued; waiting for theirs */
    ADBC_PAIR_DONE,                /* the peer's info arrived and decrypted */
    ADBC_PAIR_FAILED
} adbc_pair_state;

typedef struct adbc_pair_machine adbc_pair_machine;

/* A machine for one pairing. password = code bytes followed by the 64 bytes
 * of TLS keying material; info is what we send (type + string). Our SPAKE2
 * packet is queued at once: both roles send before they receive. */
int pair_machine_new(adbc_pair_machine **out, adbc_pair_role role, const uint8_t *password,
                          size_t password_len, uint8_t info_type, const char *info);

/* Bytes to send next (0 when none) and how many were sent. */
size_t pair_machine_next_send(adbc_pair_machine *m, const uint8_t **data);
void pair_machine_sent(adbc_pair_machine *m, size_t n);

/* Feed bytes received from the peer (any split). Errors are sticky:
 * ADBC_EPROTO for a malformed packet, ADBC_EPAIRCODE when the peer's info
 * does not decrypt (wrong code). Bytes after the peer's info are ignored. */
int pair_machine_recv(adbc_pair_machine *m, const uint8_t *data, size_t len);

adbc_pair_state pair_machine_state(const adbc_pair_machine *m);

/* Once DONE: the peer's info. The string stays owned by the machine. */
uint8_t pair_machine_peer_type(const adbc_pair_machine *m);
const char *pair_machine_peer_string(const adbc_pair_machine *m);

void pair_machine_free(adbc_pair_machine *m);

#endif
