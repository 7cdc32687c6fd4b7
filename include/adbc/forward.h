/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — port forwarding and reverse forwarding over one connection.
 *
 * A forward listens on the host (TCP on any address family, a unix socket
 * path, an abstract name) and relays each accepted connection over its own
 * stream to a destination on the device ("tcp:8080", "localabstract:NAME",
 * "localreserved:NAME", "localfilesystem:PATH", "jdwp:PID",
 * "vsock:CID:PORT"). A reverse rule makes the device listen (adbd keeps the
 * rule) and open a stream to the host for each connection; adbc relays it
 * to a host destination, and only to destinations it was told about.
 *
 * Each relayed connection has a thread of its own, and a second one from
 * the first time its local socket cannot take the device's data at once
 * (until then the connection's reader thread sends it): bytes move both ways
 * at once, a slow reader on either side stops its direction only (the
 * stream's flow control holds the device back; the socket's buffer holds
 * the local peer back), so memory stays bounded by the stream window (the
 * connection's adbc_conn_opts.window, plus one packet) and one read buffer
 * per connection. The device's data goes to the local socket straight from
 * the stream's buffer. A connection that carries many forwarded streams
 * may want a smaller window than the default (adbc-snap uses 256 KiB). The device closing a stream ends the
 * local connection once the data before it is delivered (our sending side
 * shuts down first: a local peer that reads to end of file sees it all);
 * the local peer's end of file closes the stream, or with half_close lets
 * the device answer until it closes. One connection ending never disturbs
 * another.
 *
 * The listener itself is driven by the caller: adbc_forward_run() in a
 * thread the caller owns, or adbc_forward_fd() + adbc_forward_dispatch()
 * from the caller's event loop. Events (one per connection opened, refused
 * or closed) come from relay threads: the callback must be thread-safe.
 */
#ifndef ADBC_FORWARD_H
#define ADBC_FORWARD_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adbc_forward adbc_forward;
typedef struct adbc_reverse adbc_reverse;

typedef enum adbc_forward_event_kind {
    ADBC_FWD_OPENED = 1, /* a connection is relayed */
    ADBC_FWD_REFUSED,    /* its destination refused it (the local side is closed) */
    ADBC_FWD_CLOSED      /* it ended; bytes and error say how */
} adbc_forward_event_kind;

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_forward_event {
    adbc_forward_event_kind kind;
    unsigned id;             /* connection number within its forward, from 1 */
    const char *peer;        /* who connected: "127.0.0.1:51234", "unix", "device" */
    const char *destination; /* where it went: "tcp:8080" */
    uint64_t bytes_to_device, bytes_from_device;
    int error;               /* 0 for a clean end, else the adbc error code */
    const char *message;     /* "" or what went wrong */
} adbc_forward_event;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_forward_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int open_timeout_ms;     /* opening the device stream / host connection; default 10000 */
    size_t buffer_size;      /* the most read from a local peer at once (straight into the
                                packet to the device); default 256 KiB */
    unsigned max_connections;/* at once per forward; more wait in the backlog; default 256 */
    int half_close;          /* 1: after the local peer's end of file keep delivering the
                                device's data until the device closes (for peers that
                                shut down only their sending side); 0: close the stream
                                then, as adb does (a keep-alive server on the device
                                would otherwise hold the stream open) */
    void (*on_event)(void *user, const adbc_forward_event *ev); /* any thread */
    void *user;
} adbc_forward_opts;

ADBC_API void adbc_forward_opts_init_sized(adbc_forward_opts *o, size_t size);
#define adbc_forward_opts_init(o) adbc_forward_opts_init_sized((o), sizeof *(o))

/* Listen on `local` and relay to `remote` on the device over connection c.
 * local: "tcp:PORT" (127.0.0.1, as adb), "tcp:HOST:PORT" (any address,
 * "[::1]" for IPv6 literals), "tcp:0" picks a free port;
 * "localfilesystem:PATH" (or "local:PATH"), "localabstract:NAME". The
 * connection must outlive the forward. opts may be NULL. */
ADBC_API int adbc_forward_new(adbc_forward **out, adbc_conn *c, const char *local, const char *remote,
                     const adbc_forward_opts *opts);

