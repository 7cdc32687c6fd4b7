/* SPDX-License-Identifier: Apache-2.0 */
/* The DNS message parser that reads mDNS answers from the network
 * (lib/mdns/dns.c): any bytes must parse or fail cleanly, within bounds,
 * and every name it returns must encode back into a query. */
#include <string.h>

#include "fuzz.h"
#include "mdns/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ADBC_DNS_MAX_MSG)
        return 0;
    static adbc_dns_rr rrs[8];
    adbc_dns_msg m;
    if (dns_parse(&m, data, size, rrs, 8) < 0) {
        FUZZ_ASSERT(m.nrr == 0);
        return 0;
    }
    FUZZ_ASSERT(m.nrr <= 8);
    for (size_t i = 0; i < m.nrr; i++) {
        const adbc_dns_rr *r = &rrs[i];
        FUZZ_ASSERT(memchr(r->name, 0, sizeof r->name) && memchr(r->target, 0, sizeof r->target));
        FUZZ_ASSERT(memchr(r->txt, 0, sizeof r->txt));
        FUZZ_ASSERT(r->name[0] != '\0');
        /* A parsed name is a valid name: it encodes into a query that
         * parses again with the same question count. */
        uint8_t q[ADBC_DNS_MAX_MSG];
        adbc_dns_question qs[2] = {{r->name, r->type}, {r->target[0] ? r->target : r->name, 1}};
        int n = dns_query(q, sizeof q, 7, qs, 2);
        if (strcmp(r->name, ".") != 0 && (!r->target[0] || strcmp(r->target, ".") != 0))
            FUZZ_ASSERT(n > 12);
        if (n > 0) {
            adbc_dns_msg m2;
            FUZZ_ASSERT(dns_parse(&m2, q, (size_t)n, NULL, 0) == 0 && m2.id == 7);
        }
        char label[64];
        const char *rest = NULL;
        if (dns_first_label(label, sizeof label, &rest, r->name) == 0)
            FUZZ_ASSERT(rest && strlen(label) < sizeof label);
        FUZZ_ASSERT(dns_name_eq(r->name, r->name));
    }
    return 0;
}
