/* SPDX-License-Identifier: Apache-2.0 */
/* Key names, scroll directions and the scroll gesture's geometry.
 *
 * Names are the short ones people and agents type ("back", "enter"); the
 * codes are Android's KeyEvent constants. A KEYCODE_ prefix is accepted so
 * names copied from Android documentation work too. */
#include "act/act_internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

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

int adbc_keycode_parse(int *code, const char *name)
{
    if (!code || !name)
        return core_fail(ADBC_EINVAL, "adbc_keycode_parse: code and name must not be NULL");
    const char *n = name;
    if (strncasecmp(n, "KEYCODE_", 8) == 0)
        n += 8;
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
    return core_fail(ADBC_EINVAL,
                     "unknown key \"%.40s\": use a key code number or one of home back up down "
                     "left right volup voldown power camera tab space enter delete menu search "
                     "page_up page_down escape forward_delete move_home move_end recent sleep "
                     "wakeup",
                     name);
}

const char *adbc_keycode_name(int code)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].code == code)
            return keys[i].name;
    return NULL;
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
