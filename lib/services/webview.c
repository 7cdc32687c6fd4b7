/* SPDX-License-Identifier: Apache-2.0 */
/* DevTools sockets: found in /proc/net/unix, owner package from
 * /proc/<pid>/cmdline, pages from GET /json/list over a stream to the
 * socket. The JSON reader is only what /json/list needs: an array of
 * objects whose string fields id, type, title, url and
 * webSocketDebuggerUrl are kept; everything else (numbers, nested values)
 * is skipped with bounded depth. Fuzzed with the HTTP parser. */
#include "adbc/webview.h"
#include "adbc/shell.h"
#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAGES 1024
#define MAX_DEPTH 32
#define MAX_SOCKETS 256

typedef struct jr {
    const char *p, *end;
} jr;

static void ws(jr *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* A JSON string at j->p; *out (malloc'd, may be NULL to skip). -1 if bad. */
static int jstring(jr *j, char **out)
{
    if (j->p >= j->end || *j->p != '"')
        return -1;
    j->p++;
    size_t cap = 0, n = 0;
    char *s = NULL;
    while (j->p < j->end && *j->p != '"') {
        unsigned char ch = (unsigned char)*j->p++;
        char tmp[4];
        size_t tn = 1;
        tmp[0] = (char)ch;
        if (ch == '\\') {
            if (j->p >= j->end)
                return core_free(s), -1;
            char e = *j->p++;
            switch (e) {
            case 'n': tmp[0] = '\n'; break;
            case 't': tmp[0] = '\t'; break;
            case 'r': tmp[0] = '\r'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case '"': case '\\': case '/': tmp[0] = e; break;
            case 'u': {
                if (j->end - j->p < 4)
                    return core_free(s), -1;
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    char h = j->p[i];
                    if (!isxdigit((unsigned char)h))
                        return core_free(s), -1;
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0'
                                                                       : tolower(h) - 'a' + 10);
                }
                j->p += 4;
                /* UTF-8 for the BMP; surrogates become '?' (titles only). */
                if (v >= 0xd800 && v <= 0xdfff)
                    tmp[0] = '?';
                else if (v < 0x80)
                    tmp[0] = (char)(v ? v : '?');
                else if (v < 0x800) {
                    tmp[0] = (char)(0xc0 | (v >> 6));
                    tmp[1] = (char)(0x80 | (v & 0x3f));
                    tn = 2;
                } else {
                    tmp[0] = (char)(0xe0 | (v >> 12));
                    tmp[1] = (char)(0x80 | ((v >> 6) & 0x3f));
                    tmp[2] = (char)(0x80 | (v & 0x3f));
                    tn = 3;
                }
                break;
            }
            default:
                return core_free(s), -1;
            }
        } else if (ch < 0x20) {
            return core_free(s), -1;
        }
        if (out) {
            if (n + tn + 1 > cap) {
                size_t nc = cap ? cap * 2 : 32;
                while (nc < n + tn + 1)
                    nc *= 2;
                char *ns = core_realloc(s, nc);
                if (!ns)
                    return core_free(s), -1;
                s = ns;
                cap = nc;
            }
            memcpy(s + n, tmp, tn);
            n += tn;
        }
    }
    if (j->p >= j->end)
        return core_free(s), -1;
    j->p++;
    if (out) {
        if (!s && !(s = core_strdup("")))
            return -1;
        s[n] = '\0';
        *out = s;
    }
    return 0;
}

/* Skip any JSON value. */
static int jskip(jr *j, int depth)
{
    ws(j);
    if (j->p >= j->end || depth > MAX_DEPTH)
        return -1;
    char c = *j->p;
    if (c == '"')
        return jstring(j, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                ws(j);
                if (jstring(j, NULL) < 0)
                    return -1;
                ws(j);
                if (j->p >= j->end || *j->p != ':')
                    return -1;
                j->p++;
            }
            if (jskip(j, depth + 1) < 0)
                return -1;
            ws(j);
            if (j->p >= j->end)
                return -1;
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == close) {
                j->p++;
                return 0;
            }
            return -1;
        }
    }
    /* number, true, false, null */
    const char *s = j->p;
    while (j->p < j->end && (isalnum((unsigned char)*j->p) || strchr("+-.", *j->p)))
        j->p++;
    return j->p > s ? 0 : -1;
}

void adbc_devtools_pages_free(adbc_devtools_page *p, size_t n)
{
    if (!p)
        return;
    for (size_t i = 0; i < n; i++) {
        core_free(p[i].id);
        core_free(p[i].type);
        core_free(p[i].title);
        core_free(p[i].url);
        core_free(p[i].ws_url);
    }
    core_free(p);
}

