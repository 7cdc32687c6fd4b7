/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp's tables and keys, read by the tools' one configuration reader
 * (tools/ops/ops_config.h: a strict TOML subset). Everything is checked
 * against the known keys as it is read, and the first problem stops the
 * parse with its line number. */
#include "config.h"

#include "ops_config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcp_config_init(mcp_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->usb = 1;
    cfg->call_ms = 30000;
    cfg->connect_ms = 10000;
    cfg->settle_ms = 0; /* uiautomator dump waits for an idle UI itself */
}

static void free_list(char **v, size_t n)
{
    ops_cfg_list_free(v, n);
}

void mcp_config_free(mcp_config *cfg)
{
    free_list(cfg->allowlist, cfg->nallow);
    free_list(cfg->targets, cfg->ntargets);
    free_list(cfg->uninstall, cfg->nuninstall);
    free_list(cfg->allow_tools, cfg->nallow_tools);
    free(cfg->default_serial);
    free(cfg->screenshot_dir);
    mcp_config_init(cfg);
}

int mcp_config_allowed(const mcp_config *cfg, const char *serial)
{
    if (!serial || !*serial)
        return 0;
    for (size_t i = 0; i < cfg->nallow; i++)
        if (strcmp(cfg->allowlist[i], serial) == 0)
            return 1;
    return 0;
}

/* ---- the schema (the reader is tools/ops/ops_config.c) ---- */

static int set_int(const char *key, const ops_cfg_val *v, int *dst, int lo, int hi, char *err,
                   size_t errlen)
{
    if (ops_cfg_want(v, OPS_CFG_INT, "timeouts", key, err, errlen) != 0)
        return -1;
    if (v->i < lo || v->i > hi) {
        snprintf(err, errlen, "[timeouts] %s = %lld is out of range (%d..%d milliseconds)", key,
                 v->i, lo, hi);
        return -1;
    }
    *dst = (int)v->i;
    return 0;
}

static int set_str(const char *table, const char *key, ops_cfg_val *v, char **dst, char *err,
                   size_t errlen)
{
    if (ops_cfg_want(v, OPS_CFG_STR, table, key, err, errlen) != 0)
        return -1;
    if (!v->s[0]) {
        snprintf(err, errlen, "[%s] %s must not be empty", table, key);
        return -1;
    }
    free(*dst);
    *dst = v->s;
    v->s = NULL;
    return 0;
}

static int set_list(const char *table, const char *key, ops_cfg_val *v, char ***dst,
                    size_t *n, char *err, size_t errlen)
{
    if (ops_cfg_want(v, OPS_CFG_ARR, table, key, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < v->n; i++)
        if (!v->arr[i][0]) {
            snprintf(err, errlen, "[%s] %s: element %zu is empty", table, key, i + 1);
            return -1;
        }
    free_list(*dst, *n);
    *dst = v->arr;
    *n = v->n;
    v->arr = NULL;
    v->n = 0;
    return 0;
}

static const char *const tables[] = {"device", "timeouts", "screenshots", "apps", "tools",
                                     NULL};
static const char *const keys[][6] = {
    {"allowlist", "default", "targets", "usb", "mdns", NULL},
    {"call_ms", "connect_ms", "settle_ms", NULL},
    {"dir", NULL},
    {"uninstall", NULL},
    {"allow", NULL},
};

static int apply(void *ud, const char *tname, const char *kname, ops_cfg_val *v, char *err,
                 size_t errlen)
{
    mcp_config *cfg = ud;
    int table = -1, key = -1;
    for (int t = 0; tables[t]; t++)
        if (strcmp(tables[t], tname) == 0)
            table = t;
    if (table < 0)
        return ops_cfg_unknown(tname, kname, NULL, err, errlen);
    for (int k = 0; keys[table][k]; k++)
        if (strcmp(keys[table][k], kname) == 0)
            key = k;
    if (key < 0)
        return ops_cfg_unknown(tname, kname, keys[table], err, errlen);
    switch (table * 8 + key) {
    case 0: return set_list("device", "allowlist", v, &cfg->allowlist, &cfg->nallow, err, errlen);
    case 1: return set_str("device", "default", v, &cfg->default_serial, err, errlen);
    case 2: return set_list("device", "targets", v, &cfg->targets, &cfg->ntargets, err, errlen);
    case 3:
        if (ops_cfg_want(v, OPS_CFG_BOOL, "device", "usb", err, errlen) != 0)
            return -1;
        cfg->usb = v->b;
        return 0;
    case 4:
        if (ops_cfg_want(v, OPS_CFG_BOOL, "device", "mdns", err, errlen) != 0)
            return -1;
        cfg->mdns = v->b;
        return 0;
    case 8: return set_int("call_ms", v, &cfg->call_ms, 1000, 600000, err, errlen);
    case 9: return set_int("connect_ms", v, &cfg->connect_ms, 100, 120000, err, errlen);
    case 10: return set_int("settle_ms", v, &cfg->settle_ms, 0, 10000, err, errlen);
    case 16: return set_str("screenshots", "dir", v, &cfg->screenshot_dir, err, errlen);
    case 24:
        return set_list("apps", "uninstall", v, &cfg->uninstall, &cfg->nuninstall, err, errlen);
    case 32:
        return set_list("tools", "allow", v, &cfg->allow_tools, &cfg->nallow_tools, err, errlen);
    }
    snprintf(err, errlen, "internal: no setter");
    return -1;
}

int mcp_config_parse(mcp_config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen)
{
    ops_cfg_schema schema = {.tables = tables, .key = apply, .ud = cfg};
    return ops_cfg_parse(text, len, name, &schema, err, errlen);
}

int mcp_config_load(mcp_config *cfg, const char *path, int must_exist, char *err, size_t errlen)
{
    ops_cfg_schema schema = {.tables = tables, .key = apply, .ud = cfg};
    return ops_cfg_load(path, must_exist, &schema, err, errlen);
}
