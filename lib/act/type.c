/* SPDX-License-Identifier: Apache-2.0 */
/* Typing into a field: focus it, wait until it has focus, clear it if
 * asked, type: one round trip to the device.
 *
 * Everything that can refuse is checked before the first tap (the text is
 * typeable, the IME is there, the ref is not stale), so a failed call
 * leaves the screen as it was.
 *
 * Knowing when the field has focus. `input tap` returns once the app has
 * handled the touch (InputManager's WAIT_FOR_FINISH injection), and a view
 * takes focus while handling its ACTION_UP; the input method's client then
 * serves it, which `dumpsys input_method` shows as the client's
 * "mServedView=CLASS{HASH FLAGS .F..." (View.toString: the second flag
 * group's second letter is F while the view has focus). So from the tap
 * on the device polls that dump and types as soon as a focused view is
 * served, or when settle_ms has passed after the tap without one (the
 * fixed wait this replaces, so a device whose dump says nothing costs what
 * it did). That
 * "a focused view is served" means "the tap focused the field" holds only
 * if nothing had focus before it: the ref's own table says so (its dump's
 * focused="true" states, and the frame check in the same round trip says
 * the screen has not drawn since). When the field itself had focus there
 * is nothing to wait for; when another element had it, or the screen drew
 * since the dump, the device waits the full settle_ms. */
#include "act/act_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define ADBKBD_PKG "com.android.adbkeyboard"

/* API level, for how spaces are typed; when it cannot be read, the
 * word-by-word way, which works on every version. */
static int device_sdk(adbc_conn *c, int timeout_ms)
{
    int sdk = act_sdk(c, timeout_ms);
    return sdk > 0 ? sdk : 35;
}

/* The ADB Keyboard only receives its broadcast while it is the current
 * input method; say which of the two things is missing. */
static int check_adbkbd(adbc_conn *c, int timeout_ms)
{
    act_out o;
    int rc = act_run(&o, c, "dumpsys input_method", 4u << 20, timeout_ms);
    if (rc < 0)
        return rc;
    const char *cur = strstr(o.text, "mCurMethodId=");
    int active = cur && strncmp(cur + 13, ADBKBD_PKG "/", sizeof ADBKBD_PKG) == 0;
    act_out_free(&o);
    if (active)
        return 0;
    rc = act_run(&o, c, "pm path " ADBKBD_PKG, 0, timeout_ms);
    if (rc < 0)
        return rc;
    int installed = o.status == 0 && strstr(o.text, "package:") != NULL;
    act_out_free(&o);
    if (installed)
        return core_fail(ADBC_EUNSUPPORTED,
                         "this text is not plain ASCII, which `input text` cannot type, and the "
                         "ADB Keyboard (" ADBKBD_PKG ") is installed but is not the current "
                         "input method: select it with `ime set " ADBKBD_PKG "/.AdbIME`");
    return core_fail(ADBC_EUNSUPPORTED,
                     "this text is not plain ASCII, which `input text` cannot type: install the "
                     "ADB Keyboard IME (" ADBKBD_PKG ") and make it the current input method, "
                     "or type ASCII only");
}

/* Build the typing command for text (before anything is sent). */
static int typing_command(char **cmd, adbc_conn *c, const char *text, const adbc_act_opts *o,
                          int64_t deadline)
{
    *cmd = NULL;
    if (!*text)
        return 0;
    if (!act_text_plain(text)) {
        int rc = check_adbkbd(c, act_left(deadline));
        if (rc < 0)
            return rc;
        return act_adbkbd_command(cmd, text);
    }
    int sdk = o->sdk;
    if (sdk <= 0)
        sdk = strchr(text, ' ') ? device_sdk(c, act_left(deadline)) : 35;
    return act_type_command(cmd, text, sdk);
}

/* Typing into the focused field goes to no element: o->check reads the
 * screen it lands on when it drew since the caller's dump
 * (act_input_checked). */
static int run_typing(adbc_conn *c, const char *clear, const char *type, const adbc_act_opts *o,
                      int64_t deadline)
{
    core_buf b = {0};
    if (clear)
        core_buf_add(&b, clear, strlen(clear));
    if (type && *type) {
        if (b.len)
            core_buf_add(&b, " && ", 4);
        core_buf_add(&b, type, strlen(type));
    }
    if (!b.len && !b.err) {
        core_buf_free(&b);
        return 0; /* nothing to type, nothing to clear */
    }
    char *cmd;
    int rc = act_buf_take(&b, &cmd);
    if (rc < 0)
        return rc;
    rc = act_input_checked(c, cmd, "typing", o, deadline);
    core_free(cmd);
    return rc;
}

/* The focusing tap, the wait for focus, and the clearing and typing for
 * what the field holds at that moment, as one command line. */
typedef struct focus_job {
    int clear;
    const char *type;          /* typing command, NULL or "" for none */
    int settle_ms;
    const adbc_ui_ref *listed; /* the ref's record in its table, or NULL */
    int listed_focus;          /* for listed: FOCUS_* */
} focus_job;

enum { FOCUS_UNKNOWN, FOCUS_NONE, FOCUS_HERE };

