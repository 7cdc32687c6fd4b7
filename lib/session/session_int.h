/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of the sans-IO session engine, shared by its files:
 * session.c (handshake, auth, dispatch), stream.c (stream table and flow
 * control), sendq.c (the output queue). */
#ifndef ADBC_SESSION_INT_H
#define ADBC_SESSION_INT_H

#include "adbc/session.h"
#include "adbc/auth.h"
#include "core/internal.h"
#include "session/session_conn.h"

/* One queued packet: header and payload go out as two segments. */
typedef struct adbc_pkt {
    struct adbc_pkt *next;
    size_t plen;
    size_t pcap;  /* room for payload */
    int control;  /* not a WRTE: counted against SENDQ_CONTROL_MAX */
    uint8_t hdr[ADBC_HEADER_SIZE];
    uint8_t payload[];
} adbc_pkt;

enum stream_state {
    ST_OPENING = 1, /* host: OPEN sent, waiting for OKAY */
    ST_ACCEPTING,   /* device: inside on_open, OKAY not yet queued */
    ST_OPEN
};

/* Control packets (OKAY, CLSE, OPEN, ...) the output queue may hold. Data
 * (WRTE) is bounded by its writers; control packets are mostly answers to
 * what the peer sends (a CLSE for each refused OPEN, an OKAY for each
 * WRTE), so a peer that sends without reading could otherwise grow the
 * queue without end. Far above what any use of the streams needs (one or
 * two per stream), about 5 MB at the bound. */
#define SENDQ_CONTROL_MAX 65536

/* Sent packets of at least SENDQ_SPARE_MIN payload bytes kept for reuse. */
#define SENDQ_SPARE 2
#define SENDQ_SPARE_MIN (16 * 1024)

typedef struct adbc_sstream {
    uint32_t local, remote;
    int state;
    /* Send side. Legacy: `ready` allows one WRTE until the peer's OKAY.
     * delayed_ack: `credit` is what the peer's window still allows. */
    int ready;
    int64_t credit;
    /* delayed_ack: bytes sent that the peer has not acknowledged yet
     * (bounded by send_ahead when that is set). */
    int64_t inflight;
    /* Receive side: bytes received and not yet acknowledged, and how many of
     * those the consumer has already used. */
    uint64_t unacked;
    uint64_t consumed;
} adbc_sstream;

struct adbc_session {
    adbc_role role;
    uint32_t our_version, our_max_payload, window;
    uint32_t send_ahead; /* 0: the peer's window alone bounds what is in flight */
    unsigned max_auth_tokens;
    int auth_required, offer_tls, we_delayed_ack, accept_opens;
    char *banner;
    adbc_session_callbacks cb;
    void *user;

    adbc_session_state state;
    int peer_cnxn;        /* the peer's CNXN has been received */
    uint32_t version;     /* negotiated; ADBC_VERSION_MIN until then */
    uint32_t max_payload; /* negotiated */
    int delayed_ack;
    adbc_banner peer;

    /* Input reassembly. */
    uint8_t hdrbuf[ADBC_HEADER_SIZE];
    size_t hdrlen;
    adbc_header cur;
    int in_payload;       /* 1: reassembling cur's payload in pbuf; 2: streaming a
                             WRTE payload straight to on_data as it arrives */
    int deliver;          /* streaming: hand the bytes to on_data */
    uint8_t *pbuf;
    size_t pcap, plen;

    /* Output queue. */
    adbc_pkt *qhead, *qtail;
    int qseg;    /* 0: header of qhead, 1: its payload */
    size_t qoff; /* bytes of the current segment already sent */
    size_t queued;
    size_t qcontrol; /* control packets (all but WRTE) in the queue */
    /* Large packets sent and kept for the next WRTEs: allocating and
     * freeing a packet of up to max_payload bytes for each one costs page
     * faults (the allocator hands such blocks back to the system). */
    adbc_pkt *spare[SENDQ_SPARE];

    /* Streams. */
    adbc_sstream *streams;
    size_t nstreams, cap;
    uint32_t next_id;

    /* Auth. */
    unsigned key_index, tokens_seen, failed_sigs;
    int sent_pubkey, pending_offer;
    uint8_t token[ADBC_AUTH_TOKEN_SIZE];

    char err[512];
};

#define ADBC_SESSION_HANDSHAKE_MAX ADBC_MAX_PAYLOAD_V1

/* Queue a packet; the data check is computed as the protocol requires. */
int sq_push(adbc_session *s, uint32_t cmd, uint32_t arg0, uint32_t arg1,
                 const uint8_t *data, size_t len);
void sq_free_all(adbc_session *s);
/* Keep a packet no longer queued for reuse, or free it. */
void sq_keep(adbc_session *s, adbc_pkt *p);
/* Flow control's account of n bytes sent as a WRTE on st. */
void session_wrote(adbc_session *s, adbc_sstream *st, size_t n);

/* Mark the session failed with a message (also the thread's last error). */
int session_fail(adbc_session *s, int code, const char *fmt, ...) ADBC_PRINTF(3, 4);

/* Stream table. */
adbc_sstream *session_stream_find(adbc_session *s, uint32_t local);
adbc_sstream *session_stream_add(adbc_session *s, uint32_t local, uint32_t remote, int state);
void session_stream_remove(adbc_session *s, uint32_t local);

/* Packet handlers for the stream commands (stream.c). */
int session_handle_open(adbc_session *s, const adbc_header *h, const uint8_t *data);
int session_handle_okay(adbc_session *s, const adbc_header *h, const uint8_t *data);
int session_handle_wrte(adbc_session *s, const adbc_header *h, const uint8_t *data);
/* Check a WRTE header and account for its bytes before its payload has
 * arrived; *deliver says whether the payload goes to on_data (0: a stream
 * we closed, or an empty packet already acknowledged). */
int session_wrte_begin(adbc_session *s, const adbc_header *h, int *deliver);
int session_handle_clse(adbc_session *s, const adbc_header *h);

#endif
