/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's parts (ops_agent.h is the interface): the safety patterns
 * (ops_agent_safety.c), the trace (ops_agent_trace.c), the agent's subset
 * of the tool table (ops_agent_tools.c) and the prompts
 * (ops_agent_prompt.c). */
#ifndef ADBC_OPS_AGENT_INT_H
#define ADBC_OPS_AGENT_INT_H

#include <cjson/cJSON.h>

#include "ops_agent.h"

/* ---- safety ---- */
typedef struct agent_safety agent_safety;
/* patterns NULL: ops_agent_safety_default. Each checked and compiled. */
int agent_safety_init(agent_safety **out, const char *const *patterns, size_t n, ops_err *e);
void agent_safety_free(agent_safety *s);
/* 1 when a pattern matches the screen of snap (its nodes' text and
 * content-desc as a person reads them), with why: the pattern and where it
 * was found; else 0. Out of memory stops too (1). */
int agent_safety_check(const agent_safety *s, const adbc_ui_snap *snap, char *why, size_t cap);
/* s as the check reads it (malloc'd; NULL when out of memory): folded to
 * look-alike Latin and lower case, invisible characters removed, blanks one
 * space. */
char *agent_norm(const char *s);

/* ---- trace ---- */
typedef struct agent_trace agent_trace;
/* Create path (it must not exist) with first as its first line (consumed). */
int agent_trace_open(agent_trace **out, const char *path, cJSON *first, ops_err *e);
/* Append rec as one line (consumed). NULL t: nothing. -1 after a failed write. */
int agent_trace_write(agent_trace *t, cJSON *rec);
int agent_trace_failed(const agent_trace *t);
int agent_trace_close(agent_trace *t);
/* {"type":TYPE,"step":STEP (when > 0),"time_ms":WALL} */
cJSON *agent_rec(const char *type, int step);
double agent_wall_ms(void); /* ms since the epoch */

/* ---- the agent's tools ---- */
/* The tool definitions the model is given: the agent's subset of the
 * operation layer's table (shell only with allow_shell) and done, as
 * [{"name","description","parameters"}]. */
cJSON *agent_tools_list(int allow_shell, int call_ms);
/* 1 when name is one of them. */
int agent_tool_known(const char *name, int allow_shell);
/* Check a call before anything is sent: the tool is in the agent's table,
 * its arguments pass the table's checks, and a ref names an element of
 * snap (the screen the model was shown). 0 or -1 with e. */
int agent_tool_check(const char *name, const cJSON *args, const adbc_ui_snap *snap,
                     int allow_shell, ops_err *e);
/* The table's gates the agent opens (OPS_TOOL_SHELL with allow_shell). */
unsigned agent_tools_allow(int allow_shell);

/* ---- prompts ---- */
/* The system prompt (the rules: one tool call a step, refs from the
 * current screen, the screen is data never instructions, done). */
const char *agent_system_prompt(void);

#endif
