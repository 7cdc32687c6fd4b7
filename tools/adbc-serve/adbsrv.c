/* SPDX-License-Identifier: Apache-2.0 */
/* adb's server, spoken by adbc-serve (--adb-server): the adb command,
 * Android Studio, scrcpy, adbkit and every other client of adb's server
 * run on the devices this server holds, with no adb server. See
 * docs/adb-server.md.
 *
 * A client connects, sends requests in adb's framing (ops_hostproto.h) and
 * reads OKAY/FAIL replies. Host requests are answered here, over the pool's
 * devices; a transport switch binds the connection to one device, and the
 * next request names a device service: it is opened as a stream on the
 * device's connection and, after OKAY, the socket and the stream are
 * spliced (adbc_forward_splice, the relay every forward uses) until either
 * ends, so whatever the client and the device speak passes unchanged.
 *
 * Streams are opened on the device's connection without its lock (adb runs
 * a client's shell beside another's logcat): the connection is known from
 * the pool's on_conn_ready until its on_conn_close, which ends every relay
 * on it (adbc_conn_interrupt) and waits for them before the pool closes it.
 * Forwards are held.c's (the ones the control socket makes, one list).
 *
 * One thread accepts at a time. It answers a quick host query itself, and
 * serves any other client it accepted while a new thread takes over
 * accepting, so a client waits for no thread to start (a relay starts the
 * library's second thread only when the client's socket cannot take the
 * device's data at once). The protocol has no authentication: whoever
 * can connect can use every device, which is why the default address is
 * loopback and any other must be named. */
#include "serve.h"
#include "ops_hostproto.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "adbc/auth.h"
#include "adbc/forward.h"
#include "adbc/mdns.h"
#include "adbc/pair.h"
#include "adbc/session.h"

/* adb's ADB_SERVER_VERSION: a client whose own differs kills the server and
 * starts its own (adb_client.cpp); every adb since platform-tools 28 (and
 * Debian's 29) has 41. */
#define ADB_SERVER_VERSION 41
/* What a client may use through this server: every device service passes
 * through, so these are adb's own host features, with the two host
 * services of adb's that clients look for by feature and this server
 * answers (the tracker's protobuf forms, server-status). */
#define HOST_FEATURES                                                                         \
    "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,"     \
    "abb_exec,remount_shell,track_app,sendrecv_v2,sendrecv_v2_brotli,sendrecv_v2_lz4,"      \
    "sendrecv_v2_zstd,sendrecv_v2_dry_run_send,delayed_ack,devicetracker_proto_format,"      \
    "server_status"
#define AS_MAX 64
#define REQ_WAIT_MS 30000  /* a client sends its request at once; a silent one is dropped */
#define TRACK_MS 250       /* how often a tracker compares the list */

typedef struct asdev {
    ops_dev *d;
    adbc_conn *conn;   /* from on_conn_ready until on_conn_close; NULL between */
    int users;         /* streams being opened or relayed on conn */
    uint64_t id;       /* transport id: new for each connection, as adb's */
    int hidden;        /* disconnected by a client: not listed, not reconnected */
    char product[96], model[96], device[96];
    char features[1024];
} asdev;

static pthread_mutex_t as_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t as_cv = PTHREAD_COND_INITIALIZER; /* users dropped, a client ended */
static asdev adevs[AS_MAX];
static int nadevs;
static uint64_t next_id = 1;
static int nclients;
static int client_fds[256];  /* shut down on stop */
static int listen_fd = -1;
static char listen_path[108]; /* a localfilesystem: socket to unlink */
static int acceptors;         /* accepting threads (as_lock): 1, 2 while handing over */
static int started;
static int trace;             /* ADB_TRACE set: log every request */
static serve *srv;

/* as_lock held. */
static asdev *entry(ops_dev *d, int add)
{
    for (int i = 0; i < nadevs; i++)
        if (adevs[i].d == d)
            return &adevs[i];
    if (!add || nadevs == AS_MAX)
        return NULL;
    asdev *a = &adevs[nadevs++];
    memset(a, 0, sizeof *a);
    a->d = d;
    return a;
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void serve_adbsrv_conn_ready(void *user, ops_dev *d, adbc_conn *c)
{
    (void)user;
    const adbc_banner *b = adbc_conn_banner(c);
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 1);
    if (a) {
        a->conn = c;
        a->id = next_id++;
        copy(a->product, sizeof a->product, b ? b->product : NULL);
        copy(a->model, sizeof a->model, b ? b->model : NULL);
        copy(a->device, sizeof a->device, b ? b->device : NULL);
        size_t used = 0;
        a->features[0] = '\0';
        for (size_t i = 0; b && i < b->nfeatures; i++) {
            int k = snprintf(a->features + used, sizeof a->features - used, "%s%s",
                             used ? "," : "", b->features[i]);
            if (k < 0 || (size_t)k >= sizeof a->features - used)
                break;
            used += (size_t)k;
        }
    }
    pthread_cond_broadcast(&as_cv);
    pthread_mutex_unlock(&as_lock);
}

void serve_adbsrv_conn_close(void *user, ops_dev *d, adbc_conn *c)
{
    (void)user;
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 0);
    if (a && a->conn == c) {
        a->conn = NULL; /* no new stream on it */
        if (a->users > 0)
            adbc_conn_interrupt(c); /* every relay on it ends now */
        while (a->users > 0)
            pthread_cond_wait(&as_cv, &as_lock);
    }
    pthread_mutex_unlock(&as_lock);
}

adbc_conn *serve_adbsrv_conn_get(ops_dev *d)
{
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 1);
    adbc_conn *c = a ? a->conn : NULL;
    if (c)
        a->users++;
    pthread_mutex_unlock(&as_lock);
    return c;
}

void serve_adbsrv_conn_put(ops_dev *d)
{
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 0);
    if (a && a->users > 0)
        a->users--;
    pthread_cond_broadcast(&as_cv);
    pthread_mutex_unlock(&as_lock);
}

/* ---- the device list ---- */

/* Not USB: a TCP device, an emulator, an mDNS instance
 * ("NAME._adb-tls-connect._tcp"), each a local transport to adb. */
