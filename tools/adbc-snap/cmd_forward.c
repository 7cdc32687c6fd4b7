/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap forward / reverse: with no adb server to keep them, forwards
 * live as long as the command runs (like ssh -L or kubectl port-forward):
 * several LOCAL REMOTE pairs in one process, a line per connection with
 * -v, until interrupted or the device goes away (every local connection
 * is then closed and the command exits with a message). */
#include "snap.h"

#include "adbc/forward.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PAIRS 32

/* The connection a forward or reverse command opens carries many relayed
 * streams at once, each buffering what the device sent ahead of its local
 * reader: up to the stream window plus one packet. 256 KiB each keeps 40
 * busy connections near adb's own memory and still fills a USB or loopback
 * link. The other way, adbd would take 32 MiB per stream ahead of its local
 * reader; 1 MiB in flight keeps the link busy without filling the device's
 * memory (docs/forward.md, "Speed and memory"). */
#define RELAY_WINDOW (256u * 1024)
#define RELAY_PAYLOAD (256u * 1024)
#define RELAY_SEND_AHEAD (1024u * 1024)

static void relay_conn(snap_ctx *ctx)
{
    ctx->window = RELAY_WINDOW;
    ctx->max_payload = RELAY_PAYLOAD;
    ctx->send_ahead = RELAY_SEND_AHEAD;
}

static int cmd_forward(snap_ctx *ctx, int argc, char **argv);
static int cmd_reverse(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_forward[] = {
    {"forward", cmd_forward, "forward [-v] [--half-close] LOCAL REMOTE [LOCAL REMOTE ...]",
     "relay local sockets to device sockets until interrupted (tcp:0 picks a port)"},
    {"reverse", cmd_reverse,
     "reverse [-v] [--no-rebind] REMOTE LOCAL [REMOTE LOCAL ...] | --list | --remove REMOTE | "
     "--remove-all",
     "let the device reach host sockets until interrupted; list or remove the device's rules"},
    {NULL, NULL, NULL, NULL},
};

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

/* -v: one line per connection (from relay threads). */
static void on_event(void *user, const adbc_forward_event *ev)
{
    const char *what = user;
    pthread_mutex_lock(&out_mu);
    switch (ev->kind) {
    case ADBC_FWD_OPENED:
        fprintf(stderr, "%s #%u %s -> %s: open\n", what, ev->id, ev->peer, ev->destination);
        break;
    case ADBC_FWD_REFUSED:
        fprintf(stderr, "%s #%u %s -> %s: refused: %s\n", what, ev->id, ev->peer,
                ev->destination, ev->message);
        break;
    case ADBC_FWD_CLOSED:
        fprintf(stderr, "%s #%u %s -> %s: closed, %llu bytes to the device, %llu from it%s%s\n",
                what, ev->id, ev->peer, ev->destination,
                (unsigned long long)ev->bytes_to_device,
                (unsigned long long)ev->bytes_from_device, ev->error ? ": " : "",
                ev->error ? ev->message : "");
        break;
    }
    pthread_mutex_unlock(&out_mu);
}

/* The device is gone or a signal came: the status to exit with. */
static int ended(snap_ctx *ctx, adbc_conn *c)
{
    int sig = snap_signal_received();
    if (sig)
        return 128 + sig;
    int st = adbc_conn_status(c);
    if (st) {
        (void)ctx;
        fprintf(stderr, "adbc-snap: the device connection ended (%s): every forwarded "
                        "connection was closed\n",
                adbc_strerror(st));
        return SNAP_EXIT_FAIL;
    }
    return -1;
}

static int cmd_forward(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_forward[0];
    adbc_forward_opts o;
    adbc_forward_opts_init(&o);
    int verbose = 0, i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--half-close") == 0)
            o.half_close = 1;
        else
            return snap_usage(self, "unknown option");
    }
    int npairs = (argc - i) / 2;
    if (npairs == 0 || (argc - i) % 2 != 0)
        return snap_usage(self, "need LOCAL REMOTE pairs");
    if (npairs > MAX_PAIRS)
        return snap_usage(self, "too many pairs");
    if (verbose) {
        o.on_event = on_event;
        o.user = "forward";
    }
    adbc_conn *c;
    relay_conn(ctx);
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_forward *f[MAX_PAIRS] = {0};
    int rc = 0;
    for (int k = 0; k < npairs; k++) {
        const char *local = argv[i + 2 * k], *remote = argv[i + 2 * k + 1];
        if (adbc_forward_new(&f[k], c, local, remote, &o) < 0) {
            rc = snap_fail(local, -1);
            goto out;
        }
        /* The first line per pair is for scripts: the local address, with a
         * chosen port resolved, then the destination. */
        printf("%s %s\n", adbc_forward_local(f[k]), remote);
    }
    fflush(stdout);
    for (;;) {
        struct pollfd pf[MAX_PAIRS];
        for (int k = 0; k < npairs; k++)
            pf[k] = (struct pollfd){.fd = adbc_forward_fd(f[k]), .events = POLLIN};
        poll(pf, (nfds_t)npairs, 200);
        int r = ended(ctx, c);
        if (r >= 0) {
            rc = r;
            break;
        }
        for (int k = 0; k < npairs; k++)
            adbc_forward_dispatch(f[k]);
    }
out:
    for (int k = 0; k < npairs; k++)
        adbc_forward_free(f[k]);
    return rc;
}

