/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — connections and streams: the blocking, thread-safe API.
 *
 * An adbc_conn joins a transport, a session engine and the two I/O threads
 * that drive them (one reads, one writes). Streams are handles on it that
 * different threads may use at the same time. Every blocking call takes a
 * timeout in milliseconds (< 0 waits forever; 0 polls).
 */
#ifndef ADBC_CONN_H
#define ADBC_CONN_H

#include "adbc/version.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adbc/auth.h"
#include "adbc/banner.h"
#include "adbc/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adbc_conn adbc_conn;
typedef struct adbc_stream adbc_stream;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_conn_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int connect_timeout_ms;  /* TCP connect + CNXN/AUTH handshake; default 10000 */
    int auth_timeout_ms;     /* wait for the user to accept the key prompt; default 60000 */
    int io_timeout_ms;       /* a write or read that makes no progress for this long
                                fails the connection; default 30000 */
    adbc_keyring *keys;      /* keys to authenticate with; NULL = adbc_keyring_load_default(.., 1) */
    const char *features;    /* host features to advertise; NULL = ADBC_HOST_FEATURES */
    uint32_t max_payload;    /* 0 = ADBC_MAX_PAYLOAD */
    uint32_t window;         /* delayed_ack per-stream receive window; 0 = default */
    /* Called (from the connecting thread) when the device shows the "Allow
     * USB debugging?" prompt and adbc waits for the user. */
    void (*on_auth_prompt)(void *user, const char *message);
    void *user;
    /* Streams the device opens (reverse forwarding: adbd connects a
     * `reverse:forward` rule by opening a stream to the host destination,
     * "tcp:8080"). NULL refuses every one, as a host without reverse
     * forwarding must. Otherwise called from the connection's reader thread
     * with its lock held, so it must decide at once and not call into the
     * connection: return 1 to accept (the stream then waits for
     * adbc_conn_accept), 0 to refuse (the device sees its connection
     * refused). At most 64 accepted streams wait; more are refused. */
    int (*on_device_open)(void *user, const char *destination);
    void *device_open_user; /* on_device_open's first argument */
    /* delayed_ack: the most bytes a stream keeps in flight (sent, not yet
     * acknowledged by the device), below the device's window; 0 = the
     * device's window. A relay to a slow consumer on the device gains
     * nothing from filling adbd's buffers. */
    uint32_t send_ahead;
    /* delayed_ack: the per-stream receive window instead of window when the
     * link is local (TCP over loopback, also under TLS: adbc_transport_link);
     * 0 = window. On loopback a round trip costs microseconds, so a small
     * window keeps the device as busy as a large one, and a relay that
     * passes the data on to another local socket keeps every queue short
     * (docs/adb-server.md measures it). */
    uint32_t local_window;
    /* delayed_ack: send_ahead on a local link (as local_window); 0 =
     * send_ahead. adbd lets a host run 32 MiB ahead of what it has passed
     * on; on loopback that only fills the device's buffers, read cold, and
     * 1 MiB keeps it as busy (docs/adb-server.md measures it). */
    uint32_t local_send_ahead;
} adbc_conn_opts;

/* Defaults as documented above. */
ADBC_API void adbc_conn_opts_init_sized(adbc_conn_opts *opts, size_t size);
#define adbc_conn_opts_init(o) adbc_conn_opts_init_sized((o), sizeof *(o))

/* Connect over TCP and complete the handshake. opts may be NULL; out and
 * addr may not (ADBC_EINVAL), nor an opts not set up by
 * adbc_conn_opts_init(). */
ADBC_API int adbc_connect(adbc_conn **out, const char *addr, const adbc_conn_opts *opts);

/* Run the handshake over a transport the caller opened (USB, fd, ...).
 * The connection takes the transport, also on failure. out and t may not
 * be NULL (ADBC_EINVAL). */
ADBC_API int adbc_conn_open(adbc_conn **out, adbc_transport *t, const adbc_conn_opts *opts);

/* Close every stream and the transport, join the I/O threads, free. */
ADBC_API void adbc_conn_close(adbc_conn *c);

/* The device's banner (state, properties, features). */
ADBC_API const adbc_banner *adbc_conn_banner(const adbc_conn *c);