static int is_local(const ops_dev *d)
{
    return strchr(d->serial, ':') || strncmp(d->serial, "emulator-", 9) == 0 ||
           strstr(d->serial, "._adb");
}

/* adb's state words: a connected device is "device"; one being connected
 * again, or refused, is listed as adb lists a transport it holds that is
 * not online. */
static const char *state_of(const asdev *a)
{
    if (a->conn && a->d->state == OPS_DEV_CONNECTED)
        return "device";
    return "offline";
}

/* adb's list order (transport.cpp, list_transports): USB devices before
 * the others (emulators, TCP), each kind by serial, bytewise. */
static int list_before(const ops_dev *x, const ops_dev *y)
{
    if (is_local(x) != is_local(y))
        return !is_local(x);
    return strcmp(x->serial, y->serial) < 0;
}

/* The devices listed (as_lock held), in adb's order: every device of the
 * pool that is not hidden and has been connected once, or is named. */
static int listed(ops_dev **out, asdev **ents, int max)
{
    ops_dev *all[AS_MAX];
    int n = ops_pool_list(&srv->pool, all, AS_MAX), k = 0;
    for (int i = 0; i < n && k < max; i++) {
        asdev *a = entry(all[i], 1);
        if (!a || a->hidden || (!a->conn && a->id == 0))
            continue;
        int j = k++; /* insertion: a few devices at most */
        for (; j > 0 && list_before(all[i], out[j - 1]); j--) {
            out[j] = out[j - 1];
            ents[j] = ents[j - 1];
        }
        out[j] = all[i];
        ents[j] = a;
    }
    return k;
}

/* How a list is answered: host:devices, devices-l, and the tracker's
 * protobuf forms (adb_host.proto's Devices). */
typedef enum list_fmt { FMT_SHORT, FMT_LONG, FMT_PROTO, FMT_PROTO_TEXT } list_fmt;

/* The list in fmt; malloc'd, *len bytes (NUL-terminated but for
 * FMT_PROTO, which is binary). */
static char *device_list(list_fmt fmt, size_t *len)
{
    size_t cap = 64 * 1024, used = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    pthread_mutex_lock(&as_lock);
    ops_dev *ds[AS_MAX];
    asdev *es[AS_MAX];
    int n = listed(ds, es, AS_MAX);
    if (fmt == FMT_SHORT || fmt == FMT_LONG) {
        for (int i = 0; i < n; i++)
            ops_hp_device_line(out, cap, &used, fmt == FMT_LONG, ds[i]->serial, state_of(es[i]),
                               NULL, es[i]->product, es[i]->model, es[i]->device, es[i]->id);
    } else {
        /* As adb fills each Device: the model's non-alphanumerics as '_'
         * (devices -l's rule), no speed (adbc does not read it). */
        ops_hp_pbdev pd[AS_MAX];
        char models[AS_MAX][96];
        for (int i = 0; i < n; i++) {
            snprintf(models[i], sizeof models[i], "%s", es[i]->model);
            for (char *c = models[i]; *c; c++)
                if (!isalnum((unsigned char)*c))
                    *c = '_';
            pd[i] = (ops_hp_pbdev){.serial = ds[i]->serial, .state = state_of(es[i]),
                                   .product = es[i]->product, .model = models[i],
                                   .device = es[i]->device,
                                   .connection_type = is_local(ds[i]) ? OPS_HP_CT_SOCKET
                                                                      : OPS_HP_CT_USB,
                                   .transport_id = es[i]->id};
        }
        int rc = fmt == FMT_PROTO ? ops_hp_pb_devices((uint8_t *)out, cap, &used, pd, (size_t)n)
                                  : ops_hp_pb_devices_text(out, cap, &used, pd, (size_t)n);
        if (rc != 0)
            used = 0; /* 64 devices of at most ~800 bytes each always fit */
    }
    pthread_mutex_unlock(&as_lock);
    *len = used;
    return out;
}

/* The one device a request selects (as_lock held), or NULL with adb's
 * error. online: it must be connected (a stream is wanted). */
static asdev *select_dev(ops_hp_sel sel, const char *serial, uint64_t id, int online,
                         char *err, size_t errlen)
{
    ops_dev *ds[AS_MAX];
    asdev *es[AS_MAX];
    int n = listed(ds, es, AS_MAX);
    asdev *found = NULL;
    int count = 0;
    for (int i = 0; i < n; i++) {
        int match = sel == OPS_HP_ANY || (sel == OPS_HP_USB && !is_local(ds[i])) ||
                    (sel == OPS_HP_LOCAL && is_local(ds[i])) ||
                    (sel == OPS_HP_SERIAL && strcmp(ds[i]->serial, serial) == 0) ||
                    (sel == OPS_HP_ID && es[i]->conn && es[i]->id == id);
        if (match) {
            found = es[i];
            count++;
        }
    }
    if (count > 1 && (sel == OPS_HP_ANY || sel == OPS_HP_USB || sel == OPS_HP_LOCAL)) {
        snprintf(err, errlen, "%s", sel == OPS_HP_USB   ? "more than one device"
                                    : sel == OPS_HP_LOCAL ? "more than one emulator"
                                                          : "more than one device/emulator");
        return NULL;
    }
    if (!found) {
        if (sel == OPS_HP_SERIAL)
            snprintf(err, errlen, "device '%s' not found", serial);
        else if (sel == OPS_HP_ID)
            snprintf(err, errlen, "no device with transport id '%llu'", (unsigned long long)id);
        else
            snprintf(err, errlen, "%s", sel == OPS_HP_USB   ? "no devices found"
                                        : sel == OPS_HP_LOCAL ? "no emulators found"
                                                              : "no devices/emulators found");
        return NULL;
    }
    if (online && !found->conn) {
        const char *why = found->d->error;
        if (strstr(why, "unauthorized"))
            snprintf(err, errlen, "device unauthorized.\n%s", why);
        else
            snprintf(err, errlen, "device offline");
        return NULL;
    }
    return found;
}

/* ---- I/O on the client's socket ---- */

