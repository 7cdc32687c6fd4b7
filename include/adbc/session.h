/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — the ADB protocol engine, without I/O (sans-IO).
 *
 * An adbc_session is a state machine over bytes: feed it what the transport
 * received (adbc_session_recv) and take from it what to send
 * (adbc_session_next_send / adbc_session_sent). Events come out through the
 * callbacks. It owns no socket, thread or clock, so it is tested with byte
 * vectors and can be driven from any event loop. The same engine serves the
 * host role (what adb and adbc-snap are) and the device role (what adbd is;
 * the test device in fixtures/ runs on it).
 *
 * Output is a queue of segments: each packet is a 24-byte header segment
 * followed, when it has data, by one payload segment. A byte-stream
 * transport writes them back to back; a USB transport sends each segment as
 * its own bulk transfer.
 *
 * Not thread-safe: one thread (or one lock) at a time per session.
 */
#ifndef ADBC_SESSION_H
#define ADBC_SESSION_H

#include "adbc/version.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "adbc/banner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Packet commands (little-endian ASCII). */
#define ADBC_A_SYNC 0x434e5953u
#define ADBC_A_CNXN 0x4e584e43u
#define ADBC_A_AUTH 0x48545541u
#define ADBC_A_OPEN 0x4e45504fu
#define ADBC_A_OKAY 0x59414b4fu
#define ADBC_A_CLSE 0x45534c43u
#define ADBC_A_WRTE 0x45545257u
#define ADBC_A_STLS 0x534c5453u

#define ADBC_VERSION_MIN 0x01000000u            /* checksummed payloads */
#define ADBC_VERSION_SKIP_CHECKSUM 0x01000001u  /* data_check is 0 */
#define ADBC_STLS_VERSION 0x01000000u

#define ADBC_AUTH_TOKEN 1
#define ADBC_AUTH_SIGNATURE 2
#define ADBC_AUTH_RSAPUBLICKEY 3

#define ADBC_HEADER_SIZE 24
#define ADBC_MAX_PAYLOAD (1024u * 1024u)     /* what adbc offers */
#define ADBC_MAX_PAYLOAD_V1 4096u            /* handshake packets stay within this */

/* The features adbc's host role implements and advertises. */
#define ADBC_HOST_FEATURES "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack"

/* One decoded 24-byte header. */
/* abi: fixed — layout fixed by the wire format */
typedef struct adbc_header {
    uint32_t command, arg0, arg1, data_length, data_check, magic;
} adbc_header;

/* Encode a header (magic computed from command) into 24 bytes. */
ADBC_API void adbc_header_encode(uint8_t out[ADBC_HEADER_SIZE], uint32_t command, uint32_t arg0,
                        uint32_t arg1, uint32_t data_length, uint32_t data_check);

/* Decode 24 bytes; ADBC_EPROTO (with a message describing the packet) when
 * the magic does not match the command or data_length exceeds max_payload. */
ADBC_API int adbc_header_decode(adbc_header *out, const uint8_t in[ADBC_HEADER_SIZE], uint32_t max_payload);

/* The data check: plain byte sum of the payload. */
ADBC_API uint32_t adbc_payload_sum(const uint8_t *data, size_t len);

/* "CNXN", "WRTE"...; "????" for an unknown command. buf holds 5 bytes. */
ADBC_API const char *adbc_command_name(uint32_t command, char buf[5]);

typedef enum adbc_role { ADBC_ROLE_HOST = 0, ADBC_ROLE_DEVICE = 1 } adbc_role;

typedef enum adbc_session_state {
    ADBC_SESSION_HANDSHAKE = 0, /* CNXN/AUTH in progress */
    ADBC_SESSION_AUTH_PROMPT,   /* host: our public key is on the device's screen */
    ADBC_SESSION_TLS,           /* STLS agreed: the caller must run TLS, then call adbc_session_tls_done */
    ADBC_SESSION_ONLINE,        /* streams may be opened */
    ADBC_SESSION_FAILED         /* a protocol error ended the session */
} adbc_session_state;

