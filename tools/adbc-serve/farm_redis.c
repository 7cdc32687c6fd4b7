/* SPDX-License-Identifier: Apache-2.0 */
/* The farm's Redis: the URL, a bounded connection with its login, one
 * command with its failure told apart (the connection broke, or Redis said
 * no), and the Lua scripts that change a task. Each script checks who owns
 * the task and changes it in one step, so no two nodes act on one task at
 * once; times are Redis's clock (TIME), the same for every node. */
#if defined(ADBC_HAVE_HIREDIS) && defined(ADBC_HAVE_AGENT)

#include "farm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

int farm_url_parse(farm_cfg *c, const char *url, char *why, size_t cap)
{
    const char *p;
    c->tls = strncmp(url, "rediss://", 9) == 0;
    if (!c->tls && strncmp(url, "redis://", 8) != 0) {
        snprintf(why, cap, "--farm takes redis://[USER@]HOST[:PORT][/DB] (rediss:// for TLS)");
        return -1;
    }
    p = url + 8 + c->tls;
    const char *at = strchr(p, '@'), *slash = strchr(p, '/');
    if (at && (!slash || at < slash)) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon) {
            snprintf(why, cap, "--farm: a password in the URL would be on this process's "
                     "command line for every user to read: give it in --farm-password-file "
                     "FILE (mode 0600) or ADBC_FARM_PASSWORD");
            return -1;
        }
        size_t n = (size_t)(at - p);
        if (n == 0 || n >= sizeof c->user) {
            snprintf(why, cap, "--farm: the user name is empty or too long");
            return -1;
        }
        memcpy(c->user, p, n);
        c->user[n] = '\0';
        p = at + 1;
    }
    const char *hend;
    if (*p == '[') { /* [IPv6]:port */
        hend = strchr(p, ']');
        if (!hend) {
            snprintf(why, cap, "--farm: an IPv6 address needs its closing ]");
            return -1;
        }
        p++;
    } else {
        hend = p + strcspn(p, ":/");
    }
    size_t hn = (size_t)(hend - p);
    if (hn == 0 || hn >= sizeof c->host) {
        snprintf(why, cap, "--farm: no host, or a host name too long");
        return -1;
    }
    memcpy(c->host, p, hn);
    c->host[hn] = '\0';
    p = hend + (*hend == ']');
    c->port = 6379;
    c->db = 0;
    char *end;
    if (*p == ':') {
        long port = strtol(p + 1, &end, 10);
        if (end == p + 1 || port < 1 || port > 65535 || (*end && *end != '/')) {
            snprintf(why, cap, "--farm: the port must be 1..65535");
            return -1;
        }
        c->port = (int)port;
        p = end;
    }
    if (*p == '/' && p[1]) {
        long db = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end || db < 0 || db > 65535) {
            snprintf(why, cap, "--farm: the database after / must be a number");
            return -1;
        }
        c->db = (int)db;
    } else if (*p && strcmp(p, "/") != 0) {
        snprintf(why, cap, "--farm: unexpected '%.40s' after the host", p);
        return -1;
    }
    return 0;
}

redisReply *farm_cmd(redisContext *c, int argc, const char **argv, char *why, size_t cap,
                     int *dead)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    if (!r || c->err) {
        snprintf(why, cap, "redis: %s", c->err ? c->errstr : "no reply");
        if (r)
            freeReplyObject(r);
        *dead = 1;
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR)
        snprintf(why, cap, "redis: %s", r->str);
    return r;
}

/* 0 done, 1 Redis refused it, 2 the connection broke. */
static int say_no(redisContext *c, int argc, const char **argv, char *why, size_t cap)
{
    int dead = 0;
    redisReply *r = farm_cmd(c, argc, argv, why, cap, &dead);
    int bad = !r ? 2 : r->type == REDIS_REPLY_ERROR;
    if (r)
        freeReplyObject(r);
    return bad;
}

/* Why Redis may close a connection at its first command: what to try. */
static void closed_hint(const farm_cfg *cf, char *out, size_t cap)
{
    snprintf(out, cap, "%s", cf->tls ? (cf->cert[0] ? "" : " (Redis closed the connection: "
                                        "if it asks for a client certificate, give --farm-cert "
                                        "and --farm-key)")
                                     : " (Redis closed the connection: if that port speaks "
                                       "TLS, give rediss://)");
}

