/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — transports: what carries ADB packets (TCP, USB, a file descriptor,
 * TLS over one of those). A transport is a small vtable so new kinds plug
 * in without touching the connection layer. */
#ifndef ADBC_TRANSPORT_H
#define ADBC_TRANSPORT_H

#include "adbc/version.h"

#include <stddef.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adbc_transport adbc_transport;

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_transport_link {
    int local;     /* 1: the peer runs on this machine (TCP over loopback) */
    unsigned mbps; /* the link's signalling rate in Mbit/s (USB: the bus speed); 0: unknown */
} adbc_transport_link;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_transport_ops {
    size_t size;           /* sizeof the struct as the caller compiled it */
    const char *name; /* "tcp", "usb", "fd", "tls" */
    /* Read up to len bytes. Returns the count (> 0), ADBC_ETIMEDOUT when
     * nothing came within timeout_ms (< 0: wait forever), ADBC_ECLOSED at
     * end of stream, or another negative error. May run concurrently with
     * write() from another thread. */
    int (*read)(adbc_transport *t, void *buf, size_t len, int timeout_ms);
    /* Write all len bytes, or fail. A packet transport (USB) sends them as
     * one transfer. ADBC_ETIMEDOUT when no progress was possible within
     * timeout_ms. */
    int (*write)(adbc_transport *t, const void *buf, size_t len, int timeout_ms);
    /* Make blocked and future read/write calls fail with ADBC_ECLOSED. Safe
     * from any thread, more than once. */
    void (*shutdown)(adbc_transport *t);
    /* Release everything. */
    void (*destroy)(adbc_transport *t);
    /* Optional, byte-stream transports only: write every iovec, in order,
     * with as few system calls as possible. NULL: write() per segment. */
    int (*writev)(adbc_transport *t, const struct iovec *iov, int iovcnt, int timeout_ms);
    /* Optional: what the link is, for choices that depend on its speed (sync
     * compresses only links slower than its compressors). Fill in what is
     * known; out comes zeroed. NULL: nothing is known. */
    void (*link)(adbc_transport *t, adbc_transport_link *out);
} adbc_transport_ops;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
struct adbc_transport {
    size_t size;           /* sizeof the struct as the caller compiled it */
    const adbc_transport_ops *ops;
    int packet_mode;  /* 1: every segment is one transfer (USB) */
    char desc[128];   /* "tcp:127.0.0.1:5037", used in error messages */
};

/* Connect over TCP. addr is "host:port", "[v6addr]:port" or "host" (port
 * 5555). IPv4 and IPv6, TCP_NODELAY, connect timeout in ms. */
ADBC_API int adbc_transport_tcp(adbc_transport **out, const char *addr, int timeout_ms);

/* Wrap an already-connected socket or pipe-like descriptor (socketpair in
 * tests, a descriptor handed over by another program). own: close it on
 * destroy. On a socket, shutdown() also shuts down its reading side
 * (shutdown(2) with SHUT_RD), which is what releases a read waiting in
 * recv(); writing is left to the owner. */
ADBC_API int adbc_transport_fd(adbc_transport **out, int fd, int own);

/* Split "host:port" / "[v6]:port" / "host" into parts (default_port when
 * absent). host must hold 256 bytes. */
ADBC_API int adbc_parse_hostport(char *host, size_t hostlen, unsigned *port, const char *addr,
                        unsigned default_port);

ADBC_API void adbc_transport_free(adbc_transport *t);

/* What t says of its link (its ops' link(); all zero when it says nothing):
 * where the peer is and how fast the link is. */
ADBC_API void adbc_transport_link_get(adbc_transport_link *out, adbc_transport *t);

#ifdef __cplusplus
}
#endif
#endif
