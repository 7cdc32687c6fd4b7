/* SPDX-License-Identifier: Apache-2.0 */
/* Acting on the screen. Acts on refs go through adbc's verified acts: the
 * element is found again in a fresh dump and a ref that no longer matches
 * is refused (ADBC_ESTALE), never guessed. Every act returns the screen as
 * it is after a short settle. */
#include "ops_tool.h"

#include "ops_json.h"

/* Parse, find the device, run: the meaning of each act, its checks and its
 * errors live in tools/ops, shared with adbc-serve. */
static int act(ops_call *c, ops_action action, const cJSON *a)
{
    ops_act op;
    ops_err e;
    if (ops_act_parse(&op, action, a, &e) != 0)
        return ops_call_err(c, &e);
    if (ops_call_device(c) != 0)
        return -1;
    ops_ctx oc;
    ops_call_ctx(c, &oc);
    if (ops_act_run(&oc, &op) != 0)
        return ops_call_err(c, &oc.err);
    ops_call_text(c, "%s", oc.done);
    ops_tool_after_act(c, &oc);
    return 0;
}

static int t_tap(ops_call *c, const cJSON *a)
{
    return act(c, OPS_TAP, a);
}

static int t_long_press(ops_call *c, const cJSON *a)
{
    return act(c, OPS_LONG_PRESS, a);
}

static int t_tap_xy(ops_call *c, const cJSON *a)
{
    return act(c, OPS_TAP, a);
}

static int t_tap_grid(ops_call *c, const cJSON *a)
{
    return act(c, OPS_TAP, a);
}

static int t_type(ops_call *c, const cJSON *a)
{
    return act(c, OPS_TYPE, a);
}

/* A key that acts by itself (a call placed or ended, the screen off, an
 * app launched) only when a person allowed "system_keys": the rule is on
 * the code, so a bare number or another name for it is refused alike. */
static int t_press(ops_call *c, const cJSON *a)
{
    ops_act op;
    ops_err e;
    if (ops_act_parse(&op, OPS_PRESS, a, &e) != 0)
        return ops_call_err(c, &e);
    if (!ops_key_plain(op.key) && !(c->fe->allow & OPS_TOOL_KEYS)) {
        const char *kn = adbc_keycode_name(op.key);
        return ops_call_fail(c, OPS_EARG, "refused: key \"%.64s\" (key code %d%s%s) acts by "
                             "itself (a call, the power or sleep state, an app or assistant "
                             "launched) and was not allowed; nothing was sent. Press takes "
                             "navigation, editing and media keys; a person allows the others by "
                             "name (\"system_keys\")", op.key_name, op.key, kn ? ", " : "",
                             kn ? kn : "");
    }
    return act(c, OPS_PRESS, a);
}

static int t_back(ops_call *c, const cJSON *a)
{
    return act(c, OPS_BACK, a);
}

static int t_home(ops_call *c, const cJSON *a)
{
    return act(c, OPS_HOME, a);
}

static int t_swipe(ops_call *c, const cJSON *a)
{
    return act(c, OPS_SWIPE, a);
}

static int t_scroll(ops_call *c, const cJSON *a)
{
    return act(c, OPS_SCROLL, a);
}

#define REF_PROP OPS_SCHEMA_TARGET
/* What the tools refuse, said in the schema too (JSON Schema 2020-12), with
 * keywords a root may hold wherever schemas go: no anyOf, oneOf or allOf at
 * the root (the Anthropic API refuses those in a tool's input_schema, and
 * the agent and MCP clients pass these on). "not" over NO_TARGET ({"ref":
 * false} holds only when there is no ref) says "ref or selector";
 * dependentSchemas, "not both"; if/then, what depends on another. */
#define NO_TARGET "{\"properties\":{\"ref\":false,\"selector\":false}}"
#define NOT_BOTH "\"dependentSchemas\":{\"ref\":{\"properties\":{\"selector\":false}}}"
#define ONE_TARGET "\"not\":" NO_TARGET "," NOT_BOTH

