/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for lib/auth: key files, adb's public key format (checked against
 * OpenSSL's bignum arithmetic and against Debian's real `adb` binary),
 * AUTH token signing and verification, keyrings and ADB_VENDOR_KEYS, and
 * hostile adb_keys input. */
#include "t.h"

#include "adbc/auth.h"
#include "auth/auth_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

void core_test_fail_alloc_at(long n);

/* ---- helpers ----------------------------------------------------------- */

static char tmp_root[256];

static const char *tmp_dir(void)
{
    if (!tmp_root[0]) {
        snprintf(tmp_root, sizeof tmp_root, "/tmp/adbc-test-auth-XXXXXX");
        if (!mkdtemp(tmp_root)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return tmp_root;
}

/* A fresh, empty directory under the test root. */
static const char *fresh_dir(const char *name)
{
    static char buf[32][512];
    static int next;
    char *p = buf[next++ % 32];
    snprintf(p, 512, "%s/%s", tmp_dir(), name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0 || mkdir(p, 0700) != 0) {
        perror(p);
        exit(2);
    }
    return p;
}

static const char *path_in(const char *dir, const char *name)
{
    /* A ring of buffers large enough that no test outlives its paths. */
    static char buf[256][640];
    static int next;
    char *p = buf[next++ % 256];
    snprintf(p, 640, "%s/%s", dir, name);
    return p;
}

static int write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return -1;
    int ok = write(fd, data, len) == (ssize_t)len;
    close(fd);
    return ok && chmod(path, mode) == 0 ? 0 : -1;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static unsigned file_mode(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0xffff;
    return st.st_mode & 07777;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int msg_has(const char *needle)
{
    if (strstr(adbc_last_error(), needle))
        return 1;
    fprintf(stderr, "    message \"%s\" lacks \"%s\"\n", adbc_last_error(), needle);
    return 0;
}

/* Write an OpenSSL key as PEM: traditional selects PKCS#1 for RSA, cipher
 * encrypts it with passphrase "pw". */
static int write_pem(const char *path, EVP_PKEY *pkey, int traditional, int encrypt)
{
    BIO *bio = BIO_new_file(path, "w");
    if (!bio)
        return -1;
    const EVP_CIPHER *c = encrypt ? EVP_aes_128_cbc() : NULL;
    unsigned char pw[] = "pw";
    unsigned char *kstr = encrypt ? pw : NULL;
    int klen = encrypt ? 2 : 0;
    int ok = traditional
                 ? PEM_write_bio_PrivateKey_traditional(bio, pkey, c, kstr, klen, NULL, NULL)
                 : PEM_write_bio_PrivateKey(bio, pkey, c, kstr, klen, NULL, NULL);
    BIO_free(bio);
    chmod(path, 0600);
    return ok ? 0 : -1;
}

static char *pub_line(const adbc_key *k, const char *comment)
{
    char *line = NULL;
    if (adbc_key_public_line(&line, k, comment) != 0)
        return NULL;
    return line;
}

/* The 524-byte struct inside a public key line. */
static int line_struct(const char *line, uint8_t out[ADBC_PUBKEY_SIZE])
{
    return b64_decode(line, ADBC_PUBKEY_B64_LEN, out, ADBC_PUBKEY_SIZE) == ADBC_PUBKEY_SIZE
               ? 0
               : -1;
}

static void set_comment_env(void)
{
    setenv("LOGNAME", "adbc-test", 1);
    setenv("HOSTNAME", "kat.example", 1);
}

/* Find adb: the interop tests need it and must fail, not skip, without it. */
static const char *adb_path(void)
{
    static char path[512];
    if (path[0])
        return path;
    FILE *p = popen("command -v adb", "r");
    if (p) {
        if (fgets(path, sizeof path, p))
            path[strcspn(path, "\n")] = '\0';
        pclose(p);
    }
    if (!path[0] || access(path, X_OK) != 0) {
        fprintf(stderr, "  adb not found in PATH: install Debian's adb (apt-get install adb)\n");
        path[0] = '\0';
        return NULL;
    }
    return path;
}

/* Run adb with a fixed, minimal environment so the key comment is known.
 * Output goes to out_path (or /dev/null). Returns the exit status. */
static int run_adb(const char *home, const char *out_path, const char *a1, const char *a2)
{
    const char *adb = adb_path();
    if (!adb)
        return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "timeout 60 env -i PATH=/usr/bin:/bin HOME='%s' LOGNAME=adbc-test "
             "HOSTNAME=kat.example '%s' %s '%s' >'%s' 2>/dev/null",
             home, adb, a1, a2, out_path ? out_path : "/dev/null");
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static adbc_key *gen(void)
{
    adbc_key *k = NULL;
    if (adbc_key_generate(&k, 2048) != 0) {
        fprintf(stderr, "  generate: %s\n", adbc_last_error());
        return NULL;
    }
    return k;
}

static adbc_key *gen_saved(const char *path)
{
    adbc_key *k = gen();
    if (!k)
        return NULL;
    if (adbc_key_save(k, path) != 0) {
        fprintf(stderr, "  save: %s\n", adbc_last_error());
        adbc_key_free(k);
        return NULL;
    }
    return k;
}

static void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rand() >> 7);
}

/* A key generated by adb, with the .pub adb wrote for it (LOGNAME=adbc-test,
 * HOSTNAME=kat.example). A test key only; it guards nothing. */
static const char kat_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDR/ORkAxncwzHe\n"
    "RUIl4ZtCaWkyPFUydVLPVYkJNyA16RHJWXr/NRFZ3jfSfkBZtfKPanOpBYj84R+y\n"
    "YT7L4IV8Snd6IVwsSTPbR7ic+KtxP4EFqLcRyE+VKI+G285KNgc578029ja/+8M/\n"
    "n+1KWHid6qQj1G9HdI6dh0tO9TgARV00NkrIQX3viqilBv0SZiQ/ooqoc58WYXbm\n"
    "lwQ+EkqyH2QTXnwxpS+CoL5QgD471VkdRxdnNkv4V6TS8Jx69NQU8yfEj5uMXu5a\n"
    "wUeveDIrDQLKwUOQeqbvovam0qFe4vxlKAGE+LVTbzv2BD0MEGvb3AEbz2Z3xF5q\n"
    "oI0Wnt/RAgMBAAECggEAAKBq/8aMTsfqVpwuA6PISK9zjsU/m0Q6E8AHvM0o4ilx\n"
    "v7cSgC1SgcpKZu0eYXhwh0sIvsDOwtgj/xL9ybI/+ExEl0raeo/syh6WPk4/GCfZ\n"
    "pNv3B+QgIvUZUIxszQcJGsVMkZ4iMR8LpEH26yu8IY2m/JmHQul4RlakBQi6ljIv\n"
    "sOwUTYCukF9ey4un2nmuMYgENJpV5Usju8mpzUu2x3Joo5uBPdDLkR/zW9YQ6ams\n"
    "ALv+/pGgh9CHCPIh5eD/XL+OgiOStAayNmUmHihm3y4iM89VIK/fXScUTDzRySyM\n"
    "gA2kz4VvohSvIcbMn3zWV13inL7CN3DaxciLr4X7wQKBgQD9hHRyw2ezi5SyxAMU\n"
    "OWUaFSEll4KqfOSAkkmvj6MeMIo19o0iR5qST71cQVC0hTW2C3FGx2bBjp3U/Y6/\n"
    "Q/xPJxO0EUF3tZqxB0ZiqSev/upVU+VwzUmTFmGJQKrTJqUFxrF5l1ezqlprszmE\n"
    "3RNh0dlMwCIkm+7Z7Be1zuHWSQKBgQDUC1AKrnpVofFwqOMJZpxOtDwtF1bHFWvo\n"
    "9ejjme/q2KoyxC3tCTjc4f0d5a1XlDLeMLD1GOt1032byiFeCpokxWaAoK+V3whe\n"
    "TiUjpDVa45K/3TG8q9EUwC3DkHNSb4eBhKfjtxOe/z77yhTO/uN1G9pXJ/Qt9ntK\n"
    "z9YEoV6dSQKBgQDtTik6q9LMbCG63GQNcFRE//ZRG+vB7rpt54F2BrwnrEQTk0A1\n"
    "EFWOE3orezAyamcGittz5382O2teTiJqwxbQeMGm0mg3yBSPFUI7ZB+0TKfJS4j/\n"
    "+Amg11hhg9jjYc8jAwRpztLXaOTO36s9xTs5W5dOkqLjJduEvczL8GXRkQKBgQC4\n"
    "uu5Nj/nF9qLIGmpI+1r7eivewLF6GaB8QRhWiPqqJ34HYj/8fIdMb5k7XafpX5P9\n"
    "XIAd10ryyIBqo+rz6dqmZE9LijHOKJM6zWuvpFRTTWXAvyygiTNKl66G7KZ7T+zG\n"
    "mlJFoW53mzk81K3SM97nXI+YVJd3H4AEChMSz58E+QKBgB73O5yT7+WSt+12B4ky\n"
    "JZuqn3WaYzYwHzkLgP4XzOr9YdOrJArttBivbddgufOba4v39GMld8tiilTvGRsc\n"
    "cLUZIfgPDIzHVG4kgPD/0nedTnSkCwxee/ZfETBNTfkT8DjjsPoiffzD2R3W91ah\n"
    "etaU922dasHJHif22RjHf1KG\n"
    "-----END PRIVATE KEY-----\n";

static const char kat_pub[] =
    "QAAAAM8mUP/R354WjaBqXsR3Zs8bAdzbaxAMPQT2O29TtfiEAShl/OJeodKm9qLvpnqQQ8HKAg0rMnivR8Fa7l6Mm4/"
    "EJ/MU1PR6nPDSpFf4SzZnF0cdWdU7PoBQvqCCL6UxfF4TZB+yShI+BJfmdmEWn3OoiqI/JGYS/QalqIrvfUHISjY0XUU"
    "AOPVOS4edjnRHb9QjpOqdeFhK7Z8/w/u/NvY2ze85BzZKztuGjyiVT8gRt6gFgT9xq/icuEfbM0ksXCF6d0p8heDLPmG"
    "yH+H8iAWpc2qP8rVZQH7SN95ZETX/elnJEek1IDcJiVXPUnUyVTwyaWlCm+ElQkXeMcPcGQNk5PzR499V44k73Gb8OnS"
    "uIujFqkmo0RLk7/iOa2LSRm/V1XNZ/+o5/eyB24ojQl4lIrLdI7Wa91VGFyLDYFLSkJ6iWv+luIRxuP+wYIPj3HabIIY"
    "GtXUCMWBRKWi36ta60aUMp0sNZ/4mYd2DPfOxhZYRXavn/FW0zeChHdUsXUw8OIilaYjlvlTeFC7qc/eSQ4HQlhqbSsr"
    "y7JsM4yNjjb+6z14pnN7cNlxjvqvFfr2DXD2FfR6BtMiih8oTmrEwYMwbgDBmRJNt0XJEi/fLJusMFWSKR+PExwJPxkc"
    "FW2kZr27oW1hV1zIfc8WxU++f+VSczK8CHFemoDN8+tMn4GO6OAEAAQA= adbc-test@kat.example";

/* ---- base64 and the struct's arithmetic --------------------------------- */

TEST(base64_vectors)
{
    /* RFC 4648 section 10. */
    static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char out[16];
        uint8_t back[16];
        b64_encode((const uint8_t *)plain[i], strlen(plain[i]), out);
        CHECK_STR(out, enc[i]);
        CHECK_EQ_INT(b64_encoded_len(strlen(plain[i])), strlen(enc[i]));
        long n = b64_decode(enc[i], strlen(enc[i]), back, sizeof back);
        CHECK_EQ_INT(n, (long)strlen(plain[i]));
        CHECK_MEM(back, plain[i], (size_t)n);
    }
    static const char *bad[] = {"Zg=",  "Zg=a", "Z===", "Zh==", "Zm9=", "Zm9v\n", "Zm 9",
                                "====", "Zg==Zg==", "Zm-v", "Zm_v", "\xff\xfe\xfd\xfc"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint8_t back[16];
        if (b64_decode(bad[i], strlen(bad[i]), back, sizeof back) != -1) {
            fprintf(stderr, "  accepted bad base64 \"%s\"\n", bad[i]);
            CHECK(0);
        }
    }
    uint8_t small[2];
    CHECK_EQ_INT(b64_decode("Zm9v", 4, small, sizeof small), -1);
}

