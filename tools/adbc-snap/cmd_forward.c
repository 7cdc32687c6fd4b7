/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap forward / reverse. When adb's server answers at adb's address
 * (adbc-serve --adb-server, `adbc-snap start-server`) and holds the device,
 * it holds the forward, as adb's command has it; else, through a running
 * session (adbc-snap -s DEV session start), the session's server holds it.
 * Either way the forward outlives the command, as adb's server holds
 * forwards (--list, --remove, --remove-all, --no-rebind as adb's; --list
 * shows the sessions' and the server's: one list). Without either, or with -v or --half-close,
 * forwards live as long as the command runs (like ssh -L or kubectl
 * port-forward): several LOCAL REMOTE pairs in one process, a line per
 * connection with -v, until interrupted or the device goes away (every
 * local connection is then closed and the command exits with a message). */
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
    {"forward", cmd_forward,
     "forward [-v] [--half-close] [--no-rebind] LOCAL REMOTE [LOCAL REMOTE ...] | --list | "
     "--remove LOCAL | --remove-all",
     "relay local sockets to device sockets (held by a running session, else until "
     "interrupted); list or remove held forwards"},
    {"reverse", cmd_reverse,
     "reverse [-v] [--no-rebind] REMOTE LOCAL [REMOTE LOCAL ...] | --list | --remove REMOTE | "
     "--remove-all",
     "let the device reach host sockets (held by a running session, else until interrupted); "
     "list or remove the device's rules"},
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

/* ---- forwards a session holds ----
 *
 * Through a running session (adbc-snap -s DEV session start) a forward is
 * held by the session's server and outlives the command, as adb's server
 * holds its forwards; --list, --remove and --remove-all ask the sessions.
 * The requests are adb's server services, answered as adb's server does
 * (tools/adbc-serve/held.c). */

/* Send a "host:" request to the session behind c; *reply gets what follows
 * OKAY (malloc'd, NUL-terminated). 0; 1 with the server's FAIL message in
 * *reply; -1 when the session did not answer (message printed). */
