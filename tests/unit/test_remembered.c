/* SPDX-License-Identifier: Apache-2.0 */
/* The remembered TCP devices (lib/devices/remembered.c): the file's place,
 * add / list / remove, only HOST:PORT accepted, a broken line skipped, a
 * missing file an empty list, and the mode the file gets. */
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adbc/devices.h"
#include "adbc/error.h"

static char dir[] = "/tmp/adbc-remembered-XXXXXX";
static char file[256];

static size_t count(void)
{
    char **l;
    size_t n;
    if (adbc_remembered_list(&l, &n) < 0)
        return (size_t)-1;
    adbc_remembered_free(l, n);
    return n;
}

TEST(path_rule)
{
    char buf[256];
    unsetenv("ADBC_DEVICES_FILE");
    setenv("XDG_STATE_HOME", "/x/state", 1);
    CHECK_EQ_INT(adbc_remembered_path(buf, sizeof buf), 0);
    CHECK_STR(buf, "/x/state/adbc/devices");
    unsetenv("XDG_STATE_HOME");
    setenv("HOME", "/h", 1);
    CHECK_EQ_INT(adbc_remembered_path(buf, sizeof buf), 0);
    CHECK_STR(buf, "/h/.local/state/adbc/devices");
    CHECK_EQ_INT(adbc_remembered_path(buf, 4), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_remembered_path(NULL, 10), ADBC_EINVAL);
    setenv("ADBC_DEVICES_FILE", file, 1);
    CHECK_EQ_INT(adbc_remembered_path(buf, sizeof buf), 0);
    CHECK_STR(buf, file);
}

TEST(add_list_remove)
{
    unlink(file);
    CHECK_EQ_INT((int)count(), 0); /* no file: nothing remembered */
    CHECK_EQ_INT(adbc_remembered_add("10.0.0.2:5555"), 0);
    CHECK_EQ_INT(adbc_remembered_add("[::1]:37001"), 0);
    CHECK_EQ_INT(adbc_remembered_add("10.0.0.2:5555"), 1); /* already there */
    char **l;
    size_t n;
    CHECK_EQ_INT(adbc_remembered_list(&l, &n), 0);
    CHECK_EQ_INT((int)n, 2);
    if (n == 2) {
        CHECK_STR(l[0], "10.0.0.2:5555");
        CHECK_STR(l[1], "[::1]:37001");
    }
    adbc_remembered_free(l, n);
    struct stat st;
    CHECK_EQ_INT(stat(file, &st), 0);
    CHECK_EQ_INT((int)(st.st_mode & 0777), 0600);
    CHECK_EQ_INT(adbc_remembered_remove("10.0.0.2:5555"), 0);
    CHECK_EQ_INT(adbc_remembered_remove("10.0.0.2:5555"), ADBC_ENOTFOUND);
    CHECK_EQ_INT((int)count(), 1);
    CHECK_EQ_INT(adbc_remembered_remove(NULL), 0);
    CHECK_EQ_INT((int)count(), 0);
}

TEST(only_tcp_devices)
{
    CHECK_EQ_INT(adbc_remembered_add(NULL), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_remembered_add("emulator-5554"), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_remembered_add("R58M12ABCDE"), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_remembered_add("usb:1-4.2"), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_remembered_list(NULL, NULL), ADBC_EINVAL);
}

TEST(broken_lines_skipped)
{
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("garbage\n\n10.0.0.3:5555\nemulator-5554\n10.0.0.4:5555", f); /* no last newline */
    fclose(f);
    char **l;
    size_t n;
    CHECK_EQ_INT(adbc_remembered_list(&l, &n), 0);
    CHECK_EQ_INT((int)n, 2);
    if (n == 2) {
        CHECK_STR(l[0], "10.0.0.3:5555");
        CHECK_STR(l[1], "10.0.0.4:5555");
    }
    adbc_remembered_free(l, n);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(file, sizeof file, "%s/sub/devices", dir);
    RUN(path_rule);
    RUN(add_list_remove);
    RUN(only_tcp_devices);
    RUN(broken_lines_skipped);
    unlink(file);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    rmdir(sub);
    rmdir(dir);
    return T_DONE();
}
