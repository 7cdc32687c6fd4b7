/* SPDX-License-Identifier: Apache-2.0 */
/* adbc_forward_run, the own-thread mode, against the test device: a
 * forward served from a thread of the test's own relays a connection to an
 * echo server (reached as tcp:PORT on the device) and back; a timeout
 * returns 0; adbc_forward_stop ends it from another thread; jdwp: and
 * vsock: destinations go to the device as given and its refusal (adbd
 * closes the stream: no such JDWP process, nothing listening on the vsock
 * port) comes back as a refused connection with the destination named;
 * the device going away ends adbc_forward_run with the connection's error. */
#include "t.h"
#include "test_act_td.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "adbc/forward.h"

typedef struct echo {
    int lfd, port;
    pthread_t th;
} echo;

static void *echo_main(void *arg)
{
    echo *e = arg;
    for (;;) {
        int fd = accept(e->lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            if (write(fd, buf, (size_t)n) != n)
                break;
        close(fd);
    }
}

static int echo_start(echo *e)
{
    e->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (e->lfd < 0 || bind(e->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(e->lfd, 8) ||
        getsockname(e->lfd, (struct sockaddr *)&a, &l) != 0)
        return -1;
    e->port = ntohs(a.sin_port);
    return pthread_create(&e->th, NULL, echo_main, e);
}

static void echo_stop(echo *e)
{
    shutdown(e->lfd, SHUT_RDWR);
    close(e->lfd);
    pthread_join(e->th, NULL);
}

typedef struct runner {
    adbc_forward *f;
    int timeout_ms;
    _Atomic int done;
    int rc;
    char msg[256];
    pthread_t th;
} runner;

static void *run_main(void *arg)
{
    runner *r = arg;
    r->rc = adbc_forward_run(r->f, r->timeout_ms);
    snprintf(r->msg, sizeof r->msg, "%s", r->rc < 0 ? adbc_last_error() : "");
    r->done = 1;
    return NULL;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Events from relay threads. */
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static int ev_refused;
static char ev_msg[256], ev_dest[64];

static void on_event(void *user, const adbc_forward_event *ev)
{
    (void)user;
    pthread_mutex_lock(&ev_mu);
    if (ev->kind == ADBC_FWD_REFUSED) {
        ev_refused++;
        snprintf(ev_msg, sizeof ev_msg, "%s", ev->message);
        snprintf(ev_dest, sizeof ev_dest, "%s", ev->destination);
    }
    pthread_mutex_unlock(&ev_mu);
}

/* A client connects to a forward to `remote`: the device refuses the
 * stream, the client sees the connection closed, and the event names the
 * destination and the refusal. */
static void refused_destination(td *t, const char *remote)
{
    adbc_forward_opts o;
    adbc_forward_opts_init(&o);
    o.on_event = on_event;
    adbc_forward *f;
    CHECK_EQ_INT(adbc_forward_new(&f, t->conn, "tcp:0", remote, &o), 0);
    runner r = {.f = f, .timeout_ms = -1};
    CHECK_EQ_INT(pthread_create(&r.th, NULL, run_main, &r), 0);
    pthread_mutex_lock(&ev_mu);
    ev_refused = 0;
    pthread_mutex_unlock(&ev_mu);
    int fd = dial(adbc_forward_port(f));
    CHECK(fd >= 0);
    char b[16];
    CHECK_EQ_INT(read(fd, b, sizeof b), 0); /* closed, nothing relayed */
    close(fd);
    int refused = 0;
    for (int i = 0; i < 500 && !refused; i++) {
        pthread_mutex_lock(&ev_mu);
        refused = ev_refused;
        pthread_mutex_unlock(&ev_mu);
        if (!refused)
            usleep(10000);
    }
    CHECK_EQ_INT(refused, 1);
    pthread_mutex_lock(&ev_mu);
    CHECK(strcmp(ev_dest, remote) == 0);
    CHECK(strstr(ev_msg, "refused") != NULL);
    CHECK(strstr(ev_msg, remote) != NULL);
    pthread_mutex_unlock(&ev_mu);
    adbc_forward_stop(f);
    pthread_join(r.th, NULL);
    CHECK_EQ_INT(r.rc, 0);
    adbc_forward_free(f);
}

TEST(forward_run_relays_stops_and_reports)
{
    td t;
    if (td_start(&t, NULL) != 0) {
        CHECK(0);
        return;
    }
    echo e;
    CHECK_EQ_INT(echo_start(&e), 0);
    char remote[32];
    snprintf(remote, sizeof remote, "tcp:%d", e.port);

    /* a timeout with nothing to do returns 0 */
    adbc_forward *f;
    CHECK_EQ_INT(adbc_forward_new(&f, t.conn, "tcp:0", remote, NULL), 0);
    CHECK_EQ_INT(adbc_forward_run(f, 100), 0);

    /* served from a thread: a connection echoes through the device */
    runner r = {.f = f, .timeout_ms = -1};
    CHECK_EQ_INT(pthread_create(&r.th, NULL, run_main, &r), 0);
    int fd = dial(adbc_forward_port(f));
    CHECK(fd >= 0);
    const char msg[] = "through adbc_forward_run";
    CHECK_EQ_INT(write(fd, msg, sizeof msg), (ssize_t)sizeof msg);
    char got[64];
    size_t n = 0;
    while (n < sizeof msg) {
        ssize_t k = read(fd, got + n, sizeof got - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    CHECK_EQ_INT(n, sizeof msg);
    CHECK(memcmp(got, msg, sizeof msg) == 0);
    close(fd);
    CHECK_EQ_INT(r.done, 0);
    adbc_forward_stop(f);
    pthread_join(r.th, NULL);
    CHECK_EQ_INT(r.rc, 0);
    adbc_forward_free(f);

    /* the device's own refusals, passed through as given */
    refused_destination(&t, "jdwp:1");
    refused_destination(&t, "vsock:1:5000");

    /* the device goes away: adbc_forward_run returns the connection's error */
    CHECK_EQ_INT(adbc_forward_new(&f, t.conn, "tcp:0", remote, NULL), 0);
    runner r2 = {.f = f, .timeout_ms = 20000};
    CHECK_EQ_INT(pthread_create(&r2.th, NULL, run_main, &r2), 0);
    kill(t.pid, SIGKILL);
    waitpid(t.pid, NULL, 0);
    t.pid = -1;
    pthread_join(r2.th, NULL);
    CHECK(r2.rc < 0);
    CHECK(strstr(r2.msg, "the device connection ended") != NULL);
    adbc_forward_free(f);
    echo_stop(&e);
    td_stop(&t);
}

int main(void)
{
    RUN(forward_run_relays_stops_and_reports);
    return T_DONE();
}
