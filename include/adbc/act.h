/* SPDX-License-Identifier: Apache-2.0 */
/* adbc — acting on a device: input by ref or by point, the grid for vision
 * fallback, typing, screenshots, apps and a few device queries.
 *
 * Every call runs device commands over exec: streams, one round trip each
 * where it can. Every string that reaches the device shell is quoted as one
 * literal word (adbc_shell_quote), so no text, package name or path passed
 * here can run a command. Calls are blocking and bounded by a timeout; they
 * return 0 or a negative adbc_err with adbc_last_error() naming the cause.
 *
 * Refs. A ref (adbc_ui_ref, from a snapshot's table or a saved table) is
 * only valid for the screen it came from. Without verification an act on a
 * ref goes to the point recorded in it. With opts->verify an act first takes
 * a fresh dump and finds the element again: the element with the same exact
 * token (same content, same place) is acted on at its new point; failing
 * that, the only element with the same identity token (same content, any
 * place); none or several give ADBC_ESTALE, naming the element, and nothing
 * is sent to the device. adbc never guesses among candidates.
 * See docs/act.md.
 */
#ifndef ADBC_ACT_H
#define ADBC_ACT_H

#include "adbc/version.h"
#include "adbc/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include "adbc/conn.h"
#include "adbc/ui.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Options and outcome ---------------------------------------------------- */

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_act_opts {
    size_t size;           /* sizeof the struct as the caller compiled it */
    int timeout_ms;        /* the whole call, verification dump included; default 30000 */
    int verify;            /* 1: find refs again in a fresh dump first; default 0 */
    int settle_ms;         /* typing: the most to wait after the focusing tap for the field to
                              have focus, 0..10000; default 400 (adbc_act_type) */
    int long_press_ms;     /* long press hold, 1..60000; default 1000 */
    int scroll_ms;         /* scroll swipe duration, 1..60000; default 300 */
    int sdk;               /* device API level for typing; 0: ask the device; default 0 */
    const adbc_ui_opts *ui;/* options of the verification dump; NULL: defaults */
    /* The table the ref came from (NULL: unknown). With verify, and when the
     * table knows the device's frame mark (adbc_ui_reftab_frame), the act
     * first compares that mark with the device's, in the same round trip as
     * its input: no frame drawn since the dump means the screen is the one
     * the ref was read from, and the input goes to the recorded point with
     * no fresh dump (how = ADBC_ACT_UNCHANGED). Any other answer means a
     * fresh dump, as without it. Default NULL. */
    const adbc_ui_reftab *refs;
    /* A check of the screen an act lands on: called with every fresh dump
     * an act on a ref takes (the element found again, moved or not), with
     * the element the input would go to, before anything is sent. Acts with
     * no element (tap_xy, tap_grid, swipe, press, type_text; not back and
     * home, which leave a screen) compare the frame mark of refs in their
     * input's round trip as above; when a frame was drawn since (or refs
     * has no mark) they take a fresh dump and call the check with it and
     * at NULL first. Non-zero refuses the act: no input is sent and it fails
     * with ADBC_EPERM, the message holding why (the check writes at most cap
     * bytes there). The dump of refs (the unchanged-screen path above, no
     * fresh dump) is not passed again: it is the caller's, checked when it
     * was read. NULL: none. Default NULL. */
    int (*check)(void *user, const adbc_ui_snap *snap, const adbc_ui_ref *at, char *why,
                 size_t cap);
    void *check_user;
} adbc_act_opts;

/* Defaults as documented above. */
ADBC_API void adbc_act_opts_init_sized(adbc_act_opts *opts, size_t size);
#define adbc_act_opts_init(o) adbc_act_opts_init_sized((o), sizeof *(o))

/* How an act on a ref found its element. */
typedef enum adbc_act_how {
    ADBC_ACT_UNVERIFIED = 0, /* acted at the recorded point, no fresh dump */
    ADBC_ACT_SAME,           /* fresh dump: exact token matched (same place) */
    ADBC_ACT_MOVED,          /* fresh dump: the only identity-token match */
    ADBC_ACT_UNCHANGED       /* no fresh dump: the device drew no frame since
                                the ref's dump (adbc_act_opts.refs) */
} adbc_act_how;

