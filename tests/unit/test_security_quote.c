/* SPDX-License-Identifier: Apache-2.0 */
/* Caller strings that reach the device's shell must stay literal. Each
 * hostile string goes through adbc_shell_quote into a real command on the
 * test device (printf of the quoted word, and a file created under that
 * name): the device must print back exactly the string, run nothing else
 * (a canary file that `; touch` would create never appears), and sync must
 * carry the same names byte for byte. Key permissions (0600 on creation,
 * refusal when group/world-readable) are covered in test_auth.c
 * (load_refuses_insecure_permissions and the generate/save tests); the act
 * calls' exact command lines with hostile text in test_act_device.c
 * (type_hostile_text, type_non_ascii). */
#include <stdlib.h>

#include "adbc/shell.h"
#include "adbc/sync.h"
#include "test_act_td.h"
#include "t.h"

static td dev;

static const char *const hostile[] = {
    "; rm -rf /",
    "$(touch /data/local/tmp/pwned)",
    "`touch /data/local/tmp/pwned`",
    "'; touch /data/local/tmp/pwned; '",
    "\"; touch /data/local/tmp/pwned; \"",
    "a\nb\ntouch /data/local/tmp/pwned",
    "x && touch /data/local/tmp/pwned || y",
    "$HOME ${PATH} \\ \\' \\\"",
    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
    "| touch /data/local/tmp/pwned > /data/local/tmp/pwned2 &",
    "-n",
    "",
};

static int pwned(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/data/local/tmp/pwned", dev.dir);
    return access(p, F_OK) == 0;
}

TEST(quoted_strings_stay_literal)
{
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        char *q = NULL;
        CHECK_EQ_INT(adbc_shell_quote(&q, hostile[i]), 0);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "printf '%%s' %s", q);
        adbc_free(q);
        adbc_run_result res;
        memset(&res, 0, sizeof res);
        int rc = adbc_run(&res, dev.conn, ADBC_SHELL_V2, cmd, NULL, 0, 0, 10000);
        if (rc != 0 || res.out_len != strlen(hostile[i]) ||
            memcmp(res.out, hostile[i], res.out_len) != 0)
            fprintf(stderr, "  string %zu: rc %d, got \"%.*s\"\n", i, rc, (int)res.out_len,
                    res.out ? (const char *)res.out : "");
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(res.exit_code, 0);
        CHECK_EQ_INT(res.out_len, strlen(hostile[i]));
        CHECK(memcmp(res.out, hostile[i], res.out_len) == 0);
        adbc_run_result_clear(&res);
        CHECK(!pwned());
    }
}

TEST(sync_paths_stay_literal)
{
    char local[600];
    snprintf(local, sizeof local, "%s.f", dev.dir);
    FILE *f = fopen(local, "wb");
    CHECK(f != NULL);
    fputs("data", f);
    fclose(f);
    adbc_sync *s;
    CHECK_EQ_INT(adbc_sync_open(&s, dev.conn, 10000), 0);
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        if (!hostile[i][0] || strchr(hostile[i], '/'))
            continue; /* a name, not a path */
        char remote[1024];
        snprintf(remote, sizeof remote, "/data/local/tmp/%s", hostile[i]);
        int rc = adbc_sync_push(NULL, s, local, remote, NULL, 10000);
        if (rc != 0)
            fprintf(stderr, "  push \"%s\": %s\n", remote, adbc_last_error());
        CHECK_EQ_INT(rc, 0);
        /* The sandbox holds exactly that name. */
        char onhost[2048];
        snprintf(onhost, sizeof onhost, "%s%s", dev.dir, remote);
        CHECK(access(onhost, F_OK) == 0);
        adbc_sync_statbuf st;
        CHECK_EQ_INT(adbc_sync_stat(&st, s, remote, 10000), 0);
        CHECK_EQ_INT(st.size, 4);
        CHECK(!pwned());
    }
    adbc_sync_close(s);
    remove(local);
}

int main(void)
{
    if (td_start(&dev, NULL) != 0)
        return 1;
    RUN(quoted_strings_stay_literal);
    RUN(sync_paths_stay_literal);
    td_stop(&dev);
    return T_DONE();
}
