/* SPDX-License-Identifier: Apache-2.0 */
/* Acting on the screen. Acts on refs go through adbc's verified acts: the
 * element is found again in a fresh dump and a ref that no longer matches
 * is refused (ADBC_ESTALE), never guessed. Every act returns the screen as
 * it is after a short settle. */
#include "mcp.h"

#include <string.h>

#include "adbc/error.h"

static const char *how_text(adbc_act_how how)
{
    return how == ADBC_ACT_MOVED ? " (the element had moved; found again by its content)" : "";
}

/* The device, the ref record and the act options, ready to act. */
static const adbc_ui_ref *prepare(mcp_call *c, const cJSON *a, adbc_act_opts *o,
                                  adbc_ui_opts *uo)
{
    int ref = 0;
    if (arg_int(c, a, "ref", 1, 1, 1000000, &ref) != 0 || call_device(c) != 0)
        return NULL;
    const adbc_ui_ref *r = ui_ref(c, ref);
    if (r)
        mcp_act_opts(c, o, uo);
    return r;
}

static int t_tap(mcp_call *c, const cJSON *a)
{
    adbc_act_opts o;
    adbc_ui_opts uo;
    const adbc_ui_ref *r = prepare(c, a, &o, &uo);
    if (!r)
        return -1;
    int ref = r->ref;
    adbc_act_where w;
    int rc = adbc_act_tap(&w, c->dev->conn, r, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "tap");
    call_text(c, "tapped ref %d at (%d,%d)%s", ref, w.x, w.y, how_text(w.how));
    ui_after_act(c);
    return 0;
}

static int t_long_press(mcp_call *c, const cJSON *a)
{
    int ms = 1000;
    if (arg_int(c, a, "duration_ms", 0, 1, 10000, &ms) != 0)
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    const adbc_ui_ref *r = prepare(c, a, &o, &uo);
    if (!r)
        return -1;
    int ref = r->ref;
    o.long_press_ms = ms;
    adbc_act_where w;
    int rc = adbc_act_long_press(&w, c->dev->conn, r, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "long_press");
    call_text(c, "long-pressed ref %d at (%d,%d) for %d ms%s", ref, w.x, w.y, ms,
              how_text(w.how));
    ui_after_act(c);
    return 0;
}

static int t_tap_xy(mcp_call *c, const cJSON *a)
{
    int x, y;
    if (arg_int(c, a, "x", 1, 0, 65535, &x) || arg_int(c, a, "y", 1, 0, 65535, &y) ||
        call_device(c))
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    int rc = adbc_act_tap_xy(c->dev->conn, x, y, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "tap_xy");
    call_text(c, "tapped (%d,%d)", x, y);
    ui_after_act(c);
    return 0;
}

static int t_tap_grid(mcp_call *c, const cJSON *a)
{
    const char *cell;
    if (arg_str(c, a, "cell", 1, 8, &cell) || call_device(c))
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    adbc_act_where w;
    int rc = adbc_act_tap_grid(&w, c->dev->conn, cell, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "tap_grid (cells are a column A-J and a row from 1, like "
                                     "\"C5\"; screenshot with grid: true shows the layout)");
    call_text(c, "tapped cell %s at (%d,%d)", cell, w.x, w.y);
    ui_after_act(c);
    return 0;
}

static int t_type(mcp_call *c, const cJSON *a)
{
    const char *text;
    int clear = 0, ref = 0;
    if (arg_str(c, a, "text", 1, 10000, &text) || arg_bool(c, a, "clear", &clear) ||
        arg_int(c, a, "ref", 0, 1, 1000000, &ref))
        return -1;
    if (clear && !ref)
        return call_fail(c, "clear needs the field's ref (it deletes as many characters as "
                            "the field holds)");
    if (call_device(c) != 0)
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    int rc;
    adbc_act_where w = {0, 0, 0, ADBC_ACT_UNVERIFIED};
    if (ref) {
        const adbc_ui_ref *r = ui_ref(c, ref);
        if (!r)
            return -1;
        rc = adbc_act_type(&w, c->dev->conn, r, text, clear, &o);
    } else {
        rc = adbc_act_type_text(c->dev->conn, text, &o);
    }
    if (rc < 0)
        return call_fail_adbc(c, rc, "type");
    if (ref)
        call_text(c, "typed %zu bytes into ref %d%s%s", strlen(text), ref,
                  clear ? " (cleared first)" : "", how_text(w.how));
    else
        call_text(c, "typed %zu bytes into the focused field", strlen(text));
    ui_after_act(c);
    return 0;
}

