/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-serve: options, the devices, the token, then serve until SIGINT or
 * SIGTERM. See docs/serve.md. */
#include "serve.h"
#include "ops_hostproto.h"
#include "ops_tools.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adbc-serve [-s SERIAL | -t HOST:PORT]... [--listen HOST:PORT]\n"
            "                  [--token-file FILE] [--settle MS] [--busy-wait MS]\n"
            "                  [--call-timeout S] [--connect-timeout S] [--conn-timeout S]\n"
            "                  [--body-max BYTES] [--ready-file FILE] [--idle-exit S]\n"
            "                  [--allow-uninstall PACKAGE]... [--allow-tool NAME]...\n"
            "                  [--control SOCKET] [--adb-server [ADDR]] [--no-http]\n"
            "                  [--pid-file FILE] [--local-window BYTES]\n"
            "                  [--local-send-ahead BYTES] [--adb-server-sync relay|engine]\n"
            "                  [--model NAME] [--provider openai|anthropic] [--base-url URL]\n"
            "                  [--agent-allow SERIAL]...\n"
            "                  [--farm redis[s]://[USER@]HOST:PORT[/DB] --farm-node NAME\n"
            "                   [--farm-password-file FILE] [--farm-lease S]\n"
            "                   [--farm-ca FILE] [--farm-cert FILE --farm-key FILE]]\n"
            "       adbc-serve --help | --version\n\n"
            "Holds connections to the devices and serves the HTTP/JSON API (docs/serve.md).\n"
            "Default: the device in ANDROID_SERIAL, else the only USB device; listen on\n"
            "127.0.0.1:7737; token from ADBC_SERVE_TOKEN, else the token file\n"
            "($XDG_CONFIG_HOME/adbc/serve.token, created 0600 when missing).\n"
            "--idle-exit S: exit once every device has been gone for S seconds and no\n"
            "client has called or connected for as long (default: never).\n"
            "--adb-server [ADDR]: also serve adb's server protocol (the adb command and\n"
            "every client of adb's server, docs/adb-server.md) on ADDR: tcp:PORT (loopback),\n"
            "tcp:HOST:PORT, localfilesystem:PATH; default ADB_SERVER_SOCKET, else\n"
            "tcp:127.0.0.1:5037 (ANDROID_ADB_SERVER_PORT). It has no authentication.\n"
            "With no -s/-t it holds the devices adbc lists (USB, emulators, remembered\n"
            "TCP devices) as they come and go, as adb's server; the HTTP API then has none.\n"
            "--local-window BYTES: the receive window of each stream on a device reached\n"
            "over loopback (an emulator, a local adbd); 0: adbc's default. With\n"
            "--adb-server it is 524288: short queues make relayed pulls faster.\n"
            "--local-send-ahead BYTES: the most each stream to such a device keeps sent\n"
            "and unacknowledged; 0 (the default): the device's window.\n"
            "--adb-server-sync relay|engine: a client's sync (push, pull, ls) relayed to the\n"
            "device as it is (relay, the default), or served by adbc's sync engine, which\n"
            "speaks v1 to the client and compresses on links slower than compressing.\n"
            "--allow-uninstall PACKAGE: a package the uninstall_app tool may remove.\n"
            "--allow-tool NAME: offer a tool that needs allowing (termux_sms_send,\n"
            "termux_call; Termux:API tools are offered when adbc runs in Termux), or\n"
            "system_keys: press may send keys that act by themselves (CALL, POWER, ...),\n"
            "or intent_call, intent_sms, intent_any: the intent tool may start calls,\n"
            "messages or anything its policy refuses (docs/mcp.md, \"Intents\").\n"
            "--model, --provider, --base-url: the agent's model for POST /v1/tasks (the key\n"
            "from OPENAI_API_KEY or ANTHROPIC_API_KEY); --agent-allow: a physical device\n"
            "the agent may drive (emulators always may; docs/agent.md).\n"
            "--farm, --farm-node: join a farm of nodes sharing devices and one task queue\n"
            "on Redis (the password from --farm-password-file or ADBC_FARM_PASSWORD,\n"
            "never the URL; docs/farm.md); rediss:// is TLS, Redis's certificate checked\n"
            "against --farm-ca (else the system's CAs), --farm-cert/--farm-key the client's.\n");
}

static int num(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || n < lo || n > hi) {
        fprintf(stderr, SERVE_NAME ": %s takes a number %ld..%ld\n", opt, lo, hi);
        return -1;
    }
    *out = n;
    return 0;
}

static const char *names[SERVE_MAX_DEVICES];
static int nnames;

static int add_dev(const char *name)
{
    if (nnames == SERVE_MAX_DEVICES) {
        fprintf(stderr, SERVE_NAME ": at most %d devices\n", SERVE_MAX_DEVICES);
        return -1;
    }
    if (strlen(name) >= sizeof ((ops_dev *)0)->serial) {
        fprintf(stderr, SERVE_NAME ": device name too long\n");
        return -1;
    }
    for (int i = 0; i < nnames; i++)
        if (strcmp(names[i], name) == 0) {
            fprintf(stderr, SERVE_NAME ": %s named twice\n", name);
            return -1;
        }
    names[nnames++] = name;
    return 0;
}

