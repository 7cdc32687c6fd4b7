/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-serve: a persistent session with one or more devices, for agents.
 *
 * It holds each device's connection (no handshake per call), its lock (calls
 * on one device never interleave), its latest snapshot and ref table, and
 * reconnects with backoff when a device comes back. It answers an HTTP/JSON
 * API (http.c, routes.c) and a local control socket for adbc-snap
 * (control.c). The operations themselves are tools/ops'. */
#ifndef ADBC_SERVE_H
#define ADBC_SERVE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "adbc/adbc.h"
#include "ops_json.h"
#include "ops_pool.h"

#define SERVE_NAME "adbc-serve"
#define SERVE_MAX_DEVICES 16
#define SERVE_TOKEN_BYTES 32
#define SERVE_MAX_UNINSTALL 64

typedef struct serve {
    ops_pool pool;           /* the devices, reconnected in the background */
    ops_dev *devs[SERVE_MAX_DEVICES]; /* in the order given */
    int ndevs;
    char token[2 * SERVE_TOKEN_BYTES + 1];
    size_t token_len;        /* kept apart: the compare never scans the token for its end */
    int call_ms;             /* bound of every call (--call-timeout) */
    int busy_ms;             /* how long a call waits for a busy device (--busy-wait) */
    int no_burst;            /* --adb-server with ADB_BURST_MODE set and not 1: devices
                                are connected without delayed_ack, as adb's server */
    uint32_t local_window;   /* --local-window: adbc_conn_opts.local_window; 0: none */
    uint32_t local_send_ahead; /* --local-send-ahead: adbc_conn_opts.local_send_ahead */
    int sync_engine;         /* --adb-server-sync engine: a client's sync: served by
                                lib/sync (adbsync.c), not relayed */
    int settle_ms;           /* pause after an act before the observation */
    int connect_ms;
    int conn_timeout_s;      /* idle HTTP connection timeout */
    size_t body_max;
    _Atomic int stopping;
    int idle_exit_s;         /* --idle-exit: 0 never */
    _Atomic int64_t last_client_ms; /* monotonic ms of the latest client activity */
    char listen_host[64];    /* the numeric address listened on (host.c) */
    int listen_any;          /* it is the wildcard: 0.0.0.0 or :: */
    const char *uninstall[SERVE_MAX_UNINSTALL + 1]; /* --allow-uninstall, NULL-terminated */
    int nuninstall;
    unsigned optin;          /* --allow-tool, as ops_tools_optin bits */
} serve;

/* ---- dev.c: the devices, in tools/ops' pool ---- */
/* The pool (reconnecting in the background) and each device named. */
int serve_devs_init(serve *s, const char *const *names, int n);
void serve_devs_free(serve *s);
/* The device a request names (device=NAME), or the only one; NULL with e set. */
ops_dev *serve_dev_find(serve *s, const char *name, ops_err *e);
/* Whether --idle-exit's bound is reached: every device gone for idle_exit_s
 * and no client for as long (none connected to the control socket either). */
int serve_idle_expired(serve *s);

/* ---- token.c ---- */
/* The token: ADBC_SERVE_TOKEN, else the file (created 0600 with 32 random
 * bytes, hex, when missing). 0 or -1 after printing why. */
int serve_token_load(serve *s, const char *path);
/* Constant-time (ops_secret_equal): the time depends only on the lengths. */
int serve_token_ok(const serve *s, const char *given);

/* A secret from a file: one line, a regular file (not a link) of this user
 * that no one else may read. 0, or -1 with why naming the file as what. */
int serve_secret_read(const char *path, const char *what, char *out, size_t cap, char *why,
                      size_t whycap);

/* ---- host.c: the Host check against DNS rebinding ---- */
/* The address listened on (numeric, without brackets); any: the wildcard. */
void serve_host_listen(serve *s, const char *host, int any);
/* Whether a request's Host header names this server: a loopback name
 * (localhost, 127.0.0.1, [::1]) or the address listened on, any port. A
 * missing header is refused. */
int serve_host_ok(const serve *s, const char *host);

/* ---- control.c: the local control socket for adbc-snap (device 0) ---- */
int serve_control_start(serve *s, const char *path);
void serve_control_stop(serve *s, const char *path);
/* Control clients connected now. */
int serve_control_clients(void);

/* ---- held.c: forwards the session holds (adb's host:forward services) ---- */
/* The answer to a "host:" service on the control socket, as adb's server
 * answers it (malloc'd, *len bytes); NULL when out of memory or not "host:". */
char *serve_held_request(serve *s, ops_dev *d, const char *service, size_t *len);
/* The pool's on_conn_close: free every forward on connection c, and d's
 * reverse relays. */
void serve_held_conn_close(void *user, ops_dev *d, adbc_conn *c);
/* The pool's on_conn_opts: d's connection accepts the streams of the
 * reverse rules held for it. */
