/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON output: valid JSON, the schema named, and the same pruned tree
 * as the text. A small JSON reader here rebuilds the text from the JSON of
 * every recorded dump and compares it with the snapshot text. */
#include <dirent.h>

#include "t.h"
#include "ui_test_util.h"

/* ---- a minimal JSON reader (tests only) ---- */

typedef struct jv {
    enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } t;
    char *s;          /* J_STR (decoded UTF-8) */
    size_t slen;
    long long num;
    int b;
    struct jv **v;    /* J_ARR items, J_OBJ values */
    char **k;         /* J_OBJ keys */
    size_t n;
} jv;

typedef struct jp {
    const char *p, *e;
    int err;
} jp;

static void ws(jp *j)
{
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
}

static void put_utf8(char *o, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        o[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*n)++] = (char)(0xc0 | cp >> 6);
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*n)++] = (char)(0xe0 | cp >> 12);
        o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*n)++] = (char)(0xf0 | cp >> 18);
        o[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static char *jstr(jp *j, size_t *len)
{
    if (j->p >= j->e || *j->p != '"')
        return j->err = 1, NULL;
    j->p++;
    char *o = malloc((size_t)(j->e - j->p) + 1);
    size_t n = 0;
    while (j->p < j->e && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20) {
            j->err = 1;
            break;
        }
        if (c != '\\') {
            o[n++] = (char)c;
            continue;
        }
        if (j->p >= j->e)
            break;
        c = (unsigned char)*j->p++;
        switch (c) {
        case '"': case '\\': case '/': o[n++] = (char)c; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            if (j->e - j->p < 4 || sscanf(j->p, "%4x", &cp) != 1)
                j->err = 1;
            j->p += 4;
            put_utf8(o, &n, cp);
            break;
        }
        default: j->err = 1;
        }
    }
    if (j->p >= j->e)
        j->err = 1;
    else
        j->p++;
    o[n] = '\0';
    *len = n;
    return o;
}

static jv *jval(jp *j, int depth)
{
    jv *v = calloc(1, sizeof *v);
    ws(j);
    if (j->p >= j->e || depth > 10000) {
        j->err = 1;
        return v;
    }
    char c = *j->p;
    if (c == '"') {
        v->t = J_STR;
        v->s = jstr(j, &v->slen);
    } else if (c == '{' || c == '[') {
        v->t = c == '{' ? J_OBJ : J_ARR;
        j->p++;
        ws(j);
        char close = c == '{' ? '}' : ']';
        if (j->p < j->e && *j->p == close) {
            j->p++;
            return v;
        }
        for (;;) {
            v->v = realloc(v->v, (v->n + 1) * sizeof *v->v);
            v->k = realloc(v->k, (v->n + 1) * sizeof *v->k);
            v->k[v->n] = NULL;
            if (v->t == J_OBJ) {
                ws(j);
                size_t kl;
                v->k[v->n] = jstr(j, &kl);
                ws(j);
                if (j->p >= j->e || *j->p != ':') {
                    j->err = 1;
                    return v;
                }
                j->p++;
            }
            v->v[v->n++] = jval(j, depth + 1);
            ws(j);
            if (j->err || j->p >= j->e) {
                j->err = 1;
                return v;
            }
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == close) {
                j->p++;
                return v;
            }
            j->err = 1;
            return v;
        }
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
        v->t = J_BOOL;
        v->b = *j->p == 't';
        j->p += v->b ? 4 : 5;
    } else if (!strncmp(j->p, "null", 4)) {
        j->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        v->t = J_NUM;
        v->num = strtoll(j->p, &end, 10);
        j->p = end;
    } else {
        j->err = 1;
    }
    return v;
}

static void jfree(jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->v[i]);
        free(v->k[i]);
    }
    free(v->v);
    free(v->k);
    free(v->s);
    free(v);
}

static jv *jget(const jv *o, const char *key)
{
    for (size_t i = 0; o && o->t == J_OBJ && i < o->n; i++)
        if (strcmp(o->k[i], key) == 0)
            return o->v[i];
    return NULL;
}

static jv *jparse(const char *s, size_t n)
{
    jp j = {s, s + n, 0};
    jv *v = jval(&j, 0);
    ws(&j);
    if (j.err || j.p != j.e) {
        jfree(v);
        return NULL;
    }
    return v;
}

