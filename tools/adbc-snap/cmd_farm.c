/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap farm: a farm of adbc-serve nodes (docs/farm.md) for people,
 * through any node's HTTP API: its devices, a task submitted and followed
 * (its steps printed as agent --serve prints them), a task's status, its
 * events followed, a cancel. The requests are agent_remote.c's. */
#include "snap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_farm(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_farm[] = {
    {"farm", cmd_farm,
     "farm devices|submit GOAL|status ID|watch ID|cancel ID --serve URL [--token-file F] [--json] "
     "[--model NAME] [--max-steps N] [--serial S] [--device-model M] [--min-sdk N] [--emulator|--physical]",
     "a farm of adbc-serve nodes: its devices, tasks submitted, watched, cancelled (docs/farm.md)"},
    {NULL, NULL, NULL, NULL},
};

#ifndef ADBC_HAVE_AGENT
static int cmd_farm(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    return snap_error(SNAP_EXIT_FAIL, "farm", "this adbc-snap was built without the agent's "
                      "HTTP client (libcurl and libcjson: docs/build.md)");
}
#else

#include <cjson/cJSON.h>

#include "agent_print.h"

static const char *s_of(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return v ? v : "";
}

static void print_json(const cJSON *j)
{
    char *t = cJSON_PrintUnformatted(j);
    if (t)
        printf("%s\n", t);
    free(t);
}

static void print_devices(const cJSON *res)
{
    printf("%-12s %-24s %-20s %4s %-9s %-10s %s\n", "NODE", "SERIAL", "MODEL", "SDK", "KIND",
           "STATE", "BUSY");
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(res, "devices"))
    {
        const cJSON *sdk = cJSON_GetObjectItemCaseSensitive(d, "sdk");
        const cJSON *emu = cJSON_GetObjectItemCaseSensitive(d, "emulator");
        char sdks[16] = "?";
        if (cJSON_IsNumber(sdk))
            snprintf(sdks, sizeof sdks, "%d", sdk->valueint);
        printf("%-12s %-24s %-20s %4s %-9s %-10s %s%s%s\n", s_of(d, "node"), s_of(d, "serial"),
               *s_of(d, "model") ? s_of(d, "model") : "?", sdks,
               !cJSON_IsBool(emu) ? "?" : cJSON_IsTrue(emu) ? "emulator" : "physical",
               s_of(d, "state"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "busy")) ? "yes"
                                                                                           : "no",
               *s_of(d, "task") ? " " : "", s_of(d, "task"));
    }
}

static void print_task(const cJSON *t)
{
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(t, "end");
    printf("%s %s", s_of(t, "id"), s_of(t, "status"));
    if (*s_of(t, "node"))
        printf(" on %s %s", s_of(t, "node"), s_of(t, "device"));
    printf(", attempts %d, steps %d\n",
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "attempts")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "steps_done")));
    if (*s_of(end, "answer"))
        printf("answer: %s\n", s_of(end, "answer"));
    if (*s_of(end, "reason"))
        printf("reason: %s\n", s_of(end, "reason"));
    if (*s_of(t, "error"))
        printf("error: %s\n", s_of(t, "error"));
}

static int usage(const char *fmt, const char *x)
{
    char m[256];
    snprintf(m, sizeof m, fmt, x);
    return snap_usage(&snap_cmds_farm[0], m);
}

static int id_ok(const char *id)
{
    return *id && strlen(id) < 32 && strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789") ==
                                         strlen(id);
}