TEST(n0inv_matches_bignum_inverse)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *r32 = BN_new(), *a = BN_new(), *inv = BN_new();
    BN_set_bit(r32, 32);
    for (int i = 0; i < 2000; i++) {
        uint32_t n0;
        random_bytes((uint8_t *)&n0, sizeof n0);
        n0 |= 1;
        if (i == 0)
            n0 = 1;
        if (i == 1)
            n0 = 0xffffffffu;
        uint32_t got = pubkey_n0inv(n0);
        /* Definition: n0 * n0inv == -1 (mod 2^32). */
        CHECK_EQ_INT((uint32_t)(n0 * got), 0xffffffffu);
        /* And the way the struct was first defined: 2^32 - n0^-1. */
        BN_set_word(a, n0);
        CHECK(BN_mod_inverse(inv, a, r32, ctx) != NULL);
        CHECK_EQ_INT(got, (uint32_t)(0x100000000ull - BN_get_word(inv)));
    }
    BN_free(r32);
    BN_free(a);
    BN_free(inv);
    BN_CTX_free(ctx);
}

TEST(pubkey_struct_fields)
{
    adbc_key *k = gen();
    CHECK(k);
    char *line = pub_line(k, "someone@somewhere");
    CHECK(line);
    CHECK_EQ_INT(strlen(line), ADBC_PUBKEY_B64_LEN + 1 + strlen("someone@somewhere"));
    CHECK(line[ADBC_PUBKEY_B64_LEN] == ' ');
    CHECK_STR(line + ADBC_PUBKEY_B64_LEN + 1, "someone@somewhere");
    CHECK(line[ADBC_PUBKEY_B64_LEN - 1] == '=' && line[ADBC_PUBKEY_B64_LEN - 2] != '=');

    uint8_t s[ADBC_PUBKEY_SIZE];
    CHECK(line_struct(line, s) == 0);
    /* Fixed layout: 4 + 4 + 256 + 256 + 4 = 524 bytes. */
    CHECK_EQ_INT(ADBC_PUBKEY_SIZE, 524);
    CHECK_EQ_INT(core_rd32(s), 64);
    CHECK_EQ_INT(core_rd32(s + 520), 65537);

    BIGNUM *n = NULL, *e = NULL;
    CHECK(EVP_PKEY_get_bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_N, &n));
    CHECK(EVP_PKEY_get_bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_E, &e));
    BIGNUM *mod = BN_lebin2bn(s + 8, 256, NULL);
    CHECK(BN_cmp(mod, n) == 0);
    /* Little-endian words, least significant first: byte 8 is n's low byte. */
    CHECK_EQ_INT(s[8], BN_mod_word(n, 256));
    CHECK_EQ_INT(s[8 + 255] & 0x80, 0x80);

    /* n0inv = -1/n mod 2^32, computed independently with BN_mod_inverse. */
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *r32 = BN_new(), *low = BN_new(), *inv = BN_new();
    BN_set_bit(r32, 32);
    BN_mod(low, n, r32, ctx);
    CHECK(BN_mod_inverse(inv, low, r32, ctx));
    CHECK_EQ_INT(core_rd32(s + 4), (uint32_t)(0x100000000ull - BN_get_word(inv)));

    /* rr = 2^4096 mod n, computed as a modular exponentiation of 2. */
    BIGNUM *two = BN_new(), *exp = BN_new(), *rr = BN_new();
    BN_set_word(two, 2);
    BN_set_word(exp, 4096);
    CHECK(BN_mod_exp(rr, two, exp, n, ctx));
    BIGNUM *got_rr = BN_lebin2bn(s + 264, 256, NULL);
    CHECK(BN_cmp(rr, got_rr) == 0);
    CHECK_EQ_INT(BN_get_word(e), core_rd32(s + 520));

    /* Decoding the struct gives back the same public key. */
    EVP_PKEY *back = NULL;
    CHECK_EQ_INT(pubkey_decode(s, &back), 0);
    CHECK(EVP_PKEY_eq(back, k->pkey) == 1);

    EVP_PKEY_free(back);
    BN_free(two);
    BN_free(exp);
    BN_free(rr);
    BN_free(got_rr);
    BN_free(r32);
    BN_free(low);
    BN_free(inv);
    BN_CTX_free(ctx);
    BN_free(mod);
    BN_free(n);
    BN_free(e);
    adbc_free(line);
    adbc_key_free(k);
}

