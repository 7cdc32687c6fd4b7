/* SPDX-License-Identifier: Apache-2.0 */
/* Key names, scroll directions and the scroll gesture's geometry.
 *
 * Key names are Android's KeyEvent names: "KEYCODE_5" is the digit 5 (12),
 * as KeyEvent.KEYCODE_5 is, never key code 5 (KEYCODE_CALL). The table is
 * AOSP's (frameworks/native include/android/keycodes.h, which KeyEvent.java
 * mirrors), codes 0..284. Besides those, a name without the prefix ("call",
 * "dpad_center"), the short names people and agents type ("back", "volup")
 * and a decimal code are taken. */
#include "act/act_internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

/* Android's names, without the KEYCODE_ prefix, indexed by code. */
static const char *const android[] = {
    "UNKNOWN", "SOFT_LEFT", "SOFT_RIGHT", "HOME", "BACK", "CALL", "ENDCALL", "0", "1", "2", "3",
    "4", "5", "6", "7", "8", "9", "STAR", "POUND", "DPAD_UP", "DPAD_DOWN", "DPAD_LEFT",
    "DPAD_RIGHT", "DPAD_CENTER", "VOLUME_UP", "VOLUME_DOWN", "POWER", "CAMERA", "CLEAR", "A",
    "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S",
    "T", "U", "V", "W", "X", "Y", "Z", "COMMA", "PERIOD", "ALT_LEFT", "ALT_RIGHT", "SHIFT_LEFT",
    "SHIFT_RIGHT", "TAB", "SPACE", "SYM", "EXPLORER", "ENVELOPE", "ENTER", "DEL", "GRAVE",
    "MINUS", "EQUALS", "LEFT_BRACKET", "RIGHT_BRACKET", "BACKSLASH", "SEMICOLON", "APOSTROPHE",
    "SLASH", "AT", "NUM", "HEADSETHOOK", "FOCUS", "PLUS", "MENU", "NOTIFICATION", "SEARCH",
    "MEDIA_PLAY_PAUSE", "MEDIA_STOP", "MEDIA_NEXT", "MEDIA_PREVIOUS", "MEDIA_REWIND",
    "MEDIA_FAST_FORWARD", "MUTE", "PAGE_UP", "PAGE_DOWN", "PICTSYMBOLS", "SWITCH_CHARSET",
    "BUTTON_A", "BUTTON_B", "BUTTON_C", "BUTTON_X", "BUTTON_Y", "BUTTON_Z", "BUTTON_L1",
    "BUTTON_R1", "BUTTON_L2", "BUTTON_R2", "BUTTON_THUMBL", "BUTTON_THUMBR", "BUTTON_START",
    "BUTTON_SELECT", "BUTTON_MODE", "ESCAPE", "FORWARD_DEL", "CTRL_LEFT", "CTRL_RIGHT",
    "CAPS_LOCK", "SCROLL_LOCK", "META_LEFT", "META_RIGHT", "FUNCTION", "SYSRQ", "BREAK",
    "MOVE_HOME", "MOVE_END", "INSERT", "FORWARD", "MEDIA_PLAY", "MEDIA_PAUSE", "MEDIA_CLOSE",
    "MEDIA_EJECT", "MEDIA_RECORD", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10",
    "F11", "F12", "NUM_LOCK", "NUMPAD_0", "NUMPAD_1", "NUMPAD_2", "NUMPAD_3", "NUMPAD_4",
    "NUMPAD_5", "NUMPAD_6", "NUMPAD_7", "NUMPAD_8", "NUMPAD_9", "NUMPAD_DIVIDE",
    "NUMPAD_MULTIPLY", "NUMPAD_SUBTRACT", "NUMPAD_ADD", "NUMPAD_DOT", "NUMPAD_COMMA",
    "NUMPAD_ENTER", "NUMPAD_EQUALS", "NUMPAD_LEFT_PAREN", "NUMPAD_RIGHT_PAREN", "VOLUME_MUTE",
    "INFO", "CHANNEL_UP", "CHANNEL_DOWN", "ZOOM_IN", "ZOOM_OUT", "TV", "WINDOW", "GUIDE", "DVR",
    "BOOKMARK", "CAPTIONS", "SETTINGS", "TV_POWER", "TV_INPUT", "STB_POWER", "STB_INPUT",
    "AVR_POWER", "AVR_INPUT", "PROG_RED", "PROG_GREEN", "PROG_YELLOW", "PROG_BLUE",
    "APP_SWITCH", "BUTTON_1", "BUTTON_2", "BUTTON_3", "BUTTON_4", "BUTTON_5", "BUTTON_6",
    "BUTTON_7", "BUTTON_8", "BUTTON_9", "BUTTON_10", "BUTTON_11", "BUTTON_12", "BUTTON_13",
    "BUTTON_14", "BUTTON_15", "BUTTON_16", "LANGUAGE_SWITCH", "MANNER_MODE", "3D_MODE",
    "CONTACTS", "CALENDAR", "MUSIC", "CALCULATOR", "ZENKAKU_HANKAKU", "EISU", "MUHENKAN",
    "HENKAN", "KATAKANA_HIRAGANA", "YEN", "RO", "KANA", "ASSIST", "BRIGHTNESS_DOWN",
    "BRIGHTNESS_UP", "MEDIA_AUDIO_TRACK", "SLEEP", "WAKEUP", "PAIRING", "MEDIA_TOP_MENU", "11",
    "12", "LAST_CHANNEL", "TV_DATA_SERVICE", "VOICE_ASSIST", "TV_RADIO_SERVICE", "TV_TELETEXT",
    "TV_NUMBER_ENTRY", "TV_TERRESTRIAL_ANALOG", "TV_TERRESTRIAL_DIGITAL", "TV_SATELLITE",
    "TV_SATELLITE_BS", "TV_SATELLITE_CS", "TV_SATELLITE_SERVICE", "TV_NETWORK",
    "TV_ANTENNA_CABLE", "TV_INPUT_HDMI_1", "TV_INPUT_HDMI_2", "TV_INPUT_HDMI_3",
    "TV_INPUT_HDMI_4", "TV_INPUT_COMPOSITE_1", "TV_INPUT_COMPOSITE_2", "TV_INPUT_COMPONENT_1",
    "TV_INPUT_COMPONENT_2", "TV_INPUT_VGA_1", "TV_AUDIO_DESCRIPTION",
    "TV_AUDIO_DESCRIPTION_MIX_UP", "TV_AUDIO_DESCRIPTION_MIX_DOWN", "TV_ZOOM_MODE",
    "TV_CONTENTS_MENU", "TV_MEDIA_CONTEXT_MENU", "TV_TIMER_PROGRAMMING", "HELP",
    "NAVIGATE_PREVIOUS", "NAVIGATE_NEXT", "NAVIGATE_IN", "NAVIGATE_OUT", "STEM_PRIMARY",
    "STEM_1", "STEM_2", "STEM_3", "DPAD_UP_LEFT", "DPAD_DOWN_LEFT", "DPAD_UP_RIGHT",
    "DPAD_DOWN_RIGHT", "MEDIA_SKIP_FORWARD", "MEDIA_SKIP_BACKWARD", "MEDIA_STEP_FORWARD",
    "MEDIA_STEP_BACKWARD", "SOFT_SLEEP", "CUT", "COPY", "PASTE", "SYSTEM_NAVIGATION_UP",
    "SYSTEM_NAVIGATION_DOWN", "SYSTEM_NAVIGATION_LEFT", "SYSTEM_NAVIGATION_RIGHT", "ALL_APPS",
};

