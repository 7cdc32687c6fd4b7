/* SPDX-License-Identifier: Apache-2.0 */
/* adb's server protocol without I/O (ops_hostproto.h). The prefixes and the
 * serial rule are those of adb's smart socket (sockets.cpp): a serial after
 * "host-serial:" runs to the first colon (after an optional usb:, product:,
 * model:, device:, tcp:, udp: or vsock:CID: part, or a bracketed IPv6
 * address), and takes a following ":DIGITS" as its port, so
 * "host-serial:127.0.0.1:5555:get-state" names "127.0.0.1:5555". */
#include "ops_hostproto.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long ops_hp_header(const uint8_t hdr[4])
{
    long n = 0;
    for (int i = 0; i < 4; i++) {
        int c = hdr[i], v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return -1;
        n = n * 16 + v;
    }
    return n ? n : -1;
}

static int prefix(const char **s, const char *p)
{
    size_t n = strlen(p);
    if (strncmp(*s, p, n) != 0)
        return 0;
    *s += n;
    return 1;
}

static int set_err(char *err, size_t len, const char *msg, const char *what)
{
    if (err && len)
        snprintf(err, len, "%s%.200s", msg, what ? what : "");
    return -1;
}

/* A decimal uint64 at *s, moved past it; 0 when none or too large. */
static int parse_u64(const char **s, uint64_t *out)
{
    if (!isdigit((unsigned char)**s))
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(*s, &end, 10);
    if (errno)
        return 0;
    *out = v;
    *s = end;
    return 1;
}

/* adb's parse_host_service: the serial, then the command after its colon. */
static int host_serial(ops_hp_req *r, const char *s)
{
    const char *start = s, *cmd = s;
    static const char *const named[] = {"usb:", "product:", "model:", "device:"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
        if (strncmp(cmd, named[i], strlen(named[i])) == 0) {
            const char *c = strchr(cmd + strlen(named[i]), ':');
            if (!c)
                return -1;
            cmd = c + 1;
            goto done;
        }
    }
    if (strncmp(cmd, "tcp:", 4) == 0 || strncmp(cmd, "udp:", 4) == 0) {
        cmd += 4;
        if (!*cmd)
            return -1;
    }
    if (strncmp(cmd, "vsock:", 6) == 0) {
        const char *c = strchr(cmd, ':');
        cmd = c + 1;
    }
    int found = 0;
    if (*cmd == '[') {
        const char *e = strchr(cmd, ']');
        if (e) {
            if (e[1] != ':')
                return -1;
            cmd = e + 2;
            found = 1;
        }
    }
    if (!found) {
        const char *c = strchr(cmd, ':');
        if (!c)
            return -1;
        cmd = c + 1;
    }
    const char *c = strchr(cmd, ':');
    if (c) {
        const char *p = cmd;
        while (p < c && isdigit((unsigned char)*p))
            p++;
        if (p == c)
            cmd = c + 1; /* a port (or nothing) between colons */
    }
done:
    if (cmd - start < 2 || !*cmd || (size_t)(cmd - 1 - start) >= sizeof r->serial)
        return -1;
    memcpy(r->serial, start, (size_t)(cmd - 1 - start));
    r->serial[cmd - 1 - start] = '\0';
    r->cmd = cmd;
    return 0;
}

/* A transport switch (the command after "host:"), or 0 when cmd is not one. */
static int transport(ops_hp_req *r, const char *cmd, char *err, size_t errlen)
{
    const char *s = cmd;
    if (prefix(&s, "tport:")) {
        r->tport = 1;
        if (prefix(&s, "serial:")) {
            if (!*s || strlen(s) >= sizeof r->serial)
                return set_err(err, errlen, "bad serial: ", s);
            r->sel = OPS_HP_SERIAL;
            snprintf(r->serial, sizeof r->serial, "%s", s);
        } else if (strcmp(s, "usb") == 0) {
            r->sel = OPS_HP_USB;
        } else if (strcmp(s, "local") == 0) {
            r->sel = OPS_HP_LOCAL;
        } else if (strcmp(s, "any") == 0) {
            r->sel = OPS_HP_ANY;
        } else {
            return set_err(err, errlen, "bad transport: tport:", s);
        }
    } else if (prefix(&s, "transport-id:")) {
        uint64_t id;
        if (!parse_u64(&s, &id) || *s)
            return set_err(err, errlen, "invalid transport id", NULL);
        r->sel = OPS_HP_ID;
        r->id = id;
    } else if (strcmp(s, "transport-usb") == 0) {
        r->sel = OPS_HP_USB;
    } else if (strcmp(s, "transport-local") == 0) {
        r->sel = OPS_HP_LOCAL;
    } else if (strcmp(s, "transport-any") == 0) {
        r->sel = OPS_HP_ANY;
    } else if (prefix(&s, "transport:")) {
        if (!*s || strlen(s) >= sizeof r->serial)
            return set_err(err, errlen, "bad serial: ", s);
        r->sel = OPS_HP_SERIAL;
        snprintf(r->serial, sizeof r->serial, "%s", s);
    } else {
        return 0;
    }
    r->kind = OPS_HP_TRANSPORT;
    r->cmd = cmd;
    return 1;
}

