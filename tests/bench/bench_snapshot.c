/* SPDX-License-Identifier: Apache-2.0 */
/* bench_snapshot: parse + prune + format speed and memory of the snapshot
 * pipeline, on every recorded dump and on a generated ~4 MB dump, next to
 * a naive baseline timed in the same run.
 *
 * The baseline is the straightforward way to write this pipeline, the shape
 * a JavaScript or first C version takes: a DOM built node by node with a
 * heap copy of every attribute name and value, entities decoded into new
 * strings, recursive prune and format, the output grown line by line. It
 * prints the same text (checked here on every input), so the ratio compares
 * two implementations of one job on one machine in one run.
 *
 * Memory: malloc/calloc/realloc/free are wrapped in this program to track
 * the bytes live, so "peak" is the most the call ever held at once, the
 * copy of the dump included, divided by the dump size. Peak RSS of the
 * whole process is printed too.
 *
 *   bench_snapshot [FIXTURES_DIR] [--quick]
 */
#include <dirent.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "adbc/error.h"
#include "adbc/ui.h"

/* ---- allocation tracking ---- */

#if defined(__SANITIZE_ADDRESS__)
#define TRACK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACK 0
#endif
#endif
#ifndef TRACK
#define TRACK 1
#endif

static size_t live, peak;

#if TRACK
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static void note_add(void *p)
{
    if (p) {
        live += malloc_usable_size(p);
        if (live > peak)
            peak = live;
    }
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    note_add(p);
    return p;
}

void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    note_add(p);
    return p;
}

void *realloc(void *old, size_t n)
{
    size_t was = old ? malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p || n == 0)
        live -= was;
    note_add(p);
    return p;
}

void free(void *p)
{
    if (p)
        live -= malloc_usable_size(p);
    __libc_free(p);
}
#endif

/* CPU time of this thread: on a shared machine it counts what the code
 * costs, not how long the scheduler let other processes run. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the naive baseline ---- */

typedef struct nattr {
    char *name, *value;
    struct nattr *next;
} nattr;

typedef struct nnode {
    nattr *attrs;
    char *cls, *text, *desc;
    int clickable, editable, scrollable, checked, selected, focused, enabled, ref;
    struct nnode **kids;
    size_t nkids;
    struct nnode *parent;
} nnode;

static const char *nget(const nnode *n, const char *name)
{
    for (nattr *a = n->attrs; a; a = a->next)
        if (strcmp(a->name, name) == 0)
            return a->value;
    return "";
}

static char *decode_entities(const char *s)
{
    char *o = malloc(strlen(s) + 1), *w = o;
    while (*s) {
        static const char *ent[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
                                       {"&quot;", "\""}, {"&apos;", "'"}};
        int done = 0;
        for (int i = 0; i < 5 && !done; i++) {
            size_t l = strlen(ent[i][0]);
            if (strncmp(s, ent[i][0], l) == 0) {
                *w++ = ent[i][1][0];
                s += l;
                done = 1;
            }
        }
        if (!done && s[0] == '&' && s[1] == '#') {
            char *end;
            long cp = s[2] == 'x' ? strtol(s + 3, &end, 16) : strtol(s + 2, &end, 10);
            if (*end == ';' && cp > 0 && cp <= 0x10ffff) {
                if (cp < 0x80) {
                    *w++ = (char)cp;
                } else if (cp < 0x800) {
                    *w++ = (char)(0xc0 | cp >> 6), *w++ = (char)(0x80 | (cp & 0x3f));
                } else if (cp < 0x10000) {
                    *w++ = (char)(0xe0 | cp >> 12), *w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                    *w++ = (char)(0x80 | (cp & 0x3f));
                } else {
                    *w++ = (char)(0xf0 | cp >> 18), *w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
                    *w++ = (char)(0x80 | ((cp >> 6) & 0x3f)), *w++ = (char)(0x80 | (cp & 0x3f));
                }
                s = end + 1;
                done = 1;
            }
        }
        if (!done)
            *w++ = *s++;
    }
    *w = '\0';
    return o;
}

static void nfree(nnode *n)
{
    for (size_t i = 0; i < n->nkids; i++)
        nfree(n->kids[i]);
    while (n->attrs) {
        nattr *a = n->attrs;
        n->attrs = a->next;
        free(a->name);
        free(a->value);
        free(a);
    }
    free(n->kids);
    free(n->cls);
    free(n->text);
    free(n->desc);
    free(n);
}

static void add_kid(nnode *p, nnode *k)
{
    p->kids = realloc(p->kids, (p->nkids + 1) * sizeof *p->kids);
    p->kids[p->nkids++] = k;
    k->parent = p;
}