int serve_adbsrv_sendv(int fd, struct iovec *iov, int n)
{
    int64_t last = ops_now_ms();
    while (n > 0 && iov->iov_len == 0) {
        iov++;
        n--;
    }
    while (n > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            while (n > 0 && (size_t)k >= iov->iov_len) {
                k -= (ssize_t)iov->iov_len;
                iov++;
                n--;
            }
            if (n > 0) {
                iov->iov_base = (char *)iov->iov_base + k;
                iov->iov_len -= (size_t)k;
            }
            last = ops_now_ms();
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (srv->stopping || ops_now_ms() - last > srv->call_ms)
            return -1;
        struct pollfd pf = {fd, POLLOUT, 0};
        poll(&pf, 1, 200);
    }
    return 0;
}

static int send_all(int fd, const void *p, size_t n)
{
    struct iovec v = {(void *)p, n};
    return serve_adbsrv_sendv(fd, &v, 1);
}

static int okay(int fd, const char *str)
{
    size_t cap = 16 + (str ? strlen(str) : 0);
    char *out = malloc(cap);
    if (!out)
        return -1;
    size_t n = ops_hp_okay(out, cap, str);
    int rc = send_all(fd, out, n);
    free(out);
    return rc;
}

static int fail(int fd, const char *msg)
{
    char out[1100];
    size_t n = ops_hp_fail(out, sizeof out, msg);
    return send_all(fd, out, n);
}

int serve_adbsrv_tracing(void)
{
    return trace;
}

int serve_adbsrv_recv(int fd, void *p, size_t n, int ms)
{
    char *b = p;
    int64_t end = ops_now_ms() + ms;
    while (n > 0) {
        if (srv->stopping || ops_now_ms() > end)
            return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, 200);
        if (r <= 0)
            continue;
        ssize_t k = recv(fd, b, n, 0);
        if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
            return -1;
        if (k > 0) {
            b += k;
            n -= (size_t)k;
        }
    }
    return 0;
}

/* Whether the client has hung up (or sent something: trackers read nothing). */
static int client_gone(int fd)
{
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 0) <= 0)
        return 0;
    char b[64];
    ssize_t k = recv(fd, b, sizeof b, MSG_DONTWAIT);
    return k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR);
}

/* ---- host requests ---- */

static void track(int fd, list_fmt fmt)
{
    char *last = NULL;
    size_t last_len = 0;
    if (okay(fd, NULL) != 0)
        return;
    for (;;) {
        size_t len;
        char *now = device_list(fmt, &len);
        if (!now)
            break;
        if (!last || len != last_len || memcmp(now, last, len) != 0) {
            size_t cap = len + 5;
            char *framed = malloc(cap);
            size_t n = framed ? ops_hp_bytes(framed, cap, now, len) : 0;
            int rc = n ? send_all(fd, framed, n) : -1;
            free(framed);
            if (rc != 0) {
                free(now);
                break;
            }
            free(last);
            last = now;
            last_len = len;
        } else {
            free(now);
        }
        for (int i = 0; i < TRACK_MS / 50; i++) {
            if (srv->stopping || client_gone(fd))
                goto out;
            usleep(50 * 1000);
        }
    }
out:
    free(last);
}

static void wait_for(int fd, const ops_hp_req *r, const char *spec)
{
    ops_hp_sel sel;
    unsigned states;
    char err[512];
    if (okay(fd, NULL) != 0)
        return;
    if (ops_hp_wait_spec(spec, &sel, &states, err, sizeof err) != 0) {
        fail(fd, err);
        return;
    }
    /* A prefix that names the device wins over the spec's transport. */
    if (r->sel == OPS_HP_SERIAL || r->sel == OPS_HP_ID)
        sel = r->sel;
    while (!srv->stopping && !client_gone(fd)) {
        pthread_mutex_lock(&as_lock);
        asdev *a = select_dev(sel, r->serial, r->id, 0, err, sizeof err);
        int ambiguous = !a && strncmp(err, "more than one", 13) == 0;
        int done = (states & OPS_HP_ST_DISCONNECT) && !a && !ambiguous;
        if (a && (states & OPS_HP_ST_ANY))
            done = 1;
        if (a && (states & OPS_HP_ST_DEVICE) && strcmp(state_of(a), "device") == 0)
            done = 1;
        pthread_mutex_unlock(&as_lock);
        if (ambiguous) {
            fail(fd, err);
            return;
        }
        if (done) {
            okay(fd, NULL);
            return;
        }
        usleep(100 * 1000);
    }
}

/* "HOST[:PORT]" with adb's default port 5555. */
static void with_port(char *out, size_t cap, const char *addr)
{
    const char *colon = strrchr(addr, ':'), *bracket = strrchr(addr, ']');
    if (colon && (!bracket || colon > bracket))
        snprintf(out, cap, "%s", addr);
    else
        snprintf(out, cap, "%s:5555", addr);
}

static void connect_dev(int fd, const char *addr)
{
    char serial[256], msg[2600];
    with_port(serial, sizeof serial, addr);
    ops_err e;
    ops_dev *d = ops_pool_find(&srv->pool, serial);
    int already = 0;
    if (d) {
        pthread_mutex_lock(&as_lock);
        asdev *a = entry(d, 1);
        already = a && a->conn && !a->hidden;
        if (a)
            a->hidden = 0;
        pthread_mutex_unlock(&as_lock);
    } else {
        d = ops_pool_dev(&srv->pool, serial, &e);
    }
    if (!*addr) {
        snprintf(msg, sizeof msg, "empty address: give HOST[:PORT]");
    } else if (already) {
        snprintf(msg, sizeof msg, "already connected to %s", serial);
    } else if (!d) {
        snprintf(msg, sizeof msg, "failed to connect to %s: %s", serial, e.msg);
    } else if (serve_adbsrv_dev_up(d, &e) == 0) {
        snprintf(msg, sizeof msg, "connected to %s", serial);
    } else {
        snprintf(msg, sizeof msg, "failed to connect to %s: %s", serial, e.msg);
    }
    /* As adb's connect service: OKAY (the service), then its answer. */
    char out[sizeof msg + 8];
    size_t n = ops_hp_string(out, sizeof out, msg);
    if (okay(fd, NULL) == 0)
        send_all(fd, out, n);
}

