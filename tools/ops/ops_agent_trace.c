/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's trace: one JSON Lines file per task, every record one line
 * (docs/agent.md, "The trace"). The file is created whole with its first
 * line or not at all (ops_write_file_atomic, mode 0600, never over an
 * existing file), then reopened without following links and each later
 * line appended and flushed as it happens, so a task that dies leaves
 * every step it took. What the model client is given as its key never
 * reaches the records: they are built from the prompts, the answers and
 * the screens only. */
#include "ops_agent_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ops_util.h"

struct agent_trace {
    FILE *f;
    int failed;    /* a write failed: said once in the run's reason, then dropped */
};

static char *line_of(cJSON *rec)
{
    char *s = cJSON_PrintUnformatted(rec);
    cJSON_Delete(rec);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *l = realloc(s, n + 2);
    if (!l) {
        free(s);
        return NULL;
    }
    l[n] = '\n';
    l[n + 1] = 0;
    return l;
}

int agent_trace_open(agent_trace **out, const char *path, cJSON *first, ops_err *e)
{
    *out = NULL;
    char *l = line_of(first);
    if (!l)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    if (ops_write_file_atomic(path, l, strlen(l), 0600, OPS_FILE_NOREPLACE) != 0) {
        int err = errno;
        free(l);
        if (err == EEXIST)
            return ops_fail(e, OPS_EARG, "the trace file %s exists already: a trace is never "
                                         "written over; name a new file", path);
        return ops_fail(e, OPS_EARG, "cannot create the trace file %s: %s (check that its "
                                     "directory exists and is writable)", path, strerror(err));
    }
    free(l);
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077)) {
        int err = fd < 0 ? errno : EPERM;
        if (fd >= 0)
            close(fd);
        return ops_fail(e, OPS_EFAIL, "the trace file %s changed under adbc after it was "
                                      "created (%s): not written to", path, strerror(err));
    }
    agent_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->f = fdopen(fd, "a"))) {
        free(t);
        close(fd);
        return ops_fail(e, OPS_EFAIL, "out of memory");
    }
    *out = t;
    return 0;
}

int agent_trace_write(agent_trace *t, cJSON *rec)
{
    if (!t) {
        cJSON_Delete(rec);
        return 0;
    }
    char *l = line_of(rec);
    if (!l || t->failed) {
        free(l);
        t->failed = 1;
        return -1;
    }
    size_t n = strlen(l);
    if (fwrite(l, 1, n, t->f) != n || fflush(t->f) != 0)
        t->failed = 1;
    free(l);
    return t->failed ? -1 : 0;
}

int agent_trace_failed(const agent_trace *t)
{
    return t && t->failed;
}

int agent_trace_close(agent_trace *t)
{
    if (!t)
        return 0;
    int bad = t->failed;
    if (fsync(fileno(t->f)) != 0 && errno != EINVAL)
        bad = 1;
    if (fclose(t->f) != 0)
        bad = 1;
    free(t);
    return bad ? -1 : 0;
}

double agent_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

cJSON *agent_rec(const char *type, int step)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    cJSON_AddStringToObject(r, "type", type);
    if (step > 0)
        cJSON_AddNumberToObject(r, "step", step);
    cJSON_AddNumberToObject(r, "time_ms", agent_wall_ms());
    return r;
}
