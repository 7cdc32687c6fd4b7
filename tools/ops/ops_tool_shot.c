/* SPDX-License-Identifier: Apache-2.0 */
/* Screenshots: a PNG written to the front end's screenshot directory (atomically: a
 * temporary name, then rename), described by path, size and time, and on
 * request also returned as MCP image content. */
#include "ops_tool.h"

#include "ops_json.h"
#include "ops_util.h"
#include "portable.h"

#include "adbc/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int ops_tool_host_path(ops_call *c, const char *ext, char *path, size_t n, char *iso,
                       size_t isz)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t now = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[80];
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(iso, isz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(now % 1000));
    if (!ext)
        return 0;
    /* The serial goes into a file name: keep only harmless characters. */
    char ser[64];
    size_t k = 0;
    for (const char *p = c->dev ? c->dev->serial : "local"; *p && k + 1 < sizeof(ser); p++)
        ser[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                           (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'
                       ? *p : '_';
    ser[k] = 0;
    static int seq;
    int q = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
    if (!c->fe->shot_dir || make_dirs(c->fe->shot_dir) != 0)
        return -1;
    if (snprintf(path, n, "%s/%s-%s-%03d-%d.%s", c->fe->shot_dir, ser, stamp, (int)(now % 1000),
                 q, ext) >= (int)n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int ops_tool_host_tmp(ops_call *c, const char *ext, char *final, size_t n, char *tmp,
                      size_t tn, char *iso, size_t isz)
{
    if (ops_tool_host_path(c, ext, final, n, iso, isz) != 0)
        return -1;
    if (portable_tmp_size(final) > tn) {
        errno = ENAMETOOLONG;
        return -1;
    }
    portable_tmp_name(tmp, tn, final);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

int ops_tool_host_commit(const char *tmp, const char *final)
{
    if (chmod(tmp, 0644) != 0 || rename(tmp, final) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

void ops_tool_file_json(ops_call *c, const char *path, uint64_t bytes, const char *iso,
                        const char *mime, cJSON *extra)
{
    char abs[PATH_MAX];
    cJSON *info = cJSON_CreateObject();
    if (path && !realpath(path, abs))
        snprintf(abs, sizeof abs, "%s", path);
    if (info && path)
        cJSON_AddStringToObject(info, "path", abs);
    if (info) {
        cJSON_AddNumberToObject(info, "bytes", (double)bytes);
        if (iso)
            cJSON_AddStringToObject(info, "timestamp", iso);
        cJSON_AddStringToObject(info, "mimeType", mime);
    }
    while (info && extra && extra->child) {
        cJSON *m = cJSON_DetachItemViaPointer(extra, extra->child);
        cJSON_AddItemToObject(info, m->string, m);
    }
    cJSON_Delete(extra);
    char *js = info ? cJSON_PrintUnformatted(info) : NULL;
    cJSON_Delete(info);
    ops_call_text_raw(c, js ? js : "{}");
    free(js);
}

static int t_screenshot(ops_call *c, const cJSON *a)
{
    int image = 0, grid = 0;
    if (ops_call_bool(c, a, "include_image", &image) || ops_call_bool(c, a, "grid", &grid) ||
        ops_call_device(c))
        return -1;
    uint8_t *png = NULL;
    size_t len = 0;
    int rc = adbc_screenshot(&png, &len, c->dev->conn, ADBC_SHOT_AUTO, ops_call_remaining(c));
    if (rc < 0)
        return ops_call_adbc(c, rc, "screenshot");
    const char *dir = c->fe->shot_dir;
    char path[PATH_MAX], iso[80];
    /* Without a directory (a front end that keeps no files): no file. */
    if (dir && (ops_tool_host_path(c, "png", path, sizeof path, iso, sizeof iso) != 0 ||
                ops_write_file_atomic(path, png, len, 0644, 0) != 0)) {
        adbc_free(png);
        return ops_call_fail(c, OPS_EFAIL,
                             "cannot write the screenshot under %s: %s (set [screenshots] dir "
                             "in the config to a writable directory)", dir, strerror(errno));
    }
    if (!dir)
        ops_tool_host_path(c, NULL, path, sizeof path, iso, sizeof iso);
    cJSON *size = cJSON_CreateObject();
    if (size && len >= 24) { /* IHDR: width and height, big-endian, after the signature */
        cJSON_AddNumberToObject(size, "width", (double)((uint32_t)png[16] << 24 | png[17] << 16 |
                                                        png[18] << 8 | png[19]));
        cJSON_AddNumberToObject(size, "height", (double)((uint32_t)png[20] << 24 |
                                                         png[21] << 16 | png[22] << 8 | png[23]));
    }
    ops_tool_file_json(c, dir ? path : NULL, len, iso, "image/png", size);
    if (grid) {
        adbc_act_opts o;
        adbc_ui_opts uo;
        ops_ctx oc;
        ops_call_ctx(c, &oc);
        ops_act_opts(&oc, &o, &uo);
        adbc_grid g;
        char *legend = NULL;
        rc = adbc_act_grid(&g, c->dev->conn, &o);
        if (rc == 0)
            rc = adbc_grid_legend(&legend, &g);
        if (rc < 0)
            ops_call_text(c, "(no grid: %s)", adbc_last_error());
        else
            ops_call_text_raw(c, legend);
        adbc_free(legend);
    }
    rc = image ? ops_call_image(c, png, len, "image/png") : 0;
    adbc_free(png);
    return rc;
}

const ops_tool ops_tools_shot[] = {
    {"screenshot", "Take a screenshot",
     "Save the screen as a PNG in the screenshot directory and return its path, bytes, "
     "timestamp, size and mimeType. include_image: true also returns the picture itself; "
     "grid: true adds the tap_grid layout.",
     "{\"type\":\"object\",\"properties\":{\"include_image\":{\"type\":\"boolean\"},\"grid\":"
     "{\"type\":\"boolean\"}},\"additionalProperties\":false}",
     t_screenshot, 0}, /* it writes a file */
    {NULL, NULL, NULL, NULL, NULL, 0},
};
