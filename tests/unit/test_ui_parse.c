/* SPDX-License-Identifier: Apache-2.0 */
/* The dump parser against broken and hostile input: every byte string must
 * give a snapshot or a clean ADBC_EFORMAT, never a crash, a hang or a
 * result passed off as whole. */
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "ui_test_util.h"

#define TV "android.widget.TextView"
#define LL "android.widget.LinearLayout"

void core_test_fail_alloc_at(long n);

static int parse_rc(const void *x, size_t n, adbc_ui_snap **out)
{
    adbc_ui_snap *s = NULL;
    int rc = adbc_ui_snap_parse(&s, x, n);
    if (out)
        *out = s;
    else
        adbc_ui_snap_free(s);
    return rc;
}

TEST(no_node_is_an_error_showing_the_first_bytes)
{
    const char *cases[] = {"", "hello", "ERROR: null root node returned by UiTestAutomationBridge.\n",
                           "<?xml version='1.0'?><hierarchy rotation=\"0\"></hierarchy>",
                           "<hierarchy><nodes/><nodex a=\"1\"/></hierarchy>", "<node text=\"cut"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        adbc_ui_snap *s = (adbc_ui_snap *)1;
        CHECK_EQ_INT(parse_rc(cases[i], strlen(cases[i]), &s), ADBC_EFORMAT);
        CHECK(s == NULL);
        char want[24];
        snprintf(want, sizeof want, "start \"%.8s", cases[i]);
        CHECK(strstr(adbc_last_error(), want) != NULL);
    }
    /* Binary garbage is shown escaped, and only the first bytes of it. */
    char junk[4000];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 1);
    junk[0] = '\x01';
    CHECK_EQ_INT(parse_rc(junk, sizeof junk, NULL), ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "\\x01") != NULL);
    CHECK(strlen(adbc_last_error()) < 600);
}

TEST(prefix_garbage_and_trailing_text_are_skipped)
{
    const char *x = "\xef\xbb\xbfWARNING: linker: unused DT entry\r\n"
                    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                    "<!DOCTYPE x><hierarchy rotation=\"0\"><!-- a comment <node text=\"no\"/> -->"
                    "<node class=\"" TV "\" text=\"yes\"/></hierarchy>"
                    "UI hierchary dumped to: /dev/tty\n<node text=\"after the end\"/>";
    adbc_ui_snap *s = parse_str(x);
    CHECK(s);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- Text \"yes\"");
    CHECK(adbc_ui_snap_complete(s));
    CHECK_EQ_INT(adbc_ui_snap_nodes(s), 1);
    adbc_ui_snap_free(s);
}

TEST(other_elements_markup_and_whitespace_are_ignored)
{
    CHECK_TEXT("<hierarchy>\n  <node class=\"" LL "\" >\n    <extra a=\"x>y\" b='<node>'>"
               "<node class=\"" TV "\"\n\ttext = \"in extra\" />\n</extra><![CDATA[<node text=\"no\"/>]]>"
               "<?pi <node?>\n  <node class=\"" TV "\" text=\"b\"></node ></node>\n</hierarchy>",
               "- Group\n  - Text \"in extra\"\n  - Text \"b\"");
}

TEST(truncated_dump_keeps_nodes_read_so_far)
{
    const char *full = "<hierarchy><node class=\"" LL "\"><node class=\"" TV "\" text=\"one\"/>"
                       "<node class=\"" TV "\" text=\"two\"/><node class=\"" TV "\" text=\"three\"/>"
                       "</node></hierarchy>";
    size_t n = strlen(full);
    const char *two = strstr(full, "two");
    size_t first_end = (size_t)(strstr(full, "/>") + 2 - full);
    for (size_t cut = first_end; cut < n; cut++) {
        adbc_ui_snap *s = NULL;
        CHECK_EQ_INT(parse_rc(full, cut, &s), 0);
        CHECK(!adbc_ui_snap_complete(s));
        CHECK(strstr(adbc_ui_snap_damage(s), "cut short") != NULL);
        const char *t = adbc_ui_snap_text(s, NULL);
        CHECK(strstr(t, "\"one\"") != NULL);
        /* "two" is there exactly when its tag was read whole. */
        const char *tag_end = strstr(two, "/>") + 2;
        CHECK((strstr(t, "\"two\"") != NULL) == (full + cut >= tag_end));
        adbc_ui_snap_free(s);
    }
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(parse_rc(full, n, &s), 0);
    CHECK(adbc_ui_snap_complete(s));
    CHECK_STR(adbc_ui_snap_damage(s), "");
    adbc_ui_snap_free(s);
}

