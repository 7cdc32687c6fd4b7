/* SPDX-License-Identifier: Apache-2.0 */
/* Mode "spake2": one BoringSSL SPAKE2 party per run, driven line by line.
 *
 *   stdin  "new alice|bob PASSWORD-HEX"  -> stdout "msg HEX"   (32 bytes)
 *   stdin  "peer HEX"                    -> stdout "key HEX"   (64 bytes)
 *                                           or "fail" if BoringSSL refuses
 *   stdin  "quit" or EOF                 -> exit 0
 *
 * Names are adb's: "adb pair client" / "adb pair server", each with its NUL. */
#include <stdio.h>
#include <string.h>

#include <openssl/curve25519.h>

#include "ref_util.h"

static const uint8_t kClientName[] = "adb pair client";
static const uint8_t kServerName[] = "adb pair server";

int ref_mode_spake2(int argc, char **argv)
{
    (void)argc, (void)argv;
    char line[4096];
    SPAKE2_CTX *ctx = NULL;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *arg = strchr(line, ' ');
        if (arg)
            *arg++ = '\0';
        if (strcmp(line, "quit") == 0)
            break;
        if (strcmp(line, "new") == 0 && arg) {
            char *pw = strchr(arg, ' ');
            if (!pw)
                ref_die("new needs a role and a password");
            *pw++ = '\0';
            int alice = strcmp(arg, "alice") == 0;
            uint8_t password[1024];
            long n = ref_unhex(password, sizeof password, pw);
            if (n < 0)
                ref_die("bad password hex");
            SPAKE2_CTX_free(ctx);
            ctx = alice ? SPAKE2_CTX_new(spake2_role_alice, kClientName, sizeof kClientName,
                                         kServerName, sizeof kServerName)
                        : SPAKE2_CTX_new(spake2_role_bob, kServerName, sizeof kServerName,
                                         kClientName, sizeof kClientName);
            uint8_t msg[SPAKE2_MAX_MSG_SIZE];
            size_t len = 0;
            if (!ctx || !SPAKE2_generate_msg(ctx, msg, &len, sizeof msg, password, (size_t)n))
                ref_die("SPAKE2_generate_msg failed");
            char hex[2 * SPAKE2_MAX_MSG_SIZE + 1];
            ref_hex(hex, msg, len);
            printf("msg %s\n", hex);
        } else if (strcmp(line, "peer") == 0 && arg && ctx) {
            uint8_t their[64];
            long n = ref_unhex(their, sizeof their, arg);
            if (n < 0)
                ref_die("bad peer hex");
            uint8_t key[SPAKE2_MAX_KEY_SIZE];
            size_t len = 0;
            if (SPAKE2_process_msg(ctx, key, &len, sizeof key, their, (size_t)n)) {
                char hex[2 * SPAKE2_MAX_KEY_SIZE + 1];
                ref_hex(hex, key, len);
                printf("key %s\n", hex);
            } else {
                printf("fail\n");
            }
            SPAKE2_CTX_free(ctx);
            ctx = NULL;
        } else {
            ref_die("unknown command '%s'", line);
        }
        fflush(stdout);
    }
    SPAKE2_CTX_free(ctx);
    return 0;
}
