/* SPDX-License-Identifier: Apache-2.0 */
/* Modes "pair-server" and "pair-client": adb's pairing protocol written
 * against BoringSSL the way adb's pairing_connection and pairing_auth do it,
 * as the peer adbc's pairing is tested against.
 *
 *   adbc-ref pair-server CODE GUID
 *       prints "port N", accepts one host, and on success prints
 *       "pubkey LINE" (the host's public key line) and exits 0.
 *   adbc-ref pair-client PORT CODE PUBKEY-LINE
 *       pairs with 127.0.0.1:PORT and on success prints "guid GUID".
 * A wrong code ends in "error: wrong code (...)" and exit status 3. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/aead.h>
#include <openssl/curve25519.h>
#include <openssl/digest.h>
#include <openssl/err.h>
#include <openssl/hkdf.h>
#include <openssl/ssl.h>

#include "ref_util.h"

#define PEER_INFO_SIZE 8192
#define MAX_PAYLOAD (2 * PEER_INFO_SIZE)

static const uint8_t kClientName[] = "adb pair client";
static const uint8_t kServerName[] = "adb pair server";
static const char kLabel[] = "adb-label";
static const char kInfo[] = "adb pairing_auth aes-128-gcm key";

static void write_all(SSL *ssl, const void *p, size_t n)
{
    if (SSL_write(ssl, p, (int)n) != (int)n)
        ref_die("TLS write failed");
}

static void read_all(SSL *ssl, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        int r = SSL_read(ssl, (uint8_t *)p + got, (int)(n - got));
        if (r <= 0)
            ref_die("TLS read failed after %zu of %zu bytes: %s", got, n,
                    ERR_reason_error_string(ERR_peek_last_error()));
        got += (size_t)r;
    }
}

static void send_packet(SSL *ssl, uint8_t type, const uint8_t *p, uint32_t len)
{
    uint8_t h[6] = {1, type};
    uint32_t be = htonl(len);
    memcpy(h + 2, &be, 4);
    write_all(ssl, h, sizeof h);
    write_all(ssl, p, len);
}

static uint32_t recv_header(SSL *ssl, uint8_t want_type)
{
    uint8_t h[6];
    read_all(ssl, h, sizeof h);
    uint32_t be;
    memcpy(&be, h + 2, 4);
    uint32_t len = ntohl(be);
    if (h[0] != 1 || h[1] != want_type || len == 0 || len > MAX_PAYLOAD)
        ref_die("bad pairing header %02x %02x len %u", h[0], h[1], len);
    return len;
}

static void nonce_for(uint8_t nonce[12], uint64_t seq)
{
    memset(nonce, 0, 12);
    memcpy(nonce, &seq, sizeof seq); /* little-endian host, as adb does */
}