static int cmd_farm(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    const snap_cmd *me = &snap_cmds_farm[0];
    const char *url = NULL, *tokf = NULL, *model = NULL, *serial = NULL, *dmodel = NULL;
    const char *verb = NULL, *arg = NULL;
    int json = 0, max_steps = -1, min_sdk = 0, kind = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--emulator") == 0 || strcmp(a, "--physical") == 0) {
            kind = strcmp(a, "--emulator") == 0;
        } else if (v && (strcmp(a, "--serve") == 0 || strcmp(a, "--token-file") == 0 ||
                         strcmp(a, "--model") == 0 || strcmp(a, "--serial") == 0 ||
                         strcmp(a, "--device-model") == 0)) {
            const char **dst = strcmp(a, "--serve") == 0 ? &url
                               : strcmp(a, "--token-file") == 0 ? &tokf
                               : strcmp(a, "--model") == 0 ? &model
                               : strcmp(a, "--serial") == 0 ? &serial
                                                            : &dmodel;
            *dst = v;
            i++;
        } else if (v && (strcmp(a, "--max-steps") == 0 || strcmp(a, "--min-sdk") == 0)) {
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1000)
                return usage("%s takes a number", a);
            *(strcmp(a, "--max-steps") == 0 ? &max_steps : &min_sdk) = (int)n;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return usage("unknown or incomplete option %s", a);
        } else if (!verb) {
            verb = a;
        } else if (!arg) {
            arg = a;
        } else {
            return usage("one argument after %s", verb);
        }
    }
    if (!verb)
        return snap_usage(me, "say what: devices, submit, status, watch or cancel");
    if (!url)
        return snap_usage(me, "--serve URL: any node of the farm (http://HOST:PORT)");
    int needs = strcmp(verb, "devices") != 0;
    if (needs != (arg != NULL))
        return usage(needs ? "%s needs its argument" : "%s takes no argument", verb);
    printer p = {.json = json};
    pthread_mutex_init(&p.mu, NULL);
    atomic_int cancel;
    atomic_init(&cancel, 0);
    agent_remote_opts o = {.url = url, .token_file = tokf, .cancel = &cancel, .p = &p,
                           .max_steps = max_steps, .step_delay_ms = -1,
                           .prefix = "/v1/farm/tasks"};
    int st = 0;
    char path[96];
    if (strcmp(verb, "submit") == 0) {
        cJSON *sel = cJSON_CreateObject();
        if (serial)
            cJSON_AddStringToObject(sel, "serial", serial);
        if (dmodel)
            cJSON_AddStringToObject(sel, "model", dmodel);
        if (min_sdk)
            cJSON_AddNumberToObject(sel, "min_sdk", min_sdk);
        if (kind >= 0)
            cJSON_AddBoolToObject(sel, "emulator", kind);
        char *seltext = cJSON_GetArraySize(sel) ? cJSON_PrintUnformatted(sel) : NULL;
        cJSON_Delete(sel);
        o.goal = arg;
        o.model = model;
        o.select = seltext;
        snap_signals_flag(&cancel);
        st = agent_remote(&o);
        snap_signals_flag(NULL);
        free(seltext);
    } else if (strcmp(verb, "watch") == 0) {
        if (!id_ok(arg))
            st = usage("'%s' is not a task id (f123)", arg);
        else {
            o.id = arg;
            snap_signals_flag(&cancel);
            st = agent_remote(&o);
            snap_signals_flag(NULL);
        }
    } else if (strcmp(verb, "devices") == 0 || strcmp(verb, "status") == 0 ||
               strcmp(verb, "cancel") == 0) {
        int dev = verb[0] == 'd', can = verb[0] == 'c';
        if (!dev && !id_ok(arg)) {
            st = usage("'%s' is not a task id (f123)", arg);
        } else {
            snprintf(path, sizeof path, dev ? "/v1/farm/devices" : can ? "/v1/farm/tasks/%s/cancel"
                                                                      : "/v1/farm/tasks/%s",
                     dev ? "" : arg);
            cJSON *res = agent_remote_call(&o, can ? "POST" : "GET", path, can ? "{}" : NULL, &st);
            if (res && json)
                print_json(res);
            else if (res && dev)
                print_devices(res);
            else if (res)
                print_task(res);
            cJSON_Delete(res);
        }
    } else {
        st = usage("'%s': devices, submit, status, watch or cancel", verb);
    }
    pthread_mutex_destroy(&p.mu);
    return st;
}
#endif
