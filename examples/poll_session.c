/* SPDX-License-Identifier: Apache-2.0 */
/* The protocol engine driven by the caller's own poll() loop: no adbc
 * thread, no blocking call. The session is a state machine over bytes; this
 * program owns the socket, feeds it what arrives and writes what it queues.
 * Usage: poll_session HOST:PORT COMMAND   (runs COMMAND over exec:) */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <adbc/adbc.h>

typedef struct app {
    adbc_session *s;
    adbc_keyring *keys;
    const char *command;
    uint32_t id;
    int done, status;
} app;

static int on_sign(void *user, unsigned index, const uint8_t *token, size_t len, uint8_t *sig,
                   size_t *sig_len)
{
    app *a = user;
    if (index >= adbc_keyring_count(a->keys))
        return ADBC_ENOTFOUND;
    return adbc_key_sign_token(sig, sig_len, adbc_keyring_get(a->keys, index), token, len);
}

static void on_online(void *user)
{
    app *a = user;
    char svc[4096];
    snprintf(svc, sizeof svc, "exec:%s", a->command);
    if (adbc_session_open(&a->id, a->s, svc) < 0) {
        a->done = 1;
        a->status = 1;
    }
}

static void on_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    app *a = user;
    fwrite(data, 1, len, stdout);
    adbc_session_consume(a->s, id, len); /* used at once: give the credit back */
}

static void on_closed(void *user, uint32_t id, int reason)
{
    app *a = user;
    (void)id;
    a->done = 1;
    a->status = reason == 0 ? 0 : 1;
    if (reason)
        fprintf(stderr, "the device refused the stream\n");
}

static int dial(const char *addr)
{
    char host[256];
    unsigned port;
    if (adbc_parse_hostport(host, sizeof host, &port, addr, 5555) < 0)
        return -1;
    char ps[16];
    snprintf(ps, sizeof ps, "%u", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, ps, &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOST:PORT COMMAND\n", argv[0]);
        return 2;
    }
    app a = {.command = argv[2], .status = 1};
    if (adbc_keyring_load_default(&a.keys, 1) < 0) {
        fprintf(stderr, "keys: %s\n", adbc_last_error());
        return 1;
    }
    adbc_session_callbacks cb = {.size = sizeof cb, .auth_sign = on_sign, .on_online = on_online,
                                 .on_data = on_data, .on_closed = on_closed};
    int fd = dial(argv[1]);
    if (fd < 0 || adbc_session_new(&a.s, NULL, &cb, &a) < 0 || adbc_session_start(a.s) < 0) {
        fprintf(stderr, "cannot start: %s\n", fd < 0 ? "connect failed" : adbc_last_error());
        return 1;
    }
    while (!a.done) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (adbc_session_send_queued(a.s))
            p.events |= POLLOUT;
        int n = poll(&p, 1, 10000);
        if (n == 0) {
            fprintf(stderr, "no progress for 10 s\n");
            break;
        }
        if (n < 0 && errno != EINTR)
            break;
        if (p.revents & POLLOUT) {
            const uint8_t *data;
            size_t len = adbc_session_next_send(&data, a.s);
            ssize_t w = len ? send(fd, data, len, MSG_NOSIGNAL) : 0;
            if (w > 0)
                adbc_session_sent(a.s, (size_t)w);
            else if (w < 0 && errno != EAGAIN)
                break;
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            uint8_t buf[65536];
            ssize_t r = recv(fd, buf, sizeof buf, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN)) {
                fprintf(stderr, "the device closed the connection\n");
                break;
            }
            if (r > 0 && adbc_session_recv(a.s, buf, (size_t)r) < 0) {
                fprintf(stderr, "protocol: %s\n", adbc_last_error());
                break;
            }
        }
    }
    adbc_session_free(a.s);
    adbc_keyring_free(a.keys);
    close(fd);
    return a.done ? a.status : 1;
}
