/* SPDX-License-Identifier: Apache-2.0 */
/* Take a snapshot of the screen, print it, find an element by its text and
 * tap it. Usage: tap [-s SERIAL] TEXT */
#include <stdio.h>
#include <stdlib.h>
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
    if (i + 1 != argc) {
        fprintf(stderr, "usage: %s [-s SERIAL] TEXT\n", argv[0]);
        return 2;
    }
    adbc_conn *c;
    if (adbc_device_connect(&c, serial, NULL) < 0) {
        fprintf(stderr, "connect: %s\n", adbc_last_error());
        return 1;
    }
    adbc_ui_snap *snap = NULL;
    int *refs = NULL;
    size_t n = 0;
    int rc = adbc_ui_snapshot(&snap, c, NULL);
    if (rc == 0) {
        fputs(adbc_ui_snap_text(snap, NULL), stdout);
        /* Structs the caller fills in carry their size (docs/abi.md). */
        adbc_ui_selector sel = {.size = sizeof sel, .text = argv[i]};
        rc = adbc_ui_find(&refs, &n, snap, &sel);
    }
    if (rc == 0 && n != 1) {
        fprintf(stderr, "%zu elements match \"%s\": give a more precise text\n", n, argv[i]);
        rc = -1;
    } else if (rc == 0) {
        const adbc_ui_ref *ref = adbc_ui_reftab_get(adbc_ui_snap_refs(snap), refs[0]);
        adbc_act_where where;
        rc = adbc_act_tap(&where, c, ref, NULL);
        if (rc == 0)
            printf("tapped ref %d at %d,%d\n", refs[0], where.x, where.y);
    }
    if (rc < 0 && rc != -1)
        fprintf(stderr, "error: %s\n", adbc_last_error());
    adbc_free(refs);
    adbc_ui_snap_free(snap);
    adbc_conn_close(c);
    return rc < 0 ? 1 : 0;
}
