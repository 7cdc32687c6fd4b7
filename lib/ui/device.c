/* SPDX-License-Identifier: Apache-2.0 */
/* Dumps from a device: uiautomator in one exec round trip.
 *
 * `uiautomator dump` writes the XML to a file and prints a line; when it
 * fails ("ERROR: null root node returned by UiTestAutomationBridge." while
 * windows change, "ERROR: could not get idle state." on a screen that keeps
 * animating) it prints that instead, still with exit status 0. So one
 * shell script, sent over exec: (binary-safe), runs it up to N times and
 * frames each result with a marker line carrying a per-call nonce:
 *
 *   @adbc-ui-NONCE fail 1           then what uiautomator printed
 *   @adbc-ui-NONCE ok 2 --compressed
 *   <the XML, byte for byte>
 *
 * Only a marker line can start the XML, and uiautomator's own output never
 * contains the nonce, so an error line is never mistaken for a dump. After
 * an idle-state error the next run adds --compressed, which settles for a
 * less detailed tree on animating screens. The file sits in $TMPDIR (adbd
 * sets it to /data/local/tmp), is named after the nonce so two hosts do not
 * collide, and is removed at the end.
 *
 * No pause comes before the dump: uiautomator's DumpCommand waits for the
 * UI to be idle itself (UiAutomation.waitForIdle, 1 s without accessibility
 * events, at most 10 s), so a host-side settle would be paid twice.
 *
 * Right after a good dump the same script reads the frame mark, the
 * display's page-flip count (`service call SurfaceFlinger 1013`, which
 * SurfaceFlinger::onTransact answers with getPageFlipCount(); the count goes
 * up in Output::postFramebuffer for every frame presented), and prints it
 * before the XML:
 *
 *   @adbc-ui-NONCE frame Result: Parcel(0000a3f1    '....')|BOOT-ID
 *
 * An act on one of the snapshot's refs compares it with the count just
 * before its input (lib/act/verify.c): no frame since means the screen is
 * still the one dumped. The boot id beside it (/proc/sys/kernel/random/
 * boot_id) tells a restarted SurfaceFlinger's count from the old one. A
 * device that does not answer so leaves the mark unknown and acts verify
 * by a fresh dump, as without it.
 *
 * A side command (the resumed activity, for an observation) runs in the
 * background from the start, beside the dump, and what it printed comes
 * back in front of the frame line after "@adbc-ui-NONCE side": one round
 * trip, and the dump's time rather than the sum. */
#include "ui/ui_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adbc/shell.h"
#include "core/internal.h"
#include "ui/ui_observe.h"

#define MARK "@adbc-ui-"

void adbc_ui_opts_init_sized(adbc_ui_opts *out, size_t size)
{
    adbc_ui_opts d, *opts = &d;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->timeout_ms = 30000;
    opts->attempts = 3;
    opts->always_compressed = 0;
    opts->poll_interval_ms = 250;
    opts->web = 0;
    opts->web_budget_ms = 3000;
    core_abi_give(out, size, &d, sizeof d);
}

/* Options with defaults filled in and values clamped to their ranges. */
static int effective(adbc_ui_opts *out, const adbc_ui_opts *in)
{
    adbc_ui_opts o;
    adbc_ui_opts_init(&o);
    if (core_abi_take(&o, sizeof o, in, "adbc_ui_opts") < 0)
        return ADBC_EINVAL;
    if (o.attempts < 1)
        o.attempts = 1;
    if (o.attempts > 10)
        o.attempts = 10;
    if (o.poll_interval_ms < 0)
        o.poll_interval_ms = 0;
    if (o.poll_interval_ms > 10000)
        o.poll_interval_ms = 10000;
    if (o.web_budget_ms < 1)
        o.web_budget_ms = 1;
    if (o.web_budget_ms > 60000)
        o.web_budget_ms = 60000;
    *out = o;
    return 0;
}

