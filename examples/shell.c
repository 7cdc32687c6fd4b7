/* SPDX-License-Identifier: Apache-2.0 */
/* Connect to a device and run one shell command: the exit status comes back
 * with shell v2. Usage: shell [-s SERIAL] COMMAND
 * SERIAL is anything adbc-snap's -s takes (HOST:PORT, emulator-5554, a USB
 * serial); without it $ANDROID_SERIAL, then the only device. */
#include <stdio.h>
#include <string.h>

#include <adbc/adbc.h>

int main(int argc, char **argv)
{
    const char *serial = NULL;
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "-s") == 0) {
        serial = argv[2];
        i = 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [-s SERIAL] COMMAND\n", argv[0]);
        return 2;
    }
    adbc_conn *c;
    if (adbc_device_connect(&c, serial, NULL) < 0) {
        fprintf(stderr, "connect: %s\n", adbc_last_error());
        return 1;
    }
    adbc_run_result r;
    int rc = adbc_run(&r, c, ADBC_SHELL_AUTO, argv[i], NULL, 0, 0, 10000);
    if (rc < 0) {
        fprintf(stderr, "shell: %s\n", adbc_last_error());
        adbc_conn_close(c);
        return 1;
    }
    fwrite(r.out, 1, r.out_len, stdout);
    fwrite(r.err, 1, r.err_len, stderr);
    int status = r.exit_code;
    adbc_run_result_clear(&r);
    adbc_conn_close(c);
    return status;
}