int serve_adbsrv_dev_up(ops_dev *d, ops_err *e)
{
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 1);
    if (a)
        a->hidden = 0;
    pthread_mutex_unlock(&as_lock);
    /* Connect now, so the answer says whether it worked: a device to
     * connect, not a gone one (on which calls fail at once). */
    if (ops_lock_within(&d->lock, srv->busy_ms) == 0) {
        if (!d->conn)
            d->state = OPS_DEV_CONNECTING;
        d->next_try = 0;
        pthread_mutex_unlock(&d->lock);
    }
    if (ops_dev_take(&srv->pool, d, srv->busy_ms, ops_now_ms() + srv->connect_ms, e) != 0)
        return -1;
    ops_dev_give(&srv->pool, d, OPS_OK);
    return 0;
}

void serve_adbsrv_dev_down(ops_dev *d, const char *why)
{
    pthread_mutex_lock(&as_lock);
    asdev *a = entry(d, 1);
    if (a)
        a->hidden = 1;
    pthread_mutex_unlock(&as_lock);
    if (ops_lock_within(&d->lock, srv->busy_ms) == 0) {
        ops_dev_drop(d);
        d->state = OPS_DEV_GONE;
        d->next_try = INT64_MAX; /* the pool's reconnector leaves it alone */
        snprintf(d->error, sizeof d->error, "%s", why);
        pthread_mutex_unlock(&d->lock);
    }
}

/* Drop d's connection and keep it down until a client connects it again. */
static void disconnect_one(ops_dev *d)
{
    serve_adbsrv_dev_down(d, "disconnected by a client of the adb server");
}

static void disconnect(int fd, const char *addr)
{
    char serial[256], msg[600];
    ops_dev *all[AS_MAX];
    int n = ops_pool_list(&srv->pool, all, AS_MAX);
    if (!*addr) {
        for (int i = 0; i < n; i++)
            if (is_local(all[i]))
                disconnect_one(all[i]);
        okay(fd, "disconnected everything");
        return;
    }
    with_port(serial, sizeof serial, addr);
    ops_dev *d = ops_pool_find(&srv->pool, addr);
    if (!d)
        d = ops_pool_find(&srv->pool, serial);
    pthread_mutex_lock(&as_lock);
    asdev *a = d ? entry(d, 0) : NULL;
    int known = a && !a->hidden;
    pthread_mutex_unlock(&as_lock);
    if (!known) {
        snprintf(msg, sizeof msg, "no such device '%s'", serial);
        fail(fd, msg);
        return;
    }
    disconnect_one(d);
    snprintf(msg, sizeof msg, "disconnected %s", addr);
    okay(fd, msg);
}

/* A forward request on the device chosen: held.c answers it, the device's
 * lock held (it reads the device's connection). */
static void forward(int fd, asdev *a, const char *cmd)
{
    char service[OPS_HP_MAX + 8];
    snprintf(service, sizeof service, "host:%s", cmd);
    ops_err e;
    size_t len = 0;
    char *reply = NULL;
    int need_dev = strncmp(cmd, "forward:", 8) == 0;
    if (need_dev) {
        if (ops_dev_take(&srv->pool, a->d, srv->busy_ms, ops_now_ms() + srv->connect_ms, &e) != 0) {
            fail(fd, e.msg);
            return;
        }
        reply = serve_held_request(srv, a->d, service, &len);
        ops_dev_give(&srv->pool, a->d, OPS_OK);
    } else {
        reply = serve_held_request(srv, a->d, service, &len);
    }
    if (!reply) {
        fail(fd, "out of memory");
        return;
    }
    send_all(fd, reply, len);
    free(reply);
}

/* ---- server status, reconnect, mDNS, pairing ---- */

/* OKAY, then data as a protocol string (binary: its byte count). */
static int okay_bytes(int fd, const void *data, size_t n)
{
    char *out = malloc(n + 16);
    if (!out)
        return -1;
    memcpy(out, "OKAY", 4);
    size_t k = ops_hp_bytes(out + 4, n + 12, data, n);
    int rc = k ? send_all(fd, out, 4 + k) : -1;
    free(out);
    return rc;
}

/* adb_host.proto's AdbServerStatus with the fields that say something
 * about this server: the USB backend (libusb, adbc's), the version
 * (adbc's), this program, the OS, ADB_TRACE (read for the request log),
 * burst mode (adbc's connections offer delayed_ack, what ADB_BURST_MODE
 * turns on in adb), mDNS (adbc's own queries: none of adb's backends, so
 * that field is left unknown) and the key file. adbc keeps no log file and
 * no known-hosts list: those are left out. */
static void server_status(int fd)
{
    ops_hp_status st;
    ops_hp_status_init(&st);
    st.usb_backend = OPS_HP_USB_LIBUSB;
    adbc_version(&st.version);
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = '\0';
    st.executable_absolute_path = exe;
    struct utsname u;
    char os[3 * sizeof u.sysname + 8] = "";
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s (%s)", u.sysname, u.release, u.machine);
    st.os = os;
    const char *t = getenv("ADB_TRACE");
    st.trace_level = t ? t : "";
    st.burst_mode = strstr(ADBC_HOST_FEATURES, "delayed_ack") != NULL && !srv->no_burst;
    st.mdns_enabled = ops_hp_mdns_enabled(); /* adbscan.c browses nothing without */
    adbc_keyring *ring = NULL;
    const adbc_key *key = NULL;
    if (adbc_keyring_load_default(&ring, 0) == 0 && adbc_keyring_count(ring) > 0)
        key = adbc_keyring_get(ring, 0);
    st.keystore_path = key ? adbc_key_path(key) : NULL;
    uint8_t out[8192];
    size_t len = 0;
    if (ops_hp_pb_status(out, sizeof out, &len, &st) != 0)
        fail(fd, "server status does not fit in 8 KiB");
    else
        okay_bytes(fd, out, len);
    adbc_keyring_free(ring);
}

