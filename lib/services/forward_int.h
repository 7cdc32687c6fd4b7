/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by forward.c (local listeners), reverse.c (device-opened streams)
 * and forward_relay.c (one relayed connection: a socket and a stream). */
#ifndef ADBC_FORWARD_INT_H
#define ADBC_FORWARD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "adbc/forward.h"
#include "conn/conn_svc.h"
#include "core/internal.h"

/* The relays of one forward or reverse object. */
typedef struct fwd_relays {
    pthread_mutex_t mu;
    struct relay *list;
    size_t active;
    unsigned next_id;
    adbc_forward_opts opts;
} fwd_relays;

typedef struct relay {
    struct relay *next;
    fwd_relays *owner;
    adbc_conn *c;
    int fd;               /* the local socket */
    adbc_stream *st;      /* NULL until opened (forward), or given (reverse) */
    char *dest;           /* forward: device service; reverse: host spec */
    char peer[96];
    unsigned id;
    pthread_t th;
    pthread_mutex_t down_mu; /* down_th and down_started */
    pthread_t down_th;       /* stream -> socket, once the reader thread's sink is not enough */
    int down_started;
    _Atomic int stop;     /* end now (teardown or an error on either side) */
    _Atomic int device_eof;
    _Atomic int send_errno; /* a failed send to the local socket */
    _Atomic int recv_errno; /* a failed read of the local socket */
    _Atomic int peer_eof;   /* the local peer's end of file was read */
    _Atomic int finished; /* the relay's threads are done; join and free */
    _Atomic uint64_t up, down;
    pthread_mutex_t err_mu; /* err and msg: either thread may fail first */
    int err;
    char msg[256];
} relay;

void relays_init(fwd_relays *r, const adbc_forward_opts *opts);
/* Start relaying fd (and st when reverse) in new threads; takes fd, st and
 * dest (malloc'd) also on failure. */
int relay_start(fwd_relays *r, adbc_conn *c, int fd, adbc_stream *st, char *dest,
                     const char *peer);
/* Join and free relays that finished. */
void relays_reap(fwd_relays *r);
/* Stop every relay, join, free. */
void relays_stop_all(fwd_relays *r);
size_t relays_active(fwd_relays *r);

/* Parse a host socket spec ("tcp:PORT", "tcp:HOST:PORT", "localabstract:NAME",
 * "localfilesystem:PATH", "local:PATH") into addresses. For tcp, *ai gets a
 * getaddrinfo list (freeaddrinfo it); for unix, *un and *unlen. */
int forward_host_spec(const char *spec, int passive, struct addrinfo **ai, struct sockaddr_un *un,
                   socklen_t *unlen);
/* Connect to a host spec with a timeout; the descriptor or an error. */
int forward_host_connect(const char *spec, int timeout_ms);

#endif
