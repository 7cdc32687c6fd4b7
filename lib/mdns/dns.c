/* SPDX-License-Identifier: Apache-2.0 */
/* DNS message building and parsing for mDNS / DNS-SD (see dns.h). */
#include "mdns/dns.h"

#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* Append one byte of a label in text form, escaped; -1 when out of room. */
static int put_char(char *out, size_t cap, size_t *n, uint8_t c)
{
    char tmp[5];
    size_t k;
    if (c == '.' || c == '\\') {
        tmp[0] = '\\';
        tmp[1] = (char)c;
        k = 2;
    } else if (c < 0x21 || c > 0x7e) {
        snprintf(tmp, sizeof tmp, "\\%03u", c);
        k = 4;
    } else {
        tmp[0] = (char)c;
        k = 1;
    }
    if (*n + k >= cap)
        return -1;
    memcpy(out + *n, tmp, k);
    *n += k;
    return 0;
}

/* Read the name at *off into out (text form). *off moves past the name as
 * it is written at that place (a pointer ends it). Every pointer must point
 * below the previous one (below the name's own start for the first), so
 * the walk ends; at most ADBC_DNS_MAX_JUMPS of them, at most 255 wire
 * bytes counting the root (RFC 1035 2.3.4), so every name read encodes
 * back. */
static int read_name(const uint8_t *p, size_t len, size_t *off, char *out, size_t cap)
{
    size_t pos = *off, n = 0, wire = 0, limit = *off;
    int jumped = 0, jumps = 0;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t c = p[pos];
        if (c == 0) {
            if (!jumped)
                *off = pos + 1;
            break;
        }
        if ((c & 0xC0) == 0xC0) {
            if (pos + 1 >= len)
                return -1;
            size_t ptr = (size_t)(c & 0x3F) << 8 | p[pos + 1];
            if (ptr >= limit || ++jumps > ADBC_DNS_MAX_JUMPS)
                return -1; /* forward, self or loop */
            if (!jumped)
                *off = pos + 2;
            jumped = 1;
            limit = ptr;
            pos = ptr;
            continue;
        }
        if (c & 0xC0)
            return -1; /* 0x40 / 0x80: reserved label types */
        if (pos + 1 + c > len)
            return -1;
        wire += (size_t)c + 1;
        if (wire > 254)
            return -1; /* with the root's zero byte a name is at most 255 octets */
        if (n > 0) {
            if (n + 1 >= cap)
                return -1;
            out[n++] = '.';
        }
        for (size_t i = 0; i < c; i++)
            if (put_char(out, cap, &n, p[pos + 1 + i]) < 0)
                return -1;
        pos += 1 + (size_t)c;
    }
    if (n == 0) {
        if (cap < 2)
            return -1;
        out[n++] = '.'; /* the root */
    }
    out[n] = '\0';
    return 0;
}

static void read_txt(char *out, size_t cap, const uint8_t *p, size_t len)
{
    size_t n = 0, i = 0;
    out[0] = '\0';
    while (i < len) {
        size_t sl = p[i++];
        if (sl > len - i)
            sl = len - i;
        if (n > 0 && n + 1 < cap)
            out[n++] = ';';
        for (size_t k = 0; k < sl && n + 1 < cap; k++) {
            uint8_t c = p[i + k];
            out[n++] = c >= 0x20 && c < 0x7f && c != ';' ? (char)c : '?';
        }
        i += sl;
    }
    out[n] = '\0';
}

/* One record at *off. Returns 1 when kept in rr, 0 when skipped, -1 when
 * malformed. */
static int read_rr(const uint8_t *p, size_t len, size_t *off, adbc_dns_rr *rr, int keep)
{
    adbc_dns_rr scratch;
    adbc_dns_rr *r = keep ? rr : &scratch;
    if (read_name(p, len, off, r->name, sizeof r->name) < 0)
        return -1;
    if (len - *off < 10)
        return -1;
    const uint8_t *h = p + *off;
    r->type = rd16(h);
    r->cls = rd16(h + 2) & 0x7FFF;
    r->ttl = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
    size_t rdlen = rd16(h + 8);
    size_t rd = *off + 10;
    if (rdlen > len - rd)
        return -1;
    *off = rd + rdlen;
    r->target[0] = '\0';
    r->txt[0] = '\0';
    r->port = 0;
    memset(r->addr, 0, sizeof r->addr);
    size_t end = rd + rdlen, o = rd;
    switch (r->type) {
    case ADBC_DNS_A:
        if (rdlen != 4)
            return -1;
        memcpy(r->addr, p + rd, 4);
        break;
    case ADBC_DNS_AAAA:
        if (rdlen != 16)
            return -1;
        memcpy(r->addr, p + rd, 16);
        break;
    case ADBC_DNS_PTR:
        /* The name must lie within the record (pointers may go back). */
        if (read_name(p, end, &o, r->target, sizeof r->target) < 0 || o != end)
            return -1;
        break;
    case ADBC_DNS_SRV:
        if (rdlen < 7)
            return -1;
        r->port = rd16(p + rd + 4);
        o = rd + 6;
        if (read_name(p, end, &o, r->target, sizeof r->target) < 0 || o != end)
            return -1;
        break;
    case ADBC_DNS_TXT:
        read_txt(r->txt, sizeof r->txt, p + rd, rdlen);
        break;
    default:
        return 0;
    }
    return keep;
}

