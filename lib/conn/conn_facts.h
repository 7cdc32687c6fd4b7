/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the device a connection leads to, learnt once by the layers
 * above and kept with the connection (a device does not change its Android
 * version while connected), so each is asked for once, not on every call.
 * Not installed. */
#ifndef ADBC_CONN_FACTS_H
#define ADBC_CONN_FACTS_H

#include "adbc/conn.h"

enum {
    CONN_FACT_SDK = 0,   /* ro.build.version.sdk (lib/act: `cmd input`, typing) */
    CONN_FACTS = 4
};

/* The fact, or 0 when not known yet (also for a NULL connection). */
int conn_fact(const adbc_conn *c, int which);
/* Remember a fact (non-zero). Threads may race to set it: the value is the
 * same, whoever wins. */
void conn_fact_set(adbc_conn *c, int which, int value);

#endif
