/* SPDX-License-Identifier: Apache-2.0 */
/* Termux:API on the phone itself (ops_termux.c): when adbc runs inside
 * Termux (TERMUX_VERSION set) and the termux-api package's commands are on
 * PATH, the tool table offers them (ops_tool_termux.c). Each is run as its
 * own program with separate arguments (posix_spawnp, never a shell), in its
 * own process group, killed with it when its time is up. */
#ifndef ADBC_OPS_TERMUX_H
#define ADBC_OPS_TERMUX_H

#include "ops_core.h"

/* 1 when TERMUX_VERSION is set (not empty) and termux-battery-status is an
 * executable file in a PATH directory; else 0. */
int ops_termux_available(void);

/* Run argv[0] (looked up on PATH) with argv, stdin_text (NULL: none) on its
 * standard input, for at most timeout_ms. 0 with *out (stdout and stderr as
 * they came, NUL-terminated, at most 1 MiB, malloc'd; *out_len its length)
 * when it exited with status 0. Else -1 and e: OPS_ETIMEOUT (killed, with
 * its process group, when the time was up), OPS_EFAIL (not found, killed by
 * a signal, a nonzero status, more than 1 MiB: each said with its output). */
int ops_termux_run(ops_err *e, const char *const *argv, const char *stdin_text, int timeout_ms,
                   char **out, size_t *out_len);
/* The same, stopped early: stopped(arg) (NULL: never) is asked every 100 ms
 * while the command runs; when it says 1 the command and its group are
 * killed and the run fails (OPS_EFAIL, "cancelled"). A client that gave up
 * on a call (MCP's notifications/cancelled) stops its command so. */
int ops_termux_run_stop(ops_err *e, const char *const *argv, const char *stdin_text,
                        int timeout_ms, int (*stopped)(void *), void *arg, char **out,
                        size_t *out_len);

#endif
