/* SPDX-License-Identifier: Apache-2.0 */
/* Device side of pairing, for test devices: a listening pairing port that
 * runs the exchange with each host that connects and hands back the host's
 * public key line once the code matched. */
#include "adbc/pair.h"

#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "tls/pair_run.h"
#include "tls/tls_int.h"

struct adbc_pair_server {
    int fd;
    unsigned port;
    char *code;
    char *guid;
};

int adbc_pair_server_transport(char **out_pubkey_line, adbc_transport *t, const char *code,
                               const char *guid, int timeout_ms)
{
    if (!out_pubkey_line || !t || !guid)
        return core_fail(ADBC_EINVAL, "adbc_pair_server_transport: NULL argument");
    *out_pubkey_line = NULL;
    char *line = NULL;
    int rc = pair_run(&line, t, ADBC_PAIR_SERVER, code, guid, timeout_ms);
    if (rc)
        return rc;
    /* What a device stores in adb_keys must be a key, not whatever was sent. */
    char fp[ADBC_TLS_FINGERPRINT_SIZE];
    rc = adbc_tls_pubkey_line_fingerprint(fp, line);
    if (rc) {
        char why[200];
        snprintf(why, sizeof why, "%s", adbc_last_error());
        core_free(line);
        return core_fail(ADBC_EPROTO, "pairing: the host's public key is not a valid adb key: %s",
                         why);
    }
    *out_pubkey_line = line;
    return 0;
}

int adbc_pair_server_new(adbc_pair_server **out, const char *addr, const char *code,
                         const char *guid)
{
    if (!out)
        return core_fail(ADBC_EINVAL, "adbc_pair_server_new: out is NULL");
    *out = NULL;
    int rc = pair_supported();
    if (!rc)
        rc = pair_check_code(code);
    if (rc)
        return rc;
    if (!guid || !*guid)
        return core_fail(ADBC_EINVAL, "adbc_pair_server_new: a GUID is required");
    char host[256], portstr[8], spec[300];
    unsigned port;
    /* Port 0 (any free port) is fine for a listener; the shared parser wants
     * a connectable port, so strip ":0" and let the default 0 apply. */
    snprintf(spec, sizeof spec, "%s", addr ? addr : "127.0.0.1");
    size_t speclen = strlen(spec);
    if (speclen > 2 && strcmp(spec + speclen - 2, ":0") == 0) {
        spec[speclen - 2] = '\0';
        if (spec[0] != '[' && strchr(spec, ':')) /* was a bare IPv6 address */
            spec[speclen - 2] = ':';
    }
    rc = adbc_parse_hostport(host, sizeof host, &port, spec, 0);
    if (rc)
        return rc;
    snprintf(portstr, sizeof portstr, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, portstr, &hints, &res);
    if (g)
        return core_fail(ADBC_ENOTFOUND, "pairing server: cannot resolve \"%s\": %s", host,
                         gai_strerror(g));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 4) != 0) {
        int e = errno;
        freeaddrinfo(res);
        if (fd >= 0)
            close(fd);
        return core_fail(e == EADDRINUSE ? ADBC_EBUSY : ADBC_EIO,
                         "pairing server: cannot listen on %s:%u: %s", host, port, strerror(e));
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    unsigned bound = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    adbc_pair_server *s = core_calloc(1, sizeof *s);
    if (s) {
        s->code = core_strdup(code);
        s->guid = core_strdup(guid);
    }
    if (!s || !s->code || !s->guid) {
        close(fd);
        if (s) {
            core_free(s->code);
            core_free(s->guid);
            core_free(s);
        }
        return core_fail(ADBC_ENOMEM, "out of memory creating the pairing server");
    }
    s->fd = fd;
    s->port = bound;
    *out = s;
    return 0;
}

unsigned adbc_pair_server_port(const adbc_pair_server *s)
{
    return s ? s->port : 0;
}

int adbc_pair_server_accept(char **out_pubkey_line, adbc_pair_server *s, int timeout_ms)
{
    if (!s || !out_pubkey_line)
        return core_fail(ADBC_EINVAL, "adbc_pair_server_accept: NULL argument");
    *out_pubkey_line = NULL;
    int64_t deadline = core_deadline(timeout_ms);
    int cfd;
    for (;;) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int r = poll(&p, 1, core_remaining(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return core_fail(ADBC_EIO, "pairing server: poll failed: %s", strerror(errno));
        if (r == 0)
            return core_fail(ADBC_ETIMEDOUT, "pairing server: no host connected within %d ms",
                             timeout_ms);
        cfd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd >= 0)
            break;
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            return core_fail(ADBC_EIO, "pairing server: accept failed: %s", strerror(errno));
    }
    adbc_transport *t;
    int rc = adbc_transport_fd(&t, cfd, 1);
    if (rc) {
        close(cfd);
        return rc;
    }
    rc = adbc_pair_server_transport(out_pubkey_line, t, s->code, s->guid,
                                    core_remaining(deadline));
    adbc_transport_free(t);
    return rc;
}

void adbc_pair_server_free(adbc_pair_server *s)
{
    if (!s)
        return;
    close(s->fd);
    core_free(s->code);
    core_free(s->guid);
    core_free(s);
}