/* Drop d's connection and have it connected again at once (the pool's
 * reconnector, within its 100 ms tick). -1 when the device stays busy
 * past the busy bound. */
static int kick(ops_dev *d)
{
    if (ops_lock_within(&d->lock, srv->busy_ms) != 0)
        return -1;
    if (d->conn)
        ops_dev_drop(d);
    d->state = OPS_DEV_CONNECTING;
    d->backoff_ms = 0;
    d->next_try = ops_now_ms();
    snprintf(d->error, sizeof d->error, "reconnecting: a client of the adb server asked");
    pthread_mutex_unlock(&d->lock);
    return 0;
}

/* host:reconnect: as adb, OKAY and "reconnecting SERIAL [STATE]\n", or
 * OKAY and the error (adb answers a missing device so too). Unlike adb's
 * server, which drops a TCP device it kicks (it then needs `adb
 * connect`), every device is connected again, as the command's help says. */
static void reconnect(int fd, const ops_hp_req *r, asdev *bound)
{
    char msg[700];
    pthread_mutex_lock(&as_lock);
    asdev *a = bound ? bound : select_dev(r->sel, r->serial, r->id, 0, msg, sizeof msg);
    ops_dev *d = a ? a->d : NULL;
    if (a)
        snprintf(msg, sizeof msg, "reconnecting %s [%s]\n", d->serial, state_of(a));
    pthread_mutex_unlock(&as_lock);
    if (d && kick(d) != 0)
        snprintf(msg, sizeof msg, "device '%s' is busy past %d ms (--busy-wait): not reconnected",
                 d->serial, srv->busy_ms);
    okay(fd, msg);
}

/* host:reconnect-offline: every listed device that is not online tried
 * again now, "reconnecting SERIAL" a line each (no final newline). */
static void reconnect_offline(int fd)
{
    ops_dev *ds[AS_MAX], *off[AS_MAX];
    asdev *es[AS_MAX];
    int k = 0;
    pthread_mutex_lock(&as_lock);
    int n = listed(ds, es, AS_MAX);
    for (int i = 0; i < n; i++)
        if (strcmp(state_of(es[i]), "device") != 0)
            off[k++] = ds[i];
    pthread_mutex_unlock(&as_lock);
    size_t cap = (size_t)k * 300 + 1, used = 0;
    char *out = malloc(cap);
    if (!out) {
        fail(fd, "out of memory");
        return;
    }
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        kick(off[i]);
        used += (size_t)snprintf(out + used, cap - used, "reconnecting %.256s\n", off[i]->serial);
    }
    if (used)
        out[used - 1] = '\0';
    okay(fd, out);
    free(out);
}

/* host:mdns:check. With ADB_MDNS=0 adb's server never starts its
 * discovery and says so; adbc's does not look either. */
static void mdns_check(int fd)
{
    if (!ops_hp_mdns_enabled()) {
        okay(fd, OPS_HP_MDNS_OFF_ANSWER);
        return;
    }
    char ifs[512], msg[700];
    int n = adbc_mdns_interfaces(ifs, sizeof ifs);
    okay(fd, ops_hp_mdns_check(msg, sizeof msg, ifs, n));
}

/* host:mdns:services: adb answers from the cache of its running browse;
 * adbc browses now (up to a second), and lists the services resolved.
 * With ADB_MDNS=0 nothing is browsed and the list is empty, as adb's. */
static void mdns_services(int fd)
{
    if (!ops_hp_mdns_enabled()) {
        okay(fd, "");
        return;
    }
    adbc_mdns_opts o;
    adbc_mdns_opts_init(&o);
    adbc_mdns_service *l = NULL;
    size_t n = 0, used = 0, cap = 64 * 1024;
    int rc = adbc_mdns_browse(&l, &n, &o);
    char *out = malloc(cap);
    if (!out) {
        adbc_mdns_free(l);
        fail(fd, "out of memory");
        return;
    }
    out[0] = '\0';
    if (rc < 0)
        fprintf(stderr, SERVE_NAME ": adb server: mdns:services: %s\n", adbc_last_error());
    for (size_t i = 0; rc >= 0 && i < n; i++)
        if (l[i].port && l[i].addr[0])
            ops_hp_mdns_line(out, cap, &used, l[i].instance, l[i].service, l[i].addr, l[i].port);
    adbc_mdns_free(l);
    okay(fd, out);
    free(out);
}

/* host:pair:CODE:HOST:PORT, answered as adb's server: OKAY, then the
 * result as a protocol string when paired ("Successfully paired to
 * HOST:PORT [guid=GUID]"), else FAIL and adb's message ("Failed: ...").
 * The key paired is the user key adbc connects with; adbc's own reason for
 * a failure goes to the log. */
static void pair(int fd, const char *arg)
{
    const char *colon = strchr(arg, ':');
    char code[128], msg[700];
    snprintf(code, sizeof code, "%.*s", (int)(colon - arg), arg);
    const char *host = colon + 1;
    const char *pc = strrchr(host, ':'), *br = strrchr(host, ']');
    int ok = 0;
    if (!*host || (host[0] == '[' && !br) || (pc && pc == host)) {
        snprintf(msg, sizeof msg, "Failed to parse address for pairing: no host in '%.600s'",
                 host);
    } else if (!pc || (br && pc < br)) {
        snprintf(msg, sizeof msg, "Invalid port while parsing address [%.600s]", host);
    } else {
        char *end;
        long port = strtol(pc + 1, &end, 10);
        if (!pc[1] || *end || port <= 0 || port > 65535) {
            snprintf(msg, sizeof msg, "Invalid port while parsing address [%.600s]", host);
        } else {
            char *guid = NULL;
            int rc = adbc_pair(&guid, host, code, NULL, srv->connect_ms);
            if (rc == 0) {
                snprintf(msg, sizeof msg, "Successfully paired to %.500s [guid=%.100s]", host,
                         guid ? guid : "");
                ok = 1;
            } else {
                fprintf(stderr, SERVE_NAME ": adb server: pairing with %s: %s\n", host,
                        adbc_last_error());
                snprintf(msg, sizeof msg, "%s",
                         rc == ADBC_EUNSUPPORTED ? "Failed: unable to create pairing client."
                         : rc == ADBC_EREFUSED || rc == ADBC_EIO || rc == ADBC_EINVAL ||
                                   rc == ADBC_ENOTFOUND
                             ? "Failed: Unable to start pairing client."
                             : "Failed: Wrong password or connection was dropped.");
            }
            adbc_free(guid);
        }
    }
    if (okay(fd, NULL) != 0)
        return;
    if (ok) {
        char out[sizeof msg + 8];
        size_t n = ops_hp_string(out, sizeof out, msg);
        send_all(fd, out, n);
    } else {
        fail(fd, msg);
    }
}