TEST(known_answer_from_adb)
{
    const char *dir = fresh_dir("kat");
    const char *kp = path_in(dir, "adbkey");
    CHECK(write_file(kp, kat_pem, strlen(kat_pem), 0600) == 0);
    adbc_key *k = NULL;
    CHECK_EQ_INT(adbc_key_load(&k, kp, 0), 0);
    CHECK_STR(adbc_key_path(k), kp);
    set_comment_env();
    char *line = pub_line(k, NULL);
    CHECK_STR(line, kat_pub);
    adbc_free(line);
    line = pub_line(k, "adbc-test@kat.example");
    CHECK_STR(line, kat_pub);
    adbc_free(line);
    line = pub_line(k, "");
    CHECK(line && strlen(line) == ADBC_PUBKEY_B64_LEN);
    CHECK(strncmp(line, kat_pub, ADBC_PUBKEY_B64_LEN) == 0);
    adbc_free(line);
    adbc_key_free(k);
}

/* ---- byte identity with Debian's adb ------------------------------------ */

TEST(adb_keygen_pub_is_byte_identical)
{
    CHECK(adb_path() != NULL);
    set_comment_env();
    for (int round = 0; round < 3; round++) {
        const char *dir = fresh_dir("adbkeygen");
        const char *kp = path_in(dir, "adbkey");
        CHECK_EQ_INT(run_adb(dir, NULL, "keygen", kp), 0);

        size_t adb_len;
        char *adb_pub = read_all(path_in(dir, "adbkey.pub"), &adb_len);
        CHECK(adb_pub);
        /* adb writes the line alone: no newline, no NUL. */
        CHECK(adb_len > 0 && adb_pub[adb_len - 1] != '\n' && memchr(adb_pub, 0, adb_len) == NULL);

        adbc_key *k = NULL;
        CHECK_EQ_INT(adbc_key_load(&k, kp, 0), 0);
        char *line = pub_line(k, NULL);
        CHECK(line);
        CHECK_EQ_INT(strlen(line), adb_len);
        CHECK_STR(line, adb_pub);

        /* What adbc_key_save writes matches adb's files byte for byte. */
        const char *mine = path_in(dir, "mine");
        CHECK_EQ_INT(adbc_key_save(k, mine), 0);
        size_t my_len;
        char *my_pub = read_all(path_in(dir, "mine.pub"), &my_len);
        CHECK(my_pub && my_len == adb_len && memcmp(my_pub, adb_pub, adb_len) == 0);
        char *adb_pem = read_all(kp, NULL), *my_pem = read_all(mine, NULL);
        CHECK(adb_pem && my_pem);
        CHECK_STR(my_pem, adb_pem);
        CHECK_EQ_INT(file_mode(mine), 0600);
        CHECK_EQ_INT(file_mode(kp), 0600);

        free(adb_pem);
        free(my_pem);
        free(my_pub);
        adbc_free(line);
        free(adb_pub);
        adbc_key_free(k);
    }
}

TEST(adb_reads_adbc_generated_key)
{
    CHECK(adb_path() != NULL);
    set_comment_env();
    const char *dir = fresh_dir("adbpubkey");
    const char *kp = path_in(dir, "adbkey");
    adbc_key *k = gen_saved(kp);
    CHECK(k);
    /* `adb pubkey FILE` recomputes the line from our PEM and prints it with
     * a newline. */
    const char *out = path_in(dir, "adb-says");
    CHECK_EQ_INT(run_adb(dir, out, "pubkey", kp), 0);
    char *said = read_all(out, NULL);
    char *mine = read_all(path_in(dir, "adbkey.pub"), NULL);
    CHECK(said && mine);
    size_t n = strlen(said);
    CHECK(n > 0 && said[n - 1] == '\n');
    said[n - 1] = '\0';
    CHECK_STR(mine, said);

    /* The .pub line decodes back to the generated modulus. */
    uint8_t s[ADBC_PUBKEY_SIZE];
    CHECK(line_struct(mine, s) == 0);
    BIGNUM *nbn = NULL;
    CHECK(EVP_PKEY_get_bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_N, &nbn));
    BIGNUM *mod = BN_lebin2bn(s + 8, 256, NULL);
    CHECK(BN_cmp(mod, nbn) == 0);
    BN_free(mod);
    BN_free(nbn);
    free(said);
    free(mine);
    adbc_key_free(k);
}

/* ---- signing ------------------------------------------------------------ */

TEST(signature_is_pkcs1_over_token_as_sha1_digest)
{
    adbc_key *k = gen();
    CHECK(k);
    uint8_t token[20], sig[ADBC_AUTH_MAX_SIG], m[ADBC_AUTH_MAX_SIG];
    random_bytes(token, sizeof token);
    size_t sig_len = 0;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &sig_len, k, token, sizeof token), 0);
    CHECK_EQ_INT(sig_len, 256);

    /* Undo the RSA operation with no padding and check the encoded message
     * by hand: 00 01 FF.. 00, SHA-1's DigestInfo prefix, then the token
     * itself (not a hash of it). */
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k->pkey, NULL);
    size_t mlen = sizeof m;
    CHECK(ctx && EVP_PKEY_verify_recover_init(ctx) > 0);
    CHECK(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0);
    CHECK(EVP_PKEY_verify_recover(ctx, m, &mlen, sig, sig_len) > 0);
    EVP_PKEY_CTX_free(ctx);
    CHECK_EQ_INT(mlen, 256);
    static const uint8_t sha1_prefix[] = {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e,
                                          0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14};
    size_t ps = 256 - 3 - sizeof sha1_prefix - 20;
    CHECK(m[0] == 0x00 && m[1] == 0x01);
    for (size_t i = 0; i < ps; i++)
        CHECK(m[2 + i] == 0xff);
    CHECK(m[2 + ps] == 0x00);
    CHECK_MEM(m + 3 + ps, sha1_prefix, sizeof sha1_prefix);
    CHECK_MEM(m + 3 + ps + sizeof sha1_prefix, token, 20);

    /* Wrong token sizes are refused. */
    CHECK_EQ_INT(adbc_key_sign_token(sig, &sig_len, k, token, 19), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_sign_token(sig, &sig_len, k, token, 32), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_sign_token(sig, &sig_len, NULL, token, 20), ADBC_EINVAL);
    adbc_key_free(k);
}

