/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of a connection and its stream handles, shared by the
 * connection's files: conn.c (lifetime, handshake, accessors), events.c
 * (the engine's callbacks and what follows each batch of input), send.c
 * (who writes to the transport), io.c (the reader and writer threads),
 * stream.c (the stream calls) and interrupt.c (cancelling them). */
#ifndef ADBC_CONN_INT_H
#define ADBC_CONN_INT_H

#include <pthread.h>

#include "adbc/conn.h"
#include "adbc/session.h"
#include "conn/conn_svc.h"
#include "core/internal.h"
#include "conn/conn_facts.h"

/* Without delayed_ack (one packet in flight), received bytes a stream may
 * hold unread and still have them acknowledged at once: the device keeps
 * sending while the caller is busy, as adb's server lets its local socket
 * buffer take them. Past this the OKAY waits for the reader. */
#define ADBC_CONN_READAHEAD (256 * 1024)

/* Without delayed_ack a full packet is most likely followed by another one
 * round trip later: the reader then wakes the stream's reader only once
 * this much is buffered, or a shorter packet comes, or at the latest
 * ADBC_CONN_WAKE_MS after the first packet it did not wake for (plain TCP
 * only, whose transport has a read alarm: transport_fd_alarm). */
#define ADBC_CONN_WAKE_BATCH (64 * 1024)
#define ADBC_CONN_WAKE_MS 1

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
    size_t owed;  /* received bytes not yet acknowledged to the engine */
    int unwoken;  /* data arrived that nobody was woken for yet */
    /* Written by the caller ahead of the flow-control window, not yet in
     * the engine's queue: out[out_head .. out_head+out_len). Moved into
     * the engine by whichever thread sees the window open. */
    uint8_t *out;
    size_t out_cap, out_head, out_len;
    size_t room_want; /* a caller waits for this much room (0: nobody) */
    /* conn_stream_read_to lent buf[head .. head+len) to a sink outside the
     * lock: new data may only be appended behind it; a buffer that must
     * grow is copied, and the lent one kept in `lent_old` until it is
     * given back. */
    int lent;
    uint8_t *lent_old;
    /* conn_stream_set_sink: data that arrives while nothing is buffered
     * goes to the sink from the reader thread at once (no copy, no
     * wake-up); what the sink does not take is buffered as usual. */
    long (*sink)(void *user, const uint8_t *p, size_t n);
    void *sink_user;
    /* conn_stream_set_wake: called when the stream's reader has something
     * the sink did not take (conn_stream_wake). */
    void (*wake)(void *user);
    void *wake_user;
    int draining;     /* a caller waits for out and the engine's queue to empty */
    /* conn_stream_write_from waits for the window to open (window_want),
     * or is filling a packet outside the lock (filling). While it waits,
     * the reader thread fills packets from the source itself as the window
     * opens (conn_stream_set_source). */
    int window_want, filling;
    long (*source)(void *user, uint8_t *p, size_t cap);
    void *source_user;
    size_t source_max;
};

struct adbc_conn {
    adbc_transport *t;
    adbc_session *s;
    pthread_mutex_t mu;
    pthread_cond_t cond;      /* any state change: handshake, data, window, close */
    pthread_cond_t send_cond; /* output queued that nobody is sending, or stopping */
    pthread_t reader, writer;
    int threads;              /* how many of them were started */
    int stopping;
    _Atomic int status;       /* 0, or the error that ended the connection (read unlocked) */
    char errmsg[512];
    int prompted;             /* the auth prompt callback has fired */
    int prompt_seen;          /* the session reported the auth prompt */
    int stls;                 /* the device answered CNXN with STLS */
    _Atomic int interrupted;  /* adbc_conn_interrupt: blocked calls return ECANCELED */

