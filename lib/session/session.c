/* SPDX-License-Identifier: Apache-2.0 */
/* The session engine: configuration, input reassembly, the CNXN/AUTH/STLS
 * handshake in both roles, and dispatch of stream packets to stream.c. */
#include "session/session_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_WINDOW (4u * 1024u * 1024u)
#define DEFAULT_DEVICE_FEATURES "shell_v2,delayed_ack"

void adbc_session_config_init_sized(adbc_session_config *out, adbc_role role, size_t size)
{
    adbc_session_config d, *cfg = &d;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->role = role;
    cfg->version = ADBC_VERSION_SKIP_CHECKSUM;
    cfg->max_payload = ADBC_MAX_PAYLOAD;
    cfg->window = DEFAULT_WINDOW;
    cfg->auth_required = 1;
    cfg->max_auth_tokens = 16;
    core_abi_give(out, size, &d, sizeof d);
}

int session_fail(adbc_session *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    s->state = ADBC_SESSION_FAILED;
    return core_fail(code, "%s", s->err);
}

static int list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && memcmp(p, item, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int adbc_session_new(adbc_session **out, const adbc_session_config *cfg,
                     const adbc_session_callbacks *cb, void *user)
{
    if (!out)
        return core_null(__func__, "out");
    *out = NULL;
    adbc_session_config def;
    adbc_session_config_init(&def, cfg ? cfg->role : ADBC_ROLE_HOST);
    if (core_abi_take(&def, sizeof def, cfg, "adbc_session_config") < 0)
        return ADBC_EINVAL;
    cfg = &def;
    adbc_session *s = core_calloc(1, sizeof *s);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory creating a session");
    s->role = cfg->role;
    s->our_version = cfg->version ? cfg->version : ADBC_VERSION_SKIP_CHECKSUM;
    s->our_max_payload = cfg->max_payload ? cfg->max_payload : ADBC_MAX_PAYLOAD;
    if (s->our_max_payload < ADBC_MAX_PAYLOAD_V1)
        s->our_max_payload = ADBC_MAX_PAYLOAD_V1;
    s->window = cfg->window ? cfg->window : DEFAULT_WINDOW;
    if (s->window > 0x40000000u)
        s->window = 0x40000000u;
    s->send_ahead = cfg->send_ahead;
    s->max_auth_tokens = cfg->max_auth_tokens ? cfg->max_auth_tokens : 16;
    s->auth_required = cfg->auth_required;
    s->offer_tls = cfg->offer_tls;
    s->accept_opens = cfg->accept_opens;
    s->version = ADBC_VERSION_MIN;
    s->max_payload = ADBC_MAX_PAYLOAD_V1;
    s->next_id = 1;
    if (core_abi_take(&s->cb, sizeof s->cb, cb, "adbc_session_callbacks") < 0) {
        core_free(s);
        return ADBC_EINVAL;
    }
    s->user = user;

    const char *features = cfg->features;
    if (!features)
        features = s->role == ADBC_ROLE_HOST ? ADBC_HOST_FEATURES : DEFAULT_DEVICE_FEATURES;
    if (cfg->banner) {
        s->banner = core_strdup(cfg->banner);
        const char *f = strstr(cfg->banner, "features=");
        if (f) {
            char *dup = core_strdup(f + 9);
            if (dup) {
                char *semi = strchr(dup, ';');
                if (semi)
                    *semi = '\0';
                s->we_delayed_ack = list_has(dup, "delayed_ack");
                core_free(dup);
            }
        }
    } else {
        const char *prefix = s->role == ADBC_ROLE_HOST ? "host::features=" : "device::features=";
        size_t n = strlen(prefix) + strlen(features) + 1;
        s->banner = core_malloc(n);
        if (s->banner)
            snprintf(s->banner, n, "%s%s", prefix, features);
        s->we_delayed_ack = list_has(features, "delayed_ack");
    }
    if (!s->banner) {
        core_free(s);
        return core_fail(ADBC_ENOMEM, "out of memory creating a session");
    }
    if (strlen(s->banner) > ADBC_MAX_PAYLOAD_V1) {
        core_free(s->banner);
        core_free(s);
        return core_fail(ADBC_EINVAL, "CNXN banner is longer than %u bytes", ADBC_MAX_PAYLOAD_V1);
    }
    *out = s;
    return 0;
}

void adbc_session_free(adbc_session *s)
{
    if (!s)
        return;
    sq_free_all(s);
    core_free(s->streams);
    core_free(s->pbuf);
    core_free(s->banner);
    adbc_banner_clear(&s->peer);
    core_free(s);
}

static int send_cnxn(adbc_session *s)
{
    /* The device answers with the negotiated max payload, as adbd does. */
    uint32_t maxp = s->role == ADBC_ROLE_DEVICE && s->peer_cnxn ? s->max_payload
                                                                  : s->our_max_payload;
    return sq_push(s, ADBC_A_CNXN, s->our_version, maxp,
                        (const uint8_t *)s->banner, strlen(s->banner));
}

int adbc_session_start(adbc_session *s)
{
    if (!s)
        return core_null(__func__, "the session");
    if (s->role != ADBC_ROLE_HOST)
        return core_fail(ADBC_EINVAL, "adbc_session_start: only the host role sends the first CNXN");
    return send_cnxn(s);
}

static void go_online(adbc_session *s)
{
    s->state = ADBC_SESSION_ONLINE;
    if (s->cb.on_online)
        s->cb.on_online(s->user);
}

/* The device's answer once a host is authorized (or needs no auth). */
static int device_accept(adbc_session *s)
{
    int rc = send_cnxn(s);
    if (rc < 0)
        return session_fail(s, rc, "%s", adbc_last_error());
    s->pending_offer = 0;
    go_online(s);
    return 0;
}

/* The AUTH token from the kernel's random source: getrandom(2) through
 * syscall() (bionic has no wrapper before API 28), else /dev/urandom on a
 * kernel older than 3.17. The engine needs no crypto library for it, so a
 * program built on the engine alone links only the C library. */
static int kernel_random(uint8_t *buf, size_t len)
{
    size_t got = 0;
#ifdef SYS_getrandom
    while (got < len) {
        long n = syscall(SYS_getrandom, buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
#endif
    if (got == len)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ADBC_EIO;
    for (got = 0; got < len;) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return got == len ? 0 : ADBC_EIO;
}

static int send_token(adbc_session *s)
{
    int rc;
    if (s->cb.auth_random)
        rc = s->cb.auth_random(s->user, s->token, sizeof s->token);
    else
        rc = kernel_random(s->token, sizeof s->token);
    if (rc < 0)
        return session_fail(s, ADBC_EIO,
                                 "could not generate an AUTH token: neither getrandom(2) nor "
                                 "/dev/urandom gave random bytes (or the auth_random callback "
                                 "failed); check that /dev/urandom is readable here");
    return sq_push(s, ADBC_A_AUTH, ADBC_AUTH_TOKEN, 0, s->token, sizeof s->token);
}

static int handle_cnxn(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    const char *who = s->role == ADBC_ROLE_HOST ? "device" : "host";
    if (s->role == ADBC_ROLE_HOST && s->state == ADBC_SESSION_ONLINE)
        return session_fail(s, ADBC_ECLOSED,
                                 "the device restarted its ADB session (a second CNXN): reconnect");
    if (h->arg0 < ADBC_VERSION_MIN)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: %s's CNXN offers protocol version 0x%08x, "
                                 "older than 0x%08x",
                                 who, h->arg0, ADBC_VERSION_MIN);
    if (h->arg1 < 256)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: %s's CNXN offers a max payload of %u bytes",
                                 who, h->arg1);
    adbc_banner b;
    int brc = adbc_banner_parse(&b, (const char *)data, h->data_length);
    if (brc == ADBC_ENOMEM) /* our failure, not the peer's */
        return session_fail(s, ADBC_ENOMEM, "%s", adbc_last_error());
    if (brc < 0)
        return session_fail(s, ADBC_EPROTO, "protocol violation: %s's CNXN has a %s", who,
                                 adbc_last_error());
    adbc_banner_clear(&s->peer);
    s->peer = b;
    s->peer_cnxn = 1;
    s->version = h->arg0 < s->our_version ? h->arg0 : s->our_version;
    s->max_payload = h->arg1 < s->our_max_payload ? h->arg1 : s->our_max_payload;
    s->delayed_ack = s->we_delayed_ack && adbc_banner_has_feature(&b, "delayed_ack") &&
                     s->version >= ADBC_VERSION_SKIP_CHECKSUM;

    if (s->role == ADBC_ROLE_HOST) {
        go_online(s);
        return 0;
    }
    /* Device role: a (re)connecting host starts over, as adbd's
     * handle_offline does: every stream of the old session is gone. */
    while (s->nstreams > 0) {
        uint32_t id = s->streams[s->nstreams - 1].local;
        session_stream_remove(s, id);
        if (s->cb.on_closed)
            s->cb.on_closed(s->user, id, 0);
    }
    s->state = ADBC_SESSION_HANDSHAKE;
    s->sent_pubkey = 0;
    s->pending_offer = 0;
    s->failed_sigs = 0;
    if (s->offer_tls)
        return sq_push(s, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
    if (s->auth_required)
        return send_token(s);
    return device_accept(s);
}

static int host_auth(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    if (h->arg0 != ADBC_AUTH_TOKEN)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: device sent AUTH type %u; a device only "
                                 "sends TOKEN (1)",
                                 h->arg0);
    if (s->state == ADBC_SESSION_ONLINE)
        return 0;
    if (++s->tokens_seen > s->max_auth_tokens)
        return session_fail(s, ADBC_EUNAUTHORIZED,
                                 "device unauthorized: it refused every key and kept asking (%u "
                                 "AUTH tokens); accept the RSA key prompt on the device, or set "
                                 "ADB_VENDOR_KEYS to a key it trusts",
                                 s->tokens_seen - 1);
    if (h->data_length != ADBC_AUTH_TOKEN_SIZE)
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: AUTH token of %u bytes (expected %d)",
                                 h->data_length, ADBC_AUTH_TOKEN_SIZE);
    if (s->sent_pubkey)
        return 0; /* still waiting for the user at the device's prompt */
    if (s->cb.auth_sign) {
        uint8_t sig[ADBC_AUTH_MAX_SIG];
        size_t sig_len = 0;
        int rc = s->cb.auth_sign(s->user, s->key_index, data, h->data_length, sig, &sig_len);
        if (rc == 0) {
            s->key_index++;
            if (sig_len > sizeof sig)
                return session_fail(s, ADBC_EKEY, "signature too long");
            return sq_push(s, ADBC_A_AUTH, ADBC_AUTH_SIGNATURE, 0, sig, sig_len);
        }
        if (rc != ADBC_ENOTFOUND)
            return session_fail(s, rc, "signing the AUTH token failed: %s",
                                     adbc_last_error());
    }
    const char *pub = s->cb.auth_public_key ? s->cb.auth_public_key(s->user) : NULL;
    if (!pub)
        return session_fail(s, ADBC_EUNAUTHORIZED,
                                 "device unauthorized: it accepted none of our keys and there is "
                                 "no public key to offer; set ADB_VENDOR_KEYS or create "
                                 "~/.android/adbkey");
    size_t n = strlen(pub) + 1;
    if (n > ADBC_MAX_PAYLOAD_V1)
        return session_fail(s, ADBC_EKEY, "public key line is too long (%zu bytes)", n);
    int rc = sq_push(s, ADBC_A_AUTH, ADBC_AUTH_RSAPUBLICKEY, 0, (const uint8_t *)pub, n);
    if (rc < 0)
        return rc;
    s->sent_pubkey = 1;
    s->state = ADBC_SESSION_AUTH_PROMPT;
    if (s->cb.auth_prompt)
        s->cb.auth_prompt(s->user);
    return 0;
}

