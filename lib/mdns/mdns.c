/* SPDX-License-Identifier: Apache-2.0 */
/* mDNS / DNS-SD browsing for adb's services (mdns.h). One UDP socket per
 * multicast interface address (IPv4, and IPv6 link-local), each bound to an
 * ephemeral port: queries from a port other than 5353 are one-shot queries
 * (RFC 6762 section 5.1), answered by unicast to that port, so no daemon
 * and no shared port 5353 are needed. Queries are repeated every 250 ms
 * with the questions still open (PTR for the service types, SRV and TXT for
 * instances not resolved, A and AAAA for hosts without an address). */
#include "adbc/mdns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "mdns/dns.h"

#define MDNS_MAX_SOCKS 32
#define MDNS_MAX_HOSTS 256
#define MDNS_MAX_RRS 128 /* records decoded per message */
#define MDNS_MAX_Q 24    /* questions per query */
#define MDNS_ROUND_MS 250

static const char *const all_types[] = {ADBC_MDNS_TLS_CONNECT, ADBC_MDNS_ADB,
                                        ADBC_MDNS_TLS_PAIRING};

/* Copy into a fixed field, cutting what does not fit. */
static void cp(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void adbc_mdns_opts_init_sized(adbc_mdns_opts *out, size_t size)
{
    adbc_mdns_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.timeout_ms = 1000;
    core_abi_give(out, size, &d, sizeof d);
}

typedef struct msock {
    int fd;
    int family;
    struct sockaddr_storage self; /* the address bound (port 0) */
    unsigned ifindex;
    char ifname[IF_NAMESIZE];
} msock;

typedef struct mhost {
    char name[ADBC_DNS_MAX_NAME];
    char addr4[INET_ADDRSTRLEN];
    char addr6[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
} mhost;

typedef struct browse {
    msock socks[MDNS_MAX_SOCKS];
    size_t nsocks;
    adbc_mdns_service *svc;
    char (*fullname)[ADBC_DNS_MAX_NAME]; /* each service's instance name, wire text form */
    size_t nsvc;
    mhost *hosts;
    size_t nhosts;
    adbc_dns_rr *rrs;
    int64_t last_news;
} browse;

static int usable(const struct ifaddrs *a)
{
    return a->ifa_addr && (a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_MULTICAST) &&
           !(a->ifa_flags & IFF_LOOPBACK) &&
           (a->ifa_addr->sa_family == AF_INET ||
            (a->ifa_addr->sa_family == AF_INET6 &&
             IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr)));
}

static int open_sock(msock *s, const struct ifaddrs *a)
{
    int fam = a->ifa_addr->sa_family;
    int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1, ttl = 255;
    unsigned idx = if_nametoindex(a->ifa_name);
    int ok;
    if (fam == AF_INET) {
        struct sockaddr_in sa;
        memcpy(&sa, a->ifa_addr, sizeof sa);
        sa.sin_port = 0;
        memcpy(&s->self, &sa, sizeof sa);
        struct in_addr ifa = sa.sin_addr;
        unsigned char uttl = 255, loop = 1;
        ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
             setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof ifa) == 0 &&
             setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &uttl, sizeof uttl) == 0 &&
             setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) == 0;
    } else {
        struct sockaddr_in6 sa;
        memcpy(&sa, a->ifa_addr, sizeof sa);
        sa.sin6_port = 0;
        sa.sin6_scope_id = idx;
        memcpy(&s->self, &sa, sizeof sa);
        ok = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0 &&
             bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof idx) == 0 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &ttl, sizeof ttl) == 0 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &one, sizeof one) == 0;
    }
    if (!ok) {
        close(fd);
        return -1;
    }
    s->fd = fd;
    s->family = fam;
    s->ifindex = idx;
    cp(s->ifname, sizeof s->ifname, a->ifa_name);
    return 0;
}

static size_t open_all(msock *socks, size_t cap)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return 0;
    size_t n = 0;
    for (struct ifaddrs *a = ifs; a && n < cap; a = a->ifa_next)
        if (usable(a) && open_sock(&socks[n], a) == 0)
            n++;
    freeifaddrs(ifs);
    return n;
}

