/* SPDX-License-Identifier: Apache-2.0 */
/* Internal pieces of the act layer (include/adbc/act.h). Not installed.
 *
 * Commands are built as text by the functions here (pure, so unit tests
 * check the exact command lines) and run by act_run over exec:. Every
 * caller-supplied string enters a command through act_buf_quote. */
#ifndef ADBC_ACT_INTERNAL_H
#define ADBC_ACT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "adbc/act.h"
#include "core/internal.h"

/* ---- A growing command line (a core_buf) ---------------------------------- */

/* Append s as one literal shell word ('...' with ' written '\''). */
void act_buf_quote(core_buf *b, const char *s);
/* Hand the command over (*out malloc'd, "" when empty) or fail with
 * ADBC_ENOMEM naming the command being built. */
int act_buf_take(core_buf *b, char **out);

/* ---- Running commands ----------------------------------------------------- */

/* What a command printed (stdout and stderr together, as exec: gives them)
 * and its exit status. */
typedef struct act_out {
    char *text;            /* NUL-terminated */
    size_t len;
    int status;
} act_out;

/* Run cmd over exec: with "; echo <marker>$?" appended, so the status comes
 * back too. ADBC_EREMOTE when the marker is missing (the shell died).
 * max_out bounds the output (0: 1 MiB). */
int act_run(act_out *o, adbc_conn *c, const char *cmd, size_t max_out, int timeout_ms);
void act_out_free(act_out *o);

/* act_run, then ADBC_EREMOTE naming what when the status is not 0 or the
 * output reports an error ("Error", "Exception"). The output is dropped. */
int act_run_ok(adbc_conn *c, const char *cmd, const char *what, int timeout_ms);
/* The check act_run_ok makes on output already read (o is kept). */
int act_out_ok(const act_out *o, const char *what);

/* The device's API level (ro.build.version.sdk), asked once per connection;
 * 0 when it cannot be read. */
int act_sdk(adbc_conn *c, int timeout_ms);

/* What goes in front of a command line that runs `input`: on Android 12
 * (API 31) and later, where InputManagerService serves input's commands
 * itself (`cmd input`, no JVM start), a shell function routing `input` to
 * it; "" on older devices, whose `input` is the only way. Decided once per
 * connection (act_sdk). */
const char *act_input_prefix(adbc_conn *c, int timeout_ms);

/* act_run_ok for a command line that runs `input` (act_input_prefix in
 * front). */
int act_run_input(adbc_conn *c, const char *cmd, const char *what, int64_t deadline);

/* An input that goes to no element (a point, a swipe, a key, typing into
 * the focused field) under o->check: when o->refs' frame mark shows no
 * frame drawn since its dump, the input is sent in the frame check's round
 * trip; otherwise a fresh dump is checked first (refused: ADBC_EPERM,
 * nothing sent). Without o->check, act_run_input. */
int act_input_checked(adbc_conn *c, const char *cmd, const char *what, const adbc_act_opts *o,
                      int64_t deadline);

/* Build the input command for an act on the element at: *cmd malloc'd. */
typedef int (*act_cmd_fn)(char **cmd, const adbc_ui_ref *at, void *user);

/* An act on a ref: find its element (act_resolve's rule, with the frame
 * check of adbc_act_opts.refs first) and run the command build makes for
 * it. where (may be NULL) gets the element's point, ref and how. */
int act_on_ref(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
               const adbc_act_opts *o, int64_t deadline, act_cmd_fn build, void *user);

/* Milliseconds left of a call's budget, at least 1 so a spent budget still
 * fails inside the callee with its own timeout message. */
int act_left(int64_t deadline);

/* opts or the defaults. */
const adbc_act_opts *act_opts(const adbc_act_opts *opts, adbc_act_opts *store);

/* The element an act on ref goes to: ref itself, or with o->verify its
 * record in a fresh dump (*snap then holds that dump: free it after using
 * *now). where (may be NULL) is filled in. */
int act_resolve(adbc_act_where *where, const adbc_ui_ref **now, adbc_ui_snap **snap,
                adbc_conn *c, const adbc_ui_ref *ref, const adbc_act_opts *o, int64_t deadline);

/* ---- Command builders (pure) ---------------------------------------------- */

/* The typing command for plain text: `input text` words and `input keyevent`
 * runs joined by " && ". sdk >= 35 types spaces as KEYCODE_SPACE; older
 * ones take them inside the text as %s. A literal "%s" is split between two
 * `input text` calls so `input` does not turn it into a space. ADBC_EINVAL
 * when text holds something `input text` cannot type (act_text_plain). */
int act_type_command(char **cmd, const char *text, int sdk);

/* 1 when text is printable ASCII, newline and tab only. */
int act_text_plain(const char *text);

/* The ADB Keyboard broadcast typing text (base64 of its UTF-8). */
int act_adbkbd_command(char **cmd, const char *text);

/* Move to the end of the field, then delete n characters. */
int act_clear_command(char **cmd, size_t n);

/* UTF-8 characters in s (invalid bytes count one each). */
size_t act_utf8_chars(const char *s);

/* Parse the `dumpsys activity activities` / `dumpsys window` lines that
 * adbc_app_top asks for. */
int act_top_parse(char **activity, char **package, const char *out, size_t len);

/* Check PNG bytes: signature, an IHDR chunk first, sane size. */
int act_png_check(const uint8_t *p, size_t len, uint32_t *w, uint32_t *h);

/* web.c: refs of web elements (resource-id "web:..."), and typing into
 * one through the page's DevTools session. */
int act_is_web(const adbc_ui_ref *ref);
int act_web_type(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, const char *text,
                 int clear, const adbc_act_opts *o, int64_t deadline);

#endif