#define NANDROID (sizeof android / sizeof android[0])

/* The short names (what adbc_keycode_name gives for these codes). */
static const struct {
    const char *name;
    int code;
} keys[] = {
    {"home", 3},         {"back", 4},          {"up", 19},          {"down", 20},
    {"left", 21},        {"right", 22},        {"volup", 24},       {"voldown", 25},
    {"power", 26},       {"camera", 27},       {"tab", 61},         {"space", 62},
    {"enter", 66},       {"delete", 67},       {"menu", 82},        {"search", 84},
    {"page_up", 92},     {"page_down", 93},    {"escape", 111},     {"forward_delete", 112},
    {"move_home", 122},  {"move_end", 123},    {"recent", 187},     {"sleep", 223},
    {"wakeup", 224},
};

/* Other spellings of the same keys. */
static const struct {
    const char *alias;
    const char *name;
} aliases[] = {
    {"dpad_up", "up"},           {"dpad_down", "down"},       {"dpad_left", "left"},
    {"dpad_right", "right"},     {"volume_up", "volup"},      {"volume_down", "voldown"},
    {"del", "delete"},           {"backspace", "delete"},     {"esc", "escape"},
    {"forward_del", "forward_delete"}, {"app_switch", "recent"}, {"recents", "recent"},
    {"return", "enter"},
};