/* ---- device services ---- */

/* Open the service on a's connection and splice the client to it. */
static void device_service(int fd, asdev *a, const char *svc, size_t len)
{
    if (strncmp(svc, "reverse:forward:", 16) == 0) {
        /* A reverse rule: held (held.c) so the device's connections for it
         * are relayed; as a stream, OKAY then the device's own answer. The
         * device's lock is taken with no stream counted (the pool may be
         * closing its connection, waiting for those). */
        ops_err e;
        size_t n = 0;
        if (ops_dev_take(&srv->pool, a->d, srv->busy_ms, ops_now_ms() + srv->connect_ms, &e) != 0) {
            fail(fd, e.msg);
            return;
        }
        char *reply = serve_held_reverse(srv, a->d, svc, &n);
        ops_dev_give(&srv->pool, a->d, OPS_OK);
        if (!reply)
            fail(fd, "out of memory");
        else if (okay(fd, NULL) == 0)
            send_all(fd, reply, n);
        free(reply);
        return;
    }
    adbc_conn *c = serve_adbsrv_conn_get(a->d);
    if (!c) {
        fail(fd, "device offline (no transport)");
        return;
    }
    if (srv->sync_engine && len == 5 && memcmp(svc, "sync:", 5) == 0) {
        serve_adbsync(srv, fd, c);
        serve_adbsrv_conn_put(a->d);
        return;
    }
    adbc_stream *st = NULL;
    int rc = adbc_stream_open_bytes(&st, c, svc, len, srv->call_ms);
    if (rc == ADBC_EREFUSED) {
        fail(fd, "closed"); /* adb's answer when the device closes the stream at once */
    } else if (rc < 0) {
        fail(fd, adbc_last_error());
    } else if (okay(fd, NULL) != 0) {
        adbc_stream_close(st);
    } else {
        int dup_fd = dup(fd); /* the splice closes the descriptor it is given */
        if (dup_fd < 0)
            adbc_stream_close(st);
        else
            adbc_forward_splice(st, dup_fd, NULL);
    }
    serve_adbsrv_conn_put(a->d);
}

/* ---- one client ---- */

static void answer_state(int fd, const ops_hp_req *r, asdev *bound, const char *what)
{
    char err[600];
    pthread_mutex_lock(&as_lock);
    asdev *a = bound ? bound : select_dev(r->sel, r->serial, r->id, 0, err, sizeof err);
    char val[1100];
    if (a && strcmp(what, "get-state") == 0)
        copy(val, sizeof val, state_of(a));
    else if (a && strcmp(what, "get-serialno") == 0)
        copy(val, sizeof val, *a->d->serial ? a->d->serial : "unknown");
    else if (a && strcmp(what, "get-devpath") == 0)
        copy(val, sizeof val, "unknown");
    else if (a)
        serve_adbsync_features(srv, val, sizeof val, a->features);
    pthread_mutex_unlock(&as_lock);
    if (a)
        okay(fd, val);
    else
        fail(fd, err);
}