static int page_object(jr *j, adbc_devtools_page *pg)
{
    j->p++; /* '{' */
    ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        char *key = NULL;
        if (jstring(j, &key) < 0)
            return -1;
        ws(j);
        if (j->p >= j->end || *j->p != ':') {
            core_free(key);
            return -1;
        }
        j->p++;
        ws(j);
        char **slot = NULL;
        if (strcmp(key, "id") == 0)
            slot = &pg->id;
        else if (strcmp(key, "type") == 0)
            slot = &pg->type;
        else if (strcmp(key, "title") == 0)
            slot = &pg->title;
        else if (strcmp(key, "url") == 0)
            slot = &pg->url;
        else if (strcmp(key, "webSocketDebuggerUrl") == 0)
            slot = &pg->ws_url;
        core_free(key);
        int rc;
        if (slot && j->p < j->end && *j->p == '"') {
            char *v = NULL;
            rc = jstring(j, &v);
            if (rc == 0) {
                core_free(*slot); /* a repeated key: the last one counts */
                *slot = v;
            }
        } else {
            rc = jskip(j, 2);
        }
        if (rc < 0)
            return -1;
        ws(j);
        if (j->p >= j->end)
            return -1;
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == '}') {
            j->p++;
            return 0;
        }
        return -1;
    }
}

int adbc_devtools_parse_pages(adbc_devtools_page **out, const char *json, size_t len)
{
    if (!out || (!json && len))
        return core_null(__func__, !out ? "out" : "json");
    *out = NULL;
    jr j = {json, json + len};
    ws(&j);
    if (j.p >= j.end || *j.p != '[')
        return core_fail(ADBC_EPROTO, "DevTools: /json/list is not a JSON array");
    j.p++;
    adbc_devtools_page *pages = NULL;
    size_t n = 0;
    ws(&j);
    if (j.p < j.end && *j.p == ']')
        goto done;
    for (;;) {
        ws(&j);
        if (j.p >= j.end || *j.p != '{' || n >= MAX_PAGES)
            goto bad;
        adbc_devtools_page *np = core_realloc(pages, (n + 1) * sizeof *np);
        if (!np)
            goto bad;
        pages = np;
        memset(&pages[n], 0, sizeof pages[n]);
        n++;
        if (page_object(&j, &pages[n - 1]) < 0)
            goto bad;
        ws(&j);
        if (j.p < j.end && *j.p == ',') {
            j.p++;
            continue;
        }
        if (j.p < j.end && *j.p == ']')
            break;
        goto bad;
    }
done:
    for (size_t i = 0; i < n; i++) {
        char **f[] = {&pages[i].id, &pages[i].type, &pages[i].title, &pages[i].url,
                      &pages[i].ws_url};
        for (size_t k = 0; k < 5; k++)
            if (!*f[k] && !(*f[k] = core_strdup(""))) {
                adbc_devtools_pages_free(pages, n);
                return core_fail(ADBC_ENOMEM, "out of memory");
            }
    }
    *out = pages;
    return (int)n;
bad:
    adbc_devtools_pages_free(pages, n);
    return core_fail(ADBC_EPROTO, "DevTools: malformed /json/list near byte %zu",
                     (size_t)(j.p - json));
}

int adbc_devtools_scan_unix(char ***out, const char *text, size_t len)
{
    if (!out || (!text && len))
        return core_null(__func__, !out ? "out" : "text");
    *out = NULL;
    char **names = NULL;
    size_t n = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        /* The path is the last field; abstract names start with '@'. */
        const char *at = NULL;
        for (const char *q = p; q < eol; q++)
            if (*q == '@' && (q == p || q[-1] == ' '))
                at = q;
        if (at) {
            size_t nl = (size_t)(eol - at - 1);
            while (nl > 0 && (at[nl] == ' ' || at[nl] == '\r'))
                nl--;
            const char *name = at + 1;
            int printable = 1; /* a name is printable text (it goes into a service name) */
            for (size_t i = 0; i < nl && printable; i++)
                printable = (unsigned char)name[i] > 0x20 && (unsigned char)name[i] < 0x7f;
            int match = 0;
            for (size_t i = 0; printable && i + 15 <= nl && !match; i++)
                match = memcmp(name + i, "devtools_remote", 15) == 0;
            int dup = 0;
            for (size_t i = 0; i < n && match && !dup; i++)
                dup = strlen(names[i]) == nl && memcmp(names[i], name, nl) == 0;
            if (match && !dup && nl < 256 && n < MAX_SOCKETS) {
                char **nn = core_realloc(names, (n + 1) * sizeof *nn);
                char *s = core_strndup(name, nl);
                if (!nn || !s) {
                    core_free(s);
                    if (nn)
                        names = nn;
                    for (size_t i = 0; i < n; i++)
                        core_free(names[i]);
                    core_free(names);
                    return core_fail(ADBC_ENOMEM, "out of memory");
                }
                names = nn;
                names[n++] = s;
            }
        }
        p = eol + 1;
    }
    *out = names;
    return (int)n;
}

