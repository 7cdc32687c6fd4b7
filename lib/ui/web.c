/* SPDX-License-Identifier: Apache-2.0 */
/* The web part of a snapshot (docs/webview.md). For each WebView in the
 * dump whose app has a DevTools socket with a visible page, the page's
 * accessibility tree (Accessibility.getFullAXTree, and each same-process
 * iframe's with its frameId) is read and pruned; what of each kept node
 * shows is asked of the page itself, one call per frame over all its nodes
 * (check_js: boxes clipped by the viewport and by every ancestor that clips
 * overflow, the page's modal, and for refs a point the page's own hit test
 * finds on them); the answers are mapped from CSS pixels to screen pixels
 * through the iframes and the visual viewport with the WebView's bounds,
 * and the result is written as <node> elements that replace the WebView's
 * children in the dump. The spliced dump then goes through the one pipeline every dump
 * takes (parse, prune, refs, text, JSON), so web refs number on with the
 * screen's, in document order, and act like native ones.
 *
 * Web nodes say what they are in their attributes: class "web.<Kind>"
 * (Button, EditText, CheckBox...: the role table prints them like native
 * ones), resource-id "web:<socket>/<page id>#<backend node id>" (what an act
 * needs to reach the node through DevTools again; a node the page re-created
 * has another id, so its ref goes stale).
 *
 * Everything is bounded by one budget: a page that does not answer within
 * it leaves its WebView as the dump had it, with a note node saying why.
 *
 * Each page's DevTools session is kept with the connection (conn_keep),
 * one per WebView, with its last tree and the objects of its nodes: a
 * later read asks the page's metrics, frames and a fingerprint of what its
 * DOM events do not report (print_js), in one round trip beside the page
 * list, and reads the tree again only when the page changed (a DOM event
 * since, other frames, another fingerprint). From its second read a
 * session follows the page's DOM (DOM.getDocument with depth -1). A session
 * whose page is no longer the one shown, or that fails, is closed; a kept
 * session that failed gets one more try from the start within the budget. */
#include "ui/ui_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/shell.h"
#include "adbc/webview.h"
#include "conn/conn_facts.h"
#include "core/internal.h"
#include "core/jread.h"
#include "services/cdp_int.h"

#define WEB_MAX_VIEWS 8
#define WEB_MAX_SOCKETS 64
#define WEB_MAX_KEPT 3000

/* An attribute value: XML-escaped, control characters as spaces. */
static void wb_attr(core_buf *b, const char *name, const char *v)
{
    core_buf_puts(b, " ");
    core_buf_puts(b, name);
    core_buf_puts(b, "=\"");
    for (const char *p = v; p && *p; p++) {
        unsigned char c = (unsigned char)*p;
        switch (c) {
        case '&': core_buf_puts(b, "&amp;"); break;
        case '<': core_buf_puts(b, "&lt;"); break;
        case '>': core_buf_puts(b, "&gt;"); break;
        case '"': core_buf_puts(b, "&quot;"); break;
        default:
            if (c < 0x20)
                core_buf_add(b, " ", 1);
            else
                core_buf_add(b, p, 1);
        }
    }
    core_buf_puts(b, "\"");
}

/* ---- the device side: sockets and their owners ----------------------------- */

typedef struct wsock {
    char *name;
    char *package; /* "" unknown */
} wsock;

static int run_out(char **out, size_t *len, adbc_conn *c, const char *cmd, int timeout_ms)
{
    adbc_run_result r;
    int rc = adbc_run(&r, c, ADBC_SHELL_EXEC, cmd, NULL, 0, 8u << 20, timeout_ms);
    if (rc < 0) {
        adbc_run_result_clear(&r);
        return rc;
    }
    *out = (char *)r.out;
    *len = r.out_len;
    r.out = NULL;
    adbc_run_result_clear(&r);
    if (!*out && !(*out = core_strdup("")))
        return core_fail(ADBC_ENOMEM, "out of memory");
    return 0;
}

static int pid_in(const char *name)
{
    const char *u = strstr(name, "devtools_remote_");
    if (!u || !u[16])
        return 0;
    long pid = 0;
    for (const char *q = u + 16; *q; q++) {
        if (*q < '0' || *q > '9' || pid > 10000000)
            return 0;
        pid = pid * 10 + (*q - '0');
    }
    return (int)pid;
}

/* The DevTools sockets and the package of each: /proc/net/unix, then the
 * first word of every owner's cmdline in one more command. */
static int list_sockets(wsock **out, size_t *n, adbc_conn *c, int64_t deadline)
{
    *out = NULL;
    *n = 0;
    char *text;
    size_t len;
    int rc = run_out(&text, &len, c, "cat /proc/net/unix", core_remaining(deadline));
    if (rc < 0)
        return rc;
    char **names;
    int nn = adbc_devtools_scan_unix(&names, text, len);
    core_free(text);
    if (nn < 0)
        return nn;
    int all = nn;
    if (nn > WEB_MAX_SOCKETS)
        nn = WEB_MAX_SOCKETS; /* names past it are freed below */
    wsock *s = core_calloc((size_t)nn + 1, sizeof *s);
    char cmd[WEB_MAX_SOCKETS * 80 + 64];
    size_t cl = 0;
    cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, "for p in");
    int pids = 0;
    for (int i = 0; s && i < nn; i++) {
        s[i].name = names[i];
        names[i] = NULL;
        int pid = pid_in(s[i].name);
        if (pid > 0) {
            cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, " %d", pid);
            pids++;
        }
    }
    for (int i = 0; i < all; i++)
        core_free(names[i]);
    core_free(names);
    if (!s)
        return core_fail(ADBC_ENOMEM, "out of memory");
    snprintf(cmd + cl, sizeof cmd - cl,
             "; do echo \"$p $(tr '\\0' '\\n' < /proc/$p/cmdline 2>/dev/null | head -n 1)\"; done");
    char *owners = NULL;
    size_t olen = 0;
    if (pids && (rc = run_out(&owners, &olen, c, cmd, core_remaining(deadline))) < 0) {
        for (int i = 0; i < nn; i++)
            core_free(s[i].name);
        core_free(s);
        return rc;
    }
    for (int i = 0; i < nn; i++) {
        int pid = pid_in(s[i].name);
        const char *pkg = "";
        size_t pl = 0;
        if (strncmp(s[i].name, "chrome_devtools_remote", 22) == 0 && s[i].name[22] == '\0')
            pkg = "com.android.chrome", pl = 18;
        for (const char *p = owners; pid > 0 && p && *p;) {
            const char *e = strchr(p, '\n');
            if (!e)
                e = p + strlen(p);
            char *sp;
            long v = strtol(p, &sp, 10);
            if (v == pid && *sp == ' ') {
                pkg = sp + 1;
                pl = (size_t)(e - pkg);
                break;
            }
            p = *e ? e + 1 : e;
        }
        s[i].package = core_strndup(pkg, pl);
        if (!s[i].package)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
    }
    core_free(owners);
    if (rc < 0) {
        for (int i = 0; i < nn; i++) {
            core_free(s[i].name);
            core_free(s[i].package);
        }
        core_free(s);
        return rc;
    }
    *out = s;
    *n = (size_t)nn;
    return 0;
}

/* ---- one page --------------------------------------------------------------- */

typedef struct wview {
    uint32_t node;
    int x1, y1, x2, y2;
    char pkg[256];
    char note[480];   /* why the page was not read ("" when it was) */
    core_buf frag;    /* the web nodes, when read */
} wview;

/* The page shown in view: /json/list's pages of type "page"; WebView
 * pages describe themselves ("visible", "screenX"...), Chrome's do not:
 * then only a single page is taken. *path gets its WebSocket path. */
static int pick_page(char **path, char **id, adbc_conn *c, const char *sock, const wview *v,
                     int64_t deadline)
{
    *path = *id = NULL;
    char svc[300];
    snprintf(svc, sizeof svc, "localabstract:%s", sock);
    adbc_http_response r;
    int rc = adbc_http_get(&r, c, svc, "/json/list", 0, core_remaining(deadline));
    if (rc == 0 && r.status != 200)
        rc = core_fail(ADBC_EREMOTE, "GET /json/list answered HTTP %d", r.status);
    jread j = {0};
    if (rc == 0)
        rc = jread_parse(&j, r.body, r.body_len);
    if (rc < 0) {
        adbc_http_response_free(&r);
        return rc;
    }
    int best = -1, pages = 0, visible = 0, best_score = -1;
    for (int p = jread_first(&j, 0); p >= 0; p = jread_next(&j, 0, p)) {
        if (!jread_streq(&j, jread_get(&j, p, "type"), "page"))
            continue;
        pages++;
        int score = 0;
        char *desc = NULL;
        if (jread_str(&j, jread_get(&j, p, "description"), &desc) == 0 && desc[0]) {
            jread d;
            if (jread_parse(&d, desc, strlen(desc)) == 0) {
                if (jread_bool(&d, jread_get(&d, 0, "visible"), 0) &&
                    jread_bool(&d, jread_get(&d, 0, "attached"), 1)) {
                    visible++;
                    score = 1;
                    int sx = (int)jread_num(&d, jread_get(&d, 0, "screenX"), -1);
                    int sy = (int)jread_num(&d, jread_get(&d, 0, "screenY"), -1);
                    if (sx == v->x1 && sy == v->y1)
                        score = 2;
                }
                jread_free(&d);
            }
        }
        core_free(desc);
        if (score > best_score) {
            best_score = score;
            best = p;
        }
    }
    if (visible == 0 && pages != 1) {
        rc = core_fail(ADBC_ENOTFOUND, pages ? "%d pages, none says it is the visible one"
                                             : "no page", pages);
    } else {
        char *ws = NULL;
        rc = jread_str(&j, jread_get(&j, best, "id"), id);
        if (rc == 0 && jread_str(&j, jread_get(&j, best, "webSocketDebuggerUrl"), &ws) == 0 &&
            strncmp(ws, "ws://", 5) == 0 && strchr(ws + 5, '/')) {
            *path = core_strdup(strchr(ws + 5, '/'));
        } else if (rc == 0) {
            char buf[300];
            snprintf(buf, sizeof buf, "/devtools/page/%s", *id);
            *path = core_strdup(buf);
        }
        core_free(ws);
        if (rc == 0 && !*path)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
    }
    jread_free(&j);
    adbc_http_response_free(&r);
    if (rc < 0) {
        core_free(*id);
        *id = NULL;
    }
    return rc;
}