int ops_hp_parse(ops_hp_req *r, const char *req, char *err, size_t errlen)
{
    if (!r || !req)
        return set_err(err, errlen, "no request", NULL);
    memset(r, 0, sizeof *r);
    const char *s = req;
    if (prefix(&s, "host-serial:")) {
        if (host_serial(r, s) != 0)
            return set_err(err, errlen, "bad host-serial request: ", s);
        r->sel = OPS_HP_SERIAL;
    } else if (prefix(&s, "host-transport-id:")) {
        uint64_t id;
        if (!parse_u64(&s, &id))
            return set_err(err, errlen, "invalid transport id", NULL);
        if (*s != ':' || !s[1])
            return set_err(err, errlen, "host-transport-id without command", NULL);
        r->sel = OPS_HP_ID;
        r->id = id;
        r->cmd = s + 1;
    } else if (prefix(&s, "host-usb:")) {
        r->sel = OPS_HP_USB;
        r->cmd = s;
    } else if (prefix(&s, "host-local:")) {
        r->sel = OPS_HP_LOCAL;
        r->cmd = s;
    } else if (prefix(&s, "host:")) {
        r->sel = OPS_HP_ANY;
        r->cmd = s;
        int t = transport(r, s, err, errlen);
        if (t != 0)
            return t < 0 ? -1 : 0;
    } else {
        r->kind = OPS_HP_DEVICE;
        r->cmd = req;
        return 0;
    }
    if (!*r->cmd)
        return set_err(err, errlen, "empty host request", NULL);
    r->kind = OPS_HP_HOST;
    return 0;
}

