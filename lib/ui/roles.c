/* Roles and wrappers: what a class is called in the text, and which classes
 * are mere containers the pruning may collapse. Both look only at the
 * class's last '.'-segment ("android.widget.TextView" -> "TextView"). */
#include "ui/ui_internal.h"

#include <string.h>

static const struct {
    const char *seg;
    const char *role;
} roles[] = {
    {"TextView", "Text"},          {"AppCompatTextView", "Text"},
    {"EditText", "TextInput"},     {"AppCompatEditText", "TextInput"},
    {"Button", "Button"},          {"AppCompatButton", "Button"},
    {"MaterialButton", "Button"},  {"ImageView", "Image"},
    {"ImageButton", "ImageButton"},{"CheckBox", "CheckBox"},
    {"Switch", "Switch"},          {"RadioButton", "Radio"},
    {"ToggleButton", "Toggle"},    {"SeekBar", "Slider"},
    {"ProgressBar", "Progress"},   {"Spinner", "Select"},
    {"RecyclerView", "List"},      {"ListView", "List"},
    {"ScrollView", "ScrollView"},  {"LinearLayout", "Group"},
    {"RelativeLayout", "Group"},   {"FrameLayout", "Group"},
    {"ConstraintLayout", "Group"}, {"CoordinatorLayout", "Group"},
    {"ViewGroup", "Group"},        {"TabLayout", "TabList"},
    {"TabItem", "Tab"},
};

static const char *const wrappers[] = {
    "Group", "View", "FrameLayout", "LinearLayout", "RelativeLayout",
    "ConstraintLayout", "CoordinatorLayout", "ViewGroup",
};

static const char *last_segment(const char *cls, uint32_t len, uint32_t *slen)
{
    const char *dot = memrchr(cls, '.', len);
    const char *seg = dot ? dot + 1 : cls;
    *slen = (uint32_t)(cls + len - seg);
    return seg;
}

static int seg_is(const char *seg, uint32_t slen, const char *name)
{
    return strlen(name) == slen && memcmp(seg, name, slen) == 0;
}

void ui_role(const char *cls, uint32_t len, const char **role, uint32_t *rlen)
{
    if (len == 0) {
        *role = "View";
        *rlen = 4;
        return;
    }
    uint32_t slen;
    const char *seg = last_segment(cls, len, &slen);
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
        if (seg_is(seg, slen, roles[i].seg)) {
            *role = roles[i].role;
            *rlen = (uint32_t)strlen(roles[i].role);
            return;
        }
    }
    /* Any other segment is printed as it is, even "constructor" or "". */
    *role = seg;
    *rlen = slen;
}

int ui_is_wrapper(const char *cls, uint32_t len)
{
    if (len == 0)
        return 1;
    uint32_t slen;
    const char *seg = last_segment(cls, len, &slen);
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
        if (seg_is(seg, slen, wrappers[i]))
            return 1;
    return 0;
}
