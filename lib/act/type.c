/* SPDX-License-Identifier: Apache-2.0 */
/* Typing into a field: focus it, let it settle, clear it if asked, type.
 *
 * Everything that can refuse is checked before the first tap (the text is
 * typeable, the IME is there, the ref is not stale), so a failed call
 * leaves the screen as it was. */
#include "act/act_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"

#define ADBKBD_PKG "com.android.adbkeyboard"

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

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

static int run_typing(adbc_conn *c, const char *clear, const char *type, int64_t deadline)
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
    rc = act_run_input(c, cmd, "typing", deadline);
    core_free(cmd);
    return rc;
}

/* The focusing tap, and the clearing command for what the field holds at
 * that moment. */
typedef struct focus_job {
    int clear;
    char *wipe;
} focus_job;

static int focus_cmd(char **cmd, const adbc_ui_ref *at, void *user)
{
    focus_job *j = user;
    core_free(j->wipe);
    j->wipe = NULL;
    if (j->clear) {
        int rc = act_clear_command(&j->wipe, act_utf8_chars(at->text));
        if (rc < 0)
            return rc;
    }
    if (at->x < 0 || at->y < 0 || at->x > 65535 || at->y > 65535)
        return core_fail(ADBC_EINVAL, "the field's tap point (%d,%d) is off the screen: scroll "
                         "it into view first", at->x, at->y);
    core_buf b = {0};
    core_buf_printf(&b, "input tap %d %d", at->x, at->y);
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
    rc = run_typing(c, NULL, cmd, deadline);
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
    focus_job j = {.clear = clear};
    rc = act_on_ref(where, c, ref, o, deadline, focus_cmd, &j);
    if (rc == 0 && o->settle_ms > 0) {
        int left = core_remaining(deadline);
        pause_ms(left >= 0 && left < o->settle_ms ? left : o->settle_ms);
    }
    if (rc == 0)
        rc = run_typing(c, j.wipe, type, deadline);
    core_free(type);
    core_free(j.wipe);
    return rc;
}