static char *default_token_path(void)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char *p = NULL;
    if (x && *x)
        return asprintf(&p, "%s/adbc/serve.token", x) < 0 ? NULL : p;
    if (home && *home)
        return asprintf(&p, "%s/.config/adbc/serve.token", home) < 0 ? NULL : p;
    return NULL;
}

int main(int argc, char **argv)
{
    static serve s;
    s.call_ms = 30000;
    s.busy_ms = 5000;
    s.settle_ms = 0; /* uiautomator dump waits for an idle UI itself */
    s.connect_ms = 10000;
    s.conn_timeout_s = 10;
    s.body_max = 1 << 20;
    const char *listen = "127.0.0.1:7737", *token_file = NULL, *ready = NULL;
    const char *control = NULL, *pid_file = NULL, *adbsrv = NULL;
    long local_window = -1; /* --local-window; -1: the default */
    long local_send_ahead = -1; /* --local-send-ahead; -1: the default */
    char adbsrv_buf[300];
    int http = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if ((strcmp(a, "-s") == 0 || strcmp(a, "-t") == 0) && v) {
            if (add_dev(v) != 0)
                return 2;
            i++;
        } else if (strcmp(a, "--listen") == 0 && v) {
            listen = v;
            i++;
        } else if (strcmp(a, "--token-file") == 0 && v) {
            token_file = v;
            i++;
        } else if (strcmp(a, "--control") == 0 && v) {
            control = v;
            i++;
        } else if (strcmp(a, "--pid-file") == 0 && v) {
            pid_file = v;
            i++;
        } else if (strcmp(a, "--allow-uninstall") == 0 && v) {
            if (!ops_android_name(v) || s.nuninstall == SERVE_MAX_UNINSTALL) {
                fprintf(stderr, SERVE_NAME ": --allow-uninstall takes an Android package name "
                                "(at most %d of them)\n", SERVE_MAX_UNINSTALL);
                return 2;
            }
            s.uninstall[s.nuninstall++] = v;
            i++;
        } else if (strcmp(a, "--allow-tool") == 0 && v) {
            if (!ops_tools_optin(v)) {
                fprintf(stderr, SERVE_NAME ": --allow-tool takes termux_sms_send, "
                                "termux_call, system_keys, intent_call, intent_sms or "
                                "intent_any, not '%s'\n", v);
                return 2;
            }
            s.optin |= ops_tools_optin(v);
            i++;
        } else if (strcmp(a, "--adb-server") == 0) {
            /* ADDR is optional: taken when it is in adb's socket syntax. */
            if (v && (strncmp(v, "tcp:", 4) == 0 || strncmp(v, "localfilesystem:", 16) == 0 ||
                      strncmp(v, "localabstract:", 14) == 0)) {
                adbsrv = v;
                i++;
            } else {
                adbsrv = ops_hp_server_addr(adbsrv_buf, sizeof adbsrv_buf);
            }
        } else if (strcmp(a, "--no-http") == 0) {
            http = 0;
        } else if (strcmp(a, "--ready-file") == 0 && v) {
            ready = v;
            i++;
        } else if (strcmp(a, "--settle") == 0) {
            if (num(a, v, 0, 10000, &n))
                return 2;
            s.settle_ms = (int)n;
            i++;
        } else if (strcmp(a, "--local-window") == 0) {
            if (num(a, v, 0, 1L << 30, &n))
                return 2;
            local_window = n;
            i++;
        } else if (strcmp(a, "--adb-server-sync") == 0 && v &&
                   (strcmp(v, "relay") == 0 || strcmp(v, "engine") == 0)) {
            s.sync_engine = strcmp(v, "engine") == 0;
            i++;
        } else if (strcmp(a, "--adb-server-sync") == 0) {
            fprintf(stderr, SERVE_NAME ": --adb-server-sync takes relay or engine\n");
            return 2;
        } else if (strcmp(a, "--local-send-ahead") == 0) {
            if (num(a, v, 0, 1L << 30, &n))
                return 2;
            local_send_ahead = n;
            i++;
        } else if (strcmp(a, "--busy-wait") == 0) {
            if (num(a, v, 0, 600000, &n))
                return 2;
            s.busy_ms = (int)n;
            i++;
        } else if (strcmp(a, "--call-timeout") == 0) {
            if (num(a, v, 1, 600, &n))
                return 2;
            s.call_ms = (int)n * 1000;
            i++;
        } else if (strcmp(a, "--connect-timeout") == 0) {
            if (num(a, v, 1, 120, &n))
                return 2;
            s.connect_ms = (int)n * 1000;
            i++;
        } else if (strcmp(a, "--conn-timeout") == 0) {
            if (num(a, v, 1, 3600, &n))
                return 2;
            s.conn_timeout_s = (int)n;
            i++;
        } else if (strcmp(a, "--idle-exit") == 0) {
            if (num(a, v, 0, 7 * 86400, &n))
                return 2;
            s.idle_exit_s = (int)n;
            i++;
        } else if (strcmp(a, "--body-max") == 0) {
            if (num(a, v, 1024, 64L << 20, &n))
                return 2;
            s.body_max = (size_t)n;
            i++;
        } else if ((n = serve_tasks_option(a, v)) != 0 || (n = serve_farm_option(a, v)) != 0) {
            if (n < 0)
                return 2;
            i++;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf(SERVE_NAME " %s\n", ADBC_VERSION_STRING);
            return 0;
        } else {
            fprintf(stderr, SERVE_NAME ": unknown or incomplete option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* adb's server with no device named: it follows what adbc lists
     * (adbscan.c), as adb's server follows devices coming and going. */
    int scan = adbsrv && nnames == 0 && !control;
    if (nnames == 0 && !scan) {
        const char *env = getenv("ANDROID_SERIAL");
        if (add_dev(env && *env ? env : "") != 0)
            return 2;
    }
    if (!http && !control && !adbsrv) {
        fprintf(stderr, SERVE_NAME ": --no-http leaves nothing to serve without --control or "
                        "--adb-server\n");
        return 2;
    }
    if (control && nnames != 1) {
        fprintf(stderr, SERVE_NAME ": --control serves one device (start one server per "
                        "device)\n");
        return 2;
    }
    const char *env_token = getenv("ADBC_SERVE_TOKEN");
    int explicit_token = token_file || (env_token && *env_token);
    char *defpath = token_file ? NULL : default_token_path();
    if (!token_file && !defpath && !explicit_token) {
        fprintf(stderr, SERVE_NAME ": no HOME or XDG_CONFIG_HOME for the token file: give "
                        "--token-file FILE or ADBC_SERVE_TOKEN\n");
        return 2;
    }
    if (http && serve_token_load(&s, token_file ? token_file : defpath) != 0) {
        free(defpath);
        return 1;
    }
    free(defpath);

    /* Signals go to the main thread only, which waits for them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    s.last_client_ms = ops_now_ms();
    /* adb's server offers delayed_ack only with ADB_BURST_MODE=1; adbc's
     * connections offer it unless an adb server is asked for with
     * ADB_BURST_MODE set to anything else (docs/adb-server.md, "How fast"). */
    const char *burst = getenv("ADB_BURST_MODE");
    s.no_burst = adbsrv && burst && strcmp(burst, "1") != 0;
    /* Relayed pulls from a device on loopback: adbc's 4 MiB per stream only
     * deepens the queues to the client (docs/adb-server.md, "How fast"). */
    s.local_window = (uint32_t)(local_window >= 0 ? local_window : adbsrv ? SERVE_RELAY_LOCAL_WINDOW : 0);
    s.local_send_ahead = (uint32_t)(local_send_ahead >= 0 ? local_send_ahead : 0);
    serve_tasks_init(&s);
    if (ops_tools_init() != 0 || serve_devs_init(&s, names, nnames) != 0)
        return 1;
    int status = 0;
    if (serve_farm_start(&s) != 0) {
        status = 1;
    } else if ((control && serve_control_start(&s, control) != 0) ||
               (adbsrv && serve_adbsrv_start(&s, adbsrv) != 0) ||
               (scan && serve_adbscan_start(&s) != 0) ||
               (http && serve_http_start(&s, listen, explicit_token, http ? ready : NULL) != 0)) {
        status = 1;
    } else {
        if (pid_file) {
            FILE *f = fopen(pid_file, "w");
            if (f) {
                fprintf(f, "%ld\n", (long)getpid());
                fclose(f);
            }
        }
        if (!http && ready) {
            FILE *f = fopen(ready, "w");
            if (f)
                fclose(f);
        }
        for (;;) {
            struct timespec tick = {1, 0};
            int sig = sigtimedwait(&set, NULL, &tick);
            if (sig > 0) {
                fprintf(stderr, SERVE_NAME ": stopping (signal %d)\n", sig);
                break;
            }
            if (serve_idle_expired(&s)) {
                fprintf(stderr, SERVE_NAME ": every device gone and no client for %d s "
                                "(--idle-exit): stopping\n", s.idle_exit_s);
                break;
            }
        }
    }
    serve_farm_leave();
    /* Stopping: the control and adb-server clients end (their sessions give
     * the device back), and a call that does not hold its device yet,
     * queued behind another among them, is answered 503 with nothing sent;
     * the calls holding one run to their end and are answered
     * (serve_http_stop). */
    s.stopping = 1;
    ops_pool_stop(&s.pool);
    serve_adbscan_stop();
    serve_tasks_stop();
    serve_farm_stop();
    serve_http_stop();
    serve_tasks_free();
    serve_farm_end();
    serve_adbsrv_stop();
    if (control)
        serve_control_stop(&s, control);
    else
        serve_held_stop(); /* forwards made through the adb server */
    if (pid_file)
        unlink(pid_file);
    serve_devs_free(&s);
    ops_tools_free();
    return status;
}
