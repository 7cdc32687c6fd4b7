/* SPDX-License-Identifier: Apache-2.0 */
/* Screenshots over exec:.
 *
 * Raw first: `screencap` writes a small header and the pixels unencoded,
 * which costs the phone nothing; adbc encodes the PNG (png.c). When the
 * device's raw output is something adbc cannot read (an unknown pixel
 * format, an old device), the auto mode asks for `screencap -p`, which the
 * device encodes itself. stderr goes to /dev/null on the device: exec:
 * mixes it into the pixel stream, and a warning such as "multiple displays
 * found" would otherwise corrupt the frame. */
#include "act/act_internal.h"

#include <string.h>

#include "adbc/shell.h"
#include "core/internal.h"

#define SHOT_MAX ((size_t)256 << 20) /* an 8K RGBA frame is 127 MiB */

/* The whole output of a screencap command (adbc_run over exec:). */
static int read_all(uint8_t **out, size_t *len, adbc_conn *c, const char *cmd, int64_t deadline)
{
    adbc_run_result r;
    int rc = adbc_run(&r, c, ADBC_SHELL_EXEC, cmd, NULL, 0, SHOT_MAX, act_left(deadline));
    if (rc == ADBC_ETIMEDOUT)
        rc = core_fail(ADBC_ETIMEDOUT, "the screenshot did not arrive in time: give it a longer "
                       "timeout");
    *out = rc == 0 ? r.out : NULL;
    *len = rc == 0 ? r.out_len : 0;
    if (rc == 0)
        r.out = NULL;
    adbc_run_result_clear(&r);
    return rc;
}

static int shot_raw(uint8_t **png, size_t *len, adbc_conn *c, int64_t deadline)
{
    uint8_t *data;
    size_t n;
    int rc = read_all(&data, &n, c, "screencap 2>/dev/null", deadline);
    if (rc < 0)
        return rc;
    adbc_frame f;
    rc = adbc_frame_parse(&f, data, n);
    if (rc == 0)
        rc = adbc_frame_png(png, len, &f, 1);
    core_free(data);
    return rc;
}

static int shot_png(uint8_t **png, size_t *len, adbc_conn *c, int64_t deadline)
{
    uint8_t *data;
    size_t n;
    int rc = read_all(&data, &n, c, "screencap -p 2>/dev/null", deadline);
    if (rc < 0)
        return rc;
    rc = act_png_check(data, n, NULL, NULL);
    if (rc < 0) {
        core_free(data);
        return rc;
    }
    *png = data;
    *len = n;
    return 0;
}

int adbc_screenshot(uint8_t **png, size_t *len, adbc_conn *c, adbc_shot_mode mode,
                    int timeout_ms)
{
    if (!png || !len || !c)
        return core_fail(ADBC_EINVAL, "adbc_screenshot: png, len and c must not be NULL");
    *png = NULL;
    *len = 0;
    int64_t deadline = core_deadline(timeout_ms);
    int rc;
    switch (mode) {
    case ADBC_SHOT_RAW: rc = shot_raw(png, len, c, deadline); break;
    case ADBC_SHOT_DEVICE_PNG: rc = shot_png(png, len, c, deadline); break;
    case ADBC_SHOT_AUTO:
        rc = shot_raw(png, len, c, deadline);
        /* Output adbc does not understand: let the device encode. Timeouts
         * and lost connections are not retried. */
        if (rc == ADBC_EFORMAT || rc == ADBC_EUNSUPPORTED)
            rc = shot_png(png, len, c, deadline);
        break;
    default: return core_fail(ADBC_EINVAL, "unknown screenshot mode %d", (int)mode);
    }
    /* The waits inside see what is left of the caller's time (at least
     * 1 ms each): the message names the caller's timeout. */
    if (rc == ADBC_ETIMEDOUT && timeout_ms >= 0)
        rc = core_fail(ADBC_ETIMEDOUT, "the screenshot did not finish within %d ms: give it a "
                                       "longer timeout", timeout_ms);
    return rc;
}
