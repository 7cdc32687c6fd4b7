/* SPDX-License-Identifier: Apache-2.0 */
/* The sync: wire format without I/O: encoders for requests and replies, and
 * two incremental decoders (replies for the host, requests for the device).
 *
 * Layout, all integers little-endian:
 *   request     [id][u32 len][len bytes of path]        path <= 1024 bytes
 *   SEND path   "<path>,<mode in decimal>"              mode is the full st_mode
 *   SND2        [SND2][len][path] then [SND2][mode][flags]       sendrecv_v2
 *   RCV2        [RCV2][len][path] then [RCV2][flags]
 *               flags: brotli 1, lz4 2, zstd 4 (at most one), dry run
 *               0x80000000 (SND2 only); the DATA chunks then carry one
 *               compressed stream (sync_comp.h), ended by DONE as in v1
 *   DATA / DONE [id][u32 len] + len bytes / [DONE][u32 mtime]
 *   OKAY / FAIL [id][u32 len] + len bytes of message
 *   STAT        [STAT][mode][size][mtime]                                     16
 *   STA2 / LST2 [id][error][dev:8][ino:8][mode][nlink][uid][gid][size:8]
 *               [atime:8][mtime:8][ctime:8]                                   72
 *   DENT        [DENT][mode][size][mtime][namelen] + name                     20+
 *   DNT2        STA2's fields with id DNT2, then [namelen] + name             76+
 *   list end    a DENT / DNT2-sized record with id DONE, all else zero
 *
 * The decoders take bytes in any split and return one event at a time. Data
 * payloads are handed out as pieces pointing into the caller's input, so
 * nothing the size of a chunk is copied or buffered here. Every length is
 * checked against the protocol's limits; a violation is ADBC_EPROTO with a
 * message naming the offending field. */
#ifndef ADBC_SYNC_PROTO_H
#define ADBC_SYNC_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "adbc/sync.h"

#define ADBC_SYNC_MKID(a, b, c, d)                                                          \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

#define ADBC_SYNC_STAT ADBC_SYNC_MKID('S', 'T', 'A', 'T')
#define ADBC_SYNC_STA2 ADBC_SYNC_MKID('S', 'T', 'A', '2')
#define ADBC_SYNC_LST2 ADBC_SYNC_MKID('L', 'S', 'T', '2')
#define ADBC_SYNC_LIST ADBC_SYNC_MKID('L', 'I', 'S', 'T')
#define ADBC_SYNC_LIS2 ADBC_SYNC_MKID('L', 'I', 'S', '2')
#define ADBC_SYNC_DENT ADBC_SYNC_MKID('D', 'E', 'N', 'T')
#define ADBC_SYNC_DNT2 ADBC_SYNC_MKID('D', 'N', 'T', '2')
#define ADBC_SYNC_SEND ADBC_SYNC_MKID('S', 'E', 'N', 'D')
#define ADBC_SYNC_RECV ADBC_SYNC_MKID('R', 'E', 'C', 'V')
#define ADBC_SYNC_SND2 ADBC_SYNC_MKID('S', 'N', 'D', '2')
#define ADBC_SYNC_RCV2 ADBC_SYNC_MKID('R', 'C', 'V', '2')
#define ADBC_SYNC_DATA ADBC_SYNC_MKID('D', 'A', 'T', 'A')
#define ADBC_SYNC_DONE ADBC_SYNC_MKID('D', 'O', 'N', 'E')
#define ADBC_SYNC_OKAY ADBC_SYNC_MKID('O', 'K', 'A', 'Y')
#define ADBC_SYNC_FAIL ADBC_SYNC_MKID('F', 'A', 'I', 'L')
#define ADBC_SYNC_QUIT ADBC_SYNC_MKID('Q', 'U', 'I', 'T')

#define ADBC_SYNC_HDR 8
#define ADBC_SYNC_SEND2_SETUP 12
#define ADBC_SYNC_RECV2_SETUP 8
#define ADBC_SYNC_STAT_V1_SIZE 16
#define ADBC_SYNC_STAT_V2_SIZE 72
#define ADBC_SYNC_DENT_V1_SIZE 20
#define ADBC_SYNC_DENT_V2_SIZE 76
/* Longest FAIL message accepted from a device (adbd's are one line). */
#define ADBC_SYNC_TEXT_MAX 4096

/* "STA2" etc. for messages; unprintable ids as hex. buf holds 16 bytes. */
const char *sync_id_name(uint32_t id, char buf[16]);

/* ---- encoders (return the bytes written) ---- */

/* [id][len]. */
size_t sync_enc_hdr(uint8_t out[ADBC_SYNC_HDR], uint32_t id, uint32_t len);

/* A request: [id][len][path]. ADBC_EINVAL when path is longer than
 * ADBC_SYNC_PATH_MAX or out (cap bytes) is too small; else the size. */
long sync_enc_req(uint8_t *out, size_t cap, uint32_t id, const char *path, size_t path_len);

/* SND2 with its setup: [SND2][len][path][SND2][mode][flags]; RCV2:
 * [RCV2][len][path][RCV2][flags]. ADBC_EINVAL as sync_enc_req. */
long sync_enc_send2(uint8_t *out, size_t cap, const char *path, size_t path_len,
                         uint32_t mode, uint32_t flags);
long sync_enc_recv2(uint8_t *out, size_t cap, const char *path, size_t path_len,
                         uint32_t flags);

/* SEND's argument "<path>,<mode>" into out (NUL-terminated). ADBC_EINVAL
 * when it would exceed ADBC_SYNC_PATH_MAX; else its length. */
long sync_send_spec(char *out, size_t cap, const char *path, uint32_t mode);

