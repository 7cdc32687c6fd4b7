/* SPDX-License-Identifier: Apache-2.0 */
/* Emulators, found as an adb server finds them: an adbd listening on
 * 127.0.0.1 at an odd port P from 5555 up to ADB_LOCAL_TRANSPORT_MAX_PORT
 * is "emulator-(P-1)" (P-1 being the emulator's console port). adb connects
 * to the ports one after another from a background thread; a listing has no
 * background, so here every port is tried at once with non-blocking
 * connects (loopback answers a closed port at once, so a machine with no
 * emulator pays a few milliseconds), and the ports that accept are probed
 * in parallel threads, so a port that accepts and never answers costs one
 * handshake timeout, not one per port. */
#include "devices/devices_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "transport/fd_int.h"

/* Ports tried at once (descriptors held at a time). */
#define EMU_BATCH 64
/* Bound for the TCP connect itself: loopback answers at once unless a
 * firewall drops the packets. */
#define EMU_CONNECT_MS 1000

unsigned emu_max_port(void)
{
    const char *env = getenv("ADB_LOCAL_TRANSPORT_MAX_PORT");
    if (env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (!*end && !errno && v >= 1 && v <= 65535)
            return (unsigned)v;
    }
    return ADBC_EMU_DEFAULT_MAX_PORT;
}

unsigned emu_serial_port(const char *serial)
{
    if (!serial || strncmp(serial, "emulator-", 9) != 0)
        return 0;
    const char *p = serial + 9;
    if (*p < '0' || *p > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (*end || errno || v < 1 || v > 65534)
        return 0;
    return (unsigned)v + 1;
}

/* Start a non-blocking connect to 127.0.0.1:port; -1 when refused at once. */
static int start_connect(unsigned port, int *done)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *done = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        *done = 1;
        return fd;
    }
    if (errno == EINPROGRESS)
        return fd;
    close(fd);
    return -1;
}

/* Wait for the pending connects of one batch; fds[i] stays >= 0 only for
 * the ports that accepted. */
static void finish_connects(int *fds, const int *done, size_t n)
{
    struct pollfd pf[EMU_BATCH];
    int64_t deadline = core_deadline(EMU_CONNECT_MS);
    for (;;) {
        size_t np = 0;
        size_t idx[EMU_BATCH];
        for (size_t i = 0; i < n; i++) {
            if (fds[i] >= 0 && !done[i]) {
                pf[np] = (struct pollfd){.fd = fds[i], .events = POLLOUT};
                idx[np++] = i;
            }
        }
        if (np == 0)
            return;
        int left = core_remaining(deadline);
        int r = left > 0 ? poll(pf, np, left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* timed out (or poll failed): those ports count as closed */
            for (size_t k = 0; k < np; k++) {
                close(fds[idx[k]]);
                fds[idx[k]] = -1;
            }
            return;
        }
        for (size_t k = 0; k < np; k++) {
            if (!pf[k].revents)
                continue;
            size_t i = idx[k];
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
                close(fds[i]);
                fds[i] = -1;
            } else {
                ((int *)done)[i] = 1;
            }
        }
    }
}

struct emu_probe {
    adbc_device_entry *e;
    adbc_transport *t;
    int timeout_ms;
    adbc_keyring *keys;
    pthread_t th;
    int started;
};

static void *probe_thread(void *arg)
{
    struct emu_probe *p = arg;
    devices_probe(p->e, p->t, p->timeout_ms, p->keys);
    return NULL;
}

/* Append an entry for a port that accepted; takes fd. */
static int add_entry(adbc_device_entry **list, size_t *n, size_t *cap, unsigned port, int fd)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        adbc_device_entry *l = core_realloc(*list, nc * sizeof *l);
        if (!l) {
            close(fd);
            return core_fail(ADBC_ENOMEM, "out of memory listing emulators");
        }
        *list = l;
        *cap = nc;
    }
    adbc_device_entry *e = &(*list)[*n];
    memset(e, 0, sizeof *e);
    snprintf(e->serial, sizeof e->serial, "emulator-%u", port - 1);
    devices_copy(e->transport, sizeof e->transport, "local");
    e->state = ADBC_DEV_UNKNOWN;
    (*n)++;
    return 0;
}

int emu_scan(adbc_device_entry **out, size_t *count, int probe, int timeout_ms,
                  adbc_keyring *keys)
{
    *out = NULL;
    *count = 0;
    unsigned max = emu_max_port();
    adbc_device_entry *list = NULL;
    size_t n = 0, cap = 0;
    int *fdlist = NULL; /* the open descriptor of each entry */
    size_t fdcap = 0;
    int rc = 0;
    for (unsigned base = ADBC_EMU_FIRST_PORT; base <= max && rc == 0; base += 2 * EMU_BATCH) {
        int fds[EMU_BATCH], done[EMU_BATCH];
        unsigned ports[EMU_BATCH];
        size_t nb = 0;
        for (unsigned p = base; p <= max && nb < EMU_BATCH; p += 2) {
            ports[nb] = p;
            fds[nb] = start_connect(p, &done[nb]);
            nb++;
        }
        finish_connects(fds, done, nb);
        for (size_t i = 0; i < nb; i++) {
            if (fds[i] < 0)
                continue;
            if (rc == 0 && n == fdcap) {
                size_t nc = fdcap ? fdcap * 2 : 4;
                int *f = core_realloc(fdlist, nc * sizeof *f);
                if (!f)
                    rc = core_fail(ADBC_ENOMEM, "out of memory listing emulators");
                else {
                    fdlist = f;
                    fdcap = nc;
                }
            }
            if (rc == 0)
                rc = add_entry(&list, &n, &cap, ports[i], fds[i]);
            else
                close(fds[i]);
            if (rc == 0)
                fdlist[n - 1] = fds[i];
        }
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            close(fdlist[i]);
        core_free(fdlist);
        core_free(list);
        return rc;
    }
    struct emu_probe *pr = n && probe ? core_calloc(n, sizeof *pr) : NULL;
    for (size_t i = 0; i < n; i++) {
        int one = 1;
        setsockopt(fdlist[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (!pr) {
            close(fdlist[i]);
            if (probe) {
                list[i].error = ADBC_ENOMEM;
                devices_copy(list[i].message, sizeof list[i].message,
                              "out of memory: not probed");
            }
            continue;
        }
        unsigned port = emu_serial_port(list[i].serial);
        char desc[40];
        snprintf(desc, sizeof desc, "tcp:127.0.0.1:%u", port);
        adbc_transport *t;
        int trc = transport_fd_named(&t, fdlist[i], 1, desc);
        if (trc < 0) {
            close(fdlist[i]);
            devices_note_error(&list[i], trc);
            continue;
        }
        pr[i] = (struct emu_probe){.e = &list[i], .t = t, .timeout_ms = timeout_ms, .keys = keys};
        if (pthread_create(&pr[i].th, NULL, probe_thread, &pr[i]) == 0)
            pr[i].started = 1;
        else
            probe_thread(&pr[i]); /* no thread left: probe here, in turn */
    }
    for (size_t i = 0; pr && i < n; i++)
        if (pr[i].started)
            pthread_join(pr[i].th, NULL);
    core_free(pr);
    core_free(fdlist);
    *out = list;
    *count = n;
    return 0;
}