TEST(sign_verify_round_trip_and_failures)
{
    adbc_key *a = gen(), *b = gen();
    CHECK(a && b);
    char *la = pub_line(a, NULL), *lb = pub_line(b, "b@host");
    CHECK(la && lb);

    adbc_authorized_keys *only_b = NULL, *both = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_new(&only_b), 0);
    CHECK_EQ_INT(adbc_authorized_keys_new(&both), 0);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(only_b, lb, strlen(lb)), 0);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(both, lb, strlen(lb)), 0);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(both, la, strlen(la)), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(both), 2);

    for (int round = 0; round < 20; round++) {
        uint8_t token[20], sig[ADBC_AUTH_MAX_SIG];
        size_t len;
        random_bytes(token, sizeof token);
        CHECK_EQ_INT(adbc_key_sign_token(sig, &len, a, token, 20), 0);
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, sig, len), 0);
        /* The wrong key does not verify. */
        CHECK_EQ_INT(adbc_authorized_keys_verify(only_b, token, 20, sig, len),
                     ADBC_EUNAUTHORIZED);
        /* A tampered signature does not verify: flip one bit anywhere. */
        size_t pos = (size_t)rand() % len;
        uint8_t bit = (uint8_t)(1u << (rand() % 8));
        sig[pos] ^= bit;
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, sig, len), ADBC_EUNAUTHORIZED);
        sig[pos] ^= bit;
        /* Nor a different token. */
        token[rand() % 20] ^= 0x40;
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, sig, len), ADBC_EUNAUTHORIZED);
        /* Truncated, empty, oversized signatures. */
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, sig, len - 1),
                     ADBC_EUNAUTHORIZED);
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, sig, 0), ADBC_EUNAUTHORIZED);
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, NULL, 0), ADBC_EUNAUTHORIZED);
        uint8_t big[600] = {0};
        CHECK_EQ_INT(adbc_authorized_keys_verify(both, token, 20, big, sizeof big),
                     ADBC_EUNAUTHORIZED);
    }
    /* B's own signature verifies against the set that holds only B. */
    uint8_t token[20] = {1, 2, 3}, sig[ADBC_AUTH_MAX_SIG];
    size_t len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &len, b, token, 20), 0);
    CHECK_EQ_INT(adbc_authorized_keys_verify(only_b, token, 20, sig, len), 0);
    CHECK_EQ_INT(adbc_authorized_keys_verify(only_b, token, 16, sig, len), ADBC_EINVAL);
    /* An empty set authorizes nobody. */
    adbc_authorized_keys *none = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_new(&none), 0);
    CHECK_EQ_INT(adbc_authorized_keys_verify(none, token, 20, sig, len), ADBC_EUNAUTHORIZED);
    CHECK(msg_has("authorized"));

    adbc_authorized_keys_free(none);
    adbc_authorized_keys_free(only_b);
    adbc_authorized_keys_free(both);
    free(la);
    free(lb);
    adbc_key_free(a);
    adbc_key_free(b);
}

TEST(large_key_signs_but_has_no_adb_public_key)
{
    adbc_key *k = NULL;
    CHECK_EQ_INT(adbc_key_generate(&k, 4096), 0);
    uint8_t token[20] = {9}, sig[ADBC_AUTH_MAX_SIG];
    size_t len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &len, k, token, 20), 0);
    CHECK_EQ_INT(len, 512);
    char *line = NULL;
    CHECK_EQ_INT(adbc_key_public_line(&line, k, NULL), ADBC_EUNSUPPORTED);
    CHECK(line == NULL);
    CHECK(msg_has("2048"));
    const char *dir = fresh_dir("big");
    CHECK_EQ_INT(adbc_key_save(k, path_in(dir, "adbkey")), ADBC_EUNSUPPORTED);
    CHECK(!exists(path_in(dir, "adbkey")) && !exists(path_in(dir, "adbkey.pub")));
    adbc_key_free(k);

    CHECK_EQ_INT(adbc_key_generate(&k, 1024), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_generate(&k, 8192), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_generate(&k, 2049), ADBC_EINVAL);
}

/* ---- adb_keys lines ----------------------------------------------------- */

TEST(authorized_line_forms)
{
    adbc_key *k = gen();
    CHECK(k);
    char *line = pub_line(k, "x@y");
    CHECK(line);
    char buf[1024];
    uint8_t token[20] = {7}, sig[ADBC_AUTH_MAX_SIG];
    size_t sig_len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &sig_len, k, token, 20), 0);

    const char *forms[] = {"%s", "%s\n", "%s\r\n", "%.700s", "%.700s\n", "%.700s\tcomment"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        adbc_authorized_keys *set = NULL;
        CHECK_EQ_INT(adbc_authorized_keys_new(&set), 0);
        int n = snprintf(buf, sizeof buf, forms[i], line);
        CHECK_EQ_INT(adbc_authorized_keys_add_line(set, buf, (size_t)n), 0);
        CHECK_EQ_INT(adbc_authorized_keys_verify(set, token, 20, sig, sig_len), 0);
        adbc_authorized_keys_free(set);
    }

    /* The AUTH(RSAPUBLICKEY) payload: NUL-terminated, junk after the NUL. */
    adbc_authorized_keys *set = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_new(&set), 0);
    size_t n = strlen(line);
    memcpy(buf, line, n + 1);
    memcpy(buf + n + 1, "\n\njunk", 6);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(set, buf, n + 7), 0);
    /* The same key again (other comment) is kept once. */
    CHECK_EQ_INT(adbc_authorized_keys_add_line(set, line, ADBC_PUBKEY_B64_LEN), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(set), 1);
    CHECK_EQ_INT(adbc_authorized_keys_verify(set, token, 20, sig, sig_len), 0);
    adbc_authorized_keys_free(set);
    adbc_free(line);
    adbc_key_free(k);
}

static int rejects(adbc_authorized_keys *set, const char *line, size_t len, const char *why)
{
    int rc = adbc_authorized_keys_add_line(set, line, len);
    if (rc != ADBC_EFORMAT) {
        fprintf(stderr, "  %s: got %d (%s), want ADBC_EFORMAT\n", why, rc, adbc_last_error());
        return 0;
    }
    if (adbc_last_error()[0] == '\0') {
        fprintf(stderr, "  %s: no message\n", why);
        return 0;
    }
    return 1;
}

/* Re-encode a struct with one field changed. */
static void struct_line(const uint8_t s[ADBC_PUBKEY_SIZE], char out[ADBC_PUBKEY_B64_LEN + 1])
{
    b64_encode(s, ADBC_PUBKEY_SIZE, out);
}

