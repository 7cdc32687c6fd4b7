/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp: the Model Context Protocol server's shared state.
 *
 * One process serves one client over stdio. The main thread reads
 * requests; each tools/call runs on its own thread so a ping or a second
 * call is answered while a long wait runs. Calls that touch a device take
 * that device's lock (calls on one device never interleave) within the
 * call's deadline. */
#ifndef ADBC_MCP_H
#define ADBC_MCP_H

#include <pthread.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "adbc/act.h"
#include "adbc/conn.h"
#include "adbc/ui.h"
#include "config.h"
#include "ops_pool.h"
#include "ops_tools.h"

#define MCP_NAME "adbc-mcp"
/* The one version: the library's (include/adbc/version.h). */
#define MCP_VERSION ADBC_VERSION_STRING
#define MCP_MAX_INFLIGHT 16

typedef struct mcp_server {
    mcp_config cfg;
    char *config_path;        /* shown in messages about the allowlist */
    int allow_shell;
    int out_fd;               /* the protocol stream (stdout's original descriptor) */
    pthread_mutex_t out_lock;
    pthread_mutex_t state_lock; /* active, and the probe below */
    /* The implicit choice of device (no active one yet): one listing at a
     * time, its outcome shared with every call that came while it ran
     * (device.c, first_choice). */
    pthread_cond_t probe_done;
    int probing;
    unsigned long probe_gen;   /* outcomes published */
    ops_err probe_err;         /* why the last one failed (no device active then) */
    ops_pool pool;            /* the devices touched, reconnected on the next call */
    ops_dev *active;
    ops_front fe;             /* what the tool table is given (mcp_front) */
    const char **uninstall;   /* [apps] uninstall, NULL-terminated, for fe */
    unsigned optin;           /* [tools] allow, as ops_tools_optin bits */
    pthread_mutex_t flight_lock;
    pthread_cond_t flight_cond;
    int inflight;
    struct call_job *jobs[MCP_MAX_INFLIGHT]; /* the calls running, for cancelling
                                                (flight_lock) */
    /* Call threads that have finished but are not yet joined: joined before
     * the next call starts and at exit, so a thread's own cleanup (OpenSSL's
     * per-thread state) has run before the process ends. */
    pthread_t done[2 * MCP_MAX_INFLIGHT];
    int ndone;
} mcp_server;

/* ---- log.c ---- */
void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- rpc.c ---- */
void rpc_send(mcp_server *s, cJSON *msg);  /* writes one line, frees msg */
void rpc_error(mcp_server *s, const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rpc_handle_line(mcp_server *s, const char *line, size_t len);
void rpc_join_done(mcp_server *s); /* join call threads that have finished */

/* ---- device.c ---- */
/* Find the active device (selecting the only one, or the configured
 * default, when none is), connect, decide emulator or physical, apply the
 * allowlist, and lock it for this call. */
int call_device(ops_call *c);
/* Unlock; a connection that broke is closed so the next call reconnects. */
void call_device_done(ops_call *c);
/* Select serial as the active device (checked as above). */
int device_select(ops_call *c, const char *serial);
/* Text listing for list_devices. */
int device_list_text(ops_call *c);
/* The device pool (connect within connect_ms, I/O bound call_ms, the
 * emulator check on connecting). */
int devices_init(mcp_server *s);
void devices_free(mcp_server *s);

/* ---- tools: the table is tools/ops' (ops_tools.h) ---- */
/* The front end given to it: this server's device hooks, the shell when
 * --allow-shell, the call bound, settle and screenshot directory. */
void mcp_front(const mcp_server *s, ops_front *fe);

#endif
