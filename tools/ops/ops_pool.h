/* SPDX-License-Identifier: Apache-2.0 */
/* The device pool every front end holds its devices in (ops_pool.c): each
 * device's connection, its lock (held for the whole of a call, taken within
 * a bound, else OPS_EBUSY), its latest snapshot, what kind of device it is,
 * and reconnecting after the connection is lost.
 *
 * Two ways to reconnect, chosen per pool:
 *  - on the next call (adbc-mcp): a call finding the device gone connects
 *    within its own deadline and fails with the connect's error;
 *  - in the background (adbc-serve): a thread retries with a backoff that
 *    doubles from 100 ms to 5 s, so a device that comes back is in use again
 *    within a few seconds; a call while it is away fails at once
 *    (OPS_EDEVICE) saying when the next try is. The thread connects without
 *    holding the device's lock, so a gone device never looks busy: a call
 *    meanwhile fails at once, or, before the device's first connection,
 *    waits for it within its busy bound.
 *
 * Once ops_pool_stop is called, a call that does not hold its device yet
 * (one waiting for the lock among them) fails at once with OPS_ESTOPPING,
 * nothing sent; a call holding it runs to its end.
 *
 * The emulator check (check_kind): an emulator is told from a physical
 * device by what the device itself says, ro.kernel.qemu or ro.boot.qemu = 1,
 * read on connecting; never by its name (an "emulator-N" serial is only
 * where adbd listens). When those cannot be read the device is no emulator:
 * the connection is dropped and the call fails (a policy that refuses
 * physical devices must never take an unknown one for an emulator).
 *
 * No JSON, no printing except the pool's log lines on stderr ("NAME: ...").
 * Devices are added, never removed before ops_pool_free: a device pointer
 * stays valid for any thread that found it. */
#ifndef ADBC_OPS_POOL_H
#define ADBC_OPS_POOL_H

#include <pthread.h>
#include <stdint.h>

#include "adbc/conn.h"
#include "adbc/ui.h"
#include "ops_core.h"

typedef enum ops_kind { OPS_KIND_UNKNOWN = 0, OPS_KIND_EMULATOR, OPS_KIND_PHYSICAL } ops_kind;

/* "emulator", "physical", "not connected". */
const char *ops_kind_name(ops_kind kind);

typedef enum ops_dev_state { OPS_DEV_CONNECTING = 0, OPS_DEV_CONNECTED, OPS_DEV_GONE } ops_dev_state;

typedef struct ops_dev {
    char serial[256];        /* as named: what -s takes ("" the selection rule's default) */
    pthread_mutex_t lock;    /* held for the whole of a call (ops_dev_take .. ops_dev_give) */
    /* The fields below are the lock holder's. */
    adbc_conn *conn;         /* NULL until connected, or while gone */
    adbc_ui_snap *last;      /* the latest snapshot: the refs acts take */
    ops_kind kind;           /* decided on connecting (OPS_KIND_UNKNOWN without check_kind) */
    char serialno[128];      /* ro.serialno, read with the kind; "" when unknown */
    char error[512];         /* why the last connect failed, or the connection was lost */
    int64_t next_try;        /* background: monotonic ms of the next connect attempt */
    int backoff_ms;          /* background: 0 while connected */
    struct adbc_shell *rec;  /* a screen recording running on conn (ops_record_start) */
    pthread_cond_t ready;    /* with lock: the background connect ended */
    /* Read without the lock. */
    _Atomic int connecting;  /* background: the thread is connecting (lock not held) */
    _Atomic int state;       /* ops_dev_state */
    _Atomic unsigned long calls; /* calls served */
    struct ops_dev *next;    /* the pool's order: the order devices were added */
    struct ops_pool *pool;   /* the pool it is in */
} ops_dev;

typedef struct ops_pool_opts {
    const char *name;        /* the program, in log lines ("adbc-serve") */
    int connect_ms;          /* bound of one connect with its handshake; default 10000 */
    int io_ms;               /* the connections' io_timeout_ms; 0: adbc's default */
    int check_kind;          /* 1: decide emulator or physical on connecting */
    int background;          /* 1: reconnect in a background thread (see above) */
    const char *busy_hint;   /* how the caller sets the busy bound, in the busy error
                                (" (?wait=MS)"); NULL: none */
    /* Called (the device's lock held) just before a device's connection is
     * closed, for what was built on it and must go first (adbc-serve's held
     * forwards); NULL: nothing. */
    void (*on_conn_close)(void *user, ops_dev *d, adbc_conn *c);
    /* Called (the lock held) with the options of each connect of a device,
     * for what must be set before connecting (adbc-serve's held reverse
     * rules accept the streams the device opens); NULL: nothing. */
    void (*on_conn_opts)(void *user, ops_dev *d, adbc_conn_opts *o);
    /* Called (the lock held) once a device is connected, with its new
     * connection (adbc-serve's adb server relays streams on it without
     * taking the lock, until on_conn_close); NULL: nothing. */
    void (*on_conn_ready)(void *user, ops_dev *d, adbc_conn *c);
    void *user;
} ops_pool_opts;

