/* SPDX-License-Identifier: Apache-2.0 */
/* The environment variables adb reads (AOSP adb: commandline.cpp,
 * adb_client.cpp, transport_local.cpp, the server's), each either honoured
 * by adbc-snap or refused by name: a script that sets one is told when it
 * has no effect here, instead of finding out from a different result. */
#include "snap.h"

#include <stdlib.h>
#include <string.h>

#include "adbc/sync.h"

typedef struct adb_var {
    const char *name;
    const char *why; /* NULL: honoured; else why it has no effect */
} adb_var;

static const adb_var vars[] = {
    {"ANDROID_SERIAL", NULL},
    {"ADB_VENDOR_KEYS", NULL},
    {"ANDROID_USER_HOME", NULL},
    {"ANDROID_LOG_TAGS", NULL},
    {"ADB_LOCAL_TRANSPORT_MAX_PORT", NULL},
    {"ADB_SERVER_SOCKET", NULL},          /* start-server, kill-server */
    {"ANDROID_ADB_SERVER_PORT", NULL},
    {"ANDROID_ADB_SERVER_ADDRESS", NULL},
    {"ADB_COMPRESSION", NULL},            /* push, pull, sync (snap_adb_compression) */
    {"ANDROID_PRODUCT_OUT", NULL},        /* sync */
    {"ADB_TRACE", "adbc-snap writes no trace log (adbc-serve --adb-server logs requests with it)"},
    {"ADB_MDNS", "mDNS is asked for by name here: -s NAME._adb-tls-connect._tcp, `mdns services` "
                 "(adbc's adb server, start-server, honours it)"},
    {"ADB_MDNS_AUTO_CONNECT", "devices found by mDNS are used only when named with -s (adbc's adb "
                              "server, start-server, honours it)"},
    {"ADB_MDNS_OPENSCREEN", "adbc has one mDNS client of its own"},
    {"ADB_LIBUSB", "adbc always uses libusb"},
    {"ADB_USB", "USB devices are listed whenever libusb finds them"},
    {"ADB_BURST_MODE", "adbc's flow control is the session's own (delayed_ack when offered; "
                       "adbc's adb server, start-server, honours it)"},
    {"ADB_EMU", "emulators are found on their ports whenever listed"},
    {"ADB_REJECT_KILL_SERVER", "an adb server's setting (adbc-serve --adb-server always obeys host:kill)"},
};

void snap_adb_env_check(const snap_ctx *ctx)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i].name);
        if (v && vars[i].why && !ctx->quiet)
            fprintf(stderr, "adbc-snap: %s is set but has no effect: %s\n", vars[i].name,
                    vars[i].why);
    }
}

int snap_adb_compression(adbc_sync_compression *comp)
{
    const char *v = getenv("ADB_COMPRESSION");
    if (!v)
        return 0;
    /* adb takes 0 and 1 here besides the names. */
    if (strcmp(v, "0") == 0)
        v = "none";
    else if (strcmp(v, "1") == 0)
        v = "any";
    if (adbc_sync_compression_parse(comp, v) < 0) {
        fprintf(stderr, "adbc-snap: ADB_COMPRESSION=%s: %s (0, 1, any, none, brotli, lz4, "
                        "zstd)\n", getenv("ADB_COMPRESSION"), adbc_last_error());
        return -1;
    }
    return 0;
}
