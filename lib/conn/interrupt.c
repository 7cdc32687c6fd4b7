/* SPDX-License-Identifier: Apache-2.0 */
/* Cancelling a connection's blocked calls (adbc_conn_interrupt).
 *
 * The flag is read by every wait loop of the stream calls at each wake-up;
 * setting it wakes them all. It stays set until cleared, so a call that
 * was about to block when the interrupt came fails as promptly as one that
 * was already waiting. */
#include "conn/conn_int.h"

void adbc_conn_interrupt(adbc_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->interrupted = 1;
    conn_wake_streams(c);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

void adbc_conn_clear_interrupt(adbc_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->interrupted = 0;
    pthread_mutex_unlock(&c->mu);
}

int adbc_conn_interrupted(const adbc_conn *c)
{
    return c && c->interrupted;
}

int conn_cancelled(void)
{
    return core_fail(ADBC_ECANCELED, "interrupted: the operation was cancelled before it "
                                     "finished");
}