/* Where an act on a ref went (out-parameter; may be NULL). */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_act_where {
    int x, y;              /* the point acted at (for scroll: the swipe's start) */
    int ref;               /* the element's ref in the fresh dump (else the given ref) */
    adbc_act_how how;
} adbc_act_where;

/* ---- Finding a ref again (no device) ---------------------------------------- */

/* The element of fresh that old describes, by the rule above: the exact-token
 * match (several: the one with identical bounds, else refused), else the only
 * identity-token match. ADBC_ESTALE when none or several; the message names
 * the element and says to take a new snapshot. *how gets ADBC_ACT_SAME or
 * ADBC_ACT_MOVED (may be NULL). */
ADBC_API int adbc_act_match(const adbc_ui_ref **found, adbc_act_how *how, const adbc_ui_reftab *fresh,
                   const adbc_ui_ref *old);

/* Take a fresh snapshot and find old in it (adbc_act_match). *snap gets the
 * snapshot (free it with adbc_ui_snap_free; *found points into it), also on ADBC_ESTALE, NULL on
 * other errors. */
ADBC_API int adbc_act_locate(adbc_ui_snap **snap, const adbc_ui_ref **found, adbc_act_how *how,
                    adbc_conn *c, const adbc_ui_ref *old, const adbc_act_opts *opts);

/* ---- Input ------------------------------------------------------------------- */

/* Tap at the ref's tap point (`input tap X Y`). */
ADBC_API int adbc_act_tap(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
                 const adbc_act_opts *opts);

/* Tap at a point. Coordinates 0..65535. */
ADBC_API int adbc_act_tap_xy(adbc_conn *c, int x, int y, const adbc_act_opts *opts);

/* Hold on the ref's tap point for opts->long_press_ms (a swipe that does not
 * move). */
ADBC_API int adbc_act_long_press(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref,
                        const adbc_act_opts *opts);

/* Swipe from (x1,y1) to (x2,y2) in ms milliseconds (1..60000). */
ADBC_API int adbc_act_swipe(adbc_conn *c, int x1, int y1, int x2, int y2, int ms,
                   const adbc_act_opts *opts);

/* Scroll directions: the way the content moves into view. DOWN shows what
 * is below (the finger moves up), RIGHT what is to the right. */
typedef enum adbc_dir { ADBC_DIR_UP = 0, ADBC_DIR_DOWN, ADBC_DIR_LEFT, ADBC_DIR_RIGHT } adbc_dir;

/* Parse "up", "down", "left", "right" (any case). */
ADBC_API int adbc_dir_parse(adbc_dir *out, const char *name);

/* The swipe a scroll of the box [x1,y1][x2,y2] makes: from its centre to a
 * third of the way to the edge opposite dir. ADBC_EINVAL for an empty box. */
ADBC_API int adbc_scroll_points(int *sx, int *sy, int *ex, int *ey, int x1, int y1, int x2, int y2,
                       adbc_dir dir);

/* Scroll inside the ref's bounds, in opts->scroll_ms. */
ADBC_API int adbc_act_scroll(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, adbc_dir dir,
                    const adbc_act_opts *opts);

/* Key code of a name: back 4, home 3, enter 66, delete 67, tab 61, escape
 * 111, up/down/left/right 19-22, space 62, power 26, volup 24, voldown 25,
 * recent 187, menu 82, search 84, camera 27, move_home 122, move_end 123,
 * forward_delete 112, page_up 92, page_down 93, wakeup 224, sleep 223; an
 * Android KeyEvent name, with or without its KEYCODE_ prefix, as Android
 * numbers it (KEYCODE_5 is the digit 5, code 12; KEYCODE_CALL is 5); any
 * case; or a decimal code 0..9999. ADBC_EINVAL for anything else (the
 * message lists the names). */
ADBC_API int adbc_keycode_parse(int *code, const char *name);