static int t_press(mcp_call *c, const cJSON *a)
{
    const char *key;
    int code;
    if (arg_str(c, a, "key", 1, 64, &key))
        return -1;
    int rc = adbc_keycode_parse(&code, key);
    if (rc < 0)
        return call_fail_adbc(c, rc, "press");
    if (call_device(c) != 0)
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    rc = adbc_act_press(c->dev->conn, code, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "press");
    const char *name = adbc_keycode_name(code);
    call_text(c, "pressed %s (key code %d)", name ? name : key, code);
    ui_after_act(c);
    return 0;
}

static int key_tool(mcp_call *c, int home)
{
    if (call_device(c) != 0)
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    int rc = home ? adbc_act_home(c->dev->conn, &o) : adbc_act_back(c->dev->conn, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, home ? "home" : "back");
    call_text(c, "pressed %s", home ? "home" : "back");
    ui_after_act(c);
    return 0;
}

static int t_back(mcp_call *c, const cJSON *a)
{
    (void)a;
    return key_tool(c, 0);
}

static int t_home(mcp_call *c, const cJSON *a)
{
    (void)a;
    return key_tool(c, 1);
}

static int t_swipe(mcp_call *c, const cJSON *a)
{
    int x1, y1, x2, y2, ms = 300;
    if (arg_int(c, a, "x1", 1, 0, 65535, &x1) || arg_int(c, a, "y1", 1, 0, 65535, &y1) ||
        arg_int(c, a, "x2", 1, 0, 65535, &x2) || arg_int(c, a, "y2", 1, 0, 65535, &y2) ||
        arg_int(c, a, "duration_ms", 0, 1, 10000, &ms) || call_device(c))
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    int rc = adbc_act_swipe(c->dev->conn, x1, y1, x2, y2, ms, &o);
    if (rc < 0)
        return call_fail_adbc(c, rc, "swipe");
    call_text(c, "swiped (%d,%d) -> (%d,%d) in %d ms", x1, y1, x2, y2, ms);
    ui_after_act(c);
    return 0;
}

static int t_scroll(mcp_call *c, const cJSON *a)
{
    const char *dir_name;
    int ref = 0;
    adbc_dir dir;
    if (arg_str(c, a, "direction", 1, 16, &dir_name) || arg_int(c, a, "ref", 0, 1, 1000000, &ref))
        return -1;
    if (adbc_dir_parse(&dir, dir_name) < 0)
        return call_fail(c, "argument 'direction' must be up, down, left or right (the way "
                            "the content comes into view: down shows what is below)");
    if (call_device(c) != 0)
        return -1;
    adbc_act_opts o;
    adbc_ui_opts uo;
    mcp_act_opts(c, &o, &uo);
    int rc;
    if (ref) {
        const adbc_ui_ref *r = ui_ref(c, ref);
        if (!r)
            return -1;
        adbc_act_where w;
        rc = adbc_act_scroll(&w, c->dev->conn, r, dir, &o);
        if (rc < 0)
            return call_fail_adbc(c, rc, "scroll");
        call_text(c, "scrolled ref %d %s%s", ref, dir_name, how_text(w.how));
    } else {
        int wdt, hgt, sx, sy, ex, ey;
        rc = adbc_screen_size(&wdt, &hgt, c->dev->conn, call_remaining(c));
        if (rc == 0)
            rc = adbc_scroll_points(&sx, &sy, &ex, &ey, 0, 0, wdt, hgt, dir);
        if (rc == 0) {
            o.timeout_ms = call_remaining(c);
            rc = adbc_act_swipe(c->dev->conn, sx, sy, ex, ey, o.scroll_ms, &o);
        }
        if (rc < 0)
            return call_fail_adbc(c, rc, "scroll");
        call_text(c, "scrolled the screen %s (swipe (%d,%d) -> (%d,%d))", dir_name, sx, sy, ex,
                  ey);
    }
    ui_after_act(c);
    return 0;
}