redisContext *farm_connect(const farm_cfg *cf, char *why, size_t cap)
{
    struct timeval ct = {FARM_CONNECT_MS / 1000, (FARM_CONNECT_MS % 1000) * 1000};
    struct timeval io = {FARM_IO_MS / 1000, (FARM_IO_MS % 1000) * 1000};
    redisContext *c;
    if (cf->tls) {
        int fd = farm_tls_open(cf, why, cap);
        if (fd < 0)
            return NULL;
        c = redisConnectFd(fd);
        if (!c || c->err) {
            snprintf(why, cap, "redis at %s:%d over TLS: %s", cf->host, cf->port,
                     c ? c->errstr : "out of memory");
            if (c)
                redisFree(c);
            else
                close(fd);
            return NULL;
        }
    } else {
        c = redisConnectWithTimeout(cf->host, cf->port, ct);
    }
    if (!c || c->err) {
        snprintf(why, cap, "redis at %s:%d: %s (is redis-server running there?)", cf->host,
                 cf->port, c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, io);
    if (cf->pass[0]) {
        const char *a[] = {"AUTH", cf->user, cf->pass};
        int bad = cf->user[0] ? say_no(c, 3, a, why, cap)
                              : say_no(c, 2, (const char *[]){"AUTH", cf->pass}, why, cap);
        if (bad) {
            size_t n = strlen(why);
            if (bad == 1)
                snprintf(why + n, cap - n, " (check --farm-password-file or "
                         "ADBC_FARM_PASSWORD)");
            else
                closed_hint(cf, why + n, cap - n);
            redisFree(c);
            return NULL;
        }
    }
    char db[16];
    snprintf(db, sizeof db, "%d", cf->db);
    int bad = cf->db ? say_no(c, 2, (const char *[]){"SELECT", db}, why, cap) : 0;
    if (!bad)
        bad = say_no(c, 1, (const char *[]){"PING"}, why, cap);
    if (bad) {
        if (bad == 2 && !cf->pass[0]) {
            size_t n = strlen(why);
            closed_hint(cf, why + n, cap - n);
        }
        redisFree(c);
        return NULL;
    }
    return c;
}

redisReply *farm_eval(redisContext *c, const char *script, int argc, const char **argv,
                      char *why, size_t cap, int *dead)
{
    const char *v[16];
    if (argc > 13) {
        snprintf(why, cap, "too many script arguments");
        return NULL;
    }
    v[0] = "EVAL";
    v[1] = script;
    v[2] = "0";
    for (int i = 0; i < argc; i++)
        v[3 + i] = argv[i];
    return farm_cmd(c, argc + 3, v, why, cap, dead);
}

/* Shared by the scripts: the keys, Redis's time, the end of an entry. */
#define LUA_HEAD                                                                                 \
    "local P='" FARM_PREFIX "' local Q=P..'queue' local G='" FARM_GROUP "'\n"                    \
    "local t=redis.call('TIME') local now=t[1]*1000+math.floor(t[2]/1000)\n"                     \
    "local function drop(e) redis.call('XACK',Q,G,e) redis.call('XDEL',Q,e) end\n"

/* The end of a task: its status, the end event, the expiry. */
#define LUA_END                                                                                  \
    "local function finish(id,h,st,endj,err)\n"                                                  \
    " redis.call('HSET',h,'status',st,'ended_ms',now)\n"                                         \
    " if endj~='' then redis.call('HSET',h,'end',endj) end\n"                                    \
    " if err~='' then redis.call('HSET',h,'error',err) end\n"                                    \
    " local v=redis.call('HMGET',h,'node','device','attempts','steps')\n"                        \
    " local d='{\"id\":'..cjson.encode(id)..',\"status\":'..cjson.encode(st)..\n"                \
    "  ',\"node\":'..cjson.encode(v[1] or '')..',\"device\":'..cjson.encode(v[2] or '')..\n"     \
    "  ',\"attempts\":'..(v[3] or 0)..',\"steps\":'..(v[4] or 0)..',\"ended_ms\":'..now\n"       \
    " if endj~='' then d=d..',\"end\":'..endj end\n"                                             \
    " if err~='' then d=d..',\"error\":'..cjson.encode(err) end\n"                               \
    " redis.call('XADD',P..'events:'..id,'*','ev','end','data',d..'}')\n"                        \
    " redis.call('EXPIRE',h," FARM_STR(FARM_KEEP_S) ") redis.call('EXPIRE',P..'events:'..id,"     \
    FARM_STR(FARM_KEEP_S) ")\n"                                                                  \
    "end\n"
#define FARM_STR2(x) #x
#define FARM_STR(x) FARM_STR2(x)

/* goal model max_steps step_delay_ms select submitted_on -> id */
const char farm_lua_submit[] = LUA_HEAD
    "local id='f'..redis.call('INCR',P..'seq') local h=P..'task:'..id\n"
    "local e=redis.call('XADD',Q,'*','task',id)\n"
    "redis.call('HSET',h,'id',id,'goal',ARGV[1],'model',ARGV[2],'max_steps',ARGV[3],\n"
    " 'step_delay_ms',ARGV[4],'select',ARGV[5],'status','queued','attempts',0,'steps',0,\n"
    " 'cancel',0,'created_ms',now,'submitted_on',ARGV[6],'entry',e)\n"
    "redis.call('ZADD',P..'tasks',now,id) redis.call('ZREMRANGEBYRANK',P..'tasks',0,-1001)\n"
    "redis.call('XADD',P..'events:'..id,'*','ev','queued','data',\n"
    " cjson.encode({id=id,created_ms=now,submitted_on=ARGV[6]}))\n"
    "return id\n";

/* id entry node device -> {"run", attempt} | {"ended"|"gone"|"stale"|"cancelled"}.
 * A running task reaches here only through XAUTOCLAIM: its node stopped
 * renewing the lease, and the entry is this node's now. */
const char farm_lua_take[] = LUA_HEAD LUA_END
    "local h=P..'task:'..ARGV[1]\n"
    "local v=redis.call('HMGET',h,'status','entry','cancel','node')\n"
    "if not v[1] then drop(ARGV[2]) return {'gone'} end\n"
    "if v[1]~='queued' and v[1]~='running' then drop(ARGV[2]) return {'ended'} end\n"
    "if v[2]~=ARGV[2] then drop(ARGV[2]) return {'stale'} end\n"
    "if v[3]=='1' then drop(ARGV[2]) finish(ARGV[1],h,'cancelled','','') return {'cancelled'} end\n"
    "local n=redis.call('HINCRBY',h,'attempts',1)\n"
    "redis.call('HSET',h,'status','running','node',ARGV[3],'device',ARGV[4],'started_ms',now,'steps',0)\n"
    "local a={attempt=n,node=ARGV[3],device=ARGV[4]}\n"
    "if v[1]=='running' then a.after=v[4] end\n"
    "redis.call('XADD',P..'events:'..ARGV[1],'*','ev','attempt','data',cjson.encode(a))\n"
    "return {'run',n}\n";

/* Whether entry e is pending on node (its consumer). */
#define LUA_MINE                                                                                 \
    "local function mine(e,node) local p=redis.call('XPENDING',Q,G,e,e,1)\n"                     \
    " return #p==1 and p[1][2]==node end\n"

/* id entry node reason -> 1 put back, 0 not this node's (or ended). */
const char farm_lua_requeue[] = LUA_HEAD LUA_MINE
    "local h=P..'task:'..ARGV[1]\n"
    "local v=redis.call('HMGET',h,'status','entry','node')\n"
    "if not v[1] or (v[1]~='queued' and v[1]~='running') then\n"
    " if mine(ARGV[2],ARGV[3]) then drop(ARGV[2]) end return 0 end\n"
    "if v[2]~=ARGV[2] or not mine(ARGV[2],ARGV[3]) then return 0 end\n"
    "local e=redis.call('XADD',Q,'*','task',ARGV[1]) drop(ARGV[2])\n"
    "redis.call('HSET',h,'entry',e)\n"
    "if v[1]=='running' then redis.call('HSET',h,'status','queued','node','','device','')\n"
    " redis.call('XADD',P..'events:'..ARGV[1],'*','ev','requeued','data',\n"
    "  cjson.encode({node=ARGV[3],reason=ARGV[4]})) end\n"
    "return 1\n";

/* id entry node attempt -> 0 renewed, 1 renewed and a cancel was asked, -1 not this node's */
#define LUA_OWNER                                                                                \
    "local h=P..'task:'..ARGV[1]\n"                                                              \
    "local v=redis.call('HMGET',h,'status','node','attempts','cancel','entry')\n"                \
    "if v[1]~='running' or v[2]~=ARGV[3] or v[3]~=ARGV[4] then return -1 end\n"
const char farm_lua_renew[] = LUA_HEAD LUA_MINE LUA_OWNER
    "if v[5]~=ARGV[2] or not mine(ARGV[2],ARGV[3]) then return -1 end\n"
    "redis.call('XCLAIM',Q,G,ARGV[3],0,ARGV[2],'JUSTID')\n"
    "return tonumber(v[4])\n";

/* id entry node attempt step_json -> as renew */
const char farm_lua_step[] = LUA_HEAD LUA_OWNER
    "redis.call('HINCRBY',h,'steps',1)\n"
    "redis.call('XADD',P..'events:'..ARGV[1],'*','ev','step','data',ARGV[5])\n"
    "return tonumber(v[4])\n";

/* id entry node attempt status end_json error -> 1 written, -1 not this node's */
const char farm_lua_finish[] = LUA_HEAD LUA_END LUA_OWNER
    "drop(ARGV[2]) finish(ARGV[1],h,ARGV[5],ARGV[6],ARGV[7])\n"
    "return 1\n";

/* id -> "cancelled" (it was queued), "cancelling" (it runs: its node ends
 * it), its status (it had ended), or nil (no such task) */
const char farm_lua_cancel[] = LUA_HEAD LUA_END
    "local h=P..'task:'..ARGV[1]\n"
    "local st=redis.call('HGET',h,'status')\n"
    "if not st then return nil end\n"
    "if st=='queued' then redis.call('HSET',h,'cancel',1) drop(redis.call('HGET',h,'entry'))\n"
    " finish(ARGV[1],h,'cancelled','','') return 'cancelled' end\n"
    "if st=='running' then\n"
    " if redis.call('HGET',h,'cancel')~='1' then redis.call('HSET',h,'cancel',1)\n"
    "  redis.call('XADD',P..'events:'..ARGV[1],'*','ev','cancel','data','{}') end\n"
    " return 'cancelling' end\n"
    "return st\n";

/* node instance json ttl_ms -> 1 written, 0 another live node has the name */
const char farm_lua_beat[] =
    "local k='" FARM_PREFIX "node:'..ARGV[1] local cur=redis.call('GET',k)\n"
    "if cur then local ok,o=pcall(cjson.decode,cur)\n"
    " if ok and type(o)=='table' and o.instance~=ARGV[2] then return 0 end end\n"
    "redis.call('SET',k,ARGV[3],'PX',ARGV[4])\n"
    "return 1\n";

static void add_num(cJSON *o, const char *name, const char *v)
{
    if (v && *v)
        cJSON_AddNumberToObject(o, name, strtod(v, NULL));
}

cJSON *farm_task_json(const redisReply *r)
{
    const char *f[32] = {0};
    static const char *const names[] = {"id",       "goal",       "model",      "status",
                                        "node",     "device",     "attempts",   "steps",
                                        "max_steps", "step_delay_ms", "created_ms", "started_ms",
                                        "ended_ms", "cancel",     "select",     "end",
                                        "error",    "submitted_on", NULL};
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        for (int k = 0; names[k]; k++)
            if (strcmp(r->element[i]->str, names[k]) == 0)
                f[k] = r->element[i + 1]->str;
    cJSON *o = cJSON_CreateObject();
    for (int k = 0; k < 6; k++)
        cJSON_AddStringToObject(o, names[k], f[k] ? f[k] : "");
    cJSON_AddNumberToObject(o, "attempts", f[6] ? atoi(f[6]) : 0);
    cJSON_AddNumberToObject(o, "steps_done", f[7] ? atoi(f[7]) : 0);
    if (f[8] && atoi(f[8]) > 0) /* 0, -1: the settings of the node that runs it */
        add_num(o, "max_steps", f[8]);
    if (f[9] && atoi(f[9]) >= 0)
        add_num(o, "step_delay_ms", f[9]);
    add_num(o, "created_ms", f[10]);
    add_num(o, "started_ms", f[11]);
    add_num(o, "ended_ms", f[12]);
    cJSON_AddBoolToObject(o, "cancel_requested", f[13] && strcmp(f[13], "1") == 0);
    for (int k = 14; k < 16; k++) {
        cJSON *j = f[k] && *f[k] ? cJSON_Parse(f[k]) : NULL;
        if (j)
            cJSON_AddItemToObject(o, names[k], j);
    }
    if (f[16] && *f[16])
        cJSON_AddStringToObject(o, "error", f[16]);
    cJSON_AddStringToObject(o, "submitted_on", f[17] ? f[17] : "");
    return o;
}

#endif
