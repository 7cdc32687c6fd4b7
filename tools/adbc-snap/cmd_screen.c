/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap screen capture: the screenshot command, PNG written atomically
 * to a file or to stdout. */
#include "snap_ui.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_util.h"

static int cmd_screenshot(snap_ctx *ctx, int argc, char **argv);

const snap_cmd snap_cmds_screen[] = {
    {"screenshot", cmd_screenshot, "screenshot [-o FILE] [--png-on-device] [--json]",
     "PNG of the screen (raw pixels, encoded here)"},
    {NULL, NULL, NULL, NULL},
};

/* Write all of data to path atomically (beside it, then renamed), or to
 * stdout for "-". */
static int write_out(const char *path, const uint8_t *data, size_t len)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            perror("stdout");
            return -1;
        }
        return 0;
    }
    if (ops_write_file_atomic(path, data, len, 0644, 0) != 0) {
        fprintf(stderr, "adbc-snap: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int cmd_screenshot(snap_ctx *ctx, int argc, char **argv)
{
    const snap_cmd *cmd = &snap_cmds_screen[0];
    const char *out = NULL;
    adbc_shot_mode mode = ADBC_SHOT_AUTO;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--png-on-device") == 0)
            mode = ADBC_SHOT_DEVICE_PNG;
        else if (strcmp(argv[i], "--raw") == 0)
            mode = ADBC_SHOT_RAW;
        else
            return snap_usage(cmd, "unknown argument");
    }
    if (json && (!out || strcmp(out, "-") == 0))
        return snap_usage(cmd, "--json needs -o FILE (stdout carries the JSON)");
    if (!out) {
        if (isatty(1))
            return snap_usage(cmd, "give -o FILE (or redirect stdout): PNG bytes are not for "
                                   "a terminal");
        out = "-";
    }
    adbc_conn *c;
    if (snap_connect(ctx, &c) < 0)
        return SNAP_EXIT_FAIL;
    uint8_t *png;
    size_t len;
    int rc = adbc_screenshot(&png, &len, c, mode, ctx->timeout_ms);
    if (rc < 0)
        return snap_fail("screenshot", rc);
    int st = write_out(out, png, len) < 0 ? SNAP_EXIT_FAIL : 0;
    uint32_t w = len < 24 ? 0 : (uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 | (uint32_t)png[18] << 8 |
                 png[19];
    uint32_t h = len < 24 ? 0 : (uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 |
                 png[23];
    if (st == 0 && json) {
        printf("{\"path\":");
        snap_json_str(stdout, out);
        printf(",\"width\":%u,\"height\":%u,\"bytes\":%zu}\n", w, h, len);
    }
    if (st == 0 && !ctx->quiet && strcmp(out, "-") != 0)
        fprintf(stderr, "adbc-snap: wrote %s (%ux%u PNG, %zu bytes)\n", out, w, h, len);
    adbc_free(png);
    return st;
}
