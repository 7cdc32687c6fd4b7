/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-ref: the reference side of adbc's wireless-debugging tests, built on
 * Android's own BoringSSL. See tests/ref/README.md for the modes and the line
 * protocol each speaks on stdin/stdout. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ref_util.h"

void ref_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("error: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(1);
}

void ref_hex(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long ref_unhex(uint8_t *out, size_t max, const char *hex)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

int ref_listen(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        ref_die("socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        ref_die("listen: %s", strerror(errno));
    printf("port %u\n", ntohs(sa.sin_port));
    fflush(stdout);
    return fd;
}

int ref_accept(int lfd, int timeout_ms)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1)
        ref_die("no connection within %d ms", timeout_ms);
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        ref_die("accept: %s", strerror(errno));
    return fd;
}

int ref_connect(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        ref_die("connect to port %u: %s", port, strerror(errno));
    return fd;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "error: reference program watchdog expired\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(2);
}

void ref_watchdog(unsigned seconds)
{
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    ref_watchdog(120);
    if (argc >= 2 && strcmp(argv[1], "spake2") == 0)
        return ref_mode_spake2(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "tls-server") == 0)
        return ref_mode_tls_server(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "pair-server") == 0)
        return ref_mode_pair_server(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "pair-client") == 0)
        return ref_mode_pair_client(argc - 2, argv + 2);
    fprintf(stderr,
            "usage: adbc-ref spake2 | tls-server [options] | pair-server CODE GUID |\n"
            "       pair-client PORT CODE PUBKEY-LINE\n");
    return 2;
}