/* Output of exec:CMD (adbc_run: ADBC_EIO past max bytes). */
static int exec_out(adbc_conn *c, const char *cmd, size_t max, int timeout_ms, char **out,
                    size_t *len)
{
    adbc_run_result r;
    int rc = adbc_run(&r, c, ADBC_SHELL_EXEC, cmd, NULL, 0, max, timeout_ms);
    *out = rc == 0 ? (char *)r.out : NULL;
    *len = rc == 0 ? r.out_len : 0;
    if (rc == 0)
        r.out = NULL;
    adbc_run_result_clear(&r);
    return rc;
}

/* "..._devtools_remote_<pid>" (WebViews name theirs so); 0 otherwise. */
static int pid_of(const char *name)
{
    const char *u = strstr(name, "devtools_remote_");
    if (!u)
        return 0;
    u += 16;
    int pid = 0;
    if (!*u)
        return 0;
    for (const char *q = u; *q; q++) {
        if (!isdigit((unsigned char)*q) || pid > 10000000)
            return 0;
        pid = pid * 10 + (*q - '0');
    }
    return pid;
}

void adbc_devtools_free(adbc_devtools_socket *s, size_t n)
{
    if (!s)
        return;
    for (size_t i = 0; i < n; i++) {
        core_free(s[i].name);
        core_free(s[i].package);
        core_free(s[i].message);
        adbc_devtools_pages_free(s[i].pages, s[i].npages);
    }
    core_free(s);
}

int adbc_devtools_list(adbc_devtools_socket **out, size_t *nout, adbc_conn *c, int timeout_ms)
{
    if (!out || !nout)
        return core_null(__func__, !out ? "out" : "nout");
    *out = NULL;
    *nout = 0;
    char *text;
    size_t len;
    int rc = exec_out(c, "cat /proc/net/unix", 8u << 20, timeout_ms, &text, &len);
    if (rc < 0)
        return rc;
    char **names;
    int n = adbc_devtools_scan_unix(&names, text, len);
    core_free(text);
    if (n < 0)
        return n;
    adbc_devtools_socket *s = core_calloc((size_t)n + 1, sizeof *s);
    if (!s) {
        for (int i = 0; i < n; i++)
            core_free(names[i]);
        core_free(names);
        return core_fail(ADBC_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        s[i].name = names[i];
        s[i].pid = pid_of(names[i]);
        s[i].package = NULL;
        if (s[i].pid > 0) {
            char cmd[64], *cl;
            size_t cl_len;
            snprintf(cmd, sizeof cmd, "cat /proc/%d/cmdline 2>/dev/null", s[i].pid);
            if (exec_out(c, cmd, 65536, timeout_ms, &cl, &cl_len) == 0) {
                s[i].package = core_strndup(cl, strnlen(cl, cl_len)); /* argv[0] */
                core_free(cl);
            }
        }
        if (!s[i].package)
            s[i].package = core_strdup("");
        char svc[300];
        snprintf(svc, sizeof svc, "localabstract:%s", names[i]);
        adbc_http_response r;
        int hr = adbc_http_get(&r, c, svc, "/json/list", 0, timeout_ms);
        if (hr == 0 && r.status != 200)
            hr = core_fail(ADBC_EREMOTE, "GET /json/list answered HTTP %d", r.status);
        if (hr == 0) {
            adbc_devtools_page *pages;
            int np = adbc_devtools_parse_pages(&pages, r.body, r.body_len);
            if (np >= 0) {
                s[i].pages = pages;
                s[i].npages = (size_t)np;
            } else {
                hr = np;
            }
        }
        adbc_http_response_free(&r);
        s[i].error = hr < 0 ? hr : 0;
        s[i].message = core_strdup(hr < 0 ? adbc_last_error() : "");
        if (!s[i].package || !s[i].message) {
            core_free(names);
            adbc_devtools_free(s, (size_t)n);
            return core_fail(ADBC_ENOMEM, "out of memory");
        }
    }
    core_free(names);
    *out = s;
    *nout = (size_t)n;
    return 0;
}