static int device_auth(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    if (s->state == ADBC_SESSION_ONLINE || !s->peer_cnxn)
        return 0;
    switch (h->arg0) {
    case ADBC_AUTH_SIGNATURE:
        if (s->cb.auth_verify &&
            s->cb.auth_verify(s->user, s->token, sizeof s->token, data, h->data_length) == 1)
            return device_accept(s);
        s->failed_sigs++;
        return send_token(s);
    case ADBC_AUTH_RSAPUBLICKEY: {
        char *key = core_strndup((const char *)data, h->data_length);
        if (!key)
            return session_fail(s, ADBC_ENOMEM, "out of memory");
        int ok = s->cb.auth_offer ? s->cb.auth_offer(s->user, key) : 0;
        core_free(key);
        if (ok == 1)
            return device_accept(s);
        s->pending_offer = 1;
        return 0;
    }
    default:
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: host sent AUTH type %u (expected SIGNATURE "
                                 "or RSAPUBLICKEY)",
                                 h->arg0);
    }
}

static int handle_stls(adbc_session *s, const adbc_header *h)
{
    (void)h;
    if (s->role == ADBC_ROLE_HOST) {
        if (s->state != ADBC_SESSION_HANDSHAKE)
            return session_fail(s, ADBC_EPROTO, "protocol violation: STLS after the handshake");
        int rc = sq_push(s, ADBC_A_STLS, ADBC_STLS_VERSION, 0, NULL, 0);
        if (rc < 0)
            return rc;
        s->state = ADBC_SESSION_TLS;
        return 0;
    }
    if (!s->offer_tls || !s->peer_cnxn || s->state != ADBC_SESSION_HANDSHAKE)
        return session_fail(s, ADBC_EPROTO, "protocol violation: unexpected STLS from host");
    s->state = ADBC_SESSION_TLS;
    return 0;
}

