/* SPDX-License-Identifier: Apache-2.0 */
/* The session's output queue: packets waiting to be sent, each handed out
 * as a header segment and a payload segment. */
#include "session/session_int.h"

#include <string.h>

int sq_push(adbc_session *s, uint32_t cmd, uint32_t arg0, uint32_t arg1,
                 const uint8_t *data, size_t len)
{
    int control = cmd != ADBC_A_WRTE;
    if (control && s->qcontrol >= SENDQ_CONTROL_MAX) {
        char name[5];
        return session_fail(
            s, ADBC_EPROTO,
            "the device misbehaves: it keeps sending packets that need an answer (the last "
            "one due: %s) while it reads nothing from us; %d answers are waiting to be sent, "
            "the bound: closing the connection",
            adbc_command_name(cmd, name), SENDQ_CONTROL_MAX);
    }
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
            return core_fail(ADBC_ENOMEM, "out of memory queueing a %zu-byte packet", len);
        p->pcap = len;
    }
    p->next = NULL;
    p->plen = len;
    p->control = control;
    s->qcontrol += (size_t)control;
    if (len)
        memcpy(p->payload, data, len);
    /* CNXN and AUTH always carry the sum (the peer checks them before it
     * knows our version); everything else only for 0x01000000 peers. */
    uint32_t check = 0;
    if (cmd == ADBC_A_CNXN || cmd == ADBC_A_AUTH || s->version < ADBC_VERSION_SKIP_CHECKSUM)
        check = adbc_payload_sum(data, len);
    adbc_header_encode(p->hdr, cmd, arg0, arg1, (uint32_t)len, check);
    if (s->qtail)
        s->qtail->next = p;
    else
        s->qhead = p;
    s->qtail = p;
    s->queued += ADBC_HEADER_SIZE + len;
    return 0;
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

/* Keep a sent packet for reuse in place of the smallest spare, or free it. */
static void keep_spare(adbc_session *s, adbc_pkt *p)
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
        keep_spare(s, p);
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