/* AX roles kept, the class they print as, and what they are. */
enum { K_CLICK = 1, K_EDIT = 2, K_TEXT = 4, K_DESC = 8, K_NAMED = 16 };
static const struct {
    const char *role, *cls;
    unsigned kind;
} kinds[] = {
    {"button", "web.Button", K_CLICK},        {"link", "web.Link", K_CLICK},
    {"textbox", "web.EditText", K_EDIT},      {"searchbox", "web.EditText", K_EDIT},
    {"checkbox", "web.CheckBox", K_CLICK},    {"radio", "web.RadioButton", K_CLICK},
    {"switch", "web.Switch", K_CLICK},        {"slider", "web.SeekBar", K_CLICK},
    {"combobox", "web.Spinner", K_CLICK},     {"tab", "web.TabItem", K_CLICK},
    {"menuitem", "web.MenuItem", K_CLICK},    {"menuitemcheckbox", "web.MenuItem", K_CLICK},
    {"menuitemradio", "web.MenuItem", K_CLICK}, {"option", "web.Option", K_CLICK},
    {"heading", "web.Heading", K_NAMED},      {"image", "web.ImageView", K_DESC | K_NAMED},
    {"img", "web.ImageView", K_DESC | K_NAMED}, {"list", "web.ListView", 0},
    {"listitem", "web.ListItem", K_NAMED},    {"StaticText", "web.TextView", K_TEXT | K_NAMED},
    {"dialog", "web.Dialog", 0},              {"alert", "web.Alert", K_NAMED},
};

/* An AX node of one of the page's frames. Indices are into the page's one
 * array of the nodes of all its frames. */
typedef struct axn {
    int parent;     /* index of the parent node, -1 */
    int kind;       /* index into kinds, -1 when not kept */
    int kparent;    /* nearest kept ancestor, -1: the WebView */
    int frame;      /* the frame the node is in */
    int child;      /* for an <iframe>: the frame it shows, -1 (another process's, or none) */
    int iframe;     /* 1: an <iframe> (role Iframe) */
    int k0, nk;     /* its children: kid[k0 .. k0 + nk) */
    long backend;
    char *name, *value;
    char *obj;      /* its object (DOM.resolveNode), NULL */
    unsigned st;    /* UI_* states */
    int got;        /* the check's answer: r holds what shows */
    double r[4];    /* in its frame's CSS px: x1, y1, x2, y2 */
    double fr[4];   /* an <iframe>'s content box: x, y, width, height */
    int x1, y1, x2, y2, boxed;
} axn;

#define WEB_MAX_FRAMES 16

/* A frame of the page in this process (Page.getFrameTree): the page's own
 * first, then its iframes'. */
typedef struct wframe {
    char *id;
    int parent;       /* index of the parent frame, -1 */
    int depth;
    long owner;       /* backend node id of its <iframe> element */
    int owner_node;   /* that element's node, -1 */
    int tid, oid;     /* command ids: its AX tree, its owner */
    char *tree;
    jread j;
    int parsed;
    int base, n;      /* its nodes: a[base .. base + n) */
    char err[200];    /* why it was not read, "" */
    int check_err;    /* err is the check's: cleared for the next read */
    int call;         /* command id of its check, 0 */
    int shown;        /* 1: checked, what shows of it is known */
    double ox, oy, fs; /* its CSS px in the page's: page_x = ox + x * fs */
    double view[5];   /* the check's record: viewport x, y, width, height, scale to parent */
} wframe;

typedef struct wpage {
    axn *a;
    int n, cap;
    int *kid;
    int nkid, capkid;
    wframe f[WEB_MAX_FRAMES];
    int nf;
} wpage;

static uint32_t hash_id(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static void page_free(wpage *pg)
{
    for (int i = 0; i < pg->n; i++) {
        core_free(pg->a[i].name);
        core_free(pg->a[i].value);
        core_free(pg->a[i].obj);
    }
    core_free(pg->a);
    core_free(pg->kid);
    for (int i = 0; i < pg->nf; i++) {
        core_free(pg->f[i].id);
        core_free(pg->f[i].tree);
        jread_free(&pg->f[i].j);
    }
}

/* The node (local index) whose nodeId is the string at token id, -1. */
static int ax_find(const jread *j, const int *toks, const int *tab, uint32_t cap, int id)
{
    if (!jread_is(j, id, JR_STR))
        return -1;
    uint32_t h = hash_id(j->s + j->t[id].start, j->t[id].len) & (cap - 1);
    for (; tab[h] >= 0; h = (h + 1) & (cap - 1)) {
        int o = jread_get(j, toks[tab[h]], "nodeId");
        if (j->t[o].len == j->t[id].len &&
            memcmp(j->s + j->t[o].start, j->s + j->t[id].start, j->t[id].len) == 0)
            return tab[h];
    }
    return -1;
}

/* One frame's AX tree (its "nodes" list) added to the page's nodes:
 * parents and children by nodeId (an open-addressed table over the id
 * strings), kinds, states. */
static int ax_add(wpage *pg, int fi)
{
    wframe *f = &pg->f[fi];
    const jread *j = &f->j;
    int list = jread_get(j, 0, "nodes");
    int n = 0;
    for (int e = jread_first(j, list); e >= 0; e = jread_next(j, list, e))
        n++;
    f->base = pg->n;
    f->n = 0;
    if (n == 0)
        return 0;
    if (pg->n + n > pg->cap) {
        int cap = pg->n + n;
        axn *na = core_realloc(pg->a, (size_t)cap * sizeof *na);
        if (!na)
            return core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
        pg->a = na;
        pg->cap = cap;
    }
    uint32_t cap = 1;
    while (cap < (uint32_t)n * 2)
        cap <<= 1;
    int *tab = core_malloc(cap * sizeof *tab), *toks = core_malloc((size_t)n * sizeof *toks);
    if (!tab || !toks) {
        core_free(tab);
        core_free(toks);
        return core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
    }
    for (uint32_t i = 0; i < cap; i++)
        tab[i] = -1;
    int i = 0;
    for (int e = jread_first(j, list); e >= 0; e = jread_next(j, list, e), i++) {
        toks[i] = e;
        int id = jread_get(j, e, "nodeId");
        if (!jread_is(j, id, JR_STR))
            continue;
        uint32_t h = hash_id(j->s + j->t[id].start, j->t[id].len) & (cap - 1);
        while (tab[h] >= 0)
            h = (h + 1) & (cap - 1);
        tab[h] = i;
    }
    int rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        axn *x = &pg->a[pg->n + i];
        memset(x, 0, sizeof *x);
        x->frame = fi;
        x->child = -1;
        x->kind = -1;
        int e = toks[i];
        int p = ax_find(j, toks, tab, cap, jread_get(j, e, "parentId"));
        x->parent = p >= 0 ? f->base + p : -1;
        /* Children, in order: kid[k0 .. k0 + nk). */
        int ch = jread_get(j, e, "childIds");
        x->k0 = pg->nkid;
        for (int c = jread_first(j, ch); c >= 0; c = jread_next(j, ch, c)) {
            int k = ax_find(j, toks, tab, cap, c);
            if (k < 0)
                continue;
            if (pg->nkid == pg->capkid) {
                int nc = pg->capkid ? pg->capkid * 2 : 1024;
                int *nk = core_realloc(pg->kid, (size_t)nc * sizeof *nk);
                if (!nk) {
                    rc = core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
                    break;
                }
                pg->kid = nk;
                pg->capkid = nc;
            }
            pg->kid[pg->nkid++] = f->base + k;
            x->nk++;
        }
        x->backend = (long)jread_num(j, jread_get(j, e, "backendDOMNodeId"), 0);
        if (jread_bool(j, jread_get(j, e, "ignored"), 0))
            continue;
        int role = jread_get(j, jread_get(j, e, "role"), "value");
        if (jread_streq(j, role, "Iframe") || jread_streq(j, role, "IframePresentational")) {
            x->iframe = x->backend > 0;
            continue;
        }
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (jread_streq(j, role, kinds[k].role)) {
                x->kind = (int)k;
                break;
            }
        if (x->kind < 0)
            continue;
        jread_str(j, jread_get(j, jread_get(j, e, "name"), "value"), &x->name);
        int vv = jread_get(j, jread_get(j, e, "value"), "value");
        if (jread_is(j, vv, JR_STR))
            jread_str(j, vv, &x->value);
        x->st = UI_ENABLED;
        int props = jread_get(j, e, "properties");
        for (int q = jread_first(j, props); q >= 0; q = jread_next(j, props, q)) {
            int pn = jread_get(j, q, "name");
            int pv = jread_get(j, jread_get(j, q, "value"), "value");
            int on = jread_bool(j, pv, 0) || jread_streq(j, pv, "true") ||
                     jread_streq(j, pv, "mixed");
            if (jread_streq(j, pn, "disabled") && on)
                x->st &= ~(unsigned)UI_ENABLED;
            else if (jread_streq(j, pn, "focused") && on)
                x->st |= UI_FOCUSED;
            else if ((jread_streq(j, pn, "checked") || jread_streq(j, pn, "pressed")) && on)
                x->st |= UI_CHECKED;
            else if (jread_streq(j, pn, "selected") && on)
                x->st |= UI_SELECTED;
        }
        unsigned kd = kinds[x->kind].kind;
        if ((kd & K_NAMED) && (!x->name || !x->name[0]))
            x->kind = -1;
        if (x->backend <= 0)
            x->kind = -1;
    }
    pg->n += i; /* the nodes set up, also when memory ran out */
    f->n = i;
    core_free(tab);
    core_free(toks);
    return rc;
}

/* Document order over all frames: depth first from the page's roots along
 * the children, a frame's nodes where its <iframe> is. Each node is placed
 * once. Then the nearest kept ancestor of each; a text that repeats it (a
 * button's label) goes. */
