/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON argument layer over the operation core (ops_core.h), for the
 * front ends that speak JSON (adbc-mcp, adbc-serve): each function reads a
 * JSON object into the core's request structs (every argument checked and
 * named when wrong, nothing sent) and, where a result is JSON, builds it.
 * What an operation means and does is the core's, never this layer's.
 * Built only with cJSON (libadbc_ops_json). */
#ifndef ADBC_OPS_JSON_H
#define ADBC_OPS_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "ops_core.h"

/* ---- JSON requests (ops_json_read.c) ---- */
/* Parse text[0..len) as one JSON value followed by blanks only. Refused
 * (OPS_EARG, with the byte offset): bytes that are not UTF-8, a NUL byte,
 * "\u0000" in a string (cJSON would cut the string there), a key twice
 * in one object. 0 with *out (cJSON_Delete it) or -1 with e filled. */
int ops_json_parse(ops_err *e, const char *text, size_t len, cJSON **out);
/* The member key of the object text[0..len) (text ops_json_parse took) as
 * the very text it was written with, a cJSON raw item (cJSON_Delete it):
 * what must be echoed exactly (a JSON-RPC id such as 9007199254740991 or
 * 1.5 would not survive a double). NULL when there is none (or no memory). */
cJSON *ops_json_member_raw(const char *text, size_t len, const char *key);

/* ---- arguments (ops_args.c): each check names the argument ---- */
int ops_arg_str(ops_err *e, const cJSON *args, const char *name, int required, size_t maxlen,
                const char **out);
int ops_arg_int(ops_err *e, const cJSON *args, const char *name, int required, int lo, int hi,
                int *out);
int ops_arg_bool(ops_err *e, const cJSON *args, const char *name, int *out);
/* Android package / permission names (ops_android_name). */
int ops_arg_name(ops_err *e, const cJSON *args, const char *name, int required,
                 const char **out);
/* Refuse any member of args not in names (NULL-terminated). */
int ops_arg_only(ops_err *e, const cJSON *args, const char *const *names);

/* ---- requests (ops_json.c) ---- */
/* Read {"id":..,"text":..,"desc":..} (also "resource_id"); at least one. */
int ops_sel_parse(ops_sel *sel, const cJSON *obj, ops_err *e);
/* Check an act's arguments (args: the act's JSON object). */
int ops_act_parse(ops_act *a, ops_action action, const cJSON *args, ops_err *e);
/* {text, desc, resource_id, class, contains, ignore_case}: at least one of
 * the first four. */
int ops_find_parse(adbc_ui_selector *sel, const cJSON *a, ops_err *e);
/* An intent from {action, data, component, extras:[{type,key,value}]}. */
int ops_intent_parse(adbc_intent *in, adbc_intent_extra *extras, size_t cap, const cJSON *a,
                     ops_err *e);
/* {"op":"launch"|"stop","package":P}, {"op":"top"}, {"op":"intent",...}
 * run by ops_app_run. *result: {"done":...} or, for top, {"activity","package"}. */
int ops_app(ops_ctx *c, const cJSON *a, cJSON **result);
/* {"text":T[,"gone","contains","ignore_case"]} or {"stable":true}, with
 * "timeout_ms" (default 10000), run by ops_wait_run. */
int ops_wait(ops_ctx *c, const cJSON *a);

/* ---- results (ops_json.c) ---- */
/* The refs of s as a JSON array: ref, role class, text, desc, id, states,
 * bounds [x1,y1,x2,y2], tap point [x,y]. */
cJSON *ops_refs_json(const adbc_ui_snap *s);
/* {"top":{"activity","package"},"snapshot":TEXT,"snapshot_id","refs":[...]}
 * from ops_observe_take. */
int ops_observe(ops_ctx *c, cJSON **out);

#endif
