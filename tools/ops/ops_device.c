/* SPDX-License-Identifier: Apache-2.0 */
/* Device operations beyond acts and snapshots (ops_device.h). The device
 * commands and the output they are read from are AOSP's: `pm
 * query-activities --components` (PackageManagerShellCommand: one
 * ComponentName.flattenToShortString() a line, or "No activities found"),
 * `input tap|draganddrop` (InputShellCommand, Input.java before Android 12),
 * `wm size|density` (WindowManagerShellCommand: "Physical size: WxH",
 * "Override size: WxH", "Physical density: N", "Override density: N"),
 * `settings get|put system` ("null" for an unset key), `screenrecord
 * --time-limit` (1..180 s; SIGINT or SIGHUP ends it with the file finished),
 * `logcat -b crash`, `dumpsys dropbox` (DropBoxManagerService: "DATE TIME
 * TAG (text, N bytes)" a line, oldest first) and `cmd statusbar
 * expand-notifications|collapse` (StatusBarShellCommand). */
#include "ops_device.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/act.h"
#include "adbc/error.h"
#include "adbc/shell.h"
#include "adbc/sync.h"

#define RUN_MAX_OUTPUT (4u << 20)
/* Where the recording and the remembered rotation live on the device
 * (the shell user can write there on every version). */
#define REC_VIDEO "/data/local/tmp/adbc-record.mp4"
#define REC_STOP REC_VIDEO ".stop"
#define ROT_STATE "/data/local/tmp/.adbc-rotation"

/* Run cmd; fail on a transport error, a nonzero exit status, or (without
 * shell_v2, where the status is unknown) an "Error"/"Exception" on stderr. */
static int run(ops_ctx *c, const char *what, const char *cmd, char **out)
{
    adbc_run_result res;
    memset(&res, 0, sizeof res);
    if (out)
        *out = NULL;
    int rc = adbc_run(&res, c->conn, ADBC_SHELL_AUTO, cmd, NULL, 0, RUN_MAX_OUTPUT,
                      ops_remaining(c));
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return ops_fail_adbc(&c->err, rc, what);
    }
    const char *o = res.out ? (const char *)res.out : "";
    const char *e = res.err_len ? (const char *)res.err : "";
    if (res.exit_code > 0 || (res.exit_code < 0 && (strstr(e, "Error") || strstr(e, "Exception")))) {
        ops_fail(&c->err, OPS_EFAIL, "%s failed (exit status %d): the device said: %.600s%s%.600s",
                 what, res.exit_code, *e ? e : o, *e && *o ? " / " : "", *e ? o : "");
        adbc_run_result_clear(&res);
        return -1;
    }
    if (out && !(*out = strdup(o))) {
        adbc_run_result_clear(&res);
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    adbc_run_result_clear(&res);
    return 0;
}

int ops_run_argv(ops_ctx *c, const char *what, const char *const *argv, char **out)
{
    if (!c || !what || !argv || !argv[0])
        return -1;
    size_t len = 1, cap = 0;
    char *cmd = NULL;
    for (int i = 0; argv[i]; i++) {
        char *q = NULL;
        if (adbc_shell_quote(&q, argv[i]) < 0) {
            free(cmd);
            return ops_fail(&c->err, OPS_EFAIL, "out of memory");
        }
        size_t n = strlen(q);
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *g = realloc(cmd, cap);
            if (!g) {
                adbc_free(q);
                free(cmd);
                return ops_fail(&c->err, OPS_EFAIL, "out of memory");
            }
            if (!cmd)
                g[0] = 0;
            cmd = g;
        }
        if (i)
            strcat(cmd, " ");
        strcat(cmd, q);
        len += n + 1;
        adbc_free(q);
    }
    int rc = run(c, what, cmd, out);
    free(cmd);
    return rc;
}

