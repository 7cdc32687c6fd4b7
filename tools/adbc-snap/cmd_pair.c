/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap pair: pair this computer's adb key with an Android 11+ device
 * for wireless debugging (the "Pair device with pairing code" dialog), then
 * connect to the port the Wireless debugging screen shows with -t. Output
 * follows adb's, so scripts written for `adb pair` keep working. */
#include "snap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adbc/mdns.h"
#include "adbc/pair.h"

static int cmd_pair(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_pair[] = {
    {"pair", cmd_pair, "pair [--json] [HOST:PORT] [CODE]",
     "pair with a device's pairing port (Wireless debugging; without HOST:PORT the only "
     "pairing service announced by mDNS; CODE read from stdin if absent)"},
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

/* The address of the only pairing service announced on the network. */
static int find_pairing(snap_ctx *ctx, char *addr, size_t len)
{
    adbc_mdns_opts o;
    adbc_mdns_opts_init(&o);
    o.service = ADBC_MDNS_TLS_PAIRING;
    adbc_mdns_service *l;
    size_t n, ok = 0, pick = 0;
    int rc = adbc_mdns_browse(&l, &n, &o);
    if (rc < 0)
        return snap_fail("pair: looking for a pairing service by mDNS", rc);
    for (size_t i = 0; i < n; i++)
        if (l[i].port && l[i].addr[0]) {
            ok++;
            pick = i;
        }
    if (ok != 1) {
        if (ok)
            fprintf(stderr, "adbc-snap: pair: %zu pairing services are announced; give the "
                            "address (HOST:PORT) of one:\n",
                    ok);
        else
            fprintf(stderr,
                    "adbc-snap: pair: no pairing service announced by mDNS within %d ms: open "
                    "\"Pair device with pairing code\" on the phone (Developer options > "
                    "Wireless debugging), on the same network, or give HOST:PORT\n",
                    o.timeout_ms);
        for (size_t i = 0; ok && i < n; i++)
            if (l[i].port && l[i].addr[0])
                fprintf(stderr, "  %s\t%s:%u\n", l[i].instance, l[i].addr, l[i].port);
        adbc_mdns_free(l);
        return SNAP_EXIT_FAIL;
    }
    adbc_mdns_addr(addr, len, &l[pick]);
    if (!ctx->quiet)
        fprintf(stderr, "adbc-snap: pairing with %s (%s, announced by mDNS)\n", l[pick].instance,
                addr);
    adbc_mdns_free(l);
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
    if (n > 2)
        return snap_usage(&snap_cmds_pair[0], "expected [HOST:PORT] and the pairing code");
    /* adb's form is HOST:PORT [CODE]; a first argument without ':' is the
     * code, the address then comes from mDNS. */
    int has_addr = n >= 1 && strchr(argv[1], ':') != NULL;
    if (n == 2 && !has_addr)
        return snap_usage(&snap_cmds_pair[0], "the address must be HOST:PORT");
    char found[128];
    const char *addr = has_addr ? argv[1] : NULL;
    char buf[64];
    const char *code = n == 2 ? argv[2] : n == 1 && !has_addr ? argv[1] : NULL;
    if (!code) {
        if (read_code(buf, sizeof buf) != 0)
            return snap_usage(&snap_cmds_pair[0], "no pairing code on the command line or stdin");
        code = buf;
    }
    if (!addr) {
        if (find_pairing(ctx, found, sizeof found) != 0)
            return SNAP_EXIT_FAIL;
        addr = found;
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
    adbc_free(guid);
    return 0;
}
