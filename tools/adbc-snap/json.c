/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap JSON output: strings, byte strings, and the --json error
 * object (see snap.h for its shape). */
#include "snap.h"
#include "ops_core.h"
#include "portable.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int json_mode; /* --json: errors go to stdout as JSON too */
static int json_done; /* stdout has its JSON document: print no other */

void snap_json_set(int on)
{
    json_mode = on;
}

int snap_json_on(void)
{
    return json_mode;
}

void snap_json_mark(void)
{
    json_done = 1;
}

int snap_json_marked(void)
{
    return json_done;
}

void snap_json_error(const char *what, int code, const char *message, const char *usage,
                     int status)
{
    if (!json_mode || json_done)
        return;
    json_done = 1;
    printf("{\"error\":{");
    if (what) {
        printf("\"what\":");
        snap_json_str(stdout, what);
        putchar(',');
    }
    if (code < 0) {
        printf("\"code\":%d,\"reason\":", code);
        snap_json_str(stdout, adbc_strerror(code));
        putchar(',');
    }
    printf("\"message\":");
    snap_json_str(stdout, message);
    if (usage) {
        printf(",\"usage\":");
        snap_json_str(stdout, usage);
    }
    printf("},\"exit_status\":%d}\n", status);
    fflush(stdout);
}

/* The bytes as a JSON string, escaped as every JSON string adbc writes
 * (portable_json_unit: bytes that are not UTF-8 as U+FFFD). */
static void put_str(FILE *f, const unsigned char *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        char e[6];
        size_t span, u = portable_json_unit(p + i, n - i, e, &span);
        if (u)
            fwrite(e, 1, u, f);
        else
            fwrite(p + i, 1, span, f);
        i += span;
    }
    fputc('"', f);
}

void snap_json_str(FILE *f, const char *s)
{
    put_str(f, (const unsigned char *)(s ? s : ""), s ? strlen(s) : 0);
}

void snap_json_strn(FILE *f, const char *s, size_t len)
{
    put_str(f, (const unsigned char *)s, len);
}

void snap_json_bytes(FILE *f, const char *key, const void *data, size_t len)
{
    if (ops_utf8_bad(data, len) == len) {
        fprintf(f, "\"%s\":", key);
        put_str(f, data, len);
        return;
    }
    char *b = ops_base64(data, len);
    if (!b) { /* out of memory: say so in the document rather than cut it */
        fprintf(f, "\"%s_error\":\"out of memory encoding %zu bytes\"", key, len);
        return;
    }
    fprintf(f, "\"%s_base64\":\"%s\"", key, b);
    free(b);
}
