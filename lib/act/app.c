/* SPDX-License-Identifier: Apache-2.0 */
/* Apps: launch, start an intent, force-stop, and what is on top.
 *
 * These drive Android's own tools (monkey, am, dumpsys) and read their
 * printed results, since their exit status is not reliable across
 * versions: `am start` exits 0 after "Error: Activity not started". */
#include "act/act_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ui/ui_observe.h"

static int check_package(const char *package)
{
    if (!package || !*package || strlen(package) > 255)
        return core_fail(ADBC_EINVAL, "a package name is 1 to 255 characters (like "
                         "com.example.app)");
    return 0;
}

int adbc_app_launch(adbc_conn *c, const char *package, int timeout_ms)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_app_launch: no connection");
    int rc = check_package(package);
    if (rc < 0)
        return rc;
    core_buf b = {0};
    core_buf_add(&b, "monkey -p ", 10);
    act_buf_quote(&b, package);
    core_buf_add(&b, " -c android.intent.category.LAUNCHER 1", 38);
    char *cmd;
    if ((rc = act_buf_take(&b, &cmd)) < 0)
        return rc;
    act_out o;
    rc = act_run(&o, c, cmd, 0, timeout_ms);
    core_free(cmd);
    if (rc < 0)
        return rc;
    if (strstr(o.text, "No activities found"))
        rc = core_fail(ADBC_ENOTFOUND, "%s has no launcher activity on the device (is it "
                       "installed? `adbc-snap shell pm list packages` lists what is)", package);
    else if (o.status != 0 || !strstr(o.text, "Events injected: 1"))
        rc = core_fail(ADBC_EREMOTE, "launching %s failed (status %d): %.300s", package,
                       o.status, o.text);
    act_out_free(&o);
    return rc;
}

static int check_extra(const adbc_intent_extra *e)
{
    if (!e->key || !*e->key || !e->value)
        return core_fail(ADBC_EINVAL, "an intent extra needs a key and a value");
    if (e->type == 'i') {
        char *end;
        errno = 0;
        long long v = strtoll(e->value, &end, 10);
        if (end == e->value || *end || errno || v < INT32_MIN || v > INT32_MAX)
            return core_fail(ADBC_EINVAL, "int extra %.60s=\"%.40s\" is not a 32-bit decimal "
                             "number", e->key, e->value);
    } else if (e->type == 'b') {
        if (strcmp(e->value, "true") != 0 && strcmp(e->value, "false") != 0)
            return core_fail(ADBC_EINVAL, "bool extra %.60s=\"%.40s\" must be true or false",
                             e->key, e->value);
    } else if (e->type != 's') {
        return core_fail(ADBC_EINVAL, "intent extra type '%c' is not s, i or b", e->type);
    }
    return 0;
}

int adbc_app_start(adbc_conn *c, const adbc_intent *in, int timeout_ms)
{
    if (!c || !in)
        return core_fail(ADBC_EINVAL, "adbc_app_start: c and intent must not be NULL");
    adbc_intent own = {.size = sizeof own};
    if (core_abi_take(&own, sizeof own, in, "adbc_intent") < 0)
        return ADBC_EINVAL;
    in = &own;
    if (!in->action && !in->data && !in->component)
        return core_fail(ADBC_EINVAL, "an intent needs an action, a data URI or a component");
    if (in->nextras && !in->extras)
        return core_fail(ADBC_EINVAL, "intent has %zu extras but no array", in->nextras);
    for (size_t i = 0; i < in->nextras; i++) {
        int rc = check_extra(&in->extras[i]);
        if (rc < 0)
            return rc;
    }
    core_buf b = {0};
    core_buf_add(&b, "am start", 8);
    const struct {
        const char *flag, *value;
    } parts[] = {{" -a ", in->action}, {" -d ", in->data}, {" -n ", in->component}};
    for (size_t i = 0; i < 3; i++) {
        if (!parts[i].value)
            continue;
        core_buf_add(&b, parts[i].flag, 4);
        act_buf_quote(&b, parts[i].value);
    }
    for (size_t i = 0; i < in->nextras; i++) {
        const adbc_intent_extra *e = &in->extras[i];
        core_buf_printf(&b, " --e%c ", e->type == 's' ? 's' : e->type == 'i' ? 'i' : 'z');
        act_buf_quote(&b, e->key);
        core_buf_add(&b, " ", 1);
        act_buf_quote(&b, e->value);
    }
    char *cmd;
    int rc = act_buf_take(&b, &cmd);
    if (rc < 0)
        return rc;
    rc = act_run_ok(c, cmd, "am start", timeout_ms);
    core_free(cmd);
    return rc;
}

int adbc_app_stop(adbc_conn *c, const char *package, int timeout_ms)
{
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_app_stop: no connection");
    int rc = check_package(package);
    if (rc < 0)
        return rc;
    core_buf b = {0};
    core_buf_add(&b, "am force-stop ", 14);
    act_buf_quote(&b, package);
    char *cmd;
    if ((rc = act_buf_take(&b, &cmd)) < 0)
        return rc;
    rc = act_run_ok(c, cmd, "am force-stop", timeout_ms);
    core_free(cmd);
    return rc;
}

/* ---- what is on top -------------------------------------------------------- */

/* The first line of s holding key as a word start (so "ResumedActivity"
 * does not find "mLastResumedActivity"), or NULL. */