void serve_held_conn_opts(void *user, ops_dev *d, adbc_conn_opts *o);
/* The answer to "reverse:forward:[norebind:]REMOTE;LOCAL" on the control
 * socket: the rule made on the device and its connections relayed by the
 * server (held), answered as adbd answers; NULL when out of memory. */
char *serve_held_reverse(serve *s, ops_dev *d, const char *service, size_t *len);
/* Free every forward (s->stopping set). */
void serve_held_stop(void);

/* --adb-server's default --local-window (docs/adb-server.md, "How fast"). */
#define SERVE_RELAY_LOCAL_WINDOW (512 * 1024)

/* ---- adbsrv.c: adb's server protocol (--adb-server; docs/adb-server.md) ---- */
/* Listen on addr in adb's socket syntax (tcp:PORT on loopback,
 * tcp:HOST:PORT, localfilesystem:PATH, localabstract:NAME) and serve
 * clients of adb's server over the pool's devices. 0 or -1 after printing
 * why. */
int serve_adbsrv_start(serve *s, const char *addr);
/* Close the listener and end every client (s->stopping set). */
void serve_adbsrv_stop(void);
/* Clients connected now. */
int serve_adbsrv_clients(void);
/* The pool's on_conn_ready: streams may be opened on c. */
void serve_adbsrv_conn_ready(void *user, ops_dev *d, adbc_conn *c);
/* Part of the pool's on_conn_close: end every relay on c, wait for them. */
void serve_adbsrv_conn_close(void *user, ops_dev *d, adbc_conn *c);
/* d's connection for streams opened without d's lock (the adb server's,
 * the control socket's), counted until put: the pool's on_conn_close
 * interrupts it and waits for every one to be put before it closes it.
 * NULL while d is not connected. */
adbc_conn *serve_adbsrv_conn_get(ops_dev *d);
void serve_adbsrv_conn_put(ops_dev *d);
/* Every byte of iov (n entries; changed as sent) to a client: -1 when it
 * fails, the client takes nothing for the call timeout, or the server stops. */
struct iovec;
int serve_adbsrv_sendv(int fd, struct iovec *iov, int n);
/* Exactly n bytes from a client within ms; -1 on its end, an error, the
 * bound, or the server stopping. */
int serve_adbsrv_recv(int fd, void *p, size_t n, int ms);
/* ADB_TRACE was set: every request is logged to stderr. */
int serve_adbsrv_tracing(void);

/* ---- adbsync.c: a client's sync: served with adbc's own engine ---- */
/* Answer the client on fd (OKAY, then its sync requests) with lib/sync on
 * c until it quits, fails or goes (--adb-server-sync engine). */
void serve_adbsync(serve *s, int fd, adbc_conn *c);
/* The device's features as a client of this server sees them: without
 * sendrecv_v2* when the engine serves sync (the client sends with v1 SEND
 * and RECV). Writes at most cap bytes to out. */
void serve_adbsync_features(const serve *s, char *out, size_t cap, const char *features);
/* A device listed again (connected now: 0, or -1 with e set, the pool
 * then retrying it), or put away: its connection dropped, not listed and
 * not reconnected, why as its error, until it comes up again. */
int serve_adbsrv_dev_up(ops_dev *d, ops_err *e);
void serve_adbsrv_dev_down(ops_dev *d, const char *why);

/* ---- adbscan.c: the adb server's device set when no device is named ---- */
/* Keep the pool to what adbc lists (USB, emulators, remembered TCP
 * devices), as adb's server follows devices coming and going: 0 or -1
 * after printing why. */
int serve_adbscan_start(serve *s);
/* Stop looking (after ops_pool_stop: a connect in progress ends first). */
void serve_adbscan_stop(void);

/* ---- gate.c: accepts connections, checks each request head, hands it to
 * the HTTP side (serve_http_take) ---- */
int serve_gate_start(int listen_fd, int timeout_ms);
void serve_gate_stop(void);
/* A place on the HTTP side may have come free. */
void serve_gate_wake(void);

/* ---- http.c ---- */
int serve_http_start(serve *s, const char *listen, int explicit_token, const char *ready_file);
void serve_http_stop(void);
/* The gate hands fd over, accepted at since (monotonic ms): the request
 * must be whole within the request timeout of that. 1: libmicrohttpd has
 * it; 0: no place now (at most 64 connections are served at once), fd is
 * still the caller's; -1: libmicrohttpd refused it and closed fd. */
int serve_http_take(int fd, const struct sockaddr *addr, socklen_t addrlen, int64_t since);

/* ---- routes.c: each returns the HTTP status and sets *body (envelope or
 * PNG) and *ctype ---- */
typedef struct serve_req {
    serve *srv;
    const char *method, *path;
    const char *(*arg)(void *conn, const char *name); /* query argument */
    void *conn;
    const char *body;
    size_t body_len;
} serve_req;
int serve_route(serve_req *r, char **body, size_t *len, const char **ctype);
/* {"ok":false,"error":{"code","message"}} */
char *serve_error_json(const char *code, const char *msg, size_t *len);
/* The envelope of result (taken; NULL: null), or of e with its code's
 * status; each returns the HTTP status. */