/* ---- rebuilding the text from the JSON ---- */

typedef struct out {
    char *p;
    size_t n, cap;
} out;

static void add(out *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        o->cap = (o->n + n + 1) * 2;
        o->p = realloc(o->p, o->cap);
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}

static void add_esc(out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\', tmp[1] = (char)c;
            add(o, tmp, 2);
        } else if (c == '\n') {
            add(o, "\\n", 2);
        } else if (c == '\r') {
            add(o, "\\r", 2);
        } else if (c == '\t') {
            add(o, "\\t", 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            add(o, tmp, 6);
        } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0) {
            snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned char)s[++i]);
            add(o, tmp, 6);
        } else {
            add(o, (const char *)&s[i], 1);
        }
    }
}

static int element(out *o, const jv *e, int depth, int *count)
{
    jv *role = jget(e, "role"), *ref = jget(e, "ref"), *text = jget(e, "text"),
       *desc = jget(e, "desc"), *st = jget(e, "states"), *kids = jget(e, "children"),
       *cls = jget(e, "class"), *rid = jget(e, "resource_id"), *b = jget(e, "bounds");
    if (!role || role->t != J_STR || !ref || !text || text->t != J_STR || !desc ||
        desc->t != J_STR || !st || st->t != J_OBJ || !kids || kids->t != J_ARR || !cls ||
        cls->t != J_STR || !rid || rid->t != J_STR || !b || !jget(b, "x") || !jget(b, "y") ||
        !jget(b, "w") || !jget(b, "h"))
        return -1;
    static const char *flags[] = {"clickable", "editable", "scrollable", "checked",
                                  "selected", "focused", "enabled"};
    for (int i = 0; i < 7; i++) {
        jv *f = jget(st, flags[i]);
        if (!f || f->t != J_BOOL)
            return -1;
    }
    if (o->n)
        add(o, "\n", 1);
    for (int i = 0; i < depth; i++)
        add(o, "  ", 2);
    add(o, "- ", 2);
    add_esc(o, role->s, role->slen);
    char tmp[32];
    if (ref->t == J_NUM) {
        snprintf(tmp, sizeof tmp, " [ref=%lld]", ref->num);
        add(o, tmp, strlen(tmp));
        (*count)++;
    } else if (ref->t != J_NULL) {
        return -1;
    }
    if (text->slen) {
        add(o, " \"", 2);
        add_esc(o, text->s, text->slen);
        add(o, "\"", 1);
    }
    if (desc->slen) {
        add(o, " (", 2);
        add_esc(o, desc->s, desc->slen);
        add(o, ")", 1);
    }
    const char *names[4];
    int k = 0;
    if (jget(st, "checked")->b)
        names[k++] = "checked";
    if (jget(st, "selected")->b)
        names[k++] = "selected";
    if (jget(st, "focused")->b)
        names[k++] = "focused";
    if (!jget(st, "enabled")->b)
        names[k++] = "disabled";
    for (int i = 0; i < k; i++) {
        add(o, i ? ", " : " [", 2);
        add(o, names[i], strlen(names[i]));
    }
    if (k)
        add(o, "]", 1);
    for (size_t i = 0; i < kids->n; i++)
        if (element(o, kids->v[i], depth + 1, count) < 0)
            return -1;
    return 0;
}

