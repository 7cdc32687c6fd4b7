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

size_t ops_hp_string(char *out, size_t cap, const char *str)
{
    size_t n = str ? strlen(str) : 0;
    if (n > 0xffff)
        n = 0xffff;
    if (!out || cap < n + 5)
        return 0;
    snprintf(out, cap, "%04zx", n);
    memcpy(out + 4, str ? str : "", n);
    out[4 + n] = '\0';
    return 4 + n;
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
