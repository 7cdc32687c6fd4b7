/* SPDX-License-Identifier: Apache-2.0 */
/* How a command finds the session of its device: the global options, the
 * device's name, the socket's path, dialing it. Compiled into adbc-snap's
 * full program and into its front end (front/front.c), so both find the
 * same session the same way. Needs only the C library. */
#ifndef SNAP_SESSION_FIND_H
#define SNAP_SESSION_FIND_H

#include <stddef.h>

/* The global options, before the command word. */
typedef struct snap_globals {
    const char *serial, *target; /* -s, -t as given */
    int timeout_ms;              /* --timeout, default 30 s */
    int stream_timeout_ms;       /* --timeout for streams, -1 without it */
    int timeout_set, quiet, no_session;
} snap_globals;

/* What snap_globals_parse found instead of a command word. */
enum {
    SNAP_G_HELP = -1,        /* -h, --help */
    SNAP_G_VERSION = -2,     /* --version */
    SNAP_G_BAD_TIMEOUT = -3, /* --timeout's value; *bad is its index */
    SNAP_G_UNKNOWN = -4,     /* an unknown option; *bad is its index */
    SNAP_G_NO_COMMAND = -5,  /* nothing after the options */
    SNAP_G_CONFLICT = -6     /* -s and -t both given; *bad is the later one's index */
};

/* Parse argv's global options into g: the index of the command word, or
 * one of SNAP_G_*. */
int snap_globals_parse(int argc, char **argv, snap_globals *g, int *bad);

/* Seconds (0 < S <= max_s, finite) as milliseconds (at least 1) in *ms;
 * -1 when s is not such a number. */
int snap_seconds(const char *s, double max_s, int *ms);

/* Whether a command's arguments (argv[1..]) hold the option opt: among the
 * leading options only for shell and exec (their arguments go to the
 * device), else anywhere before "--". */
int snap_has_opt(const char *name, int argc, char **argv, const char *opt);

/* The device a session is for: -t, else -s, else ANDROID_SERIAL (the rule
 * of adbc_device_serial); NULL when none is named. */
const char *snap_session_name(const snap_globals *g);

/* dir/session-NAME.EXT into buf, the directory ($XDG_RUNTIME_DIR/adbc, else
 * /tmp/adbc-UID) created 0700 if missing and checked to be ours; 0, or -1
 * (with a message on stderr when loud). */
int snap_session_path(char *buf, size_t cap, const char *name, const char *ext, int loud);

/* A connected socket to the session at sock, or -1. */
int snap_session_dial(const char *sock);

/* The words of a command joined with spaces, as shell and exec send them;
 * malloc'ed, NULL when out of memory. */
char *snap_join(int argc, char **argv, int from);

#endif