    /* Sending (send.c). One thread at a time writes to the transport: the
     * one that set `sending`. */
    int sending;
    int try_write;            /* the transport can write without blocking */
    int send_waiters;         /* threads waiting for the engine's queue to empty */
    int deferred;             /* some stream has data nobody was woken for */
    /* The reader is handling a batch of input: the wake-ups it calls for
     * (an open answered, data, an end, room) go out after it lets go of
     * the lock (wake_owed, conn_notify), so the woken caller does not run
     * only to block on the lock the reader still holds. */
    int in_batch;
    int wake_owed;

    adbc_stream **streams;
    size_t nstreams, cap;
    /* Device-opened streams accepted and not yet taken by adbc_conn_accept. */
    adbc_stream *pending[64];
    size_t npending;

    adbc_keyring *keys;
    int own_keys;
    /* adbc_conn_open is loading the default key after sending CNXN: the
     * reader holds the device's input back until it is in place. */
    int keys_loading;
    char *pubkey;
    adbc_conn_opts opts;
    /* What the layers above learnt about the device, once per connection
     * (conn_facts.h); 0: not known yet. */
    _Atomic int facts[CONN_FACTS];
    /* State kept by the layers above (conn_keep; under mu). */
    void *kept[CONN_KEPTS];
    void (*kept_end[CONN_KEPTS])(void *p);
};

/* Lock held: end the connection with an error (first one wins). */
void conn_set_error(adbc_conn *c, int code, const char *msg);

/* Lock held: call the stream's wake, if it has one (conn_stream_set_wake);
 * conn_wake_streams does it for every stream of the connection. */
void conn_stream_wake(adbc_stream *st);
void conn_wake_streams(adbc_conn *c);

/* Lock held: raise the connection's error in the calling thread. */
int conn_raise(adbc_conn *c);

/* Raise ADBC_ECANCELED for an interrupted call (interrupt.c). */
int conn_cancelled(void);

/* Lock held: the output queue grew. Send it from the calling thread as far
 * as the transport takes it without blocking (nothing to do when another
 * thread is sending: it sends this too); what is left goes to the writer
 * thread. The lock is released during the write. */
void conn_kick(adbc_conn *c);

/* Lock held: wait on cv until deadline (< 0: forever); ADBC_ETIMEDOUT when
 * it has passed. */
int conn_wait(adbc_conn *c, pthread_cond_t *cv, int64_t deadline);

/* Lock held: the stream with local id `id`, or NULL. */
adbc_stream *conn_find_stream(adbc_conn *c, uint32_t id);

/* Lock held: room for one more stream handle in the table (ADBC_ENOMEM). */
int conn_grow_streams(adbc_conn *c);

/* Lock held: bytes were sent; wake whoever waits for room or an empty queue. */
void conn_sent(adbc_conn *c);

/* Lock held: wake the callers waiting on c->cond; inside the reader's
 * batch, once it lets go of the lock (in_batch). */
void conn_notify(adbc_conn *c);

/* Lock held: after a batch of input went through the engine, move each
 * stream's waiting bytes into windows that opened and acknowledge data
 * the streams can hold, then send the result from this thread. */
void conn_after_input(adbc_conn *c);

/* Lock held: wake the readers of data whose wake-up was deferred. */
void conn_wake_deferred(adbc_conn *c);

/* Lock held: 1 while some stream's reader is still owed a deferred
 * wake-up. */
int conn_deferred(adbc_conn *c);

/* Lock held: move the stream's waiting bytes into the engine as far as
 * its window allows. */
void conn_pump(adbc_conn *c, adbc_stream *st);

/* Lock held: acknowledge the stream's received bytes that were read, and
 * without delayed_ack also the unread ones while it holds no more than
 * ADBC_CONN_READAHEAD. */
void conn_ack(adbc_conn *c, adbc_stream *st);

/* The bound on a stream's bytes queued to send (window and queue). */
size_t conn_high_water(adbc_conn *c);
/* Room for more of the stream's bytes under the high-water bound. */
size_t conn_room(adbc_conn *c, adbc_stream *st);

/* The engine's callbacks (events.c). */
extern const adbc_session_callbacks conn_callbacks;

/* The reader and writer threads (io.c). */
void *conn_reader_main(void *arg);
void *conn_writer_main(void *arg);

#endif