/* Check the JSON of s against its text and ref table. */
static int check_json(adbc_ui_snap *s, const char *name)
{
    char *js;
    size_t jn;
    if (adbc_ui_snap_json(&js, &jn, s) != 0)
        return fprintf(stderr, "  %s: json failed: %s\n", name, adbc_last_error()), 0;
    int ok = strlen(js) == jn && jn > 0 && js[jn - 1] == '}';
    jv *doc = jparse(js, jn);
    if (!doc)
        return fprintf(stderr, "  %s: invalid JSON\n", name), adbc_free(js), 0;
    jv *schema = jget(doc, "schema"), *id = jget(doc, "id"), *refs = jget(doc, "refs"),
       *wins = jget(doc, "windows"), *ts = jget(doc, "timestamp_ms"), *cpl = jget(doc, "complete");
    ok = ok && schema && schema->t == J_STR && strcmp(schema->s, ADBC_UI_JSON_SCHEMA) == 0;
    ok = ok && id && id->t == J_STR && strcmp(id->s, adbc_ui_snap_id(s)) == 0;
    ok = ok && ts && ts->t == J_NUM && ts->num == adbc_ui_snap_timestamp(s);
    ok = ok && cpl && cpl->t == J_BOOL && cpl->b == adbc_ui_snap_complete(s);
    const adbc_ui_reftab *t = adbc_ui_snap_refs(s);
    ok = ok && refs && refs->t == J_NUM && (size_t)refs->num == adbc_ui_reftab_count(t);
    ok = ok && wins && wins->t == J_ARR && wins->n == adbc_ui_snap_windows(s);
    out o = {0};
    add(&o, "", 0);
    int count = 0;
    for (size_t w = 0; ok && w < wins->n; w++) {
        jv *win = wins->v[w], *pkg = jget(win, "package"), *root = jget(win, "root"),
           *idx = jget(win, "index");
        ok = pkg && pkg->t == J_STR && strcmp(pkg->s, adbc_ui_snap_window_package(s, w)) == 0 &&
             idx && idx->t == J_NUM && (size_t)idx->num == w && root &&
             (root->t == J_NULL || element(&o, root, 0, &count) == 0);
    }
    ok = ok && (size_t)count == adbc_ui_reftab_count(t);
    if (ok && strcmp(o.p, adbc_ui_snap_text(s, NULL)) != 0) {
        fprintf(stderr, "  %s: text rebuilt from JSON differs\n", name);
        ok = 0;
    }
    if (!ok)
        fprintf(stderr, "  %s: JSON does not match the snapshot\n", name);
    free(o.p);
    jfree(doc);
    adbc_free(js);
    return ok;
}

TEST(every_recorded_dump)
{
    const char *src = getenv("ADBC_SOURCE_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fixtures/snapshot", src ? src : ".");
    DIR *dd = opendir(dir);
    CHECK(dd);
    struct dirent *e;
    int seen = 0, bad = 0;
    while ((e = readdir(dd))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        char path[8300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        adbc_ui_snap *s = NULL;
        if (adbc_ui_snap_load(&s, path) != 0 || !check_json(s, e->d_name))
            bad++;
        adbc_ui_snap_free(s);
        seen++;
    }
    closedir(dd);
    CHECK_EQ_INT(seen, 20);
    CHECK_EQ_INT(bad, 0);
}

TEST(escapes_states_and_empty_windows)
{
    adbc_ui_snap *s = parse_str(
        "<hierarchy><node class=\"\" package=\"p&amp;q\"/>"
        "<node class=\"a.B\" text=\"q&quot;\\&#10;&#1;&#x85;\xe4\xb8\xad\" content-desc=\"&#x1F525;\" "
        "checked=\"true\" selected=\"true\" focused=\"true\" enabled=\"false\" clickable=\"true\" "
        "scrollable=\"true\" bounds=\"[-1,-2][3,4]\" resource-id=\"x:id/y\"/></hierarchy>");
    CHECK(s);
    CHECK(check_json(s, "literal"));
    char *js;
    CHECK_EQ_INT(adbc_ui_snap_json(&js, NULL, s), 0);
    /* Fields as documented in docs/snapshot.md. */
    CHECK(strstr(js, "\"package\":\"p&amp;q\",\"root\":null") != NULL);
    CHECK(strstr(js, "\"bounds\":{\"x\":-1,\"y\":-2,\"w\":4,\"h\":6}") != NULL);
    CHECK(strstr(js, "\"text\":\"q\\\"\\\\\\n\\u0001\\u0085\xe4\xb8\xad\"") != NULL);
    CHECK(strstr(js, "\"resource_id\":\"x:id/y\"") != NULL);
    CHECK(strstr(js, "\"states\":{\"clickable\":true,\"editable\":false,\"scrollable\":true,"
                     "\"checked\":true,\"selected\":true,\"focused\":true,\"enabled\":false}") != NULL);
    adbc_free(js);
    adbc_ui_snap_free(s);
}

int main(void)
{
    RUN(every_recorded_dump);
    RUN(escapes_states_and_empty_windows);
    return T_DONE();
}