TEST(authorized_line_malformed)
{
    adbc_key *k = gen();
    CHECK(k);
    char *line = pub_line(k, "c");
    CHECK(line);
    adbc_authorized_keys *set = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_new(&set), 0);
    char buf[2048];

    CHECK(rejects(set, "", 0, "empty"));
    CHECK(rejects(set, "\n", 1, "newline only"));
    snprintf(buf, sizeof buf, " %s", line);
    CHECK(rejects(set, buf, strlen(buf), "leading blank"));
    CHECK(rejects(set, line, ADBC_PUBKEY_B64_LEN - 1, "truncated by one"));
    CHECK(rejects(set, line, 400, "truncated"));
    CHECK(rejects(set, line, ADBC_PUBKEY_B64_LEN - 4, "one group short"));
    snprintf(buf, sizeof buf, "%.700sA c", line);
    CHECK(rejects(set, buf, strlen(buf), "one char long"));
    snprintf(buf, sizeof buf, "%.699s! c", line);
    CHECK(rejects(set, buf, strlen(buf), "bad char"));
    snprintf(buf, sizeof buf, "%.698sB= c", line);
    CHECK(rejects(set, buf, strlen(buf), "non-canonical padding bits"));
    snprintf(buf, sizeof buf, "%s\n%s", line, line);
    CHECK(rejects(set, buf, strlen(buf), "two lines"));
    snprintf(buf, sizeof buf, "%.300s\n%s", line, line + 300);
    CHECK(rejects(set, buf, strlen(buf), "newline inside base64"));
    CHECK(rejects(set, "hello world", 11, "garbage"));

    /* Structurally wrong keys. */
    uint8_t s[ADBC_PUBKEY_SIZE], t[ADBC_PUBKEY_SIZE];
    char enc[ADBC_PUBKEY_B64_LEN + 1];
    CHECK(line_struct(line, s) == 0);
    static const uint32_t bad_words[] = {0, 32, 63, 65, 128, 0xffffffffu};
    for (size_t i = 0; i < sizeof bad_words / sizeof *bad_words; i++) {
        memcpy(t, s, sizeof t);
        core_wr32(t, bad_words[i]);
        struct_line(t, enc);
        CHECK(rejects(set, enc, strlen(enc), "modulus size"));
    }
    static const uint32_t bad_e[] = {0, 1, 2, 65536};
    for (size_t i = 0; i < sizeof bad_e / sizeof *bad_e; i++) {
        memcpy(t, s, sizeof t);
        core_wr32(t + ADBC_PUBKEY_OFF_EXPONENT, bad_e[i]);
        struct_line(t, enc);
        CHECK(rejects(set, enc, strlen(enc), "exponent"));
    }
    memcpy(t, s, sizeof t);
    t[ADBC_PUBKEY_OFF_MODULUS] &= 0xfe;
    struct_line(t, enc);
    CHECK(rejects(set, enc, strlen(enc), "even modulus"));
    memcpy(t, s, sizeof t);
    t[ADBC_PUBKEY_OFF_RR - 1] = 0;
    struct_line(t, enc);
    CHECK(rejects(set, enc, strlen(enc), "short modulus"));
    /* 3 is a valid exponent; it must still decode (verify just fails). */
    memcpy(t, s, sizeof t);
    core_wr32(t + ADBC_PUBKEY_OFF_EXPONENT, 3);
    struct_line(t, enc);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(set, enc, strlen(enc)), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(set), 1);

    /* Huge inputs: a megabyte of base64 letters, with and without spaces. */
    size_t huge = 1 << 20;
    char *big = malloc(huge);
    memset(big, 'A', huge);
    CHECK(rejects(set, big, huge, "huge"));
    big[700] = ' ';
    CHECK(rejects(set, big, huge, "huge comment after a zero key"));
    free(big);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(set, NULL, 5), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_authorized_keys_add_line(NULL, line, strlen(line)), ADBC_EINVAL);

    CHECK_EQ_INT(adbc_authorized_keys_count(set), 1);
    adbc_authorized_keys_free(set);
    adbc_free(line);
    adbc_key_free(k);
}

TEST(authorized_line_fuzz)
{
    /* Random bytes and random mutations of a valid line: every outcome is
     * either a clean ADBC_EFORMAT or a key (never a crash, a hang or a
     * sanitizer report). */
    adbc_key *k = gen();
    CHECK(k);
    char *line = pub_line(k, "fuzz@host");
    CHECK(line);
    size_t llen = strlen(line);
    adbc_authorized_keys *set = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_new(&set), 0);
    char buf[2048];
    int accepted = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n;
        if (i % 2) {
            n = (size_t)rand() % sizeof buf;
            random_bytes((uint8_t *)buf, n);
        } else {
            n = llen;
            memcpy(buf, line, n);
            int edits = 1 + rand() % 4;
            for (int e = 0; e < edits; e++)
                buf[(size_t)rand() % n] = (char)(rand() >> 7);
            if (rand() % 4 == 0)
                n = (size_t)rand() % (n + 1);
        }
        int rc = adbc_authorized_keys_add_line(set, buf, n);
        CHECK(rc == 0 || rc == ADBC_EFORMAT);
        accepted += rc == 0;
    }
    /* Mutations inside the comment (or the trailing NUL cut) keep the key
     * valid, so some must have been accepted; the set stays small. */
    CHECK(accepted > 0);
    CHECK(adbc_authorized_keys_count(set) >= 1);
    adbc_authorized_keys_free(set);
    adbc_free(line);
    adbc_key_free(k);
}

TEST(authorized_keys_file)
{
    adbc_key *a = gen(), *b = gen();
    CHECK(a && b);
    char *la = pub_line(a, "a@h"), *lb = pub_line(b, NULL);
    CHECK(la && lb);
    const char *dir = fresh_dir("adbkeys");
    const char *f = path_in(dir, "adb_keys");
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "# adb_keys for a test\n%s\n\n%s\r\n   \n", la, lb);
    CHECK(write_file(f, buf, (size_t)n, 0644) == 0);
    adbc_authorized_keys *set = NULL;
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, f), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(set), 2);
    uint8_t token[20] = {5}, sig[ADBC_AUTH_MAX_SIG];
    size_t len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &len, b, token, 20), 0);
    CHECK_EQ_INT(adbc_authorized_keys_verify(set, token, 20, sig, len), 0);
    adbc_authorized_keys_free(set);

    /* No trailing newline on the last line is fine too. */
    n = snprintf(buf, sizeof buf, "%s", la);
    CHECK(write_file(f, buf, (size_t)n, 0644) == 0);
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, f), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(set), 1);
    adbc_authorized_keys_free(set);

    /* A bad line fails the load and the message names file and line. */
    n = snprintf(buf, sizeof buf, "%s\n\nnot a key\n%s\n", la, lb);
    CHECK(write_file(f, buf, (size_t)n, 0644) == 0);
    set = (adbc_authorized_keys *)1;
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, f), ADBC_EFORMAT);
    CHECK(set == NULL);
    CHECK(msg_has("line 3"));
    CHECK(msg_has(f));

    /* A NUL byte inside a line. */
    n = snprintf(buf, sizeof buf, "%s\n", la);
    buf[702] = '\0'; /* inside the comment */
    CHECK(write_file(f, buf, (size_t)n, 0644) == 0);
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, f), ADBC_EFORMAT);

    /* Missing file: nobody authorized, not an error. Directory: error. */
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, path_in(dir, "nope")), 0);
    CHECK_EQ_INT(adbc_authorized_keys_count(set), 0);
    adbc_authorized_keys_free(set);
    CHECK_EQ_INT(adbc_authorized_keys_load(&set, dir), ADBC_EFORMAT);
    CHECK(msg_has("not a regular file"));

    free(la);
    free(lb);
    adbc_key_free(a);
    adbc_key_free(b);
}

/* ---- key files ---------------------------------------------------------- */

TEST(save_and_reload)
{
    set_comment_env();
    const char *dir = fresh_dir("save");
    const char *kp = path_in(dir, "adbkey");
    adbc_key *k = gen_saved(kp);
    CHECK(k);
    CHECK(adbc_key_path(k) == NULL);
    CHECK_EQ_INT(file_mode(kp), 0600);
    CHECK_EQ_INT(file_mode(path_in(dir, "adbkey.pub")), 0644);
    char *pub = read_all(path_in(dir, "adbkey.pub"), NULL);
    char *line = pub_line(k, NULL);
    CHECK(pub && line);
    CHECK_STR(pub, line);
    char *pem = read_all(kp, NULL);
    CHECK(pem && strncmp(pem, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);

    adbc_key *back = NULL;
    CHECK_EQ_INT(adbc_key_load(&back, kp, 0), 0);
    CHECK(EVP_PKEY_eq(back->pkey, k->pkey) == 1);
    CHECK_STR(adbc_key_path(back), kp);

    /* Saving another key over it replaces both files; no temporaries stay. */
    adbc_key *k2 = gen_saved(kp);
    CHECK(k2);
    adbc_key *back2 = NULL;
    CHECK_EQ_INT(adbc_key_load(&back2, kp, 0), 0);
    CHECK(EVP_PKEY_eq(back2->pkey, k2->pkey) == 1);
    CHECK(EVP_PKEY_eq(back2->pkey, k->pkey) != 1);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(system(cmd) == 0);

    /* Saving into a directory that does not exist fails cleanly. */
    CHECK_EQ_INT(adbc_key_save(k, path_in(dir, "no/such/adbkey")), ADBC_ENOTFOUND);

    free(pub);
    adbc_free(line);
    free(pem);
    adbc_key_free(k);
    adbc_key_free(k2);
    adbc_key_free(back);
    adbc_key_free(back2);
}

TEST(load_refuses_insecure_permissions)
{
    const char *dir = fresh_dir("perm");
    const char *kp = path_in(dir, "adbkey");
    adbc_key *k = gen_saved(kp);
    CHECK(k);
    adbc_key_free(k);
    static const mode_t bad[] = {0644, 0640, 0604, 0660, 0606, 0610, 0601, 0777};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(chmod(kp, bad[i]) == 0);
        k = (adbc_key *)1;
        CHECK_EQ_INT(adbc_key_load(&k, kp, 0), ADBC_EPERM);
        CHECK(k == NULL);
        char want[700];
        snprintf(want, sizeof want, "chmod 600 %s", kp);
        CHECK(msg_has(want));
        CHECK_EQ_INT(adbc_key_load(&k, kp, 1), 0);
        adbc_key_free(k);
    }
    CHECK(chmod(kp, 0400) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, kp, 0), 0);
    adbc_key_free(k);
}