int adbc_mdns_interfaces(char *buf, size_t len)
{
    msock socks[MDNS_MAX_SOCKS];
    size_t n = open_all(socks, MDNS_MAX_SOCKS);
    size_t off = 0;
    int count = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int first = 1, v4 = 0, v6 = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(socks[k].ifname, socks[i].ifname) != 0)
                continue;
            if (k < i)
                first = 0;
            v4 |= socks[k].family == AF_INET;
            v6 |= socks[k].family == AF_INET6;
        }
        if (!first)
            continue;
        count++;
        if (off < len) {
            int w = snprintf(buf + off, len - off, "%s%s (%s%s%s)", off ? ", " : "",
                             socks[i].ifname, v4 ? "IPv4" : "", v4 && v6 ? ", " : "",
                             v6 ? "IPv6" : "");
            if (w > 0)
                off += (size_t)w;
        }
    }
    for (size_t i = 0; i < n; i++)
        close(socks[i].fd);
    return count;
}

/* "_adb._tcp.local" -> the type index, or -1. */
static int type_of(const char *name, const char *only)
{
    for (int i = 0; i < 3; i++) {
        char full[64];
        snprintf(full, sizeof full, "%s.local", all_types[i]);
        if (dns_name_eq(name, full) && (!only || strcmp(only, all_types[i]) == 0))
            return i;
    }
    return -1;
}

static mhost *host_get(browse *b, const char *name, int add)
{
    for (size_t i = 0; i < b->nhosts; i++)
        if (dns_name_eq(b->hosts[i].name, name))
            return &b->hosts[i];
    if (!add || b->nhosts >= MDNS_MAX_HOSTS)
        return NULL;
    mhost *h = &b->hosts[b->nhosts++];
    memset(h, 0, sizeof *h);
    cp(h->name, sizeof h->name, name);
    return h;
}

static adbc_mdns_service *svc_get(browse *b, const char *fullname, int type, const char *ifname)
{
    for (size_t i = 0; i < b->nsvc; i++)
        if (dns_name_eq(b->fullname[i], fullname))
            return &b->svc[i];
    if (type < 0 || b->nsvc >= ADBC_MDNS_MAX_SERVICES)
        return NULL;
    char inst[64];
    const char *rest;
    if (dns_first_label(inst, sizeof inst, &rest, fullname) < 0 || !inst[0])
        return NULL;
    adbc_mdns_service *s = &b->svc[b->nsvc];
    memset(s, 0, sizeof *s);
    cp(s->instance, sizeof s->instance, inst);
    cp(s->service, sizeof s->service, all_types[type]);
    cp(s->ifname, sizeof s->ifname, ifname);
    cp(b->fullname[b->nsvc], sizeof b->fullname[0], fullname);
    b->nsvc++;
    b->last_news = core_now_ms();
    return s;
}

/* An address a responder on the network may give for a device: unicast.
 * Loopback and unspecified ones would point a connect at this machine
 * itself (a local emulator's adbd, say) by a name from the network; a
 * device on this machine announces its interface address, and is then
 * marked local (local_addr). Multicast and broadcast are never a host. */
static int announceable(const adbc_dns_rr *r)
{
    const uint8_t *a = r->addr;
    if (r->type == ADBC_DNS_A)
        return a[0] != 0 && a[0] != 127 && a[0] < 224; /* 0/8, 127/8, 224/4 and 240/4 */
    static const uint8_t zero[16], mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a, zero, 15) == 0 && a[15] <= 1) /* :: and ::1 */
        return 0;
    if (a[0] == 0xff) /* multicast */
        return 0;
    if (memcmp(a, mapped, 12) == 0) /* ::ffff:a.b.c.d: the IPv4 rule */
        return a[12] != 0 && a[12] != 127 && a[12] < 224;
    return 1;
}

static void take_answer(browse *b, const adbc_dns_rr *r, const msock *s, const char *only)
{
    if (r->type == ADBC_DNS_PTR) {
        int t = type_of(r->name, only);
        char inst[64];
        const char *rest;
        /* The instance must be of the type asked for: NAME.<type>.local. */
        if (t >= 0 && dns_first_label(inst, sizeof inst, &rest, r->target) == 0 &&
            dns_name_eq(rest, r->name))
            svc_get(b, r->target, t, s->ifname);
        return;
    }
    if (r->type == ADBC_DNS_SRV || r->type == ADBC_DNS_TXT) {
        char inst[64];
        const char *rest;
        if (dns_first_label(inst, sizeof inst, &rest, r->name) < 0)
            return;
        adbc_mdns_service *sv = svc_get(b, r->name, type_of(rest, only), s->ifname);
        if (!sv)
            return;
        if (r->type == ADBC_DNS_SRV && r->port) {
            if (!sv->port)
                b->last_news = core_now_ms();
            sv->port = r->port;
            cp(sv->host, sizeof sv->host, r->target);
            host_get(b, r->target, 1);
        } else if (r->type == ADBC_DNS_TXT) {
            cp(sv->txt, sizeof sv->txt, r->txt);
        }
        return;
    }
    if ((r->type == ADBC_DNS_A || r->type == ADBC_DNS_AAAA) && !announceable(r))
        return;
    mhost *h = host_get(b, r->name, 1);
    if (!h)
        return;
    if (r->type == ADBC_DNS_A && !h->addr4[0]) {
        inet_ntop(AF_INET, r->addr, h->addr4, sizeof h->addr4);
        b->last_news = core_now_ms();
    } else if (r->type == ADBC_DNS_AAAA && !h->addr6[0]) {
        char a[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, r->addr, a, sizeof a);
        if (r->addr[0] == 0xfe && (r->addr[1] & 0xc0) == 0x80) /* fe80::/10 */
            snprintf(h->addr6, sizeof h->addr6, "%s%%%s", a, s->ifname);
        else
            cp(h->addr6, sizeof h->addr6, a);
        b->last_news = core_now_ms();
    }
}