int dns_parse(adbc_dns_msg *m, const uint8_t *p, size_t len, adbc_dns_rr *rrs, size_t cap)
{
    memset(m, 0, sizeof *m);
    if (len < 12)
        return core_fail(ADBC_EFORMAT, "DNS message of %zu bytes: shorter than its header", len);
    m->id = rd16(p);
    m->flags = rd16(p + 2);
    size_t qd = rd16(p + 4);
    size_t nrec = (size_t)rd16(p + 6) + rd16(p + 8) + rd16(p + 10);
    size_t off = 12;
    char scratch[ADBC_DNS_MAX_NAME];
    for (size_t i = 0; i < qd; i++) {
        if (read_name(p, len, &off, scratch, sizeof scratch) < 0 || len - off < 4)
            return core_fail(ADBC_EFORMAT, "DNS message: question %zu malformed", i + 1);
        off += 4;
    }
    for (size_t i = 0; i < nrec; i++) {
        int keep = m->nrr < cap;
        int r = read_rr(p, len, &off, keep ? &rrs[m->nrr] : NULL, keep);
        if (r < 0) {
            m->nrr = 0;
            return core_fail(ADBC_EFORMAT,
                             "DNS message: record %zu of %zu malformed (a length or name "
                             "runs past its end, or a compression pointer loops)",
                             i + 1, nrec);
        }
        if (r > 0)
            m->nrr++;
        else
            m->dropped++;
    }
    return 0;
}

/* Encode a text-form name; returns the bytes written or -1. */
static int put_name(uint8_t *buf, size_t cap, const char *name)
{
    size_t n = 0;
    const char *s = name;
    if (strcmp(s, ".") == 0)
        s = "";
    while (*s) {
        uint8_t label[64];
        size_t ll = 0;
        while (*s && *s != '.') {
            uint8_t c = (uint8_t)*s++;
            if (c == '\\') {
                if (s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' &&
                    s[2] <= '9') {
                    unsigned v = (unsigned)(s[0] - '0') * 100 + (unsigned)(s[1] - '0') * 10 +
                                 (unsigned)(s[2] - '0');
                    if (v > 255)
                        return -1;
                    c = (uint8_t)v;
                    s += 3;
                } else if (*s) {
                    c = (uint8_t)*s++;
                } else {
                    return -1;
                }
            }
            if (ll >= 63)
                return -1;
            label[ll++] = c;
        }
        if (ll == 0 || n + 1 + ll + 1 > cap || n + 1 + ll > 254)
            return -1;
        buf[n++] = (uint8_t)ll;
        memcpy(buf + n, label, ll);
        n += ll;
        if (*s == '.')
            s++;
    }
    if (n + 1 > cap)
        return -1;
    buf[n++] = 0;
    return (int)n;
}

int dns_query(uint8_t *buf, size_t cap, uint16_t id, const adbc_dns_question *q, size_t nq)
{
    if (cap < 12 || nq > 0xFFFF)
        return core_fail(ADBC_EINVAL, "DNS query: no room");
    memset(buf, 0, 12);
    buf[0] = (uint8_t)(id >> 8);
    buf[1] = (uint8_t)id;
    buf[4] = (uint8_t)(nq >> 8);
    buf[5] = (uint8_t)nq;
    size_t n = 12;
    for (size_t i = 0; i < nq; i++) {
        int w = put_name(buf + n, cap - n, q[i].name);
        if (w < 0 || cap - n - (size_t)w < 4)
            return core_fail(ADBC_EINVAL, "DNS query: name \"%s\" malformed or no room",
                             q[i].name);
        n += (size_t)w;
        buf[n++] = (uint8_t)(q[i].type >> 8);
        buf[n++] = (uint8_t)q[i].type;
        buf[n++] = 0;
        buf[n++] = 1; /* IN */
    }
    return (int)n;
}

int dns_first_label(char *out, size_t len, const char **rest, const char *name)
{
    size_t n = 0;
    const char *s = name;
    while (*s && *s != '.') {
        char c = *s++;
        if (c == '\\' && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' &&
            s[2] >= '0' && s[2] <= '9') {
            c = (char)((s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0'));
            s += 3;
        } else if (c == '\\' && *s) {
            c = *s++;
        }
        if (n + 1 >= len)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    if (rest)
        *rest = *s == '.' ? s + 1 : s;
    return 0;
}

int dns_name_eq(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    /* A trailing dot (the root) is the same name. */
    if (la && a[la - 1] == '.' && !(la >= 2 && a[la - 2] == '\\'))
        la--;
    if (lb && b[lb - 1] == '.' && !(lb >= 2 && b[lb - 2] == '\\'))
        lb--;
    if (la != lb)
        return 0;
    for (size_t i = 0; i < la; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return 1;
}