/* Where focus was at the table's dump: FOCUS_HERE (on ref), FOCUS_NONE (on
 * no element) or FOCUS_UNKNOWN (on another one). */
static int table_focus(const adbc_ui_reftab *t, const adbc_ui_ref *ref)
{
    if (ref->states & ADBC_UI_FOCUSED)
        return FOCUS_HERE;
    size_t n = adbc_ui_reftab_count(t);
    for (size_t i = 1; i <= n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, (int)i);
        if (r && (r->states & ADBC_UI_FOCUSED))
            return FOCUS_UNKNOWN;
    }
    return FOCUS_NONE;
}

/* The tap and the wait after it (see the top of the file). Polling: the
 * poll starts with the tap, so the dump's own start overlaps it (a poll
 * that reads the state before the tap took effect sees no focused view,
 * since nothing had focus, and polls again), and a timer started once the
 * tap is done ends it after ms; the tap's status is the group's. Not
 * polling: the tap, then the plain wait. The background jobs write nowhere,
 * so nothing they leave running holds the command's output open. A sleep
 * that cannot take fractions sleeps a second instead: longer, never
 * shorter. */
static void tap_and_wait(core_buf *b, int x, int y, int ms, int poll)
{
    if (!poll) {
        core_buf_printf(b, "input tap %d %d", x, y);
        if (ms > 0)
            core_buf_printf(b, " && { sleep %d.%03d || sleep %d; }", ms / 1000, ms % 1000,
                            ms / 1000 + 1);
        return;
    }
    core_buf_printf(b, "{ ( until dumpsys input_method 2>/dev/null | grep -q "
                    "'mServedView=[^ {]*{[0-9a-f]* [^ ]* .F'; do sleep 0.02 || sleep 1; done ) "
                    ">/dev/null 2>&1 & p=$!; if input tap %d %d; then ( sleep %d.%03d || "
                    "sleep %d; kill $p ) >/dev/null 2>&1 & t=$!; wait $p 2>/dev/null; "
                    "kill $t 2>/dev/null; true; else kill $p 2>/dev/null; false; fi; }",
                    x, y, ms / 1000, ms % 1000, ms / 1000 + 1);
}

static int focus_cmd(char **cmd, const adbc_ui_ref *at, void *user)
{
    focus_job *j = user;
    char *wipe = NULL;
    if (j->clear) {
        int rc = act_clear_command(&wipe, act_utf8_chars(at->text));
        if (rc < 0)
            return rc;
    }
    if (at->x < 0 || at->y < 0 || at->x > 65535 || at->y > 65535) {
        core_free(wipe);
        return core_fail(ADBC_EINVAL, "the field's tap point (%d,%d) is off the screen: scroll "
                         "it into view first", at->x, at->y);
    }
    /* The table's word on focus holds only for its own record (the frame
     * check passed); a record found again in a fresh dump gets the full
     * wait. */
    int focus = at == j->listed ? j->listed_focus : FOCUS_UNKNOWN;
    core_buf b = {0};
    tap_and_wait(&b, at->x, at->y, focus == FOCUS_HERE ? 0 : j->settle_ms,
                 focus == FOCUS_NONE && j->settle_ms > 0);
    if (wipe)
        core_buf_printf(&b, " && %s", wipe);
    if (j->type && *j->type)
        core_buf_printf(&b, " && %s", j->type);
    core_free(wipe);
    return act_buf_take(&b, cmd);
}

int adbc_act_type_text(adbc_conn *c, const char *text, const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c || !text)
        return core_fail(ADBC_EINVAL, "adbc_act_type_text: c and text must not be NULL");
    int64_t deadline = core_deadline(o->timeout_ms);
    char *cmd;
    int rc = typing_command(&cmd, c, text, o, deadline);
    if (rc < 0)
        return rc;
    rc = run_typing(c, NULL, cmd, o, deadline);
    core_free(cmd);
    return rc;
}

int adbc_act_type(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, const char *text,
                  int clear, const adbc_act_opts *opts)
{
    adbc_act_opts store;
    const adbc_act_opts *o = act_opts(opts, &store);
    if (!o)
        return ADBC_EINVAL;
    if (!c || !ref || !text)
        return core_fail(ADBC_EINVAL, "adbc_act_type: c, ref and text must not be NULL");
    if (o->settle_ms < 0 || o->settle_ms > 10000)
        return core_fail(ADBC_EINVAL, "settle time %d ms is outside 0..10000", o->settle_ms);
    int64_t deadline = core_deadline(o->timeout_ms);
    if (act_is_web(ref))
        return act_web_type(where, c, ref, text, clear, o, deadline);
    char *type = NULL;
    int rc = typing_command(&type, c, text, o, deadline);
    if (rc < 0)
        return rc;
    focus_job j = {.clear = clear, .type = type, .settle_ms = o->settle_ms};
    /* What the ref's table says about focus counts only where act_on_ref
     * takes its fast way: with verification, the record from that table. */
    if (o->verify && o->refs && adbc_ui_reftab_get(o->refs, ref->ref) == ref) {
        j.listed = ref;
        j.listed_focus = table_focus(o->refs, ref);
    }
    rc = act_on_ref(where, c, ref, o, deadline, focus_cmd, &j);
    core_free(type);
    return rc;
}
