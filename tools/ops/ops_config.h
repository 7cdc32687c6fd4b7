/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' configuration files: one strict subset of TOML, read the same
 * way for every tool (adbc-mcp's mcp.toml, the agent's [model] table): [table]
 * headers, bare keys, basic and literal strings, decimal integers, booleans
 * and arrays of strings (which may span lines).
 *
 * Only the tables a schema names are accepted, and each key = value goes to
 * the schema's callback, which refuses what it does not know; a duplicate
 * table or key, TOML this reader does not take, or a callback's refusal
 * stops the read with "FILE:LINE: what", so a typo in a safety setting
 * never passes silently. */
#ifndef ADBC_OPS_CONFIG_H
#define ADBC_OPS_CONFIG_H

#include <stddef.h>

typedef enum ops_cfg_type { OPS_CFG_STR, OPS_CFG_INT, OPS_CFG_BOOL, OPS_CFG_ARR } ops_cfg_type;

/* One value. A callback may take s or arr (setting them to NULL / 0). */
typedef struct ops_cfg_val {
    ops_cfg_type type;
    char *s;           /* OPS_CFG_STR: UTF-8, no NUL inside */
    long long i;       /* OPS_CFG_INT */
    int b;             /* OPS_CFG_BOOL */
    char **arr;        /* OPS_CFG_ARR: strings */
    size_t n;
} ops_cfg_val;

typedef struct ops_cfg_schema {
    const char *const *tables; /* the tables a file may hold, NULL-terminated */
    /* Each key = value of a table, in file order: 0, or -1 with err filled
     * ("[table] key must be ..."; the reader puts "FILE:LINE: " in front,
     * the line of the key). */
    int (*key)(void *ud, const char *table, const char *key, ops_cfg_val *v, char *err,
               size_t errlen);
    void *ud;
} ops_cfg_schema;

/* Parse text[0..len) (need not be NUL-terminated) by schema. name labels
 * errors. 0, or -1 with err filled. */
int ops_cfg_parse(const char *text, size_t len, const char *name, const ops_cfg_schema *schema,
                  char *err, size_t errlen);

/* Read and parse a file (at most 1 MiB). A missing file is an error only if
 * must_exist. */
int ops_cfg_load(const char *path, int must_exist, const ops_cfg_schema *schema, char *err,
                 size_t errlen);

/* Where a tool's config file FILE is by default: $XDG_CONFIG_HOME/adbc/FILE,
 * else $HOME/.config/adbc/FILE; malloc'd, NULL when neither is set. */
char *ops_cfg_path(const char *file);

/* "a string", "an integer", "true or false", "an array". */
const char *ops_cfg_type_name(ops_cfg_type t);
/* 0 when v has type, else -1 with "[table] key must be T, not U" in err. */
int ops_cfg_want(const ops_cfg_val *v, ops_cfg_type type, const char *table, const char *key,
                 char *err, size_t errlen);
/* "unknown key 'K' in [T] (known: a, b, c)" into err; -1. */
int ops_cfg_unknown(const char *table, const char *key, const char *const *known, char *err,
                    size_t errlen);
/* A scalar as text ("true", "123", the string), for settings read as text
 * (ops_llm_cfg_set). -1 for an array or when it does not fit. */
int ops_cfg_text(const ops_cfg_val *v, char *buf, size_t cap);
void ops_cfg_val_free(ops_cfg_val *v);
void ops_cfg_list_free(char **v, size_t n);

#endif
