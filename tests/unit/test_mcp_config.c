/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp's strict TOML subset: what it accepts, and that everything else
 * is an error naming the line. Compiles the server's parser directly. */
#include "../../tools/adbc-mcp/config.c"

#include "t.h"

static char err[512];

static int parse(mcp_config *c, const char *text)
{
    mcp_config_init(c);
    err[0] = 0;
    return mcp_config_parse(c, text, strlen(text), "mcp.toml", err, sizeof(err));
}

/* The text must fail, with an error that starts "mcp.toml:LINE:" and holds
 * the fragment. */
static int fails_at(const char *text, int line, const char *fragment)
{
    mcp_config c;
    int rc = parse(&c, text);
    mcp_config_free(&c);
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "mcp.toml:%d: ", line);
    if (rc != -1 || strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, fragment)) {
        fprintf(stderr, "    text: %s\n    err:  %s (want line %d, '%s')\n", text, err, line,
                fragment);
        return 0;
    }
    return 1;
}

TEST(defaults)
{
    mcp_config c;
    CHECK_EQ_INT(parse(&c, ""), 0);
    CHECK_EQ_INT(c.usb, 1);
    CHECK_EQ_INT(c.call_ms, 30000);
    CHECK_EQ_INT(c.connect_ms, 10000);
    CHECK_EQ_INT(c.settle_ms, 0);
    CHECK_EQ_INT(c.nallow, 0);
    CHECK(c.default_serial == NULL && c.screenshot_dir == NULL);
    CHECK(!mcp_config_allowed(&c, "ABC"));
    CHECK(!mcp_config_allowed(&c, ""));
    mcp_config_free(&c);
}

TEST(full_file)
{
    const char *text = "\xEF\xBB\xBF# adbc-mcp\n"
                       "[device]   # devices\n"
                       "allowlist = [\n"
                       "  \"R58M123\",   # my phone\n"
                       "  'lit\\eral',\n"
                       "]\n"
                       "default = \"emulator-5554\"\r\n"
                       "targets = [\"127.0.0.1:5555\"]\n"
                       "usb = false\n"
                       "\n"
                       "[timeouts]\n"
                       "call_ms = 60_000\n"
                       "connect_ms = +2000\n"
                       "settle_ms = 0\n"
                       "[screenshots]\n"
                       "dir = \"/tmp/s \\u00e9\\t\\\"q\\\"\"";
    mcp_config c;
    CHECK_EQ_INT(parse(&c, text), 0);
    CHECK_EQ_INT(c.nallow, 2);
    CHECK_STR(c.allowlist[0], "R58M123");
    CHECK_STR(c.allowlist[1], "lit\\eral");
    CHECK_STR(c.default_serial, "emulator-5554");
    CHECK_EQ_INT(c.ntargets, 1);
    CHECK_STR(c.targets[0], "127.0.0.1:5555");
    CHECK_EQ_INT(c.usb, 0);
    CHECK_EQ_INT(c.call_ms, 60000);
    CHECK_EQ_INT(c.connect_ms, 2000);
    CHECK_EQ_INT(c.settle_ms, 0);
    CHECK_STR(c.screenshot_dir, "/tmp/s \xC3\xA9\t\"q\"");
    CHECK(mcp_config_allowed(&c, "R58M123"));
    CHECK(!mcp_config_allowed(&c, "R58M12"));
    CHECK(!mcp_config_allowed(&c, "r58m123"));
    mcp_config_free(&c);
}

TEST(empty_allowlist_allows_none)
{
    mcp_config c;
    CHECK_EQ_INT(parse(&c, "[device]\nallowlist = []\n"), 0);
    CHECK_EQ_INT(c.nallow, 0);
    CHECK(!mcp_config_allowed(&c, "anything"));
    mcp_config_free(&c);
}

