/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap mdns check / mdns services: adb's mDNS commands, answered by
 * adbc's own mDNS queries (lib/mdns) instead of an adb server's cache. */
#include "snap.h"

#include <stdlib.h>
#include <string.h>

#include "adbc/mdns.h"
#include "ops_hostproto.h"

static int cmd_mdns(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_mdns[] = {
    {"mdns", cmd_mdns, "mdns check | mdns services [--json] [--wait MS] [--host-only]",
     "mDNS: can it be used here; the wireless-debugging services on the network"},
    {NULL, NULL, NULL, NULL},
};

static int check(void)
{
    char ifs[512], line[600];
    int n = adbc_mdns_interfaces(ifs, sizeof ifs);
    /* The same words adbc-serve's adb server answers host:mdns:check with
     * (adb's own when its mDNS backend is not running). */
    printf("%s\n", ops_hp_mdns_check(line, sizeof line, ifs, n));
    if (n <= 0) {
        fprintf(stderr, "adbc-snap: no network interface with multicast is up (mDNS queries "
                        "go out on Wi-Fi or a LAN; connect to one)\n");
        return SNAP_EXIT_FAIL;
    }
    return 0;
}

static void print_json(const adbc_mdns_service *l, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        char addr[128] = "";
        if (l[i].port && l[i].addr[0])
            adbc_mdns_addr(addr, sizeof addr, &l[i]);
        printf("%s{\"instance\":", i ? "," : "");
        snap_json_str(stdout, l[i].instance);
        printf(",\"service\":");
        snap_json_str(stdout, l[i].service);
        printf(",\"host\":");
        snap_json_str(stdout, l[i].host);
        printf(",\"address\":");
        snap_json_str(stdout, l[i].addr);
        printf(",\"port\":%u,\"connect\":", l[i].port);
        snap_json_str(stdout, addr);
        printf(",\"interface\":");
        snap_json_str(stdout, l[i].ifname);
        printf(",\"txt\":");
        snap_json_str(stdout, l[i].txt);
        printf(",\"local\":%s}", l[i].local ? "true" : "false");
    }
    printf("]\n");
}

static int services(snap_ctx *ctx, int json, int wait_ms, int host_only)
{
    adbc_mdns_opts o;
    adbc_mdns_opts_init(&o);
    o.host_only = host_only;
    if (wait_ms > 0)
        o.timeout_ms = wait_ms;
    adbc_mdns_service *l;
    size_t n;
    int rc = adbc_mdns_browse(&l, &n, &o);
    if (rc < 0)
        return snap_fail("mdns services", rc);
    if (json) {
        print_json(l, n);
    } else {
        printf("List of discovered mdns services\n");
        for (size_t i = 0; i < n; i++) {
            /* Names come from the network: escaped, tty or pipe. */
            char inst[4 * sizeof l[i].instance], svc[4 * sizeof l[i].service];
            snap_net_safe(l[i].instance, inst, sizeof inst);
            snap_net_safe(l[i].service, svc, sizeof svc);
            if (!l[i].port || !l[i].addr[0]) {
                if (!ctx->quiet)
                    fprintf(stderr, "adbc-snap: %s.%s: not resolved in %d ms (no %s)\n", inst,
                            svc, o.timeout_ms, l[i].port ? "usable address" : "SRV record");
                continue;
            }
            /* adb prints the announced address, not 127.0.0.1. */
            if (strchr(l[i].addr, ':'))
                printf("%s\t%s\t[%s]:%u\n", inst, svc, l[i].addr, l[i].port);
            else
                printf("%s\t%s\t%s:%u\n", inst, svc, l[i].addr, l[i].port);
        }
    }
    adbc_mdns_free(l);
    return 0;
}

static int cmd_mdns(snap_ctx *ctx, int argc, char **argv)
{
    if (argc < 2)
        return snap_usage(&snap_cmds_mdns[0], "expected check or services");
    if (strcmp(argv[1], "check") == 0) {
        if (argc != 2)
            return snap_usage(&snap_cmds_mdns[0], "mdns check takes no arguments");
        return check();
    }
    if (strcmp(argv[1], "services") != 0)
        return snap_usage(&snap_cmds_mdns[0], "expected check or services");
    int json = 0, host_only = 0;
    int wait_ms = ctx->timeout_set && ctx->timeout_ms < 1000 ? ctx->timeout_ms : 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--host-only") == 0) {
            host_only = 1;
        } else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 60000)
                return snap_usage(&snap_cmds_mdns[0], "--wait takes milliseconds (1 to 60000)");
            wait_ms = (int)v;
        } else {
            return snap_usage(&snap_cmds_mdns[0], "unknown argument");
        }
    }
    return services(ctx, json, wait_ms, host_only);
}
