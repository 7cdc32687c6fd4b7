/* SPDX-License-Identifier: Apache-2.0 */
/* Termux:API tools: the phone adbc runs on, through termux-api's commands
 * (termux-api-package's scripts, the Termux:API app's JSON). Listed only
 * when ops_termux_available() (the front end adds OPS_TOOL_TERMUX); sending
 * an SMS and placing a call only when a person allowed them by name
 * (OPS_TOOL_SMS, OPS_TOOL_CALL). Every argument is checked first, then
 * passed as its own argv word or on stdin (ops_termux_run: no shell). */
#include "ops_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_termux.h"
#include "ops_util.h"

#define TERMUX_MS 10000 /* most answer at once; the app may need to start */

/* How long a command may take: its own bound, within the call's. */
static int bound(ops_call *c, int ms)
{
    int left = ops_call_remaining(c);
    return ms < left ? ms : left;
}

/* Run argv; with want_json the output must be JSON (an object or array),
 * and an object with "API_ERROR" (the app's way to fail) fails the call.
 * The JSON (or, without want_json, the text) becomes the result. */
/* A call the client cancelled stops its command (ops_termux_run_stop). */
static int cancelled(void *arg)
{
    return ops_cancel_fired(arg);
}

static int run(ops_call *c, ops_err *e, const char *const *argv, const char *in, int ms,
               char **out, size_t *n)
{
    return ops_termux_run_stop(e, argv, in, bound(c, ms), c->cancel ? cancelled : NULL,
                               c->cancel, out, n);
}

static int termux(ops_call *c, const char *const *argv, const char *in, int ms, int want_json,
                  const char *done)
{
    ops_err e;
    char *out = NULL;
    size_t n = 0;
    if (run(c, &e, argv, in, ms, &out, &n) != 0)
        return ops_call_err(c, &e);
    if (!want_json) {
        ops_call_text(c, "%s", done ? done : out);
        free(out);
        return 0;
    }
    cJSON *j = NULL;
    if (n == 0 || ops_json_parse(&e, out, n, &j) != 0 || (!cJSON_IsObject(j) && !cJSON_IsArray(j))) {
        int rc = ops_call_fail(c, OPS_EFAIL, "%s printed no JSON%s%.300s (is the Termux:API app "
                               "installed, and allowed what %s needs?)", argv[0],
                               n ? ": " : " (nothing)", out, argv[0]);
        cJSON_Delete(j);
        free(out);
        return rc;
    }
    free(out);
    const char *api_err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "API_ERROR"));
    if (api_err) {
        int rc = ops_call_fail(c, OPS_EFAIL, "%s: the Termux:API app said: %.500s", argv[0],
                               api_err);
        cJSON_Delete(j);
        return rc;
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s)
        return ops_call_fail(c, OPS_EFAIL, "out of memory");
    ops_call_text_raw(c, s);
    free(s);
    return 0;
}

static int t_battery(ops_call *c, const cJSON *a)
{
    (void)a;
    static const char *const argv[] = {"termux-battery-status", NULL};
    return termux(c, argv, NULL, TERMUX_MS, 1, NULL);
}

static int t_clipboard_get(ops_call *c, const cJSON *a)
{
    (void)a;
    static const char *const argv[] = {"termux-clipboard-get", NULL};
    return termux(c, argv, NULL, TERMUX_MS, 0, NULL);
}

static int t_clipboard_set(ops_call *c, const cJSON *a)
{
    const char *text;
    if (ops_call_str(c, a, "text", 1, 100000, &text))
        return -1;
    if (!*text)
        return ops_call_fail(c, OPS_EARG, "argument 'text' is empty");
    /* On stdin: the script takes its arguments through echo. */
    static const char *const argv[] = {"termux-clipboard-set", NULL};
    return termux(c, argv, text, TERMUX_MS, 0, "clipboard set");
}