typedef struct adbc_session adbc_session;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_session_callbacks {
    size_t size;           /* sizeof the struct as the caller compiled it */
    /* Host: sign the token with key number `index` (0, 1, ...). Return 0 and
     * fill sig/sig_len (sig holds 512 bytes), or ADBC_ENOTFOUND when there is
     * no key with that index. */
    int (*auth_sign)(void *user, unsigned index, const uint8_t *token, size_t token_len,
                     uint8_t *sig, size_t *sig_len);
    /* Host: the public key line ("base64 user@host") to offer when every
     * signature was refused, or NULL to fail with ADBC_EUNAUTHORIZED. */
    const char *(*auth_public_key)(void *user);
    /* Host: the public key was sent; the device shows a prompt to the user. */
    void (*auth_prompt)(void *user);

    /* Device: fill `token` with `len` random bytes. NULL uses the kernel's
     * random source (getrandom). */
    int (*auth_random)(void *user, uint8_t *token, size_t len);
    /* Device: 1 if sig over token verifies under an authorized key. */
    int (*auth_verify)(void *user, const uint8_t *token, size_t token_len, const uint8_t *sig,
                       size_t sig_len);
    /* Device: the host offered a public key (NUL-terminated line). Return 1
     * to accept it now (as if the user tapped Allow), 0 to leave the host
     * unauthorized. */
    int (*auth_offer)(void *user, const char *pubkey);

    /* Both: the handshake is complete (state is ONLINE). */
    void (*on_online)(void *user);
    /* The peer opened stream `id` for `service`. Return 0 to accept (OKAY
     * is sent), or nonzero to refuse (CLSE(0, remote) is sent). Write to the
     * stream once on_writable is called, which happens right after on_open
     * returns 0 and the OKAY is queued. Device role: the host's requests.
     * Host role: only with adbc_session_config.accept_opens set (the device
     * connecting a reverse forward; `service` is the host destination it
     * asks for, "tcp:8080"); otherwise every device OPEN is refused. */
    int (*on_open)(void *user, uint32_t id, const char *service);
    /* Host: our OPEN of stream `id` was accepted. */
    void (*on_ready)(void *user, uint32_t id);
    /* Data arrived on stream `id`. The engine does not keep it: the callee
     * copies it and later calls adbc_session_consume() as it is used, which
     * is what returns flow-control credit to the peer. */
    void (*on_data)(void *user, uint32_t id, const uint8_t *data, size_t len);
    /* Stream `id` may take more data (adbc_session_writable() > 0). */
    void (*on_writable)(void *user, uint32_t id);
    /* Stream `id` ended: reason 0 when the peer closed it, ADBC_EREFUSED when
     * the peer refused our OPEN. The id is invalid afterwards. Not called
     * for streams closed with adbc_session_close_stream(). */
    void (*on_closed)(void *user, uint32_t id, int reason);
    /* As on_open, with the service name's length: the OPEN's payload less
     * its trailing NULs, as adbd takes it. The name may hold NUL bytes
     * (abb_exec: separates its arguments with them); service[len] is NUL.
     * When set it is called instead of on_open; without it a name that
     * holds a NUL byte is refused. */
    int (*on_open_bytes)(void *user, uint32_t id, const uint8_t *service, size_t len);
} adbc_session_callbacks;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_session_config {
    size_t size;           /* sizeof the struct as the caller compiled it */
    adbc_role role;
    uint32_t version;        /* offered protocol version; 0 = ADBC_VERSION_SKIP_CHECKSUM */
    uint32_t max_payload;    /* offered max payload; 0 = ADBC_MAX_PAYLOAD */
    const char *banner;      /* full CNXN banner; NULL = built from role and features */
    const char *features;    /* feature list; NULL = ADBC_HOST_FEATURES for the host */
    uint32_t window;         /* delayed_ack receive window per stream; 0 = 4 MiB */
    int auth_required;       /* device: challenge with AUTH (else CNXN at once) */
    int offer_tls;           /* device: answer CNXN with STLS */
    unsigned max_auth_tokens;/* host: give up after this many TOKENs; 0 = 16 */
    int accept_opens;        /* host: pass streams the device opens to on_open
                                (reverse forwarding); 0 refuses them all */
    uint32_t send_ahead;     /* delayed_ack: the most bytes a stream keeps sent and not yet
                                acknowledged, below the peer's window; 0 = the peer's
                                window (adbd grants 32 MiB) */
} adbc_session_config;

