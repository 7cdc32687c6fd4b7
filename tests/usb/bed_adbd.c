/* SPDX-License-Identifier: Apache-2.0 */
/* The ADB side of an emulated device: adbd's USB reader and an adbc
 * session in the device role, with a few built-in services.
 *
 * The reader is the strict one adbd used for years (and older devices still
 * run): bulk OUT data is read in 16 KiB blocks, each block ends at a short
 * or zero-length packet, and a header must arrive as a block of exactly 24
 * bytes, a payload as blocks that add up to exactly data_length. A host that
 * leaves out a needed zero-length packet gets its payload merged with the
 * next header and breaks this reader, as it breaks such a phone.
 *
 * Services (shell v1/v2 and exec):
 *   echo ARGS             ARGS and a newline
 *   getprop ro.serialno   the USB serial
 *   cat                   sends back what it receives
 *   bed-gen N             N bytes of a counting pattern, as one write
 *   bed-fail              "oops" on stderr, exit status 3
 * Everything else: "not found" on stderr, status 127.
 * And sync: (bed_sync.c). */
#include "bed_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bed_stream {
    uint32_t id;
    int v2;           /* shell protocol framing */
    int cat;          /* echo input back */
    GByteArray *in;   /* v2: shell packets not yet complete */
    bed_sync *sync;   /* a sync: session */
    GByteArray *out;  /* to send when the window allows */
    int close_after;  /* close once out is sent */
    size_t unacked;   /* received, to be acknowledged after the current input */
};

static bed_stream *find_stream(bed_dev *d, uint32_t id)
{
    for (GList *l = d->streams; l; l = l->next)
        if (((bed_stream *)l->data)->id == id)
            return l->data;
    return NULL;
}

static void stream_free(bed_stream *st)
{
    bed_sync_free(st->sync);
    g_byte_array_unref(st->in);
    g_byte_array_unref(st->out);
    g_free(st);
}

static void v2_packet(GByteArray *out, uint8_t id, const void *data, size_t len)
{
    uint8_t h[5] = {id, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                    (uint8_t)(len >> 24)};
    g_byte_array_append(out, h, 5);
    if (len)
        g_byte_array_append(out, data, (guint)len);
}

static void emit(bed_stream *st, int fd, const void *data, size_t len)
{
    if (st->v2)
        v2_packet(st->out, (uint8_t)fd, data, len);
    else
        g_byte_array_append(st->out, data, (guint)len);
}

static void finish_cmd(bed_stream *st, int code)
{
    if (st->v2) {
        uint8_t c = (uint8_t)code;
        v2_packet(st->out, 3, &c, 1);
    }
    st->close_after = 1;
}

static void run_command(bed_dev *d, bed_stream *st, const char *cmd)
{
    if (strncmp(cmd, "echo", 4) == 0 && (cmd[4] == ' ' || cmd[4] == '\0')) {
        const char *text = cmd[4] ? cmd + 5 : "";
        emit(st, 1, text, strlen(text));
        emit(st, 1, "\n", 1);
        finish_cmd(st, 0);
    } else if (strcmp(cmd, "getprop ro.serialno") == 0) {
        const char *s = d->spec.serial ? d->spec.serial : "";
        emit(st, 1, s, strlen(s));
        emit(st, 1, "\n", 1);
        finish_cmd(st, 0);
    } else if (strcmp(cmd, "cat") == 0) {
        st->cat = 1;
    } else if (strncmp(cmd, "bed-gen ", 8) == 0) {
        size_t n = strtoul(cmd + 8, NULL, 10);
        uint8_t *buf = g_malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)(i * 7 + 3);
        emit(st, 1, buf, n);
        g_free(buf);
        finish_cmd(st, 0);
    } else if (strcmp(cmd, "bed-fail") == 0) {
        emit(st, 2, "oops\n", 5);
        finish_cmd(st, 3);
    } else {
        char msg[300];
        int n = snprintf(msg, sizeof msg, "/system/bin/sh: %.200s: not found\n", cmd);
        emit(st, st->v2 ? 2 : 1, msg, (size_t)n);
        finish_cmd(st, 127);
    }
}

/* ---- session callbacks (d->mu held: they run inside bed_adbd_out) ---- */

static int cb_verify(void *user, const uint8_t *token, size_t token_len, const uint8_t *sig,
                     size_t sig_len)
{
    bed_dev *d = user;
    return d->spec.auth == BED_AUTH_KEY &&
           adbc_authorized_keys_verify(d->b->keys, token, token_len, sig, sig_len) == 0;
}