static int ax_order(int **order, int *nord, wpage *pg)
{
    int n = pg->n;
    axn *a = pg->a;
    *order = NULL;
    *nord = 0;
    if (n == 0)
        return 0;
    int *ord = core_malloc((size_t)n * sizeof *ord), *stk = core_malloc((size_t)n * sizeof *stk);
    char *seen = core_calloc((size_t)n, 1);
    if (!ord || !stk || !seen) {
        core_free(ord);
        core_free(stk);
        core_free(seen);
        return core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
    }
    int no = 0;
    for (int r = 0; r < n; r++) {
        if (a[r].parent >= 0 || a[r].frame != 0 || seen[r])
            continue;
        int sp = 0;
        stk[sp++] = r;
        seen[r] = 1;
        while (sp > 0) {
            int x = stk[--sp];
            ord[no++] = x;
            /* Pushed in reverse so the first child comes out first; a
             * frame's roots after the <iframe>'s own children. */
            int cf = a[x].child;
            if (cf >= 0)
                for (int k = pg->f[cf].base + pg->f[cf].n - 1; k >= pg->f[cf].base; k--)
                    if (a[k].parent < 0 && !seen[k] && sp < n) {
                        seen[k] = 1;
                        a[k].parent = x;
                        stk[sp++] = k;
                    }
            for (int k = a[x].nk - 1; k >= 0; k--) {
                int c = pg->kid[a[x].k0 + k];
                if (!seen[c] && sp < n) {
                    seen[c] = 1;
                    stk[sp++] = c;
                }
            }
        }
    }
    core_free(stk);
    core_free(seen);
    for (int i = 0; i < n; i++) {
        int p = a[i].parent, steps = 0;
        while (p >= 0 && a[p].kind < 0 && steps++ < n)
            p = a[p].parent;
        a[i].kparent = steps <= n ? p : -1;
        if (a[i].kind >= 0 && (kinds[a[i].kind].kind & K_TEXT) && p >= 0 && a[i].name &&
            ((a[p].name && strcmp(a[p].name, a[i].name) == 0) ||
             (kinds[a[p].kind].kind & K_EDIT)))
            a[i].kind = -1; /* a label repeated, or the text inside a field */
    }
    *order = ord;
    *nord = no;
    return 0;
}

static int num_of(const jread *j, int obj, const char *k, double *v)
{
    int t = jread_get(j, obj, k);
    if (!jread_is(j, t, JR_NUM))
        return -1;
    *v = jread_num(j, t, 0);
    return 0;
}

/* The start tag of one web node. */
static void open_node(core_buf *b, const char *cls, const char *text, const char *desc,
                      const char *sock, const char *page, long backend, const char *pkg,
                      unsigned st, const int box[4])
{
    char rid[600], bounds[96];
    snprintf(rid, sizeof rid, "web:%s/%s#%ld", sock, page, backend);
    snprintf(bounds, sizeof bounds, "[%d,%d][%d,%d]", box[0], box[1], box[2], box[3]);
    core_buf_puts(b, "<node");
    wb_attr(b, "class", cls);
    wb_attr(b, "text", text);
    wb_attr(b, "resource-id", rid);
    wb_attr(b, "package", pkg);
    wb_attr(b, "content-desc", desc);
    wb_attr(b, "checked", st & UI_CHECKED ? "true" : "false");
    wb_attr(b, "clickable", st & UI_CLICKABLE ? "true" : "false");
    wb_attr(b, "enabled", st & UI_ENABLED ? "true" : "false");
    wb_attr(b, "focused", st & UI_FOCUSED ? "true" : "false");
    wb_attr(b, "scrollable", st & UI_SCROLLABLE ? "true" : "false");
    wb_attr(b, "selected", st & UI_SELECTED ? "true" : "false");
    wb_attr(b, "bounds", bounds);
    core_buf_puts(b, ">");
}

static int is_ref_kind(int kind)
{
    return kind >= 0 && (kinds[kind].kind & (K_CLICK | K_EDIT));
}

/* What shows of each node, asked of the page itself in one call per frame
 * (Runtime.callFunctionOn, the frame's nodes as arguments; s.k[i] says
 * what argument i + 1 is: 0 a node shown, 1 a ref, 2 an <iframe>). A
 * node's boxes are its client rects (a line box each, for an inline
 * element that wraps; a text node's through a Range), in the frame's
 * layout viewport; each is clipped to the visual viewport (s.h: to as
 * much of its height as the WebView's box on the screen shows, s.h being
 * that box's height over its width; s.o: to what shows of the frame in
 * its parent) and to every ancestor that clips its overflow (ancestors
 * that are not its containing block skipped, as for position: absolute
 * and fixed). A node outside the page's modal (a top-layer :modal element,
 * or an aria-modal dialog that is visible and in the viewport, s.h not
 * applied; the last one) does not show.
 * A ref shows where the page's own hit test (elementFromPoint, in the
 * node's tree scope) lands on it or inside it: the centre of its largest
 * part if it does, else the largest block of a grid over each part that
 * does (its centre checked again, else one cell of it); no point hit: the
 * ref does not show. An <iframe> gives what shows of its content box and
 * that box. A clipping ancestor's box and an <iframe>'s content box are
 * scaled as the element's transform scales its border box (S: its client
 * rect over its offset size; a rotation is taken as its bounding box).
 * The last answer is the frame's viewport: x, y, width, height,
 * and its CSS px in its parent's. Written with single quotes only, so it
 * goes into JSON as it is. */
static const char check_js[] =
    "function(s){"
    "var A=arguments,d=document,de=d.documentElement,v=window.visualViewport,mx=Math.max,"
    "mn=Math.min,W=[v.offsetLeft,v.offsetTop,v.offsetLeft+v.width,v.offsetTop+v.height],o=[],"
    "M=null,q,i,f=1,C=[new Map,new Map],bs=getComputedStyle(de),"
    "bp=bs.overflowX==='visible'&&bs.overflowY==='visible';"
    "function X(a,b){return[mx(a[0],b[0]),mx(a[1],b[1]),mn(a[2],b[2]),mn(a[3],b[3])]}"
    "function Z(r){return!(r[2]-r[0]>=.5&&r[3]-r[1]>=.5)}"
    "function S(e,b){return[e.offsetWidth?b.width/e.offsetWidth:1,"
    "e.offsetHeight?b.height/e.offsetHeight:1]}"
    "function P(n){var p=n.assignedSlot||n.parentNode;return p&&p.nodeType===11?p.host:p}"
    "function K(a,m){"
    "if(m===2||!a||a.nodeType!==1||a===de)return W;"
    "var c=C[m].get(a);if(c)return c;"
    "var t=getComputedStyle(a),p=t.position;"
    "if(m===1&&p==='static')c=K(P(a),1);"
    "else{c=K(P(a),p==='fixed'?2:p==='absolute'?1:0);"
    "var x=t.overflowX!=='visible',y=t.overflowY!=='visible',k=/paint|strict|content/.test(t.contain);"
    "if((x||y||k)&&t.display!=='contents'&&!(a===d.body&&bp)){"
    "var b=a.getBoundingClientRect(),g=S(a,b),l=b.left+a.clientLeft*g[0],u=b.top+a.clientTop*g[1];"
    "if(x||k)c=[mx(c[0],l),c[1],mn(c[2],l+a.clientWidth*g[0]),c[3]];"
    "if(y||k)c=[c[0],mx(c[1],u),c[2],mn(c[3],u+a.clientHeight*g[1])];}}"
    "C[m].set(a,c);return c}"
    "function R(n){var r,g,z=[];if(n.nodeType===3){g=d.createRange();g.selectNodeContents(n);"
    "r=g.getClientRects()}else r=n.getClientRects();"
    "for(var i=0;i<r.length;i++)if(r[i].width>0&&r[i].height>0)"
    "z.push([r[i].left,r[i].top,r[i].right,r[i].bottom]);return z}"
    "function H(n,x,y){var r=n.getRootNode(),h=(r.elementFromPoint?r:d).elementFromPoint(x,y);"
    "for(;h;h=h.parentNode||h.host)if(h===n)return 1;return 0}"
    "function G(n,r){"
    "var w=r[2]-r[0],h=r[3]-r[1],nx=mn(6,mx(1,Math.ceil(w/12))),ny=mn(6,mx(1,Math.ceil(h/12))),"
    "cw=w/nx,ch=h/ny,g=[],b=null,ba=0,x,y,x2,y2,ok,a,xx,yy;"
    "for(y=0;y<ny;y++)for(x=0;x<nx;x++)g[y*nx+x]=H(n,r[0]+(x+.5)*cw,r[1]+(y+.5)*ch);"
    "for(y=0;y<ny;y++)for(x=0;x<nx;x++)for(y2=y;y2<ny;y2++)for(x2=x;x2<nx;x2++){"
    "a=(x2-x+1)*(y2-y+1);if(a<=ba)continue;ok=1;"
    "for(yy=y;yy<=y2&&ok;yy++)for(xx=x;xx<=x2&&ok;xx++)ok=g[yy*nx+xx];"
    "if(ok){ba=a;b=[x,y,x2,y2]}}"
    "if(!b)return null;"
    "var q=[r[0]+b[0]*cw,r[1]+b[1]*ch,r[0]+(b[2]+1)*cw,r[1]+(b[3]+1)*ch];"
    "if(H(n,(q[0]+q[2])/2,(q[1]+q[3])/2))return q;"
    "x=b[0]+(b[2]-b[0]>>1);y=b[1]+(b[3]-b[1]>>1);"
    "return[r[0]+x*cw,r[1]+y*ch,r[0]+(x+1)*cw,r[1]+(y+1)*ch]}"
    "if(s.o){f=s.o[2]/v.width;"
    "W=X(W,[(s.o[4]-s.o[0])/f,(s.o[5]-s.o[1])/f,(s.o[6]-s.o[0])/f,(s.o[7]-s.o[1])/f])}"
    "try{q=d.querySelectorAll(':modal,[aria-modal=true]')}"
    "catch(e){q=d.querySelectorAll('[aria-modal=true]')}"
    "for(i=0;i<q.length;i++){var m=q[i],t=0;try{t=m.matches(':modal')}catch(e){}"
    "if((t||m.localName==='dialog'||/^(alert)?dialog$/.test(m.getAttribute('role')))&&"
    "getComputedStyle(m).visibility==='visible'){var mb=m.getBoundingClientRect();"
    "if(!Z(X([mb.left,mb.top,mb.right,mb.bottom],W)))M=m}}"
    "if(s.h>0)W[3]=mn(W[3],W[1]+v.width*s.h);"
    "for(i=1;i<A.length;i++){"
    "var n=A[i],k=s.k[i-1],z=0,e=n.nodeType===1?n:n.parentNode,j,c,r,u,vs=[],ps;"
    "if(!e||e.nodeType!==1){o.push(0);continue}"
    "if(M){for(u=e;u&&u!==M;u=u.parentNode||u.host);if(!u){o.push(0);continue}}"
    "r=R(n);for(j=0;j<r.length&&Z(X(r[j],W));j++);if(j===r.length){o.push(0);continue}"
    "ps=n===e?getComputedStyle(n).position:'';"
    "c=n===e?K(P(n),ps==='fixed'?2:ps==='absolute'?1:0):K(e,0);"
    "if(k===2){var b=n.getBoundingClientRect(),st=getComputedStyle(n),g=S(n,b),"
    "pl=parseFloat(st.paddingLeft),pt=parseFloat(st.paddingTop),"
    "ox=b.left+(n.clientLeft+pl)*g[0],oy=b.top+(n.clientTop+pt)*g[1],"
    "fw=(n.clientWidth-pl-parseFloat(st.paddingRight))*g[0],"
    "fh=(n.clientHeight-pt-parseFloat(st.paddingBottom))*g[1];"
    "u=X([ox,oy,ox+fw,oy+fh],c);o.push(Z(u)?0:u.concat([ox,oy,fw,fh]));continue}"
    "for(j=0;j<r.length;j++){u=X(r[j],c);if(!Z(u))vs.push(u)}"
    "if(!vs.length){o.push(0);continue}"
    "if(k===1){vs.sort(function(a,b){return(b[2]-b[0])*(b[3]-b[1])-(a[2]-a[0])*(a[3]-a[1])});"
    "for(j=0;j<vs.length&&!z;j++)if(H(n,(vs[j][0]+vs[j][2])/2,(vs[j][1]+vs[j][3])/2))z=vs[j];"
    "for(j=0;j<vs.length&&!z;j++)z=G(n,vs[j]);"
    "o.push(z||0);continue}"
    "z=vs[0];for(j=1;j<vs.length;j++)"
    "z=[mn(z[0],vs[j][0]),mn(z[1],vs[j][1]),mx(z[2],vs[j][2]),mx(z[3],vs[j][3])];"
    "o.push(z)}"
    "o.push([v.offsetLeft,v.offsetTop,v.width,v.height,f]);return o}";