int serve_reply_ok(cJSON *result, char **body, size_t *len);
int serve_reply_err(const ops_err *e, char **body, size_t *len);

/* ---- tools.c: GET /v1/tools, POST /v1/tools/NAME (tools/ops' table) ---- */
int serve_tools_route(serve_req *r, char **body, size_t *len);

/* ---- tasks.c: the agent's tasks (needs the agent: ADBC_HAVE_AGENT) ---- */
/* A command-line option of the tasks (--model, --provider, --base-url,
 * --agent-allow): 1 taken with its value, 0 not one of them (or no
 * value), -1 refused after printing why. */
int serve_tasks_option(const char *opt, const char *val);
void serve_tasks_init(serve *s);
/* Whether the path is one of the tasks' (/v1/tasks..., /v1/settings). */
int serve_tasks_is_route(const char *path);
int serve_tasks_route(serve_req *r, char **body, size_t *len);
/* GET /v1/tasks/ID/events: 0 when the request is not that; else its
 * status, with *st to read the stream from (200) or *body (an error). */
typedef struct serve_stream serve_stream;
int serve_tasks_events(serve_req *r, serve_stream **st, char **body, size_t *len);
/* Up to max bytes of the stream, waiting (bounded) for the next event; -1
 * at its end. */
long serve_stream_read(serve_stream *st, char *buf, size_t max);
void serve_stream_free(serve_stream *st);
/* A task run for another front end (farm.c), as POST /v1/tasks runs one:
 * its steps (ops_agent_step_json's, as text) and its end handed to hooks,
 * on the run's thread; on_end comes last, once the device is free. */
typedef struct serve_task_hooks {
    void (*on_step)(void *arg, const char *step_json);
    /* status: completed failed cancelled stopped; end: ops_agent_result_json's
     * text or NULL; error: why the run could not start, or NULL. */
    void (*on_end)(void *arg, const char *status, const char *end_json, const char *error);
    void *arg;
} serve_task_hooks;
typedef struct serve_task_spec {
    const char *goal, *model; /* model NULL or "": the settings' */
    int max_steps;            /* 0: the settings' */
    int step_delay_ms;        /* -1: the settings' */
} serve_task_spec;
/* Start it on device devi (the index in serve.devs): 0 with the local id,
 * or -1 with why (the device runs a task: one per device). */
int serve_tasks_run(int devi, const serve_task_spec *sp, const serve_task_hooks *hooks, char *id,
                    size_t idcap, char *why, size_t whycap);
/* Whether a task runs on device devi (or the server is stopping). */
int serve_tasks_busy(int devi);
/* Ask the task with this local id to end (as POST /v1/tasks/ID/cancel). */
void serve_tasks_cancel(const char *id);
/* Cancel and join every run, end the streams (before the HTTP server
 * stops); then free what is kept (after). */
void serve_tasks_stop(void);
void serve_tasks_free(void);

/* ---- farm.c, farm_api.c: a farm of nodes on Redis (docs/farm.md; needs
 * hiredis and the agent) ---- */
/* --farm, --farm-node, --farm-password-file, --farm-lease: as
 * serve_tasks_option. */
int serve_farm_option(const char *opt, const char *val);
/* After the devices: join the farm in the background (0), or -1 after
 * printing why (a bad URL, a password file others can read). Nothing
 * without --farm. */
int serve_farm_start(serve *s);
/* Before serve_tasks_stop: the farm tasks it cancels go back to the queue. */
void serve_farm_leave(void);
/* After serve_tasks_stop. */
void serve_farm_stop(void);
/* Last, after the HTTP side (whose event streams hold Redis connections)
 * has stopped: the rediss:// connections' threads have ended (bounded). */
void serve_farm_end(void);
int serve_farm_is_route(const char *path);
int serve_farm_route(serve_req *r, char **body, size_t *len);
/* GET /v1/farm/tasks/ID/events, as serve_tasks_events. */
typedef struct serve_farm_stream serve_farm_stream;
int serve_farm_events(serve_req *r, serve_farm_stream **st, char **body, size_t *len);
long serve_farm_stream_read(serve_farm_stream *st, char *buf, size_t max);
void serve_farm_stream_free(serve_farm_stream *st);

/* ---- page.c: the inspector page, compiled in (page.cmake) ---- */
typedef struct serve_asset {
    const char *path, *ctype;
    const unsigned char *data;
    size_t len;
} serve_asset;
extern const serve_asset serve_assets[]; /* ends with a NULL path */
/* A page file's answer (its status, *body, *ctype), or 0: not a page path. */
int serve_page(const serve_req *r, char **body, size_t *len, const char **ctype);

#endif
