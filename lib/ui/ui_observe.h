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

/* fn(cdp, user) on the connection's kept DevTools session of page pageid
 * behind DevTools socket sock (lib/ui/web.c keeps one per WebView once a
 * snapshot with the web part read it), so an act on a web ref goes over
 * the session its snapshot used instead of opening one. Returns fn's
 * result, or 1 without calling fn when there is no such session or
 * another thread is reading pages on the connection (the caller then opens
 * its own). A session fn failed on with anything but ADBC_EREMOTE (the
 * page answered with an error) is closed: the next read starts cold. fn
 * puts the objects it asks for in the session's group (UI_WEB_GROUP), which
 * the session lets go of with the objects of its reads; each call counts
 * as one object held for a node gone (lib/ui/web.c, WEB_MAX_STALE). */
#define UI_WEB_GROUP "adbc"
struct adbc_cdp;
int ui_web_on_page(adbc_conn *c, const char *sock, const char *pageid,
                   int (*fn)(struct adbc_cdp *cdp, void *user), void *user);

/* What makes the frame mark: SurfaceFlinger's page-flip count (a device
 * command), and the boot id (SurfaceFlinger counts from 0 again after a
 * restart, so the count alone could meet an old value). UI_BOOT_READ sets
 * $b to the boot id, or to "" where there is none, with the shell's own
 * `read`: no process started (it was a `cat` in every dump and every act).
 * A redirection that fails on a regular built-in does not end the script
 * (POSIX 2.8.1), and the group's 2>/dev/null keeps its message out of the
 * output. */
#define UI_FRAME_COMMAND "service call SurfaceFlinger 1013 2>/dev/null"
#define UI_BOOT_READ "b=; { read -r b < /proc/sys/kernel/random/boot_id; } 2>/dev/null; "

/* A frame mark: the count as 8 lowercase hex digits, then ':' and the boot
 * id (up to 36 of [0-9a-f-]; empty when the device did not give it). "" is
 * unknown. Room for one, NUL included: */
#define UI_FRAME_LEN 48

/* 1 when f is a frame mark as above (not unknown). */
int ui_frame_valid(const char *f);

#endif
