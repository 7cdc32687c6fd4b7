/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap: what stops a command from outside. SIGINT, SIGTERM and SIGHUP
 * become a cancel; so does the end of a bounded command's --timeout.
 *
 * The signals are blocked in every thread and taken by one thread that
 * waits for them (no work in a signal handler). The first interrupts the
 * connection (adbc_conn_interrupt): the blocked call returns ADBC_ECANCELED,
 * the command cleans up as after any failure (a pull removes its temporary)
 * and main exits 128 + the signal's number (130, 143, 129). Before there is a
 * connection there is nothing to clean up: the process exits at once. A
 * second signal, or a command still running SIGNAL_GRACE_S after the first,
 * exits at once too.
 *
 * A bounded command (one that is not a transfer or a stream) gets
 * --timeout as a deadline for the whole call: at its end the connection is
 * interrupted the same way and main reports the timeout.
 *
 * A command that runs its own cancellable work (the agent) also registers
 * a flag the first signal sets (snap_signals_flag): the work stops at its
 * next check and the command ends as cancelled. */
#include "snap.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops_core.h"
#include "ops_util.h"

#define SIGNAL_GRACE_S 10

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static adbc_conn *conn;
static atomic_int *cancel_flag;
static _Atomic int got;
static _Atomic int dl_expired; /* the bounded command's deadline passed */
static sigset_t set;

static void *waiter(void *arg)
{
    (void)arg;
    int sig;
    while (sigwait(&set, &sig) != 0)
        ;
    got = sig;
    pthread_mutex_lock(&mu);
    if (cancel_flag)
        atomic_store(cancel_flag, 1);
    int have = conn != NULL || cancel_flag != NULL;
    if (conn)
        adbc_conn_interrupt(conn);
    pthread_mutex_unlock(&mu);
    if (!have) {
        snap_tty_restore();
        _exit(128 + sig);
    }
    struct timespec grace = {SIGNAL_GRACE_S, 0};
    siginfo_t info;
    int again = sigtimedwait(&set, &info, &grace);
    static const char msg[] = "adbc-snap: still running after the interrupt: exiting\n";
    snap_tty_restore();
    if (again < 0 && write(2, msg, sizeof msg - 1) < 0)
        _exit(128 + sig);
    _exit(128 + (again > 0 ? again : sig));
}

int snap_signals_start(void)
{
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    pthread_t th;
    if (pthread_create(&th, NULL, waiter, NULL) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return -1;
    }
    pthread_detach(th);
    return 0;
}

void snap_signals_watch(adbc_conn *c)
{
    pthread_mutex_lock(&mu);
    conn = c;
    if (c && (got || dl_expired))
        adbc_conn_interrupt(c);
    pthread_mutex_unlock(&mu);
}

void snap_signals_flag(atomic_int *flag)
{
    pthread_mutex_lock(&mu);
    cancel_flag = flag;
    if (flag && got)
        atomic_store(flag, 1);
    pthread_mutex_unlock(&mu);
}

int snap_signal_received(void)
{
    return got;
}

/* ---- the call-wide deadline of bounded commands ---- */

static pthread_cond_t dl_cond; /* ops_cond_init: on the monotonic clock */
static int dl_done;

static void *deadline_main(void *arg)
{
    int64_t deadline = ops_now_ms() + *(int *)arg;
    pthread_mutex_lock(&mu);
    while (!dl_done)
        if (ops_cond_wait_until(&dl_cond, &mu, deadline) != 0)
            break;
    if (!dl_done) {
        dl_expired = 1;
        if (conn)
            adbc_conn_interrupt(conn);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

static pthread_t dl_thread;
static int dl_ms, dl_started;

int snap_deadline_start(int ms)
{
    dl_ms = ms;
    if (ops_cond_init(&dl_cond) != 0)
        return -1;
    if (pthread_create(&dl_thread, NULL, deadline_main, &dl_ms) != 0) {
        pthread_cond_destroy(&dl_cond);
        return -1;
    }
    dl_started = 1;
    return 0;
}

int snap_deadline_stop(void)
{
    if (dl_started) {
        pthread_mutex_lock(&mu);
        dl_done = 1;
        pthread_cond_signal(&dl_cond);
        pthread_mutex_unlock(&mu);
        pthread_join(dl_thread, NULL);
        pthread_cond_destroy(&dl_cond);
        dl_started = 0;
    }
    return dl_expired;
}
