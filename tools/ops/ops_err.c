/* SPDX-License-Identifier: Apache-2.0 */
/* Operation errors: one code a front end maps to its own form, and a
 * message that says what went wrong and what to do next. */
#include "ops_core.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "adbc/error.h"
#include "portable.h"

const char *ops_code_name(ops_code code)
{
    switch (code) {
    case OPS_OK: return "ok";
    case OPS_EARG: return "bad_request";
    case OPS_ENOREF: return "unknown_ref";
    case OPS_ESTALE: return "stale";
    case OPS_ENOMATCH: return "not_found";
    case OPS_EAMBIGUOUS: return "ambiguous";
    case OPS_EBUSY: return "busy";
    case OPS_EDEVICE: return "device_gone";
    case OPS_ETIMEOUT: return "timeout";
    case OPS_EFAIL: return "failed";
    case OPS_ESTOPPING: return "stopping";
    }
    return "failed";
}

int ops_code_http(ops_code code)
{
    switch (code) {
    case OPS_OK: return 200;
    case OPS_EARG: return 400;
    case OPS_ENOREF: return 404;
    case OPS_ENOMATCH: return 404;
    case OPS_ESTALE: return 409;
    case OPS_EAMBIGUOUS: return 409;
    case OPS_EBUSY: return 423;
    case OPS_EDEVICE: return 502;
    case OPS_ETIMEOUT: return 504;
    case OPS_EFAIL: return 500;
    case OPS_ESTOPPING: return 503;
    }
    return 500;
}

int ops_fail(ops_err *e, ops_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    e->rc = 0;
    return -1;
}

static const char *next_step(int rc)
{
    switch (rc) {
    case ADBC_ESTALE: return "call snapshot and use a ref from it";
    case ADBC_ETIMEDOUT: return "the device did not answer in time; check it is awake and "
                                "responsive, then retry (list_devices shows its state)";
    case ADBC_ECLOSED:
    case ADBC_EIO: return "the connection to the device was lost; check it is still "
                          "connected (list_devices), then retry";
    case ADBC_ENOTFOUND: return "check the name, or take a new snapshot";
    case ADBC_EUNSUPPORTED: return "this device cannot do that";
    default: return NULL;
    }
}

static ops_code code_of(int rc)
{
    switch (rc) {
    case ADBC_ESTALE: return OPS_ESTALE;
    case ADBC_ETIMEDOUT: return OPS_ETIMEOUT;
    case ADBC_ECLOSED:
    case ADBC_EIO:
    case ADBC_EPROTO:
    case ADBC_EOFFLINE:
    case ADBC_EREFUSED:
    case ADBC_EUNAUTHORIZED: return OPS_EDEVICE;
    case ADBC_EINVAL: return OPS_EARG;
    case ADBC_EBUSY: return OPS_EBUSY;
    default: return OPS_EFAIL;
    }
}

int ops_fail_adbc(ops_err *e, int rc, const char *what)
{
    const char *msg = adbc_last_error();
    const char *step = next_step(rc);
    ops_fail(e, code_of(rc), "%s failed: %s%s%s%s", what, msg && *msg ? msg : adbc_strerror(rc),
             step ? " (" : "", step ? step : "", step ? ")" : "");
    e->rc = rc;
    return -1;
}

int64_t ops_now_ms(void)
{
    return portable_now_ms();
}
