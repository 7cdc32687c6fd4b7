/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-mcp's JSON-RPC error handling, from outside: the built server is run
 * with pipes (no device needed), fed malformed and valid lines, and each
 * answer line is checked for its id and error code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

static pid_t pid;
static int to_srv = -1, from_srv = -1;
static char rbuf[1 << 16];
static size_t rlen;

static int start(const char *extra)
{
    const char *build = getenv("ADBC_BUILD_DIR");
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tools/adbc-mcp", build ? build : "build");
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        close(in[1]);
        close(out[0]);
        setenv("HOME", "/nonexistent-adbc-mcp-test", 1);
        unsetenv("XDG_CONFIG_HOME");
        execl(bin, bin, "--no-usb", extra, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_srv = in[1];
    from_srv = out[0];
    rlen = 0;
    return 0;
}

static void send_line(const char *s)
{
    size_t n = strlen(s);
    if (write(to_srv, s, n) != (ssize_t)n || write(to_srv, "\n", 1) != 1)
        fprintf(stderr, "  write to the server failed\n");
}

/* The next answer line (NUL-terminated, without the newline), or NULL
 * after 10 s. */
static const char *next_line(void)
{
    static char line[sizeof(rbuf)];
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            memcpy(line, rbuf, n);
            line[n] = 0;
            memmove(rbuf, nl + 1, rlen - n - 1);
            rlen -= n + 1;
            return line;
        }
        struct pollfd p = {from_srv, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0 || rlen == sizeof(rbuf))
            return NULL;
        ssize_t r = read(from_srv, rbuf + rlen, sizeof(rbuf) - rlen);
        if (r <= 0)
            return NULL;
        rlen += (size_t)r;
    }
}

static int stop(void)
{
    close(to_srv);
    int st = -1;
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        usleep(50000);
        if (i == 99) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        }
    }
    close(from_srv);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when s is valid UTF-8 (written apart from the server's checker). */
static int utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2
                : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0 || (n == 1 && *p < 0xc2))
            return 0;
        for (int k = 1; k <= n; k++)
            if ((p[k] & 0xc0) != 0x80)
                return 0;
        p += n + 1;
    }
    return 1;
}

/* send line, expect an error with this id text and code, in an answer
 * that is valid UTF-8 */
static int expect_error(const char *line, const char *id, int code)
{
    send_line(line);
    const char *got = next_line();
    char want_id[64], want_code[64];
    snprintf(want_id, sizeof(want_id), "\"id\":%s,", id);
    snprintf(want_code, sizeof(want_code), "\"error\":{\"code\":%d,", code);
    if (!got || strncmp(got, "{\"jsonrpc\":\"2.0\",", 17) != 0 || !strstr(got, want_id) ||
        !strstr(got, want_code) || !utf8_ok(got)) {
        fprintf(stderr, "    sent %.200s\n    got  %.300s\n    want id %s code %d\n", line,
                got ? got : "(nothing)", id, code);
        return 0;
    }
    return 1;
}

TEST(malformed_input)
{
    CHECK_EQ_INT(start("--check-config") == 0, 1);
    CHECK_EQ_INT(stop(), 0); /* --check-config with no config file: fine, exits */
    CHECK_EQ_INT(start("--allow-shell"), 0);
    CHECK(expect_error("{", "null", -32700));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}", "null", -32700));
    CHECK(expect_error("\xff\xfe", "null", -32700));
    CHECK(expect_error("[]", "null", -32600));
    CHECK(expect_error("42", "null", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", "2", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":3}", "3", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":[]}", "\"x\"", -32600));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/list\"}", "4", -32601));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":7}", "5",
                       -32602));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":3}}", "6", -32602));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"rm_rf\"}}", "7", -32602));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\",\"params\":"
                       "{\"protocolVersion\":2025}}", "8", -32602));
    CHECK_EQ_INT(stop(), 0);
}

