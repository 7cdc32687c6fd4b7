/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — finding devices by mDNS / DNS-SD, as adb does for wireless
 * debugging: an Android 11+ phone announces "_adb-tls-connect._tcp" (the
 * connect port, TLS) while Wireless debugging is on and
 * "_adb-tls-pairing._tcp" while the pairing dialog is open; "_adb._tcp" is
 * an adbd in plain TCP mode. adbc queries the network itself (no daemon:
 * Android has no avahi, and on Linux none is needed): one-shot queries
 * (RFC 6762 section 5.1) sent to 224.0.0.251 and ff02::fb on every
 * multicast interface, answers read with a bounded wait. */
#ifndef ADBC_MDNS_H
#define ADBC_MDNS_H

#include <stddef.h>

#include "adbc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADBC_MDNS_ADB "_adb._tcp"
#define ADBC_MDNS_TLS_CONNECT "_adb-tls-connect._tcp"
#define ADBC_MDNS_TLS_PAIRING "_adb-tls-pairing._tcp"

/* At most this many services are kept from one browse (a flood of answers
 * cannot grow memory without bound). */
#define ADBC_MDNS_MAX_SERVICES 256

/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_mdns_service {
    char instance[64];  /* "adb-R5CT1234567-aBcDeF" */
    char service[32];   /* ADBC_MDNS_TLS_CONNECT, ... */
    char host[256];     /* the SRV target, "Android-2.local" */
    unsigned port;      /* 0: not resolved (no SRV answer in time) */
    char addr[64];      /* an IPv4 address when one was given, else IPv6
                           ("fe80::1%eth0"); "" when none came in time */
    char ifname[32];    /* the interface the answer came on */
    char txt[256];      /* the TXT strings joined by ';' */
    int local;          /* 1: addr is this machine's own (Termux on the phone):
                           connect to 127.0.0.1 instead */
} adbc_mdns_service;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_mdns_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int timeout_ms;        /* the whole browse; default 1000. It ends earlier when
                              every service found is resolved and the network has
                              been quiet for 200 ms (after at least 400 ms) */
    const char *service;   /* one of the three types; NULL: all three */
    const char *instance;  /* stop as soon as this instance is resolved; NULL: browse */
    int host_only;         /* 1: each query goes by unicast to port 5353 of this
                              machine's own interface addresses (RFC 6762 5.5), so it
                              never leaves the machine and only a responder on it
                              answers (Termux: the phone's own service). The browse
                              may then end after 100 ms. Default 0 */
} adbc_mdns_opts;

/* Defaults as documented above. */
ADBC_API void adbc_mdns_opts_init_sized(adbc_mdns_opts *opts, size_t size);
#define adbc_mdns_opts_init(o) adbc_mdns_opts_init_sized((o), sizeof *(o))

/* Browse for adb's services and resolve them (SRV, TXT, A, AAAA). *out is
 * an array of *count services (NULL when none), freed with adbc_mdns_free;
 * sorted by service then instance. Malformed answers are ignored (they
 * cannot crash, loop or grow memory past ADBC_MDNS_MAX_SERVICES). Fails
 * (ADBC_EIO) only when no multicast interface can be used at all. opts may
 * be NULL. */
ADBC_API int adbc_mdns_browse(adbc_mdns_service **out, size_t *count, const adbc_mdns_opts *opts);
ADBC_API void adbc_mdns_free(adbc_mdns_service *list);

/* The multicast interfaces a browse would use, as text ("eth0 (IPv4, IPv6),
 * wlan0 (IPv4)") into buf. Returns how many, 0 when none. */
ADBC_API int adbc_mdns_interfaces(char *buf, size_t len);

/* Resolve a service instance: "NAME", "NAME._adb-tls-connect._tcp" or
 * "NAME._adb._tcp" (".local" may follow). A bare NAME prefers the TLS
 * connect service, then _adb._tcp. ADBC_ENOTFOUND when no such instance
 * answers within timeout_ms (the message lists those that did). */
ADBC_API int adbc_mdns_resolve(adbc_mdns_service *out, const char *name, int timeout_ms);

/* The "HOST:PORT" to connect to for a resolved service (127.0.0.1 when
 * it is this machine's own address; [v6%if]:PORT for IPv6). */
ADBC_API void adbc_mdns_addr(char *buf, size_t len, const adbc_mdns_service *s);

#ifdef __cplusplus
}
#endif
#endif
