/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's safety stop: payment, purchase, transfer, install and
 * destructive confirmation screens end the task before anything reaches the
 * device, decided from the screen itself and not from what the model says.
 *
 * The check reads what a person sees: the text and content-desc of every
 * node of the dump (adbc_ui_snap_node), not the snapshot text (which
 * escapes, prunes and prints its own syntax). Each string is normalised
 * (agent_norm): the forms that look alike folded (fullwidth, mathematical
 * and circled letters, ligatures, accents, and the Cyrillic and Greek
 * letters that look Latin by the rules in fold; every other code point by
 * its NFKC form or its ASCII confusable from the generated table,
 * ops_agent_fold.inc), case folded, invisible characters
 * (zero-width, soft hyphen, bidi marks, other controls) removed, and every
 * run of blanks (tab, newline, no-break space, ...) one space. A window's
 * nodes are then read together in document order, one space between two
 * nodes, so a phrase split over neighbouring labels ("Place" + "order")
 * reads as one; windows are apart (a newline).
 *
 * A pattern is one of (docs/agent.md, "Safety", has the list and where
 * each entry comes from):
 *   WORDS           the words, whole, anywhere on the screen; a pattern
 *                   that starts or ends with a CJK character needs no word
 *                   boundary on that side (those scripts put no spaces)
 *   button:WORDS    a button (a clickable element, or one whose class is a
 *                   Button) whose label begins with WORDS, as a word of its
 *                   own (in CJK too: [支付] but not an app named 支付宝)
 *   priced:WORDS    such a button on a screen that shows a money amount;
 *                   priced:* a button whose own label holds one ("Send
 *                   $500.00")
 *   package:NAME    any node of that app (the system's package installer)
 *   re:RE           a POSIX extended expression, on the normalised text
 * Patterns are normalised alike, so "Löschen", "LOSCHEN" and "löschen"
 * are one. */
#include "ops_agent_int.h"

#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adbc/ui.h"

/* fold_cp, fold_off, fold_pool: NFKC forms and ASCII look-alikes
 * (scripts/gen-safety-fold). */
#include "ops_agent_fold.inc"

/* Sources: docs/agent.md, "Safety", names where each comes from. */
const char *const ops_agent_safety_default[] = {
    /* English: a bare verb stops as a button's label ([Pay], [Buy for
     * $4.99]) or a label of its own, so "buy milk" on a list or a "Google
     * Pay" row does not */
    "pay now", "buy now", "confirm purchase", "complete purchase", "place order",
    "place your order", "submit order", "confirm order", "complete order", "order now",
    "order total", "checkout", "check out", "confirm payment", "send payment", "send money",
    "transfer money", "transfer to", "start subscription", "subscribe now", "start free trial",
    "start trial", "confirm and pay", "proceed to pay", "slide to pay", "swipe to pay",
    "hold to pay", "confirm your purchase", "complete your purchase", "delete account",
    "delete permanently", "permanently delete", "delete forever", "factory reset",
    "erase all data", "button:pay", "button:buy", "button:purchase", "button:erase",
    "button:wipe",
    /* German */
    "jetzt kaufen", "zahlungspflichtig bestellen", "kaufen und bezahlen", "jetzt bezahlen",
    "bestellung aufgeben", "kauf bestätigen", "zahlung bestätigen", "geld senden",
    "jetzt abonnieren", "konto löschen", "endgültig löschen", "auf werkseinstellungen zurücksetzen",
    "alle daten löschen", "button:kaufen", "button:bezahlen", "button:überweisen",
    /* French */
    "valider la commande", "passer la commande", "confirmer l'achat", "confirmer le paiement",
    "envoyer de l'argent", "supprimer le compte", "supprimer définitivement",
    "réinitialiser les données d'usine", "effacer toutes les données", "button:acheter",
    "button:payer", "button:commander", "button:s'abonner",
    /* Spanish */
    "comprar ahora", "realizar pedido", "confirmar compra", "confirmar pago", "enviar dinero",
    "eliminar cuenta", "eliminar permanentemente", "restablecer datos de fábrica",
    "borrar todos los datos", "button:comprar", "button:pagar", "button:suscribirse",
    /* Portuguese */
    "finalizar compra", "fazer pedido", "confirmar pedido", "enviar dinheiro", "assinar agora",
    "excluir conta", "excluir permanentemente", "redefinir para configuração original",
    "apagar todos os dados",
    /* Italian */
    "acquista ora", "compra ora", "paga ora", "effettua ordine", "conferma acquisto",
    "conferma pagamento", "invia denaro", "elimina account", "elimina definitivamente",
    "ripristino dati di fabbrica", "cancella tutti i dati", "button:acquista", "button:paga",
    "button:abbonati",
    /* Dutch, Polish, Turkish, Indonesian, Vietnamese */
    "nu kopen", "bestellen en betalen", "nu betalen", "geld overmaken", "button:kopen",
    "button:betalen", "button:abonneren", "kup teraz", "zamawiam i płacę",
    "zamawiam z obowiązkiem zapłaty", "kupuję i płacę", "button:kup", "button:zapłać", "satın al",
    "ödeme yap", "siparişi onayla", "siparişi tamamla", "para gönder", "hesabı sil", "abone ol",
    "button:öde", "beli sekarang", "bayar sekarang", "buat pesanan", "kirim uang", "button:beli",
    "button:bayar", "button:langganan", "mua ngay", "thanh toán", "đặt hàng", "chuyển tiền",
    "button:mua",
    /* Russian, Hindi, Arabic */
    "оформить заказ", "подтвердить оплату", "сбросить настройки", "удалить аккаунт",
    "button:купить", "button:оплатить", "button:перевести", "अभी खरीदें", "भुगतान करें", "ऑर्डर करें",
    "ऑर्डर दें", "पैसे भेजें", "button:खरीदें", "اشتر الآن", "ادفع الآن", "إتمام الشراء", "تأكيد الطلب",
    "تأكيد الدفع", "تأكيد الشراء", "button:شراء", "button:اشتر", "button:ادفع", "button:اشترك",
    /* Chinese, Japanese, Korean, Thai */
    "立即购买", "提交订单", "确认支付", "确认付款", "确认订单", "确认购买", "立即支付", "立即付款",
    "去支付", "去付款", "去结算", "立即下单", "确认转账", "恢复出厂设置", "立即購買", "確認付款",
    "結帳", "今すぐ購入", "注文を確定する", "購入を確定", "購入手続きへ", "レジに進む",
    "お支払いを確定", "支払いを確定", "初期化する", "button:구매하기", "button:결제하기",
    "button:주문하기", "button:송금하기", "button:구독하기", "button:지금 구매", "ซื้อเลย", "ชำระเงิน",
    "สั่งซื้อ", "ยืนยันการสั่งซื้อ",
    /* buttons that act: deletes, installs, uninstalls */
    "button:delete", "button:remove", "button:uninstall", "button:install", "button:löschen",
    "button:deinstallieren", "button:installieren", "button:supprimer", "button:désinstaller",
    "button:installer", "button:eliminar", "button:desinstalar", "button:instalar",
    "button:excluir", "button:elimina", "button:disinstalla", "button:installa",
    "button:verwijderen", "button:usuń", "button:sil", "button:kaldır", "button:yükle",
    "button:hapus", "button:copot", "button:xóa", "button:удалить", "button:установить",
    "button:हटाएं", "button:हटाएँ", "button:حذف", "button:تثبيت", "button:删除", "button:卸载",
    "button:安装", "button:削除", "button:アンインストール", "button:インストール", "button:삭제",
    "button:설치", "button:ลบ", "button:购买", "button:支付", "button:付款", "button:转账",
    "button:購入", "button:購買", "button:支払う", "button:注文する", "button:送金",
    /* a money amount and a button that goes on */
    "priced:*", "priced:subscribe", "priced:send", "priced:continue", "priced:confirm",
    "priced:proceed", "priced:next", "priced:ok", "priced:start", "priced:try", "priced:upgrade",
    "priced:renew", "priced:donate", "priced:get", "priced:join", "priced:unlock", "priced:weiter",
    "priced:abonnieren", "priced:senden", "priced:bestätigen", "priced:continuer",
    "priced:confirmer", "priced:envoyer", "priced:continuar", "priced:confirmar", "priced:enviar",
    "priced:continua", "priced:conferma", "priced:invia", "priced:doorgaan", "priced:volgende",
    "priced:bevestigen", "priced:dalej", "priced:potwierdź", "priced:devam", "priced:onayla",
    "priced:gönder", "priced:lanjut", "priced:lanjutkan", "priced:konfirmasi", "priced:tiếp tục",
    "priced:xác nhận", "priced:продолжить", "priced:отправить", "priced:जारी रखें", "priced:आगे बढ़ें",
    "priced:متابعة", "priced:استمرار", "priced:تأكيد", "priced:确认", "priced:继续", "priced:开通",
    "priced:开通会员", "priced:確認", "priced:続ける", "priced:확인", "priced:계속", "priced:다음",
    "priced:ยืนยัน", "priced:ดำเนินการต่อ",
    /* the system's package installer and uninstaller dialogs */
    "package:com.android.packageinstaller", "package:com.google.android.packageinstaller", NULL};

/* ---- normalising ---- */

/* Decode one UTF-8 sequence at p (n >= 1 bytes): its code point, *len its
 * length; a byte that starts no valid sequence is U+FFFD of length 1. */
static uint32_t utf8_get(const unsigned char *p, size_t n, size_t *len)
{
    size_t l = ops_utf8_len(p, n);
    if (l == 0) {
        *len = 1;
        return 0xFFFD;
    }
    *len = l;
    if (l == 1)
        return p[0];
    if (l == 2)
        return ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    if (l == 3)
        return ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
           ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

static size_t utf8_put(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* What a code point shows as, folded: the ASCII (or other) text it folds
 * to in out (at most 3 characters), " " for a blank, INVISIBLE for one that
 * shows nothing. Returns the number of bytes written. */
#define INVISIBLE '\x01'
/* Around each node's own text in screen.alone (no text holds it: controls
 * are taken out). */
#define ALONE '\x02'
static size_t fold_at(uint32_t c, char *out, int depth);
static size_t fold(uint32_t c, char *out)
{
    return fold_at(c, out, 0);
}

/* The generated table's text for c (NFKC, or the ASCII letter c looks
 * like), NULL when c is not in it. */
static const char *fold_table(uint32_t c)
{
    size_t lo = 0, hi = sizeof fold_cp / sizeof fold_cp[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fold_cp[mid] == c)
            return fold_pool + fold_off[mid];
        if (fold_cp[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* out holds FOLD_MAX bytes: the table's text is at most 12 bytes, each of
 * its code points folding to at most 4. */
#define FOLD_MAX 64
static size_t fold_at(uint32_t c, char *out, int depth)
{
    /* Latin-1 letters U+00C0..U+00FF without their marks. */
    static const char latin1[] = "aaaaaaaceeeeiiiidnooooo*ouuuuyts"  /* C0..DF (D7 x, DF ss) */
                                 "aaaaaaaceeeeiiiidnooooo/ouuuuyty"; /* E0..FF */
    /* Latin Extended-A U+0100..U+017F: each letter's base. */
    static const char exta[] = "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkklllllll"
                               "lllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
    /* Cyrillic U+0430..U+044F (lower case) and Greek U+03B1..U+03C9: the
     * Latin letter each looks like, '.' for none. */
    static const char cyr[] = "a.br.e....k.mhonpcty.x.........."; /* а..я */
    static const char grk[] = "aby.e.n.ik.uv.o.pc.tu.x.w";        /* α..ω */
    if (c < 0x80) {
        if (c < 0x20 || c == 0x7F)
            return c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C
                       ? (out[0] = ' ', 1)
                       : (out[0] = INVISIBLE, 1); /* other C0 controls show nothing */
        out[0] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        return 1;
    }
    if (c < 0xA0) /* C1 controls */
        return out[0] = INVISIBLE, 1;
    if (c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
        c == 0x202F || c == 0x205F || c == 0x3000)
        return out[0] = ' ', 1;
    if (c == 0xAD || c == 0x34F || c == 0x61C || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
        (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF ||
        (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x300 && c <= 0x36F) || c == 0x115F || c == 0x1160 ||
        c == 0x3164 || c == 0xFFA0 || (c >= 0xE0000 && c <= 0xE01EF))
        return out[0] = INVISIBLE, 1; /* zero-width, soft hyphen, bidi, joiners, tags */
    if (c >= 0xC0 && c <= 0xFF) {
        if (c == 0xDF)
            return memcpy(out, "ss", 2), 2;
        if (c == 0xC6 || c == 0xE6)
            return memcpy(out, "ae", 2), 2;
        if (c == 0xD7 || c == 0xF7)
            return utf8_put(out, c);
        return out[0] = latin1[c - 0xC0], 1;
    }
    if (c >= 0x100 && c <= 0x17F)
        return out[0] = exta[c - 0x100], 1;
    /* Latin Extended Additional U+1E00..U+1EFF (Vietnamese's letters with
     * two marks, precomposed or not) and the horned o and u: the base. */
    static const char extadd[] =
        "aabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmmmmmmnnnnnnnnoooooooo"
        "pppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvvwwwwwwwwwwxxxxyyzzzzzzhtwy......aaaaaaaa"
        "aaaaaaaaaaaaaaaaeeeeeeeeeeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy...."
        "..";
    if (c >= 0x1E00 && c <= 0x1EFF && extadd[c - 0x1E00] != '.')
        return out[0] = extadd[c - 0x1E00], 1;
    if (c == 0x1A0 || c == 0x1A1)
        return out[0] = 'o', 1;
    if (c == 0x1AF || c == 0x1B0)
        return out[0] = 'u', 1;
    /* Arabic: the vowel marks and the tatweel (a stretch of the line
     * between letters) show no letter; hamza and madda on an alef fold to
     * the bare alef, as Arabic search does. */
    if ((c >= 0x610 && c <= 0x61A) || (c >= 0x64B && c <= 0x65F) || c == 0x670 || c == 0x640 ||
        (c >= 0x6D6 && c <= 0x6ED))
        return out[0] = INVISIBLE, 1;
    if (c == 0x622 || c == 0x623 || c == 0x625 || c == 0x671)
        return utf8_put(out, 0x627);
    /* Digits of other scripts: Arabic-Indic, Persian, Devanagari, Bengali,
     * Thai, fullwidth (a price reads the same in any of them). */
    static const uint32_t zero[] = {0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10};
    for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
        if (c >= zero[k] && c <= zero[k] + 9)
            return out[0] = (char)('0' + (c - zero[k])), 1;
    if (c >= 0x400 && c <= 0x40F)
        c += 0x50; /* Ѐ..Џ -> ѐ..џ */
    if (c >= 0x410 && c <= 0x42F)
        c += 0x20;
    if (c >= 0x430 && c <= 0x44F && cyr[c - 0x430] != '.')
        return out[0] = cyr[c - 0x430], 1;
    if (c >= 0x450 && c <= 0x45F) {
        static const char cyx[] = "ee.r.siij...k.y."; /* ѐ ё ђ ѓ є ѕ і ї ј ... ќ ѝ ў џ */
        if (cyx[c - 0x450] != '.')
            return out[0] = cyx[c - 0x450], 1;
    }
    if (c == 0x4CF || c == 0x4C0)
        return out[0] = 'l', 1;
    if (c == 0x4BB)
        return out[0] = 'h', 1;
    if (c == 0x4AF)
        return out[0] = 'y', 1;
    if (c == 0x501)
        return out[0] = 'd', 1;
    if (c == 0x51B)
        return out[0] = 'q', 1;
    if (c == 0x51D)
        return out[0] = 'w', 1;
    if (c >= 0x391 && c <= 0x3A9) {
        /* Greek capitals fold to the Latin capital they look like (H, M, N,
         * Y, Z: not what their small letters look like), else as small. */
        static const char grkcap[] = "ab..ezh.ik.mn.o.p..ty.x..";
        if (grkcap[c - 0x391] != '.')
            return out[0] = grkcap[c - 0x391], 1;
        c += 0x20;
    }
    if (c == 0x386 || c == 0x3AC)
        c = 0x3B1;
    if (c == 0x388 || c == 0x3AD)
        c = 0x3B5;
    if (c == 0x389 || c == 0x3AE)
        c = 0x3B7;
    if (c == 0x38A || c == 0x3AF || c == 0x3CA)
        c = 0x3B9;
    if (c == 0x38C || c == 0x3CC)
        c = 0x3BF;
    if (c == 0x38E || c == 0x3CD || c == 0x3CB)
        c = 0x3C5;
    if (c >= 0x3B1 && c <= 0x3C9 && grk[c - 0x3B1] != '.')
        return out[0] = grk[c - 0x3B1], 1;
    if (c >= 0xFF01 && c <= 0xFF5E)
        return fold_at(c - 0xFEE0, out, depth); /* fullwidth ASCII */
    if (c == 0xFFE0)
        c = 0xA2;
    else if (c == 0xFFE1)
        c = 0xA3;
    else if (c == 0xFFE5)
        c = 0xA5;
    else if (c == 0xFFE6)
        c = 0x20A9;
    if (c >= 0x1D400 && c <= 0x1D6A3) { /* mathematical letters */
        uint32_t k = (c - 0x1D400) % 52;
        return out[0] = (char)(k < 26 ? 'a' + k : 'a' + k - 26), 1;
    }
    if (c >= 0x1D7CE && c <= 0x1D7FF)
        return out[0] = (char)('0' + (c - 0x1D7CE) % 10), 1;
    if (c >= 0x24B6 && c <= 0x24CF)
        return out[0] = (char)('a' + c - 0x24B6), 1;
    if (c >= 0x24D0 && c <= 0x24E9)
        return out[0] = (char)('a' + c - 0x24D0), 1;
    if (c >= 0xFB00 && c <= 0xFB06) {
        static const char *const lig[] = {"ff", "fi", "fl", "ffi", "ffl", "st", "st"};
        size_t l = strlen(lig[c - 0xFB00]);
        memcpy(out, lig[c - 0xFB00], l);
        return l;
    }
    if ((c >= 0x2010 && c <= 0x2015) || c == 0x2212)
        return out[0] = '-', 1;
    if (c == 0x2018 || c == 0x2019 || c == 0x201B || c == 0x2032)
        return out[0] = '\'', 1;
    if (c == 0x201C || c == 0x201D)
        return out[0] = '"', 1;
    /* What NFKC makes of it (superscripts, letterlike symbols, halfwidth
     * katakana, presentation forms, ...) or the ASCII letter it is
     * confusable with (small capitals, other alphabets' look-alikes),
     * folded by the rules above. */
    const char *t = depth ? NULL : fold_table(c);
    if (t) {
        size_t n = 0, len = strlen(t);
        for (size_t i = 0; i < len;) {
            size_t l;
            uint32_t u = utf8_get((const unsigned char *)t + i, len - i, &l);
            i += l;
            n += fold_at(u, out + n, depth + 1);
        }
        return n;
    }
    return utf8_put(out, c);
}

/* Append the normalised s to *b (a growing buffer), each run of blanks one
 * space and none at the start of the buffer or after a space already
 * there. */
typedef struct nbuf {
    char *p;
    size_t len, cap;
    int oom;
    int invisible; /* an invisible character was met */
} nbuf;

static void nb_room(nbuf *b, size_t more)
{
    if (b->oom || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void nb_char(nbuf *b, char c)
{
    if (c == ' ' && (b->len == 0 || b->p[b->len - 1] == ' ' || b->p[b->len - 1] == '\n' ||
                     b->p[b->len - 1] == ALONE))
        return;
    nb_room(b, 1);
    if (b->oom)
        return;
    b->p[b->len++] = c;
    b->p[b->len] = 0;
}

/* gap: what an invisible character becomes, nothing (0: "Pay\u200Bment"
 * reads "payment") or a space (1: "Confirm\x01payment" reads "confirm
 * payment"); the check tries both when the screen has one. */
static void nb_norm(nbuf *b, const char *s, int gap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l;
        uint32_t c = utf8_get(p + i, n - i, &l);
        i += l;
        char f[FOLD_MAX];
        size_t fl = fold(c, f);
        if (fl == 1 && (f[0] == ' ' || f[0] == INVISIBLE)) {
            if (f[0] == INVISIBLE)
                b->invisible = 1;
            if (f[0] == ' ' || gap)
                nb_char(b, ' ');
            continue;
        }
        nb_room(b, fl);
        if (b->oom)
            return;
        memcpy(b->p + b->len, f, fl);
        b->len += fl;
        b->p[b->len] = 0;
    }
}

char *agent_norm(const char *s)
{
    nbuf b = {0};
    nb_room(&b, strlen(s ? s : ""));
    if (b.oom)
        return NULL;
    b.p[0] = 0;
    nb_norm(&b, s ? s : "", 0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    while (b.len && b.p[b.len - 1] == ' ')
        b.p[--b.len] = 0;
    return b.p;
}

/* ---- matching ---- */

enum { K_WORDS, K_BUTTON, K_PRICED, K_PRICED_ANY, K_PACKAGE, K_RE };

typedef struct pattern {
    int kind;
    char *src;  /* as given */
    char *norm; /* normalised words, or the package name */
    size_t len;
    int edge_l, edge_r; /* 1: a word boundary is needed on that side */
    regex_t re;
} pattern;

struct agent_safety {
    size_t n;
    pattern *p;
};

/* 1 for a CJK ideograph, kana or Hangul syllable, or a letter of the
 * scripts of South-East Asia that put no spaces between words (Thai, Lao,
 * Myanmar, Khmer). */
static int cjk_cp(uint32_t c)
{
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xE00 && c <= 0xEFF) ||
           (c >= 0x1000 && c <= 0x109F) || (c >= 0x1780 && c <= 0x17FF);
}

/* 1 for a code point that is part of a word: letters and digits of any
 * script (every non-ASCII character but punctuation, currency signs and the
 * scripts of cjk_cp, whose words have no spaces between them), and '_'. */
static int word_cp(uint32_t c)
{
    if (c < 0x80)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    if (cjk_cp(c))
        return 0;
    if (c == 0xA1 || c == 0xA2 || c == 0xA3 || c == 0xA5 || c == 0xAB || c == 0xBB || c == 0xBF ||
        (c >= 0x20A0 && c <= 0x20CF))
        return 0; /* currency signs, guillemets, inverted marks */
    if ((c >= 0x2010 && c <= 0x205E) || (c >= 0x3000 && c <= 0x303F) || c == 0x60C || c == 0x61B ||
        c == 0x61F || c == 0x6D4 || c == 0x964 || c == 0x965)
        return 0; /* general and CJK punctuation; Arabic comma, semicolon, question mark,
                     full stop; Devanagari danda */
    return 1;
}

/* 1 for hiragana: a Japanese verb's ending after its kanji ([購入する],
 * [削除します]), which Chinese never writes. */
static int hiragana_cp(uint32_t c)
{
    return c >= 0x3040 && c <= 0x309F;
}

/* The code point ending just before p (text starts at t). */
static uint32_t cp_before(const char *t, const char *p)
{
    const char *q = p;
    if (q == t)
        return ' ';
    do
        q--;
    while (q > t && ((unsigned char)*q & 0xC0) == 0x80);
    size_t l;
    return utf8_get((const unsigned char *)q, (size_t)(p - q), &l);
}

static uint32_t cp_at(const char *p)
{
    if (!*p)
        return ' ';
    size_t l;
    return utf8_get((const unsigned char *)p, strlen(p) > 4 ? 4 : strlen(p), &l);
}

/* The first place words match in text (whole words), or NULL. */
static const char *find_words(const pattern *pt, const char *text)
{
    for (const char *p = text; (p = strstr(p, pt->norm)) != NULL; p++) {
        if (pt->edge_l && word_cp(cp_before(text, p)))
            continue;
        if (pt->edge_r && word_cp(cp_at(p + pt->len)))
            continue;
        return p;
    }
    return NULL;
}

/* 1 when the button label l begins with the pattern's words, as a word of
 * its own: in CJK too, so [支付] but not an app named 支付宝, while a
 * Japanese verb's ending may follow ([購入する]). */
static int label_begins(const pattern *pt, const char *l)
{
    if (find_words(pt, l) != l)
        return 0;
    uint32_t next = cp_at(l + pt->len);
    return !cjk_cp(next) || hiragana_cp(next);
}

/* Where words stand alone between two ALONEs in alone (a node's whole
 * text), or NULL. */
static const char *alone_words(const char *alone, const char *words, size_t len)
{
    for (const char *p = alone; (p = strstr(p, words)) != NULL; p++)
        if (p > alone && p[-1] == ALONE && p[len] == ALONE)
            return p;
    return NULL;
}

/* 1 when text shows a money amount: a currency sign or code beside a
 * number ("$99.99", "99,99 €", "¥1200", "USD 5", "R$ 10,00", "₹499",
 * "Rp15.000", "Rs. 499", "9,99 zł", "9,900원", "49 ر.س"). A code is a word
 * of its own, but may touch the number ("Rp15.000"). */
static int has_money(const char *text)
{
    static const char *const signs[] = {"$",   "€",
                                        "£",   "¥",
                                        "₹",   "₽",
                                        "₩",   "₺",
                                        "₫",   "₴",
                                        "₪",   "฿",
                                        "₱",   "₦",
                                        "¢",   "₸",
                                        "₼", "₾",
                                        "₡",   "৳",
                                        "₭",   "៛",
                                        "元",  "円",
                                        "원",  /* Arabic signs as normalised: */ "ر.س",
                                        "د.ا", "ج.م",
                                        "د.ك", "ر.ق",
                                        "﷼",   NULL};
    static const char *const codes[] = {"usd", "eur", "gbp", "jpy", "inr", "cny", "rub", "brl",
                                        "chf", "cad", "aud", "mxn", "krw", "try", "pln", "rmb",
                                        "idr", "rp",  "rs",  "sar", "aed", "egp", "thb", "vnd",
                                        "php", "myr", "rm",  "sgd", "hkd", "twd", "nzd", "sek",
                                        "nok", "dkk", "kr",  "zar", "ngn", "pkr", "bdt", "uah",
                                        "ils", "czk", "kc",  "huf", "ron", "lei", "clp", "cop",
                                        "ars", "pen", "kzt", "tl",  "zl",  "kes", "ksh", NULL};
    for (int pass = 0; pass < 2; pass++) {
        const char *const *list = pass ? codes : signs;
        for (int k = 0; list[k]; k++) {
            size_t l = strlen(list[k]);
            for (const char *p = text; (p = strstr(p, list[k])) != NULL; p++) {
                const char *a = p + l;
                if (pass && ((p > text && word_cp(cp_before(text, p))) ||
                             (word_cp(cp_at(a)) && !(*a >= '0' && *a <= '9'))))
                    continue; /* a code must be a word of its own */
                if (pass && *a == '.')
                    a++; /* "Rs. 499" */
                while (*a == ' ')
                    a++;
                if (*a >= '0' && *a <= '9')
                    return 1;
                const char *b = p;
                while (b > text && b[-1] == ' ')
                    b--;
                if (b > text && b[-1] >= '0' && b[-1] <= '9')
                    return 1;
            }
        }
    }
    return 0;
}

void agent_safety_free(agent_safety *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (s->p[i].kind == K_RE)
            regfree(&s->p[i].re);
        free(s->p[i].src);
        free(s->p[i].norm);
    }
    free(s->p);
    free(s);
}

static int prefix(const char *p, const char *pre, const char **rest)
{
    size_t n = strlen(pre);
    if (strncmp(p, pre, n) != 0)
        return 0;
    *rest = p + n;
    return 1;
}

static int compile(pattern *pt, const char *p, size_t i, ops_err *e)
{
    const char *rest = p;
    pt->kind = prefix(p, "re:", &rest)        ? K_RE
               : prefix(p, "button:", &rest)  ? K_BUTTON
               : prefix(p, "priced:", &rest)  ? K_PRICED
               : prefix(p, "package:", &rest) ? K_PACKAGE
                                              : K_WORDS;
    if (pt->kind == K_PRICED && strcmp(rest, "*") == 0)
        pt->kind = K_PRICED_ANY;
    if (!(pt->src = strdup(p)))
        return ops_fail(e, OPS_EFAIL, "out of memory");
    if (pt->kind == K_RE) {
        int rc = regcomp(&pt->re, rest, REG_EXTENDED | REG_ICASE | REG_NEWLINE);
        if (rc != 0) {
            char why[256];
            regerror(rc, &pt->re, why, sizeof why);
            pt->kind = K_WORDS; /* nothing to regfree */
            return ops_fail(e, OPS_EARG,
                            "safety pattern %zu (\"%.200s\") is not a valid "
                            "extended regular expression: %s",
                            i + 1, p, why);
        }
        return 0;
    }
    if (pt->kind == K_PRICED_ANY)
        return 0;
    pt->norm = pt->kind == K_PACKAGE ? strdup(rest) : agent_norm(rest);
    if (!pt->norm)
        return ops_fail(e, OPS_EFAIL, "out of memory");
    char *q = pt->norm;
    while (*q == ' ')
        memmove(q, q + 1, strlen(q));
    pt->len = strlen(pt->norm);
    if (!pt->len)
        return ops_fail(e, OPS_EARG,
                        "safety pattern %zu (\"%.200s\") has no words (after "
                        "invisible characters and blanks are taken out)",
                        i + 1, p);
    pt->edge_l = word_cp(cp_at(pt->norm));
    pt->edge_r = word_cp(cp_before(pt->norm, pt->norm + pt->len));
    return 0;
}

int agent_safety_init(agent_safety **out, const char *const *patterns, size_t n, ops_err *e)
{
    *out = NULL;
    if (!patterns) {
        patterns = ops_agent_safety_default;
        for (n = 0; patterns[n]; n++)
            ;
    }
    agent_safety *s = calloc(1, sizeof *s);
    if (!s || !(s->p = calloc(n ? n : 1, sizeof *s->p))) {
        free(s);
        return ops_fail(e, OPS_EFAIL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *p = patterns[i];
        if (!p || !*p || strlen(p) > 512 || ops_utf8_bad(p, strlen(p)) != strlen(p)) {
            agent_safety_free(s);
            return ops_fail(e, OPS_EARG,
                            "safety pattern %zu is empty, longer than 512 bytes or "
                            "not UTF-8",
                            i + 1);
        }
        s->n = i + 1;
        if (compile(&s->p[i], p, i, e) != 0) {
            agent_safety_free(s);
            return -1;
        }
    }
    *out = s;
    return 0;
}

/* ---- the screen as a person reads it ---- */

typedef struct screen {
    nbuf text;             /* every window's nodes, read together */
    nbuf alone;            /* each node's text and content-desc on its own, between ALONEs */
    nbuf *label;           /* [ref]: a button's label (its own text and its labels') */
    unsigned char *button; /* [ref]: 1 when the ref is a button */
    size_t nrefs;
    const char *package; /* a node's package that a package: pattern names */
    const char *package_pat;
    size_t *mark_at, *mark_node; /* where each node's text starts in text, and the node */
    size_t nmarks;
    const adbc_ui_snap *snap;
} screen;

/* A button: clickable, or of a Button class; not a tick box, switch or
 * radio button (a to-do list's [ ] buy milk ticks, it does not buy). */
static int is_button(const adbc_ui_ref *r)
{
    if (!r || strstr(r->cls, "CheckBox") || strstr(r->cls, "Switch") ||
        strstr(r->cls, "RadioButton") || strstr(r->cls, "ToggleButton") ||
        strstr(r->cls, "CheckedTextView"))
        return 0;
    return (r->states & ADBC_UI_CLICKABLE) || strstr(r->cls, "Button");
}

static void screen_free(screen *sc)
{
    for (size_t i = 0; sc->label && i <= sc->nrefs; i++)
        free(sc->label[i].p);
    free(sc->label);
    free(sc->button);
    free(sc->text.p);
    free(sc->alone.p);
    free(sc->mark_at);
    free(sc->mark_node);
}

/* The node's own text (else its content-desc) as the device gave it, for
 * a person to recognise: controls as spaces, at most cap - 1 bytes. */
static void raw_text(char *buf, size_t cap, const adbc_ui_snap *snap, size_t node)
{
    adbc_ui_node nd;
    const char *t = adbc_ui_snap_node(&nd, snap, node) == 0 ? (*nd.text ? nd.text : nd.desc) : "";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p && o + 1 < cap; p++) {
        int ctl = *p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0);
        if (ctl && *p == 0xc2)
            p++;
        buf[o++] = ctl ? ' ' : (char)*p;
    }
    buf[o] = 0;
    ops_utf8_fix(buf);
}

/* The raw text of the node whose text holds offset off of sc->text. */
static void raw_at(char *buf, size_t cap, const screen *sc, size_t off)
{
    size_t k = 0;
    while (k + 1 < sc->nmarks && sc->mark_at[k + 1] <= off)
        k++;
    if (sc->nmarks)
        raw_text(buf, cap, sc->snap, sc->mark_node[k]);
    else
        buf[0] = 0;
}

static int screen_read(screen *sc, const agent_safety *s, const adbc_ui_snap *snap, int gap)
{
    memset(sc, 0, sizeof *sc);
    sc->snap = snap;
    const adbc_ui_reftab *t = adbc_ui_snap_refs(snap);
    sc->nrefs = adbc_ui_reftab_count(t);
    sc->label = calloc(sc->nrefs + 1, sizeof *sc->label);
    sc->button = calloc(sc->nrefs + 1, 1);
    if (!sc->label || !sc->button)
        return -1;
    for (size_t r = 1; r <= sc->nrefs; r++)
        sc->button[r] = (unsigned char)is_button(adbc_ui_reftab_get(t, (int)r));
    size_t n = adbc_ui_snap_nodes(snap);
    int window = -1;
    for (size_t i = 0; i < n; i++) {
        adbc_ui_node nd;
        if (adbc_ui_snap_node(&nd, snap, i) != 0)
            continue;
        if (!sc->package)
            for (size_t k = 0; k < s->n; k++)
                if (s->p[k].kind == K_PACKAGE &&
                    (strcmp(nd.package, s->p[k].norm) == 0 ||
                     (strncmp(nd.resource_id, s->p[k].norm, s->p[k].len) == 0 &&
                      nd.resource_id[s->p[k].len] == ':'))) {
                    sc->package = nd.package;
                    sc->package_pat = s->p[k].src;
                }
        if (!*nd.text && !*nd.desc)
            continue;
        if (nd.window != window && sc->text.len) {
            if (sc->text.p[sc->text.len - 1] == ' ')
                sc->text.len--;
            nb_char(&sc->text, '\n');
        }
        window = nd.window;
        if ((sc->nmarks & (sc->nmarks + 1)) == 0 || sc->nmarks == 0) { /* 0, 1, 3, 7, ... */
            size_t cap = (sc->nmarks + 1) * 2;
            size_t *a = realloc(sc->mark_at, cap * sizeof *a);
            if (a)
                sc->mark_at = a;
            size_t *b = a ? realloc(sc->mark_node, cap * sizeof *b) : NULL;
            if (!a || !b)
                return -1;
            sc->mark_node = b;
        }
        sc->mark_at[sc->nmarks] = sc->text.len;
        sc->mark_node[sc->nmarks++] = i;
        nb_norm(&sc->text, nd.text, gap);
        nb_char(&sc->text, ' ');
        for (int k = 0; k < 2; k++) { /* the text, then the content-desc */
            const char *own = k ? nd.desc : nd.text;
            if (!*own)
                continue;
            nb_char(&sc->alone, ALONE);
            nb_norm(&sc->alone, own, gap);
            if (sc->alone.len && sc->alone.p[sc->alone.len - 1] == ' ')
                sc->alone.p[--sc->alone.len] = 0;
            nb_char(&sc->alone, ALONE);
        }
        if (sc->alone.oom)
            return -1;
        if (*nd.desc && strcmp(nd.desc, nd.text) != 0) {
            nb_norm(&sc->text, nd.desc, gap);
            nb_char(&sc->text, ' ');
        }
        int r = nd.actref;
        if (r > 0 && (size_t)r <= sc->nrefs && sc->button[r]) {
            nb_norm(&sc->label[r], nd.text, gap);
            nb_char(&sc->label[r], ' ');
            nb_norm(&sc->label[r], nd.desc, gap);
            nb_char(&sc->label[r], ' ');
            if (sc->label[r].oom)
                return -1;
        }
    }
    if (!sc->text.p) {
        nb_room(&sc->text, 1);
        if (sc->text.p)
            sc->text.p[0] = 0;
    }
    return sc->text.oom || !sc->text.p ? -1 : 0;
}

/* A readable stretch of the normalised text around [p, p + len): at most
 * cap - 1 bytes, at character boundaries (the text has no controls). */
static void context(char *buf, size_t cap, const char *text, const char *p, size_t len)
{
    const char *a = p, *b = p + len;
    while (a > text && a[-1] != '\n' && p - a < 50)
        a--;
    while (*b && *b != '\n' && b - (p + len) < 50)
        b++;
    while (a < p && ((unsigned char)*a & 0xC0) == 0x80)
        a++;
    while (b > p + len && *b && ((unsigned char)*b & 0xC0) == 0x80)
        b--;
    size_t n = (size_t)(b - a) < cap - 1 ? (size_t)(b - a) : cap - 1;
    memcpy(buf, a, n);
    buf[n] = 0;
    ops_utf8_fix(buf);
}

/* 1 when a pattern matches the screen read with gap; -1 out of memory;
 * *invisible: the screen has invisible characters. */
static int check_screen(const agent_safety *s, const adbc_ui_snap *snap, int gap, char *why,
                        size_t cap, int *invisible)
{
    screen sc;
    if (screen_read(&sc, s, snap, gap) != 0) {
        screen_free(&sc);
        return -1;
    }
    *invisible = sc.text.invisible;
    const char *text = sc.text.p;
    int money = -1, hit = 0;
    char line[256];
    for (size_t i = 0; i < s->n && !hit; i++) {
        const pattern *pt = &s->p[i];
        const char *at;
        switch (pt->kind) {
        case K_WORDS:
        case K_RE: {
            regmatch_t m[1];
            size_t len = pt->len;
            if (pt->kind == K_WORDS)
                at = find_words(pt, text);
            else if (regexec(&pt->re, text, 1, m, 0) == 0)
                at = text + m[0].rm_so, len = (size_t)(m[0].rm_eo - m[0].rm_so);
            else
                at = NULL;
            if (at) {
                char raw[160];
                context(line, sizeof line, text, at, len);
                raw_at(raw, sizeof raw, &sc, (size_t)(at - text));
                snprintf(why, cap,
                         "the screen matches safety pattern \"%s\" in \"%s\" (read "
                         "as: %s)",
                         pt->src, raw, line);
                hit = 1;
            }
            break;
        }
        case K_PACKAGE:
            if (sc.package && strcmp(sc.package_pat, pt->src) == 0) {
                snprintf(why, cap,
                         "the screen is the system's package installer (safety pattern "
                         "\"%s\"): an install or uninstall confirmation",
                         pt->src);
                hit = 1;
            }
            break;
        case K_BUTTON:
        case K_PRICED:
        case K_PRICED_ANY:
            if (pt->kind == K_PRICED && money < 0)
                money = has_money(text);
            if (pt->kind == K_PRICED && !money)
                break;
            for (size_t r = 1; r <= sc.nrefs && !hit; r++) {
                const char *l = sc.label[r].p;
                if (!sc.button[r] || !l)
                    continue;
                /* a button's label begins with the words: [Delete], [Delete all],
                 * not a message row that says "can you delete ..." */
                if (pt->kind == K_PRICED_ANY ? has_money(l) : label_begins(pt, l)) {
                    /* the button's own words as the device gave them, else its label */
                    const adbc_ui_ref *br = adbc_ui_reftab_get(adbc_ui_snap_refs(snap), (int)r);
                    const char *own = br && *br->text ? br->text : br ? br->desc : "";
                    if (*own) {
                        snprintf(line, sizeof line, "%s", own);
                        for (char *q = line; *q; q++)
                            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                                *q = ' ';
                        ops_utf8_fix(line);
                    } else {
                        context(line, sizeof line, l, l, strlen(l));
                    }
                    size_t ll = strlen(line);
                    while (ll && line[ll - 1] == ' ')
                        line[--ll] = 0;
                    snprintf(why, cap,
                             "the screen matches safety pattern \"%s\": the button "
                             "\"%s\"%s",
                             pt->src, line, pt->kind == K_PRICED ? " beside a money amount" : "");
                    hit = 1;
                }
            }
            /* A label that is the words and nothing else, clickable or not: an
             * app may draw its [Pay] as a view that does not say it is
             * clickable, and a tap or a swipe on its point still presses it. */
            if (!hit && pt->kind == K_BUTTON && sc.alone.p &&
                (at = alone_words(sc.alone.p, pt->norm, pt->len)) != NULL) {
                snprintf(why, cap, "the screen matches safety pattern \"%s\": a label that says "
                         "only \"%s\"", pt->src, pt->norm);
                hit = 1;
            }
            break;
        }
    }
    screen_free(&sc);
    return hit;
}

int agent_safety_check(const agent_safety *s, const adbc_ui_snap *snap, char *why, size_t cap)
{
    if (!s || !snap)
        return 0;
    int invisible = 0;
    int hit = check_screen(s, snap, 0, why, cap, &invisible);
    if (hit == 0 && invisible)
        hit = check_screen(s, snap, 1, why, cap, &invisible);
    if (hit < 0) {
        snprintf(why, cap, "the screen could not be read for the safety check (out of memory)");
        return 1; /* fails closed */
    }
    return hit;
}
