/* SPDX-License-Identifier: Apache-2.0 */
/* The DNS parser and query builder behind mDNS (lib/mdns/dns.c), on real
 * and hostile messages: compression, loops, bad lengths, counts past the
 * data, long names, and the cap on records kept. */
#include <string.h>

#include "mdns/dns.h"
#include "adbc/error.h"
#include "t.h"

static size_t put_name(uint8_t *p, const char *n)
{
    size_t k = 0;
    while (*n) {
        const char *dot = strchr(n, '.');
        size_t l = dot ? (size_t)(dot - n) : strlen(n);
        p[k++] = (uint8_t)l;
        memcpy(p + k, n, l);
        k += l;
        n += l + (dot ? 1 : 0);
    }
    p[k++] = 0;
    return k;
}

static size_t put_hdr(uint8_t *p, unsigned an)
{
    memset(p, 0, 12);
    p[2] = 0x84;
    p[6] = (uint8_t)(an >> 8);
    p[7] = (uint8_t)an;
    return 12;
}

static size_t put_fixed(uint8_t *p, unsigned type, unsigned rdlen)
{
    uint8_t f[10] = {(uint8_t)(type >> 8), (uint8_t)type, 0x80, 1, 0, 0, 0, 120,
                     (uint8_t)(rdlen >> 8), (uint8_t)rdlen};
    memcpy(p, f, 10);
    return 10;
}

static adbc_dns_rr rrs[64];

TEST(test_answer_with_compression)
{
    uint8_t m[512];
    size_t n = put_hdr(m, 3);
    size_t svc = n;
    n += put_name(m + n, "_adb-tls-connect._tcp.local");
    n += put_fixed(m + n, ADBC_DNS_PTR, 9);
    size_t inst = n;
    memcpy(m + n, "\x06" "adb-XY" "\xc0", 8);
    m[n + 8] = (uint8_t)svc;
    n += 9;
    m[n++] = 0xc0; /* SRV owner: the instance, compressed */
    m[n++] = (uint8_t)inst;
    n += put_fixed(m + n, ADBC_DNS_SRV, 6 + 8);
    memcpy(m + n, "\0\0\0\0\x91\x2b", 6); /* port 37163 */
    n += 6;
    memcpy(m + n, "\x05" "phone" "\xc0", 7);
    m[n + 7] = (uint8_t)(svc + 22); /* "local" */
    n += 8;
    n += put_name(m + n, "phone.local");
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    memcpy(m + n, "\x0a\x4d\x00\x02", 4);
    n += 4;
    adbc_dns_msg msg;
    CHECK_EQ_INT(0, dns_parse(&msg, m, n, rrs, 64));
    CHECK_EQ_INT(msg.nrr, 3);
    CHECK_STR(rrs[0].name, "_adb-tls-connect._tcp.local");
    CHECK_STR(rrs[0].target, "adb-XY._adb-tls-connect._tcp.local");
    CHECK_STR(rrs[1].name, "adb-XY._adb-tls-connect._tcp.local");
    CHECK_EQ_INT(rrs[1].port, 37163);
    CHECK_STR(rrs[1].target, "phone.local");
    CHECK_EQ_INT(rrs[1].cls, 1); /* cache-flush bit removed */
    CHECK(memcmp(rrs[2].addr, "\x0a\x4d\x00\x02", 4) == 0);
}

/* 1 when the message is refused as a whole. */
static int refused(const uint8_t *m, size_t n, const char *what)
{
    adbc_dns_msg msg;
    int rc = dns_parse(&msg, m, n, rrs, 64);
    if (rc == ADBC_EFORMAT && msg.nrr == 0)
        return 1;
    fprintf(stderr, "  %s: parsed (rc %d, %zu records)\n", what, rc, msg.nrr);
    return 0;
}
#define expect_bad(m, n, what) CHECK(refused(m, n, what))

