/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap UI commands: snapshot, find, and the waits.
 *
 * Every command that prints refs saves the ref table they belong to, so
 * the refs an agent reads are the ones a later `tap N` acts on. */
#include "snap_ui.h"

#include "ops_core.h"

#include <stdlib.h>
#include <string.h>

static int cmd_snapshot(snap_ctx *ctx, int argc, char **argv);
static int cmd_find(snap_ctx *ctx, int argc, char **argv);
static int cmd_wait_text(snap_ctx *ctx, int argc, char **argv);
static int cmd_wait_state(snap_ctx *ctx, int argc, char **argv);
static int cmd_wait_stable(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_ui[] = {
    {"snapshot", cmd_snapshot, "snapshot [--json] [--web [--web-budget MS]] [--xml FILE] [-o FILE]",
     "the screen as text with [ref=N] markers (--web: pages in WebViews too; --xml: a saved "
     "dump, no device)"},
    {"find", cmd_find, "find [--id ID] [--text T] [--desc D] [--class C]",
     "refs of matching elements (--contains, --nocase, --json)"},
    {"wait-text", cmd_wait_text, "wait-text TEXT [--gone] [-t SECONDS]",
     "until TEXT is on the screen (--gone: until it is not)"},
    {"wait-state", cmd_wait_state, "wait-state REF STATE [-t SECONDS]",
     "until the element is checked, unchecked, enabled, focused, ..."},
    {"wait-stable", cmd_wait_stable, "wait-stable [-t SECONDS]",
     "until two snapshots in a row are the same"},
    {NULL, NULL, NULL, NULL},
};

/* ---- snapshot ------------------------------------------------------------------ */

/* snapshot --web through a session: the session's server reads the pages
 * (its connection keeps their DevTools sessions from one command to the
 * next, docs/webview.md) and sends the dump with them spliced in
 * ("host:adbc-ui-web:BUDGET:TIMEOUT", adbc-serve's control.c), parsed here
 * as a dump of our own. 1: the server does not offer it (an older one):
 * the snapshot is taken here. */
static int session_web(adbc_ui_snap **out, adbc_conn *c, const adbc_ui_opts *o)
{
    char svc[64];
    snprintf(svc, sizeof svc, "host:adbc-ui-web:%d:%d", o->web_budget_ms, o->timeout_ms);
    /* The server's own bound and a little more for the relay. */
    int ms = o->timeout_ms > 600000 - 5000 ? 600000 : o->timeout_ms + 5000;
    adbc_stream *st;
    int rc = adbc_stream_open(&st, c, svc, ms);
    if (rc < 0)
        return rc;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t k = adbc_stream_read(st, buf + n, cap - n, ms);
        if (k == 0)
            break;
        if (k < 0) {
            adbc_stream_close(st);
            free(buf);
            return (int)k;
        }
        n += (size_t)k;
    }
    adbc_stream_close(st);
    if (!buf) {
        fprintf(stderr, "adbc-snap: out of memory for the session's dump\n");
        return ADBC_ENOMEM;
    }
    size_t len = 0;
    int ok = n >= 12 && memcmp(buf, "OKAY", 4) == 0;
    if (ok) {
        char hex[9];
        memcpy(hex, buf + 4, 8);
        hex[8] = 0;
        char *end;
        len = (size_t)strtoull(hex, &end, 16);
        ok = !*end && len == n - 12;
    }
    if (!ok) {
        /* FAIL %04x MESSAGE; an older server knows no such service. */
        int old = n >= 8 && memcmp(buf, "FAIL", 4) == 0 && memmem(buf, n, "unknown host service", 20);
        if (!old)
            fprintf(stderr, "adbc-snap: the session's web snapshot failed: %.*s\n",
                    (int)(n > 8 && memcmp(buf, "FAIL", 4) == 0 ? (n - 8 > 300 ? 300 : n - 8) : 0),
                    buf + 8);
        free(buf);
        return old ? 1 : ADBC_EREMOTE;
    }
    rc = adbc_ui_snap_parse(out, buf + 12, len);
    free(buf);
    if (rc == 0 && !adbc_ui_snap_complete(*out)) {
        /* A dump cut short: taken here, where it is fetched again. */
        adbc_ui_snap_free(*out);
        *out = NULL;
        return 1;
    }
    return rc;
}

