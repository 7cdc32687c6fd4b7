/* SPDX-License-Identifier: Apache-2.0 */
/* The workload the fault-injection tests break at every point: connect and
 * handshake, a shell v2 run, a push and a pull of a small file, against the
 * test device (fixtures/testdevice, started once per test program). It
 * reports the first error and checks the rules that must hold whatever
 * failed: an error has a message, and a pull that failed left no file (nor a
 * temporary) under the local directory. */
#ifndef TEST_FAULT_SCENARIO_H
#define TEST_FAULT_SCENARIO_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "adbc/adbc.h"
#include "adbc/shell.h"
#include "adbc/sync.h"
#include "test_act_td.h"

typedef struct fault_env {
    td dev;
    char local[512];   /* a scratch directory */
    char src[600];     /* the file pushed */
    char dst[600];     /* where it is pulled to */
    adbc_keyring *ring;
} fault_env;

static int fault_env_init(fault_env *e)
{
    if (td_start(&e->dev, NULL) != 0)
        return -1;
    adbc_conn_close(e->dev.conn); /* each scenario connects by itself */
    e->dev.conn = NULL;
    snprintf(e->local, sizeof e->local, "%s.local", e->dev.dir);
    if (mkdir(e->local, 0700) != 0)
        return -1;
    snprintf(e->src, sizeof e->src, "%s/src.bin", e->local);
    snprintf(e->dst, sizeof e->dst, "%s/pulled/dst.bin", e->local);
    FILE *f = fopen(e->src, "wb");
    if (!f)
        return -1;
    for (int i = 0; i < 3000; i++)
        fputc(i * 7 & 0xff, f);
    fclose(f);
    return adbc_keyring_new(&e->ring);
}

static void fault_env_free(fault_env *e)
{
    adbc_keyring_free(e->ring);
    td_rm_rf(e->local);
    td_stop(&e->dev);
}

/* Number of entries in dir (recursively), -1 if it does not exist. */
static int fault_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
    }
    closedir(d);
    return n;
}

typedef struct fault_result {
    int rc;             /* first error, 0 if all succeeded */
    const char *stage;  /* where it failed */
    char msg[512];
    int partial;        /* a failed pull left something behind */
} fault_result;

#define FAULT_STEP(name, call)                                   \
    do {                                                         \
        if (r->rc == 0) {                                        \
            int rc_ = (call);                                    \
            if (rc_ < 0) {                                       \
                r->rc = rc_;                                     \
                r->stage = name;                                 \
                snprintf(r->msg, sizeof r->msg, "%s", adbc_last_error()); \
            }                                                    \
        }                                                        \
    } while (0)

/* Run the workload over transport t (NULL: connect over TCP). */
static void fault_run(fault_env *e, adbc_transport *t, fault_result *r)
{
    memset(r, 0, sizeof *r);
    r->stage = "";
    char pulled_dir[620];
    snprintf(pulled_dir, sizeof pulled_dir, "%s/pulled", e->local);
    td_rm_rf(pulled_dir);
    adbc_conn_opts o;
    adbc_conn_opts_init(&o);
    o.keys = e->ring;
    o.connect_timeout_ms = 5000;
    o.io_timeout_ms = 5000;
    adbc_conn *c = NULL;
    if (t)
        FAULT_STEP("connect", adbc_conn_open(&c, t, &o));
    else
        FAULT_STEP("connect", adbc_connect(&c, e->dev.addr, &o));
    adbc_run_result res;
    memset(&res, 0, sizeof res);
    FAULT_STEP("shell", adbc_run(&res, c, ADBC_SHELL_V2, "echo hello; echo err >&2", NULL, 0, 0,
                                 5000));
    if (r->rc == 0 && (res.out_len != 6 || memcmp(res.out, "hello\n", 6) != 0 || res.exit_code != 0)) {
        r->rc = -999;
        r->stage = "shell output wrong";
    }
    adbc_run_result_clear(&res);
    adbc_sync *s = NULL;
    FAULT_STEP("sync open", adbc_sync_open(&s, c, 5000));
    FAULT_STEP("push", adbc_sync_push(NULL, s, e->src, "/data/local/tmp/f.bin", NULL, 5000));
    int before_pull = r->rc;
    FAULT_STEP("pull", adbc_sync_pull(NULL, s, "/data/local/tmp/f.bin", e->dst, NULL, 5000));
    if (before_pull == 0 && r->rc != 0) {
        struct stat st;
        int n = fault_count_files(pulled_dir);
        r->partial = stat(e->dst, &st) == 0 || n > 0;
    }
    if (r->rc == 0) {
        struct stat a, b;
        if (stat(e->src, &a) != 0 || stat(e->dst, &b) != 0 || a.st_size != b.st_size) {
            r->rc = -998;
            r->stage = "pulled file differs";
        }
    }
    if (s)
        adbc_sync_close(s);
    if (c)
        adbc_conn_close(c);
}

#endif