/* Name of a key code: the short name above, else Android's name without
 * KEYCODE_ ("CALL", "5"), or NULL past the table (285 and up). */
ADBC_API const char *adbc_keycode_name(int code);

/* Press a key (`input keyevent CODE`). */
ADBC_API int adbc_act_press(adbc_conn *c, int code, const adbc_act_opts *opts);

/* adbc_act_press with KEYCODE_BACK / KEYCODE_HOME. */
ADBC_API int adbc_act_back(adbc_conn *c, const adbc_act_opts *opts);
ADBC_API int adbc_act_home(adbc_conn *c, const adbc_act_opts *opts);

/* ---- Typing ----------------------------------------------------------------- */

/* Tap the ref to focus it, wait until it has focus (at most opts->settle_ms:
 * the device watches the input method's focused view when the ref's table
 * says nothing else had focus; docs/act.md), optionally clear the field
 * (move to its end, then delete as many characters as its text holds), then
 * type text. ASCII goes through `input text` (on API 35 and later word by
 * word with KEYCODE_SPACE between, since `input text` breaks on spaces
 * there; newline and tab as ENTER and TAB). Other text needs the ADB
 * Keyboard IME (com.android.adbkeyboard) as the current input method: its
 * base64 broadcast types it; without it ADBC_EUNSUPPORTED says so. */
ADBC_API int adbc_act_type(adbc_act_where *where, adbc_conn *c, const adbc_ui_ref *ref, const char *text,
                  int clear, const adbc_act_opts *opts);

/* Type into whatever has focus, without a tap (same rules as above). */
ADBC_API int adbc_act_type_text(adbc_conn *c, const char *text, const adbc_act_opts *opts);

/* ---- Grid (vision fallback) -------------------------------------------------- */

#define ADBC_GRID_COLS 10

/* The screen cut into ten columns A-J and rows of about the column width,
 * labelled "C5" (column C, row 5) from the top-left. Column i spans x from
 * i*width/10 to (i+1)*width/10 - 1; rows likewise over the height. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_grid {
    int width, height;     /* screen size in pixels */
    int cols, rows;        /* cols is always ADBC_GRID_COLS */
} adbc_grid;

/* Lay out the grid for a screen of width x height (1..65535 each). */
ADBC_API int adbc_grid_make(adbc_grid *g, int width, int height);

/* Centre of a cell named like "C5" or "c5" (column letter, row number from
 * 1). ADBC_EINVAL for a malformed name or one outside the grid. */
ADBC_API int adbc_grid_cell(int *x, int *y, const adbc_grid *g, const char *cell);

/* A text legend: the layout, then the pixel span and centre of every column
 * and every row, one a line. *out is NUL-terminated; free it with adbc_free(). */
ADBC_API int adbc_grid_legend(char **out, const adbc_grid *g);

/* Parse `wm size` output: the override size when present, else the physical
 * size. ADBC_EFORMAT when neither is there. */
ADBC_API int adbc_wm_size_parse(int *width, int *height, const char *text, size_t len);

/* The device's screen size (`wm size`, override honoured). */
ADBC_API int adbc_screen_size(int *width, int *height, adbc_conn *c, int timeout_ms);

/* The grid for the device's screen. */
ADBC_API int adbc_act_grid(adbc_grid *g, adbc_conn *c, const adbc_act_opts *opts);

/* Tap the centre of a cell of the device's grid. where (may be NULL) gets the
 * point. */
ADBC_API int adbc_act_tap_grid(adbc_act_where *where, adbc_conn *c, const char *cell,
                      const adbc_act_opts *opts);

/* ---- Screenshots ------------------------------------------------------------ */

typedef enum adbc_shot_mode {
    ADBC_SHOT_AUTO = 0,  /* raw, then PNG on the device if raw is not understood */
    ADBC_SHOT_RAW,       /* `screencap`: raw pixels, encoded to PNG by adbc */
    ADBC_SHOT_DEVICE_PNG /* `screencap -p`: the device encodes (slower) */
} adbc_shot_mode;

