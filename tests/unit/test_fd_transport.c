/* SPDX-License-Identifier: Apache-2.0 */
/* The "fd" transport's reads, on the descriptors it meets: a TCP
 * connection it made (blocking once connected, so a read with no deadline
 * waits in recv() itself), a socketpair end, and a socket the caller made
 * non-blocking (where that read falls back to poll()). On each: data that
 * comes later is delivered, shutdown() from another thread releases a read
 * that waits with no deadline, a peer that hangs up is reported as such,
 * and a read with a deadline still times out. */
#include "t.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "adbc/error.h"
#include "adbc/transport.h"
#include "core/internal.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A connected pair: *t is the transport under test, *peer the raw other
 * end. kind 0: adbc_transport_tcp to a loopback listener; 1: a socketpair;
 * 2: a socketpair whose transport end is O_NONBLOCK. */
static int make(int kind, adbc_transport **t, int *peer)
{
    if (kind == 0) {
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&a, &al))
            return -1;
        char addr[64];
        snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(a.sin_port));
        int rc = adbc_transport_tcp(t, addr, 5000);
        *peer = rc == 0 ? accept(l, NULL, NULL) : -1;
        close(l);
        return rc == 0 && *peer >= 0 ? 0 : -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return -1;
    if (kind == 2)
        fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    *peer = sv[1];
    return adbc_transport_fd(t, sv[0], 1);
}

typedef struct later {
    adbc_transport *t;
    int peer;
    int what; /* 0: write "late" to the peer; 1: shut the transport down; 2: close the peer */
} later;

static void *act_later(void *arg)
{
    later *l = arg;
    sleep_ms(150);
    if (l->what == 0) {
        ssize_t w = write(l->peer, "late", 4);
        (void)w;
    } else if (l->what == 1) {
        l->t->ops->shutdown(l->t);
    } else {
        close(l->peer);
    }
    return NULL;
}

static void one_kind(int kind)
{
    static const char *names[] = {"tcp", "socketpair", "non-blocking socketpair"};
    fprintf(stderr, "  descriptor: %s\n", names[kind]);
    char buf[16];
    pthread_t th;

    /* Data that comes while the read waits with no deadline. */
    adbc_transport *t;
    int peer;
    CHECK_EQ_INT(make(kind, &t, &peer), 0);
    later l = {t, peer, 0};
    pthread_create(&th, NULL, act_later, &l);
    int n = t->ops->read(t, buf, sizeof buf, -1);
    pthread_join(th, NULL);
    CHECK_EQ_INT(n, 4);
    CHECK_MEM(buf, "late", 4);

    /* A deadline still holds. */
    int64_t t0 = core_now_ms();
    CHECK_EQ_INT(t->ops->read(t, buf, sizeof buf, 100), ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 >= 90);

    /* shutdown() from another thread releases a read with no deadline,
     * and every later read fails at once. */
    l.what = 1;
    pthread_create(&th, NULL, act_later, &l);
    t0 = core_now_ms();
    CHECK_EQ_INT(t->ops->read(t, buf, sizeof buf, -1), ADBC_ECLOSED);
    pthread_join(th, NULL);
    CHECK(core_now_ms() - t0 < 30000); /* bounded, however busy the machine */
    CHECK(strstr(adbc_last_error(), "shut down") != NULL);
    CHECK_EQ_INT(t->ops->read(t, buf, sizeof buf, -1), ADBC_ECLOSED);
    adbc_transport_free(t);
    close(peer);

    /* The peer hangs up while the read waits. */
    CHECK_EQ_INT(make(kind, &t, &peer), 0);
    l = (later){t, peer, 2};
    pthread_create(&th, NULL, act_later, &l);
    CHECK_EQ_INT(t->ops->read(t, buf, sizeof buf, -1), ADBC_ECLOSED);
    pthread_join(th, NULL);
    CHECK(strstr(adbc_last_error(), "closed the connection") != NULL);
    adbc_transport_free(t);
}

TEST(tcp)
{
    one_kind(0);
}

TEST(socketpair_blocking)
{
    one_kind(1);
}

TEST(socketpair_non_blocking)
{
    one_kind(2);
}

/* A transport made by adbc_transport_tcp writes without blocking even
 * though its reads may block: a peer that reads nothing makes the write
 * time out instead of hanging. */
TEST(tcp_write_to_a_stalled_peer_times_out)
{
    adbc_transport *t;
    int peer;
    CHECK_EQ_INT(make(0, &t, &peer), 0);
    static uint8_t chunk[1 << 20];
    int64_t t0 = core_now_ms();
    int rc = 0;
    for (int i = 0; i < 256 && rc == 0; i++)
        rc = t->ops->write(t, chunk, sizeof chunk, 200);
    CHECK_EQ_INT(rc, ADBC_ETIMEDOUT);
    CHECK(core_now_ms() - t0 < 30000);
    adbc_transport_free(t);
    close(peer);
}

int main(void)
{
    RUN(tcp);
    RUN(socketpair_blocking);
    RUN(socketpair_non_blocking);
    RUN(tcp_write_to_a_stalled_peer_times_out);
    return T_DONE();
}
