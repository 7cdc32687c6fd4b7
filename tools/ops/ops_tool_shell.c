/* SPDX-License-Identifier: Apache-2.0 */
/* The shell tool: only with --allow-shell, every command logged. Off by
 * default because a shell command can do anything the device's shell user
 * can, which none of the other tools allow. */
#include "ops_tool.h"

#include <string.h>

#include "adbc/shell.h"

#define SHELL_MAX_OUTPUT (1u << 20)

static int t_shell(ops_call *c, const cJSON *a)
{
    const char *cmd;
    if (ops_call_str(c, a, "command", 1, 8192, &cmd) || ops_call_device(c))
        return -1;
    ops_call_log(c, "shell on %s (allowed by --allow-shell): %s", c->dev->serial, cmd);
    adbc_run_result res;
    memset(&res, 0, sizeof(res));
    int rc = adbc_run(&res, c->dev->conn, ADBC_SHELL_AUTO, cmd, NULL, 0, SHELL_MAX_OUTPUT,
                      ops_call_remaining(c));
    if (rc < 0) {
        adbc_run_result_clear(&res);
        return ops_call_adbc(c, rc, "shell");
    }
    ops_call_text(c, "exit status: %d%s\nstdout:\n%s%s%s", res.exit_code,
              res.exit_code < 0 ? " (unknown: the device has no shell_v2)" : "",
              res.out ? (const char *)res.out : "", res.err_len ? "\nstderr:\n" : "",
              res.err_len ? (const char *)res.err : "");
    if (res.exit_code > 0)
        c->is_error = 1;
    adbc_run_result_clear(&res);
    return 0;
}

const ops_tool ops_tools_shell[] = {
    {"shell", "Run a shell command",
     "Run a command in the device's shell and return its output and exit status. Present "
     "only because this server was started with --allow-shell; every command is logged.",
     "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}},\"required\":"
     "[\"command\"],\"additionalProperties\":false}",
     t_shell, OPS_TOOL_SHELL},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