static int cmd_snapshot(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0, web = 0, budget = 0;
    const char *xml = NULL, *outp = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--web") == 0)
            web = 1;
        else if (strcmp(argv[i], "--web-budget") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 60000)
                return snap_usage(&snap_cmds_ui[0], "--web-budget takes 1..60000 (ms)");
            budget = (int)v;
        }
        else if (strcmp(argv[i], "--xml") == 0 && i + 1 < argc)
            xml = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            outp = argv[++i];
        else
            return snap_usage(&snap_cmds_ui[0], "unknown argument");
    }
    adbc_ui_snap *s;
    int rc;
    if (xml) {
        rc = adbc_ui_snap_load(&s, xml);
        if (rc < 0)
            return snap_fail(xml, rc);
        if (!adbc_ui_snap_complete(s))
            fprintf(stderr, "adbc-snap: %s is damaged or cut short (%s): showing what was read\n",
                    xml, adbc_ui_snap_damage(s));
    } else {
        adbc_conn *c;
        if (snap_connect(ctx, &c) < 0)
            return SNAP_EXIT_FAIL;
        adbc_ui_opts o;
        snap_ui_opts(ctx, &o);
        o.web = web;
        if (budget)
            o.web_budget_ms = budget;
        rc = web && ctx->via_session ? session_web(&s, c, &o) : 1;
        if (rc == 1)
            rc = adbc_ui_snapshot(&s, c, &o);
        if (rc < 0)
            return snap_fail("snapshot", rc);
    }
    FILE *f = stdout;
    if (outp && !(f = fopen(outp, "w"))) {
        perror(outp);
        adbc_ui_snap_free(s);
        return SNAP_EXIT_FAIL;
    }
    int status = snap_print(f, s, json, ctx->quiet);
    if (f != stdout && fclose(f) != 0) {
        perror(outp);
        status = SNAP_EXIT_FAIL;
    }
    if (!xml && status == 0)
        status = snap_refs_save(ctx, s);
    adbc_ui_snap_free(s);
    return status;
}

/* ---- find ------------------------------------------------------------------------ */

static const char *short_class(const char *cls)
{
    const char *dot = strrchr(cls, '.');
    return !*cls ? "View" : dot ? dot + 1 : cls;
}

/* A string for one line: quotes, backslashes and line breaks escaped. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '\r')
            fputs("\\r", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static int cmd_find(snap_ctx *ctx, int argc, char **argv)
{
    adbc_ui_selector sel = {.size = sizeof(adbc_ui_selector)};
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = strcmp(a, "--id") == 0     ? &sel.resource_id
                            : strcmp(a, "--text") == 0 ? &sel.text
                            : strcmp(a, "--desc") == 0 ? &sel.desc
                            : strcmp(a, "--class") == 0 ? &sel.cls
                                                        : NULL;
        if (slot && i + 1 < argc)
            *slot = argv[++i];
        else if (strcmp(a, "--contains") == 0)
            sel.flags |= ADBC_UI_MATCH_CONTAINS;
        else if (strcmp(a, "--nocase") == 0)
            sel.flags |= ADBC_UI_MATCH_NOCASE;
        else if (strcmp(a, "--json") == 0)
            json = 1;
        else
            return snap_usage(&snap_cmds_ui[1], "unknown argument");
    }
    if (!sel.resource_id && !sel.text && !sel.desc && !sel.cls)
        return snap_usage(&snap_cmds_ui[1], "give at least one of --id, --text, --desc, --class");
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    adbc_ui_opts o;
    snap_ui_opts(ctx, &o);
    adbc_ui_snap *s;
    int rc = adbc_ui_snapshot(&s, c, &o);
    if (rc < 0)
        return snap_fail("snapshot", rc);
    int *refs = NULL;
    size_t n = 0;
    rc = adbc_ui_find(&refs, &n, s, &sel);
    if (rc < 0) {
        adbc_ui_snap_free(s);
        return snap_fail("find", rc);
    }
    /* The printed refs are this snapshot's: save its table for acts. */
    int status = snap_refs_save(ctx, s);
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    if (json)
        putchar('[');
    for (size_t i = 0; i < n; i++) {
        const adbc_ui_ref *r = adbc_ui_reftab_get(t, refs[i]);
        if (!r)
            continue;
        if (json) {
            printf("%s{\"ref\":%d,\"x\":%d,\"y\":%d,\"class\":", i ? "," : "", r->ref, r->x, r->y);
            snap_json_str(stdout, r->cls);
            printf(",\"resource_id\":");
            snap_json_str(stdout, r->resource_id);
            printf(",\"text\":");
            snap_json_str(stdout, r->text);
            printf(",\"desc\":");
            snap_json_str(stdout, r->desc);
            putchar('}');
            continue;
        }
        printf("[ref=%d] %s", r->ref, short_class(r->cls));
        if (*r->text) {
            putchar(' ');
            put_quoted(stdout, r->text);
        }
        if (*r->desc) {
            fputs(" (", stdout);
            put_quoted(stdout, r->desc);
            putchar(')');
        }
        if (*r->resource_id)
            printf(" #%s", r->resource_id);
        printf(" at %d,%d\n", r->x, r->y);
    }
    if (json)
        puts("]");
    adbc_free(refs);
    adbc_ui_snap_free(s);
    return status;
}

/* ---- waits -------------------------------------------------------------------------- */

/* -t SECONDS (0 < S <= 86400) into milliseconds. */
static int seconds_arg(const char *s, int *ms)
{
    return snap_seconds(s, 86400, ms);
}

/* Options every wait takes; returns 1 when argv[*i] was one of them, -1 on
 * a bad value. */
