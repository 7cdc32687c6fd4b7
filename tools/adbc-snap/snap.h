/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: shared declarations of the command-line tool. Each cmd_*.c
 * file defines a NULL-terminated table of commands; main.c lists the tables. */
#ifndef ADBC_SNAP_H
#define ADBC_SNAP_H

#include <stdatomic.h>
#include <stdio.h>

#include "adbc/adbc.h"
/* snap_seconds (the one parser for durations), snap_join, the global
 * options and the session lookup, shared with the front end. */
#include "session_find.h"

typedef struct snap_ctx {
    const char *serial;  /* -s, or ANDROID_SERIAL */
    const char *target;  /* -t HOST:PORT */
    int timeout_ms;      /* --timeout (default 30 s): see docs/act.md for the rule */
    int timeout_set;     /* --timeout was given */
    int stream_timeout_ms; /* shell/exec silence bound: --timeout if given, else -1 */
    int quiet;           /* -q */
    int no_session;      /* --no-session: never through a running session */
    const char *argv0;
    adbc_conn *conn;     /* opened by snap_connect, closed by main */
    int via_session;     /* conn goes through a running session (its server holds forwards) */
    struct adbc_reverse *reverse; /* set: snap_connect accepts its device-opened streams */
    uint32_t window;      /* nonzero: the connection's per-stream receive window */
    uint32_t max_payload; /* nonzero: the largest packet the connection offers */
    uint32_t send_ahead;  /* nonzero: bytes a stream keeps in flight at most */
    adbc_keyring *session_keys; /* the empty keyring of a session's connection */
} snap_ctx;

typedef struct snap_cmd {
    const char *name;
    int (*run)(snap_ctx *ctx, int argc, char **argv); /* argv[0] is the command name */
    const char *usage;  /* "shell CMD..." */
    const char *help;   /* one line */
} snap_cmd;

/* Exit statuses for tool-level failures (a remote command's own status is
 * passed through by `shell`). */
#define SNAP_EXIT_USAGE 2
#define SNAP_EXIT_FAIL 1
/* shell: the device's shell v2 stream ended without a valid exit status
 * (as ssh, 255 marks the tool's own failure rather than the command's). */
#define SNAP_EXIT_NO_STATUS 255

/* Connect to the selected device (once; later calls return the same). On
 * failure prints the error and returns it. */
int snap_connect(snap_ctx *ctx, adbc_conn **out);

/* Print "adbc-snap: <what>: <last error>" to stderr (and with --json the
 * error as JSON on stdout); returns SNAP_EXIT_FAIL, or status. */
int snap_fail(const char *what, int rc);
int snap_fail_status(const char *what, int rc, int status);

/* Print a usage error for a command (JSON too); returns SNAP_EXIT_USAGE. */
int snap_usage(const snap_cmd *cmd, const char *msg);

/* Print "adbc-snap: <what>: <message>" (what NULL: "adbc-snap: <message>")
 * to stderr, and the JSON error with --json; returns status. */
