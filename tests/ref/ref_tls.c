/* SPDX-License-Identifier: Apache-2.0 */
/* Mode "tls-server": a BoringSSL TLS 1.3 server set up as adbd sets up its
 * side of STLS, to check adbc's client certificate and handshake.
 *
 *   adbc-ref tls-server [--hint FP]... [--accept FP]... [--accept-any]
 *
 * Prints "port N", accepts one connection, sends the CA hints
 * "O=AdbKey-0, CN=FP", requires a client certificate and then prints
 *   "cert ok fp=FP" or "cert bad: WHY fp=FP"  (every field of adb's certificate)
 *   "handshake ok" or "handshake failed: WHY"
 * The certificate is accepted when its key's fingerprint was given with
 * --accept (or with --accept-any), as adbd accepts paired keys only. After a
 * successful handshake it sends "hello\n", reads one line L from the client,
 * prints "got L" and answers "echo:L\n". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "ref_util.h"

static const char *accepted[16];
static int naccepted, accept_any;

static int verify(X509_STORE_CTX *store, void *arg)
{
    (void)arg;
    X509 *cert = X509_STORE_CTX_get0_cert(store);
    if (!cert) {
        printf("cert bad: none fp=\n");
        return 0;
    }
    char fp[65];
    const char *bad = ref_check_adb_cert(cert, fp);
    if (bad)
        printf("cert bad: %s fp=%s\n", bad, fp);
    else
        printf("cert ok fp=%s\n", fp);
    fflush(stdout);
    if (accept_any)
        return 1;
    for (int i = 0; i < naccepted; i++)
        if (strcmp(accepted[i], fp) == 0)
            return 1;
    return 0;
}

int ref_mode_tls_server(int argc, char **argv)
{
    STACK_OF(X509_NAME) *cas = sk_X509_NAME_new_null();
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--accept-any") == 0) {
            accept_any = 1;
        } else if (strcmp(argv[i], "--accept") == 0 && i + 1 < argc && naccepted < 16) {
            accepted[naccepted++] = argv[++i];
        } else if (strcmp(argv[i], "--hint") == 0 && i + 1 < argc) {
            X509_NAME *n = X509_NAME_new();
            const char *fp = argv[++i];
            if (!X509_NAME_add_entry_by_NID(n, NID_organizationName, MBSTRING_ASC,
                                            (const uint8_t *)"AdbKey-0", -1, -1, 0) ||
                !X509_NAME_add_entry_by_NID(n, NID_commonName, MBSTRING_ASC,
                                            (const uint8_t *)fp, -1, -1, 0) ||
                !sk_X509_NAME_push(cas, n))
                ref_die("bad hint");
        } else {
            ref_die("unknown tls-server option %s", argv[i]);
        }
    }
    SSL_CTX *ctx = ref_tls_ctx(1, verify);
    if (sk_X509_NAME_num(cas) > 0)
        SSL_CTX_set_client_CA_list(ctx, cas);
    else
        sk_X509_NAME_free(cas);

    int lfd = ref_listen();
    int fd = ref_accept(lfd, 30000);
    struct timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_accept_state(ssl);
    if (SSL_do_handshake(ssl) != 1) {
        printf("handshake failed: %s\n", ERR_reason_error_string(ERR_peek_last_error()));
        fflush(stdout);
        /* Let the alert reach the client before the socket closes. */
        shutdown(fd, SHUT_WR);
        char sink[256];
        while (read(fd, sink, sizeof sink) > 0)
            ;
        SSL_free(ssl);
        SSL_CTX_free(ctx);
        close(fd);
        close(lfd);
        return 0;
    }
    printf("handshake ok\n");
    fflush(stdout);
    if (SSL_write(ssl, "hello\n", 6) != 6)
        ref_die("write failed");
    char line[1024];
    size_t have = 0;
    while (have < sizeof line - 1 && (have == 0 || line[have - 1] != '\n')) {
        int n = SSL_read(ssl, line + have, 1);
        if (n <= 0)
            ref_die("read failed");
        have += (size_t)n;
    }
    line[have - 1] = '\0';
    printf("got %s\n", line);
    fflush(stdout);
    char reply[1100];
    int rl = snprintf(reply, sizeof reply, "echo:%s\n", line);
    if (SSL_write(ssl, reply, rl) != rl)
        ref_die("write failed");
    SSL_shutdown(ssl);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    close(lfd);
    return 0;
}
