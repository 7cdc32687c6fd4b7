/* SPDX-License-Identifier: Apache-2.0 */
/* Replays a seed corpus through a harness without libFuzzer: every file of
 * every directory (or file) named on the command line, or by default
 * fixtures/fuzz/FUZZ_NAME under ADBC_SOURCE_DIR (or the working directory).
 * Fails when the corpus is missing or empty, so a misplaced corpus cannot
 * pass silently. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path, long *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    /* An exact-size copy, so ASan sees reads past the end of the input. */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    (*count)++;
    return 0;
}

static int replay_path(const char *path, long *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s does not exist\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path, count);
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
            if (replay_path(sub, count) != 0)
                rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long count = 0;
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (replay_path(argv[i], &count) != 0)
                rc = 1;
    } else {
        const char *top = getenv("ADBC_SOURCE_DIR");
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/fixtures/fuzz/%s", top ? top : ".", FUZZ_NAME);
        if (replay_path(dir, &count) != 0)
            rc = 1;
    }
    printf("replay %s: %ld inputs\n", FUZZ_NAME, count);
    if (count == 0) {
        fprintf(stderr, "replay %s: no inputs found\n", FUZZ_NAME);
        return 1;
    }
    return rc;
}
