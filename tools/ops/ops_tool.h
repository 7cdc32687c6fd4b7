/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the tool table (ops_tools.h): a tool's record, the sets each
 * ops_tool_*.c file defines, and what their handlers share. Not for front
 * ends. */
#ifndef ADBC_OPS_TOOL_H
#define ADBC_OPS_TOOL_H

#include "ops_json.h"
#include "ops_tools.h"

typedef int (*ops_tool_fn)(ops_call *c, const cJSON *args);
typedef struct ops_tool {
    const char *name;
    const char *title;
    const char *description;
    const char *schema;       /* JSON Schema of the arguments */
    ops_tool_fn fn;
    unsigned flags;           /* OPS_TOOL_* */
} ops_tool;

/* Tool sets, each in its own file, each ended by a record with no name. */
extern const ops_tool ops_tools_device[];
extern const ops_tool ops_tools_ui[];
extern const ops_tool ops_tools_input[];
extern const ops_tool ops_tools_app[];
extern const ops_tool ops_tools_shot[];
extern const ops_tool ops_tools_shell[];
extern const ops_tool ops_tools_more[];
extern const ops_tool ops_tools_termux[];

/* ---- arguments: ops_args.c's checks, failing the call with their message ---- */
int ops_call_str(ops_call *c, const cJSON *args, const char *name, int required, size_t maxlen,
                 const char **out);
int ops_call_int(ops_call *c, const cJSON *args, const char *name, int required, int lo, int hi,
                 int *out);
int ops_call_bool(ops_call *c, const cJSON *args, const char *name, int *out);
/* Android package / permission names (ops_android_name). */
int ops_call_name(ops_call *c, const cJSON *args, const char *name, int required,
                  const char **out);

/* ops_call_device's part of ops_cancel (ops_tools.c): the held device's
 * connection is what a cancel interrupts. -1 when cancelled already. */
int ops_cancel_hold(ops_call *c);

/* An operation context on the call's device (ops_call_device done). */
void ops_call_ctx(ops_call *c, ops_ctx *oc);

/* A new file name in the front end's directory (shot_dir, created):
 * DIR/SERIAL-YYYYmmdd-HHMMSS-MS-N.EXT, and the time as ISO 8601 in iso.
 * With ext NULL only iso is set. -1 with errno when it cannot be made. */
int ops_tool_host_path(ops_call *c, const char *ext, char *path, size_t n, char *iso,
                       size_t isz);
/* A file that something else fills (a pull, a program given its name): the
 * final name as above, and tmp, an empty file beside it made exclusively
 * (mkostemp: a name nobody can predict, never a link planted in the
 * folder). The caller fills tmp, then ops_tool_host_commit renames it to
 * final, which replaces whatever is at that name (a planted symlink
 * included) instead of writing through it. -1 with errno. */
int ops_tool_host_tmp(ops_call *c, const char *ext, char *final, size_t n, char *tmp,
                      size_t tn, char *iso, size_t isz);
/* rename tmp to final, mode 0644; on failure tmp is removed. -1 with errno. */
int ops_tool_host_commit(const char *tmp, const char *final);
/* Add {"path":P,"bytes":N,"timestamp":ISO,"mimeType":M} (path made
 * absolute; iso and path may be NULL: left out) and the members of extra
 * (taken; may be NULL) to the result as one JSON text, written by cJSON so
 * any byte of a folder's name is escaped. */
void ops_tool_file_json(ops_call *c, const char *path, uint64_t bytes, const char *iso,
                        const char *mime, cJSON *extra);

/* ---- snapshots (ops_tool_ui.c) ---- */
/* Take a snapshot on the call's device, keep it as the device's latest, and
 * add it to the result (text, or JSON when json). */
int ops_tool_snapshot(ops_call *c, int json, const char *heading);
/* The same, reading the pages of WebViews too when web is set. */
int ops_tool_snapshot_web(ops_call *c, int json, int web, int web_budget_ms,
                          const char *heading);
/* After an act: settle, then a snapshot as above; a failed snapshot is a
 * note, not an error (the act was done). acted (may be NULL) is the act's
 * context: when it acted on a web element (ops_act_run sets its web), the
 * snapshot reads the page too. */
void ops_tool_after_act(ops_call *c, const ops_ctx *acted);

/* ---- schema pieces the tools share (JSON Schema 2020-12 text) ----
 * Each says what the argument readers refuse (ops_args.c, ops_json.c), so a
 * client validating against the schema is not refused by the tool. */
/* ops_arg_name: an Android name of 1..255 bytes. */
#define OPS_SCHEMA_NAME(desc)                                                                 \
    "{\"type\":\"string\",\"minLength\":1,\"maxLength\":255,\"pattern\":"                      \
    "\"^[A-Za-z][A-Za-z0-9_.]*$\"" desc "}"
/* A pixel coordinate (ops_act_parse: 0..65535). */
#define OPS_SCHEMA_COORD "{\"type\":\"integer\",\"minimum\":0,\"maximum\":65535}"
/* A grid cell such as C5 (its rows depend on the screen: checked then). */
#define OPS_SCHEMA_CELL "{\"type\":\"string\",\"pattern\":\"^[A-Ja-j][0-9]{1,3}$\"}"
/* ref and selector, the element arguments (ops_json.c's target). */
#define OPS_SCHEMA_TARGET                                                                     \
    "\"ref\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000000,\"description\":"          \
    "\"a ref from the latest snapshot\"},"                                                    \
    "\"selector\":{\"type\":\"object\",\"description\":\"instead of ref: the one element with " \
    "this id (resource-id), text or desc, tried in that order, a label's clickable parent "    \
    "included; several matches are refused with the candidates listed\",\"properties\":{"     \
    "\"id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},\"text\":{\"type\":"      \
    "\"string\",\"minLength\":1,\"maxLength\":4096},\"desc\":{\"type\":\"string\","            \
    "\"minLength\":1,\"maxLength\":4096}},\"not\":{\"properties\":{\"id\":false,\"text\":"     \
    "false,\"desc\":false}},\"additionalProperties\":false}"
/* A key name (adbc_keycode_parse: a name, KEYCODE_NAME or a number). */
#define OPS_SCHEMA_KEY                                                                        \
    "{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"pattern\":\"^[A-Za-z0-9_]+$\"}"
/* A point as tap takes it (ops_act_parse OPS_TAP): {ref} | {selector} |
 * {x, y} | {cell}; at least one, x and y together, not ref and selector. */
#define OPS_SCHEMA_POINT(desc)                                                                \
    "{\"type\":\"object\"" desc ",\"properties\":{" OPS_SCHEMA_TARGET ",\"x\":"                \
    OPS_SCHEMA_COORD ",\"y\":" OPS_SCHEMA_COORD ",\"cell\":" OPS_SCHEMA_CELL ",\"snapshot\":"  \
    "{\"type\":\"string\",\"maxLength\":64}},\"not\":{\"properties\":{\"ref\":false,"          \
    "\"selector\":false,\"x\":false,\"y\":false,\"cell\":false}},\"dependentRequired\":{"      \
    "\"x\":[\"y\"],\"y\":[\"x\"]},\"dependentSchemas\":{\"ref\":{\"properties\":{\"selector\":" \
    "false}}},\"additionalProperties\":false}"

#endif