static int reverse_admin(snap_ctx *ctx, const char *op, const char *arg)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    int rc;
    if (strcmp(op, "--list") == 0) {
        char *list;
        rc = adbc_reverse_list(&list, c);
        if (rc < 0)
            return snap_fail("reverse --list", rc);
        fputs(list, stdout);
        adbc_free(list);
        return 0;
    }
    char req[600];
    if (strcmp(op, "--remove") == 0)
        snprintf(req, sizeof req, "killforward:%s", arg);
    else
        snprintf(req, sizeof req, "killforward-all");
    rc = adbc_reverse_request(NULL, 0, c, req);
    return rc < 0 ? snap_fail(op + 2, rc) : 0;
}

static int cmd_reverse(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_forward[1];
    adbc_forward_opts o;
    adbc_forward_opts_init(&o);
    int verbose = 0, norebind = 0, i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--no-rebind") == 0)
            norebind = 1;
        else if (strcmp(argv[i], "--list") == 0 || strcmp(argv[i], "--remove-all") == 0) {
            if (i + 1 != argc)
                return snap_usage(self, "nothing may follow this option");
            return reverse_admin(ctx, argv[i], NULL);
        } else if (strcmp(argv[i], "--remove") == 0) {
            if (i + 2 != argc)
                return snap_usage(self, "--remove takes one REMOTE");
            return reverse_admin(ctx, argv[i], argv[i + 1]);
        } else
            return snap_usage(self, "unknown option");
    }
    int npairs = (argc - i) / 2;
    if (npairs == 0 || (argc - i) % 2 != 0)
        return snap_usage(self, "need REMOTE LOCAL pairs");
    if (verbose) {
        o.on_event = on_event;
        o.user = "reverse";
    }
    adbc_reverse *r;
    if (adbc_reverse_new(&r, &o) < 0)
        return snap_fail("reverse", -1);
    ctx->reverse = r;
    adbc_conn *c;
    int rc = 0;
    relay_conn(ctx);
    if (snap_connect(ctx, &c) < 0) {
        rc = SNAP_EXIT_FAIL;
        goto out;
    }
    if (adbc_reverse_start(r, c) < 0) {
        rc = snap_fail("reverse", -1);
        goto out;
    }
    for (int k = 0; k < npairs; k++) {
        const char *remote = argv[i + 2 * k], *local = argv[i + 2 * k + 1];
        char resolved[300];
        if (adbc_reverse_add(resolved, sizeof resolved, r, remote, local, norebind) < 0) {
            rc = snap_fail(remote, -1);
            goto out;
        }
        printf("%s %s\n", resolved, local);
    }
    fflush(stdout);
    for (;;) {
        usleep(200 * 1000);
        int e = ended(ctx, c);
        if (e >= 0) {
            rc = e;
            break;
        }
        adbc_reverse_active(r); /* reaps ended connections */
    }
    /* The device drops the rules itself when this connection ends, as
     * adbd does for a host that goes away. */
out:
    adbc_reverse_free(r);
    ctx->reverse = NULL;
    return rc;
}