/* ---- apps ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ops_apps(ops_ctx *c, char **text, int *count)
{
    static const char *const argv[] = {"pm", "query-activities", "--components", "-a",
                                       "android.intent.action.MAIN", "-c",
                                       "android.intent.category.LAUNCHER", NULL};
    char *out = NULL;
    *text = NULL;
    *count = 0;
    if (ops_run_argv(c, "listing the apps (pm query-activities)", argv, &out) != 0)
        return -1;
    size_t n = 0, cap = 64;
    char **pk = malloc(cap * sizeof *pk);
    if (!pk) {
        free(out);
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    for (char *line = strtok(out, "\r\n"); line; line = strtok(NULL, "\r\n")) {
        while (*line == ' ')
            line++;
        char *slash = strchr(line, '/');
        if (!slash)
            continue; /* "No activities found" */
        *slash = 0;
        if (!ops_android_name(line))
            continue;
        if (n == cap) {
            char **g = realloc(pk, (cap *= 2) * sizeof *pk);
            if (!g) {
                free(pk);
                free(out);
                return ops_fail(&c->err, OPS_EFAIL, "out of memory");
            }
            pk = g;
        }
        pk[n++] = line;
    }
    qsort(pk, n, sizeof *pk, cmp_str);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(pk[i]) + 1;
    char *t = malloc(total), *w = t;
    if (!t) {
        free(pk);
        free(out);
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(pk[i], pk[i - 1]) == 0)
            continue;
        w += sprintf(w, "%s\n", pk[i]);
        (*count)++;
    }
    *w = 0;
    free(pk);
    free(out);
    *text = t;
    snprintf(c->done, sizeof c->done, "%d apps with a launcher activity", *count);
    return 0;
}

int ops_uninstall(ops_ctx *c, const char *pkg, const char *const *allow)
{
    if (!pkg || !ops_android_name(pkg))
        return ops_fail(&c->err, OPS_EARG, "argument 'package' must be an Android package "
                                           "name such as com.example.app");
    int listed = 0;
    for (int i = 0; allow && allow[i] && !listed; i++)
        listed = strcmp(allow[i], pkg) == 0;
    if (!listed)
        return ops_fail(&c->err, OPS_EARG, "refused: %s is not on the list of packages that "
                        "may be uninstalled; a person must add it (adbc-mcp: [apps] uninstall "
                        "in the config; adbc-serve: --allow-uninstall %s)", pkg, pkg);
    int rc = adbc_app_uninstall(c->conn, pkg, ops_remaining(c));
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "uninstall");
    snprintf(c->done, sizeof c->done, "uninstalled %s", pkg);
    return 0;
}

/* ---- URLs ---- */

int ops_url_check(ops_err *e, const char *url)
{
    if (!url)
        return ops_fail(e, OPS_EARG, "argument 'url' is missing");
    size_t n = strlen(url);
    if (n == 0 || n > 2048)
        return ops_fail(e, OPS_EARG, "argument 'url' must be 1..2048 bytes");
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return ops_fail(e, OPS_EARG, "argument 'url' must start with http:// or https:// (no "
                                     "other scheme is opened)");
    const char *host = url + (url[4] == 's' ? 8 : 7);
    if (!*host || *host == '/')
        return ops_fail(e, OPS_EARG, "argument 'url' names no host");
    for (const char *p = url; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= 0x20 || ch >= 0x7f)
            return ops_fail(e, OPS_EARG, "argument 'url' holds a blank, a control byte or "
                            "non-ASCII at byte %zu: percent-encode it", (size_t)(p - url));
        if (strchr(";$`\\\"'<>|{}^", ch))
            return ops_fail(e, OPS_EARG, "argument 'url' holds '%c' at byte %zu: a URL opened "
                            "here has none of ;$`\\\"'<>|{}^ (percent-encode them)", ch,
                            (size_t)(p - url));
    }
    return 0;
}

int ops_open_url(ops_ctx *c, const char *url)
{
    if (ops_url_check(&c->err, url) != 0)
        return -1;
    adbc_intent in;
    memset(&in, 0, sizeof in);
    in.size = sizeof in;
    in.action = "android.intent.action.VIEW";
    in.data = url;
    int rc = adbc_app_start(c->conn, &in, ops_remaining(c));
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "open_url");
    snprintf(c->done, sizeof c->done, "opened %.400s", url);
    return 0;
}

/* ---- gestures ---- */

