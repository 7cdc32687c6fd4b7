/* SPDX-License-Identifier: Apache-2.0 */
/* Error codes, their descriptions, and the per-thread last-error message. */
#include "adbc/error.h"
#include "core/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_msg[1024];

const char *adbc_strerror(int code)
{
    switch (code) {
    case ADBC_OK: return "success";
    case ADBC_EINVAL: return "invalid argument";
    case ADBC_ENOMEM: return "out of memory";
    case ADBC_EIO: return "I/O error";
    case ADBC_ETIMEDOUT: return "timed out";
    case ADBC_ECLOSED: return "closed by peer";
    case ADBC_EPROTO: return "protocol violation";
    case ADBC_EUNAUTHORIZED: return "device unauthorized";
    case ADBC_EOFFLINE: return "device offline";
    case ADBC_EREFUSED: return "refused";
    case ADBC_ENOTFOUND: return "not found";
    case ADBC_EUNSUPPORTED: return "not supported";
    case ADBC_EREMOTE: return "device reported an error";
    case ADBC_ESTALE: return "stale ref";
    case ADBC_EKEY: return "key error";
    case ADBC_EPERM: return "permission denied";
    case ADBC_EBUSY: return "busy";
    case ADBC_ENOTPAIRED: return "not paired";
    case ADBC_EPAIRCODE: return "wrong pairing code";
    case ADBC_EFORMAT: return "malformed input";
    case ADBC_ECANCELED: return "cancelled";
    case ADBC_ELIMIT: return "limit reached";
    default: return "unknown error";
    }
}

const char *adbc_last_error(void)
{
    return last_msg;
}

void adbc_clear_error(void)
{
    last_msg[0] = '\0';
}

int core_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    return code;
}

int core_null(const char *fn, const char *what)
{
    return core_fail(ADBC_EINVAL, "%s: %s is NULL", fn, what);
}

int core_fail_keep(int code)
{
    if (last_msg[0] == '\0')
        snprintf(last_msg, sizeof last_msg, "%s", adbc_strerror(code));
    return code;
}