static int wait_opt(int argc, char **argv, int *i, int *timeout_ms, int *show, int *json)
{
    const char *a = argv[*i];
    if (strcmp(a, "-t") == 0) {
        if (*i + 1 >= argc || seconds_arg(argv[*i + 1], timeout_ms) < 0)
            return -1;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--snapshot") == 0) {
        *show = 1;
        return 1;
    }
    if (strcmp(a, "--json") == 0) {
        *show = *json = 1;
        return 1;
    }
    return 0;
}

/* After a wait: print the snapshot that satisfied it when asked. */
static int wait_done(snap_ctx *ctx, const char *what, int rc, adbc_ui_snap *s, int show, int json)
{
    if (rc < 0) {
        adbc_ui_snap_free(s);
        return snap_fail(what, rc);
    }
    int status = 0;
    if (show && s) {
        status = snap_print(stdout, s, json, ctx->quiet);
        if (status == 0)
            status = snap_refs_save(ctx, s);
    }
    adbc_ui_snap_free(s);
    return status;
}

/* Run a wait through tools/ops' core (the waits adbc-mcp and adbc-serve
 * run), its dumps bounded by --timeout, then finish as above. */
static int wait_core(snap_ctx *ctx, const char *what, ops_wait_req *r, int show, int json)
{
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    r->dump_ms = ctx->timeout_ms;
    adbc_ui_snap *s = NULL;
    ops_ctx oc;
    ops_ctx_init(&oc, c, &s, ops_now_ms() + (int64_t)r->timeout_ms + ctx->timeout_ms + 1000);
    int rc = ops_wait_run(&oc, r) == 0 ? 0 : oc.err.rc ? oc.err.rc : ADBC_EINVAL;
    if (rc == ADBC_ESTALE) {
        adbc_ui_snap_free(s);
        return snap_fail_act(what, rc);
    }
    return wait_done(ctx, what, rc, s, show, json);
}

static int cmd_wait_text(snap_ctx *ctx, int argc, char **argv)
{
    const char *text = NULL;
    unsigned flags = 0;
    int timeout_ms = 10000, show = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        int k = wait_opt(argc, argv, &i, &timeout_ms, &show, &json);
        if (k < 0)
            return snap_usage(&snap_cmds_ui[2], "-t takes seconds (0 < S <= 86400)");
        if (k)
            continue;
        if (strcmp(argv[i], "--gone") == 0)
            flags |= ADBC_UI_WAIT_GONE;
        else if (strcmp(argv[i], "--contains") == 0)
            flags |= ADBC_UI_MATCH_CONTAINS;
        else if (strcmp(argv[i], "--nocase") == 0)
            flags |= ADBC_UI_MATCH_NOCASE;
        else if (!text && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
            text = argv[i];
        else
            return snap_usage(&snap_cmds_ui[2], "unknown argument");
    }
    if (!text)
        return snap_usage(&snap_cmds_ui[2], "give the text to wait for");
    ops_wait_req r = {.text = text, .flags = flags, .timeout_ms = timeout_ms};
    return wait_core(ctx, "wait-text", &r, show, json);
}

static int cmd_wait_state(snap_ctx *ctx, int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    size_t npos = 0;
    int timeout_ms = 10000, show = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        int k = wait_opt(argc, argv, &i, &timeout_ms, &show, &json);
        if (k < 0)
            return snap_usage(&snap_cmds_ui[3], "-t takes seconds (0 < S <= 86400)");
        if (k)
            continue;
        if (argv[i][0] == '-' || npos == 2)
            return snap_usage(&snap_cmds_ui[3], "unknown argument");
        pos[npos++] = argv[i];
    }
    if (npos != 2)
        return snap_usage(&snap_cmds_ui[3], "give a ref and a state");
    adbc_ui_cond cond;
    if (adbc_ui_cond_parse(&cond, pos[1]) < 0)
        return snap_usage(&snap_cmds_ui[3], adbc_last_error());
    adbc_ui_reftab *tab;
    const adbc_ui_ref *ref;
    int st = snap_ref_lookup(ctx, pos[0], &tab, &ref);
    if (st)
        return st;
    ops_wait_req r = {.elem = ref, .cond = cond, .timeout_ms = timeout_ms};
    st = wait_core(ctx, "wait-state", &r, show, json);
    adbc_ui_reftab_free(tab);
    return st;
}

static int cmd_wait_stable(snap_ctx *ctx, int argc, char **argv)
{
    int timeout_ms = 10000, show = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        int k = wait_opt(argc, argv, &i, &timeout_ms, &show, &json);
        if (k < 0)
            return snap_usage(&snap_cmds_ui[4], "-t takes seconds (0 < S <= 86400)");
        if (!k)
            return snap_usage(&snap_cmds_ui[4], "unknown argument");
    }
    ops_wait_req r = {.timeout_ms = timeout_ms};
    return wait_core(ctx, "wait-stable", &r, show, json);
}
