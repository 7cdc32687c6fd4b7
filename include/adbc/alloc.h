/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — freeing what the library hands out.
 *
 * adbc allocates through its own allocator (lib/core/alloc.c), so memory it
 * returns is released through it too, never with the C library's free:
 *   - plain buffers and strings (*out of adbc_shell_quote, adbc_reverse_list,
 *     adbc_key_public_line, adbc_ui_snap_json, adbc_screenshot, ...):
 *     adbc_free();
 *   - objects and lists: their own function (adbc_ui_snap_free,
 *     adbc_devices_free, adbc_run_result_clear, adbc_http_response_free, ...),
 *     which each header names beside the call that allocates.
 * Each header says which of the two a result takes. */
#ifndef ADBC_ALLOC_H
#define ADBC_ALLOC_H

#include "adbc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Free a buffer or string that an adbc function returned. NULL is fine. */
ADBC_API void adbc_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
