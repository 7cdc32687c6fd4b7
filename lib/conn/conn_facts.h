/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the device a connection leads to, learnt once by the layers
 * above and kept with the connection (a device does not change its Android
 * version while connected), so each is asked for once, not on every call;
 * and state a layer above keeps for the life of the connection (lib/ui's
 * DevTools sessions, docs/webview.md), ended by adbc_conn_close before
 * anything else, while the connection still works. Not installed. */
#ifndef ADBC_CONN_FACTS_H
#define ADBC_CONN_FACTS_H

#include "adbc/conn.h"

enum {
    CONN_FACT_SDK = 0,   /* ro.build.version.sdk (lib/act: `cmd input`, typing) */
    CONN_FACT_NO_SDK = 1, /* adbc_device_sdk asked and got none: it does not ask again */
    CONN_FACTS = 4
};

/* The fact, or 0 when not known yet (also for a NULL connection). */
int conn_fact(const adbc_conn *c, int which);
/* Remember a fact (non-zero). Threads may race to set it: the value is the
 * same, whoever wins. */
void conn_fact_set(adbc_conn *c, int which, int value);

enum {
    CONN_KEPT_WEB = 0,   /* lib/ui/web.c: the pages' DevTools sessions */
    CONN_KEPTS = 2
};

/* The state kept in slot which, or NULL. */
void *conn_kept(adbc_conn *c, int which);
/* Keep p in slot which, to be ended by end(p) when the connection closes
 * (adbc_conn_close calls it first, the connection still usable). When the
 * slot is taken already (another thread won), nothing changes: returns the
 * state kept there, and the caller ends its own p. */
void *conn_keep(adbc_conn *c, int which, void *p, void (*end)(void *p));

#endif