TEST(load_errors_name_the_file)
{
    const char *dir = fresh_dir("bad");
    adbc_key *k = NULL;

    CHECK_EQ_INT(adbc_key_load(&k, path_in(dir, "missing"), 0), ADBC_ENOTFOUND);
    CHECK(msg_has(path_in(dir, "missing")));
    CHECK_EQ_INT(adbc_key_load(&k, "", 0), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_load(&k, NULL, 0), ADBC_EINVAL);

    const char *garbage = path_in(dir, "garbage");
    CHECK(write_file(garbage, "hello\n", 6, 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, garbage, 0), ADBC_EKEY);
    CHECK(msg_has(garbage));

    const char *empty = path_in(dir, "empty");
    CHECK(write_file(empty, "", 0, 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, empty, 0), ADBC_EKEY);

    /* The .pub file given by mistake. */
    const char *pub = path_in(dir, "adbkey.pub");
    CHECK(write_file(pub, kat_pub, strlen(kat_pub), 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, pub, 0), ADBC_EKEY);
    CHECK(msg_has("adbkey.pub"));

    /* A PEM whose body is damaged. */
    char *broken = strdup(kat_pem);
    broken[200] = broken[200] == 'A' ? 'B' : 'A';
    broken[300] = '*';
    const char *bp = path_in(dir, "broken");
    CHECK(write_file(bp, broken, strlen(broken), 0600) == 0);
    free(broken);
    CHECK_EQ_INT(adbc_key_load(&k, bp, 0), ADBC_EKEY);
    CHECK(msg_has(bp));

    /* Truncated PEM. */
    CHECK(write_file(bp, kat_pem, 900, 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, bp, 0), ADBC_EKEY);

    /* A directory, and a FIFO (must not block waiting for a writer). */
    CHECK_EQ_INT(adbc_key_load(&k, dir, 0), ADBC_EKEY);
    CHECK(msg_has("not a regular file"));
    const char *fifo = path_in(dir, "fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, fifo, 0), ADBC_EKEY);

    /* Too large to be a key. */
    char *bigdata = calloc(1, 100000);
    memset(bigdata, 'x', 99999);
    const char *bigf = path_in(dir, "big");
    CHECK(write_file(bigf, bigdata, 99999, 0600) == 0);
    free(bigdata);
    CHECK_EQ_INT(adbc_key_load(&k, bigf, 0), ADBC_EKEY);
    CHECK(msg_has("too large"));

    /* Encrypted, EC and PKCS#1 keys, written by OpenSSL. */
    EVP_PKEY *rsa = EVP_RSA_gen(2048), *ec = EVP_EC_gen("P-256");
    CHECK(rsa && ec);
    const char *enc = path_in(dir, "encrypted");
    CHECK(write_pem(enc, rsa, 0, 1) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, enc, 0), ADBC_EKEY);
    CHECK(msg_has("encrypted"));
    const char *ecp = path_in(dir, "ec");
    CHECK(write_pem(ecp, ec, 0, 0) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, ecp, 0), ADBC_EKEY);
    CHECK(msg_has("RSA"));
    const char *pkcs1 = path_in(dir, "pkcs1");
    CHECK(write_pem(pkcs1, rsa, 1, 0) == 0);
    char *text = read_all(pkcs1, NULL);
    CHECK(text && strstr(text, "BEGIN RSA PRIVATE KEY"));
    free(text);
    CHECK_EQ_INT(adbc_key_load(&k, pkcs1, 0), 0);
    CHECK(EVP_PKEY_eq(k->pkey, rsa) == 1);
    adbc_key_free(k);

    /* A 1024-bit key loads and signs, but has no adb public key line. */
    EVP_PKEY *small = EVP_RSA_gen(1024);
    const char *sp = path_in(dir, "small");
    CHECK(small && write_pem(sp, small, 0, 0) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, sp, 0), 0);
    uint8_t token[20] = {1}, sig[ADBC_AUTH_MAX_SIG];
    size_t len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &len, k, token, 20), 0);
    CHECK_EQ_INT(len, 128);
    char *line = NULL;
    CHECK_EQ_INT(adbc_key_public_line(&line, k, NULL), ADBC_EUNSUPPORTED);
    adbc_key_free(k);

    EVP_PKEY_free(small);
    EVP_PKEY_free(rsa);
    EVP_PKEY_free(ec);
}

TEST(public_line_comments)
{
    adbc_key *k = NULL;
    const char *dir = fresh_dir("comment");
    const char *kp = path_in(dir, "adbkey");
    CHECK(write_file(kp, kat_pem, strlen(kat_pem), 0600) == 0);
    CHECK_EQ_INT(adbc_key_load(&k, kp, 0), 0);
    char *line = NULL;
    CHECK_EQ_INT(adbc_key_public_line(&line, k, "two\nlines"), ADBC_EINVAL);
    CHECK(line == NULL);
    char longc[1100];
    memset(longc, 'c', sizeof longc - 1);
    longc[sizeof longc - 1] = '\0';
    CHECK_EQ_INT(adbc_key_public_line(&line, k, longc), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_public_line(NULL, k, NULL), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_key_public_line(&line, NULL, NULL), ADBC_EINVAL);

    /* Environment-derived comments: LOGNAME and HOSTNAME first, and control
     * characters never reach the line. */
    setenv("LOGNAME", "evil\nuser", 1);
    setenv("HOSTNAME", "h\r1", 1);
    line = pub_line(k, NULL);
    CHECK(line);
    CHECK_STR(line + ADBC_PUBKEY_B64_LEN + 1, "evil_user@h_1");
    adbc_free(line);
    /* Empty variables fall back to the system's names, never to "". */
    setenv("LOGNAME", "", 1);
    setenv("HOSTNAME", "", 1);
    line = pub_line(k, NULL);
    CHECK(line);
    const char *c = line + ADBC_PUBKEY_B64_LEN + 1;
    const char *at = strchr(c, '@');
    CHECK(at && at > c && at[1] != '\0');
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && host[0])
        CHECK_STR(at + 1, host);
    adbc_free(line);
    set_comment_env();
    adbc_key_free(k);
}

/* ---- keyrings ----------------------------------------------------------- */

TEST(keyring_dedup_and_order)
{
    const char *dir = fresh_dir("ring");
    adbc_key *a = gen_saved(path_in(dir, "a")), *b = gen();
    CHECK(a && b);
    adbc_keyring *ring = NULL;
    CHECK_EQ_INT(adbc_keyring_new(&ring), 0);
    CHECK_EQ_INT(adbc_keyring_add(ring, a), 0);
    CHECK_EQ_INT(adbc_keyring_add(ring, b), 0);
    adbc_key *a2 = NULL;
    CHECK_EQ_INT(adbc_key_load(&a2, path_in(dir, "a"), 0), 0);
    CHECK_EQ_INT(adbc_keyring_add(ring, a2), 0); /* duplicate: freed */
    CHECK_EQ_INT(adbc_keyring_count(ring), 2);
    CHECK(adbc_keyring_get(ring, 0) == a);
    CHECK(adbc_keyring_get(ring, 1) == b);
    CHECK(adbc_keyring_get(ring, 2) == NULL);
    CHECK_EQ_INT(adbc_keyring_add(ring, NULL), ADBC_EINVAL);
    CHECK_EQ_INT(adbc_keyring_count(NULL), 0);
    adbc_keyring_free(ring);
}

