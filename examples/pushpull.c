/* SPDX-License-Identifier: Apache-2.0 */
/* Push a file to the device and pull it back, printing progress.
 * Usage: pushpull [-s SERIAL] LOCAL REMOTE LOCAL_COPY */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <adbc/adbc.h>

static int progress(void *user, const adbc_sync_progress *p)
{
    const char *what = user;
    fprintf(stderr, "\r%s %s: %" PRIu64 "/%" PRIu64 " bytes", what, p->src, p->bytes, p->total);
    if (p->file_done)
        fputc('\n', stderr);
    return 0; /* non-zero would cancel the transfer */
}

int main(int argc, char **argv)
{
    const char *serial = NULL;
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "-s") == 0) {
        serial = argv[2];
        i = 3;
    }
    if (argc - i != 3) {
        fprintf(stderr, "usage: %s [-s SERIAL] LOCAL REMOTE LOCAL_COPY\n", argv[0]);
        return 2;
    }
    adbc_conn *c = NULL;
    adbc_sync *s = NULL;
    int rc = adbc_device_connect(&c, serial, NULL);
    if (rc == 0)
        rc = adbc_sync_open(&s, c, 10000);
    adbc_sync_opts o;
    adbc_sync_opts_init(&o);
    o.progress = progress;
    adbc_sync_result res;
    if (rc == 0) {
        o.user = "push";
        rc = adbc_sync_push(&res, s, argv[i], argv[i + 1], &o, 30000);
    }
    if (rc == 0) {
        o.user = "pull";
        rc = adbc_sync_pull(&res, s, argv[i + 1], argv[i + 2], &o, 30000);
    }
    if (rc < 0)
        fprintf(stderr, "error: %s\n", adbc_last_error());
    else
        printf("%" PRIu64 " bytes each way\n", res.bytes);
    adbc_sync_close(s);
    adbc_conn_close(c);
    return rc < 0 ? 1 : 0;
}