/* The local address in use, with a chosen port resolved ("tcp:40123"). */
ADBC_API const char *adbc_forward_local(const adbc_forward *f);
ADBC_API const char *adbc_forward_remote(const adbc_forward *f);
/* The TCP port listened on, 0 for a unix socket. */
ADBC_API int adbc_forward_port(const adbc_forward *f);

/* Event loop use: poll this descriptor for input, then call dispatch. */
ADBC_API int adbc_forward_fd(const adbc_forward *f);
/* Accept every pending connection without blocking and start relaying it;
 * reap connections that ended. Returns 0, or the connection's error once
 * the device is gone (every relayed connection is then closing). */
ADBC_API int adbc_forward_dispatch(adbc_forward *f);

/* Serve in the calling thread until adbc_forward_stop(), the device
 * connection ends (its error is returned), or timeout_ms passes (< 0:
 * no limit; returns 0). */
ADBC_API int adbc_forward_run(adbc_forward *f, int timeout_ms);
/* Make adbc_forward_run return; safe from any thread and from a signal
 * handler. */
ADBC_API void adbc_forward_stop(adbc_forward *f);

/* Connections being relayed now. */
ADBC_API size_t adbc_forward_active(adbc_forward *f);

/* Stop listening, close every relayed connection, free. */
ADBC_API void adbc_forward_free(adbc_forward *f);

/* Relay a connected socket and an open stream both ways in the calling
 * thread, as a forward relays each connection it accepts (the endings
 * above; opts' buffer_size and half_close apply, open_timeout_ms and
 * max_connections do not; on_event is called as for a forward's
 * connection, from this thread and the relay's second one). For a server
 * that answers a request on the socket itself and then hands the socket to
 * a device stream (adb's server protocol, adbc-serve). Takes fd and st:
 * both are closed on return. 0 when either side ended cleanly, else the
 * error that ended it. opts may be NULL. */
ADBC_API int adbc_forward_splice(adbc_stream *st, int fd, const adbc_forward_opts *opts);

/* ---- reverse ---- */

/* The host side of reverse forwarding for one connection. Create it before
 * connecting and pass it to adbc_reverse_conn_opts, which points the
 * connection's on_device_open at it: device-opened streams are accepted
 * only for destinations of rules added here, every other one is refused.
 * Relays run until adbc_reverse_free (before adbc_conn_close). */
ADBC_API int adbc_reverse_new(adbc_reverse **out, const adbc_forward_opts *opts);
ADBC_API void adbc_reverse_conn_opts(adbc_conn_opts *o, adbc_reverse *r);
/* Start relaying on the connected connection. */
ADBC_API int adbc_reverse_start(adbc_reverse *r, adbc_conn *c);

/* reverse:forward: make the device listen on `remote` ("tcp:8080",
 * "tcp:0", "localabstract:NAME") and relay its connections to the host's
 * `local` ("tcp:PORT" on 127.0.0.1, "tcp:HOST:PORT", "localabstract:NAME",
 * "localfilesystem:PATH"). norebind: fail if the device has the rule
 * already. resolved (may be NULL, size len) gets the device's listen spec
 * with a chosen port resolved. Errors carry the device's message. */
ADBC_API int adbc_reverse_add(char *resolved, size_t len, adbc_reverse *r, const char *remote,
                     const char *local, int norebind);
/* reverse:killforward / reverse:killforward-all. */
ADBC_API int adbc_reverse_remove(adbc_reverse *r, const char *remote);
ADBC_API int adbc_reverse_remove_all(adbc_reverse *r);

/* Connections being relayed now. */
ADBC_API size_t adbc_reverse_active(adbc_reverse *r);

/* Stop relaying (closes every relayed connection), free. The device keeps
 * its rules until they are removed or the connection ends. */
ADBC_API void adbc_reverse_free(adbc_reverse *r);

/* Requests that need no adbc_reverse (any connection): the device's rules
 * as adb lists them ("SERIAL REMOTE LOCAL\n" lines; free *out with adbc_free()),
 * removing one, removing all. */
ADBC_API int adbc_reverse_list(char **out, adbc_conn *c);
ADBC_API int adbc_reverse_request(char *reply, size_t len, adbc_conn *c, const char *request);

#ifdef __cplusplus
}
#endif
#endif