TEST(errors_name_the_line)
{
    CHECK(fails_at("allowlist = [\"A\"]\n", 1, "outside a table"));
    CHECK(fails_at("[device]\nallowlist = \"A\"\n", 2, "must be an array"));
    CHECK(fails_at("[device]\n\nallowlist = [\"A\"]\nallowlist = [\"B\"]\n", 4, "set twice"));
    CHECK(fails_at("[device]\nallowlst = [\"A\"]\n", 2, "unknown key 'allowlst'"));
    CHECK(fails_at("[devices]\n", 1, "unknown table [devices]"));
    CHECK(fails_at("[device]\n[device]\n", 2, "defined twice"));
    CHECK(fails_at("[device]\nallowlist = [\"A\",\n\"B\"\n", 2, "unterminated array"));
    CHECK(fails_at("[device]\nallowlist = [\"A\" \"B\"]\n", 2, "expected ','"));
    CHECK(fails_at("[device]\nallowlist = [1]\n", 2, "strings only"));
    CHECK(fails_at("[device]\nallowlist = [\"\"]\n", 2, "empty"));
    CHECK(fails_at("[device]\ndefault = \"abc\n", 2, "unterminated string"));
    CHECK(fails_at("[device]\ndefault = \"\"\"x\"\"\"\n", 2, "multi-line"));
    CHECK(fails_at("[device]\ndefault = \"a\\qb\"\n", 2, "unknown escape"));
    CHECK(fails_at("[device]\ndefault = \"a\\u00\"\n", 2, "hex digits"));
    CHECK(fails_at("[device]\ndefault = \"a\\u0000\"\n", 2, "NUL"));
    CHECK(fails_at("[device]\ndefault = \"a\x01\"\n", 2, "control character"));
    CHECK(fails_at("[device]\ndefault = \n", 2, "missing value"));
    CHECK(fails_at("[device]\ndefault\n", 2, "expected '='"));
    CHECK(fails_at("[device]\ndefault = \"a\" \"b\"\n", 2, "after the value"));
    CHECK(fails_at("[device]\nusb = yes\n", 2, "expected a value"));
    CHECK(fails_at("[device]\nusb = 1\n", 2, "true or false"));
    CHECK(fails_at("[device]\n\"usb\" = true\n", 2, "quoted key"));
    CHECK(fails_at("[device]\ndevice.usb = true\n", 2, "dotted key"));
    CHECK(fails_at("[[device]]\n", 1, "arrays of tables"));
    CHECK(fails_at("[timeouts]\ncall_ms = 10\n", 2, "out of range"));
    CHECK(fails_at("[timeouts]\ncall_ms = 99999999999999999999\n", 2, "number"));
    CHECK(fails_at("[timeouts]\ncall_ms = 1.5\n", 2, "decimal integers"));
    CHECK(fails_at("[timeouts]\ncall_ms = 0x10\n", 2, "decimal integers"));
    CHECK(fails_at("[timeouts]\ncall_ms = 030000\n", 2, "leading zeros"));
    CHECK(fails_at("[timeouts]\ncall_ms = 1__000\n", 2, "'_'"));
    CHECK(fails_at("[timeouts]\nsettle_ms = -1\n", 2, "out of range"));
    CHECK(fails_at("[timeouts]\nsettle_ms = \"5\"\n", 2, "must be an integer"));
    CHECK(fails_at("[screenshots]\ndir = \"\"\n", 2, "must not be empty"));
    CHECK(fails_at("[device\n", 1, "expected ']'"));
    CHECK(fails_at("# a\n# b\n[device]\nusb = true # ok\n\n\nx = 1\n", 7, "unknown key 'x'"));
    /* A type error in a multi-line array names the key's line. */
    CHECK(fails_at("[timeouts]\n[device]\ntargets = [\n\"a\",\n\"\"]\n", 3, "element 2"));
}

TEST(nul_byte_and_files)
{
    mcp_config c;
    mcp_config_init(&c);
    const char text[] = "[device]\nusb = true\n\0\n";
    CHECK_EQ_INT(mcp_config_parse(&c, text, sizeof(text) - 1, "f", err, sizeof(err)), -1);
    CHECK(strncmp(err, "f:3: NUL byte", 13) == 0);
    mcp_config_free(&c);

    char path[256];
    snprintf(path, sizeof(path), "%s/test_mcp_config.toml",
             getenv("ADBC_BUILD_DIR") ? getenv("ADBC_BUILD_DIR") : "/tmp");
    remove(path);
    mcp_config_init(&c);
    CHECK_EQ_INT(mcp_config_load(&c, path, 0, err, sizeof(err)), 0); /* missing: fine */
    CHECK_EQ_INT(mcp_config_load(&c, path, 1, err, sizeof(err)), -1); /* unless named */
    CHECK(strstr(err, "cannot open") != NULL);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("[device]\nallowlist = [\"X1\"]\nusb = maybe\n", f);
    fclose(f);
    CHECK_EQ_INT(mcp_config_load(&c, path, 1, err, sizeof(err)), -1);
    CHECK(strstr(err, "test_mcp_config.toml:3: ") != NULL);
    mcp_config_free(&c);
    f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("[device]\nallowlist = [\"X1\"]\n", f);
    fclose(f);
    mcp_config_init(&c);
    CHECK_EQ_INT(mcp_config_load(&c, path, 1, err, sizeof(err)), 0);
    CHECK(mcp_config_allowed(&c, "X1"));
    mcp_config_free(&c);
    remove(path);
}

/* Every prefix of a valid file parses or fails cleanly (no crash, no read
 * past the end: run under ASan). */
TEST(every_prefix)
{
    const char *text = "[device]\nallowlist = [ \"A\\u00e9\", 'b' ] # c\ndefault = \"x\\\"y\"\n"
                       "[timeouts]\ncall_ms = 1_000\n";
    size_t n = strlen(text);
    for (size_t i = 0; i <= n; i++) {
        char *copy = malloc(i ? i : 1);
        CHECK(copy != NULL);
        memcpy(copy, text, i);
        mcp_config c;
        mcp_config_init(&c);
        int rc = mcp_config_parse(&c, copy, i, "p", err, sizeof(err));
        CHECK(rc == 0 || rc == -1);
        CHECK(rc == 0 || strncmp(err, "p:", 2) == 0);
        mcp_config_free(&c);
        free(copy);
    }
}

int main(void)
{
    RUN(defaults);
    RUN(full_file);
    RUN(empty_allowlist_allows_none);
    RUN(errors_name_the_line);
    RUN(nul_byte_and_files);
    RUN(every_prefix);
    return T_DONE();
}