int adbc_session_tls_done(adbc_session *s)
{
    if (!s)
        return core_null(__func__, "the session");
    if (s->state != ADBC_SESSION_TLS)
        return core_fail(ADBC_EINVAL, "adbc_session_tls_done: no TLS upgrade in progress");
    if (s->role == ADBC_ROLE_HOST) {
        s->state = ADBC_SESSION_HANDSHAKE; /* the device now sends CNXN inside TLS */
        return 0;
    }
    s->state = ADBC_SESSION_HANDSHAKE;
    return device_accept(s);
}

int adbc_session_auth_accept(adbc_session *s)
{
    if (!s)
        return core_null(__func__, "the session");
    if (s->role != ADBC_ROLE_DEVICE || !s->pending_offer)
        return core_fail(ADBC_EINVAL, "adbc_session_auth_accept: no key offer is pending");
    return device_accept(s);
}

static int dispatch(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    switch (h->command) {
    case ADBC_A_CNXN:
        return handle_cnxn(s, h, data);
    case ADBC_A_AUTH:
        return s->role == ADBC_ROLE_HOST ? host_auth(s, h, data) : device_auth(s, h, data);
    case ADBC_A_STLS:
        return handle_stls(s, h);
    default:
        break;
    }
    /* Packets before the handshake completes are ignored, as adbd does. */
    if (s->state != ADBC_SESSION_ONLINE)
        return 0;
    switch (h->command) {
    case ADBC_A_OPEN:
        return session_handle_open(s, h, data);
    case ADBC_A_OKAY:
        return session_handle_okay(s, h, data);
    case ADBC_A_WRTE:
        return session_handle_wrte(s, h, data);
    case ADBC_A_CLSE:
        return session_handle_clse(s, h);
    default:
        return 0; /* SYNC and unknown commands with a valid magic: ignored */
    }
}