/* Split SEND's argument as adbd does: at the last comma; the mode is parsed
 * like strtoul(.., 0). ADBC_EPROTO with adbd's wording when malformed. */
int sync_parse_send_spec(const char *spec, size_t len, size_t *path_len, uint32_t *mode);

size_t sync_enc_stat_v1(uint8_t out[ADBC_SYNC_STAT_V1_SIZE], const adbc_sync_statbuf *st);
size_t sync_enc_stat_v2(uint8_t out[ADBC_SYNC_STAT_V2_SIZE], uint32_t id, uint32_t error,
                             const adbc_sync_statbuf *st);
size_t sync_enc_dent_v1(uint8_t out[ADBC_SYNC_DENT_V1_SIZE], const adbc_sync_statbuf *st,
                             uint32_t namelen);
size_t sync_enc_dent_v2(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], uint32_t error,
                             const adbc_sync_statbuf *st, uint32_t namelen);
/* The record that ends a listing: a DONE the size of a v1 or v2 entry. */
size_t sync_enc_list_end(uint8_t out[ADBC_SYNC_DENT_V2_SIZE], int v2);

/* ---- events ---- */

typedef enum adbc_sync_ev_type {
    ADBC_SYNC_EV_STAT = 1, /* st (+ error for v2) */
    ADBC_SYNC_EV_DENT,     /* st, error, text = name */
    ADBC_SYNC_EV_LIST_END,
    ADBC_SYNC_EV_DATA,     /* data/len: a piece of a DATA chunk; last: it ends the chunk */
    ADBC_SYNC_EV_DONE,     /* RECV finished; device side: SEND finished, arg = mtime */
    ADBC_SYNC_EV_OKAY,
    ADBC_SYNC_EV_FAIL,     /* text = the device's message */
    ADBC_SYNC_EV_REQUEST,  /* device side: id, text = path (NUL-terminated);
                              SND2/RCV2: arg = flags, st.mode = SND2's mode */
} adbc_sync_ev_type;

typedef struct adbc_sync_event {
    adbc_sync_ev_type type;
    uint32_t id;           /* the message id */
    uint32_t error;        /* v2 stat/dent: wire errno */
    uint32_t arg;          /* DONE: its length field (the mtime of a SEND) */
    adbc_sync_statbuf st;
    const char *text;      /* name, message or path; owned by the decoder */
    size_t text_len;
    const uint8_t *data;   /* DATA piece, inside the input passed in */
    size_t len;
    int last;              /* DATA: this piece completes the chunk */
} adbc_sync_event;

/* ---- host side: reply decoder ---- */

typedef enum adbc_sync_expect {
    ADBC_SYNC_X_NONE = 0, /* no reply due: any byte is a violation */
    ADBC_SYNC_X_STAT_V1,  /* one STAT */
    ADBC_SYNC_X_STAT_V2,  /* one STA2 or LST2, matching the request's id */
    ADBC_SYNC_X_LIST_V1,  /* DENTs, then the end record */
    ADBC_SYNC_X_LIST_V2,  /* DNT2s, then the end record */
    ADBC_SYNC_X_RECV,     /* DATA chunks, then DONE; or FAIL */
    ADBC_SYNC_X_STATUS,   /* OKAY or FAIL (end of a SEND) */
} adbc_sync_expect;

typedef struct adbc_sync_rdec {
    adbc_sync_expect expect;
    uint32_t want_id;     /* STAT_V2: STA2 or LST2 */
    int phase;            /* internal */
    uint32_t id;
    uint8_t hdr[ADBC_SYNC_DENT_V2_SIZE];
    size_t have, need;    /* header bytes held / wanted */
    uint32_t left;        /* DATA payload or text bytes still to come */
    uint32_t error;
    adbc_sync_statbuf st;
    char text[ADBC_SYNC_TEXT_MAX + 1];
    size_t tlen;
} adbc_sync_rdec;

/* Reset and wait for a reply of this kind. want_id: the request id for
 * ADBC_SYNC_X_STAT_V2 (STA2 or LST2), else ignored. */
void sync_rdec_expect(adbc_sync_rdec *d, adbc_sync_expect x, uint32_t want_id);

/* Decode from in[0..len). Sets *used to the bytes consumed. Returns 1 with
 * *ev filled, 0 when all input was consumed without completing an event, or
 * ADBC_EPROTO. After the event that ends a reply (STAT, LIST_END, DONE, OKAY,
 * FAIL) the decoder expects nothing until told again. */
int sync_rdec_next(adbc_sync_rdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev);

/* ---- device side: request decoder ---- */

typedef struct adbc_sync_qdec {
    int phase;            /* internal */
    uint8_t hdr[ADBC_SYNC_SEND2_SETUP];
    size_t have;
    uint32_t id, left;
    char path[ADBC_SYNC_PATH_MAX + 1];
    size_t plen;
} adbc_sync_qdec;

void sync_qdec_init(adbc_sync_qdec *d);

/* Like sync_rdec_next for what a host sends: REQUEST events (for
 * SND2/RCV2 once their setup message is in too); after a SEND or SND2
 * request, DATA pieces and then DONE (arg = mtime). ADBC_EPROTO (the
 * message is adbd's reply text, fit for a FAIL) for a path over 1024 bytes,
 * a chunk over 64 KiB, or anything but DATA/DONE inside a SEND. */
int sync_qdec_next(adbc_sync_qdec *d, const uint8_t *in, size_t len, size_t *used,
                        adbc_sync_event *ev);

/* ---- errno on the wire (Linux values, as adb defines them) ---- */

/* The adbc error code for a device errno: ENOTFOUND, EPERM or EREMOTE. */
int sync_errno_code(uint32_t wire_errno);

/* A host errno as a wire errno (device side). */
uint32_t sync_errno_to_wire(int host_errno);

#endif