/* Parse: a copy of the input as a string, a node and heap strings per
 * attribute. Windows hang off a synthetic root. */
static nnode *naive_parse(const char *xml, size_t len)
{
    char *doc = malloc(len + 1);
    memcpy(doc, xml, len);
    doc[len] = '\0';
    nnode *root = calloc(1, sizeof *root), *cur = root;
    for (char *p = doc; (p = strchr(p, '<')) != NULL;) {
        if (strncmp(p, "</node", 6) == 0) {
            if (cur != root)
                cur = cur->parent;
            p += 6;
            continue;
        }
        if (strncmp(p, "<node", 5) != 0 || (p[5] != ' ' && p[5] != '>' && p[5] != '/')) {
            p++;
            continue;
        }
        nnode *n = calloc(1, sizeof *n);
        p += 5;
        int selfclose = 0;
        for (;;) {
            while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
                p++;
            if (*p == '>' || *p == '\0') {
                p += *p != '\0';
                break;
            }
            if (p[0] == '/' && p[1] == '>') {
                selfclose = 1;
                p += 2;
                break;
            }
            char *eq = strchr(p, '=');
            if (!eq)
                break;
            char q = eq[1];
            char *ve = q == '"' || q == '\'' ? strchr(eq + 2, q) : NULL;
            if (!ve)
                break;
            if (q == '"') {
                nattr *a = malloc(sizeof *a);
                a->name = strndup(p, (size_t)(eq - p));
                a->value = strndup(eq + 2, (size_t)(ve - eq - 2));
                a->next = n->attrs;
                n->attrs = a;
            }
            p = ve + 1;
        }
        n->cls = strdup(nget(n, "class"));
        n->text = decode_entities(nget(n, "text"));
        n->desc = decode_entities(nget(n, "content-desc"));
        n->clickable = strcmp(nget(n, "clickable"), "true") == 0;
        n->scrollable = strcmp(nget(n, "scrollable"), "true") == 0;
        n->checked = strcmp(nget(n, "checked"), "true") == 0;
        n->selected = strcmp(nget(n, "selected"), "true") == 0;
        n->focused = strcmp(nget(n, "focused"), "true") == 0;
        n->enabled = strcmp(nget(n, "enabled"), "false") != 0;
        n->editable = strstr(n->cls, "EditText") != NULL;
        add_kid(cur, n);
        if (!selfclose)
            cur = n;
    }
    free(doc);
    return root;
}

static int nref;

static void naive_refs(nnode *n)
{
    if (n->clickable || n->editable || n->scrollable)
        n->ref = ++nref;
    for (size_t i = 0; i < n->nkids; i++)
        naive_refs(n->kids[i]);
}

static const char *last_seg(const char *c)
{
    const char *d = strrchr(c, '.');
    return d ? d + 1 : c;
}

static int naive_wrapper(const char *c)
{
    static const char *w[] = {"Group", "View", "FrameLayout", "LinearLayout", "RelativeLayout",
                              "ConstraintLayout", "CoordinatorLayout", "ViewGroup"};
    if (!*c)
        return 1;
    for (int i = 0; i < 8; i++)
        if (strcmp(last_seg(c), w[i]) == 0)
            return 1;
    return 0;
}

static int has_ref(const nnode *n)
{
    if (n->ref)
        return 1;
    for (size_t i = 0; i < n->nkids; i++)
        if (has_ref(n->kids[i]))
            return 1;
    return 0;
}

/* Returns the node standing for n, or NULL; detached nodes are freed. */
static nnode *naive_prune(nnode *n)
{
    size_t k = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        nnode *c = naive_prune(n->kids[i]);
        if (c)
            n->kids[k++] = c;
    }
    n->nkids = k;
    k = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        nnode *c = n->kids[i];
        int dup = 0;
        if (*c->text && !has_ref(c))
            for (size_t j = 0; j < k && !dup; j++) {
                nnode *e = n->kids[j];
                dup = *e->text && !has_ref(e) && strcmp(e->cls, c->cls) == 0 &&
                      strcmp(e->text, c->text) == 0;
            }
        if (dup)
            nfree(c);
        else
            n->kids[k++] = c;
    }
    n->nkids = k;
    int keep = n->ref || *n->text || *n->desc || n->checked || n->selected || n->focused;
    if (!keep && naive_wrapper(n->cls) && n->nkids == 1) {
        nnode *c = n->kids[0];
        n->nkids = 0;
        nfree(n);
        return c;
    }
    if (!keep && n->nkids == 0) {
        nfree(n);
        return NULL;
    }
    return n;
}

