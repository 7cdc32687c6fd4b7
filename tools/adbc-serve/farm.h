/* SPDX-License-Identifier: Apache-2.0 */
/* The farm's pieces inside adbc-serve (docs/farm.md has the data model):
 * farm_redis.c talks to Redis (the URL, connecting, the scripts that change
 * a task), farm.c is the node (registration, taking and running tasks,
 * leases), farm_api.c the HTTP routes and the event stream. Built with
 * hiredis and the agent (ADBC_HAVE_HIREDIS, ADBC_HAVE_AGENT). */
#ifndef ADBC_SERVE_FARM_H
#define ADBC_SERVE_FARM_H

#include <hiredis/hiredis.h>

#include "serve.h"

#define FARM_PREFIX "adbc:farm:"
#define FARM_QUEUE FARM_PREFIX "queue"
#define FARM_GROUP "nodes"
#define FARM_BEAT_MS 1000
#define FARM_NODE_TTL_MS 5000
#define FARM_KEEP_S 86400        /* an ended task's hash and events */
#define FARM_IO_MS 3000          /* bound of one command (a blocking read adds its own block) */
#define FARM_CONNECT_MS 2000
#define FARM_RENEW_MS 250        /* how often a running task's lease is renewed */

/* Where Redis is and how to log in; the password never leaves this struct
 * but for AUTH. */
typedef struct farm_cfg {
    char host[256];
    int port;
    int db;
    char user[128];
    char pass[256];
    char node[65];
    int lease_ms;
    int tls;                 /* rediss:// */
    char ca[512], cert[512], key[512]; /* --farm-ca, --farm-cert, --farm-key */
} farm_cfg;

/* ---- farm_redis.c ---- */
/* Parse redis[s]://[USER@]HOST[:PORT][/DB] into c: 0, or -1 with why. */
int farm_url_parse(farm_cfg *c, const char *url, char *why, size_t cap);
/* A connection, logged in, the database selected, commands bounded by
 * FARM_IO_MS: NULL with why (Redis's own words when it refused). */
redisContext *farm_connect(const farm_cfg *c, char *why, size_t cap);
/* One command (argv), its reply or NULL with why; *dead set when the
 * connection broke (free it and connect again). A reply of type error is
 * returned as it is. */
redisReply *farm_cmd(redisContext *c, int argc, const char **argv, char *why, size_t cap,
                     int *dead);
/* ---- farm_tls.c ---- */
/* A TLS connection to c's Redis (rediss://), verified, with a thread that
 * carries it: the descriptor of its plaintext end for redisConnectFd, or
 * -1 with why. */
int farm_tls_open(const farm_cfg *c, char *why, size_t cap);
/* Ends every such thread (both of its ends shut down) and waits until each
 * has freed its TLS state, at most ms: a stopping node calls it last. */
void farm_tls_wait(int ms);
/* The scripts (EVAL, no keys: every key is named from the prefix). */
extern const char farm_lua_submit[], farm_lua_take[], farm_lua_requeue[], farm_lua_renew[],
    farm_lua_step[], farm_lua_finish[], farm_lua_cancel[], farm_lua_beat[];
/* EVAL script with args; as farm_cmd. */
redisReply *farm_eval(redisContext *c, const char *script, int argc, const char **argv,
                      char *why, size_t cap, int *dead);
/* A task's hash (HGETALL's reply) as the JSON the routes answer. */
cJSON *farm_task_json(const redisReply *hgetall);

/* ---- farm.c: the node ---- */
extern farm_cfg farm_conf;
/* One command (script NULL) or script on the connection the runs' hooks
 * and the routes share (connected on first use and after a failure; a
 * command on a connection Redis closed is sent once more on a new one):
 * its reply (perhaps of type error), or NULL with why. */
extern pthread_mutex_t farm_api_mu;
redisReply *farm_api_call(const char *script, int argc, const char **argv, char *why,
                          size_t cap);
/* Whether --farm was given (the node thread runs). */
int serve_farm_on(void);
/* Whether the node is in the farm now; why not in why. */
int farm_available(char *why, size_t cap);

#endif
