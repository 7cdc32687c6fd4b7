/* SPDX-License-Identifier: Apache-2.0 */
/* Logs go to stderr only: stdout carries nothing but protocol. */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>

void mcp_log(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, MCP_NAME ": %s\n", buf);
}
