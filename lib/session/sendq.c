/* SPDX-License-Identifier: Apache-2.0 */
/* The session's output queue: packets waiting to be sent, each handed out
 * as a header segment and a payload segment. */
#include "session/session_int.h"

#include <stddef.h>
#include <string.h>

/* A packet with room for len payload bytes: a kept one when it fits. */
static adbc_pkt *sq_alloc(adbc_session *s, size_t len)
{
    adbc_pkt *p = NULL;
    if (len >= SENDQ_SPARE_MIN)
        for (int i = 0; i < SENDQ_SPARE && !p; i++)
            if (s->spare[i] && s->spare[i]->pcap >= len) {
                p = s->spare[i];
                s->spare[i] = NULL;
            }
    if (!p) {
        p = core_malloc(sizeof *p + len);
        if (!p)
            return NULL;
        p->pcap = len;
    }
    p->next = NULL;
    return p;
}

/* Append p, its len payload bytes in place, with its header. */
static void sq_append(adbc_session *s, adbc_pkt *p, uint32_t cmd, uint32_t arg0, uint32_t arg1,
                      size_t len)
{
    p->plen = len;
    p->control = cmd != ADBC_A_WRTE;
    s->qcontrol += (size_t)p->control;
    /* CNXN and AUTH always carry the sum (the peer checks them before it
     * knows our version); everything else only for 0x01000000 peers. */
    uint32_t check = 0;
    if (cmd == ADBC_A_CNXN || cmd == ADBC_A_AUTH || s->version < ADBC_VERSION_SKIP_CHECKSUM)
        check = adbc_payload_sum(p->payload, len);
    adbc_header_encode(p->hdr, cmd, arg0, arg1, (uint32_t)len, check);
    if (s->qtail)
        s->qtail->next = p;
    else
        s->qhead = p;
    s->qtail = p;
    s->queued += ADBC_HEADER_SIZE + len;
}

int sq_push(adbc_session *s, uint32_t cmd, uint32_t arg0, uint32_t arg1,
                 const uint8_t *data, size_t len)
{
    if (cmd != ADBC_A_WRTE && s->qcontrol >= SENDQ_CONTROL_MAX) {
        char name[5];
        return session_fail(
            s, ADBC_EPROTO,
            "the device misbehaves: it keeps sending packets that need an answer (the last "
            "one due: %s) while it reads nothing from us; %d answers are waiting to be sent, "
            "the bound: closing the connection",
            adbc_command_name(cmd, name), SENDQ_CONTROL_MAX);
    }
    adbc_pkt *p = sq_alloc(s, len);
    if (!p)
        return core_fail(ADBC_ENOMEM, "out of memory queueing a %zu-byte packet", len);
    if (len)
        memcpy(p->payload, data, len);
    sq_append(s, p, cmd, arg0, arg1, len);
    return 0;
}

uint8_t *session_write_reserve(adbc_session *s, uint32_t id, size_t max, size_t *cap)
{
    *cap = 0;
    size_t n = adbc_session_writable(s, id);
    if (n > max)
        n = max;
    if (n > s->max_payload)
        n = s->max_payload;
    if (n == 0)
        return NULL;
    adbc_pkt *p = sq_alloc(s, n);
    if (!p) {
        core_fail(ADBC_ENOMEM, "out of memory for a %zu-byte packet", n);
        return NULL;
    }
    *cap = n;
    return p->payload;
}

