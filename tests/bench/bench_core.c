/* SPDX-License-Identifier: Apache-2.0 */
/* Core benchmark: connect+handshake+auth time and `shell true` round trip,
 * adbc against the test device side by side with Debian's adb (through its
 * server's socket protocol, so no process start-up is counted for adb) in
 * the same run, alternating.
 *
 *   bench_core ADDR ADB_SERVER_PORT SERIAL [ROUNDS]
 *
 * ADDR is the test device (HOST:PORT); the adb server on ADB_SERVER_PORT
 * must be able to connect to it as SERIAL. Prints one line per figure with
 * the median and the ratio adb/adbc (above 1: adbc is faster). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "adbc/adbc.h"
#include "bench/bench_stats.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* adb server smart-socket protocol: 4 hex digits of length, then the request;
 * the server answers OKAY or FAIL + hex length + message. adb_open connects. */
static int adb_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int adb_send(int fd, const char *req)
{
    char hdr[17];
    snprintf(hdr, sizeof hdr, "%04x", (unsigned)strlen(req) & 0xffffu);
    if (write(fd, hdr, 4) != 4 || write(fd, req, strlen(req)) != (ssize_t)strlen(req))
        return -1;
    char st[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t n = read(fd, st + got, 4 - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return memcmp(st, "OKAY", 4) == 0 ? 0 : -1;
}

static char *adb_read_all(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

static int adb_shell_true(int port, const char *serial, const char *service)
{
    int fd = adb_open(port);
    if (fd < 0)
        return -1;
    char req[256];
    snprintf(req, sizeof req, "host:transport:%s", serial);
    int rc = adb_send(fd, req);
    if (rc == 0)
        rc = adb_send(fd, service);
    if (rc == 0)
        free(adb_read_all(fd));
    close(fd);
    return rc;
}

/* adb connect + wait until the device shows as "device" in host:devices. */
static int adb_connect_once(int port, const char *serial)
{
    char req[256];
    int fd = adb_open(port);
    snprintf(req, sizeof req, "host:disconnect:%s", serial);
    if (fd < 0 || adb_send(fd, req) < 0) {
        /* not connected yet: fine */
    }
    if (fd >= 0) {
        free(adb_read_all(fd));
        close(fd);
    }
    fd = adb_open(port);
    snprintf(req, sizeof req, "host:connect:%s", serial);
    if (fd < 0 || adb_send(fd, req) < 0)
        return -1;
    free(adb_read_all(fd));
    close(fd);
    for (int i = 0; i < 5000; i++) {
        fd = adb_open(port);
        if (fd < 0 || adb_send(fd, "host:devices") < 0)
            return -1;
        char *s = adb_read_all(fd);
        close(fd);
        char want[300];
        snprintf(want, sizeof want, "%s\tdevice", serial);
        int ok = strstr(s, want) != NULL;
        free(s);
        if (ok)
            return 0;
        usleep(200);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s ADDR ADB_SERVER_PORT SERIAL [ROUNDS]\n", argv[0]);
        return 2;
    }
    const char *addr = argv[1];
    int port = atoi(argv[2]);
    const char *serial = argv[3];
    int rounds = argc > 4 ? atoi(argv[4]) : 30;
    if (rounds < 1 || rounds > 100000)
        rounds = 30;
    adbc_keyring *keys;
    if (adbc_keyring_load_default(&keys, 0) < 0) {
        fprintf(stderr, "keys: %s\n", adbc_last_error());
        return 1;
    }
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = keys;

    double *ca = calloc((size_t)rounds, sizeof(double)), *cb = calloc((size_t)rounds, sizeof(double));
    double *sa = calloc((size_t)rounds * 5, sizeof(double)), *sb = calloc((size_t)rounds * 5, sizeof(double));
    adbc_conn *c = NULL;
    for (int i = 0; i < rounds; i++) {
        double t0 = now_ms();
        if (adbc_connect(&c, addr, &o) < 0) {
            fprintf(stderr, "adbc connect: %s\n", adbc_last_error());
            return 1;
        }
        ca[i] = now_ms() - t0;
        if (i < rounds - 1) {
            adbc_conn_close(c);
            c = NULL;
        }
        t0 = now_ms();
        if (adb_connect_once(port, serial) < 0) {
            fprintf(stderr, "adb connect to %s through server port %d failed\n", serial, port);
            return 1;
        }
        cb[i] = now_ms() - t0;
    }
    /* adb's client asks for the shell protocol only from devices that
     * advertise it (a legacy adbd does not). */
    const char *adb_service =
        adbc_conn_has_feature(c, "shell_v2") ? "shell,v2,raw:true" : "shell:true";
    int n = rounds * 5;
    for (int i = 0; i < n; i++) {
        adbc_run_result r;
        double t0 = now_ms();
        if (adbc_run(&r, c, ADBC_SHELL_AUTO, "true", NULL, 0, 0, 10000) < 0) {
            fprintf(stderr, "adbc shell true: %s\n", adbc_last_error());
            return 1;
        }
        sa[i] = now_ms() - t0;
        adbc_run_result_clear(&r);
        t0 = now_ms();
        if (adb_shell_true(port, serial, adb_service) < 0) {
            fprintf(stderr, "adb shell true failed\n");
            return 1;
        }
        sb[i] = now_ms() - t0;
    }
    double mca = median(ca, rounds), mcb = median(cb, rounds);
    double msa = median(sa, n), msb = median(sb, n);
    printf("connect+handshake+auth  adbc %8.3f ms   adb %8.3f ms   adb/adbc %5.2fx   (median of %d)\n",
           mca, mcb, mcb / mca, rounds);
    printf("device protocol 0x%08x, max payload %u, %s\n", adbc_conn_version(c),
           adbc_conn_max_payload(c), adbc_conn_delayed_ack(c) ? "delayed_ack" : "no delayed_ack");
    printf("shell true round trip   adbc %8.3f ms   adb %8.3f ms   adb/adbc %5.2fx   (median of %d)\n",
           msa, msb, msb / msa, n);
    adbc_conn_close(c);
    adbc_keyring_free(keys);
    free(ca);
    free(cb);
    free(sa);
    free(sb);
    return 0;
}