/* A ref inside an iframe shows only if its <iframe> is what the parent's
 * hit test finds at the point too: s is [argument, x, y] per point. */
static const char owner_js[] =
    "function(s){var A=arguments,o=[],i,h,n,r;for(i=0;i<s.length;i++){n=A[1+s[i][0]];"
    "r=n.getRootNode();h=(r.elementFromPoint?r:document).elementFromPoint(s[i][1],s[i][2]);"
    "for(;h&&h!==n;h=h.parentNode||h.host);o.push(h?1:0)}return o}";

/* The value array of a Runtime.callFunctionOn reply, in j; -1 and an error
 * when the call threw. */
static int call_value(jread *j, const char *reply)
{
    int rc = jread_parse(j, reply, strlen(reply));
    if (rc < 0)
        return rc;
    int ex = jread_get(j, 0, "exceptionDetails");
    int val = jread_get(j, jread_get(j, 0, "result"), "value");
    if (ex >= 0 || !jread_is(j, val, JR_ARR)) {
        char *text = NULL;
        jread_str(j, jread_get(j, jread_get(j, ex, "exception"), "description"), &text);
        rc = core_fail(ADBC_EREMOTE, "DevTools: the page's layout check failed: %.120s",
                       text ? text : "no answer");
        core_free(text);
        jread_free(j);
        return rc;
    }
    return val;
}

/* Send the check of frame fi: its nodes that have objects, the first one's
 * object the call's target. v: the WebView the page is in, whose box on
 * the screen may show less of the page's viewport than it has (a WebView
 * in a native scroll view pushed part off the screen): what shows of the
 * main frame stops where the box does. */
static int send_check(adbc_cdp *cdp, wpage *pg, int fi, const wview *v, int64_t deadline)
{
    wframe *f = &pg->f[fi];
    core_buf p = {0}, k = {0};
    const char *target = NULL;
    int args = 0;
    core_buf_puts(&p, "{\"functionDeclaration\":\"");
    core_buf_puts(&p, check_js);
    core_buf_puts(&p, "\",\"returnByValue\":true,\"objectId\":\"");
    for (int i = f->base; i < f->base + f->n; i++)
        if (pg->a[i].obj) {
            target = pg->a[i].obj;
            break;
        }
    if (!target) {
        core_buf_free(&p);
        return 0;
    }
    core_buf_puts(&p, target);
    core_buf_puts(&p, "\",\"arguments\":[{\"value\":{");
    if (fi == 0 && v->x2 > v->x1 && v->y2 > v->y1)
        core_buf_printf(&p, "\"h\":%.6f,", (double)(v->y2 - v->y1) / (v->x2 - v->x1));
    if (f->owner_node >= 0) {
        const axn *o = &pg->a[f->owner_node];
        core_buf_printf(&p, "\"o\":[%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f],", o->fr[0], o->fr[1],
                        o->fr[2], o->fr[3], o->r[0], o->r[1], o->r[2], o->r[3]);
    }
    core_buf_puts(&k, "\"k\":[");
    core_buf q = {0};
    for (int i = f->base; i < f->base + f->n; i++) {
        const axn *x = &pg->a[i];
        if (!x->obj)
            continue;
        core_buf_printf(&k, "%s%d", args ? "," : "", x->iframe ? 2 : is_ref_kind(x->kind) ? 1 : 0);
        core_buf_printf(&q, ",{\"objectId\":\"%s\"}", x->obj);
        args++;
    }
    core_buf_puts(&k, "]");
    core_buf_add(&p, k.p, k.len);
    core_buf_puts(&p, "}}");
    core_buf_add(&p, q.p, q.len);
    core_buf_puts(&p, "]}");
    core_buf_free(&k);
    core_buf_free(&q);
    char *params;
    size_t len;
    if (core_buf_take(&p, &params, &len) < 0)
        return core_fail(ADBC_ENOMEM, "out of memory for a page's layout check");
    f->call = adbc_cdp_send(cdp, "Runtime.callFunctionOn", params, core_remaining(deadline));
    core_free(params);
    return f->call < 0 ? f->call : 0;
}

/* The answer to frame fi's check, into its nodes and its record. */
static int recv_check(adbc_cdp *cdp, wpage *pg, int fi, int64_t deadline)
{
    wframe *f = &pg->f[fi];
    if (f->call <= 0)
        return 0;
    char *reply = NULL;
    int rc = adbc_cdp_wait(&reply, NULL, cdp, f->call, core_remaining(deadline));
    f->call = 0;
    if (rc < 0)
        return rc;
    jread j; /* its tokens point into reply */
    int val = call_value(&j, reply);
    if (val < 0) {
        core_free(reply);
        return val;
    }
    int e = jread_first(&j, val);
    for (int i = f->base; i < f->base + f->n && e >= 0; i++) {
        axn *x = &pg->a[i];
        if (!x->obj)
            continue;
        double r[8];
        int k = 0;
        if (jread_is(&j, e, JR_ARR))
            for (int t = jread_first(&j, e); t >= 0 && k < 8; t = jread_next(&j, e, t))
                r[k++] = jread_num(&j, t, 0);
        if (k == (x->iframe ? 8 : 4)) {
            memcpy(x->r, r, sizeof x->r);
            if (x->iframe)
                memcpy(x->fr, r + 4, sizeof x->fr);
            x->got = 1;
        }
        e = jread_next(&j, val, e);
    }
    int k = 0;
    if (e >= 0 && jread_is(&j, e, JR_ARR))
        for (int t = jread_first(&j, e); t >= 0 && k < 5; t = jread_next(&j, e, t))
            f->view[k++] = jread_num(&j, t, 0);
    jread_free(&j);
    core_free(reply);
    if (k != 5 || !(f->view[2] > 0) || !(f->view[4] > 0))
        return core_fail(ADBC_EPROTO, "DevTools: the page's layout check gave no viewport");
    f->shown = 1;
    return 0;
}

/* A point of a ref inside an iframe, to be found on its <iframe> in the
 * parent frame. */
typedef struct wpoint {
    int node;   /* the ref */
    int owner;  /* the <iframe>'s node */
    double x, y;
} wpoint;

/* Each ref inside iframes keeps its box only where every <iframe> around
 * it is what its parent's hit test finds at the box's centre (one call per
 * parent frame, all sent before the first answer is read). */
static int check_owners(adbc_cdp *cdp, wpage *pg, int64_t deadline)
{
    int np = 0, cap = 0, rc = 0;
    wpoint *pts = NULL;
    for (int i = 0; i < pg->n && rc == 0; i++) {
        axn *x = &pg->a[i];
        if (!x->got || x->iframe || !is_ref_kind(x->kind) || x->frame == 0)
            continue;
        double px = (x->r[0] + x->r[2]) / 2, py = (x->r[1] + x->r[3]) / 2;
        for (int f = x->frame; f > 0 && pg->f[f].owner_node >= 0; f = pg->f[f].parent) {
            const axn *o = &pg->a[pg->f[f].owner_node];
            px = o->fr[0] + px * pg->f[f].view[4];
            py = o->fr[1] + py * pg->f[f].view[4];
            if (np == cap) {
                cap = cap ? cap * 2 : 64;
                wpoint *n = core_realloc(pts, (size_t)cap * sizeof *n);
                if (!n) {
                    rc = core_fail(ADBC_ENOMEM, "out of memory");
                    break;
                }
                pts = n;
            }
            pts[np++] = (wpoint){i, pg->f[f].owner_node, px, py};
        }
    }
    int ids[WEB_MAX_FRAMES] = {0};
    for (int f = 0; f < pg->nf && rc == 0; f++) {
        /* The points whose <iframe> is in frame f; arguments: the
         * <iframe>s of f, in node order. */
        core_buf p = {0}, s = {0}, args = {0};
        int n = 0, narg = 0;
        const char *target = NULL;
        for (int i = pg->f[f].base; i < pg->f[f].base + pg->f[f].n; i++) {
            const axn *o = &pg->a[i];
            if (!o->iframe || !o->obj || o->child < 0)
                continue;
            int used = 0;
            for (int k = 0; k < np; k++)
                if (pts[k].owner == i) {
                    core_buf_printf(&s, "%s[%d,%.3f,%.3f]", n ? "," : "", narg, pts[k].x, pts[k].y);
                    n++;
                    used = 1;
                }
            if (used) {
                core_buf_printf(&args, ",{\"objectId\":\"%s\"}", o->obj);
                target = target ? target : o->obj;
                narg++;
            }
        }
        if (n > 0) {
            core_buf_printf(&p, "{\"functionDeclaration\":\"%s\",\"returnByValue\":true,"
                            "\"objectId\":\"%s\",\"arguments\":[{\"value\":[", owner_js, target);
            core_buf_add(&p, s.p, s.len);
            core_buf_puts(&p, "]}");
            core_buf_add(&p, args.p, args.len);
            core_buf_puts(&p, "]}");
            char *params;
            size_t len;
            if (core_buf_take(&p, &params, &len) < 0) {
                rc = core_fail(ADBC_ENOMEM, "out of memory");
            } else {
                ids[f] = adbc_cdp_send(cdp, "Runtime.callFunctionOn", params,
                                       core_remaining(deadline));
                core_free(params);
                if (ids[f] < 0)
                    rc = ids[f];
            }
        }
        core_buf_free(&p);
        core_buf_free(&s);
        core_buf_free(&args);
    }
    for (int f = 0; f < pg->nf && rc == 0; f++) {
        if (ids[f] <= 0)
            continue;
        char *reply = NULL;
        rc = adbc_cdp_wait(&reply, NULL, cdp, ids[f], core_remaining(deadline));
        if (rc < 0)
            break;
        jread j; /* its tokens point into reply */
        int val = call_value(&j, reply);
        if (val < 0) {
            core_free(reply);
            rc = val;
            break;
        }
        /* The answers come in the order the points were written: by
         * <iframe>, then by point. */
        int e = jread_first(&j, val);
        for (int i = pg->f[f].base; i < pg->f[f].base + pg->f[f].n; i++)
            for (int k = 0; k < np && pg->a[i].iframe && pg->a[i].obj && pg->a[i].child >= 0; k++)
                if (pts[k].owner == i) {
                    if (e < 0 || jread_num(&j, e, 0) != 1)
                        pg->a[pts[k].node].got = 0; /* covered in the parent */
                    if (e >= 0)
                        e = jread_next(&j, val, e);
                }
        jread_free(&j);
        core_free(reply);
    }
    core_free(pts);
    return rc;
}

