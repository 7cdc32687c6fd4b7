/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — a native C implementation of the Android Debug Bridge protocol.
 *
 * Include this header for the whole public API. Conventions (as libgit2):
 * functions return 0 or a negative adbc_err; out-parameters come first
 * (what a call fills in, then the object it works on, then its inputs;
 * read-style calls that return a byte count, adbc_stream_read and
 * adbc_shell_read, keep read(2)'s order); byte counts that may be negative
 * errors are ssize_t; types are opaque; every _new/_open has a _free/_close,
 * and buffers and strings adbc hands out are freed with adbc_free()
 * (adbc/alloc.h); adbc_last_error() gives the calling thread's message for
 * the last failure.
 *
 * NULL: a pointer argument may be NULL only where its function's comment
 * says so ("opts may be NULL"). Elsewhere a NULL handle or out-parameter
 * is ADBC_EINVAL naming it; a query on a NULL handle returns 0, NULL
 * or "" (adbc_conn_version, adbc_stream_destination); a free or close of
 * NULL does nothing. A struct the caller fills in whose .size is 0 was
 * never initialised: ADBC_EINVAL saying which X_init() to call.
 */
#ifndef ADBC_ADBC_H
#define ADBC_ADBC_H

#include "adbc/version.h"
#include "adbc/error.h"
#include "adbc/alloc.h"
#include "adbc/auth.h"
#include "adbc/banner.h"
#include "adbc/session.h"
#include "adbc/transport.h"
#include "adbc/conn.h"
#include "adbc/shell.h"
#include "adbc/sync.h"
#include "adbc/tls.h"
#include "adbc/pair.h"
#include "adbc/ui.h"
#include "adbc/act.h"
#include "adbc/usb.h"
#include "adbc/devices.h"
#include "adbc/mdns.h"
#include "adbc/forward.h"
#include "adbc/webview.h"

#endif