const ops_tool ops_tools_input[] = {
    {"tap", "Tap an element",
     "Tap the element with this ref from the latest snapshot. The element is found again in "
     "a fresh dump first: if it moved it is tapped where it is now; if it is gone or cannot "
     "be told apart the tap is refused (take a new snapshot). Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{" REF_PROP "}," ONE_TARGET ","
     "\"additionalProperties\":false}",
     t_tap, 0},
    {"tap_xy", "Tap a point",
     "Tap at pixel coordinates (x, y). Prefer tap with a ref; use this for what the "
     "snapshot does not show (coordinates from a screenshot).",
     "{\"type\":\"object\",\"properties\":{\"x\":" OPS_SCHEMA_COORD ",\"y\":" OPS_SCHEMA_COORD
     "},\"required\":[\"x\",\"y\"],"
     "\"additionalProperties\":false}",
     t_tap_xy, 0},
    {"tap_grid", "Tap a grid cell",
     "Tap the centre of a cell of a 10-column grid over the screen: columns A-J from the "
     "left, rows from 1 at the top, cells about square (\"C5\"). For screens the snapshot "
     "cannot describe (games, canvases); screenshot with grid: true gives the layout.",
     "{\"type\":\"object\",\"properties\":{\"cell\":" OPS_SCHEMA_CELL "},\"required\":"
     "[\"cell\"],\"additionalProperties\":false}",
     t_tap_grid, 0},
    {"type", "Type text",
     "Type text. With ref: tap that field first (and with clear: true empty it). Without "
     "ref: into whatever has focus. ASCII works everywhere; other text needs the ADB "
     "Keyboard input method on the device.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":10000},"
     REF_PROP ","
     "\"clear\":{\"type\":\"boolean\",\"description\":\"empty the field first (needs ref)\"}},"
     "\"required\":[\"text\"]," NOT_BOTH ",\"if\":{\"properties\":{\"clear\":{\"const\":true}},"
     "\"required\":[\"clear\"]},\"then\":{\"not\":" NO_TARGET "},"
     "\"additionalProperties\":false}",
     t_type, 0},
    {"press", "Press a key",
     "Press a key by name: back, home, enter, delete, tab, escape, up, down, left, right, "
     "space, volup, voldown, recent, menu, search, page_up, page_down, move_home, "
     "move_end, forward_delete, or an Android KeyEvent name (KEYCODE_ENTER, KEYCODE_5 is the "
     "digit 5). Keys that act by themselves (CALL, ENDCALL, POWER, SLEEP, CAMERA, ASSIST, "
     "...) are refused unless allowed.",
     "{\"type\":\"object\",\"properties\":{\"key\":" OPS_SCHEMA_KEY "},\"required\":"
     "[\"key\"],"
     "\"additionalProperties\":false}",
     t_press, 0},
    {"swipe", "Swipe",
     "Swipe from (x1, y1) to (x2, y2) in duration_ms (default 300).",
     "{\"type\":\"object\",\"properties\":{\"x1\":" OPS_SCHEMA_COORD ",\"y1\":" OPS_SCHEMA_COORD
     ",\"x2\":" OPS_SCHEMA_COORD ",\"y2\":" OPS_SCHEMA_COORD ",\"duration_ms\":{\"type\":"
     "\"integer\",\"minimum\":1,\"maximum\":10000}},\"required\":[\"x1\",\"y1\",\"x2\",\"y2\"],"
     "\"additionalProperties\":false}",
     t_swipe, 0},
    {"scroll", "Scroll",
     "Scroll so that content in direction comes into view (down shows what is below). "
     "Inside the element ref (a scrollable one from the snapshot), or the whole screen "
     "without ref.",
     "{\"type\":\"object\",\"properties\":{\"direction\":{\"type\":\"string\",\"enum\":"
     "[\"up\",\"down\",\"left\",\"right\"]}," REF_PROP "},\"required\":[\"direction\"],"
     NOT_BOTH ",\"additionalProperties\":false}",
     t_scroll, 0},
    {"long_press", "Long-press an element",
     "Hold on the element ref for duration_ms (default 1000), e.g. for context menus. Same "
     "stale-ref rule as tap.",
     "{\"type\":\"object\",\"properties\":{" REF_PROP ",\"duration_ms\":{\"type\":\"integer\","
     "\"minimum\":1,\"maximum\":10000}}," ONE_TARGET ",\"additionalProperties\":false}",
     t_long_press, 0},
    {"back", "Back", "Press the back key. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_back, 0},
    {"home", "Home", "Press the home key. Returns the screen after.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", t_home, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