typedef struct nbuf {
    char *p;
    size_t n;
} nbuf;

static void nappend(nbuf *b, const char *s)
{
    size_t l = strlen(s);
    b->p = realloc(b->p, b->n + l + 1);
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static char *nescape(const char *s)
{
    char *o = malloc(strlen(s) * 6 + 1), *w = o;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            *w++ = '\\', *w++ = (char)c;
        else if (c == '\n')
            *w++ = '\\', *w++ = 'n';
        else if (c == '\r')
            *w++ = '\\', *w++ = 'r';
        else if (c == '\t')
            *w++ = '\\', *w++ = 't';
        else if (c < 0x20 || c == 0x7f)
            w += sprintf(w, "\\u%04x", c);
        else
            *w++ = (char)c;
    }
    *w = '\0';
    return o;
}

static void naive_format(nbuf *b, const nnode *n, int depth)
{
    static const char *roles[][2] = {
        {"TextView", "Text"}, {"AppCompatTextView", "Text"}, {"EditText", "TextInput"},
        {"AppCompatEditText", "TextInput"}, {"Button", "Button"}, {"AppCompatButton", "Button"},
        {"MaterialButton", "Button"}, {"ImageView", "Image"}, {"ImageButton", "ImageButton"},
        {"CheckBox", "CheckBox"}, {"Switch", "Switch"}, {"RadioButton", "Radio"},
        {"ToggleButton", "Toggle"}, {"SeekBar", "Slider"}, {"ProgressBar", "Progress"},
        {"Spinner", "Select"}, {"RecyclerView", "List"}, {"ListView", "List"},
        {"ScrollView", "ScrollView"}, {"LinearLayout", "Group"}, {"RelativeLayout", "Group"},
        {"FrameLayout", "Group"}, {"ConstraintLayout", "Group"}, {"CoordinatorLayout", "Group"},
        {"ViewGroup", "Group"}, {"TabLayout", "TabList"}, {"TabItem", "Tab"}};
    char *line = malloc((size_t)depth * 2 + 64 + strlen(n->text) * 6 + strlen(n->desc) * 6 +
                        strlen(n->cls));
    char *w = line;
    for (int i = 0; i < depth; i++)
        *w++ = ' ', *w++ = ' ';
    const char *role = *n->cls ? last_seg(n->cls) : "View";
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(role, roles[i][0]) == 0)
            role = roles[i][1];
    w += sprintf(w, "- %s", role);
    if (n->ref)
        w += sprintf(w, " [ref=%d]", n->ref);
    if (*n->text) {
        char *e = nescape(n->text);
        w += sprintf(w, " \"%s\"", e);
        free(e);
    }
    if (*n->desc) {
        char *e = nescape(n->desc);
        w += sprintf(w, " (%s)", e);
        free(e);
    }
    const char *st[4];
    int k = 0;
    if (n->checked)
        st[k++] = "checked";
    if (n->selected)
        st[k++] = "selected";
    if (n->focused)
        st[k++] = "focused";
    if (!n->enabled)
        st[k++] = "disabled";
    for (int i = 0; i < k; i++)
        w += sprintf(w, "%s%s", i ? ", " : " [", st[i]);
    if (k)
        *w++ = ']';
    *w = '\0';
    if (b->n)
        nappend(b, "\n");
    nappend(b, line);
    free(line);
    for (size_t i = 0; i < n->nkids; i++)
        naive_format(b, n->kids[i], depth + 1);
}

static char *naive_snapshot(const char *xml, size_t len)
{
    nnode *root = naive_parse(xml, len);
    nref = 0;
    for (size_t i = 0; i < root->nkids; i++)
        naive_refs(root->kids[i]);
    nbuf b = {calloc(1, 1), 0};
    for (size_t i = 0; i < root->nkids; i++) {
        nnode *w = naive_prune(root->kids[i]);
        if (w) {
            naive_format(&b, w, 0);
            nfree(w);
        }
    }
    root->nkids = 0;
    nfree(root);
    return b.p;
}

/* ---- inputs ---- */

typedef struct input {
    char name[128];
    char *xml;
    size_t len;
} input;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const input *)a)->name, ((const input *)b)->name);
}