int snap_error(int status, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --json: with it on (main sets it when a command's options hold --json),
 * every error is also printed on stdout as one JSON object:
 *   {"error":{"what", "code", "reason", "message", "usage"},"exit_status":N}
 * ("code"/"reason": the adbc_err and its text, when a library call failed;
 * "usage" for usage errors). Only one JSON document goes to stdout: a
 * command that has printed its result marks it, and later errors go to
 * stderr only. */
void snap_json_set(int on);
int snap_json_on(void);
void snap_json_mark(void);
int snap_json_marked(void);
void snap_json_error(const char *what, int code, const char *message, const char *usage,
                     int status);

/* Write len bytes as "key":"..." when they are UTF-8, else as
 * "key_base64":"..." (byte-exact either way). */
void snap_json_bytes(FILE *f, const char *key, const void *data, size_t len);

/* Write len bytes as a JSON string; bytes that are not UTF-8 become U+FFFD
 * (for text such as log lines). */
void snap_json_strn(FILE *f, const char *s, size_t len);

/* Text for a terminal, the one filter everything untrusted goes through
 * before it is printed as text: a copy in buf (cut at n - 1 bytes, at a
 * character boundary) without C0 and C1 controls (U+0080..U+009F, and raw
 * bytes that are not UTF-8), whole escape sequences (ESC or C1 CSI up to its
 * final byte; OSC, DCS, APC, PM and SOS strings up to BEL or ST) and DEL;
 * newline, CR and tab become a space. */
const char *snap_text_safe(const char *s, char *buf, size_t n);
/* Text from the device for a terminal: snap_text_safe when stdout is a
 * TTY; otherwise s itself, byte for byte (pipes get what the device
 * sent). */
const char *snap_tty_safe(const char *s, char *buf, size_t n);
/* A name from the network (an mDNS instance, service or host) for a text
 * listing, tty or not: control characters (C0, DEL, C1) and bytes that are
 * not UTF-8 become '?', so it can neither drive a terminal nor forge a row
 * or column. Cut to n - 1 bytes at a character boundary. */
const char *snap_net_safe(const char *s, char *buf, size_t n);


/* Write s as a JSON string literal (with quotes) to f; bytes that are not
 * UTF-8 become U+FFFD. */
void snap_json_str(FILE *f, const char *s);

/* SIGINT/SIGTERM/SIGHUP handling (signals.c): start before any thread;
 * watch the connection a signal interrupts (NULL: none, before closing it);
 * the signal that came (0: none). */
int snap_signals_start(void);
void snap_signals_watch(adbc_conn *c);
/* Also set *flag on the first signal (NULL: none); a flag set counts as
 * something to clean up, as a watched connection does. */
void snap_signals_flag(atomic_int *flag);
int snap_signal_received(void);
/* Interrupt the watched connection ms from now (bounded commands); stop
 * returns 1 when the deadline had passed. */
int snap_deadline_start(int ms);
int snap_deadline_stop(void);

/* The local terminal of an interactive shell (tty.c). snap_tty_raw: make
 * fd raw (0, or -1 when it is no terminal); snap_tty_restore: undo it
 * (idempotent, async-signal-safe; also run at exit and by the signal
 * thread). snap_tty_size: fd's window size (-1: unknown). snap_winch_start:
 * a descriptor readable after each SIGWINCH (-1 on failure); snap_winch_take
 * drains it (1 when a change came); snap_winch_stop: the default again. */
int snap_tty_raw(int fd);
void snap_tty_restore(void);
int snap_tty_size(int fd, unsigned *rows, unsigned *cols, unsigned *xpix, unsigned *ypix);
int snap_winch_start(void);
int snap_winch_take(void);
void snap_winch_stop(void);

extern const snap_cmd snap_cmds_core[];
extern const snap_cmd snap_cmds_sync[];
extern const snap_cmd snap_cmds_devices[];
extern const snap_cmd snap_cmds_ui[], snap_cmds_act[], snap_cmds_screen[];
extern const snap_cmd snap_cmds_apps[], snap_cmds_logcat[];
extern const snap_cmd snap_cmds_device[];
extern const snap_cmd snap_cmds_admin[], snap_cmds_debug[], snap_cmds_emu[], snap_cmds_host[];
extern const snap_cmd snap_cmds_pair[];
extern const snap_cmd snap_cmds_forward[], snap_cmds_webviews[];
extern const snap_cmd snap_cmds_wait[];
extern const snap_cmd snap_cmds_mdns[];
extern const snap_cmd snap_cmds_agent[];
extern const snap_cmd snap_cmds_farm[];

/* 1 if name is one of adb's wait-for-[TRANSPORT-]STATE commands. */
int snap_is_wait_cmd(const char *name);

extern const snap_cmd snap_cmds_help[];

/* The dispatch tables (main.c): every command is in one of them. */
extern const snap_cmd *const snap_tables[];
extern const size_t snap_ntables;

/* The command named name, or NULL. */
const snap_cmd *snap_cmd_find(const char *name);

/* The general usage: global options and the list of commands. */
void snap_usage_all(FILE *f);

/* help.c: the long help of a command (NULL when it has none); print a
 * command's help on stdout (0; without an entry: a message, SNAP_EXIT_FAIL). */
const char *snap_help_text(const char *name);
int snap_help_show(const snap_cmd *cmd);

/* Connect through a running session for the selected device (cmd_session.c);
 * -1 when there is none (or --no-session). */
int snap_session_connect(snap_ctx *ctx, adbc_conn **out);
extern const snap_cmd snap_cmds_session[];
/* The adbc-serve to run: $ADBC_SERVE, else beside this program, else in
 * the install's bin directory, else from PATH. */
void snap_serve_exe(char *exe, size_t cap);
/* adb's environment variables (adb_env.c): a note on stderr (unless -q)
 * for each one set that has no effect here, naming it; and
 * ADB_COMPRESSION as push and pull's default (*comp kept when unset; -1
 * after printing why when it is not one adb takes). */
void snap_adb_env_check(const snap_ctx *ctx);
int snap_adb_compression(adbc_sync_compression *comp);
/* start-server, kill-server (cmd_server.c): adbc-serve as adb's server. */
extern const snap_cmd snap_cmds_server[];
/* A client of adb's server (cmd_server.c). A connected socket to the
 * server at addr (adb's syntax: tcp:..., localfilesystem:...) within ms, or
 * -1 with errno set; the version of the server answering there, or -1. */
int snap_srv_dial(const char *addr, int ms);
long snap_srv_version(const char *addr, int ms);
/* A reply of adb's server protocol in buf (len bytes, NUL-terminated):
 * OKAY [OKAY] [%04x STRING] or FAIL %04x MESSAGE, made the string alone in
 * place. 0 OKAY, 1 FAIL, -1 when it is not that protocol. */
int snap_hp_reply(char *buf, size_t len);
/* Send req (a "host..." request) to the server of adb's version (41) at
 * adb's address (ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT...) and read
 * its answer (each wait at most ms): 0 with *reply what followed OKAY, 1
 * with *reply the FAIL message (malloc'd both), -1 when no such server
 * answers. */
int snap_srv_query(const char *req, char **reply, int ms);

/* The devices of the running sessions (their names as -s/-t gave them), at
 * most max into names; how many. */
int snap_session_devices(char (*names)[256], int max);

#endif