int ui_dump_command(char *cmd, size_t cap, const char *nonce, int attempts, int always_compressed,
                    const char *side)
{
    /* Every process the script starts is a fork and an exec on the phone,
     * most of them in the dump's own time: the good run's are uiautomator,
     * the `service call`, a `cat` of the XML and one `rm`. The file is
     * removed after a failed run, so the next run needs no `rm` first (the
     * first run's name is new: the nonce). The side prints its marker and
     * its output itself, straight into the command's output: nothing else
     * is printed before the script has waited for it. */
    char start[600] = "";
    if (side) {
        int k = snprintf(start, sizeof start, "(echo \"" MARK "%s side\"; %s) 2>&1 & ", nonce,
                         side);
        if (k < 0 || (size_t)k >= sizeof start)
            return core_fail(ADBC_EINVAL, "dump command does not fit");
    }
    const char *join = side ? "wait; " : "";
    int n = snprintf(cmd, cap,
        "f=${TMPDIR:-/data/local/tmp}/adbc-ui-%s.xml; m=%s; i=0; %s"
        "while [ $i -lt %d ]; do i=$((i+1)); "
        "o=$(uiautomator dump $m \"$f\" 2>&1); "
        "if [ -s \"$f\" ]; then case $o in *ERROR*) ;; *) "
        "s=$(" UI_FRAME_COMMAND "); " UI_BOOT_READ "%s"
        "echo \"" MARK "%s frame $s|$b\"; "
        "echo \"" MARK "%s ok $i $m\"; cat \"$f\"; rm -f \"$f\"; exit 0;; esac; fi; "
        "%secho \"" MARK "%s fail $i $m\"; printf '%%s\\n' \"$o\"; rm -f \"$f\"; "
        "case $o in *idle*) m=--compressed;; esac; "
        "done; echo \"" MARK "%s end\"",
        nonce, always_compressed ? "--compressed" : "", start, attempts, join, nonce, nonce, join,
        nonce, nonce);
    if (n < 0 || (size_t)n >= cap)
        return core_fail(ADBC_EINVAL, "dump command does not fit");
    return 0;
}

/* The line of out[0..len) that starts with "@adbc-ui-NONCE WORD " (or is
 * exactly that without the space): its start, and the length of the rest. */
static const char *marker_line(const char *out, size_t len, const char *nonce, const char *word,
                               size_t *rest_off, size_t *line_len)
{
    char mark[96];
    int ml = snprintf(mark, sizeof mark, MARK "%s %s", nonce, word);
    size_t at = 0;
    while (at < len) {
        const char *line = out + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        if (ll >= (size_t)ml && memcmp(line, mark, (size_t)ml) == 0 &&
            (ll == (size_t)ml || line[ml] == ' ')) {
            *rest_off = ll == (size_t)ml ? (size_t)ml : (size_t)ml + 1;
            *line_len = ll;
            return line;
        }
        if (!nl)
            break;
        at += ll + 1;
    }
    return NULL;
}

int ui_frame_valid(const char *f)
{
    size_t n = strlen(f);
    if (n < 9 || n > 9 + 36 || f[8] != ':')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = f[i];
        if (i == 8)
            continue;
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (i > 8 && ch == '-')))
            return 0;
    }
    return 1;
}