int ops_act_point(ops_ctx *c, const ops_act *a, int *x, int *y)
{
    adbc_act_opts o;
    adbc_ui_opts uo;
    ops_act_opts(c, &o, &uo);
    if (a->has_xy) {
        *x = a->x;
        *y = a->y;
        return 0;
    }
    if (a->cell) {
        adbc_grid g;
        int rc = adbc_act_grid(&g, c->conn, &o);
        if (rc == 0)
            rc = adbc_grid_cell(x, y, &g, a->cell);
        return rc < 0 ? ops_fail_adbc(&c->err, rc, "grid cell") : 0;
    }
    if (a->has_sel) {
        int ref = 0;
        if (ops_snapshot(c) < 0 || ops_select(&ref, &c->tier, *c->last, &a->sel, &c->err) < 0)
            return -1;
        const adbc_ui_ref *r = adbc_ui_reftab_get(adbc_ui_snap_refs(*c->last), ref);
        *x = r->x;
        *y = r->y;
        c->acted_ref = ref;
        return 0;
    }
    const adbc_ui_ref *old = ops_ref(c, a->ref);
    if (!old)
        return -1;
    adbc_ui_snap *fresh = NULL;
    const adbc_ui_ref *found = NULL;
    adbc_act_how how;
    int rc = adbc_act_locate(&fresh, &found, &how, c->conn, old, &o);
    if (rc == 0) {
        *x = found->x;
        *y = found->y;
        c->acted_ref = a->ref;
    }
    adbc_ui_snap_free(fresh);
    return rc < 0 ? ops_fail_adbc(&c->err, rc, "finding the element again") : 0;
}

/* Android 12 (API 31) moved input into system_server: `cmd input` is a
 * binder call where `input` starts a JVM (the library's act_input_prefix
 * makes the same choice for every act). */
#define SDK_31 "[ \"$(getprop ro.build.version.sdk)\" -ge 31 ] 2>/dev/null"

int ops_double_tap(ops_ctx *c, int x, int y)
{
    if (x < 0 || y < 0 || x > 65535 || y > 65535)
        return ops_fail(&c->err, OPS_EARG, "point (%d,%d) is off the screen", x, y);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "if " SDK_31 "; then cmd input tap %d %d && cmd input tap %d %d; "
             "else input tap %d %d & sleep 0.15; input tap %d %d; b=$?; wait $! && exit $b; fi",
             x, y, x, y, x, y, x, y);
    if (run(c, "double_tap", cmd, NULL) != 0)
        return -1;
    snprintf(c->done, sizeof c->done, "double-tapped (%d,%d)", x, y);
    return 0;
}

int ops_drag(ops_ctx *c, int x1, int y1, int x2, int y2, int ms)
{
    if (x1 < 0 || y1 < 0 || x2 < 0 || y2 < 0 || x1 > 65535 || y1 > 65535 || x2 > 65535 ||
        y2 > 65535 || ms < 1 || ms > 60000)
        return ops_fail(&c->err, OPS_EARG, "drag points must be on the screen and the duration "
                                           "1..60000 ms");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "if " SDK_31 "; then cmd input draganddrop %d %d %d %d %d; "
             "else input draganddrop %d %d %d %d %d; fi",
             x1, y1, x2, y2, ms, x1, y1, x2, y2, ms);
    if (run(c, "drag (input draganddrop; Android 11 and older may lack it)", cmd, NULL) != 0)
        return -1;
    snprintf(c->done, sizeof c->done, "dragged (%d,%d) -> (%d,%d) in %d ms", x1, y1, x2, y2, ms);
    return 0;
}

/* ---- the screen ---- */

/* The number after "PREFIX" on a line of text, or -1. */
static long after(const char *text, const char *prefix)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        while (*p == ' ')
            p++;
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            char *end;
            long v = strtol(p + strlen(prefix), &end, 10);
            if (end != p + strlen(prefix) && v >= 0 && v < 1000000)
                return v;
        }
    }
    return -1;
}