static int one_of(ops_call *c, const char *arg, const char *v, const char *const *ok)
{
    for (int i = 0; ok[i]; i++)
        if (strcmp(v, ok[i]) == 0)
            return 0;
    char list[256] = "";
    for (int i = 0; ok[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ok[i]);
    return ops_call_fail(c, OPS_EARG, "argument '%s' must be one of: %s", arg, list);
}

static int t_location(ops_call *c, const cJSON *a)
{
    const char *provider = "gps", *request = "once";
    static const char *const providers[] = {"gps", "network", "passive", NULL};
    static const char *const requests[] = {"once", "last", NULL};
    /* ops_call_str gives NULL for an argument left out: the default stays. */
    const char *p = NULL, *r = NULL;
    if (ops_call_str(c, a, "provider", 0, 16, &p) || ops_call_str(c, a, "request", 0, 16, &r))
        return -1;
    provider = p ? p : provider;
    request = r ? r : request;
    if (one_of(c, "provider", provider, providers) || one_of(c, "request", request, requests))
        return -1;
    const char *const argv[] = {"termux-location", "-p", provider, "-r", request, NULL};
    return termux(c, argv, NULL, 30000, 1, NULL); /* a GPS fix takes its time */
}

static int t_notification(ops_call *c, const cJSON *a)
{
    const char *title, *content, *id = NULL;
    if (ops_call_str(c, a, "title", 1, 200, &title) ||
        ops_call_str(c, a, "content", 1, 4000, &content) || ops_call_str(c, a, "id", 0, 64, &id))
        return -1;
    if (id) {
        for (const char *p = id; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                return ops_call_fail(c, OPS_EARG, "argument 'id' may hold letters, digits, _ "
                                                  "and - only");
    }
    const char *argv[] = {"termux-notification", "-t", title, "-c", content, NULL, NULL, NULL};
    if (id && *id) {
        argv[5] = "-i";
        argv[6] = id;
    }
    return termux(c, argv, NULL, TERMUX_MS, 0, "notification shown");
}

static int t_torch(ops_call *c, const cJSON *a)
{
    int on = 0;
    if (ops_call_bool(c, a, "on", &on))
        return -1;
    const char *const argv[] = {"termux-torch", on ? "on" : "off", NULL};
    return termux(c, argv, NULL, TERMUX_MS, 0, on ? "torch on" : "torch off");
}

static int t_vibrate(ops_call *c, const cJSON *a)
{
    int ms = 1000, force = 0;
    if (ops_call_int(c, a, "duration_ms", 0, 1, 5000, &ms) || ops_call_bool(c, a, "force", &force))
        return -1;
    char d[16];
    snprintf(d, sizeof d, "%d", ms);
    const char *const argv[] = {"termux-vibrate", "-d", d, force ? "-f" : NULL, NULL};
    return termux(c, argv, NULL, TERMUX_MS + ms, 0, "vibrated");
}

static int t_volume(ops_call *c, const cJSON *a)
{
    const char *stream = NULL;
    int vol = -1;
    static const char *const streams[] = {"alarm", "music", "notification", "ring", "system",
                                          "call", NULL};
    if (ops_call_str(c, a, "stream", 0, 16, &stream) ||
        ops_call_int(c, a, "volume", 0, 0, 100, &vol) ||
        (stream && one_of(c, "stream", stream, streams)))
        return -1;
    if (!stream && vol < 0) {
        static const char *const argv[] = {"termux-volume", NULL};
        return termux(c, argv, NULL, TERMUX_MS, 1, NULL);
    }
    if (!stream || vol < 0)
        return ops_call_fail(c, OPS_EARG, "to set a volume give both stream and volume; give "
                                          "neither to read them all");
    char v[16];
    snprintf(v, sizeof v, "%d", vol);
    const char *const argv[] = {"termux-volume", stream, v, NULL};
    char done[64];
    snprintf(done, sizeof done, "%s volume set to %d (capped at its maximum)", stream, vol);
    return termux(c, argv, NULL, TERMUX_MS, 0, done);
}

static int t_wifi(ops_call *c, const cJSON *a)
{
    (void)a;
    static const char *const argv[] = {"termux-wifi-connectioninfo", NULL};
    return termux(c, argv, NULL, TERMUX_MS, 1, NULL);
}

static int t_sms_list(ops_call *c, const cJSON *a)
{
    int limit = 10, offset = 0;
    const char *type = "all", *t = NULL;
    static const char *const types[] = {"all", "inbox", "sent", "draft", "outbox", NULL};
    if (ops_call_int(c, a, "limit", 0, 1, 100, &limit) ||
        ops_call_int(c, a, "offset", 0, 0, 100000, &offset) ||
        ops_call_str(c, a, "type", 0, 16, &t))
        return -1;
    type = t ? t : type; /* NULL when left out: the default stays */
    if (one_of(c, "type", type, types))
        return -1;
    char l[16], o[16];
    snprintf(l, sizeof l, "%d", limit);
    snprintf(o, sizeof o, "%d", offset);
    const char *const argv[] = {"termux-sms-list", "-l", l, "-o", o, "-t", type, NULL};
    return termux(c, argv, NULL, TERMUX_MS, 1, NULL);
}

static int t_contacts(ops_call *c, const cJSON *a)
{
    (void)a;
    static const char *const argv[] = {"termux-contact-list", NULL};
    return termux(c, argv, NULL, TERMUX_MS, 1, NULL);
}

static int t_camera_photo(ops_call *c, const cJSON *a)
{
    int cam = 0, image = 0;
    if (ops_call_int(c, a, "camera", 0, 0, 9, &cam) ||
        ops_call_bool(c, a, "include_image", &image))
        return -1;
    /* Into the front end's directory, or a temporary file returned as the
     * image (a front end that keeps no files). */
    char final[PATH_MAX], path[PATH_MAX], iso[80];
    int keep = c->fe->shot_dir != NULL;
    if (keep) {
        /* The camera writes a temporary file of its own, renamed when
         * whole: a link planted at the photo's name is never written
         * through. */
        if (ops_tool_host_tmp(c, "jpg", final, sizeof final, path, sizeof path, iso,
                              sizeof iso) != 0)
            return ops_call_fail(c, OPS_EFAIL, "cannot make a file under %s for the photo: %s",
                                 c->fe->shot_dir, strerror(errno));
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/adbc-photo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
            return ops_call_fail(c, OPS_EFAIL, "cannot make a temporary file for the photo: %s",
                                 strerror(errno));
        close(fd);
        image = 1;
    }
    char id[4];
    snprintf(id, sizeof id, "%d", cam);
    const char *const argv[] = {"termux-camera-photo", "-c", id, path, NULL};
    ops_err e;
    char *out = NULL;
    size_t n = 0;
    int rc = run(c, &e, argv, NULL, 30000, &out, &n);
    free(out);
    struct stat st;
    if (rc == 0 && (stat(path, &st) != 0 || st.st_size == 0))
        rc = ops_fail(&e, OPS_EFAIL, "termux-camera-photo wrote no photo (is the camera "
                      "permission granted to Termux:API?)");
    uint8_t *jpg = NULL;
    if (rc == 0 && image) {
        FILE *f = fopen(path, "rbe");
        jpg = f && st.st_size < (64 << 20) ? malloc((size_t)st.st_size) : NULL;
        if (!jpg || fread(jpg, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
            rc = ops_fail(&e, OPS_EFAIL, "cannot read the photo back from %s", path);
        if (f)
            fclose(f);
    }
    if (rc == 0 && keep && ops_tool_host_commit(path, final) != 0)
        rc = ops_fail(&e, OPS_EFAIL, "cannot move the photo to %s: %s", final, strerror(errno));
    if (!keep || rc != 0)
        unlink(path);
    if (rc != 0) {
        free(jpg);
        return ops_call_err(c, &e);
    }
    if (keep)
        ops_tool_file_json(c, final, (uint64_t)st.st_size, iso, "image/jpeg", NULL);
    rc = image ? ops_call_image(c, jpg, (size_t)st.st_size, "image/jpeg") : 0;
    free(jpg);
    return rc;
}

/* One phone number: an optional + and 3..20 digits. */
static int number(ops_call *c, const cJSON *a, const char **out)
{
    if (ops_call_str(c, a, "number", 1, 32, out))
        return -1;
    const char *p = *out + (**out == '+');
    size_t n = strlen(p);
    if (n < 3 || n > 20 || strspn(p, "0123456789") != n)
        return ops_call_fail(c, OPS_EARG, "argument 'number' must be a phone number: an "
                                          "optional + and 3..20 digits, nothing else");
    return 0;
}

static int t_sms_send(ops_call *c, const cJSON *a)
{
    const char *num, *text;
    if (number(c, a, &num) || ops_call_str(c, a, "text", 1, 1600, &text))
        return -1;
    if (!*text)
        return ops_call_fail(c, OPS_EARG, "argument 'text' is empty");
    ops_call_log(c, "termux_sms_send to %s (%zu bytes)", num, strlen(text));
    const char *const argv[] = {"termux-sms-send", "-n", num, NULL};
    char done[96];
    snprintf(done, sizeof done, "SMS handed to the phone for %s", num);
    return termux(c, argv, text, TERMUX_MS, 0, done); /* the text on stdin */
}

static int t_call(ops_call *c, const cJSON *a)
{
    const char *num;
    if (number(c, a, &num))
        return -1;
    ops_call_log(c, "termux_call to %s", num);
    const char *const argv[] = {"termux-telephony-call", num, NULL};
    char done[96];
    snprintf(done, sizeof done, "calling %s", num);
    return termux(c, argv, NULL, TERMUX_MS, 0, done);
}

#define OBJ "{\"type\":\"object\",\"properties\":"
#define NONE OBJ "{},\"additionalProperties\":false}"
#define T (OPS_TOOL_TERMUX | OPS_TOOL_READONLY)
/* number(): an optional + and 3..20 digits. */
#define NUMBER "{\"type\":\"string\",\"pattern\":\"^[+]?[0-9]{3,20}$\"}"

const ops_tool ops_tools_termux[] = {
    {"termux_battery", "Battery", "This phone's battery (Termux:API): percentage, status, "
     "health, temperature...", NONE, t_battery, T},
    {"termux_clipboard_get", "Read the clipboard", "This phone's clipboard text.", NONE,
     t_clipboard_get, T},
    {"termux_clipboard_set", "Set the clipboard", "Put text on this phone's clipboard.",
     OBJ "{\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100000}},\"required\":"
     "[\"text\"],\"additionalProperties\":false}", t_clipboard_set, OPS_TOOL_TERMUX},
    {"termux_location", "Location", "This phone's location (provider gps|network|passive, "
     "request once|last).",
     OBJ "{\"provider\":{\"type\":\"string\",\"enum\":[\"gps\",\"network\",\"passive\"]},"
     "\"request\":{\"type\":\"string\",\"enum\":[\"once\",\"last\"]}},"
     "\"additionalProperties\":false}", t_location, T},
    {"termux_notification", "Post a notification", "Show a notification on this phone.",
     OBJ "{\"title\":{\"type\":\"string\",\"maxLength\":200},\"content\":{\"type\":\"string\","
     "\"maxLength\":4000},\"id\":{\"type\":\"string\",\"maxLength\":64,\"pattern\":"
     "\"^[A-Za-z0-9_-]*$\"}},\"required\":[\"title\",\"content\"],\"additionalProperties\":"
     "false}", t_notification, OPS_TOOL_TERMUX},
    {"termux_torch", "Torch", "Turn this phone's torch on or off.",
     OBJ "{\"on\":{\"type\":\"boolean\"}},\"required\":[\"on\"],\"additionalProperties\":"
     "false}", t_torch, OPS_TOOL_TERMUX},
    {"termux_vibrate", "Vibrate", "Vibrate this phone (duration_ms 1..5000, default 1000).",
     OBJ "{\"duration_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5000},\"force\":"
     "{\"type\":\"boolean\"}},\"additionalProperties\":false}", t_vibrate, OPS_TOOL_TERMUX},
    {"termux_volume", "Volume", "Without arguments: every stream's volume; with stream and "
     "volume: set it.",
     OBJ "{\"stream\":{\"type\":\"string\",\"enum\":[\"alarm\",\"music\",\"notification\","
     "\"ring\",\"system\",\"call\"]},\"volume\":{\"type\":\"integer\",\"minimum\":0,"
     "\"maximum\":100}},\"dependentRequired\":{\"stream\":[\"volume\"],\"volume\":"
     "[\"stream\"]},\"additionalProperties\":false}", t_volume, OPS_TOOL_TERMUX},
    {"termux_wifi_info", "Wi-Fi connection", "This phone's Wi-Fi connection: ssid, ip, rssi, "
     "link speed...", NONE, t_wifi, T},
    {"termux_sms_list", "List SMS", "SMS messages on this phone, newest first (limit 1..100, "
     "default 10).",
     OBJ "{\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},\"offset\":{\"type\":"
     "\"integer\",\"minimum\":0,\"maximum\":100000},\"type\":{\"type\":\"string\",\"enum\":"
     "[\"all\",\"inbox\",\"sent\",\"draft\",\"outbox\"]}},\"additionalProperties\":false}",
     t_sms_list, T},
    {"termux_contacts", "Contacts", "This phone's contacts: name and number.", NONE, t_contacts,
     T},
    {"termux_camera_photo", "Take a photo", "A JPEG from this phone's camera (camera 0 back, "
     "1 front).",
     OBJ "{\"camera\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},\"include_image\":"
     "{\"type\":\"boolean\"}},\"additionalProperties\":false}", t_camera_photo,
     OPS_TOOL_TERMUX},
    {"termux_sms_send", "Send an SMS", "Send an SMS from this phone. Present only because a "
     "person allowed it.",
     OBJ "{\"number\":" NUMBER ",\"text\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":1600}},\"required\":"
     "[\"number\",\"text\"],\"additionalProperties\":false}", t_sms_send,
     OPS_TOOL_TERMUX | OPS_TOOL_SMS | OPS_TOOL_OPENWORLD},
    {"termux_call", "Place a call", "Call a number from this phone. Present only because a "
     "person allowed it.",
     OBJ "{\"number\":" NUMBER "},\"required\":[\"number\"],"
     "\"additionalProperties\":false}", t_call,
     OPS_TOOL_TERMUX | OPS_TOOL_CALL | OPS_TOOL_OPENWORLD},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