/* A frame's id as a JSON string's contents: ids are hex, anything else is
 * left out. */
static int id_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 100)
        return 0;
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
            return 0;
    return 1;
}

/* ---- a page's DevTools session, kept with the connection ------------------ */

/* One WebView's page: its session, and what its last read found, so a page
 * that did not change is not asked for its tree again (docs/webview.md,
 * "A warm session"). */
typedef struct wsess {
    char *key;         /* "package@x,y" of its WebView; NULL: the slot is free */
    char *sock, *pageid;
    adbc_cdp *cdp;
    int reads;         /* reads of the page on this session */
    int tracking;      /* DOM.getDocument sent: the page reports its DOM's changes */
    unsigned long ev;  /* the session's events before that DOM.getDocument */
    char *frames;      /* the frame tree (Page.getFrameTree) the tree was read with */
    char *print;       /* the page's fingerprint then (print_js) */
    int have;          /* pg and ord hold that read's tree */
    wpage pg;
    int *ord, nord;
    int stale;         /* objects of nodes no longer read, still in the "adbc" group */
    int busy;          /* the page changes all the time: not followed (WEB_BUSY_*) */
    int64_t ev_at;     /* when ev was taken (monotonic ms) */
    uint64_t used;     /* when last used (wkeep.clock) */
} wsess;

/* The sessions of one connection (conn_keep): one thread at a time. */
typedef struct wkeep {
    pthread_mutex_t mu;
    wsess s[WEB_MAX_VIEWS];
    uint64_t clock;
} wkeep;

/* Objects of gone nodes held past this many: the group is released and
 * every object asked again. */
#define WEB_MAX_STALE 2000

/* A page that sent more than WEB_BUSY_EVENTS DOM events since its last
 * read, at more than WEB_BUSY_RATE a second, changes all the time: its
 * session stops following its DOM (DOM.disable), so the events do not
 * pile up in the app between snapshots, and reads it whole each time. */
#define WEB_BUSY_EVENTS 200
#define WEB_BUSY_RATE 50

/* End the session (the key stays): its next read starts cold. */
static void sess_close(wsess *ws)
{
    adbc_cdp_close(ws->cdp);
    ws->cdp = NULL;
    core_free(ws->sock);
    core_free(ws->pageid);
    core_free(ws->frames);
    core_free(ws->print);
    core_free(ws->ord);
    ws->sock = ws->pageid = ws->frames = ws->print = NULL;
    ws->ord = NULL;
    ws->nord = 0;
    if (ws->have)
        page_free(&ws->pg);
    memset(&ws->pg, 0, sizeof ws->pg);
    ws->have = ws->tracking = ws->reads = ws->stale = ws->busy = 0;
    ws->ev_at = 0;
    ws->ev = 0;
}

static void sess_free(wsess *ws)
{
    sess_close(ws);
    core_free(ws->key);
    ws->key = NULL;
}

static void keep_end(void *p)
{
    wkeep *k = p;
    for (int i = 0; i < WEB_MAX_VIEWS; i++)
        sess_free(&k->s[i]);
    pthread_mutex_destroy(&k->mu);
    core_free(k);
}

/* The connection's sessions, locked; NULL when another thread reads pages
 * on it now (this read then opens sessions of its own) or memory ran out. */
static wkeep *keep_take(adbc_conn *c)
{
    wkeep *k = conn_kept(c, CONN_KEPT_WEB);
    if (!k) {
        wkeep *n = core_calloc(1, sizeof *n);
        if (!n || pthread_mutex_init(&n->mu, NULL) != 0) {
            core_free(n);
            return NULL;
        }
        k = conn_keep(c, CONN_KEPT_WEB, n, keep_end);
        if (k != n)
            keep_end(n);
    }
    if (k && pthread_mutex_trylock(&k->mu) != 0)
        return NULL;
    return k;
}

/* The session of the WebView key: its own, else a free slot, else the one
 * used longest ago. */
static wsess *keep_sess(wkeep *k, const char *key)
{
    wsess *free_slot = NULL, *old = NULL;
    for (int i = 0; i < WEB_MAX_VIEWS; i++) {
        wsess *ws = &k->s[i];
        if (ws->key && strcmp(ws->key, key) == 0) {
            ws->used = ++k->clock;
            return ws;
        }
        if (!ws->key && !free_slot)
            free_slot = ws;
        if (!old || ws->used < old->used)
            old = ws;
    }
    wsess *ws = free_slot ? free_slot : old;
    sess_free(ws);
    if (!(ws->key = core_strdup(key)))
        return NULL;
    ws->used = ++k->clock;
    return ws;
}