TEST(valid_requests_and_notifications)
{
    CHECK_EQ_INT(start("--no-usb"), 0);
    /* Blank lines and notifications are not answered: the first answer is
     * the ping's. */
    send_line("");
    send_line("   ");
    send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    send_line("{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\r");
    const char *got = next_line();
    CHECK(got != NULL);
    CHECK_STR(got, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"initialize\",\"params\":"
              "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
              "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    got = next_line();
    CHECK(got && strstr(got, "\"id\":10,\"result\":{\"protocolVersion\":\"2025-11-25\""));
    send_line("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\"}");
    got = next_line();
    CHECK(got && strstr(got, "\"name\":\"snapshot\"") && !strstr(got, "\"name\":\"shell\""));
    /* A tool with bad arguments is a result with isError, not a protocol error. */
    send_line("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":"
              "{\"name\":\"tap\",\"arguments\":{\"ref\":\"x\"}}}");
    got = next_line();
    CHECK(got && strstr(got, "\"id\":12,\"result\":") && strstr(got, "\"isError\":true") &&
          strstr(got, "must be an integer"));
    /* No device anywhere: a tool error that says what to do. */
    send_line("{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":"
              "{\"name\":\"snapshot\"}}");
    got = next_line();
    CHECK(got && strstr(got, "\"id\":13,\"result\":") && strstr(got, "\"isError\":true") &&
          strstr(got, "no device found"));
    /* The last line needs no newline: it is answered at end of input. */
    CHECK(write(to_srv, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"}", 41) == 41);
    close(to_srv);
    to_srv = open("/dev/null", O_WRONLY);
    got = next_line();
    CHECK(got && strcmp(got, "{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{}}") == 0);
    CHECK_EQ_INT(stop(), 0);
}

/* Invalid UTF-8 anywhere in a request is a parse error, and nothing that
 * is not UTF-8 is ever quoted back; keys given twice and "\u0000" (which
 * would cut the string) are refused, not read first-wins or cut short. */
TEST(invalid_utf8_duplicate_keys_and_nul_escapes)
{
    CHECK_EQ_INT(start("--no-usb"), 0);
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}", "null",
                            -32700));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"\xff\xfe\"}}", "null", -32700));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"p\xc3\"}", "null",
                            -32700)); /* a sequence cut short */
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"\xc0\xaf\"}", "null",
                            -32700)); /* overlong */
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"\xed\xa0\x80\"}", "null",
                            -32700)); /* a surrogate */
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":6,\"id\":7,\"method\":\"ping\"}", "null",
                            -32700));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"tap\",\"arguments\":{\"ref\":1,\"ref\":2}}}", "null",
                            -32700));
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\\u0000x\"}", "null",
                            -32700));
    /* Valid UTF-8 quoted back cut at 100 bytes: never in the middle of a
     * character. */
    char line[512], name[256];
    memset(name, 'a', 99);
    strcpy(name + 99, "\xc3\xa9\xc3\xa9");
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"%s\"}", name);
    CHECK(expect_error(line, "10", -32601));
    /* An escaped backslash before u0000 is no NUL. */
    send_line("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"params\":{\"x\":\"\\\\u0000\"}}");
    const char *got = next_line();
    CHECK(got && strcmp(got, "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}") == 0);
    CHECK_EQ_INT(stop(), 0);
}

/* An id comes back as the very text it was sent as: integers past 2^53 and
 * 2^63, in any form a number may take, strings with escapes; a response
 * (with an id, or an error response with id null) is never answered. */
TEST(ids_echoed_exactly_responses_never_answered)
{
    CHECK_EQ_INT(start("--no-usb"), 0);
    static const char *const ids[] = {
        "9007199254740991", "9007199254740993", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "1000000000000000", "123456789012345678901234567890",
        "-5", "0", "-0", "1.5", "0.1", "1e3", "1E+400", "-2.5e-7",
        "\"x\"", "\"caf\\u00e9 \\\"q\\\"\"", "\"\"",
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char line[256], want[256];
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\": %s ,\"method\":\"ping\"}",
                 ids[i]);
        snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", ids[i]);
        send_line(line);
        const char *got = next_line();
        if (!got || strcmp(got, want) != 0)
            fprintf(stderr, "    sent %s\n    got  %s\n    want %s\n", line,
                    got ? got : "(nothing)", want);
        CHECK(got && strcmp(got, want) == 0);
    }
    /* The same in an error answer and from a tool call's thread. */
    CHECK(expect_error("{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"nope\"}",
                       "9007199254740993", -32601));
    send_line("{\"jsonrpc\":\"2.0\",\"id\":18446744073709551617,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"tap\",\"arguments\":{}}}");
    const char *got = next_line();
    static const char big[] = "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551617,\"result\":";
    CHECK(got && strncmp(got, big, sizeof big - 1) == 0);
    /* Responses, well-formed or not, get no answer: the ping after them is
     * the next line. */
    send_line("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"x\"}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"y\"}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"result\":{}}");
    send_line("{\"id\":null,\"error\":{}}");
    send_line("{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"ping\"}");
    got = next_line();
    CHECK(got && strcmp(got, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"result\":{}}") == 0);
    CHECK_EQ_INT(stop(), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(malformed_input);
    RUN(valid_requests_and_notifications);
    RUN(invalid_utf8_duplicate_keys_and_nul_escapes);
    RUN(ids_echoed_exactly_responses_never_answered);
    return T_DONE();
}