static void fill_addrs(browse *b)
{
    for (size_t i = 0; i < b->nsvc; i++) {
        adbc_mdns_service *s = &b->svc[i];
        mhost *h = s->host[0] ? host_get(b, s->host, 0) : NULL;
        if (h) /* IPv4 when there is one: it needs no interface scope */
            cp(s->addr, sizeof s->addr, h->addr4[0] ? h->addr4 : h->addr6);
    }
}

static int resolved(const adbc_mdns_service *s)
{
    return s->port && s->addr[0];
}

/* The questions still open, as one query per socket. */
static void send_round(browse *b, const adbc_mdns_opts *o, int browse_types)
{
    adbc_dns_question q[MDNS_MAX_Q];
    char names[MDNS_MAX_Q][ADBC_DNS_MAX_NAME];
    size_t nq = 0;
    for (int i = 0; i < 3 && browse_types; i++) {
        if (o->service && strcmp(o->service, all_types[i]) != 0)
            continue;
        snprintf(names[nq], sizeof names[nq], "%s.local", all_types[i]);
        q[nq] = (adbc_dns_question){names[nq], ADBC_DNS_PTR};
        nq++;
    }
    for (size_t i = 0; i < b->nsvc && nq + 2 <= MDNS_MAX_Q; i++) {
        adbc_mdns_service *s = &b->svc[i];
        if (!s->port) {
            q[nq++] = (adbc_dns_question){b->fullname[i], ADBC_DNS_SRV};
            q[nq++] = (adbc_dns_question){b->fullname[i], ADBC_DNS_TXT};
        } else if (!s->addr[0]) {
            cp(names[nq], sizeof names[nq], s->host);
            q[nq] = (adbc_dns_question){names[nq], ADBC_DNS_A};
            q[nq + 1] = (adbc_dns_question){names[nq], ADBC_DNS_AAAA};
            nq += 2;
        }
    }
    uint8_t buf[ADBC_DNS_MAX_MSG];
    int len = dns_query(buf, sizeof buf, 0, q, nq);
    if (len <= 0)
        return;
    for (size_t i = 0; i < b->nsocks; i++) {
        msock *s = &b->socks[i];
        if (o->host_only) {
            /* To port 5353 of this socket's own address: the kernel delivers
             * it locally, so only a responder on this machine hears it. */
            struct sockaddr_storage to = s->self;
            socklen_t tl;
            if (s->family == AF_INET) {
                ((struct sockaddr_in *)&to)->sin_port = htons(5353);
                tl = sizeof(struct sockaddr_in);
            } else {
                ((struct sockaddr_in6 *)&to)->sin6_port = htons(5353);
                tl = sizeof(struct sockaddr_in6);
            }
            sendto(s->fd, buf, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)&to, tl);
        } else if (s->family == AF_INET) {
            struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(5353)};
            inet_pton(AF_INET, "224.0.0.251", &to.sin_addr);
            sendto(s->fd, buf, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
        } else {
            struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons(5353),
                                      .sin6_scope_id = s->ifindex};
            inet_pton(AF_INET6, "ff02::fb", &to.sin6_addr);
            sendto(s->fd, buf, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
        }
    }
}

static void read_sock(browse *b, const msock *s, const char *only)
{
    uint8_t buf[ADBC_DNS_MAX_MSG];
    for (int k = 0; k < 64; k++) { /* bounded per wakeup: others get their turn */
        ssize_t n = recv(s->fd, buf, sizeof buf, MSG_TRUNC);
        if (n < 0)
            return;
        if ((size_t)n > sizeof buf)
            continue; /* larger than any mDNS message */
        adbc_dns_msg m;
        if (dns_parse(&m, buf, (size_t)n, b->rrs, MDNS_MAX_RRS) < 0)
            continue; /* malformed: nothing in it is trusted */
        if (!(m.flags & 0x8000))
            continue; /* a query, not an answer */
        for (size_t i = 0; i < m.nrr; i++)
            take_answer(b, &b->rrs[i], s, only);
    }
}