/* AUTH tokens from GLib's generator rather than OpenSSL's: OpenSSL keeps a
 * per-thread generator, and umockdev's worker thread may outlive the test's
 * last chance to free it. A test device needs no cryptographic randomness. */
static int cb_random(void *user, uint8_t *token, size_t len)
{
    (void)user;
    for (size_t i = 0; i < len; i++)
        token[i] = (uint8_t)g_random_int_range(0, 256);
    return 0;
}

static int cb_offer(void *user, const char *pubkey)
{
    (void)user;
    (void)pubkey;
    return 0; /* nobody taps "Allow" */
}

static int cb_open(void *user, uint32_t id, const char *service)
{
    bed_dev *d = user;
    int v2 = 0;
    const char *cmd;
    if (strcmp(service, "sync:") == 0) {
        bed_stream *st = g_new0(bed_stream, 1);
        st->id = id;
        st->in = g_byte_array_new();
        st->out = g_byte_array_new();
        st->sync = bed_sync_new();
        d->streams = g_list_append(d->streams, st);
        return 0;
    }
    if (strncmp(service, "exec:", 5) == 0) {
        cmd = service + 5;
    } else if (strncmp(service, "shell", 5) == 0 && (service[5] == ':' || service[5] == ',')) {
        cmd = strchr(service, ':');
        if (!cmd)
            return 1;
        cmd++;
        const char *args = service + 5;
        v2 = args < cmd && g_strstr_len(args, cmd - args, "v2") != NULL;
    } else {
        return 1;
    }
    bed_stream *st = g_new0(bed_stream, 1);
    st->id = id;
    st->v2 = v2;
    st->in = g_byte_array_new();
    st->out = g_byte_array_new();
    d->streams = g_list_append(d->streams, st);
    run_command(d, st, cmd);
    return 0;
}

static void cat_input(bed_stream *st, const uint8_t *data, size_t len)
{
    if (!st->v2) {
        g_byte_array_append(st->out, data, (guint)len);
        return;
    }
    g_byte_array_append(st->in, data, (guint)len);
    while (st->in->len >= 5) {
        uint32_t n = (uint32_t)st->in->data[1] | (uint32_t)st->in->data[2] << 8 |
                     (uint32_t)st->in->data[3] << 16 | (uint32_t)st->in->data[4] << 24;
        if (st->in->len < 5 + n)
            break;
        uint8_t id = st->in->data[0];
        if (id == 0)
            v2_packet(st->out, 1, st->in->data + 5, n);
        else if (id == 4)
            finish_cmd(st, 0);
        g_byte_array_remove_range(st->in, 0, 5 + n);
    }
}

static void cb_data(void *user, uint32_t id, const uint8_t *data, size_t len)
{
    bed_dev *d = user;
    bed_stream *st = find_stream(d, id);
    if (!st)
        return;
    if (st->sync && !st->close_after)
        st->close_after = bed_sync_input(d, st->sync, data, len, st->out);
    else if (st->cat && !st->close_after)
        cat_input(st, data, len);
    st->unacked += len;
}

static void cb_closed(void *user, uint32_t id, int reason)
{
    (void)reason;
    bed_dev *d = user;
    bed_stream *st = find_stream(d, id);
    if (st) {
        d->streams = g_list_remove(d->streams, st);
        stream_free(st);
    }
}

static const adbc_session_callbacks callbacks = {
    .size = sizeof(adbc_session_callbacks), .auth_random = cb_random,
    .auth_verify = cb_verify,
    .auth_offer = cb_offer,
    .on_open = cb_open,
    .on_data = cb_data,
    .on_closed = cb_closed,
};

/* ---- driving the engine ---- */

/* Everything the engine queued becomes bulk IN transfers: one per header,
 * one per payload, no zero-length packets (adbd sends none). */
static void pump(bed_dev *d)
{
    const uint8_t *seg;
    size_t n;
    while (d->s && (n = adbc_session_next_send(&seg, d->s)) > 0) {
        bed_in *x = g_new0(bed_in, 1);
        x->data = g_memdup2(seg, n);
        x->len = n;
        g_queue_push_tail(&d->in_xfers, x);
        adbc_session_sent(d->s, n);
    }
}