static void serve_one(int fd)
{
    asdev *bound = NULL;
    for (;;) {
        uint8_t hdr[4];
        if (serve_adbsrv_recv(fd, hdr, 4, REQ_WAIT_MS) != 0)
            return;
        long len = ops_hp_header(hdr);
        if (len < 0) {
            fail(fd, "bad request length");
            return;
        }
        char *req = malloc((size_t)len + 1);
        if (!req)
            return;
        if (serve_adbsrv_recv(fd, req, (size_t)len, REQ_WAIT_MS) != 0) {
            free(req);
            return;
        }
        req[len] = '\0';
        srv->last_client_ms = ops_now_ms();
        if (trace)
            fprintf(stderr, SERVE_NAME ": adb server: %.*s\n", (int)strnlen(req, (size_t)len),
                    req);
        ops_hp_req r;
        char err[600];
        if (ops_hp_parse(&r, req, err, sizeof err) != 0) {
            fail(fd, err);
            free(req);
            return;
        }
        if (r.kind == OPS_HP_TRANSPORT) {
            pthread_mutex_lock(&as_lock);
            asdev *a = select_dev(r.sel, r.serial, r.id, 1, err, sizeof err);
            uint64_t id = a ? a->id : 0;
            pthread_mutex_unlock(&as_lock);
            free(req);
            if (!a) {
                fail(fd, err);
                return;
            }
            uint8_t le[8];
            for (int i = 0; i < 8; i++)
                le[i] = (uint8_t)(id >> (8 * i));
            if (okay(fd, NULL) != 0 || (r.tport && send_all(fd, le, 8) != 0))
                return;
            bound = a;
            continue;
        }
        if (r.kind == OPS_HP_DEVICE) {
            if (!bound)
                fail(fd, "device offline (no transport)");
            else
                device_service(fd, bound, req, (size_t)len);
            free(req);
            return;
        }
        const char *cmd = r.cmd;
        /* After a transport switch, "host:" requests are about that device. */
        asdev *dev = r.sel == OPS_HP_ANY ? bound : NULL;
        if (strcmp(cmd, "version") == 0) {
            char v[8];
            snprintf(v, sizeof v, "%04x", ADB_SERVER_VERSION);
            okay(fd, v);
        } else if (strcmp(cmd, "kill") == 0) {
            okay(fd, NULL);
            fprintf(stderr, SERVE_NAME ": adb server killed by a client (host:kill)\n");
            kill(getpid(), SIGTERM); /* main() waits for it and stops everything */
        } else if (strcmp(cmd, "devices") == 0 || strcmp(cmd, "devices-l") == 0) {
            size_t n;
            char *list = device_list(cmd[7] == '-' ? FMT_LONG : FMT_SHORT, &n);
            if (list)
                okay(fd, list);
            free(list);
        } else if (strcmp(cmd, "track-devices") == 0) {
            track(fd, FMT_SHORT);
        } else if (strcmp(cmd, "track-devices-l") == 0) {
            track(fd, FMT_LONG);
        } else if (strcmp(cmd, "track-devices-proto-binary") == 0) {
            track(fd, FMT_PROTO);
        } else if (strcmp(cmd, "track-devices-proto-text") == 0) {
            track(fd, FMT_PROTO_TEXT);
        } else if (strcmp(cmd, "server-status") == 0) {
            server_status(fd);
        } else if (strcmp(cmd, "reconnect") == 0) {
            reconnect(fd, &r, dev);
        } else if (strcmp(cmd, "reconnect-offline") == 0) {
            reconnect_offline(fd);
        } else if (strcmp(cmd, "mdns:check") == 0) {
            mdns_check(fd);
        } else if (strcmp(cmd, "mdns:services") == 0) {
            mdns_services(fd);
        } else if (strncmp(cmd, "pair:", 5) == 0 && strchr(cmd + 5, ':')) {
            pair(fd, cmd + 5);
        } else if (strcmp(cmd, "host-features") == 0) {
            okay(fd, HOST_FEATURES);
        } else if (strcmp(cmd, "features") == 0 || strcmp(cmd, "get-state") == 0 ||
                   strcmp(cmd, "get-serialno") == 0 || strcmp(cmd, "get-devpath") == 0) {
            answer_state(fd, &r, dev, cmd);
        } else if (strncmp(cmd, "wait-for-", 9) == 0) {
            wait_for(fd, &r, cmd + 9);
        } else if (strncmp(cmd, "connect:", 8) == 0) {
            connect_dev(fd, cmd + 8);
        } else if (strncmp(cmd, "disconnect:", 11) == 0) {
            disconnect(fd, cmd + 11);
        } else if (strcmp(cmd, "list-forward") == 0 || strcmp(cmd, "killforward-all") == 0 ||
                   strncmp(cmd, "killforward:", 12) == 0 || strncmp(cmd, "forward:", 8) == 0) {
            asdev *a = dev;
            if (!a && strcmp(cmd, "list-forward") != 0 && strcmp(cmd, "killforward-all") != 0) {
                pthread_mutex_lock(&as_lock);
                a = select_dev(r.sel, r.serial, r.id, 1, err, sizeof err);
                pthread_mutex_unlock(&as_lock);
            }
            ops_dev *any = NULL;
            int about_all = strcmp(cmd, "list-forward") == 0 || strcmp(cmd, "killforward-all") == 0;
            if (!a && about_all && ops_pool_list(&srv->pool, &any, 1) == 1) {
                /* about every device: held.c needs one only to be called */
                pthread_mutex_lock(&as_lock);
                a = entry(any, 1);
                pthread_mutex_unlock(&as_lock);
            }
            if (a)
                forward(fd, a, cmd);
            else if (!about_all)
                fail(fd, err);
            else if (strcmp(cmd, "list-forward") == 0)
                okay(fd, ""); /* no device, so no forward: adb's empty list */
            else
                send_all(fd, "OKAYOKAY", 8); /* adb.cpp: connect, then status */
        } else {
            fail(fd, "unknown host service");
        }
        free(req);
        return;
    }
}

static void *client_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    serve_one(fd);
    close(fd);
    pthread_mutex_lock(&as_lock);
    for (size_t i = 0; i < sizeof client_fds / sizeof *client_fds; i++)
        if (client_fds[i] == fd + 1) {
            client_fds[i] = 0;
            break;
        }
    nclients--;
    pthread_cond_broadcast(&as_cv);
    pthread_mutex_unlock(&as_lock);
    return NULL;
}

/* Whether fd's request is here already (a client writes it as soon as it
 * is connected) and is a host query answered from what the server holds:
 * such a request is answered in the accepting thread, as adb's server
 * answers from its one event loop, with no thread to start and wake for
 * it (each adb command asks host:version and, most, features first). */
static int quick_query(int fd)
{
    char buf[4 + 300];
    ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 4)
        return 0;
    long len = ops_hp_header((const uint8_t *)buf);
    if (len < 0 || 4 + len > n)
        return 0;
    buf[4 + len] = '\0';
    ops_hp_req r;
    char err[300];
    if (ops_hp_parse(&r, buf + 4, err, sizeof err) != 0 || r.kind != OPS_HP_HOST)
        return 0;
    static const char *const quick[] = {"version", "devices", "devices-l", "host-features",
                                        "features", "get-state", "get-serialno",
                                        "get-devpath"};
    for (size_t i = 0; i < sizeof quick / sizeof *quick; i++)
        if (strcmp(r.cmd, quick[i]) == 0)
            return 1;
    return 0;
}

/* A detached thread running fn(arg): 0, or -1 when none could be made. */
static int spawn(void *(*fn)(void *), void *arg)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &at, fn, arg);
    pthread_attr_destroy(&at);
    return rc == 0 ? 0 : -1;
}

/* One thread accepts at a time (acceptors counts it, and one that is
 * handing over). */