int ops_screen_info(ops_ctx *c, ops_screen *s)
{
    memset(s, 0, sizeof *s);
    char *out = NULL;
    if (run(c, "screen size (wm size; wm density)", "wm size; wm density", &out) != 0)
        return -1;
    long pw = after(out, "Physical size: "), ow = after(out, "Override size: ");
    const char *px = strstr(out, "Physical size: "), *ox = strstr(out, "Override size: ");
    long ph = px && strchr(px, 'x') ? strtol(strchr(px, 'x') + 1, NULL, 10) : -1;
    long oh = ox && strchr(ox, 'x') ? strtol(strchr(ox, 'x') + 1, NULL, 10) : -1;
    long pd = after(out, "Physical density: "), od = after(out, "Override density: ");
    free(out);
    if (pw <= 0 || ph <= 0)
        return ops_fail(&c->err, OPS_EFAIL, "wm size printed no \"Physical size: WxH\" line: "
                                            "this device's wm is not AOSP's");
    s->phys_width = (int)pw;
    s->phys_height = (int)ph;
    s->width = ow > 0 && oh > 0 ? (int)ow : (int)pw;
    s->height = ow > 0 && oh > 0 ? (int)oh : (int)ph;
    s->phys_density = pd > 0 ? (int)pd : 0;
    s->density = od > 0 ? (int)od : s->phys_density;
    snprintf(c->done, sizeof c->done, "screen %dx%d, %d dpi", s->width, s->height, s->density);
    return 0;
}

int ops_orientation_get(ops_ctx *c, ops_orient *o)
{
    char *out = NULL;
    if (run(c, "orientation (settings get system)",
            "settings get system accelerometer_rotation; settings get system user_rotation; "
            "[ -f " ROT_STATE " ] && echo locked-by-adbc; true", &out) != 0)
        return -1;
    char *l1 = strtok(out, "\r\n"), *l2 = strtok(NULL, "\r\n"), *l3 = strtok(NULL, "\r\n");
    o->auto_rotate = l1 && (strcmp(l1, "0") == 0 || strcmp(l1, "1") == 0) ? atoi(l1) : -1;
    o->rotation = l2 && strlen(l2) == 1 && *l2 >= '0' && *l2 <= '3' ? (*l2 - '0') * 90 : -1;
    o->locked_by_adbc = l3 && strcmp(l3, "locked-by-adbc") == 0;
    free(out);
    snprintf(c->done, sizeof c->done, "auto-rotate %s, rotation %d", o->auto_rotate == 1 ? "on"
             : o->auto_rotate == 0 ? "off" : "unset", o->rotation);
    return 0;
}

int ops_orientation_set(ops_ctx *c, int degrees)
{
    char cmd[1024];
    if (degrees == -1) {
        if (run(c, "restoring the rotation",
                "[ -f " ROT_STATE " ] || { echo 'nothing to restore'; exit 3; }; "
                "{ read a; read u; } < " ROT_STATE "; "
                "case $a in 0|1) settings put system accelerometer_rotation $a ;; "
                "*) settings delete system accelerometer_rotation ;; esac; "
                "case $u in 0|1|2|3) settings put system user_rotation $u ;; "
                "*) settings delete system user_rotation ;; esac; rm -f " ROT_STATE, NULL) != 0) {
            if (strstr(c->err.msg, "nothing to restore"))
                return ops_fail(&c->err, OPS_EFAIL, "no rotation set by adbc is in force: "
                                "nothing to restore");
            return -1;
        }
        snprintf(c->done, sizeof c->done, "rotation restored to what it was before");
        return 0;
    }
    if (degrees != 0 && degrees != 90 && degrees != 180 && degrees != 270)
        return ops_fail(&c->err, OPS_EARG, "rotation must be 0, 90, 180 or 270 (or \"restore\")");
    snprintf(cmd, sizeof cmd,
             "[ -f " ROT_STATE " ] || { settings get system accelerometer_rotation; "
             "settings get system user_rotation; } > " ROT_STATE " || exit 1; "
             "settings put system accelerometer_rotation 0 && "
             "settings put system user_rotation %d", degrees / 90);
    if (run(c, "setting the rotation (settings put system)", cmd, NULL) != 0)
        return -1;
    snprintf(c->done, sizeof c->done, "rotation locked at %d degrees (restore puts back the "
             "settings as they were)", degrees);
    return 0;
}

/* ---- screen recording ---- */