/* A chat-list screen as uiautomator writes it, rows until ~target bytes. */
static char *generate(size_t target, size_t *len)
{
    static const char attrs[] =
        "checkable=\"false\" checked=\"false\" clickable=\"%s\" enabled=\"true\" "
        "focusable=\"%s\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" "
        "password=\"false\" selected=\"false\" bounds=\"[%d,%d][%d,%d]\" drawing-order=\"%d\" "
        "hint=\"\"";
    size_t cap = target + 65536, n = 0;
    char *x = malloc(cap);
    n += (size_t)sprintf(x + n, "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                                "<hierarchy rotation=\"0\"><node index=\"0\" text=\"\" "
                                "resource-id=\"\" class=\"android.widget.FrameLayout\" "
                                "package=\"com.example.chat\" content-desc=\"\" ");
    n += (size_t)sprintf(x + n, attrs, "false", "false", 0, 0, 1080, 2400, 0);
    n += (size_t)sprintf(x + n, "><node index=\"0\" text=\"\" resource-id=\"com.example.chat:id/list\" "
                                "class=\"androidx.recyclerview.widget.RecyclerView\" "
                                "package=\"com.example.chat\" content-desc=\"\" ");
    n += (size_t)sprintf(x + n, attrs, "false", "true", 0, 200, 1080, 2300, 1);
    n += (size_t)sprintf(x + n, ">");
    for (int i = 0; n + 4096 < target; i++) {
        int y = 200 + (i % 12) * 175;
        n += (size_t)sprintf(x + n, "<node index=\"%d\" text=\"\" resource-id=\"com.example.chat:id/row\" "
                                    "class=\"android.widget.LinearLayout\" package=\"com.example.chat\" "
                                    "content-desc=\"\" ", i);
        n += (size_t)sprintf(x + n, attrs, "true", "true", 0, y, 1080, y + 175, i + 1);
        n += (size_t)sprintf(x + n, "><node index=\"0\" text=\"\" resource-id=\"com.example.chat:id/avatar\" "
                                    "class=\"android.widget.ImageView\" package=\"com.example.chat\" "
                                    "content-desc=\"Profile photo of contact %d\" ", i);
        n += (size_t)sprintf(x + n, attrs, "false", "false", 30, y + 20, 165, y + 155, 1);
        n += (size_t)sprintf(x + n, " /><node index=\"1\" text=\"\" resource-id=\"\" "
                                    "class=\"android.widget.LinearLayout\" package=\"com.example.chat\" "
                                    "content-desc=\"\" ");
        n += (size_t)sprintf(x + n, attrs, "false", "false", 190, y + 20, 900, y + 155, 2);
        n += (size_t)sprintf(x + n, "><node index=\"0\" text=\"Contact %d \xe8\x81\x94\xe7\xb3\xbb\xe4\xba\xba &amp; co\" "
                                    "resource-id=\"com.example.chat:id/name\" class=\"android.widget.TextView\" "
                                    "package=\"com.example.chat\" content-desc=\"\" ", i);
        n += (size_t)sprintf(x + n, attrs, "false", "false", 190, y + 20, 900, y + 85, 1);
        n += (size_t)sprintf(x + n, " /><node index=\"1\" text=\"Last message %d: see you at 7 &#128293;\" "
                                    "resource-id=\"com.example.chat:id/preview\" class=\"android.widget.TextView\" "
                                    "package=\"com.example.chat\" content-desc=\"\" ", i);
        n += (size_t)sprintf(x + n, attrs, "false", "false", 190, y + 90, 900, y + 155, 2);
        n += (size_t)sprintf(x + n, " /></node><node index=\"2\" text=\"%02d:%02d\" "
                                    "resource-id=\"com.example.chat:id/time\" class=\"android.widget.TextView\" "
                                    "package=\"com.example.chat\" content-desc=\"\" ", i / 60 % 24, i % 60);
        n += (size_t)sprintf(x + n, attrs, "false", "false", 920, y + 20, 1050, y + 85, 3);
        n += (size_t)sprintf(x + n, " /></node>");
    }
    n += (size_t)sprintf(x + n, "</node></node></hierarchy>");
    *len = n;
    return x;
}

/* Best time per call (seconds) over batches of at least min_s each. */
typedef int (*run_fn)(const input *in);

static int run_adbc(const input *in)
{
    adbc_ui_snap *s;
    int rc = adbc_ui_snap_parse(&s, in->xml, in->len);
    if (rc == 0) {
        size_t n;
        volatile const char *t = adbc_ui_snap_text(s, &n);
        (void)t;
        adbc_ui_snap_free(s);
    }
    return rc;
}

static int run_naive(const input *in)
{
    char *t = naive_snapshot(in->xml, in->len);
    int ok = t != NULL;
    free(t);
    return ok ? 0 : -1;
}

static double time_it(run_fn fn, const input *in, double min_s, int batches)
{
    double best = 1e9;
    for (int b = 0; b < batches; b++) {
        long iters = 0;
        double t0 = now(), t;
        do {
            if (fn(in) != 0) {
                fprintf(stderr, "%s: failed: %s\n", in->name, adbc_last_error());
                exit(1);
            }
            iters++;
        } while ((t = now() - t0) < min_s);
        if (t / (double)iters < best)
            best = t / (double)iters;
    }
    return best;
}