/* A raw frame as `screencap` writes it: a header of width, height, pixel
 * format (and, on newer devices, colour space), then rows of pixels with no
 * padding. Points into the buffer it was parsed from. */
/* abi: out — filled in by adbc; the caller only reads it */
typedef struct adbc_frame {
    uint32_t width, height;
    uint32_t format;       /* 1 RGBA_8888, 2 RGBX_8888, 3 RGB_888, 4 RGB_565, 5 BGRA_8888 */
    uint32_t colorspace;   /* 16-byte header only, else 0 */
    size_t header;         /* 12 or 16 */
    const uint8_t *pixels;
    size_t pixels_len;
} adbc_frame;

/* Parse raw screencap output. The header size is told by the length: the
 * bytes must be exactly header + width*height*bytes-per-pixel. ADBC_EFORMAT
 * for any other length or a size of 0 or above 32768; ADBC_EUNSUPPORTED for
 * a pixel format not listed above. */
ADBC_API int adbc_frame_parse(adbc_frame *f, const void *data, size_t len);

/* Encode a frame to PNG (8-bit RGB, or RGBA when some pixel is not opaque).
 * level: zlib level 0..9 (1 is fast and what screenshots use). Free *png with adbc_free(). */
ADBC_API int adbc_frame_png(uint8_t **png, size_t *len, const adbc_frame *f, int level);

/* Take a screenshot as PNG bytes. Free *png with adbc_free(). A device PNG is checked
 * (signature and header chunk) before it is returned. */
ADBC_API int adbc_screenshot(uint8_t **png, size_t *len, adbc_conn *c, adbc_shot_mode mode,
                    int timeout_ms);

/* ---- Apps and device -------------------------------------------------------- */

/* Start a package's launcher activity (`monkey -p PKG -c
 * android.intent.category.LAUNCHER 1`). ADBC_ENOTFOUND when it has none. */
ADBC_API int adbc_app_launch(adbc_conn *c, const char *package, int timeout_ms);

/* One extra of an intent. */
/* abi: fixed — a frozen type/key/value triple: new kinds of extra come as
 * new type codes, never as new fields (callers pass arrays of it) */
typedef struct adbc_intent_extra {
    char type;             /* 's' string, 'i' int (decimal), 'b' bool ("true"/"false") */
    const char *key;
    const char *value;
} adbc_intent_extra;

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_intent {
    size_t size;           /* sizeof the struct as the caller compiled it */
    const char *action;    /* each field may be NULL; at least one of action, */
    const char *data;      /* data and component is needed */
    const char *component; /* "pkg/.Activity" */
    const adbc_intent_extra *extras;
    size_t nextras;
} adbc_intent;

/* `am start` the intent. ADBC_EINVAL for a bad extra (an int that is not a
 * number, a bool that is not true/false), ADBC_EREMOTE when the device could
 * not start it (the message quotes it). */
ADBC_API int adbc_app_start(adbc_conn *c, const adbc_intent *intent, int timeout_ms);

/* `am force-stop PKG`. */
ADBC_API int adbc_app_stop(adbc_conn *c, const char *package, int timeout_ms);

/* The resumed activity ("pkg/.Activity" as the device prints it) and the
 * package of the focused window. Either out may be NULL; an out gets ""
 * when the device shows none. Free the strings with adbc_free(). */
ADBC_API int adbc_app_top(char **activity, char **package, adbc_conn *c, int timeout_ms);

/* An observation: a snapshot and the resumed activity of one moment, in one
 * exec round trip. The activity's `dumpsys activity activities` runs beside
 * the dump, so the observation costs what the dump costs. *activity is
 * "pkg/.Activity" and *package its package ("" when the device shows none;
 * the dump names each window's package too). activity and package may be
 * NULL (then this is adbc_ui_snapshot); free the strings with adbc_free(). */
ADBC_API int adbc_act_observe(adbc_ui_snap **snap, char **activity, char **package, adbc_conn *c,
                              const adbc_ui_opts *opts);