/* A recording is screenrecord under a shell the device's pool entry holds
 * as a stream. The shell ends it with SIGHUP (screenrecord's
 * configureSignals: SIGINT or SIGHUP stops it and it finishes the file;
 * SIGINT is ignored by a background job) when asked (a file appears beside
 * the video) or when the stream goes away (adbd's hang-up, SIGHUP to the
 * shell: shell_service), then exits: the stream's end says the file is
 * whole. A recording never outlives the connection that started it. */
int ops_record_start(ops_ctx *c, ops_dev *d, int seconds)
{
    if (seconds < 1 || seconds > 180)
        return ops_fail(&c->err, OPS_EARG, "time limit must be 1..180 s (screenrecord's bound)");
    if (d->rec)
        return ops_fail(&c->err, OPS_EFAIL, "a recording is already running on this device: "
                                            "stop it first");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "rm -f " REC_STOP "; trap 'kill -HUP $p 2>/dev/null' HUP; "
             "screenrecord --time-limit %d " REC_VIDEO " & p=$!; s=0; "
             "while kill -0 $p 2>/dev/null; do "
             "if [ $s = 0 ] && [ -f " REC_STOP " ]; then kill -HUP $p; s=1; fi; sleep 0.2; done; "
             "wait $p; rm -f " REC_STOP, seconds);
    adbc_shell *sh = NULL;
    int rc = adbc_shell_open(&sh, c->conn, cmd, NULL, ops_remaining(c));
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "screenrecord");
    /* A moment for an early failure (no display, no encoder) to show. */
    char out[1024];
    size_t n = 0;
    int64_t until = ops_now_ms() + 300;
    for (;;) {
        int64_t w = until - ops_now_ms();
        int fd = 0;
        ssize_t k = w > 0 && n + 1 < sizeof out
                        ? adbc_shell_read(sh, &fd, out + n, sizeof out - 1 - n, (int)w)
                        : ADBC_ETIMEDOUT;
        if (k == ADBC_ETIMEDOUT)
            break; /* still running: recording */
        if (k <= 0) {
            out[n] = 0;
            adbc_shell_close(sh);
            if (k < 0)
                return ops_fail_adbc(&c->err, (int)k, "screenrecord");
            return ops_fail(&c->err, OPS_EFAIL, "screenrecord ended at once: %.600s",
                            n ? out : "(it said nothing)");
        }
        n += (size_t)k;
    }
    d->rec = sh;
    snprintf(c->done, sizeof c->done, "recording the screen (at most %d s) into %s", seconds,
             REC_VIDEO);
    return 0;
}

int ops_record_stop(ops_ctx *c, ops_dev *d, const char *local, char *remote, size_t remote_len,
                    uint64_t *bytes)
{
    *bytes = 0;
    snprintf(remote, remote_len, "%s", REC_VIDEO);
    if (!d->rec)
        return ops_fail(&c->err, OPS_EFAIL, "no recording is running on this device "
                                            "(screen_record start begins one)");
    if (run(c, "stopping screenrecord", ": > " REC_STOP, NULL) != 0)
        return -1;
    /* Its end: the shell exits once screenrecord has finished the file
     * (the time limit may have ended it already). At most 10 s. */
    int64_t until = ops_now_ms() + 10000;
    ssize_t k;
    char buf[4096];
    do {
        int64_t w = until - ops_now_ms();
        int fd = 0;
        k = w > 0 ? adbc_shell_read(d->rec, &fd, buf, sizeof buf, (int)w) : ADBC_ETIMEDOUT;
    } while (k > 0);
    adbc_shell_close(d->rec);
    d->rec = NULL;
    if (k < 0)
        return ops_fail(&c->err, k == ADBC_ETIMEDOUT ? OPS_ETIMEOUT : OPS_EDEVICE,
                        "screenrecord did not end within 10 s of being stopped; the video may "
                        "be incomplete at %s", REC_VIDEO);
    if (run(c, "checking the video", "[ -s " REC_VIDEO " ] || { echo 'no video was written'; "
            "exit 6; }", NULL) != 0)
        return -1;
    if (!local) {
        snprintf(c->done, sizeof c->done, "recording stopped; the video is on the device at %s",
                 REC_VIDEO);
        return 0;
    }
    adbc_sync *s = NULL;
    adbc_sync_result res;
    memset(&res, 0, sizeof res);
    int rc = adbc_sync_open(&s, c->conn, ops_remaining(c));
    if (rc == 0)
        rc = adbc_sync_pull(&res, s, REC_VIDEO, local, NULL, ops_remaining(c));
    adbc_sync_close(s);
    if (rc < 0)
        return ops_fail_adbc(&c->err, rc, "pulling the video");
    *bytes = res.bytes;
    run(c, "removing the video from the device", "rm -f " REC_VIDEO, NULL);
    snprintf(c->done, sizeof c->done, "recording stopped: %llu bytes in %.400s",
             (unsigned long long)res.bytes, local);
    return 0;
}