void ui_dump_extras(char frame[UI_FRAME_LEN], const char **side, size_t *side_len, const char *out,
                    size_t xml_off, const char *nonce)
{
    frame[0] = '\0';
    *side = NULL;
    *side_len = 0;
    size_t ro, ll;
    const char *fl = marker_line(out, xml_off, nonce, "frame", &ro, &ll);
    if (fl) {
        /* cmds/service prints "Result: " and the reply Parcel; a 4-byte
         * reply is one hex word: "Parcel(0000a3f1    '....')". Anything
         * else (an error, a refusal, no service) leaves the mark unknown. */
        static const char want[] = "Result: Parcel(";
        const char *v = fl + ro;
        size_t vl = ll - ro, wl = sizeof want - 1;
        int ok = vl > wl + 9 && memcmp(v, want, wl) == 0 && v[wl + 8] == ' ';
        for (size_t i = 0; ok && i < 8; i++) {
            char ch = v[wl + i];
            ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
        }
        /* "|" and the boot id close the line (the script prints both). */
        const char *bar = ok ? memrchr(v, '|', vl) : NULL;
        size_t bl = bar ? vl - (size_t)(bar + 1 - v) : 0;
        if (bar && bl <= 36) {
            memcpy(frame, v + wl, 8);
            frame[8] = ':';
            memcpy(frame + 9, bar + 1, bl);
            frame[9 + bl] = '\0';
            if (!ui_frame_valid(frame))
                frame[0] = '\0';
        }
    }
    const char *sl = marker_line(out, xml_off, nonce, "side", &ro, &ll);
    if (sl && fl && fl > sl) {
        *side = sl + ll + 1;
        *side_len = (size_t)(fl - *side);
    }
}

/* Offset of the line after "@adbc-ui-NONCE ok ...", or -1 when there is
 * none (every run failed). */
int ui_dump_split(size_t *xml_off, const char *out, size_t len, const char *nonce)
{
    char mark[64];
    int ml = snprintf(mark, sizeof mark, MARK "%s ok ", nonce);
    size_t at = 0;
    while (at < len) {
        const char *line = out + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        if (ll >= (size_t)ml && memcmp(line, mark, (size_t)ml) == 0) {
            if (!nl)
                return -1; /* the marker, then nothing: cut short */
            *xml_off = at + ll + 1;
            return 0;
        }
        if (!nl)
            break;
        at += ll + 1;
    }
    return -1;
}

/* What the device said, for an error message: the lines that are not
 * markers, joined by "| ", control characters replaced, cut to fit cap.
 * The side's output (from its marker to the next) is not the dump's. */
