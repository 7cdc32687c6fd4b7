/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: the saved ref table of each device, and small helpers the UI
 * and act commands share.
 *
 * Each adbc-snap invocation is its own process, so `snapshot` leaves its
 * ref table in the user's cache directory and `tap 5` reads it back. The
 * file is per device (keyed by the address adbc-snap was given), so two
 * devices driven side by side keep their own refs. */
#include "snap_ui.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p for the cache directory, private to the user. */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The device's name for its ref file: the address or serial it was
 * selected by; when it was picked automatically (the only USB device), the
 * connection's description, which names the port. */
static const char *device_key(snap_ctx *ctx)
{
    if (ctx->target || ctx->serial)
        return ctx->target ? ctx->target : ctx->serial;
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return NULL;
    return adbc_conn_desc(c);
}

static char *cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *dir = NULL;
    if (xdg && xdg[0] == '/') { /* the spec: relative values are ignored */
        dir = malloc(strlen(xdg) + 6);
        if (dir)
            sprintf(dir, "%s/adbc", xdg);
    } else if (home && *home) {
        dir = malloc(strlen(home) + 13);
        if (dir)
            sprintf(dir, "%s/.cache/adbc", home);
    }
    return dir;
}

char *snap_refs_path(snap_ctx *ctx)
{
    const char *key = device_key(ctx);
    if (!key)
        return NULL; /* snap_connect said why */
    char *dir = cache_dir();
    if (!dir) {
        snap_error(SNAP_EXIT_FAIL, NULL, "no cache directory: set HOME or XDG_CACHE_HOME");
        return NULL;
    }
    /* The key may hold ':' and anything else a serial holds: keep letters,
     * digits, '.', '-', '_' and %-escape the rest, so distinct keys give
     * distinct names and none can climb out of the directory. */
    size_t n = strlen(dir) + 16 + strlen(key) * 3;
    char *path = malloc(n);
    if (!path) {
        free(dir);
        return NULL;
    }
    int w = snprintf(path, n, "%s/refs-", dir);
    for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
        if ((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
            *k == '-' || *k == '_' || *k == '.')
            path[w++] = (char)*k;
        else
            w += sprintf(path + w, "%%%02X", *k);
    }
    strcpy(path + w, ".tab");
    free(dir);
    return path;
}

int snap_refs_save(snap_ctx *ctx, const adbc_ui_snap *s)
{
    char *path = snap_refs_path(ctx);
    if (!path)
        return SNAP_EXIT_FAIL;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    int rc = make_dirs(path);
    if (rc < 0)
        fprintf(stderr, "adbc-snap: cannot create %s: %s\n", path, strerror(errno));
    *slash = '/';
    if (rc == 0 && (rc = adbc_ui_reftab_save(adbc_ui_snap_refs(s), path)) < 0)
        snap_fail("saving the refs", rc);
    free(path);
    return rc < 0 ? SNAP_EXIT_FAIL : 0;
}

int snap_int(const char *s, long min, long max, long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "5", "ref=5", "[ref=5]" (as printed in a snapshot) */
static int parse_ref(const char *arg, long *ref)
{
    char buf[32];
    size_t n = strlen(arg);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, arg, n + 1);
    char *p = buf;
    if (*p == '[' && n > 1 && p[n - 1] == ']') {
        p[n - 1] = '\0';
        p++;
    }
    if (strncmp(p, "ref=", 4) == 0)
        p += 4;
    return snap_int(p, 1, 1000000000, ref);
}

int snap_ref_lookup(snap_ctx *ctx, const char *arg, adbc_ui_reftab **tab,
                    const adbc_ui_ref **ref)
{
    *tab = NULL;
    *ref = NULL;
    long n;
    if (parse_ref(arg, &n) < 0) {
        return snap_error(SNAP_EXIT_USAGE, NULL,
                          "\"%s\" is not a ref: give the number N of a [ref=N] in the last "
                          "snapshot", arg);
    }
    char *path = snap_refs_path(ctx);
    if (!path)
        return SNAP_EXIT_FAIL;
    int rc = adbc_ui_reftab_load(tab, path);
    if (rc == ADBC_ENOTFOUND) {
        free(path);
        return snap_error(SNAP_EXIT_FAIL, NULL,
                          "no snapshot saved for %s: run `adbc-snap snapshot` first and use its "
                          "refs", device_key(ctx));
    }
    if (rc < 0) {
        snap_fail("the saved refs", rc);
        fprintf(stderr, "adbc-snap: run `adbc-snap snapshot` again\n");
        free(path);
        return SNAP_EXIT_FAIL;
    }
    free(path);
    *ref = adbc_ui_reftab_get(*tab, (int)n);
    if (!*ref) {
        size_t count = adbc_ui_reftab_count(*tab);
        if (count)
            snap_error(SNAP_EXIT_FAIL, NULL,
                       "ref %ld is not in the last snapshot (its refs are 1-%zu): take a new "
                       "snapshot", n, count);
        else
            snap_error(SNAP_EXIT_FAIL, NULL,
                       "ref %ld is not in the last snapshot (it had no refs): take a new "
                       "snapshot", n);
        adbc_ui_reftab_free(*tab);
        *tab = NULL;
        return SNAP_EXIT_FAIL;
    }
    return 0;
}

int snap_print(FILE *f, const adbc_ui_snap *s, int json, int quiet)
{
    if (json) {
        char *j;
        size_t n;
        int rc = adbc_ui_snap_json(&j, &n, s);
        if (rc < 0)
            return snap_fail("JSON", rc);
        fwrite(j, 1, n, f);
        fputc('\n', f);
        adbc_free(j);
        return 0;
    }
    size_t n;
    const char *text = adbc_ui_snap_text(s, &n);
    if (n == 0) {
        if (!quiet)
            fprintf(stderr, "adbc-snap: the screen shows nothing to list (every element was "
                            "pruned: no text, descriptions or actionable elements)\n");
        return 0;
    }
    fwrite(text, 1, n, f);
    fputc('\n', f);
    return 0;
}

void snap_ui_opts(const snap_ctx *ctx, adbc_ui_opts *o)
{
    adbc_ui_opts_init(o);
    o->timeout_ms = ctx->timeout_ms;
}

int snap_fail_act(const char *what, int rc)
{
    return snap_fail_status(what, rc, rc == ADBC_ESTALE ? SNAP_EXIT_STALE : SNAP_EXIT_FAIL);
}