/* ---- the crash log ---- */

/* A dropbox listing line "YYYY-MM-DD HH:MM:SS TAG (...)" of a crash, an
 * ANR or a tombstone. */
static int crash_entry(const char *l)
{
    if (strlen(l) < 22 || l[4] != '-' || l[7] != '-' || l[10] != ' ' || l[13] != ':' ||
        l[16] != ':' || l[19] != ' ' || !isdigit((unsigned char)l[0]))
        return 0;
    const char *tag = l + 20, *end = strchr(tag, ' ');
    size_t n = end ? (size_t)(end - tag) : strlen(tag);
    char t[128];
    if (n == 0 || n >= sizeof t)
        return 0;
    memcpy(t, tag, n);
    t[n] = 0;
    return strstr(t, "crash") || strstr(t, "_anr") || strstr(t, "TOMBSTONE") ||
           strstr(t, "watchdog");
}

int ops_crashlog(ops_ctx *c, int lines, int entries, char **text)
{
    *text = NULL;
    if (lines < 1 || lines > 5000 || entries < 1 || entries > 200)
        return ops_fail(&c->err, OPS_EARG, "lines must be 1..5000 and entries 1..200");
    char cmd[128], *log = NULL, *box = NULL;
    snprintf(cmd, sizeof cmd, "logcat -b crash -d -t %d", lines);
    if (run(c, "logcat -b crash", cmd, &log) != 0 ||
        run(c, "dumpsys dropbox", "dumpsys dropbox", &box) != 0) {
        free(log);
        return -1;
    }
    /* The listing is oldest first: keep the crash lines, print from the end. */
    size_t n = 0, cap = 16;
    char **e = malloc(cap * sizeof *e);
    for (char *l = e ? strtok(box, "\r\n") : NULL; l; l = strtok(NULL, "\r\n")) {
        if (!crash_entry(l))
            continue;
        if (n == cap) {
            char **g = realloc(e, (cap *= 2) * sizeof *e);
            if (!g)
                break;
            e = g;
        }
        e[n++] = l;
    }
    char *out = NULL;
    size_t olen = 0;
    FILE *f = e ? open_memstream(&out, &olen) : NULL;
    if (!f) {
        free(e);
        free(log);
        free(box);
        return ops_fail(&c->err, OPS_EFAIL, "out of memory");
    }
    fprintf(f, "crash buffer (logcat -b crash, last %d lines):\n%s%s", lines,
            *log ? log : "(empty)\n", *log && log[strlen(log) - 1] != '\n' ? "\n" : "");
    size_t shown = n < (size_t)entries ? n : (size_t)entries;
    fprintf(f, "dropbox crash entries, newest first (%zu of %zu):\n", shown, n);
    for (size_t i = 0; i < shown; i++)
        fprintf(f, "%s\n", e[n - 1 - i]);
    if (!n)
        fprintf(f, "(none)\n");
    fclose(f);
    free(e);
    free(log);
    free(box);
    *text = out;
    snprintf(c->done, sizeof c->done, "crash log: %zu dropbox crash entries", n);
    return 0;
}

/* ---- the notification shade ---- */

int ops_shade(ops_ctx *c, int open)
{
    const char *const argv[] = {"cmd", "statusbar", open ? "expand-notifications" : "collapse",
                                NULL};
    if (ops_run_argv(c, open ? "opening the notification shade" : "closing the shade", argv,
                     NULL) != 0)
        return -1;
    snprintf(c->done, sizeof c->done, "notification shade %s", open ? "opened" : "closed");
    return 0;
}