static int local_addr(const char *addr)
{
    struct ifaddrs *ifs = NULL;
    if (!addr[0] || getifaddrs(&ifs) != 0)
        return 0;
    char a[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
    cp(a, sizeof a, addr);
    char *pct = strchr(a, '%');
    if (pct)
        *pct = '\0';
    int found = 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        char t[INET6_ADDRSTRLEN] = "";
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, t, sizeof t);
        else if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, t, sizeof t);
        found = t[0] && strcmp(t, a) == 0;
    }
    freeifaddrs(ifs);
    return found;
}

static int cmp_svc(const void *x, const void *y)
{
    const adbc_mdns_service *a = x, *b = y;
    int c = strcmp(a->service, b->service);
    return c ? c : strcmp(a->instance, b->instance);
}

static void browse_free(browse *b)
{
    for (size_t i = 0; i < b->nsocks; i++)
        close(b->socks[i].fd);
    core_free(b->fullname);
    core_free(b->hosts);
    core_free(b->rrs);
}

/* The instance asked for, when it is among those found. */
static adbc_mdns_service *wanted(browse *b, const char *inst)
{
    for (size_t i = 0; inst && i < b->nsvc; i++)
        if (strcmp(b->svc[i].instance, inst) == 0)
            return &b->svc[i];
    return NULL;
}

int adbc_mdns_browse(adbc_mdns_service **out, size_t *count, const adbc_mdns_opts *opts)
{
    if (!out || !count)
        return core_null(__func__, !out ? "out" : "count");
    *out = NULL;
    *count = 0;
    adbc_mdns_opts def;
    adbc_mdns_opts_init(&def);
    if (core_abi_take(&def, sizeof def, opts, "adbc_mdns_opts") < 0)
        return ADBC_EINVAL;
    opts = &def;
    browse *b = core_calloc(1, sizeof *b);
    if (!b)
        return core_fail(ADBC_ENOMEM, "out of memory browsing mDNS");
    b->svc = core_calloc(ADBC_MDNS_MAX_SERVICES, sizeof *b->svc);
    b->fullname = core_calloc(ADBC_MDNS_MAX_SERVICES, sizeof *b->fullname);
    b->hosts = core_calloc(MDNS_MAX_HOSTS, sizeof *b->hosts);
    b->rrs = core_calloc(MDNS_MAX_RRS, sizeof *b->rrs);
    if (!b->svc || !b->fullname || !b->hosts || !b->rrs) {
        core_free(b->svc);
        browse_free(b);
        core_free(b);
        return core_fail(ADBC_ENOMEM, "out of memory browsing mDNS");
    }
    b->nsocks = open_all(b->socks, MDNS_MAX_SOCKS);
    if (b->nsocks == 0) {
        core_free(b->svc);
        browse_free(b);
        core_free(b);
        return core_fail(ADBC_EIO,
                         "no network interface with multicast is up: mDNS cannot be used "
                         "(connect to Wi-Fi or a LAN, or give the device as HOST:PORT)");
    }
    int timeout = opts->timeout_ms > 0 ? opts->timeout_ms : 1000;
    int64_t start = core_now_ms(), deadline = core_deadline(timeout), next_round = start;
    b->last_news = start;
    const char *only = opts->service;
    for (;;) {
        int64_t now = core_now_ms();
        fill_addrs(b);
        adbc_mdns_service *w = wanted(b, opts->instance);
        /* An IPv6 address alone may be followed by an IPv4 one (preferred):
         * give it until the network has been quiet for 150 ms. */
        if (w && resolved(w) && (!strchr(w->addr, ':') || now - b->last_news >= 150))
            break;
        int all = b->nsvc > 0;
        for (size_t i = 0; i < b->nsvc && all; i++)
            all = resolved(&b->svc[i]);
        /* A responder on this machine answers at once: a host-only browse
         * need not wait for slower ones on the network. */
        if (!opts->instance && all && now - start >= (opts->host_only ? 100 : 400) &&
            now - b->last_news >= (opts->host_only ? 50 : 200))
            break;
        if (now >= next_round) {
            send_round(b, opts, 1);
            next_round = now + MDNS_ROUND_MS;
        }
        int left = core_remaining(deadline);
        if (left == 0)
            break;
        int wait = (int)(next_round - now);
        if (wait > left)
            wait = left;
        if (wait > 50)
            wait = 50; /* re-check the end conditions often */
        struct pollfd pf[MDNS_MAX_SOCKS];
        for (size_t i = 0; i < b->nsocks; i++)
            pf[i] = (struct pollfd){.fd = b->socks[i].fd, .events = POLLIN};
        int r = poll(pf, b->nsocks, wait < 1 ? 1 : wait);
        if (r < 0 && errno != EINTR)
            break;
        for (size_t i = 0; r > 0 && i < b->nsocks; i++)
            if (pf[i].revents & POLLIN)
                read_sock(b, &b->socks[i], only);
    }
    fill_addrs(b);
    for (size_t i = 0; i < b->nsvc; i++)
        b->svc[i].local = local_addr(b->svc[i].addr);
    adbc_mdns_service *list = b->svc;
    size_t n = b->nsvc;
    browse_free(b);
    core_free(b);
    if (n == 0) {
        core_free(list);
        list = NULL;
    } else {
        qsort(list, n, sizeof *list, cmp_svc);
    }
    adbc_clear_error();
    *out = list;
    *count = n;
    return 0;
}