#define MAX_KEYCODE 9999

static int eq_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* The Android name's code, or -1. */
static int android_code(const char *n)
{
    for (size_t i = 0; i < NANDROID; i++)
        if (eq_nocase(n, android[i]))
            return (int)i;
    return -1;
}

int adbc_keycode_parse(int *code, const char *name)
{
    if (!code || !name)
        return core_fail(ADBC_EINVAL, "adbc_keycode_parse: code and name must not be NULL");
    const char *n = name;
    if (strncasecmp(n, "KEYCODE_", 8) == 0) {
        /* Android's own names only: KEYCODE_5 is the digit 5 (code 12). */
        int c = android_code(n + 8);
        if (c < 0)
            return core_fail(ADBC_EINVAL,
                             "unknown key \"%.40s\": after KEYCODE_ comes one of Android's "
                             "KeyEvent names (KEYCODE_ENTER, KEYCODE_5, KEYCODE_DPAD_UP, ...); "
                             "a key code is written as a bare number",
                             name);
        *code = c;
        return 0;
    }
    if (*n >= '0' && *n <= '9') {
        long v = 0;
        const char *p = n;
        for (; *p >= '0' && *p <= '9' && v <= MAX_KEYCODE; p++)
            v = v * 10 + (*p - '0');
        if (*p || v > MAX_KEYCODE)
            return core_fail(ADBC_EINVAL, "key code \"%.40s\" is not a number from 0 to %d", name,
                             MAX_KEYCODE);
        *code = (int)v;
        return 0;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (eq_nocase(n, aliases[i].alias)) {
            n = aliases[i].name;
            break;
        }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (eq_nocase(n, keys[i].name)) {
            *code = keys[i].code;
            return 0;
        }
    int c = android_code(n);
    if (c > 0) {
        *code = c;
        return 0;
    }
    return core_fail(ADBC_EINVAL,
                     "unknown key \"%.40s\": use one of home back up down left right volup "
                     "voldown power camera tab space enter delete menu search page_up page_down "
                     "escape forward_delete move_home move_end recent sleep wakeup, an Android "
                     "KeyEvent name (KEYCODE_ENTER, KEYCODE_5), or a key code number",
                     name);
}

const char *adbc_keycode_name(int code)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].code == code)
            return keys[i].name;
    return code > 0 && (size_t)code < NANDROID ? android[code] : NULL;
}

int adbc_dir_parse(adbc_dir *out, const char *name)
{
    static const char *const names[] = {"up", "down", "left", "right"};
    if (!out || !name)
        return core_fail(ADBC_EINVAL, "adbc_dir_parse: out and name must not be NULL");
    for (int i = 0; i < 4; i++)
        if (eq_nocase(name, names[i])) {
            *out = (adbc_dir)i;
            return 0;
        }
    return core_fail(ADBC_EINVAL, "unknown direction \"%.40s\": use up, down, left or right",
                     name);
}

int adbc_scroll_points(int *sx, int *sy, int *ex, int *ey, int x1, int y1, int x2, int y2,
                       adbc_dir dir)
{
    if (!sx || !sy || !ex || !ey)
        return core_fail(ADBC_EINVAL, "adbc_scroll_points: outputs must not be NULL");
    /* 64-bit so hostile bounds cannot overflow. */
    long long cx = ((long long)x1 + x2) / 2, cy = ((long long)y1 + y2) / 2;
    long long tx = cx, ty = cy;
    switch (dir) {
    case ADBC_DIR_DOWN: ty = cy - (cy - y1) / 3; break;  /* finger up: content from below */
    case ADBC_DIR_UP: ty = cy + (y2 - cy) / 3; break;
    case ADBC_DIR_RIGHT: tx = cx - (cx - x1) / 3; break; /* finger left: content from the right */
    case ADBC_DIR_LEFT: tx = cx + (x2 - cx) / 3; break;
    default: return core_fail(ADBC_EINVAL, "unknown scroll direction %d", (int)dir);
    }
    if (x2 <= x1 || y2 <= y1 || (tx == cx && ty == cy))
        return core_fail(ADBC_EINVAL,
                         "the box [%d,%d][%d,%d] is too small to scroll in: it needs at least "
                         "3 pixels along the scroll",
                         x1, y1, x2, y2);
    *sx = (int)cx;
    *sy = (int)cy;
    *ex = (int)tx;
    *ey = (int)ty;
    return 0;
}
