/* SPDX-License-Identifier: Apache-2.0 */
/* DNS messages as mDNS / DNS-SD uses them (RFC 1035, 6762, 6763): building
 * a query and parsing an answer. The parser faces the network: every count
 * and length is checked against the message, names are at most 255 bytes,
 * and compression pointers must each point below the previous one, so a
 * name is read in a bounded number of steps and a pointer loop is an error.
 * Internal to adbc. */
#ifndef ADBC_MDNS_DNS_H
#define ADBC_MDNS_DNS_H

#include <stddef.h>
#include <stdint.h>

#define ADBC_DNS_PORT_MDNS 5353
#define ADBC_DNS_MAX_MSG 9000  /* RFC 6762 section 17: the largest mDNS message */
#define ADBC_DNS_MAX_NAME 1024 /* a name in text form, escapes included, with NUL */
#define ADBC_DNS_MAX_TXT 256   /* TXT strings kept, joined by ';' */
#define ADBC_DNS_MAX_JUMPS 64  /* compression pointers followed in one name */

enum {
    ADBC_DNS_A = 1,
    ADBC_DNS_PTR = 12,
    ADBC_DNS_TXT = 16,
    ADBC_DNS_AAAA = 28,
    ADBC_DNS_SRV = 33,
};

typedef struct adbc_dns_rr {
    char name[ADBC_DNS_MAX_NAME];   /* owner, text form: labels joined by '.', with
                                       '.' and '\\' in a label escaped by '\\' and
                                       other bytes below 0x21 or above 0x7e as \DDD */
    uint16_t type, cls;             /* cls without the cache-flush bit */
    uint32_t ttl;
    char target[ADBC_DNS_MAX_NAME]; /* PTR: the instance; SRV: the host */
    uint16_t port;                  /* SRV */
    uint8_t addr[16];               /* A: 4 bytes; AAAA: 16 */
    char txt[ADBC_DNS_MAX_TXT];     /* TXT: the strings joined by ';' (cut to fit) */
} adbc_dns_rr;

typedef struct adbc_dns_msg {
    uint16_t id, flags;
    size_t nrr;       /* records decoded into the caller's array */
    size_t dropped;   /* well-formed records of a type not kept, or past the array */
} adbc_dns_msg;

/* Parse a whole message: header, questions (skipped), then the answer,
 * authority and additional records. Records of the types above go into
 * rrs (at most cap; more are counted in dropped); others are skipped.
 * Returns 0, or ADBC_EFORMAT when anything is malformed (a count or
 * length past the end, a bad label, a pointer loop): then no record of
 * the message may be trusted. */
int dns_parse(adbc_dns_msg *m, const uint8_t *p, size_t len, adbc_dns_rr *rrs, size_t cap);

typedef struct adbc_dns_question {
    const char *name; /* text form as above, "_adb._tcp.local" */
    uint16_t type;
} adbc_dns_question;

/* Build a query with the questions (class IN). Returns its length, or
 * ADBC_EINVAL when a name is malformed or it does not fit in cap. */
int dns_query(uint8_t *buf, size_t cap, uint16_t id, const adbc_dns_question *q, size_t nq);

/* The first label of a text-form name, unescaped ("My\.phone._adb._tcp.local"
 * gives "My.phone"), and the rest after its dot ("_adb._tcp.local").
 * Returns 0, or -1 when it does not fit in len. */
int dns_first_label(char *out, size_t len, const char **rest, const char *name);

/* Compare two text-form names as DNS does (ASCII case-insensitive). */
int dns_name_eq(const char *a, const char *b);

#endif