typedef struct ops_pool {
    ops_pool_opts o;
    pthread_mutex_t lock;    /* the list */
    ops_dev *devs, **tail;
    int ndevs;
    _Atomic int stopping;
    _Atomic int64_t gone_since; /* background: monotonic ms since no device is connected
                                   or in use; 0 while one is */
    int thread_started;
    pthread_t reconnector;
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;     /* on CLOCK_MONOTONIC */
} ops_pool;

void ops_pool_opts_init(ops_pool_opts *o);
/* 0, or -1 with e set (the background thread could not start). */
int ops_pool_init(ops_pool *p, const ops_pool_opts *o, ops_err *e);
/* Stop the background thread, close every connection, free every device.
 * No call may hold a device. */
void ops_pool_free(ops_pool *p);
/* Stop the background thread (the devices stay); from now on calls that do
 * not hold their device fail with OPS_ESTOPPING. Idempotent. */
void ops_pool_stop(ops_pool *p);

/* The device named serial, added when the pool does not have it yet (not
 * connected: the first ops_dev_take does that). NULL with e set when the
 * name is too long or memory ran out. */
ops_dev *ops_pool_dev(ops_pool *p, const char *serial, ops_err *e);
/* The device named serial, or NULL: nothing is added. */
ops_dev *ops_pool_find(ops_pool *p, const char *serial);
/* Up to max devices, in the order they were added; returns how many. */
int ops_pool_list(ops_pool *p, ops_dev **out, int max);

/* Take d for one call: lock it within wait_ms (OPS_EBUSY past it, naming the
 * bound; OPS_ESTOPPING once the pool stops), drop a connection that failed
 * meanwhile, connect when it has none (within the pool's connect_ms and what
 * is left to deadline, monotonic ms) and, with check_kind, decide its kind.
 * On failure nothing is held. */
int ops_dev_take(ops_pool *p, ops_dev *d, int wait_ms, int64_t deadline, ops_err *e);
/* End the call: a connection that failed (or code OPS_EDEVICE) is dropped
 * and reconnected as the pool does; then the lock is released. */
void ops_dev_give(ops_pool *p, ops_dev *d, ops_code code);
/* Close d's connection (its lock held), e.g. a device a policy refuses. */
void ops_dev_drop(ops_dev *d);

/* Background: monotonic ms since no device was connected or in use; 0 while
 * one is (or before the thread first looked). */
int64_t ops_pool_gone_since(const ops_pool *p);

/* Emulator or physical, by facts only (the rule above): ro.kernel.qemu /
 * ro.boot.qemu read from conn (serial only names the device in messages,
 * whatever it looks like); *serialno
 * gets ro.serialno ("" when unreadable). A fact that cannot be read is -1
 * with e set and *kind OPS_KIND_UNKNOWN: a policy that refuses physical
 * devices must refuse it. */
int ops_device_kind(ops_kind *kind, char *serialno, size_t cap, adbc_conn *conn,
                    const char *serial, int64_t deadline, ops_err *e);
/* The allowlist rule every front end applies (adbc-mcp's, the agent's): a
 * device may be driven when it is an emulator, or its serial (as named,
 * or the mDNS instance a "NAME._adb-tls-connect._tcp" serial holds) or its
 * ro.serialno is on list. ops_listed: that serial alone is on list. */
int ops_allowed(ops_kind kind, const char *serial, const char *serialno,
                const char *const *list, size_t n);
int ops_listed(const char *serial, const char *const *list, size_t n);
/* "NAME._adb-tls-connect._tcp" (or "._adb._tcp", ".local" after it): NAME,
 * the mDNS instance, into out; 0 when serial names none. */
int ops_mdns_instance(char *out, size_t len, const char *serial);

/* Lock m within ms milliseconds: 0, ETIMEDOUT, or another errno. */
int ops_lock_within(pthread_mutex_t *m, int ms);

#endif