static void flush_streams(bed_dev *d)
{
    for (GList *l = d->streams; l;) {
        GList *next = l->next;
        bed_stream *st = l->data;
        if (st->unacked) {
            adbc_session_consume(d->s, st->id, st->unacked);
            st->unacked = 0;
        }
        while (st->out->len > 0) {
            size_t w = adbc_session_writable(d->s, st->id);
            if (w == 0)
                break;
            long k = adbc_session_write(d->s, st->id, st->out->data,
                                        st->out->len < w ? st->out->len : w);
            if (k <= 0)
                break;
            g_byte_array_remove_range(st->out, 0, (guint)k);
        }
        if (st->out->len == 0 && st->close_after) {
            adbc_session_close_stream(d->s, st->id);
            d->streams = g_list_delete_link(d->streams, l);
            stream_free(st);
        }
        l = next;
    }
}

static void broken(bed_dev *d, const char *why)
{
    d->broken = 1;
    snprintf(d->stats.error, sizeof d->stats.error, "%s", why);
}

static void deliver(bed_dev *d)
{
    d->stats.packets_in++;
    int rc = adbc_session_recv(d->s, d->header, 24);
    if (rc >= 0 && d->payload_len)
        rc = adbc_session_recv(d->s, d->payload, d->payload_len);
    if (rc < 0) {
        char why[256];
        snprintf(why, sizeof why, "session: %s", adbc_session_error(d->s));
        broken(d, why);
        return;
    }
    flush_streams(d);
    pump(d);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One block as adbd's reader gets it. Empty blocks are skipped, as adbd
 * does. */
static void block(bed_dev *d, const uint8_t *b, size_t n)
{
    if (n == 0 || d->broken)
        return;
    if (!d->have_header) {
        if (n != 24) {
            broken(d, "received packet of unexpected length while reading header");
            return;
        }
        memcpy(d->header, b, 24);
        d->have_header = 1;
        d->payload_len = 0;
        d->payload_want = rd32(b + 12);
        if (d->payload_want > ADBC_MAX_PAYLOAD) {
            broken(d, "payload too large");
            return;
        }
    } else {
        if (n > d->payload_want - d->payload_len) {
            broken(d, "received too many bytes while waiting for payload");
            return;
        }
        memcpy(d->payload + d->payload_len, b, n);
        d->payload_len += n;
    }
    if (d->payload_len == d->payload_want) {
        d->have_header = 0;
        deliver(d);
    }
}

void bed_adbd_out(bed_dev *d, const uint8_t *data, size_t len, int zero_packet)
{
    if (!d->s)
        return; /* a silent device takes the data and never answers */
    /* Cut the transfer into USB packets; each ends or extends a block. */
    size_t off = 0;
    do {
        size_t pkt = len - off < d->maxp ? len - off : d->maxp;
        if (pkt > 0)
            memcpy(d->block + d->block_len, data + off, pkt);
        d->block_len += pkt;
        off += pkt;
        if (pkt < d->maxp || d->block_len == BED_READ_BLOCK) {
            size_t n = d->block_len;
            d->block_len = 0;
            block(d, d->block, n);
        }
    } while (off < len);
    if (zero_packet && len > 0 && len % d->maxp == 0) {
        size_t n = d->block_len;
        d->block_len = 0;
        block(d, d->block, n);
    }
}

void bed_adbd_free(bed_dev *d)
{
    g_list_free_full(d->streams, (GDestroyNotify)stream_free);
    d->streams = NULL;
    if (d->s)
        adbc_session_free(d->s);
    d->s = NULL;
    bed_in *x;
    while ((x = g_queue_pop_head(&d->in_xfers))) {
        g_free(x->data);
        g_free(x);
    }
    g_free(d->payload);
    d->payload = NULL;
    d->block_len = 0;
    d->have_header = 0;
    d->broken = 0;
}

void bed_adbd_reset(bed_dev *d)
{
    bed_adbd_free(d);
    d->stats.error[0] = '\0';
    if (d->spec.silent)
        return;
    adbc_session_config cfg;
    adbc_session_config_init(&cfg, ADBC_ROLE_DEVICE);
    cfg.banner = d->spec.banner
                     ? d->spec.banner
                     : "device::ro.product.name=bed_prod;ro.product.model=Bed Phone;"
                       "ro.product.device=bed;features=shell_v2,cmd,fixed_push_mkdir,"
                       "delayed_ack";
    cfg.auth_required = d->spec.auth != BED_AUTH_NONE;
    if (d->spec.max_payload)
        cfg.max_payload = d->spec.max_payload;
    d->payload = g_malloc(ADBC_MAX_PAYLOAD);
    if (adbc_session_new(&d->s, &cfg, &callbacks, d) < 0)
        broken(d, "cannot create the device session");
}