#define REF_PROP "\"ref\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"a ref from the latest snapshot\"}"

const mcp_tool mcp_tools_input[] = {
    {"tap", "Tap an element",
     "Tap the element with this ref from the latest snapshot. The element is found again in "
     "a fresh dump first: if it moved it is tapped where it is now; if it is gone or cannot "
     "be told apart the tap is refused (take a new snapshot). Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{" REF_PROP "},\"required\":[\"ref\"],"
     "\"additionalProperties\":false}",
     t_tap, 0},
    {"tap_xy", "Tap a point",
     "Tap at pixel coordinates (x, y). Prefer tap with a ref; use this for what the "
     "snapshot does not show (coordinates from a screenshot).",
     "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\",\"minimum\":0},\"y\":"
     "{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"x\",\"y\"],"
     "\"additionalProperties\":false}",
     t_tap_xy, 0},
    {"tap_grid", "Tap a grid cell",
     "Tap the centre of a cell of a 10-column grid over the screen: columns A-J from the "
     "left, rows from 1 at the top, cells about square (\"C5\"). For screens the snapshot "
     "cannot describe (games, canvases); screenshot with grid: true gives the layout.",
     "{\"type\":\"object\",\"properties\":{\"cell\":{\"type\":\"string\",\"pattern\":"
     "\"^[A-Ja-j][0-9]{1,3}$\"}},\"required\":[\"cell\"],\"additionalProperties\":false}",
     t_tap_grid, 0},
    {"type", "Type text",
     "Type text. With ref: tap that field first (and with clear: true empty it). Without "
     "ref: into whatever has focus. ASCII works everywhere; other text needs the ADB "
     "Keyboard input method on the device.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}," REF_PROP ","
     "\"clear\":{\"type\":\"boolean\",\"description\":\"empty the field first (needs ref)\"}},"
     "\"required\":[\"text\"],\"additionalProperties\":false}",
     t_type, 0},
    {"press", "Press a key",
     "Press a key by name: back, home, enter, delete, tab, escape, up, down, left, right, "
     "space, power, volup, voldown, recent, menu, search, page_up, page_down, move_home, "
     "move_end, forward_delete, wakeup, sleep (or KEYCODE_..., or a number).",
     "{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"}},\"required\":"
     "[\"key\"],\"additionalProperties\":false}",
     t_press, 0},
    {"swipe", "Swipe",
     "Swipe from (x1, y1) to (x2, y2) in duration_ms (default 300).",
     "{\"type\":\"object\",\"properties\":{\"x1\":{\"type\":\"integer\",\"minimum\":0},\"y1\":"
     "{\"type\":\"integer\",\"minimum\":0},\"x2\":{\"type\":\"integer\",\"minimum\":0},\"y2\":"
     "{\"type\":\"integer\",\"minimum\":0},\"duration_ms\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":10000}},\"required\":[\"x1\",\"y1\",\"x2\",\"y2\"],"
     "\"additionalProperties\":false}",
     t_swipe, 0},
    {"scroll", "Scroll",
     "Scroll so that content in direction comes into view (down shows what is below). "
     "Inside the element ref (a scrollable one from the snapshot), or the whole screen "
     "without ref.",
     "{\"type\":\"object\",\"properties\":{\"direction\":{\"type\":\"string\",\"enum\":"
     "[\"up\",\"down\",\"left\",\"right\"]}," REF_PROP "},\"required\":[\"direction\"],"
     "\"additionalProperties\":false}",
     t_scroll, 0},
    {"long_press", "Long-press an element",
     "Hold on the element ref for duration_ms (default 1000), e.g. for context menus. Same "
     "stale-ref rule as tap.",
     "{\"type\":\"object\",\"properties\":{" REF_PROP ",\"duration_ms\":{\"type\":\"integer\","
     "\"minimum\":1,\"maximum\":10000}},\"required\":[\"ref\"],\"additionalProperties\":false}",
     t_long_press, 0},
    {"back", "Back", "Press the back key. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_back, 0},
    {"home", "Home", "Press the home key. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_home, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