int ui_web_on_page(adbc_conn *c, const char *sock, const char *pageid,
                   int (*fn)(adbc_cdp *cdp, void *user), void *user)
{
    if (!c || !sock || !pageid || !fn)
        return core_fail(ADBC_EINVAL, "ui_web_on_page: c, sock, pageid and fn must not be NULL");
    if (!conn_kept(c, CONN_KEPT_WEB))
        return 1; /* no page was read on this connection: nothing to lend */
    wkeep *k = keep_take(c);
    if (!k)
        return 1;
    int rc = 1;
    for (int i = 0; i < WEB_MAX_VIEWS; i++) {
        wsess *ws = &k->s[i];
        if (!ws->key || !ws->cdp || !ws->sock || !ws->pageid || strcmp(ws->sock, sock) != 0 ||
            strcmp(ws->pageid, pageid) != 0)
            continue;
        ws->used = ++k->clock;
        rc = fn(ws->cdp, user);
        if (rc < 0 && rc != ADBC_EREMOTE)
            sess_close(ws);
        else
            ws->stale++; /* what fn asked for, held in the group */
        break;
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

/* What of a page its DOM events do not report: the focused element (down
 * through shadow roots and same-process frames), the hovered one, form
 * controls' checked, selected and value, the number of style rules, a
 * running animation (then it differs every time), the viewport's size.
 * Hashed: the page's text never leaves it. Single quotes only. */
static const char print_js[] =
    "(function(){var I=Array.prototype.indexOf,s='',h=0,i;function P(x){s+='|'+x}"
    "function F(d){var E=d.getElementsByTagName('*'),a=d.activeElement,q,e,i,n=0;"
    "P(I.call(E,a));"
    "for(e=a;e&&e.shadowRoot&&e.shadowRoot.activeElement;e=e.shadowRoot.activeElement)"
    "P(e.shadowRoot.activeElement.localName);"
    "q=d.querySelectorAll(':hover');P(q.length?I.call(E,q[q.length-1]):-1);"
    "q=d.querySelectorAll('input,select,textarea,option');"
    "for(i=0;i<q.length;i++){e=q[i];P((e.checked?1:0)+(e.indeterminate?2:0)+(e.selected?4:0)+"
    "(e.selectedIndex>=0?8*e.selectedIndex:0)+':'+e.value)}"
    "for(i=0;i<d.styleSheets.length;i++)try{n+=d.styleSheets[i].cssRules.length}catch(x){}"
    "P(n);try{if(d.getAnimations().some(function(a){return a.playState==='running'}))"
    "P(performance.now())}catch(x){}"
    "q=d.querySelectorAll('iframe,frame');"
    "for(i=0;i<q.length;i++)try{if(q[i].contentDocument)F(q[i].contentDocument)}catch(x){}}"
    "F(document);P(innerWidth+'x'+innerHeight+'x'+devicePixelRatio);"
    "for(i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))|0;return h+'/'+s.length})()";

/* Ask the page for its viewport and frames, and (idp not NULL) for what
 * says whether it changed. */
static int ask_state(adbc_cdp *cdp, int *idm, int *idf, int *idp, int64_t deadline)
{
    *idm = adbc_cdp_send(cdp, "Page.getLayoutMetrics", NULL, core_remaining(deadline));
    if (*idm < 0)
        return *idm;
    *idf = adbc_cdp_send(cdp, "Page.getFrameTree", NULL, core_remaining(deadline));
    if (*idf < 0 || !idp)
        return *idf < 0 ? *idf : 0;
    char params[sizeof print_js + 64];
    snprintf(params, sizeof params, "{\"expression\":\"%s\",\"returnByValue\":true}", print_js);
    *idp = adbc_cdp_send(cdp, "Runtime.evaluate", params, core_remaining(deadline));
    return *idp < 0 ? *idp : 0;
}

/* Two texts, either NULL, the same. */
static int same_text(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

/* The backend node id's slot in an open-addressed table of cap (a power of
 * two) node indices. */
static uint32_t backend_slot(long backend, uint32_t cap)
{
    return (uint32_t)((unsigned long)backend * 2654435761u) & (cap - 1);
}

/* The page's tree read again into pg (frames: the frame tree just asked
 * for, parsed in jf): the accessibility tree of each frame of this process,
 * each node placed, the objects of the nodes that need one: those ws holds
 * (pg's nodes of the same document) moved over, the others asked for. */
static int read_tree(wpage *pg, int **order, int *nord, wsess *ws, const char *frames,
                     jread *jf, int sent, int64_t deadline)
{
    adbc_cdp *cdp = ws->cdp;
    int rc = 0, ide = 0, idd = 0, *ids = NULL;
    pg->nf = 1;
    pg->f[0].parent = -1;
    pg->f[0].owner_node = -1;
    /* From its second read on, the session follows the page's DOM: a page
     * that sends no change is not read again. */
    if (ws->reads >= 1 && !ws->busy) {
        if (!ws->tracking && (ide = adbc_cdp_send(cdp, "DOM.enable", NULL,
                                                  core_remaining(deadline))) < 0)
            return ide;
        ws->ev = cdp_events(cdp);
        ws->ev_at = core_now_ms();
        idd = adbc_cdp_send(cdp, "DOM.getDocument", "{\"depth\":-1,\"pierce\":true}",
                            core_remaining(deadline));
        if (idd < 0)
            return idd;
        ws->tracking = 1;
    }
    pg->f[0].tid = sent > 0 ? sent
                            : adbc_cdp_send(cdp, "Accessibility.getFullAXTree", NULL,
                                            core_remaining(deadline));
    if (pg->f[0].tid < 0)
        return pg->f[0].tid;
    /* The frames of this process, breadth first; each one's tree and
     * <iframe> asked for while the page's own tree is built. */
    int tok[WEB_MAX_FRAMES];
    tok[0] = jread_get(jf, 0, "frameTree");
    for (int q = 0; q < pg->nf; q++) {
        int kids = jread_get(jf, tok[q], "childFrames");
        for (int e = jread_first(jf, kids); e >= 0 && pg->nf < WEB_MAX_FRAMES;
             e = jread_next(jf, kids, e)) {
            wframe *nf = &pg->f[pg->nf];
            char *id = NULL;
            if (jread_str(jf, jread_get(jf, jread_get(jf, e, "frame"), "id"), &id) < 0 ||
                !id_ok(id)) {
                core_free(id);
                continue;
            }
            nf->id = id;
            nf->parent = q;
            nf->depth = pg->f[q].depth + 1;
            nf->owner_node = -1;
            tok[pg->nf++] = e;
        }
    }
    for (int f = 1; f < pg->nf && rc == 0; f++) {
        char params[160];
        snprintf(params, sizeof params, "{\"frameId\":\"%s\"}", pg->f[f].id);
        pg->f[f].tid = adbc_cdp_send(cdp, "Accessibility.getFullAXTree", params,
                                     core_remaining(deadline));
        pg->f[f].oid = pg->f[f].tid < 0 ? pg->f[f].tid
                                        : adbc_cdp_send(cdp, "DOM.getFrameOwner", params,
                                                        core_remaining(deadline));
        if (pg->f[f].oid < 0)
            rc = pg->f[f].oid;
    }
    if (rc == 0 && ide > 0)
        rc = adbc_cdp_wait(NULL, NULL, cdp, ide, core_remaining(deadline));
    if (rc == 0 && idd > 0)
        rc = adbc_cdp_wait(NULL, NULL, cdp, idd, core_remaining(deadline));
    for (int f = 0; f < pg->nf && rc == 0; f++) {
        wframe *fr = &pg->f[f];
        int wr = adbc_cdp_wait(&fr->tree, NULL, cdp, fr->tid, core_remaining(deadline));
        char *owner = NULL;
        if (wr == 0 && f > 0)
            wr = adbc_cdp_wait(&owner, NULL, cdp, fr->oid, core_remaining(deadline));
        else if (f > 0 && wr == ADBC_EREMOTE)
            adbc_cdp_wait(NULL, NULL, cdp, fr->oid, core_remaining(deadline));
        if (wr == 0 && owner) {
            jread jo;
            if (jread_parse(&jo, owner, strlen(owner)) == 0) {
                fr->owner = (long)jread_num(&jo, jread_get(&jo, 0, "backendNodeId"), 0);
                jread_free(&jo);
            }
        }
        core_free(owner);
        if (wr == 0)
            wr = jread_parse(&fr->j, fr->tree, strlen(fr->tree));
        if (wr == 0) {
            fr->parsed = 1;
        } else if (wr == ADBC_EREMOTE && f > 0) {
            snprintf(fr->err, sizeof fr->err, "frame not read: %s", adbc_last_error());
        } else {
            rc = wr;
        }
    }
    for (int f = 0; f < pg->nf && rc == 0; f++)
        if (pg->f[f].parsed)
            rc = ax_add(pg, f);
    /* The trees' text is not needed past here: the nodes hold copies. */
    for (int f = 0; f < pg->nf; f++) {
        jread_free(&pg->f[f].j);
        memset(&pg->f[f].j, 0, sizeof pg->f[f].j);
        core_free(pg->f[f].tree);
        pg->f[f].tree = NULL;
    }
    /* Each frame where its <iframe> is. */
    for (int f = 1; f < pg->nf && rc == 0; f++) {
        wframe *fr = &pg->f[f], *pf = &pg->f[fr->parent];
        for (int i = pf->base; fr->owner > 0 && i < pf->base + pf->n; i++)
            if (pg->a[i].iframe && pg->a[i].backend == fr->owner && pg->a[i].child < 0) {
                pg->a[i].child = f;
                fr->owner_node = i;
                break;
            }
    }
    int *ord = NULL, no = 0;
    if (rc == 0)
        rc = ax_order(&ord, &no, pg);
    int n = pg->n;
    axn *a = pg->a;
    if (rc == 0 && n > 0 && !(ids = core_calloc((size_t)n, sizeof *ids)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    /* The objects the session holds for the same document go over to the
     * nodes that are still there (backend node ids are the renderer's, for
     * the life of the node); a new document, or too many held for nodes
     * gone, and the group is released and every object asked again. */
    if (rc == 0 && ws->have) {
        int same = ws->frames && same_text(ws->frames, frames) && ws->stale < WEB_MAX_STALE;
        wpage *op = &ws->pg;
        uint32_t cap = 1;
        while (cap < (uint32_t)op->n * 2 + 2)
            cap <<= 1;
        int *tab = same ? core_malloc(cap * sizeof *tab) : NULL;
        if (same && !tab)
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        for (uint32_t i = 0; tab && i < cap; i++)
            tab[i] = -1;
        for (int i = 0; tab && i < op->n; i++)
            if (op->a[i].obj && op->a[i].backend > 0) {
                uint32_t h = backend_slot(op->a[i].backend, cap);
                while (tab[h] >= 0)
                    h = (h + 1) & (cap - 1);
                tab[h] = i;
            }
        for (int i = 0; tab && i < n; i++) {
            if (a[i].backend <= 0)
                continue;
            for (uint32_t h = backend_slot(a[i].backend, cap); tab[h] >= 0; h = (h + 1) & (cap - 1)) {
                axn *o = &op->a[tab[h]];
                if (o->backend == a[i].backend && o->obj) {
                    a[i].obj = o->obj;
                    o->obj = NULL;
                    break;
                }
            }
        }
        core_free(tab);
        int left = 0;
        for (int i = 0; i < op->n; i++)
            left += op->a[i].obj != NULL;
        if (rc == 0 && !same && (ws->stale || left)) {
            rc = adbc_cdp_call(NULL, NULL, cdp, "Runtime.releaseObjectGroup",
                               "{\"objectGroup\":\"" UI_WEB_GROUP "\"}", core_remaining(deadline));
            ws->stale = 0;
        } else {
            ws->stale += left;
        }
        page_free(op);
        memset(op, 0, sizeof *op);
        core_free(ws->ord);
        ws->ord = NULL;
        ws->nord = 0;
        ws->have = 0;
    }
    /* The objects still missing, of the kept nodes and the <iframe>s:
     * every request first, then every reply. */
    int kept = 0;
    for (int k = 0; rc == 0 && k < no; k++) {
        int i = ord[k];
        if ((a[i].kind < 0 && !a[i].iframe) || kept++ >= WEB_MAX_KEPT || a[i].obj)
            continue;
        char params[96];
        snprintf(params, sizeof params, "{\"backendNodeId\":%ld,\"objectGroup\":\"" UI_WEB_GROUP "\"}",
                 a[i].backend);
        ids[i] = adbc_cdp_send(cdp, "DOM.resolveNode", params, core_remaining(deadline));
        if (ids[i] < 0)
            rc = ids[i];
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        if (ids[i] <= 0)
            continue;
        char *res = NULL;
        int br = adbc_cdp_wait(&res, NULL, cdp, ids[i], core_remaining(deadline));
        if (br == ADBC_EREMOTE)
            continue; /* gone since the tree was read */
        if (br < 0) {
            rc = br;
            break;
        }
        jread jr;
        if (jread_parse(&jr, res, strlen(res)) == 0) {
            char *obj = NULL;
            if (jread_str(&jr, jread_get(&jr, jread_get(&jr, 0, "object"), "objectId"), &obj) == 0 &&
                id_ok(obj))
                a[i].obj = obj;
            else
                core_free(obj);
            jread_free(&jr);
        }
        core_free(res);
    }
    core_free(ids);
    if (rc < 0) {
        core_free(ord);
        return rc;
    }
    *order = ord;
    *nord = no;
    return 0;
}

/* What a read of a page left in its nodes and frames, cleared for the next
 * read of the same tree. */
static void page_unread(wpage *pg)
{
    for (int i = 0; i < pg->n; i++) {
        axn *x = &pg->a[i];
        x->got = x->boxed = 0;
        x->x1 = x->y1 = x->x2 = x->y2 = 0;
        memset(x->r, 0, sizeof x->r);
        memset(x->fr, 0, sizeof x->fr);
    }
    for (int f = 0; f < pg->nf; f++) {
        wframe *fr = &pg->f[f];
        fr->call = fr->shown = 0;
        fr->ox = fr->oy = fr->fs = 0;
        memset(fr->view, 0, sizeof fr->view);
        if (fr->check_err)
            fr->err[0] = 0;
        fr->check_err = 0;
    }
}

/* Read the page of view v from socket sock into v->frag, over ws's session
 * (opened when it has none, or its page is no longer the one shown). A
 * session kept from an earlier read asks first what says whether the page
 * changed; the tree is read again only when it did. */
static int read_page(wview *v, adbc_conn *c, const char *sock, wsess *ws, int64_t deadline)
{
    char *path = NULL, *pageid = NULL, *metrics = NULL, *frames = NULL, *print = NULL;
    jread jm = {0}, jf = {0};
    int rc = 0, idm = 0, idf = 0, idp = 0, *pos = NULL;
    if (ws->cdp && strcmp(ws->sock, sock) != 0)
        sess_close(ws);
    int warm = ws->cdp != NULL;
    /* A kept session is asked at once; the page list, read meanwhile, says
     * whether its page is still the one shown. */
    int early = 0;
    if (warm)
        rc = ask_state(ws->cdp, &idm, &idf, &idp, deadline);
    /* A page that follows its DOM has most likely not changed: what shows
     * of its main frame is asked at once too, and dropped if it did. */
    if (rc == 0 && warm && ws->have && ws->tracking) {
        page_unread(&ws->pg);
        rc = send_check(ws->cdp, &ws->pg, 0, v, deadline);
        early = ws->pg.f[0].call;
    }
    if (rc == 0)
        rc = pick_page(&path, &pageid, c, sock, v, deadline);
    if (rc == 0 && warm && strcmp(pageid, ws->pageid) != 0)
        sess_close(ws);
    /* A new session reads the tree: asked for at once. Its next read
     * reads it again anyway (and starts following the DOM), so the
     * fingerprint waits until then. */
    int sent = 0;
    if (rc == 0 && !ws->cdp) {
        rc = adbc_cdp_open(&ws->cdp, c, sock, path, core_remaining(deadline));
        if (rc == 0 && (!(ws->sock = core_strdup(sock)) || !(ws->pageid = core_strdup(pageid))))
            rc = core_fail(ADBC_ENOMEM, "out of memory");
        if (rc == 0)
            rc = ask_state(ws->cdp, &idm, &idf, NULL, deadline);
        if (rc == 0)
            rc = sent = adbc_cdp_send(ws->cdp, "Accessibility.getFullAXTree", NULL,
                                      core_remaining(deadline));
        if (rc > 0)
            rc = 0;
    }
    core_free(path);
    core_free(pageid);
    if (rc == 0)
        rc = adbc_cdp_wait(&metrics, NULL, ws->cdp, idm, core_remaining(deadline));
    if (rc == 0)
        rc = adbc_cdp_wait(&frames, NULL, ws->cdp, idf, core_remaining(deadline));
    if (rc == 0 && idp > 0)
        rc = adbc_cdp_wait(&print, NULL, ws->cdp, idp, core_remaining(deadline));
    if (rc == 0)
        rc = jread_parse(&jm, metrics, strlen(metrics));
    if (rc == 0)
        rc = jread_parse(&jf, frames, strlen(frames));
    double cw = 0, ch = 0, sw = 0, sh = 0;
    if (rc == 0) {
        int vv = jread_get(&jm, 0, "cssVisualViewport");
        if (vv < 0)
            vv = jread_get(&jm, 0, "visualViewport");
        if (num_of(&jm, vv, "clientWidth", &cw) < 0 || cw < 1 ||
            num_of(&jm, vv, "clientHeight", &ch) < 0 || ch < 1)
            rc = core_fail(ADBC_EPROTO, "Page.getLayoutMetrics gave no visual viewport");
        int cs = jread_get(&jm, 0, "cssContentSize");
        num_of(&jm, cs, "width", &sw);
        num_of(&jm, cs, "height", &sh);
    }
    /* The tree again, unless the page said nothing changed since it was
     * read: no DOM event since, the same frames, the same fingerprint. */
    if (rc == 0 && ws->tracking) {
        unsigned long since = cdp_events(ws->cdp) - ws->ev;
        int64_t ms = core_now_ms() - ws->ev_at;
        if (since > WEB_BUSY_EVENTS && (double)since * 1000 > (double)WEB_BUSY_RATE * (double)ms) {
            rc = adbc_cdp_call(NULL, NULL, ws->cdp, "DOM.disable", NULL, core_remaining(deadline));
            ws->tracking = 0;
            ws->busy = 1;
        }
    }
    int again = rc == 0 && (!ws->have || !ws->tracking || cdp_events(ws->cdp) != ws->ev ||
                            !same_text(ws->frames, frames) || !same_text(ws->print, print));
    if (rc == 0 && again) {
        wpage np;
        memset(&np, 0, sizeof np);
        int *ord = NULL, nord = 0;
        rc = read_tree(&np, &ord, &nord, ws, frames, &jf, sent, deadline);
        /* The early check was of the old tree: its answer goes. */
        if (rc == 0 && early > 0) {
            int er = adbc_cdp_wait(NULL, NULL, ws->cdp, early, core_remaining(deadline));
            if (er < 0 && er != ADBC_EREMOTE)
                rc = er;
        }
        if (rc < 0) {
            page_free(&np);
        } else {
            if (ws->have)
                page_free(&ws->pg);
            core_free(ws->ord);
            ws->pg = np;
            ws->ord = ord;
            ws->nord = nord;
            ws->have = 1;
            core_free(ws->frames);
            core_free(ws->print);
            ws->frames = frames;
            ws->print = print;
            frames = print = NULL;
        }
    } else if (rc == 0 && !early) {
        page_unread(&ws->pg);
    }
    adbc_cdp *cdp = ws->cdp;
    const char *pageid_s = ws->pageid;
    wpage *pg = &ws->pg;
    int *ord = ws->ord, nord = ws->nord;
    int n = pg->n;
    axn *a = pg->a;
    if (rc == 0 && n > 0 && !(pos = core_malloc((size_t)n * sizeof *pos)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++)
        pos[i] = -1;
    for (int k = 0; rc == 0 && k < nord; k++)
        pos[ord[k]] = k;
    /* What shows: the page's frame, then each level of iframes, whose
     * checks need what shows of their <iframe>s. One round trip a level. */
    int depth = 0;
    for (int d = 0; rc == 0 && d < WEB_MAX_FRAMES; d++) {
        int any = 0;
        for (int f = 0; f < pg->nf && rc == 0; f++) {
            wframe *fr = &pg->f[f];
            if (fr->depth != d || !fr->parsed)
                continue;
            if (f > 0 && (fr->owner_node < 0 || !a[fr->owner_node].got || !pg->f[fr->parent].shown))
                continue;
            if (fr->call <= 0) /* else sent early */
                rc = send_check(cdp, pg, f, v, deadline);
            any = 1;
        }
        for (int f = 0; f < pg->nf && rc == 0; f++) {
            int cr = recv_check(cdp, pg, f, deadline);
            if (cr == ADBC_EREMOTE && f > 0) {
                snprintf(pg->f[f].err, sizeof pg->f[f].err, "frame not read: %s", adbc_last_error());
                pg->f[f].check_err = 1;
            } else
                rc = cr;
        }
        if (!any)
            break;
        depth = d;
    }
    if (rc == 0 && depth > 0)
        rc = check_owners(cdp, pg, deadline);
    /* Frames into the page's CSS px, then into screen px: the visual
     * viewport's origin and width across the WebView. */
    pg->f[0].ox = pg->f[0].oy = 0;
    pg->f[0].fs = 1;
    for (int f = 1; f < pg->nf; f++) {
        wframe *fr = &pg->f[f], *pf = &pg->f[fr->parent];
        if (!fr->shown || fr->owner_node < 0)
            continue;
        const axn *o = &a[fr->owner_node];
        fr->ox = pf->ox + o->fr[0] * pf->fs;
        fr->oy = pf->oy + o->fr[1] * pf->fs;
        fr->fs = pf->fs * fr->view[4];
    }
    double vx = pg->f[0].view[0], vy = pg->f[0].view[1];
    double scale = pg->f[0].shown ? (v->x2 - v->x1) / pg->f[0].view[2] : 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        wframe *fr = &pg->f[a[i].frame];
        if (!a[i].got || !fr->shown)
            continue;
        double x1 = v->x1 + (fr->ox + a[i].r[0] * fr->fs - vx) * scale;
        double y1 = v->y1 + (fr->oy + a[i].r[1] * fr->fs - vy) * scale;
        double x2 = v->x1 + (fr->ox + a[i].r[2] * fr->fs - vx) * scale;
        double y2 = v->y1 + (fr->oy + a[i].r[3] * fr->fs - vy) * scale;
        /* Within the WebView: only what shows counts. */
        x1 = x1 < v->x1 ? v->x1 : x1;
        y1 = y1 < v->y1 ? v->y1 : y1;
        x2 = x2 > v->x2 ? v->x2 : x2;
        y2 = y2 > v->y2 ? v->y2 : y2;
        if (x2 - x1 >= 1 && y2 - y1 >= 1) {
            a[i].x1 = (int)(x1 + 0.5);
            a[i].y1 = (int)(y1 + 0.5);
            a[i].x2 = (int)(x2 + 0.5);
            a[i].y2 = (int)(y2 + 0.5);
            a[i].boxed = a[i].x2 > a[i].x1 && a[i].y2 > a[i].y1;
        }
    }
    /* Nest the nodes that show under their nearest shown ancestor. */
    int *stack = rc == 0 && n ? core_malloc((size_t)n * sizeof *stack) : NULL;
    if (rc == 0 && n && !stack)
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    int sp = 0;
    /* A page larger than its viewport is one scrollable element, the
     * document, over the whole WebView: its ref scrolls the page. */
    int scroll = rc == 0 && nord > 0 && (sh > ch + 1 || sw > cw + 1) && a[ord[0]].backend > 0;
    if (scroll) {
        int box[4] = {v->x1, v->y1, v->x2, v->y2};
        open_node(&v->frag, "web.ScrollView", "", "", sock, pageid_s, a[ord[0]].backend, v->pkg,
                  UI_SCROLLABLE | UI_ENABLED, box);
    }
    for (int k = 0; rc == 0 && k < nord; k++) {
        int i = ord[k];
        const char *note = NULL;
        if (a[i].iframe && a[i].boxed)
            note = a[i].child < 0 ? "frame not read: its page runs in another process (an "
                                    "iframe from another site)"
                   : pg->f[a[i].child].err[0] ? pg->f[a[i].child].err : NULL;
        if (!note && (a[i].kind < 0 || !a[i].boxed))
            continue;
        int p = a[i].kparent, steps = 0;
        while (p >= 0 && (a[p].kind < 0 || !a[p].boxed || pos[p] < 0 || pos[p] > k) &&
               steps++ < n)
            p = a[p].kparent;
        if (steps > n)
            p = -1;
        while (sp > 0 && stack[sp - 1] != p) {
            core_buf_puts(&v->frag, "</node>");
            sp--;
        }
        if (note) {
            char bounds[96];
            snprintf(bounds, sizeof bounds, "[%d,%d][%d,%d]", a[i].x1, a[i].y1, a[i].x2, a[i].y2);
            core_buf_puts(&v->frag, "<node");
            wb_attr(&v->frag, "class", "adbc.WebNote");
            wb_attr(&v->frag, "text", note);
            wb_attr(&v->frag, "package", v->pkg);
            wb_attr(&v->frag, "bounds", bounds);
            core_buf_puts(&v->frag, "/>");
            continue;
        }
        unsigned kd = kinds[a[i].kind].kind;
        unsigned st = a[i].st | (kd & (K_CLICK | K_EDIT) ? UI_CLICKABLE : 0);
        const char *text = kd & K_EDIT ? (a[i].value ? a[i].value : "")
                           : kd & K_DESC ? "" : (a[i].name ? a[i].name : "");
        const char *desc = kd & K_EDIT || kd & K_DESC ? (a[i].name ? a[i].name : "") : "";
        int box[4] = {a[i].x1, a[i].y1, a[i].x2, a[i].y2};
        open_node(&v->frag, kinds[a[i].kind].cls, text, desc, sock, pageid_s, a[i].backend,
                  v->pkg, st, box);
        stack[sp++] = i;
    }
    while (rc == 0 && sp-- > 0)
        core_buf_puts(&v->frag, "</node>");
    if (scroll)
        core_buf_puts(&v->frag, "</node>");
    if (rc == 0 && v->frag.err)
        rc = core_fail(ADBC_ENOMEM, "out of memory for a page's nodes");
    if (rc == 0 && !v->frag.p)
        core_buf_puts(&v->frag, ""); /* read, and nothing on it shows */
    /* The tree and its objects stay with the session, for its next read;
     * a session that failed is ended by the caller. */
    if (rc == 0)
        ws->reads++;
    core_free(stack);
    core_free(pos);
    jread_free(&jm);
    jread_free(&jf);
    core_free(metrics);
    core_free(frames);
    core_free(print);
    return rc;
}

/* ---- the splice ----------------------------------------------------------------- */

/* The '>' that ends the tag p is in (outside quoted values), or NULL. */
static const char *tag_close(const char *p, const char *end)
{
    int quote = 0;
    for (; p < end; p++) {
        if (*p == '"')
            quote = !quote;
        else if (*p == '>' && !quote)
            return p;
    }
    return NULL;
}

/* The byte range of the k-th <node element of raw: its start tag
 * [*tag, *tag_end) and, when not self-closing, the end of its </node>. */
static int find_node(const char *raw, size_t len, uint32_t k, size_t *tag, size_t *tag_end,
                     size_t *elem_end)
{
    uint32_t seen = 0;
    const char *p = raw, *end = raw + len;
    while ((p = memmem(p, (size_t)(end - p), "<node", 5)) != NULL) {
        if (p + 5 < end && (p[5] == ' ' || p[5] == '>' || p[5] == '/' || p[5] == '\n')) {
            if (seen++ == k)
                break;
        }
        p += 5;
    }
    if (!p)
        return -1;
    const char *q = tag_close(p + 5, end);
    if (!q)
        return -1;
    *tag = (size_t)(p - raw);
    *tag_end = (size_t)(q + 1 - raw);
    if (q[-1] == '/') {
        *elem_end = *tag_end;
        return 1; /* self-closing */
    }
    /* The matching </node>: count nested elements. */
    int depth = 1;
    const char *r = q + 1;
    while (r < end && depth > 0) {
        const char *lt = memchr(r, '<', (size_t)(end - r));
        if (!lt)
            return -1;
        if ((size_t)(end - lt) >= 7 && memcmp(lt, "</node>", 7) == 0) {
            depth--;
            r = lt + 7;
            continue;
        }
        if ((size_t)(end - lt) > 5 && memcmp(lt, "<node", 5) == 0) {
            const char *gt = tag_close(lt + 5, end);
            if (!gt)
                return -1;
            if (gt[-1] != '/')
                depth++;
            r = gt + 1;
            continue;
        }
        r = lt + 1;
    }
    if (depth)
        return -1;
    *elem_end = (size_t)(r - raw);
    return 0;
}

static int is_webview(const ui_doc *d, const ui_node *nd)
{
    const char *cls = ui_sp(d, nd->cls);
    return nd->cls.len >= 7 && memmem(cls, nd->cls.len, "WebView", 7) != NULL;
}

int ui_web_splice(char **out, size_t *out_len, const adbc_ui_snap *s, const char *raw,
                  size_t raw_len, adbc_conn *c, int budget_ms)
{
    *out = NULL;
    *out_len = 0;
    const ui_doc *d = &s->doc;
    wview *vs = NULL;
    size_t nv = 0;
    for (uint32_t i = 0; i < d->n && nv < WEB_MAX_VIEWS; i++) {
        const ui_node *nd = &d->nodes[i];
        if (!is_webview(d, nd) || nd->x2 <= nd->x1 || nd->y2 <= nd->y1)
            continue;
        int outer = 1; /* a WebView inside a WebView goes with the outer one */
        for (uint32_t p = nd->parent; p != UI_NONE && outer; p = d->nodes[p].parent)
            outer = !is_webview(d, &d->nodes[p]);
        if (!outer)
            continue;
        wview *nvs = core_realloc(vs, (nv + 1) * sizeof *nvs);
        if (!nvs) {
            core_free(vs);
            return core_fail(ADBC_ENOMEM, "out of memory");
        }
        vs = nvs;
        wview *v = &vs[nv++];
        memset(v, 0, sizeof *v);
        v->node = i;
        v->x1 = nd->x1, v->y1 = nd->y1, v->x2 = nd->x2, v->y2 = nd->y2;
        snprintf(v->pkg, sizeof v->pkg, "%s", ui_sp(d, nd->pkg));
    }
    if (nv == 0)
        return 0;
    int64_t deadline = core_deadline(budget_ms);
    wsock *socks = NULL;
    size_t ns = 0;
    int listed = 0, rc = 0;
    char lnote[480] = ""; /* why the list could not be read */
    /* The pages' sessions are kept with the connection: a page read before
     * is asked only what changed. */
    wkeep *keep = keep_take(c);
    for (size_t i = 0; i < nv; i++) {
        wview *v = &vs[i];
        char key[300];
        snprintf(key, sizeof key, "%s@%d,%d", v->pkg, v->x1, v->y1);
        wsess own, *ws = keep && v->pkg[0] ? keep_sess(keep, key) : NULL;
        if (!ws) {
            memset(&own, 0, sizeof own);
            ws = &own;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            /* A live session knows its socket; else the device's list. */
            const char *sock = ws->cdp ? ws->sock : NULL;
            int warm = sock != NULL;
            if (!sock && !listed) {
                rc = list_sockets(&socks, &ns, c, deadline);
                listed = 1;
                if (rc == ADBC_ENOMEM)
                    break;
                if (rc < 0 && (rc == ADBC_ETIMEDOUT || core_remaining(deadline) == 0))
                    snprintf(lnote, sizeof lnote, "web content not read: the device did not "
                             "list its DevTools sockets within the %d ms budget", budget_ms);
                else if (rc < 0)
                    snprintf(lnote, sizeof lnote, "web content not read: %s", adbc_last_error());
            }
            if (!sock && lnote[0]) {
                snprintf(v->note, sizeof v->note, "%s", lnote);
                break;
            }
            for (size_t k = 0; k < ns && !sock; k++)
                if (v->pkg[0] && strcmp(socks[k].package, v->pkg) == 0)
                    sock = socks[k].name;
            if (!sock) {
                snprintf(v->note, sizeof v->note,
                         "web content not read: %s has no DevTools socket (is the WebView "
                         "debuggable?)", v->pkg[0] ? v->pkg : "the app");
                break;
            }
            if (core_remaining(deadline) == 0) {
                snprintf(v->note, sizeof v->note, "web content not read: the %d ms budget ran out",
                         budget_ms);
                break;
            }
            v->note[0] = 0;
            core_buf_free(&v->frag);
            rc = read_page(v, c, sock, ws, deadline);
            if (rc == 0 || rc == ADBC_ENOMEM)
                break;
            core_buf_free(&v->frag);
            sess_close(ws);
            if (rc == ADBC_ETIMEDOUT || core_remaining(deadline) == 0)
                snprintf(v->note, sizeof v->note, "web content not read: the page did not "
                         "answer within the %d ms budget", budget_ms);
            else
                snprintf(v->note, sizeof v->note, "web content not read: %s", adbc_last_error());
            /* A kept session that failed (its page or its app went) gets
             * one more try from the start, on the device's list of now. */
            if (!warm || rc == ADBC_ETIMEDOUT || core_remaining(deadline) == 0)
                break;
            if (listed) {
                lnote[0] = 0;
                for (size_t k = 0; k < ns; k++) {
                    core_free(socks[k].name);
                    core_free(socks[k].package);
                }
                core_free(socks);
                socks = NULL;
                ns = 0;
                listed = 0;
            }
        }
        if (ws == &own)
            sess_free(&own);
        if (rc == ADBC_ENOMEM)
            goto done;
    }
    rc = 0;
    /* Write the dump again with each WebView's children replaced by its
     * page's nodes, or a note added. */
    core_buf b = {0};
    size_t at = 0;
    for (size_t i = 0; i < nv; i++) {
        wview *v = &vs[i];
        size_t tag, tag_end, elem_end;
        int self = find_node(raw, raw_len, v->node, &tag, &tag_end, &elem_end);
        if (self < 0 || tag < at)
            continue; /* the raw text does not line up with the parse: leave it */
        if (self == 1) {
            core_buf_add(&b, raw + at, tag_end - 2 - at);
            core_buf_puts(&b, ">");
        } else {
            core_buf_add(&b, raw + at, tag_end - at);
        }
        if (v->note[0]) {
            char bounds[96];
            snprintf(bounds, sizeof bounds, "[%d,%d][%d,%d]", v->x1, v->y1, v->x2, v->y2);
            core_buf_puts(&b, "<node");
            wb_attr(&b, "class", "adbc.WebNote");
            wb_attr(&b, "text", v->note);
            wb_attr(&b, "package", v->pkg);
            wb_attr(&b, "bounds", bounds);
            core_buf_puts(&b, "/>");
            /* The dump's own children stay. */
            if (self == 1) {
                core_buf_puts(&b, "</node>");
                at = elem_end;
            } else {
                at = tag_end;
            }
        } else {
            core_buf_add(&b, v->frag.p, v->frag.len);
            core_buf_puts(&b, "</node>");
            at = elem_end;
        }
    }
    core_buf_add(&b, raw + at, raw_len - at);
    if (core_buf_take(&b, out, out_len) < 0)
        rc = core_fail(ADBC_ENOMEM, "out of memory splicing web content");
done:
    if (keep)
        pthread_mutex_unlock(&keep->mu);
    for (size_t i = 0; i < ns; i++) {
        core_free(socks[i].name);
        core_free(socks[i].package);
    }
    core_free(socks);
    for (size_t i = 0; i < nv; i++)
        core_buf_free(&vs[i].frag);
    core_free(vs);
    return rc;
}