/* Install an APK: streamed to `cmd package install -S SIZE` when the device
 * has the cmd feature, else pushed with sync to /data/local/tmp and
 * installed with `pm install -r`, then removed. ADBC_EREMOTE with the
 * device's Failure [...] text when it refuses. */
ADBC_API int adbc_app_install(adbc_conn *c, const char *apk_path, int timeout_ms);

/* pm install's flags (PackageManagerShellCommand makeInstallParams), as
 * `adb install` takes them. */
#define ADBC_INSTALL_FORWARD_LOCK 0x01u /* -l (refused by Android 9 and later) */
#define ADBC_INSTALL_REPLACE 0x02u      /* -r: replace an installed app */
#define ADBC_INSTALL_TEST 0x04u         /* -t: allow test packages */
#define ADBC_INSTALL_EXTERNAL 0x08u     /* -s: on shared storage (old devices) */
#define ADBC_INSTALL_DOWNGRADE 0x10u    /* -d: allow a lower version code */
#define ADBC_INSTALL_GRANT 0x20u        /* -g: grant every runtime permission */
#define ADBC_INSTALL_INSTANT 0x40u      /* --instant: as an instant app */

/* abi: in — filled in by the caller: size first (docs/abi.md) */
typedef struct adbc_install_opts {
    size_t size;        /* sizeof the struct as the caller compiled it */
    unsigned flags;     /* ADBC_INSTALL_* */
    const char *user;   /* --user: a user id, "all" or "current"; NULL: pm's default */
    int timeout_ms;     /* the whole install; default 120000 */
} adbc_install_opts;
ADBC_API void adbc_install_opts_init_sized(adbc_install_opts *opts, size_t size);
#define adbc_install_opts_init(o) adbc_install_opts_init_sized((o), sizeof *(o))

/* Install one app from napks files as adb does: one APK streamed to `cmd
 * package install FLAGS -S SIZE` (pushed and `pm install FLAGS` without the
 * cmd feature); several (a base and its splits, .apk/.dm/.fsv_sig/.idsig)
 * in one package-installer session: `install-create FLAGS -S TOTAL`, an
 * `install-write -S SIZE ID NAME -` per file streamed on stdin, then
 * `install-commit ID` (`install-abandon ID` when a write fails), through
 * `cmd package` (`pm` without the cmd feature). The flags and user are
 * checked before anything is sent (ADBC_EINVAL). ADBC_EREMOTE with the
 * device's "Failure [...]" text when it refuses. opts may be NULL. */
ADBC_API int adbc_app_install_apks(adbc_conn *c, const char *const *apks, size_t napks,
                                   const adbc_install_opts *opts);

/* Uninstall PKG: through abb_exec (the package service's uninstall, no shell)
 * when the device advertises abb_exec, else `pm uninstall PKG`. */
ADBC_API int adbc_app_uninstall(adbc_conn *c, const char *package, int timeout_ms);

/* One system property (`getprop NAME`), "" when unset; with name NULL the
 * whole `getprop` listing. Free *value with adbc_free(). */
ADBC_API int adbc_getprop(char **value, adbc_conn *c, const char *name, int timeout_ms);

/* The device's API level (ro.build.version.sdk, > 0), asked once per
 * connection and kept with it (the acts use the same value: `cmd input`
 * from API 31 on); a connection whose banner carries the property (adbc's
 * session server puts it there) has it without asking. A device that did
 * not give it is not asked again on this connection (ADBC_EREMOTE). */
ADBC_API int adbc_device_sdk(adbc_conn *c, int timeout_ms);

/* Bounded logcat, never open-ended: lines > 0 gives the last lines lines
 * (`logcat -d -t N`); seconds_ms > 0 follows the log for that long (from
 * the last lines lines when both are set) and then stops. At least one must
 * be set. *out is NUL-terminated (free it with adbc_free()); at most 16 MiB (then ADBC_EIO). */
ADBC_API int adbc_logcat(char **out, size_t *len, adbc_conn *c, int lines, int seconds_ms,
                int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