TEST(vendor_keys_files_and_directories)
{
    const char *dir = fresh_dir("vendor");
    const char *vdir = path_in(dir, "keys.d");
    CHECK(mkdir(vdir, 0700) == 0);
    adbc_key *f = gen_saved(path_in(dir, "single"));
    adbc_key *d1 = gen_saved(path_in(vdir, "b.adb_key"));
    adbc_key *d2 = gen_saved(path_in(vdir, "a.adb_key"));
    CHECK(f && d1 && d2);
    /* Not keys by name: ignored even though they do not parse. */
    CHECK(write_file(path_in(vdir, "notes.txt"), "junk", 4, 0600) == 0);
    CHECK(write_file(path_in(vdir, "x.adb_key.bak"), "junk", 4, 0600) == 0);
    CHECK(mkdir(path_in(vdir, "sub"), 0700) == 0);
    /* The same key as the single file, under another name. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s'", path_in(dir, "single"),
             path_in(vdir, "c.adb_key"));
    CHECK(system(cmd) == 0);

    adbc_keyring *ring = NULL;
    CHECK_EQ_INT(adbc_keyring_new(&ring), 0);
    char spec[1400];
    snprintf(spec, sizeof spec, "%s::%s:", path_in(dir, "single"), vdir);
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(ring, spec), 0);
    CHECK_EQ_INT(adbc_keyring_count(ring), 3);
    /* Spec order, then directory entries by name: single, a, b. */
    CHECK(EVP_PKEY_eq(adbc_keyring_get(ring, 0)->pkey, f->pkey) == 1);
    CHECK(EVP_PKEY_eq(adbc_keyring_get(ring, 1)->pkey, d2->pkey) == 1);
    CHECK(EVP_PKEY_eq(adbc_keyring_get(ring, 2)->pkey, d1->pkey) == 1);
    CHECK_STR(adbc_key_path(adbc_keyring_get(ring, 1)), path_in(vdir, "a.adb_key"));

    /* Failures leave the ring as it was and name the culprit. */
    snprintf(spec, sizeof spec, "%s:%s", vdir, path_in(dir, "nope"));
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(ring, spec), ADBC_ENOTFOUND);
    CHECK(msg_has(path_in(dir, "nope")));
    CHECK_EQ_INT(adbc_keyring_count(ring), 3);

    CHECK(write_file(path_in(vdir, "d.adb_key"), "not a key", 9, 0600) == 0);
    adbc_keyring *fresh = NULL;
    CHECK_EQ_INT(adbc_keyring_new(&fresh), 0);
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(fresh, vdir), ADBC_EKEY);
    CHECK(msg_has("d.adb_key"));
    CHECK_EQ_INT(adbc_keyring_count(fresh), 0);
    CHECK(unlink(path_in(vdir, "d.adb_key")) == 0);

    CHECK(chmod(path_in(vdir, "a.adb_key"), 0644) == 0);
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(fresh, vdir), ADBC_EPERM);
    CHECK(msg_has("chmod 600"));
    CHECK_EQ_INT(adbc_keyring_count(fresh), 0);
    CHECK(chmod(path_in(vdir, "a.adb_key"), 0600) == 0);

    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(fresh, ""), 0);
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(fresh, ":::"), 0);
    CHECK_EQ_INT(adbc_keyring_count(fresh), 0);
    CHECK_EQ_INT(adbc_keyring_add_vendor_keys(fresh, "/dev/null"), ADBC_EKEY);

    adbc_keyring_free(fresh);
    adbc_keyring_free(ring);
    adbc_key_free(f);
    adbc_key_free(d1);
    adbc_key_free(d2);
}

static void clean_env(const char *home)
{
    setenv("HOME", home, 1);
    unsetenv("ANDROID_USER_HOME");
    unsetenv("ADB_VENDOR_KEYS");
    set_comment_env();
}

TEST(load_default_generates_in_home)
{
    const char *home = fresh_dir("home");
    clean_env(home);
    mode_t old = umask(022);
    adbc_keyring *ring = NULL;
    int rc = adbc_keyring_load_default(&ring, 1);
    umask(old);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(adbc_keyring_count(ring), 1);
    const char *adir = path_in(home, ".android");
    const char *kp = path_in(adir, "adbkey");
    CHECK_EQ_INT(file_mode(adir), 0750);
    CHECK_EQ_INT(file_mode(kp), 0600);
    CHECK_EQ_INT(file_mode(path_in(adir, "adbkey.pub")), 0644);
    const adbc_key *k = adbc_keyring_get(ring, 0);
    CHECK_STR(adbc_key_path(k), kp);
    char *pub = read_all(path_in(adir, "adbkey.pub"), NULL);
    char *line = pub_line(k, NULL);
    CHECK(pub && line);
    CHECK_STR(pub, line);

    /* The next load (without generate) finds the same key. */
    adbc_keyring *again = NULL;
    CHECK_EQ_INT(adbc_keyring_load_default(&again, 0), 0);
    CHECK_EQ_INT(adbc_keyring_count(again), 1);
    CHECK(EVP_PKEY_eq(adbc_keyring_get(again, 0)->pkey, k->pkey) == 1);

    free(pub);
    adbc_free(line);
    adbc_keyring_free(again);
    adbc_keyring_free(ring);
}

TEST(load_default_android_user_home)
{
    const char *home = fresh_dir("home2");
    clean_env(home);
    const char *custom = path_in(home, "custom-android");
    setenv("ANDROID_USER_HOME", custom, 1);
    adbc_keyring *ring = NULL;
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 1), 0);
    CHECK_STR(adbc_key_path(adbc_keyring_get(ring, 0)), path_in(custom, "adbkey"));
    CHECK(exists(path_in(custom, "adbkey.pub")));
    CHECK(!exists(path_in(home, ".android")));
    adbc_keyring_free(ring);

    /* Empty ANDROID_USER_HOME counts as unset. */
    setenv("ANDROID_USER_HOME", "", 1);
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 1), 0);
    CHECK_STR(adbc_key_path(adbc_keyring_get(ring, 0)), path_in(home, ".android/adbkey"));
    adbc_keyring_free(ring);
    unsetenv("ANDROID_USER_HOME");
}

TEST(load_default_without_generate)
{
    const char *home = fresh_dir("home3");
    clean_env(home);
    adbc_keyring *ring = (adbc_keyring *)1;
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 0), ADBC_ENOTFOUND);
    CHECK(ring == NULL);
    CHECK(msg_has("adbkey"));
    CHECK(!exists(path_in(home, ".android")));

    /* Vendor keys alone are enough. */
    const char *vk = path_in(home, "vendor.adb_key");
    adbc_key *v = gen_saved(vk);
    CHECK(v);
    setenv("ADB_VENDOR_KEYS", vk, 1);
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 0), 0);
    CHECK_EQ_INT(adbc_keyring_count(ring), 1);
    CHECK(EVP_PKEY_eq(adbc_keyring_get(ring, 0)->pkey, v->pkey) == 1);
    adbc_keyring_free(ring);

    /* With generate: user key first, then the vendor key. */
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 1), 0);
    CHECK_EQ_INT(adbc_keyring_count(ring), 2);
    CHECK_STR(adbc_key_path(adbc_keyring_get(ring, 0)), path_in(home, ".android/adbkey"));
    CHECK(EVP_PKEY_eq(adbc_keyring_get(ring, 1)->pkey, v->pkey) == 1);
    adbc_keyring_free(ring);

    /* The user key listed again as a vendor key is not offered twice. */
    char spec[1400];
    snprintf(spec, sizeof spec, "%s:%s", path_in(home, ".android/adbkey"), vk);
    setenv("ADB_VENDOR_KEYS", spec, 1);
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 0), 0);
    CHECK_EQ_INT(adbc_keyring_count(ring), 2);
    adbc_keyring_free(ring);

    /* A broken vendor entry fails the whole load, naming it. */
    setenv("ADB_VENDOR_KEYS", path_in(home, "missing.adb_key"), 1);
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 0), ADBC_ENOTFOUND);
    CHECK(msg_has("missing.adb_key"));
    unsetenv("ADB_VENDOR_KEYS");
    adbc_key_free(v);
}