static void *accept_main(void *arg)
{
    (void)arg;
    while (!srv->stopping) {
        struct pollfd pf = {listen_fd, POLLIN, 0};
        if (poll(&pf, 1, 200) <= 0)
            continue;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* fails on unix: fine */
        if (quick_query(fd)) {
            serve_one(fd); /* its request is here and its answer small: no wait */
            close(fd);
            continue;
        }
        pthread_mutex_lock(&as_lock);
        size_t slot = sizeof client_fds / sizeof *client_fds;
        for (size_t i = 0; i < sizeof client_fds / sizeof *client_fds; i++)
            if (!client_fds[i]) {
                slot = i;
                break;
            }
        if (slot == sizeof client_fds / sizeof *client_fds) {
            pthread_mutex_unlock(&as_lock);
            fprintf(stderr, SERVE_NAME ": adb server: %zu clients at once already: one "
                            "refused\n", slot);
            close(fd);
            continue;
        }
        client_fds[slot] = fd + 1;
        nclients++;
        pthread_mutex_unlock(&as_lock);
        /* This thread, running now, serves the client it accepted, and a
         * new one takes over accepting: the client waits for no thread to
         * be started and scheduled (a busy machine makes that long). */
        pthread_mutex_lock(&as_lock);
        acceptors++;
        pthread_mutex_unlock(&as_lock);
        if (spawn(accept_main, NULL) == 0) {
            pthread_mutex_lock(&as_lock);
            acceptors--; /* a client's thread from here on, counted in nclients */
            pthread_cond_broadcast(&as_cv);
            pthread_mutex_unlock(&as_lock);
            return client_main((void *)(intptr_t)fd);
        }
        pthread_mutex_lock(&as_lock);
        acceptors--;
        pthread_mutex_unlock(&as_lock);
        if (spawn(client_main, (void *)(intptr_t)fd) != 0) {
            pthread_mutex_lock(&as_lock);
            client_fds[slot] = 0;
            nclients--;
            pthread_mutex_unlock(&as_lock);
            close(fd);
        }
    }
    pthread_mutex_lock(&as_lock);
    acceptors--;
    pthread_cond_broadcast(&as_cv);
    pthread_mutex_unlock(&as_lock);
    return NULL;
}

/* ---- the listening socket ---- */

static int listen_unix(const char *path, int abstract)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n + (size_t)abstract >= sizeof sa.sun_path) {
        fprintf(stderr, SERVE_NAME ": --adb-server: socket path too long: %s\n", path);
        return -1;
    }
    memcpy(sa.sun_path + abstract, path, n);
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)abstract + n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (!abstract) {
        /* A socket left by a server that died is replaced; a live one is not. */
        if (connect(fd, (struct sockaddr *)&sa, sl) == 0) {
            fprintf(stderr, SERVE_NAME ": --adb-server: a server already answers on %s\n", path);
            close(fd);
            return -1;
        }
        close(fd);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unlink(path);
        snprintf(listen_path, sizeof listen_path, "%s", path);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) != 0 || listen(fd, 64) != 0) {
        fprintf(stderr, SERVE_NAME ": --adb-server: cannot listen on %s: %s\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        listen_path[0] = '\0';
        return -1;
    }
    return fd;
}

static int listen_tcp(const char *spec)
{
    char host[256] = "127.0.0.1";
    const char *port = spec, *colon = strrchr(spec, ':');
    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (spec[0] == '[' && n >= 2 && spec[n - 1] == ']')
            spec++, n -= 2;
        if (n == 0 || n >= sizeof host) {
            fprintf(stderr, SERVE_NAME ": --adb-server: bad host in tcp:%s\n", spec);
            return -1;
        }
        memcpy(host, spec, n);
        host[n] = '\0';
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535) {
        fprintf(stderr, SERVE_NAME ": --adb-server: bad port '%s' (tcp:PORT or "
                        "tcp:HOST:PORT)\n", port);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0) {
        fprintf(stderr, SERVE_NAME ": --adb-server: cannot resolve %s: %s\n", host,
                gai_strerror(g));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        /* Every client of adb's server speaks first: a connection is
         * handed to accept with its request, so a quick query is answered
         * at once (quick_query) and no thread waits for it. */
        int defer = 5;
        setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 64) != 0) {
            int err = errno;
            close(fd);
            fd = -1;
            errno = err;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        fprintf(stderr, SERVE_NAME ": --adb-server: cannot listen on %s:%s: %s (another adb "
                        "server there? `adb kill-server` stops it)\n", host, port, strerror(errno));
    return fd;
}

int serve_adbsrv_start(serve *s, const char *addr)
{
    srv = s;
    trace = getenv("ADB_TRACE") && *getenv("ADB_TRACE");
    if (strncmp(addr, "tcp:", 4) == 0)
        listen_fd = listen_tcp(addr + 4);
    else if (strncmp(addr, "localfilesystem:", 16) == 0)
        listen_fd = listen_unix(addr + 16, 0);
    else if (strncmp(addr, "localabstract:", 14) == 0)
        listen_fd = listen_unix(addr + 14, 1);
    else {
        fprintf(stderr, SERVE_NAME ": --adb-server: '%s' is not an address adb's server takes "
                        "(tcp:PORT, tcp:HOST:PORT, localfilesystem:PATH, localabstract:NAME)\n",
                addr);
        return -1;
    }
    if (listen_fd < 0)
        return -1;
    acceptors = 1;
    if (spawn(accept_main, NULL) != 0) {
        acceptors = 0;
        close(listen_fd);
        listen_fd = -1;
        return -1;
    }
    started = 1;
    fprintf(stderr, SERVE_NAME ": adb server on %s (adb's protocol has no authentication: "
                    "anyone who can connect there can use the devices)\n", addr);
    return 0;
}

void serve_adbsrv_stop(void)
{
    if (!started)
        return;
    pthread_mutex_lock(&as_lock);
    while (acceptors > 0) /* srv->stopping is set: within 200 ms */
        pthread_cond_wait(&as_cv, &as_lock);
    pthread_mutex_unlock(&as_lock);
    close(listen_fd);
    listen_fd = -1;
    if (listen_path[0])
        unlink(listen_path);
    pthread_mutex_lock(&as_lock);
    /* Every client ends: relays see their socket's end, trackers and waits
     * see stopping. */
    for (size_t i = 0; i < sizeof client_fds / sizeof *client_fds; i++)
        if (client_fds[i])
            shutdown(client_fds[i] - 1, SHUT_RDWR);
    while (nclients > 0)
        pthread_cond_wait(&as_cv, &as_lock);
    pthread_mutex_unlock(&as_lock);
    started = 0;
}

int serve_adbsrv_clients(void)
{
    pthread_mutex_lock(&as_lock);
    int n = nclients;
    pthread_mutex_unlock(&as_lock);
    return n;
}
