/* SPDX-License-Identifier: Apache-2.0 */
/* File-system helpers the unit tests share: a scratch directory, counting
 * and reading what a transfer left in it, removing it. */
#ifndef ADBC_TEST_FS_H
#define ADBC_TEST_FS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries in a directory other than . and .., -1 if it cannot be read. */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* A scratch directory for a test: test_tmp_make() makes a fresh one under
 * /tmp, test_tmp() names it, test_tmp_path() gives a path in it (from a
 * ring of 8 buffers), test_rm_rf() removes a tree. */
static inline char *test_tmp(void)
{
    static char dir[256];
    return dir;
}

static inline void test_tmp_make(const char *tag)
{
    snprintf(test_tmp(), 256, "/tmp/adbc-%s.XXXXXX", tag);
    if (!mkdtemp(test_tmp()))
        abort();
}

static inline char *test_tmp_path(const char *rel)
{
    static char b[8][512];
    static int k;
    char *p = b[k++ % 8];
    snprintf(p, 512, "%s/%s", test_tmp(), rel);
    return p;
}

static inline void test_rm_rf(const char *p)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup of %s failed\n", p);
}

/* A whole file (malloc'd, at most 64 MiB), or NULL; *n its length. */
static inline uint8_t *test_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *b = malloc(64 << 20);
    *n = b ? fread(b, 1, 64 << 20, f) : 0;
    fclose(f);
    return b;
}

#endif
