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
    pthread_mutex_t state_lock; /* active */
    ops_pool pool;            /* the devices touched, reconnected on the next call */
    ops_dev *active;
    pthread_mutex_t flight_lock;
    pthread_cond_t flight_cond;
    int inflight;
    /* Call threads that have finished but are not yet joined: joined before
     * the next call starts and at exit, so a thread's own cleanup (OpenSSL's
     * per-thread state) has run before the process ends. */
    pthread_t done[2 * MCP_MAX_INFLIGHT];
    int ndone;
} mcp_server;

/* One tool call being served. */
typedef struct mcp_call {
    mcp_server *srv;
    cJSON *content;           /* the result's content array */
    int is_error;
    int64_t deadline;         /* monotonic ms */
    ops_dev *dev;             /* the device, locked, once call_device succeeded */
} mcp_call;

/* ---- log.c ---- */
void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int64_t mcp_wall_ms(void);      /* since the epoch */

/* ---- rpc.c ---- */
void rpc_send(mcp_server *s, cJSON *msg);  /* writes one line, frees msg */
void rpc_error(mcp_server *s, const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rpc_handle_line(mcp_server *s, const char *line, size_t len);
void rpc_join_done(mcp_server *s); /* join call threads that have finished */

/* ---- result.c: building a tool's result ---- */
void call_text(mcp_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void call_text_raw(mcp_call *c, const char *text);
int call_fail(mcp_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fail with adbc's last error for rc, and what to do next. */
int call_fail_adbc(mcp_call *c, int rc, const char *what);
int call_remaining(const mcp_call *c); /* ms left, at least 1 */

/* ---- args.c: reading arguments, with errors an agent can act on ---- */
int arg_str(mcp_call *c, const cJSON *args, const char *name, int required, size_t maxlen,
            const char **out);
int arg_int(mcp_call *c, const cJSON *args, const char *name, int required, int lo, int hi,
            int *out);
int arg_bool(mcp_call *c, const cJSON *args, const char *name, int *out);
/* Android package / permission names: [A-Za-z0-9_.]+, starting with a letter. */
int arg_name(mcp_call *c, const cJSON *args, const char *name, int required, const char **out);

/* ---- device.c ---- */
/* Find the active device (selecting the only one, or the configured
 * default, when none is), connect, decide emulator or physical, apply the
 * allowlist, and lock it for this call. */
int call_device(mcp_call *c);
/* Unlock; a connection that broke is closed so the next call reconnects. */
void call_device_done(mcp_call *c);
/* Select serial as the active device (checked as above). */
int device_select(mcp_call *c, const char *serial);
/* Text listing for list_devices. */
int device_list_text(mcp_call *c);
/* The device pool (connect within connect_ms, I/O bound call_ms, the
 * emulator check on connecting). */
int devices_init(mcp_server *s);
void devices_free(mcp_server *s);

/* ---- tools.c ---- */
typedef int (*tool_fn)(mcp_call *c, const cJSON *args);
typedef struct mcp_tool {
    const char *name;
    const char *title;
    const char *description;
    const char *schema;       /* JSON Schema of the arguments */
    tool_fn fn;
    unsigned flags;
} mcp_tool;
enum { TOOL_READONLY = 1, TOOL_SHELL = 2 };

int tools_init(void);          /* parse every schema once; -1 if one is broken */
void tools_free(void);
cJSON *tools_list(const mcp_server *s);
/* Run a tool; returns the result object. NULL with *unknown set when there
 * is no such tool. */
cJSON *tools_call(mcp_server *s, const char *name, const cJSON *args, int *unknown);

/* Tool sets, each in its own file. */
extern const mcp_tool mcp_tools_device[];
extern const mcp_tool mcp_tools_ui[];
extern const mcp_tool mcp_tools_input[];
extern const mcp_tool mcp_tools_app[];
extern const mcp_tool mcp_tools_shot[];
extern const mcp_tool mcp_tools_shell[];

/* ---- snapshot helpers (tool_ui.c) ---- */
/* Take a snapshot on the call's device, keep it as the device's latest, and
 * add it to the result (text, or JSON when json). */
int ui_snapshot_into(mcp_call *c, int json, const char *heading);
/* The same, reading the pages of WebViews too when web is set. */
int ui_snapshot_web(mcp_call *c, int json, int web, int web_budget_ms, const char *heading);
/* After an act: settle, then a snapshot as above; a failed snapshot is a
 * note, not an error (the act was done). */
void ui_after_act(mcp_call *c);

#endif
