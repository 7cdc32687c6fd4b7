/* SPDX-License-Identifier: Apache-2.0 */
/* Device operations beyond acts and snapshots (ops_device.c): the apps
 * installed, uninstall, opening a URL, double tap and drag, the screen's
 * size, density and orientation, screen recording, the crash log and the
 * notification shade. Part of the operation core: C in, C out, no JSON.
 *
 * Every device command is built by adbc from constants and checked values
 * (numbers in range, Android names, http(s) URLs of a safe alphabet); a
 * value is passed as one shell word quoted by adbc_shell_quote, so no
 * caller text ever reaches the device's shell as code. Each operation is
 * one exec round trip unless said otherwise. */
#ifndef ADBC_OPS_DEVICE_H
#define ADBC_OPS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ops_core.h"
#include "ops_pool.h"

/* Run argv on the device: each word quoted, joined, run with ADBC_SHELL_AUTO.
 * A nonzero exit status, or nothing run, fails (what names it in the
 * message, with the device's output). *out (may be NULL): stdout,
 * NUL-terminated, malloc'd. */
int ops_run_argv(ops_ctx *c, const char *what, const char *const *argv, char **out);

/* The packages with a launcher activity (`pm query-activities --components
 * -a android.intent.action.MAIN -c android.intent.category.LAUNCHER`), one a
 * line, sorted, each once. Labels are not given: the device has them only
 * per package (dumpsys package), too dear for a list. *text malloc'd. */
int ops_apps(ops_ctx *c, char **text, int *count);

/* adbc_app_uninstall (abb_exec, or `pm uninstall PKG`), refused (OPS_EARG,
 * nothing sent) unless pkg is on allow (NULL-terminated; NULL or empty:
 * nothing may be uninstalled). */
int ops_uninstall(ops_ctx *c, const char *pkg, const char *const *allow);

/* An http or https URL (at most 2048 bytes) of printable ASCII without
 * blanks or any of ;$`\"'<>|{}^ and no "$(": 0, or OPS_EARG saying why. */
int ops_url_check(ops_err *e, const char *url);
/* `am start -a android.intent.action.VIEW -d URL` (checked as above). */
int ops_open_url(ops_ctx *c, const char *url);

/* The point an act's target names (ref verified in a fresh dump, selector
 * picked in a fresh snapshot, a point, a grid cell). */
int ops_act_point(ops_ctx *c, const ops_act *a, int *x, int *y);
/* Two taps at (x, y) inside Android's double-tap window (40..300 ms
 * between the first up and the second down, ViewConfiguration): on
 * Android 12+ two `cmd input tap` (binder calls, no JVM) in one exec; before
 * 12 `input` starts a JVM per call (~300 ms on a phone), so the second
 * starts 150 ms after the first, in parallel (the middle of the window). */
int ops_double_tap(ops_ctx *c, int x, int y);
/* `input draganddrop X1 Y1 X2 Y2 MS` (long press, then the move). */
int ops_drag(ops_ctx *c, int x1, int y1, int x2, int y2, int ms);

typedef struct ops_screen {
    int width, height;          /* in use (the override when set) */
    int phys_width, phys_height;
    int density, phys_density;  /* dpi; 0 when the device did not say */
} ops_screen;
/* `wm size; wm density`. */
int ops_screen_info(ops_ctx *c, ops_screen *s);

typedef struct ops_orient {
    int auto_rotate;            /* settings system accelerometer_rotation: 1, 0, -1 unset */
    int rotation;               /* settings system user_rotation in degrees, -1 unset */
    int locked_by_adbc;         /* a set is in force (its restore is pending) */
} ops_orient;
int ops_orientation_get(ops_ctx *c, ops_orient *o);
/* degrees 0/90/180/270: remember the settings (once, on the device), turn
 * auto-rotate off and set user_rotation. degrees -1: put back what was
 * remembered. */
int ops_orientation_set(ops_ctx *c, int degrees);

/* `screenrecord --time-limit SECONDS` (1..180, screenrecord's own bound)
 * into a file on the device, as a shell stream d holds (d->rec, closed with
 * d's connection); one at a time per device. d's lock held. */
int ops_record_start(ops_ctx *c, ops_dev *d, int seconds);
/* Stop it (SIGHUP: screenrecord finishes the file), wait for it to end
 * (at most 10 s), pull the file to local (NULL: leave it on the
 * device) and remove it there. *remote gets the device path; *bytes its
 * size. */
int ops_record_stop(ops_ctx *c, ops_dev *d, const char *local, char *remote, size_t remote_len,
                    uint64_t *bytes);

/* The crash buffer's last lines (`logcat -b crash -d -t LINES`) and the
 * crash entries of `dumpsys dropbox` (crashes, ANRs, tombstones), newest
 * first, at most entries of them. *text malloc'd. */
int ops_crashlog(ops_ctx *c, int lines, int entries, char **text);

/* `cmd statusbar expand-notifications` or `cmd statusbar collapse`. */
int ops_shade(ops_ctx *c, int open);

#endif