/* One pairing over an established TLS connection. */
static void run(SSL *ssl, int server, const char *code, uint8_t my_type, const char *my_str,
                char peer[PEER_INFO_SIZE], uint8_t *peer_type)
{
    uint8_t pw[128 + 64];
    size_t cl = strlen(code);
    if (cl > 128)
        ref_die("code too long");
    memcpy(pw, code, cl);
    if (!SSL_export_keying_material(ssl, pw + cl, 64, kLabel, sizeof kLabel, NULL, 0, 0))
        ref_die("export failed");

    SPAKE2_CTX *sp = server ? SPAKE2_CTX_new(spake2_role_bob, kServerName, sizeof kServerName,
                                              kClientName, sizeof kClientName)
                            : SPAKE2_CTX_new(spake2_role_alice, kClientName, sizeof kClientName,
                                             kServerName, sizeof kServerName);
    uint8_t msg[SPAKE2_MAX_MSG_SIZE], their[SPAKE2_MAX_MSG_SIZE], km[SPAKE2_MAX_KEY_SIZE];
    size_t ml = 0, kl = 0;
    if (!sp || !SPAKE2_generate_msg(sp, msg, &ml, sizeof msg, pw, cl + 64))
        ref_die("SPAKE2_generate_msg failed");
    send_packet(ssl, 0, msg, (uint32_t)ml);
    uint32_t tl = recv_header(ssl, 0);
    if (tl > sizeof their)
        ref_die("SPAKE2 message too long");
    read_all(ssl, their, tl);
    if (!SPAKE2_process_msg(sp, km, &kl, sizeof km, their, tl))
        ref_die("SPAKE2_process_msg failed");
    SPAKE2_CTX_free(sp);

    uint8_t key[16];
    EVP_AEAD_CTX aead;
    if (!HKDF(key, sizeof key, EVP_sha256(), km, kl, NULL, 0, (const uint8_t *)kInfo,
              sizeof kInfo - 1) ||
        !EVP_AEAD_CTX_init(&aead, EVP_aead_aes_128_gcm(), key, sizeof key,
                           EVP_AEAD_DEFAULT_TAG_LENGTH, NULL))
        ref_die("cipher setup failed");

    static uint8_t info[PEER_INFO_SIZE], sealed[PEER_INFO_SIZE + 64], opened[MAX_PAYLOAD];
    memset(info, 0, sizeof info);
    info[0] = my_type;
    memcpy(info + 1, my_str, strlen(my_str));
    uint8_t nonce[12];
    size_t sl = 0;
    nonce_for(nonce, 0);
    if (!EVP_AEAD_CTX_seal(&aead, sealed, &sl, sizeof sealed, nonce, 12, info, sizeof info,
                           NULL, 0))
        ref_die("seal failed");
    send_packet(ssl, 1, sealed, (uint32_t)sl);

    uint32_t pl = recv_header(ssl, 1);
    static uint8_t in[MAX_PAYLOAD];
    read_all(ssl, in, pl);
    size_t ol = 0;
    if (!EVP_AEAD_CTX_open(&aead, opened, &ol, sizeof opened, nonce, 12, in, pl, NULL, 0)) {
        printf("error: wrong code (the peer's info does not decrypt)\n");
        fflush(stdout);
        exit(3);
    }
    EVP_AEAD_CTX_cleanup(&aead);
    if (ol != PEER_INFO_SIZE)
        ref_die("peer info is %zu bytes", ol);
    *peer_type = opened[0];
    memcpy(peer, opened + 1, PEER_INFO_SIZE - 1);
    peer[PEER_INFO_SIZE - 1] = '\0';
}

static void timeouts(int fd)
{
    struct timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int ref_mode_pair_server(int argc, char **argv)
{
    if (argc != 2)
        ref_die("usage: pair-server CODE GUID");
    SSL_CTX *ctx = ref_tls_ctx(1, NULL);
    int lfd = ref_listen();
    int fd = ref_accept(lfd, 30000);
    timeouts(fd);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_accept_state(ssl);
    if (SSL_do_handshake(ssl) != 1)
        ref_die("TLS handshake failed: %s", ERR_reason_error_string(ERR_peek_last_error()));
    static char peer[PEER_INFO_SIZE];
    uint8_t type = 0xff;
    run(ssl, 1, argv[0], 1, argv[1], peer, &type);
    if (type != 0)
        ref_die("host sent peer info type %u", type);
    printf("pubkey %s\n", peer);
    fflush(stdout);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    close(lfd);
    return 0;
}

int ref_mode_pair_client(int argc, char **argv)
{
    if (argc != 3)
        ref_die("usage: pair-client PORT CODE PUBKEY-LINE");
    SSL_CTX *ctx = ref_tls_ctx(0, NULL);
    int fd = ref_connect((unsigned)atoi(argv[0]));
    timeouts(fd);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_connect_state(ssl);
    if (SSL_do_handshake(ssl) != 1)
        ref_die("TLS handshake failed: %s", ERR_reason_error_string(ERR_peek_last_error()));
    static char peer[PEER_INFO_SIZE];
    uint8_t type = 0xff;
    run(ssl, 0, argv[1], 0, argv[2], peer, &type);
    if (type != 1)
        ref_die("device sent peer info type %u", type);
    printf("guid %s\n", peer);
    fflush(stdout);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return 0;
}