int ops_hp_wait_spec(const char *spec, ops_hp_sel *sel, unsigned *states, char *err,
                     size_t errlen)
{
    if (!spec || !sel || !states)
        return set_err(err, errlen, "no wait-for spec", NULL);
    const char *dash = strchr(spec, '-');
    if (!dash)
        return set_err(err, errlen, "short wait-for: ", spec);
    size_t n = (size_t)(dash - spec);
    if (n == 5 && strncmp(spec, "local", 5) == 0)
        *sel = OPS_HP_LOCAL;
    else if (n == 3 && strncmp(spec, "usb", 3) == 0)
        *sel = OPS_HP_USB;
    else if (n == 3 && strncmp(spec, "any", 3) == 0)
        *sel = OPS_HP_ANY;
    else
        return set_err(err, errlen, "bad wait-for- transport: ", spec);
    static const struct {
        const char *name;
        unsigned bit;
    } st[] = {{"device", OPS_HP_ST_DEVICE},       {"recovery", OPS_HP_ST_RECOVERY},
              {"rescue", OPS_HP_ST_RESCUE},       {"sideload", OPS_HP_ST_SIDELOAD},
              {"bootloader", OPS_HP_ST_BOOTLOADER}, {"any", OPS_HP_ST_ANY},
              {"disconnect", OPS_HP_ST_DISCONNECT}};
    *states = 0;
    for (const char *p = dash + 1;;) {
        const char *e = strchr(p, '-');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof st / sizeof *st; i++)
            if (strlen(st[i].name) == len && strncmp(p, st[i].name, len) == 0)
                bit = st[i].bit;
        if (!bit)
            return set_err(err, errlen, "bad wait-for- state: ", spec);
        *states |= bit;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

size_t ops_hp_bytes(char *out, size_t cap, const void *data, size_t n)
{
    if (n > 0xffff)
        n = 0xffff;
    if (!out || cap < n + 5 || (n && !data))
        return 0;
    snprintf(out, cap, "%04zx", n);
    if (n)
        memcpy(out + 4, data, n);
    out[4 + n] = '\0';
    return 4 + n;
}

size_t ops_hp_string(char *out, size_t cap, const char *str)
{
    return ops_hp_bytes(out, cap, str ? str : "", str ? strlen(str) : 0);
}

static size_t reply(char *out, size_t cap, const char *status, const char *str)
{
    if (!out || cap < 5)
        return 0;
    memcpy(out, status, 4);
    out[4] = '\0';
    if (!str)
        return 4;
    size_t k = ops_hp_string(out + 4, cap - 4, str);
    return k ? 4 + k : 0;
}

size_t ops_hp_okay(char *out, size_t cap, const char *str)
{
    return reply(out, cap, "OKAY", str);
}

size_t ops_hp_fail(char *out, size_t cap, const char *msg)
{
    return reply(out, cap, "FAIL", msg ? msg : "");
}

static int append(char *out, size_t cap, size_t *used, const char *key, const char *value,
                  int alnum)
{
    if (!value || !*value)
        return 0;
    size_t need = 1 + strlen(key) + strlen(value);
    if (*used + need >= cap)
        return -1;
    out[(*used)++] = ' ';
    memcpy(out + *used, key, strlen(key));
    *used += strlen(key);
    for (const char *p = value; *p; p++)
        out[(*used)++] = alnum && !isalnum((unsigned char)*p) ? '_' : *p;
    out[*used] = '\0';
    return 0;
}

int ops_hp_device_line(char *out, size_t cap, size_t *used, int long_form, const char *serial,
                       const char *state, const char *devpath, const char *product,
                       const char *model, const char *device, uint64_t id)
{
    if (!out || !used || *used >= cap || !serial || !state)
        return -1;
    if (!*serial)
        serial = "(no serial number)";
    size_t start = *used;
    int k = long_form ? snprintf(out + *used, cap - *used, "%-22s %s", serial, state)
                      : snprintf(out + *used, cap - *used, "%s\t%s", serial, state);
    if (k < 0 || (size_t)k >= cap - *used)
        goto full;
    *used += (size_t)k;
    if (long_form) {
        if (append(out, cap, used, "", devpath, 0) || append(out, cap, used, "product:", product, 0) ||
            append(out, cap, used, "model:", model, 1) || append(out, cap, used, "device:", device, 0))
            goto full;
        k = snprintf(out + *used, cap - *used, " transport_id:%llu", (unsigned long long)id);
        if (k < 0 || (size_t)k >= cap - *used)
            goto full;
        *used += (size_t)k;
    }
    if (*used + 1 >= cap)
        goto full;
    out[(*used)++] = '\n';
    out[*used] = '\0';
    return 0;
full:
    *used = start;
    out[start] = '\0';
    return -1;
}

const char *ops_hp_server_addr(char *buf, size_t cap)
{
    const char *sock = getenv("ADB_SERVER_SOCKET");
    if (sock && *sock)
        return sock;
    const char *port = getenv("ANDROID_ADB_SERVER_PORT");
    const char *host = getenv("ANDROID_ADB_SERVER_ADDRESS");
    snprintf(buf, cap, "tcp:%s:%s", host && *host ? host : "127.0.0.1",
             port && *port ? port : "5037");
    return buf;
}


const char *ops_hp_mdns_check(char *buf, size_t cap, const char *ifs, int n)
{
    if (!buf || !cap)
        return "";
    if (n <= 0 || !ifs)
        snprintf(buf, cap, "ERROR: mdns daemon unavailable");
    else
        snprintf(buf, cap, "mdns daemon version [adbc built-in mDNS: %s]", ifs);
    return buf;
}

int ops_hp_mdns_enabled(void)
{
    const char *v = getenv("ADB_MDNS");
    return !(v && strcmp(v, "0") == 0);
}

static void net_safe(char *dst, const char *src)
{
    for (; *src; src++)
        *dst++ = (unsigned char)*src < 0x20 || *src == 0x7f ? '_' : *src;
    *dst = '\0';
}

int ops_hp_mdns_line(char *out, size_t cap, size_t *used, const char *instance,
                     const char *service, const char *addr, unsigned port)
{
    if (!out || !used || *used >= cap || !instance || !service || !addr)
        return -1;
    size_t ni = strlen(instance), ns = strlen(service), na = strlen(addr);
    if (ni > 1024 || ns > 1024 || na > 1024)
        return -1;
    char *i = malloc(ni + 1), *sv = malloc(ns + 1), *a = malloc(na + 1);
    int rc = -1;
    if (i && sv && a) {
        net_safe(i, instance);
        net_safe(sv, service);
        net_safe(a, addr);
        int v6 = strchr(a, ':') != NULL;
        int k = snprintf(out + *used, cap - *used, "%s\t%s\t%s%s%s:%u\n", i, sv, v6 ? "[" : "",
                         a, v6 ? "]" : "", port);
        if (k >= 0 && (size_t)k < cap - *used) {
            *used += (size_t)k;
            rc = 0;
        } else {
            out[*used] = '\0';
        }
    }
    free(i);
    free(sv);
    free(a);
    return rc;
}

/* ---- protobuf, by hand ---- */

typedef struct pbw {
    uint8_t *out;
    size_t cap, n;
    int full;
} pbw;

static void pb_byte(pbw *w, uint8_t b)
{
    if (w->n < w->cap)
        w->out[w->n] = b;
    else
        w->full = 1;
    w->n++;
}

static void pb_varint(pbw *w, uint64_t v)
{
    while (v >= 0x80) {
        pb_byte(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    pb_byte(w, (uint8_t)v);
}

static void pb_tag(pbw *w, unsigned field, unsigned wire)
{
    pb_varint(w, ((uint64_t)field << 3) | wire);
}

/* A varint field; 0 left out unless present (proto3 `optional`). */
static void pb_uint(pbw *w, unsigned field, uint64_t v, int present)
{
    if (!v && !present)
        return;
    pb_tag(w, field, 0);
    pb_varint(w, v);
}

static void pb_bytes(pbw *w, unsigned field, const void *p, size_t len, int present)
{
    if (!len && !present)
        return;
    pb_tag(w, field, 2);
    pb_varint(w, len);
    for (size_t i = 0; i < len; i++)
        pb_byte(w, ((const uint8_t *)p)[i]);
}

static void pb_str(pbw *w, unsigned field, const char *s, int present)
{
    pb_bytes(w, field, s ? s : "", s ? strlen(s) : 0, present);
}

static const char *const pb_states[] = {
    "ANY",    "CONNECTING", "AUTHORIZING", "UNAUTHORIZED", "NOPERMISSION", "DETACHED", "OFFLINE",
    "BOOTLOADER", "DEVICE", "HOST",     "RECOVERY",    "SIDELOAD",     "RESCUE"};

int ops_hp_pb_state(const char *state)
{
    /* adb's to_string(ConnectionState) words, in the enum's order; "no
     * permissions" is how adb lists NOPERMISSION. */
    static const char *const words[] = {"any",      "connecting", "authorizing", "unauthorized",
                                        "no permissions", "detached", "offline", "bootloader",
                                        "device",   "host",       "recovery",    "sideload",
                                        "rescue"};
    if (!state)
        return 0;
    for (int i = 1; i < (int)(sizeof words / sizeof *words); i++)
        if (strcmp(state, words[i]) == 0)
            return i;
    if (strncmp(state, "no permissions", 14) == 0)
        return 4;
    return 0;
}

/* One Device message, its fields in number order. */
static void pb_device(pbw *w, const ops_hp_pbdev *d)
{
    pb_str(w, 1, d->serial, 0);
    pb_uint(w, 2, (uint64_t)ops_hp_pb_state(d->state), 0);
    pb_str(w, 3, d->bus_address, 0);
    pb_str(w, 4, d->product, 0);
    pb_str(w, 5, d->model, 0);
    pb_str(w, 6, d->device, 0);
    pb_uint(w, 7, (uint64_t)(uint32_t)d->connection_type, 0);
    pb_uint(w, 8, (uint64_t)d->negotiated_speed, 0);
    pb_uint(w, 9, (uint64_t)d->max_speed, 0);
    pb_uint(w, 10, d->transport_id, 0);
}

int ops_hp_pb_devices(uint8_t *out, size_t cap, size_t *len, const ops_hp_pbdev *devs,
                      size_t n)
{
    if (!out || !len || (n && !devs))
        return -1;
    pbw w = {out, cap, 0, 0};
    for (size_t i = 0; i < n; i++) {
        /* The length first: measure the message, then write it. */
        pbw m = {NULL, 0, 0, 0};
        pb_device(&m, &devs[i]);
        pb_tag(&w, 1, 2);
        pb_varint(&w, m.n);
        pb_device(&w, &devs[i]);
    }
    *len = w.n;
    return w.full ? -1 : 0;
}

/* Text format: protobuf's TextFormat::PrintToString. */
typedef struct txw {
    char *out;
    size_t cap, n;
    int full;
} txw;

static void tx_add(txw *w, const char *s, size_t k)
{
    if (w->full || w->n + k + 1 > w->cap) {
        w->full = 1;
        return;
    }
    memcpy(w->out + w->n, s, k);
    w->n += k;
    w->out[w->n] = '\0';
}

static void tx_fmt(txw *w, const char *fmt, const char *name, long long v)
{
    char b[160];
    int k = snprintf(b, sizeof b, fmt, name, v);
    tx_add(w, b, (size_t)k);
}

/* A string field as protobuf's CEscape writes it: \n \r \t \" \' \\ named,
 * every other byte outside 0x20..0x7e as three octal digits. */
static void tx_str(txw *w, const char *name, const char *s)
{
    if (!s || !*s)
        return;
    tx_add(w, "  ", 2);
    tx_add(w, name, strlen(name));
    tx_add(w, ": \"", 3);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char b[8];
        const char *e = NULL;
        switch (*p) {
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '"': e = "\\\""; break;
        case '\'': e = "\\'"; break;
        case '\\': e = "\\\\"; break;
        default:
            if (*p < 0x20 || *p >= 0x7f) {
                snprintf(b, sizeof b, "\\%03o", *p);
                e = b;
            }
        }
        if (e)
            tx_add(w, e, strlen(e));
        else
            tx_add(w, (const char *)p, 1);
    }
    tx_add(w, "\"\n", 2);
}

int ops_hp_pb_devices_text(char *out, size_t cap, size_t *len, const ops_hp_pbdev *devs,
                           size_t n)
{
    if (!out || !cap || !len || (n && !devs))
        return -1;
    txw w = {out, cap, 0, 0};
    out[0] = '\0';
    static const char *const types[] = {"UNKNOWN", "USB", "SOCKET"};
    for (size_t i = 0; i < n; i++) {
        const ops_hp_pbdev *d = &devs[i];
        tx_add(&w, "device {\n", 9);
        tx_str(&w, "serial", d->serial);
        int st = ops_hp_pb_state(d->state);
        if (st) {
            char line[64];
            int k = snprintf(line, sizeof line, "  state: %s\n", pb_states[st]);
            tx_add(&w, line, (size_t)k);
        }
        tx_str(&w, "bus_address", d->bus_address);
        tx_str(&w, "product", d->product);
        tx_str(&w, "model", d->model);
        tx_str(&w, "device", d->device);
        if (d->connection_type > 0 && d->connection_type < 3) {
            char line[64];
            int k = snprintf(line, sizeof line, "  connection_type: %s\n",
                             types[d->connection_type]);
            tx_add(&w, line, (size_t)k);
        } else if (d->connection_type) {
            tx_fmt(&w, "  %s: %lld\n", "connection_type", d->connection_type);
        }
        if (d->negotiated_speed)
            tx_fmt(&w, "  %s: %lld\n", "negotiated_speed", (long long)d->negotiated_speed);
        if (d->max_speed)
            tx_fmt(&w, "  %s: %lld\n", "max_speed", (long long)d->max_speed);
        if (d->transport_id)
            tx_fmt(&w, "  %s: %lld\n", "transport_id", (long long)d->transport_id);
        tx_add(&w, "}\n", 2);
    }
    *len = w.n;
    return w.full ? -1 : 0;
}

void ops_hp_status_init(ops_hp_status *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->burst_mode = -1;
    s->mdns_enabled = -1;
}

int ops_hp_pb_status(uint8_t *out, size_t cap, size_t *len, const ops_hp_status *s)
{
    if (!out || !len || !s)
        return -1;
    pbw w = {out, cap, 0, 0};
    pb_uint(&w, 1, (uint64_t)(uint32_t)s->usb_backend, 0);
    pb_uint(&w, 2, s->usb_backend_forced != 0, 0);
    pb_uint(&w, 3, (uint64_t)(uint32_t)s->mdns_backend, 0);
    pb_uint(&w, 4, s->mdns_backend_forced != 0, 0);
    pb_str(&w, 5, s->version, 0);
    pb_str(&w, 6, s->build, 0);
    pb_str(&w, 7, s->executable_absolute_path, 0);
    pb_str(&w, 8, s->log_absolute_path, 0);
    pb_str(&w, 9, s->os, 0);
    if (s->trace_level)
        pb_str(&w, 10, s->trace_level, 1);
    if (s->burst_mode >= 0)
        pb_uint(&w, 11, s->burst_mode != 0, 1);
    if (s->mdns_enabled >= 0)
        pb_uint(&w, 12, s->mdns_enabled != 0, 1);
    if (s->keystore_path)
        pb_str(&w, 13, s->keystore_path, 1);
    if (s->known_hosts_path)
        pb_str(&w, 14, s->known_hosts_path, 1);
    *len = w.n;
    return w.full ? -1 : 0;
}