void adbc_mdns_free(adbc_mdns_service *list)
{
    core_free(list);
}

void adbc_mdns_addr(char *buf, size_t len, const adbc_mdns_service *s)
{
    if (!buf || !len)
        return;
    if (!s) {
        buf[0] = '\0';
        return;
    }
    if (s->local)
        snprintf(buf, len, "127.0.0.1:%u", s->port);
    else if (strchr(s->addr, ':'))
        snprintf(buf, len, "[%s]:%u", s->addr, s->port);
    else
        snprintf(buf, len, "%s:%u", s->addr, s->port);
}

int adbc_mdns_resolve(adbc_mdns_service *out, const char *name, int timeout_ms)
{
    if (!out)
        return core_null(__func__, "out");
    memset(out, 0, sizeof *out);
    char inst[64];
    const char *rest;
    if (!name || dns_first_label(inst, sizeof inst, &rest, name) < 0 || !inst[0])
        return core_fail(ADBC_EINVAL, "\"%s\": not an mDNS service instance name",
                         name ? name : "");
    const char *type = NULL;
    if (*rest) {
        char t[64];
        cp(t, sizeof t, rest);
        size_t tl = strlen(t);
        if (tl && t[tl - 1] == '.')
            t[--tl] = '\0';
        if (tl > 6 && strcmp(t + tl - 6, ".local") == 0)
            t[tl - 6] = '\0';
        for (int i = 0; i < 3; i++)
            if (strcmp(t, all_types[i]) == 0)
                type = all_types[i];
        if (!type)
            return core_fail(ADBC_EINVAL,
                             "\"%s\": the service must be %s or %s (or %s, for pairing)", name,
                             ADBC_MDNS_TLS_CONNECT, ADBC_MDNS_ADB, ADBC_MDNS_TLS_PAIRING);
    }
    adbc_mdns_opts o;
    adbc_mdns_opts_init(&o);
    o.timeout_ms = timeout_ms;
    o.service = type;
    o.instance = inst;
    adbc_mdns_service *l;
    size_t n;
    int rc = adbc_mdns_browse(&l, &n, &o);
    if (rc < 0)
        return rc;
    const adbc_mdns_service *pick = NULL;
    static const char *const pref[] = {ADBC_MDNS_TLS_CONNECT, ADBC_MDNS_ADB};
    for (int k = 0; k < 2 && !pick; k++)
        for (size_t i = 0; i < n && !pick; i++)
            if (strcmp(l[i].instance, inst) == 0 && resolved(&l[i]) &&
                (type ? strcmp(l[i].service, type) == 0 : strcmp(l[i].service, pref[k]) == 0))
                pick = &l[i];
    if (pick) {
        *out = *pick;
        adbc_mdns_free(l);
        return 0;
    }
    char names[300] = "";
    size_t off = 0;
    for (size_t i = 0; i < n && off < sizeof names; i++) {
        int w = snprintf(names + off, sizeof names - off, "%s%s.%s", off ? ", " : "",
                         l[i].instance, l[i].service);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    adbc_mdns_free(l);
    return core_fail(ADBC_ENOTFOUND,
                     "no mDNS service \"%s\" answered within %d ms (%s%s); is Wireless "
                     "debugging on and the device on this network?",
                     name, timeout_ms, n ? "found: " : "no adb service found at all",
                     names);
}