TEST(test_hostile)
{
    uint8_t m[600];
    size_t n = put_hdr(m, 1);
    memcpy(m + n, "\xc0\x0c", 2); /* points at itself */
    n += 2;
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    memcpy(m + n, "\1\2\3\4", 4);
    expect_bad(m, n + 4, "self pointer");

    /* a -> b -> a: the second pointer does not go below the first. */
    n = put_hdr(m, 1);
    memcpy(m + n, "\x01" "a\xc0\x10" "\x01" "b\xc0\x0c", 8);
    n += 8;
    size_t fix = n;
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    memcpy(m + n, "\1\2\3\4", 4);
    (void)fix;
    expect_bad(m, n + 4, "two-name loop");

    n = put_hdr(m, 1);
    n += put_name(m + n, "x.local");
    n += put_fixed(m + n, ADBC_DNS_A, 200);
    memcpy(m + n, "\1\2\3\4", 4);
    expect_bad(m, n + 4, "rdlength past the end");

    n = put_hdr(m, 1);
    n += put_name(m + n, "x.local");
    n += put_fixed(m + n, ADBC_DNS_A, 3);
    memcpy(m + n, "\1\2\3", 3);
    expect_bad(m, n + 3, "A of 3 bytes");

    n = put_hdr(m, 1);
    n += put_name(m + n, "x.local");
    n += put_fixed(m + n, ADBC_DNS_SRV, 2);
    memcpy(m + n, "\0\1", 2);
    expect_bad(m, n + 2, "SRV of 2 bytes");

    n = put_hdr(m, 10000); /* claims 10,000, holds one */
    n += put_name(m + n, "x.local");
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    memcpy(m + n, "\1\2\3\4", 4);
    expect_bad(m, n + 4, "count past the data");

    n = put_hdr(m, 1); /* a name of 5 x 63-byte labels: over 255 bytes */
    for (int i = 0; i < 5; i++) {
        m[n++] = 63;
        memset(m + n, 'y', 63);
        n += 63;
    }
    m[n++] = 0;
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    memcpy(m + n, "\1\2\3\4", 4);
    expect_bad(m, n + 4, "name over 255 bytes");

    n = put_hdr(m, 1);
    m[n++] = 0x45; /* reserved label type */
    n += put_fixed(m + n, ADBC_DNS_A, 4);
    expect_bad(m, n + 4, "label type 0x40");

    n = put_hdr(m, 1);
    n += put_name(m + n, "x.local");
    memcpy(m + n, "\0\1\0", 3);
    expect_bad(m, n + 3, "truncated fixed part");

    for (size_t len = 0; len < 12; len++)
        expect_bad((const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", len,
                   "short header");

    /* The PTR's name must end inside its record. */
    n = put_hdr(m, 1);
    n += put_name(m + n, "_adb._tcp.local");
    n += put_fixed(m + n, ADBC_DNS_PTR, 2);
    memcpy(m + n, "\x03" "abc", 4);
    n += 4;
    m[n++] = 0;
    expect_bad(m, n, "PTR name running past its rdata");
}

TEST(test_cap_and_skip)
{
    static uint8_t m[ADBC_DNS_MAX_MSG];
    size_t n = put_hdr(m, 200);
    for (int i = 0; i < 200; i++) {
        n += put_name(m + n, i % 2 ? "h.local" : "x.local");
        n += put_fixed(m + n, i % 2 ? ADBC_DNS_A : 47 /* NSEC: skipped */, 4);
        memcpy(m + n, "\1\2\3\4", 4);
        n += 4;
    }
    adbc_dns_msg msg;
    CHECK_EQ_INT(0, dns_parse(&msg, m, n, rrs, 64));
    CHECK_EQ_INT(msg.nrr, 64);
    CHECK_EQ_INT(msg.dropped, 136); /* 100 NSEC + 36 A past the array */
}

TEST(test_query_and_names)
{
    uint8_t q[512];
    adbc_dns_question qs[] = {{"_adb._tcp.local", ADBC_DNS_PTR},
                              {"my\\.phone._adb._tcp.local", ADBC_DNS_SRV}};
    int n = dns_query(q, sizeof q, 0x1234, qs, 2);
    CHECK(n > 12);
    CHECK_EQ_INT(q[5], 2);
    CHECK(memcmp(q + 12, "\x04_adb\x04_tcp\x05local\0\0\x0c\0\x01", 21) == 0);
    CHECK(memcmp(q + 33, "\x08my.phone", 9) == 0);
    adbc_dns_question bad[] = {{"a..b", 1}};
    CHECK_EQ_INT(dns_query(q, sizeof q, 0, bad, 1), ADBC_EINVAL);
    CHECK_EQ_INT(dns_query(q, 20, 0, qs, 2), ADBC_EINVAL);
    char label[64];
    const char *rest;
    CHECK_EQ_INT(0, dns_first_label(label, sizeof label, &rest, "my\\.phone\\032x._adb._tcp.local"));
    CHECK_STR(label, "my.phone x");
    CHECK_STR(rest, "_adb._tcp.local");
    CHECK(dns_name_eq("Phone.LOCAL.", "phone.local"));
    CHECK(!dns_name_eq("phone.local", "phone.locals"));
}

int main(void)
{
    RUN(test_answer_with_compression);
    RUN(test_hostile);
    RUN(test_cap_and_skip);
    RUN(test_query_and_names);
    return T_DONE();
}
