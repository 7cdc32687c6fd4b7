/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap agent: printing steps and ends (cmd_agent.c), the same for a
 * task run here and one run by a remote adbc-serve (agent_remote.c). */
#ifndef ADBC_SNAP_AGENT_PRINT_H
#define ADBC_SNAP_AGENT_PRINT_H

#include <pthread.h>
#include <stdatomic.h>

#include "ops_agent.h"

/* Exit statuses of a task that did not end done (docs/agent.md). */
#define AGENT_EXIT_FAILED 1
#define AGENT_EXIT_MAX_STEPS 3
#define AGENT_EXIT_SAFETY 4
#define AGENT_EXIT_CANCELLED 5

typedef struct printer {
    int json;
    pthread_mutex_t mu; /* interactive: the task's thread and the reader print */
} printer;

/* A step as text, or with json a JSON line (an ops_agent_step_fn; arg: the
 * printer). */
void agent_print_step(void *arg, const ops_agent_step *s);
/* The end: the answer on stdout, or why on stderr; with json a JSON line.
 * Returns the exit status. */
int agent_print_end(printer *p, const ops_agent_result *r);

/* A task on a remote adbc-serve (its tasks API): started, its steps printed
 * as they come, cancelled there when *cancel is set. Returns the exit
 * status. */
typedef struct agent_remote_opts {
    const char *url;         /* http(s)://HOST:PORT of adbc-serve */
    const char *token_file;  /* NULL: ADBC_SERVE_TOKEN */
    const char *goal, *model, *device;
    int max_steps, step_delay_ms; /* -1: the server's defaults */
    atomic_int *cancel;
    printer *p;
    /* The farm's tasks (adbc-snap farm): "/v1/farm/tasks" instead of
     * "/v1/tasks", the selector (a JSON object's text) instead of device,
     * and id: follow that task instead of starting one. NULL: none. */
    const char *prefix, *select, *id;
} agent_remote_opts;
int agent_remote(const agent_remote_opts *o);
/* One call to the server (url, token_file, cancel of o): the envelope's
 * result, or NULL after printing why (*status the exit status). */
cJSON *agent_remote_call(const agent_remote_opts *o, const char *method, const char *path,
                         const char *body, int *status);

#endif