/* 1 if the device advertised the feature. */
ADBC_API int adbc_conn_has_feature(const adbc_conn *c, const char *feature);

/* Negotiated protocol version, max payload, and whether delayed_ack is on. */
ADBC_API uint32_t adbc_conn_version(const adbc_conn *c);
ADBC_API uint32_t adbc_conn_max_payload(const adbc_conn *c);
ADBC_API int adbc_conn_delayed_ack(const adbc_conn *c);

/* The transport description ("tcp:127.0.0.1:5560"). */
ADBC_API const char *adbc_conn_desc(const adbc_conn *c);

/* 0 while the connection works; else the error that ended it. */
ADBC_API int adbc_conn_status(const adbc_conn *c);

/* Cancel: every call on c that is blocked (opening, reading, writing or
 * flushing a stream, and the services built on them) returns ADBC_ECANCELED
 * promptly, and so does every such call made later, until
 * adbc_conn_clear_interrupt. Safe from any thread (not from a signal
 * handler: call it from a thread that waits for the signal, as adbc-snap
 * does). Closing streams and the connection still works. */
ADBC_API void adbc_conn_interrupt(adbc_conn *c);

/* Let calls on c run again after adbc_conn_interrupt. Streams that were
 * interrupted mid-transfer are in an unknown state: close them. */
ADBC_API void adbc_conn_clear_interrupt(adbc_conn *c);

/* 1 while c is interrupted. */
ADBC_API int adbc_conn_interrupted(const adbc_conn *c);

/* Open a stream to a service ("shell,v2,raw:ls", "exec:cat", "sync:").
 * ADBC_EREFUSED when the device refuses it. */
ADBC_API int adbc_stream_open(adbc_stream **out, adbc_conn *c, const char *service, int timeout_ms);
/* The same with a name of len bytes that may hold NUL bytes, as abb_exec:
 * takes its arguments ("abb_exec:package\0install\0-S\0123"); a name that
 * ends in a NUL byte is refused (ADBC_EINVAL). adbc_stream_destination()
 * shows each NUL as a space. */
ADBC_API int adbc_stream_open_bytes(adbc_stream **out, adbc_conn *c, const void *service,
                                    size_t len, int timeout_ms);

/* Read up to len bytes. Returns the count (> 0), 0 at end of stream, or a
 * negative error (ADBC_ETIMEDOUT: nothing arrived in time; the stream stays
 * usable). */
ADBC_API ssize_t adbc_stream_read(adbc_stream *s, void *buf, size_t len, int timeout_ms);

/* Read exactly len bytes; ADBC_ECLOSED if the stream ends first. */
ADBC_API int adbc_stream_read_full(adbc_stream *s, void *buf, size_t len, int timeout_ms);

/* Write all len bytes (blocking on flow control). timeout_ms bounds the whole
 * call. */
ADBC_API int adbc_stream_write(adbc_stream *s, const void *buf, size_t len, int timeout_ms);

/* Wait until everything queued on the connection so far has been handed to
 * the transport (not for the peer's acknowledgement). Paces a writer that
 * wants little in flight. */
ADBC_API int adbc_stream_flush(adbc_stream *s, int timeout_ms);

/* Take the next stream the device opened and on_device_open accepted,
 * waiting up to timeout_ms. ADBC_ETIMEDOUT when none came; the
 * connection's error when it ended. The stream is used like one from
 * adbc_stream_open; adbc_stream_destination() says where the device wants
 * it to go. */
ADBC_API int adbc_conn_accept(adbc_stream **out, adbc_conn *c, int timeout_ms);

/* The service a stream was opened for: what adbc_stream_open was given, or
 * the destination the device asked for on an accepted stream. */
ADBC_API const char *adbc_stream_destination(const adbc_stream *s);

/* Close the stream (CLSE) and free the handle. Data the peer still sends is
 * dropped. */
ADBC_API void adbc_stream_close(adbc_stream *s);

/* The connection a stream belongs to. */
ADBC_API adbc_conn *adbc_stream_conn(adbc_stream *s);

#ifdef __cplusplus
}
#endif
#endif