static double peak_ratio(run_fn fn, const input *in)
{
    size_t before = live;
    peak = live;
    fn(in);
    return (double)(peak - before) / (double)in->len;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else
            dir = argv[i];
    }
    char defdir[4096];
    if (!dir) {
        const char *src = getenv("ADBC_SOURCE_DIR");
        snprintf(defdir, sizeof defdir, "%s/fixtures/snapshot", src ? src : ".");
        dir = defdir;
    }
    input ins[64];
    size_t nin = 0;
    DIR *dd = opendir(dir);
    if (!dd) {
        fprintf(stderr, "bench_snapshot: cannot open %s: give the fixtures directory\n", dir);
        return 1;
    }
    struct dirent *e;
    while ((e = readdir(dd)) && nin < 63) {
        size_t l = strlen(e->d_name);
        if (l < 5 || l >= sizeof ins[0].name || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        char path[8300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ins[nin].xml = slurp(path, &ins[nin].len);
        if (!ins[nin].xml)
            continue;
        snprintf(ins[nin].name, sizeof ins[nin].name, "%.127s", e->d_name);
        nin++;
    }
    closedir(dd);
    qsort(ins, nin, sizeof ins[0], by_name);
    snprintf(ins[nin].name, sizeof ins[nin].name, "generated-chat-list (4 MB)");
    ins[nin].xml = generate(4u << 20, &ins[nin].len);
    nin++;

    double min_s = quick ? 0.02 : 0.2;
    int batches = quick ? 2 : 5;
    printf("parse + prune + format (adbc_ui_snap_parse: copy, parse in place, prune, text);\n"
           "naive = DOM with a heap copy per attribute, recursive prune/format;\n"
           "thread CPU time, best of %d batches of >= %.0f ms each\n\n",
           batches, min_s * 1000);
    printf("%-42s %9s %10s %9s %10s %9s %7s %8s %8s\n", "dump", "bytes", "adbc MB/s", "adbc us",
           "naive MB/s", "naive us", "ratio", "peak/sz", "naive pk");
    double tot_bytes = 0, tot_adbc = 0, tot_naive = 0;
    int mismatches = 0;
    for (size_t i = 0; i < nin; i++) {
        input *in = &ins[i];
        /* Same job: the naive text must equal adbc's. */
        adbc_ui_snap *s;
        if (adbc_ui_snap_parse(&s, in->xml, in->len) != 0) {
            fprintf(stderr, "%s: %s\n", in->name, adbc_last_error());
            return 1;
        }
        char *nt = naive_snapshot(in->xml, in->len);
        if (strcmp(nt, adbc_ui_snap_text(s, NULL)) != 0) {
            fprintf(stderr, "warning: %s: naive text differs from adbc's\n", in->name);
            mismatches++;
        }
        free(nt);
        adbc_ui_snap_free(s);

        double ta = time_it(run_adbc, in, min_s, batches);
        double tn = time_it(run_naive, in, min_s, batches);
        double pa = TRACK ? peak_ratio(run_adbc, in) : 0, pn = TRACK ? peak_ratio(run_naive, in) : 0;
        double mb = (double)in->len / 1e6;
        printf("%-42s %9zu %10.0f %9.1f %10.0f %9.1f %6.1fx %7.2fx %7.2fx\n", in->name, in->len,
               mb / ta, ta * 1e6, mb / tn, tn * 1e6, tn / ta, pa, pn);
        if (i + 1 < nin) {
            tot_bytes += (double)in->len;
            tot_adbc += ta;
            tot_naive += tn;
        }
    }
    printf("%-42s %9.0f %10.0f %9.1f %10.0f %9.1f %6.1fx\n", "all recorded dumps, one each",
           tot_bytes, tot_bytes / 1e6 / tot_adbc, tot_adbc * 1e6 / (double)(nin - 1),
           tot_bytes / 1e6 / tot_naive, tot_naive * 1e6 / (double)(nin - 1), tot_naive / tot_adbc);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("\npeak/sz: most bytes held at once by one call (its copy of the dump included) / dump "
           "size%s\nprocess peak RSS: %ld KiB\n",
           TRACK ? "" : " (not measured in a sanitizer build)", ru.ru_maxrss);
    if (mismatches)
        printf("%d input(s) where the naive baseline printed a different text\n", mismatches);
    for (size_t i = 0; i < nin; i++)
        free(ins[i].xml);
    return 0;
}