static const char *line_with(const char *s, size_t len, const char *key, size_t *llen)
{
    const char *end = s + len;
    size_t kl = strlen(key);
    for (const char *p = s; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        for (const char *q = p; q + kl <= le; q++)
            if (memcmp(q, key, kl) == 0 && (q == p || !isalnum((unsigned char)q[-1]))) {
                *llen = (size_t)(le - p);
                return p;
            }
        p = le + 1;
    }
    return NULL;
}

/* In "...Record{hash uN WORD ...}" or "Window{hash uN TITLE}", the text
 * after the user id up to the closing brace (whole) or the next space. */
static int after_user(const char *line, size_t n, const char *open, int whole, const char **w,
                      size_t *wl)
{
    size_t ol = strlen(open);
    for (size_t i = 0; i + ol <= n; i++) {
        if (memcmp(line + i, open, ol) != 0)
            continue;
        const char *p = line + i + ol, *end = line + n;
        const char *close = memchr(p, '}', (size_t)(end - p));
        if (!close)
            return 0;
        /* skip the hash, find " uN " */
        for (const char *q = p; q + 2 < close; q++) {
            if (q[0] != ' ' || q[1] != 'u' || q[2] < '0' || q[2] > '9')
                continue;
            const char *r = q + 2;
            while (r < close && *r >= '0' && *r <= '9')
                r++;
            if (r >= close || *r != ' ')
                continue;
            r++;
            const char *e = r;
            while (e < close && (whole || *e != ' '))
                e++;
            *w = r;
            *wl = (size_t)(e - r);
            return *wl > 0;
        }
        return 0;
    }
    return 0;
}

int act_top_parse(char **activity, char **package, const char *out, size_t len)
{
    const char *act = NULL, *pkg = NULL;
    size_t al = 0, pl = 0, ll;
    /* Android 10+ prints topResumedActivity, older ones mResumedActivity,
     * 14+ also "ResumedActivity:"; take the first that names a record. */
    static const char *const keys[] = {"topResumedActivity", "mResumedActivity",
                                       "ResumedActivity"};
    const char *line;
    for (size_t i = 0; i < 3 && !act; i++) {
        line = line_with(out, len, keys[i], &ll);
        if (!line || !after_user(line, ll, "ActivityRecord{", 0, &act, &al))
            act = NULL;
    }
    const char *fa = NULL;
    size_t fal = 0;
    line = line_with(out, len, "mFocusedApp", &ll);
    if (line && !after_user(line, ll, "ActivityRecord{", 0, &fa, &fal))
        fa = NULL;
    if (!act && fa) {
        act = fa;
        al = fal;
    }
    line = line_with(out, len, "mCurrentFocus", &ll);
    const char *title;
    size_t tl;
    if (line && after_user(line, ll, "Window{", 1, &title, &tl)) {
        const char *slash = memchr(title, '/', tl);
        if (slash) {
            pkg = title;
            pl = (size_t)(slash - title);
        }
    }
    if (!pkg && fa) { /* a system window has focus: the focused app's package */
        const char *slash = memchr(fa, '/', fal);
        if (slash) {
            pkg = fa;
            pl = (size_t)(slash - fa);
        }
    }
    if (!pkg && act) { /* no window lines (an observation asks only for the
                          activity): the resumed activity's package */
        const char *slash = memchr(act, '/', al);
        if (slash) {
            pkg = act;
            pl = (size_t)(slash - act);
        }
    }
    char *a = NULL, *p = NULL;
    if (activity && !(a = core_strndup(act ? act : "", al)))
        return core_fail(ADBC_ENOMEM, "out of memory");
    if (package && !(p = core_strndup(pkg ? pkg : "", pl))) {
        core_free(a);
        return core_fail(ADBC_ENOMEM, "out of memory");
    }
    if (activity)
        *activity = a;
    if (package)
        *package = p;
    return 0;
}

int adbc_app_top(char **activity, char **package, adbc_conn *c, int timeout_ms)
{
    if (activity)
        *activity = NULL;
    if (package)
        *package = NULL;
    if (!c)
        return core_fail(ADBC_EINVAL, "adbc_app_top: no connection");
    act_out o;
    /* grep on the device: the full dumps run to hundreds of kilobytes. */
    int rc = act_run(&o, c,
                     "dumpsys activity activities | grep ResumedActivity; "
                     "dumpsys window | grep -e mCurrentFocus -e mFocusedApp",
                     0, timeout_ms);
    if (rc < 0)
        return rc;
    rc = act_top_parse(activity, package, o.text, o.len);
    act_out_free(&o);
    return rc;
}

int adbc_act_observe(adbc_ui_snap **snap, char **activity, char **package, adbc_conn *c,
                     const adbc_ui_opts *opts)
{
    if (activity)
        *activity = NULL;
    if (package)
        *package = NULL;
    if (!snap || !c)
        return core_fail(ADBC_EINVAL, "adbc_act_observe: snap and c must not be NULL");
    *snap = NULL;
    if (!activity && !package)
        return adbc_ui_snapshot(snap, c, opts);
    /* One dumpsys, beside the dump: the activity record names its package,
     * and the dump names every window's. */
    char *side = NULL;
    int rc = ui_snapshot_with(snap, &side, c, opts,
                              "dumpsys activity activities | grep ResumedActivity");
    if (rc < 0) {
        core_free(side);
        return rc;
    }
    rc = act_top_parse(activity, package, side, strlen(side));
    core_free(side);
    if (rc < 0) {
        adbc_ui_snap_free(*snap);
        *snap = NULL;
    }
    return rc;
}