static void device_said(char *dst, size_t cap, const char *out, size_t len)
{
    size_t o = 0, at = 0;
    int cut = 0, in_side = 0;
    while (at < len && !cut) {
        const char *line = out + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        at += ll + 1;
        if (ll >= sizeof MARK - 1 && memcmp(line, MARK, sizeof MARK - 1) == 0) {
            in_side = ll >= 5 && memcmp(line + ll - 5, " side", 5) == 0;
            continue;
        }
        if (ll == 0 || in_side)
            continue;
        for (size_t i = (o ? 0 : 2); i < ll + 2; i++) {
            if (o + 4 >= cap) {
                cut = 1;
                break;
            }
            unsigned char c = i < 2 ? (unsigned char)"| "[i] : (unsigned char)line[i - 2];
            dst[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    if (cut) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

static void make_nonce(char out[17])
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
            seed = 0;
        close(fd);
    }
    static _Atomic uint64_t counter;
    seed = ui_hash_u64(seed ^ (uint64_t)core_wall_ms(),
                       (uint64_t)getpid() << 32 ^ (uint64_t)core_now_ms());
    seed = ui_hash_u64(seed, ++counter);
    snprintf(out, 17, "%016llx", (unsigned long long)seed);
}

/* One round trip. On success *mem holds the whole output (malloc'd) and
 * the XML is (*mem)[*off .. *off + *len). */
static int fetch(char **mem, size_t *off, size_t *len, char frame[UI_FRAME_LEN], char **side_out,
                 adbc_conn *c, const adbc_ui_opts *o, const char *side, int timeout_ms)
{
    char nonce[17], cmd[2048];
    make_nonce(nonce);
    int rc = ui_dump_command(cmd, sizeof cmd, nonce, o->attempts, o->always_compressed, side);
    if (rc < 0)
        return rc;
    adbc_run_result res;
    memset(&res, 0, sizeof res);
    rc = adbc_run(&res, c, ADBC_SHELL_EXEC, cmd, NULL, 0, UI_MAX_DUMP + ((size_t)1 << 20),
                  timeout_ms);
    /* Only a dump that started and ran out of time says so: a stream the
     * device never opened (it answered with an OKAY naming an earlier
     * stream, or not at all) keeps what adbc_run found. */
    if (rc == ADBC_ETIMEDOUT && strncmp(adbc_last_error(), "command \"", 9) == 0) {
        adbc_run_result_clear(&res);
        return core_fail(ADBC_ETIMEDOUT,
                         "uiautomator dump did not finish within %d ms (a screen that never "
                         "settles, or a hung uiautomator): try again, or allow more time",
                         timeout_ms);
    }
    if (rc == ADBC_ETIMEDOUT) {
        adbc_run_result_clear(&res);
        char prev[768];
        snprintf(prev, sizeof prev, "%s", adbc_last_error());
        return core_fail(ADBC_ETIMEDOUT, "uiautomator dump could not start: %s", prev);
    }
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return core_fail_keep(rc);
    }
    size_t xo;
    if (!res.out || ui_dump_split(&xo, (const char *)res.out, res.out_len, nonce) < 0) {
        char said[400];
        device_said(said, sizeof said, res.out ? (const char *)res.out : "", res.out_len);
        adbc_run_result_clear(&res);
        return core_fail(ADBC_EREMOTE,
                         "uiautomator dump failed %d time%s; the device said: %s. Check that the "
                         "screen is on and unlocked, or retry",
                         o->attempts, o->attempts == 1 ? "" : "s", said[0] ? said : "(nothing)");
    }
    const char *sp;
    size_t sn;
    ui_dump_extras(frame, &sp, &sn, (const char *)res.out, xo, nonce);
    if (side_out) {
        *side_out = core_strndup(sp ? sp : "", sn);
        if (!*side_out) {
            adbc_run_result_clear(&res);
            return core_fail(ADBC_ENOMEM, "out of memory");
        }
    }
    *mem = (char *)res.out;
    *off = xo;
    *len = res.out_len - xo;
    res.out = NULL;
    adbc_run_result_clear(&res);
    return 0;
}

int adbc_ui_dump(char **xml, size_t *len, adbc_conn *c, const adbc_ui_opts *opts)
{
    if (!xml || !len || !c)
        return core_fail(ADBC_EINVAL, "adbc_ui_dump: xml, len and c must not be NULL");
    *xml = NULL;
    *len = 0;
    adbc_ui_opts o;
    if (effective(&o, opts) < 0)
        return ADBC_EINVAL;
    char *mem, frame[UI_FRAME_LEN];
    size_t off, n;
    int rc = fetch(&mem, &off, &n, frame, NULL, c, &o, NULL, o.timeout_ms);
    if (rc < 0)
        return rc;
    memmove(mem, mem + off, n);
    mem[n] = '\0';
    *xml = mem;
    *len = n;
    return 0;
}

int adbc_ui_dump_web(char **xml, size_t *len, adbc_conn *c, const adbc_ui_opts *opts)
{
    if (!xml || !len || !c)
        return core_fail(ADBC_EINVAL, "adbc_ui_dump_web: xml, len and c must not be NULL");
    *xml = NULL;
    *len = 0;
    adbc_ui_opts o;
    if (effective(&o, opts) < 0)
        return ADBC_EINVAL;
    int64_t deadline = core_deadline(o.timeout_ms);
    char *raw;
    size_t n;
    int rc = adbc_ui_dump(&raw, &n, c, &o);
    if (rc < 0 || !o.web) {
        *xml = raw;
        *len = n;
        return rc;
    }
    /* The WebViews are found in a parse of a copy: the parse rewrites it. */
    adbc_ui_snap *s;
    rc = adbc_ui_snap_parse(&s, raw, n);
    if (rc < 0) {
        core_free(raw);
        return rc;
    }
    int budget = o.web_budget_ms, left = core_remaining(deadline);
    if (left >= 0 && left < budget)
        budget = left > 0 ? left : 1;
    char *x = NULL;
    size_t xl = 0;
    rc = ui_web_splice(&x, &xl, s, raw, n, c, budget);
    adbc_ui_snap_free(s);
    if (rc < 0) {
        core_free(raw);
        return rc;
    }
    if (x) {
        core_free(raw);
        raw = x;
        n = xl;
    }
    *xml = raw;
    *len = n;
    return 0;
}

/* Replace *s by the snapshot of its dump with the web part spliced in. The
 * web part's budget is cut to what the snapshot's timeout leaves. */
static int with_web(adbc_ui_snap **s, const char *raw, size_t n, adbc_conn *c,
                    const adbc_ui_opts *o, int64_t deadline)
{
    int budget = o->web_budget_ms, left = core_remaining(deadline);
    if (left >= 0 && left < budget)
        budget = left > 0 ? left : 1;
    char *x;
    size_t xl;
    int rc = ui_web_splice(&x, &xl, *s, raw, n, c, budget);
    if (rc < 0 || !x)
        return rc;
    adbc_ui_snap *w;
    rc = ui_snap_from(&w, x, x, xl);
    if (rc < 0)
        return rc;
    adbc_ui_snap_free(*s);
    *s = w;
    return 0;
}

int adbc_ui_snapshot(adbc_ui_snap **out, adbc_conn *c, const adbc_ui_opts *opts)
{
    if (!out || !c)
        return core_fail(ADBC_EINVAL, "adbc_ui_snapshot: out and c must not be NULL");
    return ui_snapshot_with(out, NULL, c, opts, NULL);
}

int ui_snapshot_with(adbc_ui_snap **out, char **side_out, adbc_conn *c, const adbc_ui_opts *opts,
                     const char *side)
{
    *out = NULL;
    if (side_out)
        *side_out = NULL;
    adbc_ui_opts o;
    if (effective(&o, opts) < 0)
        return ADBC_EINVAL;
    int64_t deadline = core_deadline(o.timeout_ms);
    char damage[200] = "";
    for (int round = 1;; round++) {
        int left = core_remaining(deadline);
        if (left == 0)
            return core_fail(ADBC_ETIMEDOUT, "no whole dump within %d ms: %s", o.timeout_ms,
                             damage[0] ? damage : "time ran out");
        char *mem, frame[UI_FRAME_LEN];
        size_t off, n;
        if (side_out) {
            core_free(*side_out);
            *side_out = NULL;
        }
        int rc = fetch(&mem, &off, &n, frame, side_out, c, &o, side, left);
        if (rc < 0)
            return rc;
        adbc_ui_snap *s;
        /* The web part needs the dump as it came: the parse rewrites it. */
        char *raw = o.web ? core_malloc(n + 1) : NULL;
        if (o.web && !raw) {
            core_free(mem);
            return core_fail(ADBC_ENOMEM, "out of memory for a copy of the dump");
        }
        if (raw)
            memcpy(raw, mem + off, n);
        /* The XML is parsed where it arrived: no copy. */
        rc = ui_snap_from(&s, mem, mem + off, n);
        if (rc == 0 && adbc_ui_snap_complete(s)) {
            if (raw)
                rc = with_web(&s, raw, n, c, &o, deadline);
            core_free(raw);
            if (rc < 0)
                return rc;
            /* Pages spliced in over DevTools were read after the mark, from
             * a renderer the count does not always see (a page drawn off
             * the display): acts on such a snapshot verify by a dump. */
            if (!o.web)
                memcpy(s->refs.frame, frame, sizeof frame);
            *out = s;
            return 0;
        }
        core_free(raw);
        if (rc == 0) {
            snprintf(damage, sizeof damage, "the dump was damaged (%s)", adbc_ui_snap_damage(s));
            adbc_ui_snap_free(s);
        } else if (rc == ADBC_EFORMAT) {
            snprintf(damage, sizeof damage, "%s", adbc_last_error());
        } else {
            return rc;
        }
        /* A dump cut short or unreadable: fetch it again, a bounded number
         * of times, rather than pass part of a screen off as all of it. */
        if (round >= o.attempts)
            return core_fail(ADBC_EFORMAT, "no whole dump in %d tries; last time %s", round, damage);
    }
}
