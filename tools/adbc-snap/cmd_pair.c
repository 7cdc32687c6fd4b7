/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap pair: pair this computer's adb key with an Android 11+ device
 * for wireless debugging (the "Pair device with pairing code" dialog), then
 * connect to the port the Wireless debugging screen shows with -t. Output
 * follows adb's, so scripts written for `adb pair` keep working. */
#include "snap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/pair.h"

static int cmd_pair(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_pair[] = {
    {"pair", cmd_pair, "pair [--json] HOST:PORT [CODE]",
     "pair with a device's pairing port (Wireless debugging; CODE read from stdin if absent)"},
    {NULL, NULL, NULL, NULL},
};

/* The code from stdin, as adb asks for it when it is not on the command
 * line (so it need not show up in the process list). */
static int read_code(char *code, size_t len)
{
    if (isatty(0)) {
        fprintf(stderr, "Enter pairing code: ");
        fflush(stderr);
    }
    if (!fgets(code, (int)len, stdin))
        return -1;
    code[strcspn(code, "\r\n")] = '\0';
    return 0;
}

static int cmd_pair(snap_ctx *ctx, int argc, char **argv)
{
    int json = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            argv[1 + n++] = argv[i];
    }
    if (n < 1 || n > 2)
        return snap_usage(&snap_cmds_pair[0], "expected HOST:PORT and the pairing code");
    const char *addr = argv[1];
    char buf[64];
    const char *code = n == 2 ? argv[2] : NULL;
    if (!code) {
        if (read_code(buf, sizeof buf) != 0)
            return snap_usage(&snap_cmds_pair[0], "no pairing code on the command line or stdin");
        code = buf;
    }
    char *guid = NULL;
    int rc = adbc_pair(&guid, addr, code, NULL, ctx->timeout_ms);
    if (rc < 0) {
        char what[300];
        snprintf(what, sizeof what, "failed to pair with %s", addr);
        return snap_fail(what, rc);
    }
    if (json) {
        printf("{\"paired\":");
        snap_json_str(stdout, addr);
        printf(",\"guid\":");
        snap_json_str(stdout, guid ? guid : "");
        printf("}\n");
    } else {
        printf("Successfully paired to %s [guid=%s]\n", addr, guid ? guid : "");
    }
    free(guid);
    return 0;
}
