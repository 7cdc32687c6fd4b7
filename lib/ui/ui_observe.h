/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot layer's interface to the act layer (lib/act): a snapshot
 * whose exec round trip also runs one more command beside the dump, and
 * the frame mark acts compare before their input. Not installed. */
#ifndef ADBC_UI_OBSERVE_H
#define ADBC_UI_OBSERVE_H

#include "adbc/ui.h"

/* adbc_ui_snapshot, with side (may be NULL; at most ~500 bytes of shell)
 * run in the background beside the dump in the same round trip. *side_out
 * (may be NULL) gets what side printed (malloc'd, NUL-terminated; "" when
 * it printed nothing). */
int ui_snapshot_with(adbc_ui_snap **out, char **side_out, adbc_conn *c, const adbc_ui_opts *opts,
                     const char *side);

/* The device command that prints the frame mark ui_dump_extras reads. */
#define UI_FRAME_COMMAND "service call SurfaceFlinger 1013 2>/dev/null"

#endif
