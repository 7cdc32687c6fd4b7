/* SPDX-License-Identifier: Apache-2.0 */
/* bench_serve: what adbc-serve adds to a device's own time, side by side
 * in one run against one test device.
 *
 * "Direct" runs the operation layer (tools/ops, what adbc-serve runs) in
 * this process on a connection it holds: that is the device's own time
 * plus adbc's. "HTTP" sends the same operation to a running adbc-serve
 * holding its own connection to the same device and reads the whole
 * answer; adbc-serve answers one request per connection (every answer says
 * "Connection: close", so its gate checks every request head), so each
 * request connects anew, as any HTTP client does then: the connect is part
 * of the figure. The difference is the server:
 * HTTP parsing, the lock, JSON building, the envelope. Rounds alternate
 * which goes first.
 *
 *   act:     a tap on a fresh ref (verified: the frame check, else a fresh
 *            dump, then the input), then the observation (resumed
 *            activity beside the dump, one round trip);
 *            HTTP: POST /v1/act {"action":"tap","ref":N,"settle_ms":0}
 *   observe: resumed activity + dump; HTTP: GET /v1/observe
 *   dump:    one snapshot, for scale
 *
 *   bench_serve DEVICE HTTP_PORT TOKEN [ROUNDS]
 */
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
#include "ops_json.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int http_fd = -1, http_port;
static double http_used; /* when the kept connection last answered */
static char resp[1 << 22];

static int http_connect(int port)
{
    http_port = port;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    http_fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(http_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return connect(http_fd, (struct sockaddr *)&sa, sizeof sa);
}

/* One request on the kept connection; the status, or -1. */
static int http(const char *method, const char *path, const char *token, const char *body)
{
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     method, path, token, body ? strlen(body) : 0, body ? body : "");
    /* adbc-serve closes a connection idle for --conn-timeout (10 s), as a
     * server may: on a phone's timings a direct pass is longer than that,
     * so a connection idle for 5 s is replaced before it is used. */
    if (http_fd < 0 || now_ms() - http_used > 5000) {
        if (http_fd >= 0)
            close(http_fd);
        if (http_connect(http_port) != 0)
            return -1;
    }
    if (send(http_fd, req, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    size_t got = 0;
    for (;;) {
        ssize_t k = read(http_fd, resp + got, sizeof resp - 1 - got);
        if (k <= 0)
            return -1;
        got += (size_t)k;
        resp[got] = '\0';
        char *end = strstr(resp, "\r\n\r\n");
        if (!end)
            continue;
        const char *cl = strcasestr(resp, "Content-Length:");
        if (!cl)
            return -1;
        size_t len = strtoul(cl + 15, NULL, 10);
        if (got >= (size_t)(end + 4 - resp) + len) {
            int status = atoi(resp + 9);
            if (got != (size_t)(end + 4 - resp) + len)
                return -1;
            http_used = now_ms();
            *end = '\0';
            if (strcasestr(resp, "\r\nConnection: close")) {
                close(http_fd);
                http_fd = -1;
            }
            return status;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_serve DEVICE HTTP_PORT TOKEN [ROUNDS]\n");
        return 2;
    }
    const char *dev = argv[1], *token = argv[3];
    int rounds = argc > 4 ? atoi(argv[4]) : 30;
    if (rounds < 3 || rounds > 10000)
        rounds = 30;
    adbc_conn *c = NULL;
    if (adbc_connect(&c, dev, NULL) < 0) {
        fprintf(stderr, "bench_serve: %s: %s\n", dev, adbc_last_error());
        return 1;
    }
    if (http_connect(atoi(argv[2])) != 0) {
        fprintf(stderr, "bench_serve: cannot reach adbc-serve on port %s\n", argv[2]);
        return 1;
    }
    double *d_act = calloc((size_t)rounds, sizeof(double)), *h_act = calloc((size_t)rounds, sizeof(double));
    double *d_obs = calloc((size_t)rounds, sizeof(double)), *h_obs = calloc((size_t)rounds, sizeof(double));
    double *d_dump = calloc((size_t)rounds, sizeof(double));
    adbc_ui_snap *last = NULL;
    char body[128];
    snprintf(body, sizeof body, "{\"action\":\"tap\",\"ref\":1,\"settle_ms\":0}");
    for (int i = 0; i < rounds; i++) {
        for (int pass = 0; pass < 2; pass++) {
            int direct = (pass == 0) == (i % 2 == 0);
            double t0;
            if (direct) {
                ops_ctx oc;
                ops_ctx_init(&oc, c, &last, ops_now_ms() + 30000);
                if (ops_snapshot(&oc) != 0)
                    goto fail_ops;
                ops_act a;
                cJSON *args = cJSON_Parse(body);
                ops_act_parse(&a, OPS_TAP, args, &oc.err);
                t0 = now_ms();
                cJSON *obs = NULL;
                if (ops_act_run(&oc, &a) != 0 || ops_observe(&oc, &obs) != 0) {
                    cJSON_Delete(args);
                    goto fail_ops;
                }
                d_act[i] = now_ms() - t0;
                cJSON_Delete(obs);
                cJSON_Delete(args);
                t0 = now_ms();
                if (ops_observe(&oc, &obs) != 0)
                    goto fail_ops;
                d_obs[i] = now_ms() - t0;
                char *p = cJSON_PrintUnformatted(obs); /* the server prints it too */
                free(p);
                cJSON_Delete(obs);
                t0 = now_ms();
                if (ops_snapshot(&oc) != 0)
                    goto fail_ops;
                d_dump[i] = now_ms() - t0;
                continue;
            fail_ops:
                fprintf(stderr, "bench_serve: direct: %s\n", oc.err.msg);
                return 1;
            }
            int st = http("GET", "/v1/snapshot", token, NULL);
            t0 = now_ms();
            int st2 = http("POST", "/v1/act", token, body);
            h_act[i] = now_ms() - t0;
            t0 = now_ms();
            int st3 = http("GET", "/v1/observe", token, NULL);
            h_obs[i] = now_ms() - t0;
            if (st != 200 || st2 != 200 || st3 != 200) {
                fprintf(stderr, "bench_serve: HTTP statuses %d %d %d: %.300s\n", st, st2, st3,
                        resp);
                return 1;
            }
        }
    }
    double da = median(d_act, rounds), ha = median(h_act, rounds);
    double dob = median(d_obs, rounds), ho = median(h_obs, rounds), dd = median(d_dump, rounds);
    printf("medians of %d rounds (ms)       direct   via adbc-serve   added\n", rounds);
    printf("act: tap a fresh ref + observe  %7.2f   %7.2f          %+6.2f  (goal < 2)\n", da, ha,
           ha - da);
    printf("observe: top + dump             %7.2f   %7.2f          %+6.2f  (goal < 1)\n", dob, ho,
           ho - dob);
    printf("dump alone (for scale)          %7.2f\n", dd);
    adbc_ui_snap_free(last);
    adbc_conn_close(c);
    close(http_fd);
    free(d_act), free(h_act), free(d_obs), free(h_obs), free(d_dump);
    return 0;
}