static int check_packet(adbc_session *s, const adbc_header *h, const uint8_t *data)
{
    int check = s->peer_cnxn ? s->version < ADBC_VERSION_SKIP_CHECKSUM : h->data_check != 0;
    if (check && adbc_payload_sum(data, h->data_length) != h->data_check) {
        char nb[5];
        return session_fail(s, ADBC_EPROTO,
                                 "protocol violation: %s packet (arg0 %u, arg1 %u, %u bytes) has "
                                 "data check 0x%08x but its bytes sum to 0x%08x",
                                 adbc_command_name(h->command, nb), h->arg0, h->arg1,
                                 h->data_length, h->data_check,
                                 adbc_payload_sum(data, h->data_length));
    }
    return dispatch(s, h, data);
}

int adbc_session_recv(adbc_session *s, const uint8_t *data, size_t len)
{
    if (!s || (!data && len))
        return core_null(__func__, !s ? "the session" : "data");
    if (s->state == ADBC_SESSION_FAILED)
        return core_fail(ADBC_EPROTO, "session already failed: %s", s->err);
    if (s->state == ADBC_SESSION_TLS)
        return 0;
    if (len > 0x7fffffff)
        len = 0x7fffffff;
    const size_t total = len;
    while (len > 0) {
        if (!s->in_payload) {
            size_t take = ADBC_HEADER_SIZE - s->hdrlen;
            if (take > len)
                take = len;
            memcpy(s->hdrbuf + s->hdrlen, data, take);
            s->hdrlen += take;
            data += take;
            len -= take;
            if (s->hdrlen < ADBC_HEADER_SIZE)
                break;
            s->hdrlen = 0;
            uint32_t limit =
                s->state == ADBC_SESSION_ONLINE ? s->max_payload : ADBC_SESSION_HANDSHAKE_MAX;
            if (adbc_header_decode(&s->cur, s->hdrbuf, limit) < 0)
                return session_fail(s, ADBC_EPROTO, "%s", adbc_last_error());
            uint32_t dl = s->cur.data_length;
            if (dl <= len) { /* whole payload in this buffer: no copy */
                int rc = check_packet(s, &s->cur, data);
                if (rc < 0)
                    return core_fail_keep(rc);
                data += dl;
                len -= dl;
                if (s->state == ADBC_SESSION_TLS) /* the rest belongs to TLS */
                    return (int)(total - len);
                continue;
            }
            /* A WRTE payload that spans reads is handed to on_data piece by
             * piece instead of being reassembled first: one copy less on
             * every large transfer. Only possible when no data check has to
             * be verified over the whole payload first. */
            if (s->cur.command == ADBC_A_WRTE && s->state == ADBC_SESSION_ONLINE &&
                s->version >= ADBC_VERSION_SKIP_CHECKSUM) {
                int rc = session_wrte_begin(s, &s->cur, &s->deliver);
                if (rc < 0)
                    return core_fail_keep(rc);
                s->plen = 0;
                s->in_payload = 2;
                continue;
            }
            if (s->pcap < dl) {
                uint8_t *nb = core_realloc(s->pbuf, dl);
                if (!nb)
                    return session_fail(s, ADBC_ENOMEM, "out of memory for a %u-byte packet",
                                             dl);
                s->pbuf = nb;
                s->pcap = dl;
            }
            s->plen = 0;
            s->in_payload = 1;
        }
        size_t need = s->cur.data_length - s->plen;
        size_t take = need < len ? need : len;
        if (s->in_payload == 2) {
            if (s->deliver && s->cb.on_data)
                s->cb.on_data(s->user, s->cur.arg1, data, take);
            s->plen += take;
            data += take;
            len -= take;
            if (s->plen == s->cur.data_length)
                s->in_payload = 0;
            continue;
        }
        memcpy(s->pbuf + s->plen, data, take);
        s->plen += take;
        data += take;
        len -= take;
        if (s->plen == s->cur.data_length) {
            s->in_payload = 0;
            int rc = check_packet(s, &s->cur, s->pbuf);
            if (rc < 0)
                return core_fail_keep(rc);
            if (s->state == ADBC_SESSION_TLS)
                return (int)(total - len);
        }
    }
    return (int)total;
}

adbc_session_state adbc_session_state_get(const adbc_session *s)
{
    if (!s)
        return ADBC_SESSION_FAILED;
    return s->state;
}

const adbc_banner *adbc_session_peer(const adbc_session *s)
{
    if (!s)
        return NULL;
    return s->peer_cnxn ? &s->peer : NULL;
}

uint32_t adbc_session_version(const adbc_session *s)
{
    if (!s)
        return 0;
    return s->version;
}

uint32_t adbc_session_max_payload(const adbc_session *s)
{
    if (!s)
        return 0;
    return s->max_payload;
}

int adbc_session_delayed_ack(const adbc_session *s)
{
    if (!s)
        return 0;
    return s->delayed_ack;
}

const char *adbc_session_error(const adbc_session *s)
{
    return s->err;
}