ssize_t session_write_commit(adbc_session *s, uint32_t id, uint8_t *buf, size_t n)
{
    adbc_pkt *p = (adbc_pkt *)(void *)(buf - offsetof(adbc_pkt, payload));
    adbc_sstream *st = session_stream_find(s, id);
    if (!st || st->state != ST_OPEN || s->state != ADBC_SESSION_ONLINE || n == 0) {
        sq_keep(s, p);
        return n == 0 ? 0 : core_fail(ADBC_ECLOSED, "stream %u closed before its data was sent", id);
    }
    if (n > p->pcap)
        n = p->pcap;
    if (p->pcap >= SENDQ_SPARE_MIN && n < p->pcap / 4) {
        /* Much room, few bytes: a packet of their size goes in the queue
         * and the large one stays for the next read. */
        adbc_pkt *q = core_malloc(sizeof *q + n);
        if (!q) {
            sq_keep(s, p);
            return core_fail(ADBC_ENOMEM, "out of memory queueing a %zu-byte packet", n);
        }
        q->next = NULL;
        q->pcap = n;
        memcpy(q->payload, p->payload, n);
        sq_keep(s, p);
        p = q;
    }
    sq_append(s, p, ADBC_A_WRTE, st->local, st->remote, n);
    session_wrote(s, st, n);
    return (ssize_t)n;
}

size_t adbc_session_next_send(const uint8_t **data, adbc_session *s)
{
    if (data)
        *data = NULL;
    if (!data || !s)
        return 0;
    adbc_pkt *p = s->qhead;
    if (!p) {
        *data = NULL;
        return 0;
    }
    if (s->qseg == 0) {
        *data = p->hdr + s->qoff;
        return ADBC_HEADER_SIZE - s->qoff;
    }
    *data = p->payload + s->qoff;
    return p->plen - s->qoff;
}

int adbc_session_peek_send(adbc_session *s, struct iovec *iov, int max)
{
    if (!s || !iov)
        return 0;
    int n = 0;
    size_t off = s->qoff;
    int seg = s->qseg;
    for (adbc_pkt *p = s->qhead; p && n < max; p = p->next) {
        if (seg == 0) {
            iov[n].iov_base = p->hdr + off;
            iov[n].iov_len = ADBC_HEADER_SIZE - off;
            n++;
            off = 0;
        }
        if (p->plen > 0 && n < max) {
            iov[n].iov_base = p->payload + off;
            iov[n].iov_len = p->plen - off;
            n++;
        }
        seg = 0;
        off = 0;
    }
    return n;
}

/* Keep a packet for reuse in place of the smallest spare, or free it. */
void sq_keep(adbc_session *s, adbc_pkt *p)
{
    if (p->pcap >= SENDQ_SPARE_MIN) {
        int k = 0;
        for (int i = 1; i < SENDQ_SPARE; i++)
            if (!s->spare[i] || (s->spare[k] && s->spare[i]->pcap < s->spare[k]->pcap))
                k = i;
        if (!s->spare[k] || s->spare[k]->pcap < p->pcap) {
            adbc_pkt *old = s->spare[k];
            s->spare[k] = p;
            p = old;
        }
    }
    core_free(p);
}

void adbc_session_sent(adbc_session *s, size_t n)
{
    while (n > 0 && s->qhead) {
        adbc_pkt *p = s->qhead;
        size_t seglen = s->qseg == 0 ? ADBC_HEADER_SIZE : p->plen;
        size_t take = seglen - s->qoff;
        if (take > n)
            take = n;
        s->qoff += take;
        s->queued -= take;
        n -= take;
        if (s->qoff < seglen)
            break;
        s->qoff = 0;
        if (s->qseg == 0 && p->plen > 0) {
            s->qseg = 1;
            continue;
        }
        s->qseg = 0;
        s->qhead = p->next;
        if (!s->qhead)
            s->qtail = NULL;
        s->qcontrol -= (size_t)p->control;
        sq_keep(s, p);
    }
}

size_t adbc_session_send_queued(const adbc_session *s)
{
    if (!s)
        return 0;
    return s->queued;
}

void sq_free_all(adbc_session *s)
{
    adbc_pkt *p = s->qhead;
    while (p) {
        adbc_pkt *n = p->next;
        core_free(p);
        p = n;
    }
    for (int i = 0; i < SENDQ_SPARE; i++) {
        core_free(s->spare[i]);
        s->spare[i] = NULL;
    }
    s->qhead = s->qtail = NULL;
    s->queued = 0;
    s->qcontrol = 0;
    s->qoff = 0;
    s->qseg = 0;
}