static int held_ask(char **reply, snap_ctx *ctx, adbc_conn *c, const char *req)
{
    *reply = NULL;
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, req, ctx->timeout_ms);
    if (rc < 0) {
        snap_fail("forward: the session refused the request", rc);
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            adbc_stream_close(st);
            snap_error(SNAP_EXIT_FAIL, "forward", "out of memory");
            return -1;
        }
        ssize_t n = adbc_stream_read(st, buf + len, cap - len - 1, ctx->timeout_ms);
        if (n == 0)
            break;
        if (n < 0) {
            free(buf);
            adbc_stream_close(st);
            snap_fail("forward: reading the session's answer", (int)n);
            return -1;
        }
        len += (size_t)n;
        if (len + 1 == cap) {
            if (cap >= (1u << 20)) {
                free(buf);
                adbc_stream_close(st);
                snap_error(SNAP_EXIT_FAIL, "forward", "the session's answer is over "
                                  "1 MiB");
                return -1;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    adbc_stream_close(st);
    buf[len] = '\0';
    int failed = snap_hp_reply(buf, len);
    if (failed < 0) {
        free(buf);
        snap_error(SNAP_EXIT_FAIL, "forward", "the session answered what is not adb's "
                          "server protocol (an older adbc-serve? restart the session)");
        return -1;
    }
    *reply = buf;
    return failed;
}

/* The request for the adb server: with the device named by -t, -s or
 * ANDROID_SERIAL, "host-serial:NAME:CMD", else "host:CMD". */
static void server_req(char *req, size_t cap, const snap_ctx *ctx, const char *cmd)
{
    snap_globals g = {.serial = ctx->serial, .target = ctx->target};
    const char *named = snap_session_name(&g);
    if (named)
        snprintf(req, cap, "host-serial:%s:%s", named, cmd);
    else
        snprintf(req, cap, "host:%s", cmd);
}

/* The sessions a request goes to: the named device's, or with none named
 * every running session (as adb's server answers for all its devices). */
static int held_each(snap_ctx *ctx, const char *req, int (*each)(void *u, const char *reply,
                     int failed), void *u)
{
    char names[16][256];
    int n;
    snap_globals g = {.serial = ctx->serial, .target = ctx->target};
    const char *named = snap_session_name(&g);
    if (ctx->no_session)
        n = 0;
    else if (named) {
        snprintf(names[0], sizeof names[0], "%s", named);
        n = 1;
    } else {
        n = snap_session_devices(names, 16);
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        snap_ctx one = *ctx;
        one.serial = names[i];
        one.target = NULL;
        one.conn = NULL;
        adbc_conn *c;
        if (snap_session_connect(&one, &c) != 0) {
            ctx->session_keys = one.session_keys;
            continue; /* no session for it: it holds nothing */
        }
        ctx->session_keys = one.session_keys;
        char *reply;
        int r = held_ask(&reply, &one, c, req);
        adbc_conn_close(c);
        if (r < 0)
            return SNAP_EXIT_FAIL;
        r = each(u, reply, r);
        free(reply);
        if (r != 0)
            rc = r;
        if (r == 0 && strncmp(req, "host:killforward:", 17) == 0)
            return 0; /* removed where it was */
    }
    /* And adb's server, when one answers at adb's address: the forwards it
     * holds (made by adbc-snap, by adb or any client of it) are the same
     * list `adb forward --list` shows. It lists every device's; a request
     * about one device names it. */
    if (ctx->no_session)
        return rc;
    char sreq[600];
    if (strcmp(req, "host:list-forward") == 0)
        snprintf(sreq, sizeof sreq, "%s", req);
    else
        server_req(sreq, sizeof sreq, ctx, req + 5);
    char *reply;
    int r = snap_srv_query(sreq, &reply, ctx->timeout_ms);
    if (r < 0)
        return rc;
    /* A server that holds no device has no forwards to list */
    if (!(r == 1 && strcmp(req, "host:list-forward") == 0)) {
        r = each(u, reply, r);
        if (r != 0 && strncmp(req, "host:killforward:", 17) != 0)
            rc = r;
    }
    free(reply);
    return rc;
}

static int list_one(void *u, const char *reply, int failed)
{
    (void)u;
    if (failed)
        return snap_error(SNAP_EXIT_FAIL, "forward --list", "%s", reply);
    fputs(reply, stdout);
    return 0;
}

static int remove_one(void *u, const char *reply, int failed)
{
    (void)reply;
    int *found = u;
    if (!failed)
        *found = 1;
    return failed ? 1 : 0;
}

static int held_admin(snap_ctx *ctx, const char *op, const char *local)
{
    if (strcmp(op, "--list") == 0) {
        int rc = held_each(ctx, "host:list-forward", list_one, NULL);
        if (rc == 0)
            putchar('\n'); /* adb prints the list and a newline */
        return rc;
    }
    if (strcmp(op, "--remove-all") == 0) {
        int found = 0;
        return held_each(ctx, "host:killforward-all", remove_one, &found) ? SNAP_EXIT_FAIL : 0;
    }
    if (strchr(local, ';') || strlen(local) > 300)
        return snap_error(SNAP_EXIT_USAGE, "forward --remove", "not a local address: %s",
                          local);
    char req[400];
    snprintf(req, sizeof req, "host:killforward:%s", local);
    int found = 0;
    held_each(ctx, req, remove_one, &found);
    if (!found)
        return snap_error(SNAP_EXIT_FAIL, "forward --remove",
                          "listener '%s' not found (forwards are held by sessions: `adbc-snap "
                          "forward --list` lists them)", local);
    return 0;
}

/* Hold LOCAL REMOTE in the session behind c; prints the port of a new TCP
 * listener, as adb does. */
static int held_add(snap_ctx *ctx, adbc_conn *c, const char *local, const char *remote,
                    int norebind)
{
    if (strchr(local, ';') || strchr(remote, ';') || strlen(local) > 300 ||
        strlen(remote) > 300)
        return snap_error(SNAP_EXIT_USAGE, "forward", "';' and addresses over 300 bytes are "
                          "not taken: %s %s", local, remote);
    char req[700], *reply;
    snprintf(req, sizeof req, "host:forward:%s%s;%s", norebind ? "norebind:" : "", local,
             remote);
    int r = held_ask(&reply, ctx, c, req);
    if (r < 0)
        return SNAP_EXIT_FAIL;
    int rc = 0;
    if (r > 0)
        rc = snap_error(SNAP_EXIT_FAIL, "forward", "%s", reply);
    else if (*reply)
        printf("%s\n", reply);
    free(reply);
    return rc;
}

/* Have adb's server hold the pairs, as adb does, when one answers at
 * adb's address and holds the device: 0, or an exit status after the
 * server refused; -1 when there is no such server (nothing printed). */
static int server_add(snap_ctx *ctx, char **pairs, int npairs, int norebind)
{
    for (int k = 0; k < npairs; k++) {
        const char *local = pairs[2 * k], *remote = pairs[2 * k + 1];
        if (strchr(local, ';') || strchr(remote, ';') || strlen(local) > 300 ||
            strlen(remote) > 300)
            return snap_error(SNAP_EXIT_USAGE, "forward", "';' and addresses over 300 bytes "
                              "are not taken: %s %s", local, remote);
        char cmd[700], req[1000], *reply;
        snprintf(cmd, sizeof cmd, "forward:%s%s;%s", norebind ? "norebind:" : "", local, remote);
        server_req(req, sizeof req, ctx, cmd);
        int r = snap_srv_query(req, &reply, ctx->timeout_ms);
        if (r < 0)
            return -1;
        /* A server that does not hold the device: a session's, or this
         * process's own relay, will do. */
        if (r == 1 && k == 0 &&
            ((strstr(reply, "device '") && strstr(reply, "' not found")) ||
             strncmp(reply, "no devices", 10) == 0)) {
            free(reply);
            return -1;
        }
        int rc = 0;
        if (r == 1)
            rc = snap_error(SNAP_EXIT_FAIL, "forward", "%s", reply);
        else if (*reply)
            printf("%s\n", reply); /* as adb: a new TCP listener's port */
        free(reply);
        if (rc)
            return rc;
    }
    fflush(stdout);
    return 0;
}

static int cmd_forward(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *self = &snap_cmds_forward[0];
    if (argc >= 2 && (strcmp(argv[1], "--list") == 0 || strcmp(argv[1], "--remove-all") == 0)) {
        if (argc != 2)
            return snap_usage(self, "nothing may follow this option");
        return held_admin(ctx, argv[1], NULL);
    }
    if (argc >= 2 && strcmp(argv[1], "--remove") == 0) {
        if (argc != 3)
            return snap_usage(self, "--remove takes one LOCAL");
        return held_admin(ctx, argv[1], argv[2]);
    }
    adbc_forward_opts o;
    adbc_forward_opts_init(&o);
    int verbose = 0, norebind = 0, i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--half-close") == 0)
            o.half_close = 1;
        else if (strcmp(argv[i], "--no-rebind") == 0)
            norebind = 1;
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
    /* adb's server holds forwards when one runs (adbc-serve --adb-server,
     * `adbc-snap start-server`), as adb's own command has it do: the one
     * list that `adb forward --list` and `forward --list` show. */
    if (!verbose && !o.half_close && !ctx->no_session) {
        int r = server_add(ctx, argv + i, npairs, norebind);
        if (r >= 0)
            return r;
    }
    adbc_conn *c;
    relay_conn(ctx);
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    /* Through a session, and with nothing only this process could do (-v
     * prints its connections, --half-close is the relay's): held. */
    if (ctx->via_session && !verbose && !o.half_close) {
        for (int k = 0; k < npairs; k++) {
            int rc = held_add(ctx, c, argv[i + 2 * k], argv[i + 2 * k + 1], norebind);
            if (rc)
                return rc;
        }
        return 0;
    }
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
    /* Through a running session (and without -v, which only this process
     * could print): the session's server makes the rules and relays their
     * connections, so they outlive this command as adb's do. */
    adbc_conn *held;
    if (!verbose && snap_session_connect(ctx, &held) == 0) {
        ctx->conn = held; /* main closes it */
        ctx->via_session = 1;
        for (int k = 0; k < npairs; k++) {
            char req[700], port[64];
            const char *remote = argv[i + 2 * k], *local = argv[i + 2 * k + 1];
            if (strchr(remote, ';') || strlen(remote) > 300 || strlen(local) > 300)
                return snap_error(SNAP_EXIT_USAGE, "reverse", "not a socket spec: %s", remote);
            snprintf(req, sizeof req, "forward:%s%s;%s", norebind ? "norebind:" : "", remote,
                     local);
            if (adbc_reverse_request(port, sizeof port, held, req) < 0)
                return snap_fail("reverse", -1);
            if (*port)
                printf("%s\n", port); /* as adb: a new TCP listener's port */
        }
        return 0;
    }
    adbc_reverse *r;
    if (adbc_reverse_new(&r, &o) < 0)
        return snap_fail("reverse", -1);
    ctx->reverse = r;
    /* The streams the device opens for these rules come to the connection
     * that made them: this process's own, never a session's (whose server
     * would refuse them). */
    ctx->no_session = 1;
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