/* Fill cfg with defaults for the role. */
ADBC_API void adbc_session_config_init_sized(adbc_session_config *cfg, adbc_role role, size_t size);
#define adbc_session_config_init(o, r) adbc_session_config_init_sized((o), (r), sizeof *(o))

ADBC_API int adbc_session_new(adbc_session **out, const adbc_session_config *cfg,
                     const adbc_session_callbacks *cb, void *user);
ADBC_API void adbc_session_free(adbc_session *s);

/* Host: queue our CNXN. (The device role waits for the host's.) */
ADBC_API int adbc_session_start(adbc_session *s);

/* Feed received bytes (any split; len is capped at INT_MAX). Returns the
 * number of bytes consumed: all of them, except when a packet moves the
 * session into the TLS state, where the bytes after it belong to TLS and are
 * left to the caller. A negative error means the session is FAILED and only
 * adbc_session_free() is useful; the message names the offending packet. */
ADBC_API int adbc_session_recv(adbc_session *s, const uint8_t *data, size_t len);

/* The next segment to send, or 0 when nothing is queued. The pointer stays
 * valid until the next call into the session. */
ADBC_API size_t adbc_session_next_send(const uint8_t **data, adbc_session *s);

/* Up to max queued segments from the current position, in order (for a
 * writev on a byte-stream transport). Returns how many were filled. */
ADBC_API int adbc_session_peek_send(adbc_session *s, struct iovec *iov, int max);

/* Mark n bytes as sent (may span several segments). */
ADBC_API void adbc_session_sent(adbc_session *s, size_t n);

/* Bytes queued to send (headers and payloads). */
ADBC_API size_t adbc_session_send_queued(const adbc_session *s);

ADBC_API adbc_session_state adbc_session_state_get(const adbc_session *s);

/* The peer's banner, parsed; NULL before its CNXN. */
ADBC_API const adbc_banner *adbc_session_peer(const adbc_session *s);

/* Negotiated protocol version and max payload (valid once ONLINE). */
ADBC_API uint32_t adbc_session_version(const adbc_session *s);
ADBC_API uint32_t adbc_session_max_payload(const adbc_session *s);
/* 1 when both sides advertised delayed_ack. */
ADBC_API int adbc_session_delayed_ack(const adbc_session *s);

/* Host: open a stream to `service`. *id gets the local id. */
ADBC_API int adbc_session_open(uint32_t *id, adbc_session *s, const char *service);
/* Host: the same with a name of len bytes that may hold NUL bytes
 * ("abb_exec:package\0install\0..."); it is sent NUL-terminated. A name
 * that ends in a NUL byte is refused (ADBC_EINVAL): the device strips
 * trailing NULs. */
ADBC_API int adbc_session_open_bytes(uint32_t *id, adbc_session *s, const void *service,
                                     size_t len);

/* Bytes stream `id` may send now without exceeding flow control. */
ADBC_API size_t adbc_session_writable(const adbc_session *s, uint32_t id);

/* Queue up to len bytes on stream id, split into WRTE packets. Returns the
 * number of bytes accepted (possibly 0 when the window is closed), or a
 * negative error (unknown or closed stream). */
ADBC_API ssize_t adbc_session_write(adbc_session *s, uint32_t id, const uint8_t *data, size_t len);

/* The receiver used n bytes of stream id: return credit to the peer (OKAY). */
ADBC_API int adbc_session_consume(adbc_session *s, uint32_t id, size_t n);

/* Close a stream from our side (CLSE). The id is invalid afterwards. */
ADBC_API int adbc_session_close_stream(adbc_session *s, uint32_t id);

/* Number of open streams. */
ADBC_API size_t adbc_session_stream_count(const adbc_session *s);

/* Device: accept a host whose key offer was left pending (the user tapped
 * Allow later). Sends CNXN. */
ADBC_API int adbc_session_auth_accept(adbc_session *s);

/* After the caller finished the TLS handshake that STLS asked for. */
ADBC_API int adbc_session_tls_done(adbc_session *s);

/* Text of the error that failed the session ("" if none). */
ADBC_API const char *adbc_session_error(const adbc_session *s);

#ifdef __cplusplus
}
#endif
#endif
