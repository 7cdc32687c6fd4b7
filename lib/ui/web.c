/* SPDX-License-Identifier: Apache-2.0 */
/* The web part of a snapshot (docs/webview.md). For each WebView in the
 * dump whose app has a DevTools socket with a visible page, the page's
 * accessibility tree (Accessibility.getFullAXTree) is read and pruned, the
 * kept nodes' boxes (DOM.getBoxModel, pipelined: one round trip for all)
 * are mapped from CSS pixels to screen pixels with the WebView's bounds and
 * the page's visual viewport (Page.getLayoutMetrics), and the result is
 * written as <node> elements that replace the WebView's children in the
 * dump. The spliced dump then goes through the one pipeline every dump
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
 * it leaves its WebView as the dump had it, with a note node saying why. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/shell.h"
#include "adbc/webview.h"
#include "core/internal.h"
#include "core/jread.h"

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

typedef struct axn {
    int tok;        /* the node's object in the reply */
    int parent;     /* index of the parent node, -1 */
    int kind;       /* index into kinds, -1 when not kept */
    int kparent;    /* nearest kept ancestor, -1: the WebView */
    long backend;
    char *name, *value;
    unsigned st;    /* UI_* states */
    int x1, y1, x2, y2, boxed;
} axn;

static uint32_t hash_id(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static void ax_free(axn *a, int n)
{
    for (int i = 0; i < n && a; i++) {
        core_free(a[i].name);
        core_free(a[i].value);
    }
    core_free(a);
}

/* The node whose nodeId is the string at token id, -1 if none. */
static int ax_find(const jread *j, const axn *a, const int *tab, uint32_t cap, int id)
{
    if (!jread_is(j, id, JR_STR))
        return -1;
    uint32_t h = hash_id(j->s + j->t[id].start, j->t[id].len) & (cap - 1);
    for (; tab[h] >= 0; h = (h + 1) & (cap - 1)) {
        int o = jread_get(j, a[tab[h]].tok, "nodeId");
        if (j->t[o].len == j->t[id].len &&
            memcmp(j->s + j->t[o].start, j->s + j->t[id].start, j->t[id].len) == 0)
            return tab[h];
    }
    return -1;
}

/* The AX tree into nodes: index by nodeId (an open-addressed table over
 * the id strings), parents, kinds, states. */
static int ax_nodes(axn **out, int **order, int *count, int *nord, const jread *j, int list)
{
    *out = NULL;
    *order = NULL;
    *count = *nord = 0;
    int n = 0;
    for (int e = jread_first(j, list); e >= 0; e = jread_next(j, list, e))
        n++;
    if (n == 0)
        return 0;
    axn *a = core_calloc((size_t)n, sizeof *a);
    uint32_t cap = 1;
    while (cap < (uint32_t)n * 2)
        cap <<= 1;
    int *tab = core_malloc(cap * sizeof *tab);
    if (!a || !tab) {
        core_free(a);
        core_free(tab);
        return core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
    }
    for (uint32_t i = 0; i < cap; i++)
        tab[i] = -1;
    int i = 0;
    for (int e = jread_first(j, list); e >= 0; e = jread_next(j, list, e), i++) {
        a[i].tok = e;
        a[i].parent = -1;
        a[i].kind = -1;
        int id = jread_get(j, e, "nodeId");
        if (!jread_is(j, id, JR_STR))
            continue;
        uint32_t h = hash_id(j->s + j->t[id].start, j->t[id].len) & (cap - 1);
        while (tab[h] >= 0)
            h = (h + 1) & (cap - 1);
        tab[h] = i;
    }
    for (i = 0; i < n; i++) {
        int e = a[i].tok;
        a[i].parent = ax_find(j, a, tab, cap, jread_get(j, e, "parentId"));
        a[i].backend = (long)jread_num(j, jread_get(j, e, "backendDOMNodeId"), 0);
        if (jread_bool(j, jread_get(j, e, "ignored"), 0))
            continue;
        int role = jread_get(j, jread_get(j, e, "role"), "value");
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (jread_streq(j, role, kinds[k].role)) {
                a[i].kind = (int)k;
                break;
            }
        if (a[i].kind < 0)
            continue;
        char *name = NULL, *value = NULL;
        jread_str(j, jread_get(j, jread_get(j, e, "name"), "value"), &name);
        int vv = jread_get(j, jread_get(j, e, "value"), "value");
        if (jread_is(j, vv, JR_STR))
            jread_str(j, vv, &value);
        a[i].name = name;
        a[i].value = value;
        a[i].st = UI_ENABLED;
        int props = jread_get(j, e, "properties");
        for (int p = jread_first(j, props); p >= 0; p = jread_next(j, props, p)) {
            int pn = jread_get(j, p, "name");
            int pv = jread_get(j, jread_get(j, p, "value"), "value");
            int on = jread_bool(j, pv, 0) || jread_streq(j, pv, "true") ||
                     jread_streq(j, pv, "mixed");
            if (jread_streq(j, pn, "disabled") && on)
                a[i].st &= ~(unsigned)UI_ENABLED;
            else if (jread_streq(j, pn, "focused") && on)
                a[i].st |= UI_FOCUSED;
            else if ((jread_streq(j, pn, "checked") || jread_streq(j, pn, "pressed")) && on)
                a[i].st |= UI_CHECKED;
            else if (jread_streq(j, pn, "selected") && on)
                a[i].st |= UI_SELECTED;
        }
        unsigned kd = kinds[a[i].kind].kind;
        if ((kd & K_NAMED) && (!a[i].name || !a[i].name[0]))
            a[i].kind = -1;
        if (a[i].backend <= 0)
            a[i].kind = -1;
    }
    /* Document order: depth first from the roots along childIds (the reply
     * lists nodes breadth first). Each node is placed once. */
    int *ord = core_malloc((size_t)n * sizeof *ord), *stk = core_malloc((size_t)n * sizeof *stk);
    char *seen = core_calloc((size_t)n, 1);
    if (!ord || !stk || !seen) {
        core_free(ord);
        core_free(stk);
        core_free(seen);
        core_free(tab);
        ax_free(a, n);
        return core_fail(ADBC_ENOMEM, "out of memory for a page's accessibility tree");
    }
    int no = 0;
    for (int r = 0; r < n; r++) {
        if (a[r].parent >= 0 || seen[r])
            continue;
        int sp = 0;
        stk[sp++] = r;
        seen[r] = 1;
        while (sp > 0) {
            int x = stk[--sp];
            ord[no++] = x;
            int ch = jread_get(j, a[x].tok, "childIds");
            int kids[64], nk = 0, total = 0;
            for (int e = jread_first(j, ch); e >= 0; e = jread_next(j, ch, e))
                total++;
            /* Pushed in reverse so the first child comes out first. */
            for (int from = total; from > 0; from -= 64) {
                nk = 0;
                int idx = 0;
                for (int e = jread_first(j, ch); e >= 0 && nk < 64; e = jread_next(j, ch, e), idx++)
                    if (idx >= (from > 64 ? from - 64 : 0) && idx < from)
                        kids[nk++] = ax_find(j, a, tab, cap, e);
                for (int k = nk - 1; k >= 0; k--)
                    if (kids[k] >= 0 && !seen[kids[k]] && sp < n) {
                        seen[kids[k]] = 1;
                        stk[sp++] = kids[k];
                    }
            }
        }
    }
    core_free(stk);
    core_free(seen);
    core_free(tab);
    /* Nearest kept ancestor; a text that repeats it (a button's label) goes. */
    for (i = 0; i < n; i++) {
        int p = a[i].parent, steps = 0;
        while (p >= 0 && a[p].kind < 0 && steps++ < n)
            p = a[p].parent;
        a[i].kparent = steps <= n ? p : -1;
        if (a[i].kind >= 0 && (kinds[a[i].kind].kind & K_TEXT) && p >= 0 && a[i].name &&
            ((a[p].name && strcmp(a[p].name, a[i].name) == 0) ||
             (kinds[a[p].kind].kind & K_EDIT)))
            a[i].kind = -1; /* a label repeated, or the text inside a field */
    }
    *out = a;
    *order = ord;
    *count = n;
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

static int read_page(wview *v, adbc_conn *c, const char *sock, int64_t deadline)
{
    char *path, *pageid;
    int rc = pick_page(&path, &pageid, c, sock, v, deadline);
    if (rc < 0)
        return rc;
    adbc_cdp *cdp = NULL;
    char *metrics = NULL, *tree = NULL;
    axn *a = NULL;
    int n = 0, nord = 0, *ord = NULL, *pos = NULL;
    jread jm = {0}, jt = {0};
    rc = adbc_cdp_open(&cdp, c, sock, path, core_remaining(deadline));
    int idm = rc < 0 ? rc : adbc_cdp_send(cdp, "Page.getLayoutMetrics", NULL, core_remaining(deadline));
    int idt = idm < 0 ? idm : adbc_cdp_send(cdp, "Accessibility.getFullAXTree", NULL,
                                            core_remaining(deadline));
    rc = idt < 0 ? idt : adbc_cdp_wait(&metrics, NULL, cdp, idm, core_remaining(deadline));
    if (rc == 0)
        rc = adbc_cdp_wait(&tree, NULL, cdp, idt, core_remaining(deadline));
    if (rc == 0)
        rc = jread_parse(&jm, metrics, strlen(metrics));
    if (rc == 0)
        rc = jread_parse(&jt, tree, strlen(tree));
    double ox = 0, oy = 0, cw = 0, ch = 0, sw = 0, sh = 0;
    if (rc == 0) {
        int vv = jread_get(&jm, 0, "cssVisualViewport");
        if (vv < 0)
            vv = jread_get(&jm, 0, "visualViewport");
        if (num_of(&jm, vv, "offsetX", &ox) < 0 || num_of(&jm, vv, "offsetY", &oy) < 0 ||
            num_of(&jm, vv, "clientWidth", &cw) < 0 || cw < 1)
            rc = core_fail(ADBC_EPROTO, "Page.getLayoutMetrics gave no visual viewport");
        int cs = jread_get(&jm, 0, "cssContentSize");
        num_of(&jm, vv, "clientHeight", &ch);
        num_of(&jm, cs, "width", &sw);
        num_of(&jm, cs, "height", &sh);
    }
    if (rc == 0)
        rc = ax_nodes(&a, &ord, &n, &nord, &jt, jread_get(&jt, 0, "nodes"));
    if (rc == 0 && n > 0 && !(pos = core_malloc((size_t)n * sizeof *pos)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++)
        pos[i] = -1;
    for (int k = 0; rc == 0 && k < nord; k++)
        pos[ord[k]] = k;
    /* Boxes of the kept nodes: every request first, then every reply. */
    int *ids = NULL, kept = 0;
    if (rc == 0 && n > 0 && !(ids = core_calloc((size_t)n, sizeof *ids)))
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (a[i].kind < 0 || pos[i] < 0 || kept >= WEB_MAX_KEPT)
            continue;
        char params[64];
        snprintf(params, sizeof params, "{\"backendNodeId\":%ld}", a[i].backend);
        ids[i] = adbc_cdp_send(cdp, "DOM.getBoxModel", params, core_remaining(deadline));
        if (ids[i] < 0)
            rc = ids[i];
        kept++;
    }
    double scale = (v->x2 - v->x1) / cw;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (ids[i] <= 0)
            continue;
        char *box = NULL;
        int br = adbc_cdp_wait(&box, NULL, cdp, ids[i], core_remaining(deadline));
        if (br == ADBC_EREMOTE)
            continue; /* no layout (display: none): not on screen */
        if (br < 0) {
            rc = br;
            break;
        }
        jread jb;
        if (jread_parse(&jb, box, strlen(box)) == 0) {
            int q = jread_get(&jb, jread_get(&jb, 0, "model"), "border");
            double minx = 1e18, miny = 1e18, maxx = -1e18, maxy = -1e18;
            int k = 0;
            for (int e = jread_first(&jb, q); e >= 0; e = jread_next(&jb, q, e), k++) {
                double val = jread_num(&jb, e, 0);
                if (k % 2 == 0) {
                    minx = val < minx ? val : minx;
                    maxx = val > maxx ? val : maxx;
                } else {
                    miny = val < miny ? val : miny;
                    maxy = val > maxy ? val : maxy;
                }
            }
            if (k == 8) {
                double x1 = v->x1 + (minx - ox) * scale, x2 = v->x1 + (maxx - ox) * scale;
                double y1 = v->y1 + (miny - oy) * scale, y2 = v->y1 + (maxy - oy) * scale;
                /* Clipped to the WebView: only what shows counts. */
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
            jread_free(&jb);
        }
        core_free(box);
    }
    /* Nest the nodes that show under their nearest shown ancestor. */
    int *stack = rc == 0 && n ? core_malloc((size_t)n * sizeof *stack) : NULL;
    if (rc == 0 && n && !stack)
        rc = core_fail(ADBC_ENOMEM, "out of memory");
    int depth = 0;
    /* A page larger than its viewport is one scrollable element, the
     * document, over the whole WebView: its ref scrolls the page. */
    int scroll = rc == 0 && nord > 0 && (sh > ch + 1 || sw > cw + 1) && a[ord[0]].backend > 0;
    if (scroll) {
        int box[4] = {v->x1, v->y1, v->x2, v->y2};
        open_node(&v->frag, "web.ScrollView", "", "", sock, pageid, a[ord[0]].backend, v->pkg,
                  UI_SCROLLABLE | UI_ENABLED, box);
    }
    for (int k = 0; rc == 0 && k < nord; k++) {
        int i = ord[k];
        if (a[i].kind < 0 || !a[i].boxed)
            continue;
        int p = a[i].kparent, steps = 0;
        while (p >= 0 && (a[p].kind < 0 || !a[p].boxed || pos[p] < 0 || pos[p] > k) &&
               steps++ < n)
            p = a[p].kparent;
        if (steps > n)
            p = -1;
        while (depth > 0 && stack[depth - 1] != p) {
            core_buf_puts(&v->frag, "</node>");
            depth--;
        }
        unsigned kd = kinds[a[i].kind].kind;
        unsigned st = a[i].st | (kd & (K_CLICK | K_EDIT) ? UI_CLICKABLE : 0);
        const char *text = kd & K_EDIT ? (a[i].value ? a[i].value : "")
                           : kd & K_DESC ? "" : (a[i].name ? a[i].name : "");
        const char *desc = kd & K_EDIT || kd & K_DESC ? (a[i].name ? a[i].name : "") : "";
        int box[4] = {a[i].x1, a[i].y1, a[i].x2, a[i].y2};
        open_node(&v->frag, kinds[a[i].kind].cls, text, desc, sock, pageid, a[i].backend,
                  v->pkg, st, box);
        stack[depth++] = i;
    }
    while (rc == 0 && depth-- > 0)
        core_buf_puts(&v->frag, "</node>");
    if (scroll)
        core_buf_puts(&v->frag, "</node>");
    if (rc == 0 && v->frag.err)
        rc = core_fail(ADBC_ENOMEM, "out of memory for a page's nodes");
    if (rc == 0 && !v->frag.p)
        core_buf_puts(&v->frag, ""); /* read, and nothing on it shows */
    core_free(stack);
    core_free(ids);
    core_free(ord);
    core_free(pos);
    ax_free(a, n);
    jread_free(&jm);
    jread_free(&jt);
    core_free(metrics);
    core_free(tree);
    adbc_cdp_close(cdp);
    core_free(path);
    core_free(pageid);
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
    int rc = list_sockets(&socks, &ns, c, deadline);
    if (rc == ADBC_ENOMEM)
        goto done;
    for (size_t i = 0; i < nv; i++) {
        wview *v = &vs[i];
        if (rc < 0) {
            if (rc == ADBC_ETIMEDOUT || core_remaining(deadline) == 0)
                snprintf(v->note, sizeof v->note, "web content not read: the device did not "
                         "list its DevTools sockets within the %d ms budget", budget_ms);
            else
                snprintf(v->note, sizeof v->note, "web content not read: %s", adbc_last_error());
            continue;
        }
        const char *sock = NULL;
        for (size_t k = 0; k < ns && !sock; k++)
            if (v->pkg[0] && strcmp(socks[k].package, v->pkg) == 0)
                sock = socks[k].name;
        if (!sock) {
            snprintf(v->note, sizeof v->note,
                     "web content not read: %s has no DevTools socket (is the WebView "
                     "debuggable?)", v->pkg[0] ? v->pkg : "the app");
            continue;
        }
        if (core_remaining(deadline) == 0) {
            snprintf(v->note, sizeof v->note, "web content not read: the %d ms budget ran out",
                     budget_ms);
            continue;
        }
        int pr = read_page(v, c, sock, deadline);
        if (pr == ADBC_ENOMEM) {
            rc = pr;
            goto done;
        }
        if (pr < 0) {
            core_buf_free(&v->frag);
            if (pr == ADBC_ETIMEDOUT || core_remaining(deadline) == 0)
                snprintf(v->note, sizeof v->note, "web content not read: the page did not "
                         "answer within the %d ms budget", budget_ms);
            else
                snprintf(v->note, sizeof v->note, "web content not read: %s", adbc_last_error());
        }
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
