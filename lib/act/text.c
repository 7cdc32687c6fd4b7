/* SPDX-License-Identifier: Apache-2.0 */
/* Command lines for typing (pure: no device).
 *
 * `input text` has three traps. It turns "%s" into a space (its only
 * escape), so a literal "%s" must reach it in two calls, '%' ending one
 * and 's' starting the next. From API 35 it breaks on spaces, so there the
 * words go one call each with KEYCODE_SPACE between; before that a space is
 * sent inside the text as "%s", which keeps typing to one call. And it
 * types ASCII only: everything else goes to the ADB Keyboard IME as base64,
 * which also keeps the shell away from the text. Every piece of text is a
 * single-quoted shell word, so nothing in it can run a command. */
#include "act/act_internal.h"

#include <string.h>

#include "core/internal.h"

#define KEY_TAB 61
#define KEY_SPACE 62
#define KEY_ENTER 66
#define KEY_DEL 67
#define KEY_MOVE_END 123

int act_text_plain(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (!((*p >= 0x20 && *p < 0x7f) || *p == '\n' || *p == '\t'))
            return 0;
    return 1;
}

size_t act_utf8_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            n++;
    return n;
}

/* Builder state: the text chunk being collected and the key run pending. */
typedef struct typer {
    core_buf out;
    core_buf chunk;
    int keys[64];
    size_t nkeys;
} typer;

static void sep(typer *t)
{
    if (t->out.len)
        core_buf_add(&t->out, " && ", 4);
}

static void flush_keys(typer *t)
{
    if (!t->nkeys)
        return;
    sep(t);
    core_buf_add(&t->out, "input keyevent", 14);
    for (size_t i = 0; i < t->nkeys; i++)
        core_buf_printf(&t->out, " %d", t->keys[i]);
    t->nkeys = 0;
}

static void flush_text(typer *t)
{
    if (t->chunk.err && !t->out.err)
        t->out.err = t->chunk.err;
    if (!t->chunk.len || t->out.err)
        return;
    sep(t);
    core_buf_add(&t->out, "input text ", 11);
    act_buf_quote(&t->out, t->chunk.p);
    t->chunk.len = 0;
    t->chunk.p[0] = '\0';
}

static void key(typer *t, int code)
{
    flush_text(t);
    if (t->nkeys == sizeof t->keys / sizeof t->keys[0])
        flush_keys(t);
    t->keys[t->nkeys++] = code;
}

static void text(typer *t, const char *s, size_t n)
{
    flush_keys(t);
    core_buf_add(&t->chunk, s, n);
}

int act_type_command(char **cmd, const char *str, int sdk)
{
    *cmd = NULL;
    if (!str)
        return core_fail(ADBC_EINVAL, "no text to type");
    if (!act_text_plain(str))
        return core_fail(ADBC_EINVAL,
                         "`input text` types printable ASCII only; this text needs the ADB "
                         "Keyboard IME");
    typer t = {0};
    for (const char *p = str; *p; p++) {
        switch (*p) {
        case '\n': key(&t, KEY_ENTER); break;
        case '\t': key(&t, KEY_TAB); break;
        case ' ':
            if (sdk >= 35)
                key(&t, KEY_SPACE);
            else
                text(&t, "%s", 2);
            break;
        case '%':
            text(&t, "%", 1);
            if (p[1] == 's') /* keep `input` from reading this "%s" as a space */
                flush_text(&t);
            break;
        default: text(&t, p, 1); break;
        }
    }
    flush_text(&t);
    flush_keys(&t);
    int failed = t.chunk.err;
    core_buf_free(&t.chunk);
    if (failed) {
        core_buf_free(&t.out);
        return core_fail(ADBC_ENOMEM, "out of memory building a typing command");
    }
    return act_buf_take(&t.out, cmd);
}

int act_clear_command(char **cmd, size_t n)
{
    core_buf b = {0};
    core_buf_printf(&b, "input keyevent %d", KEY_MOVE_END);
    for (size_t i = 0; i < n; i++)
        core_buf_printf(&b, " %d", KEY_DEL);
    return act_buf_take(&b, cmd);
}

static void base64(core_buf *b, const unsigned char *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)s[i + 1] << 8;
        if (i + 2 < n)
            v |= s[i + 2];
        char q[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        core_buf_add(b, q, 4);
    }
}

int act_adbkbd_command(char **cmd, const char *str)
{
    *cmd = NULL;
    if (!str)
        return core_fail(ADBC_EINVAL, "no text to type");
    core_buf enc = {0};
    base64(&enc, (const unsigned char *)str, strlen(str));
    core_buf_add(&enc, "", 0);
    core_buf b = {0};
    core_buf_add(&b, "am broadcast -a ADB_INPUT_B64 --es msg ", 39);
    if (!enc.err)
        act_buf_quote(&b, enc.p);
    else
        b.err = enc.err;
    core_buf_free(&enc);
    return act_buf_take(&b, cmd);
}