TEST(load_default_keeps_a_broken_user_key)
{
    const char *home = fresh_dir("home4");
    clean_env(home);
    const char *adir = path_in(home, ".android");
    CHECK(mkdir(adir, 0700) == 0);
    const char *kp = path_in(adir, "adbkey");
    CHECK(write_file(kp, "garbage", 7, 0600) == 0);
    adbc_keyring *ring = NULL;
    /* Never regenerate over an existing file: that would lose a key the
     * user's devices trust. Report it instead. */
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 1), ADBC_EKEY);
    CHECK(msg_has(kp));
    char *text = read_all(kp, NULL);
    CHECK(text);
    CHECK_STR(text, "garbage");
    free(text);

    CHECK(write_file(kp, kat_pem, strlen(kat_pem), 0644) == 0);
    CHECK_EQ_INT(adbc_keyring_load_default(&ring, 1), ADBC_EPERM);
    CHECK(msg_has("chmod 600"));
}

TEST(save_without_replace_keeps_existing)
{
    const char *dir = fresh_dir("noreplace");
    const char *kp = path_in(dir, "adbkey");
    adbc_key *a = gen_saved(kp), *b = gen();
    CHECK(a && b);
    char *before = read_all(kp, NULL);
    CHECK_EQ_INT(key_save_ex(b, kp, 0), ADBC_EBUSY);
    char *after = read_all(kp, NULL);
    CHECK(before && after);
    CHECK_STR(after, before);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(system(cmd) == 0);
    free(before);
    free(after);
    adbc_key_free(a);
    adbc_key_free(b);
}

TEST(load_default_concurrent_first_use)
{
    /* Several processes start at once in a home without a key: they must
     * all end up with the one key that is on disk, and adbkey.pub must
     * belong to it. */
    const char *home = fresh_dir("race");
    clean_env(home);
    enum { N = 4 };
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) < 0)
                _exit(3);
            adbc_keyring *ring = NULL;
            if (adbc_keyring_load_default(&ring, 1) != 0) {
                fprintf(stderr, "  child: %s\n", adbc_last_error());
                _exit(1);
            }
            char *line = NULL;
            if (adbc_key_public_line(&line, adbc_keyring_get(ring, 0), NULL) != 0)
                _exit(1);
            char out[64];
            snprintf(out, sizeof out, "child%d", i);
            int rc = write_file(path_in(home, out), line, strlen(line), 0600);
            adbc_free(line);
            adbc_keyring_free(ring);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(go[0]);
    close(go[1]); /* all children start now */
    for (int i = 0; i < N; i++) {
        int st;
        CHECK(waitpid(pids[i], &st, 0) == pids[i]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    char *pub = read_all(path_in(home, ".android/adbkey.pub"), NULL);
    CHECK(pub);
    adbc_key *k = NULL;
    CHECK_EQ_INT(adbc_key_load(&k, path_in(home, ".android/adbkey"), 0), 0);
    char *line = pub_line(k, NULL);
    CHECK_STR(line, pub);
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "child%d", i);
        char *got = read_all(path_in(home, name), NULL);
        CHECK(got);
        CHECK_STR(got, pub);
        free(got);
    }
    adbc_free(line);
    free(pub);
    adbc_key_free(k);
}

/* ---- allocation failures ------------------------------------------------ */

TEST(allocation_failures_are_clean)
{
    /* Fail each adbc allocation in turn; every call must report ADBC_ENOMEM
     * or succeed, and (under ASan) leak nothing. */
    const char *dir = fresh_dir("alloc");
    const char *kp = path_in(dir, "k");
    adbc_key *k = gen_saved(kp);
    CHECK(k);
    const char *vdir = path_in(dir, "v");
    CHECK(mkdir(vdir, 0700) == 0);
    adbc_key *v = gen_saved(path_in(vdir, "one.adb_key"));
    CHECK(v);
    char *line = pub_line(k, "c");
    CHECK(line);
    uint8_t token[20] = {3}, sig[ADBC_AUTH_MAX_SIG];
    size_t len;
    CHECK_EQ_INT(adbc_key_sign_token(sig, &len, k, token, 20), 0);
    char spec[1400];
    snprintf(spec, sizeof spec, "%s:%s", kp, vdir);

    int saw_ok = 0;
    for (long n = 1; n < 60; n++) {
        core_test_fail_alloc_at(n);
        adbc_authorized_keys *set = NULL;
        int rc = adbc_authorized_keys_new(&set);
        if (rc == 0)
            rc = adbc_authorized_keys_add_line(set, line, strlen(line));
        if (rc == 0)
            rc = adbc_authorized_keys_verify(set, token, 20, sig, len);
        adbc_authorized_keys_free(set);
        CHECK(rc == 0 || rc == ADBC_ENOMEM);

        adbc_keyring *ring = NULL;
        int rc2 = adbc_keyring_new(&ring);
        if (rc2 == 0)
            rc2 = adbc_keyring_add_vendor_keys(ring, spec);
        CHECK(rc2 == 0 || rc2 == ADBC_ENOMEM);
        if (rc2 == 0)
            CHECK_EQ_INT(adbc_keyring_count(ring), 2);
        else
            CHECK_EQ_INT(adbc_keyring_count(ring), 0);
        adbc_keyring_free(ring);

        char *l = NULL;
        int rc3 = adbc_key_public_line(&l, k, NULL);
        CHECK(rc3 == 0 || rc3 == ADBC_ENOMEM);
        CHECK((rc3 == 0) == (l != NULL));
        adbc_free(l);

        int rc4 = adbc_key_save(k, path_in(dir, "saved"));
        CHECK(rc4 == 0 || rc4 == ADBC_ENOMEM);
        saw_ok += rc == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0;
    }
    core_test_fail_alloc_at(0);
    CHECK(saw_ok > 0);
    adbc_free(line);
    adbc_key_free(k);
    adbc_key_free(v);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    srand(12345);
    RUN(base64_vectors);
    RUN(n0inv_matches_bignum_inverse);
    RUN(pubkey_struct_fields);
    RUN(known_answer_from_adb);
    RUN(adb_keygen_pub_is_byte_identical);
    RUN(adb_reads_adbc_generated_key);
    RUN(signature_is_pkcs1_over_token_as_sha1_digest);
    RUN(sign_verify_round_trip_and_failures);
    RUN(large_key_signs_but_has_no_adb_public_key);
    RUN(authorized_line_forms);
    RUN(authorized_line_malformed);
    RUN(authorized_line_fuzz);
    RUN(authorized_keys_file);
    RUN(save_and_reload);
    RUN(load_refuses_insecure_permissions);
    RUN(load_errors_name_the_file);
    RUN(public_line_comments);
    RUN(keyring_dedup_and_order);
    RUN(vendor_keys_files_and_directories);
    RUN(load_default_generates_in_home);
    RUN(load_default_android_user_home);
    RUN(load_default_without_generate);
    RUN(load_default_keeps_a_broken_user_key);
    RUN(save_without_replace_keeps_existing);
    RUN(load_default_concurrent_first_use);
    RUN(allocation_failures_are_clean);
    if (tmp_root[0])
        nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return T_DONE();
}
