/* Internal state of a connection and its stream handles. */
#ifndef ADBC_CONN_INT_H
#define ADBC_CONN_INT_H

#include <pthread.h>

#include "adbc/conn.h"
#include "adbc/session.h"
#include "core/internal.h"

struct adbc_stream {
    adbc_conn *c;
    uint32_t id;
    int ready;   /* the device accepted the OPEN */
    int closed;  /* the device closed it (or refused: close_reason) */
    int torn;    /* it closed after the connection had failed: data may be missing */
    int close_reason;
    char *service; /* what it was opened for (device-opened: the destination) */
    uint8_t *buf; /* received, not yet read: buf[head .. head+len) */
    size_t cap, head, len;
};

struct adbc_conn {
    adbc_transport *t;
    adbc_session *s;
    pthread_mutex_t mu;
    pthread_cond_t cond;      /* any state change: handshake, data, window, close */
    pthread_cond_t send_cond; /* output queued, or stopping */
    pthread_t reader, writer;
    int threads;              /* how many of them were started */
    int stopping;
    int status;               /* 0, or the error that ended the connection */
    char errmsg[512];
    int prompted;             /* the auth prompt callback has fired */
    int stls;                 /* the device answered CNXN with STLS */
    _Atomic int interrupted;  /* adbc_conn_interrupt: blocked calls return ECANCELED */

    adbc_stream **streams;
    size_t nstreams, cap;
    /* Device-opened streams accepted and not yet taken by adbc_conn_accept. */
    adbc_stream *pending[64];
    size_t npending;

    adbc_keyring *keys;
    int own_keys;
    char *pubkey;
    adbc_conn_opts opts;
};

/* Read everything buffered on the stream (waiting as adbc_stream_read
 * does) without copying it when there is much: *buf, of *cap bytes and
 * allocated with adbc_malloc, is handed to the stream for its next data and
 * the stream's own buffer comes back in its place, with *cap updated. The
 * bytes read are (*buf)[*off .. *off + n) for a return of n > 0; 0 is the
 * stream's clean end and a negative value an error, as for
 * adbc_stream_read. The caller owns and frees whatever *buf holds. */
ssize_t adbc_stream_read_swap(adbc_stream *st, uint8_t **buf, size_t *cap, size_t *off,
                              int timeout_ms);

/* Queue what flow control allows of buf now, waiting up to timeout_ms for
 * room: the number of bytes taken (> 0), or an error (ADBC_ETIMEDOUT when
 * nothing could be taken in time; the stream stays usable). */
long adbc_stream_write_some(adbc_stream *st, const void *buf, size_t len, int timeout_ms);

/* Lock held: end the connection with an error (first one wins). */
void adbc_conn_set_error(adbc_conn *c, int code, const char *msg);

/* Lock held: raise the connection's error in the calling thread. */
int adbc_conn_raise(adbc_conn *c);

/* Raise ADBC_ECANCELED for an interrupted call (interrupt.c). */
int adbc_conn_cancelled(void);

/* Lock held: the output queue grew; wake the writer. */
void adbc_conn_kick(adbc_conn *c);

#endif
