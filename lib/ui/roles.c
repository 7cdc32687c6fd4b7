/* SPDX-License-Identifier: Apache-2.0 */
/* Roles and wrappers: what a class is called in the text, and which classes
 * are mere containers the pruning may collapse. Both look only at the
 * class's last '.'-segment ("android.widget.TextView" -> "TextView").
 * They run for every printed node, so the tables carry their lengths and
 * most entries are rejected on length alone. */
#include "ui/ui_internal.h"

#include <string.h>

#define S(x) x, (uint8_t)(sizeof(x) - 1)

typedef struct entry {
    const char *seg;
    uint8_t len;
    const char *role;
    uint8_t rlen;
} entry;

static const entry roles[] = {
    {S("TextView"), S("Text")},          {S("AppCompatTextView"), S("Text")},
    {S("EditText"), S("TextInput")},     {S("AppCompatEditText"), S("TextInput")},
    {S("Button"), S("Button")},          {S("AppCompatButton"), S("Button")},
    {S("MaterialButton"), S("Button")},  {S("ImageView"), S("Image")},
    {S("ImageButton"), S("ImageButton")},{S("CheckBox"), S("CheckBox")},
    {S("Switch"), S("Switch")},          {S("RadioButton"), S("Radio")},
    {S("ToggleButton"), S("Toggle")},    {S("SeekBar"), S("Slider")},
    {S("ProgressBar"), S("Progress")},   {S("Spinner"), S("Select")},
    {S("RecyclerView"), S("List")},      {S("ListView"), S("List")},
    {S("ScrollView"), S("ScrollView")},  {S("LinearLayout"), S("Group")},
    {S("RelativeLayout"), S("Group")},   {S("FrameLayout"), S("Group")},
    {S("ConstraintLayout"), S("Group")}, {S("CoordinatorLayout"), S("Group")},
    {S("ViewGroup"), S("Group")},        {S("TabLayout"), S("TabList")},
    {S("TabItem"), S("Tab")},
};

static const entry wrappers[] = {
    {S("Group"), 0, 0},          {S("View"), 0, 0},           {S("FrameLayout"), 0, 0},
    {S("LinearLayout"), 0, 0},   {S("RelativeLayout"), 0, 0}, {S("ConstraintLayout"), 0, 0},
    {S("CoordinatorLayout"), 0, 0}, {S("ViewGroup"), 0, 0},
};

static const char *last_segment(const char *cls, uint32_t len, uint32_t *slen)
{
    const char *dot = memrchr(cls, '.', len);
    const char *seg = dot ? dot + 1 : cls;
    *slen = (uint32_t)(cls + len - seg);
    return seg;
}

static const entry *lookup(const entry *tab, size_t n, const char *seg, uint32_t slen)
{
    for (size_t i = 0; i < n; i++)
        if (tab[i].len == slen && tab[i].seg[0] == seg[0] && memcmp(tab[i].seg, seg, slen) == 0)
            return &tab[i];
    return NULL;
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
    const entry *e = slen ? lookup(roles, sizeof roles / sizeof roles[0], seg, slen) : NULL;
    if (e) {
        *role = e->role;
        *rlen = e->rlen;
        return;
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
    return slen && lookup(wrappers, sizeof wrappers / sizeof wrappers[0], seg, slen) != NULL;
}