TEST(unterminated_quotes_and_tags)
{
    adbc_ui_snap *s = NULL;
    /* A quote never closed swallows the rest: the node is not kept. */
    const char *a = "<hierarchy><node class=\"" TV "\" text=\"ok\"/><node text=\"never closed/></hierarchy>";
    CHECK_EQ_INT(parse_rc(a, strlen(a), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- Text \"ok\"");
    CHECK(!adbc_ui_snap_complete(s));
    adbc_ui_snap_free(s);
    /* A tag cut by the next '<' keeps what it read and goes on. */
    const char *b = "<hierarchy><node class=\"" LL "\" text=\"a\"<node class=\"" TV "\" text=\"b\"/>"
                    "</node></hierarchy>";
    CHECK_EQ_INT(parse_rc(b, strlen(b), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- Group \"a\"\n  - Text \"b\"");
    CHECK(!adbc_ui_snap_complete(s));
    CHECK(strstr(adbc_ui_snap_damage(s), "unclosed") != NULL);
    adbc_ui_snap_free(s);
    /* Junk inside a tag: valueless and unquoted attributes, stray '=' and '/'. */
    const char *c = "<node class=\"" TV "\" checked text=\"t\" = / selected=true focused=\"true\"/>";
    CHECK_EQ_INT(parse_rc(c, strlen(c), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- Text \"t\" [focused]");
    CHECK(!adbc_ui_snap_complete(s));
    adbc_ui_snap_free(s);
    /* Stray end tags. */
    const char *d = "</node></node><node class=\"" TV "\" text=\"x\"/></node>";
    CHECK_EQ_INT(parse_rc(d, strlen(d), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- Text \"x\"");
    CHECK(!adbc_ui_snap_complete(s));
    adbc_ui_snap_free(s);
}

TEST(invalid_utf8_becomes_replacement_characters)
{
#define FFFD "\xef\xbf\xbd"
    static const struct { const char *in, *out; } cases[] = {
        {"\xff", FFFD},
        {"a\xc3", "a" FFFD},                          /* cut sequence at the end */
        {"\xe2\x82x", FFFD "x"},                      /* cut sequence: one U+FFFD */
        {"\xc0\xaf", FFFD FFFD},                      /* overlong */
        {"\xed\xa0\x80", FFFD FFFD FFFD},             /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD},    /* past U+10FFFF */
        {"\xf0\x9f\x94", FFFD},
        {"ok \xe4\xb8\xad \xf0\x9f\x94\xa5", "ok \xe4\xb8\xad \xf0\x9f\x94\xa5"},
        {"\x80&amp;\xbf", FFFD "&" FFFD},             /* repair and entities together */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char x[256], want[256];
        snprintf(x, sizeof x, "<node class=\"" TV "\" text=\"%s\" content-desc=\"%s\" "
                              "class=\"c\xff\" resource-id=\"r\xfe\"/>", cases[i].in, cases[i].in);
        snprintf(want, sizeof want, "- c" FFFD " \"%s\" (%s)", cases[i].out, cases[i].out);
        CHECK_TEXT(x, want);
    }
    /* The ref table and JSON get the repaired strings too. */
    adbc_ui_snap *s = parse_str("<node class=\"B\xff\" text=\"\xc3(\" clickable=\"true\"/>");
    CHECK(s);
    const adbc_ui_ref *r = adbc_ui_reftab_get(adbc_ui_snap_refs(s), 1);
    CHECK_STR(r->cls, "B" FFFD);
    CHECK_STR(r->text, FFFD "(");
    char *j;
    CHECK_EQ_INT(adbc_ui_snap_json(&j, NULL, s), 0);
    CHECK(strstr(j, "\"text\":\"" FFFD "(\"") != NULL);
    adbc_free(j);
    adbc_ui_snap_free(s);
}

TEST(nul_bytes)
{
    /* NUL in a value becomes U+FFFD (XML cannot carry it, C strings neither);
     * NUL between tags is ignored. */
    static const char x[] = "\0\0<hierarchy>\0<node class=\"T\" text=\"a\0b\"/>\0</hierarchy>";
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(parse_rc(x, sizeof x - 1, &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"a" FFFD "b\"");
    adbc_ui_snap_free(s);
}

TEST(numeric_references_out_of_range)
{
    CHECK_TEXT("<node class=\"T\" text=\"&#0;|&#x0;|&#xD800;|&#xdfff;|&#x110000;|&#1114112;|"
               "&#99999999999999999999;|&#x10FFFF;|&#65;&#x42;\"/>",
               "- T \"" FFFD "|" FFFD "|" FFFD "|" FFFD "|" FFFD "|" FFFD "|" FFFD
               "|\xf4\x8f\xbf\xbf|AB\"");
    /* Not references: left as written. */
    CHECK_TEXT("<node class=\"T\" text=\"&#;|&#x;|&#12|&#1a;|&nbsp;|&|&amp|&AMP;|&#x-1;\"/>",
               "- T \"&#;|&#x;|&#12|&#1a;|&nbsp;|&|&amp|&AMP;|&#x-1;\"");
    /* One pass: &amp;#65; is "&#65;", not "A". */
    CHECK_TEXT("<node class=\"T\" text=\"&amp;#65;\"/>", "- T \"&#65;\"");
    /* Leading zeros are fine up to a bound; a run of digits stays linear. */
    CHECK_TEXT("<node class=\"T\" text=\"&#0000000065;\"/>", "- T \"A\"");
    size_t n = 3u << 20;
    char *big = malloc(n + 64);
    CHECK(big);
    strcpy(big, "<node class=\"T\" text=\"");
    size_t o = strlen(big);
    for (size_t i = 0; i < n; i += 4)
        memcpy(big + o + i, "&#00", 4);
    strcpy(big + o + n, "\"/>");
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(parse_rc(big, strlen(big), &s), 0);
    CHECK_EQ_INT(strlen(adbc_ui_snap_text(s, NULL)), n + strlen("- T \"\""));
    adbc_ui_snap_free(s);
    free(big);
}

TEST(huge_attribute_values)
{
    size_t n = 8u << 20;
    char *x = malloc(n + 128);
    CHECK(x);
    strcpy(x, "<hierarchy><node class=\"T\" text=\"");
    size_t o = strlen(x);
    memset(x + o, 'A', n);
    strcpy(x + o + n, "\" resource-id=\"r\" clickable=\"true\"/></hierarchy>");
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(parse_rc(x, strlen(x), &s), 0);
    size_t tl;
    const char *t = adbc_ui_snap_text(s, &tl);
    CHECK_EQ_INT(tl, n + strlen("- T [ref=1] \"\""));
    CHECK(t[tl - 1] == '"');
    CHECK_EQ_INT(strlen(adbc_ui_reftab_get(adbc_ui_snap_refs(s), 1)->text), n);
    CHECK_STR(adbc_ui_reftab_get(adbc_ui_snap_refs(s), 1)->resource_id, "r");
    adbc_ui_snap_free(s);
    /* A huge attribute name, and a huge unknown attribute value. */
    memset(x, 'n', n);
    memcpy(x, "<node ", 6);
    strcpy(x + n, "=\"v\" text=\"t\"/>");
    CHECK_EQ_INT(parse_rc(x, strlen(x), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- View \"t\"");
    adbc_ui_snap_free(s);
    free(x);
}

/* "<node ...>" depth times, then what closes them. */
static char *deep(size_t depth, const char *attrs, const char *leaf, int close)
{
    size_t al = strlen(attrs), ll = strlen(leaf);
    char *x = malloc(depth * (al + 16) + ll + 64);
    size_t o = 0;
    o += (size_t)sprintf(x, "<hierarchy>");
    for (size_t i = 0; i < depth; i++)
        o += (size_t)sprintf(x + o, "<node%s>", attrs);
    memcpy(x + o, leaf, ll);
    o += ll;
    for (size_t i = 0; close && i < depth; i++) {
        memcpy(x + o, "</node>", 7);
        o += 7;
    }
    strcpy(x + o, close ? "</hierarchy>" : "");
    return x;
}

TEST(deep_nesting_does_not_use_the_stack)
{
    const size_t depth = 100000;
    adbc_ui_snap *s = NULL;
    /* Wrappers all the way down to one text: collapses to one line. */
    char *x = deep(depth, "", "<node class=\"T\" text=\"bottom\" clickable=\"true\"/>", 1);
    CHECK_EQ_INT(parse_rc(x, strlen(x), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T [ref=1] \"bottom\"");
    CHECK_EQ_INT(adbc_ui_snap_nodes(s), depth + 1);
    CHECK(adbc_ui_snap_complete(s));
    char *j;
    CHECK_EQ_INT(adbc_ui_snap_json(&j, NULL, s), 0);
    adbc_free(j);
    int *refs;
    size_t nr;
    adbc_ui_selector sel = {.size = sizeof(adbc_ui_selector), .text = "bottom"};
    CHECK_EQ_INT(adbc_ui_find(&refs, &nr, s, &sel), 0);
    CHECK_EQ_INT(nr, 1);
    adbc_free(refs);
    adbc_ui_snap_free(s);
    free(x);

    /* Clickable at every level, never closed: refs 1..depth, cut short. A
     * dump like this cannot be printed with two spaces a level (that would
     * take 10 GB): a clean error, not a crash. */
    x = deep(depth, " clickable=\"true\"", "", 0);
    int rc = parse_rc(x, strlen(x), &s);
    CHECK_EQ_INT(rc, ADBC_EFORMAT);
    CHECK(strstr(adbc_last_error(), "too deeply") != NULL);
    free(x);

    /* Deep but printable: 3000 levels of text. */
    x = deep(3000, " class=\"T\" text=\"t\"", "", 1);
    CHECK_EQ_INT(parse_rc(x, strlen(x), &s), 0);
    size_t tl;
    adbc_ui_snap_text(s, &tl);
    CHECK_EQ_INT(tl, 3000 * (size_t)2999 + 3000 * strlen("- T \"t\"") + 2999);
    CHECK_EQ_INT(adbc_ui_snap_json(&j, NULL, s), 0);
    size_t opens = 0;
    for (char *p = j; (p = strstr(p, "\"children\":[")); p++)
        opens++;
    CHECK_EQ_INT(opens, 3000);
    adbc_free(j);
    adbc_ui_snap_free(s);
    free(x);
}

TEST(many_identical_siblings_stay_linear)
{
    /* 200,000 equal rows: dedup must not compare each with all before it. */
    size_t rows = 200000;
    const char *row = "<node class=\"T\" text=\"same\"/>";
    size_t rl = strlen(row);
    char *x = malloc(rows * rl + 64);
    size_t o = (size_t)sprintf(x, "<node class=\"L\">");
    for (size_t i = 0; i < rows; i++, o += rl)
        memcpy(x + o, row, rl);
    strcpy(x + o, "</node>");
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(parse_rc(x, strlen(x), &s), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- L\n  - T \"same\"");
    adbc_ui_snap_free(s);
    free(x);
}

/* xorshift: deterministic pseudo-random bytes. */
static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

TEST(random_bytes_and_mutations_give_result_or_clean_error)
{
    static const char alphabet[] = "<node/> =\"'&#;x1[],-textclass\xff\xc3\x80\0>!?";
    char buf[600];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = next_rand() % sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = alphabet[next_rand() % (sizeof alphabet - 1)];
        adbc_ui_snap *s = NULL;
        int rc = parse_rc(buf, n, &s);
        CHECK(rc == 0 || rc == ADBC_EFORMAT);
        if (rc == 0) {
            CHECK(s != NULL);
            char *j;
            CHECK_EQ_INT(adbc_ui_snap_json(&j, NULL, s), 0);
            adbc_free(j);
            /* Text lines never contain raw control characters. */
            for (const char *t = adbc_ui_snap_text(s, NULL); *t; t++)
                CHECK((unsigned char)*t >= 0x20 || *t == '\n');
        }
        adbc_ui_snap_free(s);
    }
    /* Mutations of a real dump. */
    const char *src = getenv("ADBC_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/snapshot/009-settings-small.xml", src ? src : ".");
    FILE *f = fopen(path, "rb");
    CHECK(f);
    static char orig[1 << 16], mut[1 << 16];
    size_t on = fread(orig, 1, sizeof orig, f);
    fclose(f);
    CHECK(on > 1000);
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(mut, orig, on);
        size_t n = on;
        int edits = 1 + (int)(next_rand() % 8);
        for (int e = 0; e < edits; e++) {
            size_t at = next_rand() % n;
            switch (next_rand() % 3) {
            case 0: mut[at] = alphabet[next_rand() % (sizeof alphabet - 1)]; break;
            case 1: n = at + 1; break;                     /* cut */
            default: memmove(mut + at, mut + at + 1, n - at - 1), n--; break;
            }
            if (n < 2)
                break;
        }
        adbc_ui_snap *s = NULL;
        int rc = parse_rc(mut, n, &s);
        CHECK(rc == 0 || rc == ADBC_EFORMAT);
        adbc_ui_snap_free(s);
    }
}

TEST(every_allocation_failure_is_clean)
{
    const char *x = "<hierarchy><node class=\"L\"><node class=\"T\" text=\"\xff a\" clickable=\"true\"/>"
                    "<node class=\"T\" text=\"a\"/><node class=\"T\" text=\"a\"/></node></hierarchy>";
    int ok_seen = 0;
    for (long k = 1; k < 200 && !ok_seen; k++) {
        core_test_fail_alloc_at(k);
        adbc_ui_snap *s = NULL;
        int rc = adbc_ui_snap_parse(&s, x, strlen(x));
        char *j = NULL;
        int jrc = rc == 0 ? adbc_ui_snap_json(&j, NULL, s) : 0;
        core_test_fail_alloc_at(0);
        CHECK(rc == 0 || rc == ADBC_ENOMEM);
        CHECK((rc == 0) == (s != NULL));
        CHECK(jrc == 0 || jrc == ADBC_ENOMEM);
        if (rc == 0 && jrc == 0) {
            CHECK_STR(adbc_ui_snap_text(s, NULL), "- L\n  - T [ref=1] \"" FFFD " a\"\n  - T \"a\"");
            ok_seen = 1;
        }
        adbc_free(j);
        adbc_ui_snap_free(s);
    }
    CHECK(ok_seen);

    /* The whole offline pipeline on a real dump, failing each allocation in
     * turn: parse, JSON, find, TSV, save and load of the ref table. */
    const char *src = getenv("ADBC_SOURCE_DIR");
    char fx[4096], refs[] = "/tmp/adbc-ui-alloc-XXXXXX";
    snprintf(fx, sizeof fx, "%s/fixtures/snapshot/009-settings-small.xml", src ? src : ".");
    int fd = mkstemp(refs);
    CHECK(fd >= 0);
    close(fd);
    ok_seen = 0;
    for (long k = 1; k < 400 && !ok_seen; k++) {
        core_test_fail_alloc_at(k);
        adbc_ui_snap *s = NULL;
        adbc_ui_reftab *t = NULL;
        char *j = NULL, *tsv = NULL;
        int *found = NULL;
        size_t nf;
        adbc_ui_selector sel = {.size = sizeof(adbc_ui_selector), .text = "ok", .flags = ADBC_UI_MATCH_NOCASE};
        int rc = adbc_ui_snap_load(&s, fx);
        if (rc == 0)
            rc = adbc_ui_snap_json(&j, NULL, s);
        if (rc == 0)
            rc = adbc_ui_find(&found, &nf, s, &sel);
        if (rc == 0)
            rc = adbc_ui_reftab_tsv(&tsv, NULL, adbc_ui_snap_refs(s));
        if (rc == 0)
            rc = adbc_ui_reftab_save(adbc_ui_snap_refs(s), refs);
        if (rc == 0)
            rc = adbc_ui_reftab_load(&t, refs);
        core_test_fail_alloc_at(0);
        CHECK(rc == 0 || rc == ADBC_ENOMEM);
        if (rc == ADBC_ENOMEM)
            CHECK(strstr(adbc_last_error(), "out of memory") != NULL);
        if (rc == 0) {
            CHECK_EQ_INT(nf, 1);
            CHECK_EQ_INT(adbc_ui_reftab_count(t), adbc_ui_reftab_count(adbc_ui_snap_refs(s)));
            ok_seen = 1;
        }
        adbc_free(j);
        adbc_free(tsv);
        adbc_free(found);
        adbc_ui_reftab_free(t);
        adbc_ui_snap_free(s);
    }
    unlink(refs);
    CHECK(ok_seen);
}

TEST(load_from_file)
{
    adbc_ui_snap *s = NULL;
    CHECK_EQ_INT(adbc_ui_snap_load(&s, "/nonexistent/dump.xml"), ADBC_ENOTFOUND);
    CHECK(strstr(adbc_last_error(), "/nonexistent/dump.xml") != NULL);
    char path[] = "/tmp/adbc-ui-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char *x = "<node class=\"T\" text=\"from file\"/>";
    CHECK(write(fd, x, strlen(x)) == (ssize_t)strlen(x));
    close(fd);
    CHECK_EQ_INT(adbc_ui_snap_load(&s, path), 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"from file\"");
    adbc_ui_snap_free(s);
    unlink(path);
    /* A pipe (size unknown, read until it ends) works too. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    const char *big = "<hierarchy><node class=\"T\" text=\"through a pipe\"/></hierarchy>";
    CHECK(write(fds[1], big, strlen(big)) == (ssize_t)strlen(big));
    close(fds[1]);
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[0]);
    CHECK_EQ_INT(adbc_ui_snap_load(&s, fdpath), 0);
    close(fds[0]);
    CHECK_STR(adbc_ui_snap_text(s, NULL), "- T \"through a pipe\"");
    adbc_ui_snap_free(s);
    /* A pipe carrying more than the first read buffer: the loader grows. */
    const char *src = getenv("ADBC_SOURCE_DIR");
    char fx[4096];
    snprintf(fx, sizeof fx, "%s/fixtures/snapshot/046-haoce-noheader-largest.xml", src ? src : ".");
    adbc_ui_snap *direct = NULL;
    CHECK_EQ_INT(adbc_ui_snap_load(&direct, fx), 0);
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        FILE *f = fopen(fx, "rb");
        char buf[4096];
        size_t k;
        while (f && (k = fread(buf, 1, sizeof buf, f)) > 0)
            if (write(fds[1], buf, k) != (ssize_t)k)
                break;
        _exit(0);
    }
    close(fds[1]);
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[0]);
    int rc = adbc_ui_snap_load(&s, fdpath);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR(adbc_ui_snap_text(s, NULL), adbc_ui_snap_text(direct, NULL));
    adbc_ui_snap_free(s);
    adbc_ui_snap_free(direct);
    CHECK_EQ_INT(adbc_ui_snap_load(&s, "/dev/null"), ADBC_EFORMAT);
    CHECK(s == NULL);
}

int main(void)
{
    RUN(no_node_is_an_error_showing_the_first_bytes);
    RUN(prefix_garbage_and_trailing_text_are_skipped);
    RUN(other_elements_markup_and_whitespace_are_ignored);
    RUN(truncated_dump_keeps_nodes_read_so_far);
    RUN(unterminated_quotes_and_tags);
    RUN(invalid_utf8_becomes_replacement_characters);
    RUN(nul_bytes);
    RUN(numeric_references_out_of_range);
    RUN(huge_attribute_values);
    RUN(deep_nesting_does_not_use_the_stack);
    RUN(many_identical_siblings_stay_linear);
    RUN(random_bytes_and_mutations_give_result_or_clean_error);
    RUN(every_allocation_failure_is_clean);
    RUN(load_from_file);
    return T_DONE();
}
