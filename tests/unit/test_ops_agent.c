/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's parts that need no device or model: the safety patterns
 * (whole words, phrases, regular expressions, case), the settings and the
 * checks ops_agent_run makes before it starts, the check of a call before
 * anything is sent, and the JSON forms. tests/sh/agent.sh runs the loop. */
#include "t.h"

#include "ops_agent_int.h"
#include "ops_config.h"

/* A screen: a hierarchy of the nodes given (N(...) strings). */
#define SCREEN(nodes) "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy " \
    "rotation=\"0\"><node class=\"android.widget.FrameLayout\" package=\"com.example\" " \
    "bounds=\"[0,0][1080,2400]\">" nodes "</node></hierarchy>"
/* A node: class, text, content-desc, clickable, bounds. */
#define N(cls, text, desc, click, b) "<node class=\"android.widget." cls "\" text=\"" text \
    "\" content-desc=\"" desc "\" resource-id=\"\" package=\"com.example\" clickable=\"" \
    click "\" enabled=\"true\" bounds=\"" b "\"/>"
#define TEXT(t, b) N("TextView", t, "", "false", b)
#define BUTTON(t, b) N("Button", t, "", "true", b)

static char last_why[512];

static int stops(const char *const *pats, size_t n, const char *xml)
{
    agent_safety *s = NULL;
    ops_err e;
    if (agent_safety_init(&s, pats, n, &e) != 0)
        return -1;
    adbc_ui_snap *snap = NULL;
    if (adbc_ui_snap_parse(&snap, xml, strlen(xml)) != 0) {
        agent_safety_free(s);
        return -2;
    }
    last_why[0] = 0;
    int r = agent_safety_check(s, snap, last_why, sizeof last_why);
    adbc_ui_snap_free(snap);
    agent_safety_free(s);
    return r;
}

static int norm_is(const char *in, const char *want)
{
    char *n = agent_norm(in);
    int ok = n && strcmp(n, want) == 0;
    if (!ok)
        fprintf(stderr, "agent_norm(\"%s\") = \"%s\", expected \"%s\"\n", in, n ? n : "(null)",
                want);
    free(n);
    return ok;
}

TEST(safety_normaliser)
{
    CHECK(norm_is("Pay NOW", "pay now"));
    CHECK(norm_is("Confirm\npayment", "confirm payment"));
    CHECK(norm_is("Confirm\t \r\n\tpayment", "confirm payment"));
    CHECK(norm_is("Confirm\xc2\xa0payment", "confirm payment"));              /* NBSP */
    CHECK(norm_is("Confirm\xe2\x80\xafpayment", "confirm payment"));          /* narrow NBSP */
    CHECK(norm_is("Confirm\xe3\x80\x80payment", "confirm payment"));          /* ideographic */
    CHECK(norm_is("Pay\xe2\x80\x8bment", "payment"));                         /* ZWSP */
    CHECK(norm_is("Pur\xc2\xad" "chase", "purchase"));                        /* soft hyphen */
    CHECK(norm_is("\xe2\x80\xae" "Buy\xe2\x80\xac", "buy"));                  /* RLO .. PDF */
    CHECK(norm_is("Bu\x01y", "buy"));                                         /* C0 */
    CHECK(norm_is("Bu\xc2\x9by", "buy"));                                     /* C1 (CSI) */
    CHECK(norm_is("\xd0\xa1\xd0\xbenfirm \xd1\x80\xd0\xb0\xd1\x83ment", "confirm payment"));
    CHECK(norm_is("\xce\x91\xce\x92\xce\x95", "abe"));                        /* Greek capitals */
    CHECK(norm_is("\xef\xbc\xa2\xef\xbc\xb5\xef\xbc\xb9", "buy"));            /* fullwidth */
    CHECK(norm_is("\xf0\x9d\x90\x8f\xf0\x9d\x90\x9a\xf0\x9d\x90\xb2", "pay")); /* bold math */
    CHECK(norm_is("\xe2\x93\x85\xe2\x93\x90\xe2\x93\xa8", "pay"));            /* circled */
    CHECK(norm_is("L\xc3\xb6schen", "loschen"));
    CHECK(norm_is("Lo\xcc\x88schen", "loschen"));                             /* combining */
    CHECK(norm_is("Stra\xc3\x9f" "e", "strasse"));
    CHECK(norm_is("\xc5\x81\xc3\xb3" "d\xc5\xba", "lodz"));                   /* Latin Ext-A */
    CHECK(norm_is("confirmer l\xe2\x80\x99" "achat", "confirmer l'achat"));
    CHECK(norm_is("\xef\xbf\xa5" "1200", "\xc2\xa5" "1200"));                 /* fullwidth yen */
    CHECK(norm_is("\xe8\xb4\xad\xe4\xb9\xb0", "\xe8\xb4\xad\xe4\xb9\xb0"));   /* CJK kept */
    CHECK(norm_is("  a  ", "a"));
    CHECK(norm_is("", ""));
    CHECK(norm_is("\xff" "a", "\xef\xbf\xbd" "a")); /* a byte that is not UTF-8 */
}

TEST(safety_real_screens_stop)
{
    /* a checkout */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Checkout", "[0,0][1080,100]")
                                       TEXT("Order total: $24.99", "[0,200][1080,300]")
                                       BUTTON("Place your order", "[0,400][1080,600]"))), 1);
    CHECK(strstr(last_why, "order total") || strstr(last_why, "place your order"));
    /* a subscription */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Premium", "[0,0][1080,100]")
                                       TEXT("$99.99/year", "[0,200][1080,300]")
                                       BUTTON("Subscribe", "[0,400][1080,600]"))), 1);
    CHECK(strstr(last_why, "priced:subscribe"));
    /* a transfer */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Transfer to", "[0,0][1080,100]")
                                       TEXT("Alex Smith", "[0,200][1080,300]")
                                       BUTTON("Send $500.00", "[0,400][1080,600]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Alex Smith", "[0,200][1080,300]")
                                       BUTTON("Send $500.00", "[0,400][1080,600]"))), 1);
    CHECK(strstr(last_why, "priced:*") && strstr(last_why, "Send $500.00"));
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Envoyer 49,90\xc2\xa0\xe2\x82\xac",
                                              "[0,400][1080,600]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("\xef\xbf\xa5" "1200", "[0,0][1080,100]")
                                       BUTTON("OK", "[0,400][1080,600]"))), 1);
    /* German, French, Spanish, Portuguese, Italian, Chinese, Japanese, Russian */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Jetzt kaufen", "[0,400][1080,600]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Zahlungspflichtig bestellen", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Valider la commande", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Realizar pedido", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Finalizar compra", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Acquista ora", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xe7\xab\x8b\xe5\x8d\xb3\xe8\xb4\xad\xe4\xb9\xb0",
                                              "[0,4][9,6]"))), 1); /* 立即购买 */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xe6\xb3\xa8\xe6\x96\x87\xe3\x82\x92\xe7\xa2\xba"
                                              "\xe5\xae\x9a\xe3\x81\x99\xe3\x82\x8b",
                                              "[0,4][9,6]"))), 1); /* 注文を確定する */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xd0\x9a\xd1\x83\xd0\xbf\xd0\xb8\xd1\x82\xd1\x8c",
                                              "[0,4][9,6]"))), 1); /* Купить */
    /* a destructive confirmation */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Delete 1,204 photos permanently?", "[0,0][9,1]")
                                       BUTTON("Cancel", "[0,400][500,600]")
                                       BUTTON("Delete", "[500,400][1080,600]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Auf Werkseinstellungen zur\xc3\xbc" "cksetzen",
                                              "[0,4][9,6]"))), 1);
    /* the system's uninstaller, whatever its words */
    static const char uninstall[] =
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        "<node class=\"android.widget.FrameLayout\" package=\"com.google.android."
        "packageinstaller\" bounds=\"[0,0][1080,2400]\"><node class=\"android.widget.TextView\" "
        "text=\"Notes\" resource-id=\"android:id/alertTitle\" package=\"com.google.android."
        "packageinstaller\" bounds=\"[0,0][9,9]\"/><node class=\"android.widget.Button\" "
        "text=\"OK\" resource-id=\"android:id/button1\" package=\"com.google.android."
        "packageinstaller\" clickable=\"true\" bounds=\"[0,400][1080,600]\"/></node></hierarchy>";
    CHECK_EQ_INT(stops(NULL, 0, uninstall), 1);
    CHECK(strstr(last_why, "package installer"));
}

TEST(safety_evasions_stop)
{
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm&#10;payment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm&#9;payment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm&#1;payment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Con&#1;firm payment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm pay\xe2\x80\x8bment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm\xe2\x80\x8bpayment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Pur\xc2\xad" "chase", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Confirm\xc2\xa0payment", "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xd0\xa1onfirm \xd1\x80\xd0\xb0\xd1\x83ment",
                                              "[0,4][9,6]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xef\xbc\xa2\xef\xbc\xb5\xef\xbc\xb9",
                                              "[0,4][9,6]"))), 1);
    /* NFKC forms and look-alikes the check folds from the generated table
     * (scripts/gen-safety-fold): letterlike and double-struck letters,
     * superscripts, small capitals, Greek capitals, Cherokee and Lisu
     * letters, squared letters, halfwidth katakana */
    static const char *const alike[] = {
        "\xe2\x84\x99\xf0\x9d\x95\x92\xf0\x9d\x95\xaa",  /* ℙ𝕒𝕪 */
        "\xe1\xb5\x96\xe1\xb5\x83\xca\xb8",                  /* ᵖᵃʸ */
        "\xe1\xb4\x98\xe1\xb4\x80\xca\x8f",                  /* ᴘᴀʏ */
        "\xca\x99\xe1\xb4\x9c\xca\x8f \xc9\xb4\xe1\xb4\x8f\xe1\xb4\xa1", /* ʙᴜʏ ɴᴏᴡ */
        "\xce\xa1\xce\x91\xce\xa5",                            /* ΡΑΥ (Greek) */
        "\xe1\x8f\xa2\xe1\x8e\xaa\x59",                       /* ᏢᎪY (Cherokee) */
        "\xea\x93\x91\xea\x93\xae\xea\x93\xac",             /* ꓑꓮꓬ (Lisu) */
        "\xf0\x9f\x84\xbf\xf0\x9f\x84\xb0\xf0\x9f\x85\x88", /* 🄿🄰🅈 */
        "\xef\xbe\x9a\xef\xbd\xbc\xef\xbe\x9e\xe3\x81\xab\xe9\x80\xb2\xe3\x82\x80", /* ﾚｼﾞに進む */
    };
    for (size_t i = 0; i < sizeof alike / sizeof alike[0]; i++) {
        char full[1024];
        snprintf(full, sizeof full, SCREEN(BUTTON("%s", "[0,4][9,6]")), alike[i]);
        if (stops(NULL, 0, full) != 1)
            fprintf(stderr, "look-alike %zu does not stop: %s\n", i, alike[i]);
        CHECK_EQ_INT(stops(NULL, 0, full), 1);
    }
    /* a phrase split over two nodes */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Place", "[0,400][500,600]")
                                       TEXT("order", "[500,400][1080,600]"))), 1);
    /* the content-desc counts as the text does */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(N("ImageButton", "", "Buy now", "true", "[0,4][9,6]"))),
                 1);
}

/* Screens in the languages phones ship with, prices written as they are
 * written there, and ordinary screens that must not stop (want 0). */
struct screen_case {
    const char *name;
    const char *xml;
    int want;
};
#define P(n, x, w) \
    {              \
        n, x, w    \
    }
static const struct screen_case world[] = {
    P("ja 購入する", SCREEN(BUTTON("購入する", "[0,4][9,6]")), 1),
    P("ja 購入手続きへ", SCREEN(BUTTON("購入手続きへ", "[0,4][9,6]")), 1),
    P("ja レジに進む+¥",
      SCREEN(TEXT("合計 ¥3,980", "[0,0][9,1]") BUTTON("レジに進む", "[0,4][9,6]")), 1),
    P("ja 削除する",
      SCREEN(TEXT("写真を削除しますか？", "[0,0][9,1]") BUTTON("削除する", "[0,4][9,6]")), 1),
    P("ja 支払う", SCREEN(BUTTON("支払う", "[0,4][9,6]")), 1),
    P("ja お支払いを確定", SCREEN(BUTTON("お支払いを確定", "[0,4][9,6]")), 1),
    P("ja 注文を確定する", SCREEN(BUTTON("注文を確定する", "[0,4][9,6]")), 1),
    P("ko 구매하기", SCREEN(BUTTON("구매하기", "[0,4][9,6]")), 1),
    P("ko 결제하기", SCREEN(BUTTON("결제하기", "[0,4][9,6]")), 1),
    P("ko 주문하기", SCREEN(BUTTON("주문하기", "[0,4][9,6]")), 1),
    P("ko 9,900원 + 확인", SCREEN(TEXT("9,900원", "[0,0][9,1]") BUTTON("확인", "[0,4][9,6]")), 1),
    P("ko 삭제", SCREEN(BUTTON("삭제", "[0,4][9,6]")), 1),
    P("ko 송금하기", SCREEN(BUTTON("송금하기", "[0,4][9,6]")), 1),
    P("ko 구독하기", SCREEN(BUTTON("구독하기", "[0,4][9,6]")), 1),
    P("hi अभी खरीदें", SCREEN(BUTTON("अभी खरीदें", "[0,4][9,6]")), 1),
    P("hi भुगतान करें ₹499", SCREEN(BUTTON("₹499 का भुगतान करें", "[0,4][9,6]")), 1),
    P("hi हटाएं", SCREEN(BUTTON("हटाएं", "[0,4][9,6]")), 1),
    P("hi ऑर्डर दें", SCREEN(BUTTON("ऑर्डर दें", "[0,4][9,6]")), 1),
    P("ar شراء", SCREEN(BUTTON("شراء", "[0,4][9,6]")), 1),
    P("ar اشترِ الآن", SCREEN(BUTTON("اشترِ الآن", "[0,4][9,6]")), 1),
    P("ar ادفع", SCREEN(BUTTON("ادفع الآن", "[0,4][9,6]")), 1),
    P("ar تأكيد الطلب", SCREEN(BUTTON("تأكيد الطلب", "[0,4][9,6]")), 1),
    P("ar حذف", SCREEN(BUTTON("حذف", "[0,4][9,6]")), 1),
    P("ar tatweel شـراء", SCREEN(BUTTON("شـــراء", "[0,4][9,6]")), 1),
    P("ar 49 ر.س + متابعة",
      SCREEN(TEXT("المجموع 49 ر.س", "[0,0][9,1]") BUTTON("متابعة", "[0,4][9,6]")), 1),
    P("tr Satın al", SCREEN(BUTTON("Satın al", "[0,4][9,6]")), 1),
    P("tr SATIN AL", SCREEN(BUTTON("SATIN AL", "[0,4][9,6]")), 1),
    P("tr Ödeme yap", SCREEN(BUTTON("Ödeme yap", "[0,4][9,6]")), 1),
    P("tr Siparişi onayla", SCREEN(BUTTON("Siparişi onayla", "[0,4][9,6]")), 1),
    P("tr Sil", SCREEN(BUTTON("Sil", "[0,4][9,6]")), 1),
    P("tr 99,99 TL Devam",
      SCREEN(TEXT("Toplam 99,99 TL", "[0,0][9,1]") BUTTON("Devam", "[0,4][9,6]")), 1),
    P("id Beli sekarang", SCREEN(BUTTON("Beli Sekarang", "[0,4][9,6]")), 1),
    P("id Bayar", SCREEN(BUTTON("Bayar", "[0,4][9,6]")), 1),
    P("id Buat Pesanan", SCREEN(BUTTON("Buat Pesanan", "[0,4][9,6]")), 1),
    P("id Hapus", SCREEN(BUTTON("Hapus", "[0,4][9,6]")), 1),
    P("id Rp15.000 Lanjut",
      SCREEN(TEXT("Total Rp15.000", "[0,0][9,1]") BUTTON("Lanjut", "[0,4][9,6]")), 1),
    P("vi Mua ngay", SCREEN(BUTTON("Mua ngay", "[0,4][9,6]")), 1),
    P("vi Thanh toán", SCREEN(BUTTON("Thanh toán", "[0,4][9,6]")), 1),
    P("vi Đặt hàng", SCREEN(BUTTON("Đặt hàng", "[0,4][9,6]")), 1),
    P("vi Xóa", SCREEN(BUTTON("Xóa", "[0,4][9,6]")), 1),
    P("pl Kup teraz", SCREEN(BUTTON("Kup teraz", "[0,4][9,6]")), 1),
    P("pl Zamawiam i płacę", SCREEN(BUTTON("Zamawiam i płacę", "[0,4][9,6]")), 1),
    P("pl 9,99 zł Dalej", SCREEN(TEXT("9,99 zł", "[0,0][9,1]") BUTTON("Dalej", "[0,4][9,6]")), 1),
    P("nl Nu kopen", SCREEN(BUTTON("Nu kopen", "[0,4][9,6]")), 1),
    P("nl Bestellen en betalen", SCREEN(BUTTON("Bestellen en betalen", "[0,4][9,6]")), 1),
    P("nl Verwijderen", SCREEN(BUTTON("Verwijderen", "[0,4][9,6]")), 1),
    P("th ซื้อเลย", SCREEN(BUTTON("ซื้อเลย", "[0,4][9,6]")), 1),
    P("zh 去支付", SCREEN(BUTTON("去支付", "[0,4][9,6]")), 1),
    P("zh 立即支付", SCREEN(BUTTON("立即支付", "[0,4][9,6]")), 1),
    P("zh 确认订单", SCREEN(BUTTON("确认订单", "[0,4][9,6]")), 1),
    P("zh ¥99 开通会员", SCREEN(TEXT("¥99/年", "[0,0][9,1]") BUTTON("开通会员", "[0,4][9,6]")), 1),
    P("€9,99 + Continue",
      SCREEN(TEXT("€9,99 per month", "[0,0][9,1]") BUTTON("Continue", "[0,4][9,6]")), 1),
    P("₹499 + Proceed", SCREEN(TEXT("₹499", "[0,0][9,1]") BUTTON("Proceed", "[0,4][9,6]")), 1),
    P("US$4.99 + Get", SCREEN(TEXT("US$4.99", "[0,0][9,1]") BUTTON("Get", "[0,4][9,6]")), 1),
    P("Rs. 499 + Proceed to pay",
      SCREEN(TEXT("Rs. 499", "[0,0][9,1]") BUTTON("Proceed to pay", "[0,4][9,6]")), 1),
    P("en Proceed to checkout", SCREEN(BUTTON("Proceed to checkout", "[0,4][9,6]")), 1),
    P("en Pay $12.00", SCREEN(BUTTON("Pay $12.00", "[0,4][9,6]")), 1),
    P("en Buy for $4.99 desc", SCREEN(N("ImageButton", "", "Buy for $4.99", "true", "[0,4][9,6]")),
      1),
    P("en Subscribe text $",
      SCREEN(TEXT("$9.99/month after trial", "[0,0][9,1]") BUTTON("Try free for 7 days", "[0,4][9,"
                                                                                         "6]")),
      1),
    P("en Confirm and pay", SCREEN(BUTTON("Confirm and pay", "[0,4][9,6]")), 1),
    P("en Slide to pay", SCREEN(TEXT("₹500", "[0,0][9,1]") TEXT("Slide to pay", "[0,4][9,6]")), 1),
    P("en Empty trash",
      SCREEN(TEXT("Permanently delete 12 items?", "[0,0][9,1]") BUTTON("Empty trash", "[0,4][9,"
                                                                                      "6]")),
      1),
    P("en Reset phone", SCREEN(BUTTON("Erase all data", "[0,4][9,6]")), 1),
    P("en Delete selected button in desc",
      SCREEN(N("ImageButton", "", "Delete", "true", "[0,4][9,6]")), 1),
    P("en labels inside a clickable group",
      SCREEN("<node class=\"android.view.ViewGroup\" "
             "package=\"com.example\" clickable=\"true\" enabled=\"true\" "
             "bounds=\"[0,400][1080,600]\">" TEXT("Complete", "[0,400][500,600]")
                 TEXT("$19.99", "[500,400][1080,600]") "</node>"),
      1),
    /* ordinary screens: text that names a purchase with no button that makes it, a
  * settings row, a tick box, words that only begin like one */
    P("ok buy milk text",
      SCREEN(TEXT("Shopping list", "[0,0][9,1]") N("CheckBox", "buy milk", "", "true", "[0,4][9,6]")
                 BUTTON("Add item", "[0,6][9,8]")),
      0),
    P("ok settings",
      SCREEN(TEXT("Settings", "[0,0][9,1]") BUTTON("Google Pay", "[0,4][9,6]")
                 BUTTON("Apps", "[0,6][9,8]")),
      0),
    P("ok ko settings 결제 수단", SCREEN(BUTTON("결제 수단", "[0,4][9,6]")), 0),
    P("ok ja settings 支払い方法", SCREEN(BUTTON("支払い方法", "[0,4][9,6]")), 0),
    P("ok tr Silent", SCREEN(BUTTON("Silent mode", "[0,4][9,6]")), 0),
    P("ok id Bayar text", SCREEN(TEXT("Cara bayar tagihan", "[0,4][9,6]")), 0),
    P("ok Display", SCREEN(BUTTON("Display", "[0,4][9,6]")), 0),
    P("ok Pay bill reminders notif", SCREEN(TEXT("Reminder: pay rent", "[0,4][9,6]")), 0),
    P("ok feet not money", SCREEN(TEXT("5 ft away", "[0,0][9,1]") BUTTON("Next", "[0,4][9,6]")), 0),
    P("ok zh 支付宝 app", SCREEN(BUTTON("支付宝", "[0,4][9,6]")), 0),
    P("ok ko 삭제된 항목", SCREEN(BUTTON("삭제된 항목", "[0,4][9,6]")), 0),
};

TEST(safety_world_screens)
{
    for (size_t i = 0; i < sizeof world / sizeof world[0]; i++) {
        int r = stops(NULL, 0, world[i].xml);
        if (r != world[i].want)
            fprintf(stderr, "%s: %d, expected %d (%s)\n", world[i].name, r, world[i].want,
                    last_why);
        CHECK_EQ_INT(r, world[i].want);
    }
    /* the normaliser's part: Arabic marks and tatweel, digits of other scripts, Vietnamese
     * letters precomposed or not */
    CHECK(norm_is("شـــراء", "شراء"));
    CHECK(norm_is("اشترِ", "اشتر"));
    CHECK(norm_is("₹४९९", "₹499"));
    CHECK(norm_is("٤٩ ر.س", "49 ر.س"));
    CHECK(norm_is("Đặt hàng", "dat hang"));
    CHECK(norm_is("Đa\xcc\xa3\xcc\x86t ha\xcc\x80ng", "dat hang"));
}

TEST(safety_ordinary_screens_pass)
{
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Settings", "[0,0][1080,100]")
                                       BUTTON("Network &amp; internet", "[0,100][1080,200]")
                                       BUTTON("Connected devices", "[0,200][1080,300]")
                                       BUTTON("Display", "[0,300][1080,400]")
                                       BUTTON("Payments &amp; subscriptions", "[0,4][9,5]")
                                       BUTTON("Storage", "[0,500][1080,600]")
                                       BUTTON("System", "[0,600][1080,700]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Groceries", "[0,0][1080,100]")
                                       BUTTON("Sort order", "[0,100][1080,200]")
                                       TEXT("Milk $2.99", "[0,200][1080,300]")
                                       TEXT("Bread $3.49", "[0,300][1080,400]")
                                       BUTTON("Add item", "[0,400][1080,500]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Sam", "[0,0][1080,100]")
                                       N("TextView", "Can you delete the old photos?", "",
                                         "true", "[0,100][1080,200]")
                                       BUTTON("Reply", "[0,200][1080,300]"))), 0);
    /* CJK words in other words: an app called 支付宝 (Alipay), an ad saying 货到付款 */
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xe6\x94\xaf\xe4\xbb\x98\xe5\xae\x9d", "[0,0][9,9]")
                                       TEXT("\xe8\xb4\xa7\xe5\x88\xb0\xe4\xbb\x98\xe6\xac\xbe",
                                            "[0,9][9,19]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("\xe6\x94\xaf\xe4\xbb\x98", "[0,0][9,9]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Display", "[0,0][9,9]")
                                       TEXT("payload", "[0,9][9,19]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(N("Switch", "Bluetooth", "", "true", "[0,4][9,6]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN("")), 0);
}

/* Real apps' recorded screens (fixtures/snapshot: launchers, settings, chats,
 * feeds, a game, a bank's empty screen): none is a stop screen, and none
 * stops. */
TEST(safety_recorded_screens_pass)
{
    static const char *const names[] = {
        "001-nexuslauncher-home.xml", "002-samsung-launcher.xml", "004-vivo-launcher-cjk.xml",
        "008-settings-list.xml", "012-whatsapp-chat.xml", "014-wechat-cjk.xml",
        "019-google-messages.xml", "022-permission-dialog.xml", "024-share-sheet.xml",
        "028-webview-news-cjk-large.xml", "033-tiktok.xml",
        "037-instagram-profile-emoji-multiroot.xml", "043-vn-bank-empty.xml",
        "046-haoce-noheader-largest.xml", "054-philo-tv-pretty.xml"};
    const char *src = getenv("ADBC_SOURCE_DIR");
    CHECK(src != NULL);
    if (!src)
        return;
    agent_safety *s = NULL;
    ops_err e;
    CHECK(agent_safety_init(&s, NULL, 0, &e) == 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/fixtures/snapshot/%s", src, names[i]);
        adbc_ui_snap *snap = NULL;
        CHECK_EQ_INT(adbc_ui_snap_load(&snap, path), 0);
        char why[512] = "";
        int hit = agent_safety_check(s, snap, why, sizeof why);
        if (hit)
            fprintf(stderr, "%s stops: %s\n", names[i], why);
        CHECK_EQ_INT(hit, 0);
        adbc_ui_snap_free(snap);
    }
    agent_safety_free(s);
}

TEST(safety_own_list)
{
    static const char *const pats[] = {"re:delete .*forever", "send it", "button:archive",
                                       "package:com.example.bank"};
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("Delete these forever?", "[0,0][9,9]"))), 1);
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("Pay now", "[0,0][9,9]"))), 0); /* replaced */
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("please SEND&#9;IT now", "[0,0][9,9]"))), 1);
    CHECK_EQ_INT(stops(pats, 4, SCREEN(BUTTON("Archive", "[0,0][9,9]"))), 1);
    /* a label that is the words alone stops clickable or not (a view drawn as a button);
     * text that only begins with them does not */
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("Archive", "[0,0][9,9]"))), 1);
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("Archive old mail", "[0,0][9,9]"))), 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Pay", "[0,0][9,9]"))), 1);
    CHECK(strstr(last_why, "a label that says only \"pay\""));
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(N("View", "", "Buy", "false", "[0,0][9,9]"))), 1);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(TEXT("Pay rent", "[0,0][9,9]"))), 0);
    CHECK_EQ_INT(stops(pats, 4, SCREEN(TEXT("Hello", "[0,0][9,9]"))), 0);
    /* a bad expression is refused, naming the pattern */
    static const char *const bad[] = {"re:(unclosed"};
    agent_safety *s = NULL;
    ops_err e;
    CHECK(agent_safety_init(&s, bad, 1, &e) != 0);
    CHECK(e.code == OPS_EARG && strstr(e.msg, "(unclosed"));
    static const char *const empty[] = {""};
    CHECK(agent_safety_init(&s, empty, 1, &e) != 0);
    static const char *const blank[] = {"\xe2\x80\x8b "};
    CHECK(agent_safety_init(&s, blank, 1, &e) != 0);
    CHECK_EQ_INT(stops(NULL, 0, SCREEN(BUTTON("Buy now", "[0,0][9,9]"))), 1);
    CHECK(strstr(last_why, "\"buy now\"") && strstr(last_why, "\"Buy now\"") &&
          strstr(last_why, "read as: buy now"));
}

TEST(settings)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    CHECK_EQ_INT(c.max_steps, 15);
    CHECK_EQ_INT(c.hint_after, 3);
    CHECK_EQ_INT(c.back_after, 5);
    ops_err e;
    CHECK(ops_agent_set(&c, "max_steps", "50", &e) == 0 && c.max_steps == 50);
    CHECK(ops_agent_set(&c, "max_steps", "51", &e) != 0 && c.max_steps == 50);
    CHECK(strstr(e.msg, "1..50"));
    CHECK(ops_agent_set(&c, "max_steps", "0", &e) != 0);
    CHECK(ops_agent_set(&c, "max_steps", "7x", &e) != 0);
    CHECK(ops_agent_set(&c, "vision", "on", &e) == 0 && c.vision == 1);
    CHECK(ops_agent_set(&c, "vision", "maybe", &e) != 0);
    CHECK(ops_agent_set(&c, "nope", "1", &e) != 0 && strstr(e.msg, "max_steps"));
    CHECK(ops_agent_set(NULL, "max_steps", "1", &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_set(&c, NULL, "1", &e) != 0);
}

TEST(config_table)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    char err[256];
    ops_cfg_val v = {.type = OPS_CFG_INT, .i = 9};
    CHECK(ops_agent_cfg_value(&c, "back_after", &v, err, sizeof err) == 0 && c.back_after == 9);
    char **arr = calloc(2, sizeof *arr);
    CHECK(arr);
    arr[0] = strdup("pay");
    arr[1] = strdup("re:x+");
    ops_cfg_val a = {.type = OPS_CFG_ARR, .arr = arr, .n = 2};
    CHECK(ops_agent_cfg_value(&c, "patterns", &a, err, sizeof err) == 0);
    CHECK(a.arr == NULL && c.npatterns == 2 && strcmp(c.patterns[1], "re:x+") == 0);
    ops_cfg_val none = {.type = OPS_CFG_ARR};
    CHECK(ops_agent_cfg_value(&c, "patterns", &none, err, sizeof err) == 0);
    CHECK(c.patterns != NULL && c.npatterns == 0); /* [] : no stop at all */
    ops_cfg_val str = {.type = OPS_CFG_STR, .s = "R58"};
    CHECK(ops_agent_cfg_value(&c, "allowlist", &str, err, sizeof err) != 0);
    CHECK(ops_agent_cfg_value(&c, "max_stepz", &v, err, sizeof err) != 0);
    CHECK(strstr(err, "max_stepz"));
    ops_agent_config_free(&c);
}

TEST(run_refuses_before_starting)
{
    ops_agent_config c;
    ops_agent_config_init(&c);
    ops_agent_result r;
    ops_err e;
    ops_agent_device d = {0};
    CHECK(ops_agent_run(NULL, &c, &d, &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_run(&r, NULL, &d, &e) != 0 && e.code == OPS_EARG);
    CHECK(ops_agent_run(&r, &c, &d, NULL) != 0);
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "goal"));
    c.goal = "x";
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "model"));
    c.model = (struct ops_llm *)&c; /* never used: the device check fails first */
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "one device"));
    c.max_steps = 51;
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "max_steps"));
    c.max_steps = 5;
    c.back_after = 2; /* below hint_after */
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "back_after"));
    c.back_after = 5;
    c.goal = "\xff\xfe";
    CHECK(ops_agent_run(&r, &c, &d, &e) != 0 && strstr(e.msg, "UTF-8"));
}

TEST(call_checked_before_the_device)
{
    adbc_ui_snap *snap = NULL;
    static const char xml[] = "<hierarchy><node class=\"android.widget.Button\" text=\"A\" "
                              "clickable=\"true\" bounds=\"[0,0][10,10]\"/></hierarchy>";
    CHECK(adbc_ui_snap_parse(&snap, xml, sizeof xml - 1) == 0);
    ops_err e;
    cJSON *ok = cJSON_Parse("{\"ref\":1}"), *far = cJSON_Parse("{\"ref\":2}"),
          *frac = cJSON_Parse("{\"ref\":1.5}"), *done = cJSON_Parse("{\"answer\":\"a\"}"),
          *done_bad = cJSON_Parse("{\"answer\":\"a\",\"x\":1}");
    int r1 = agent_tool_check("tap", ok, snap, 0, &e);
    int r2 = agent_tool_check("tap", far, snap, 0, &e);
    int code2 = e.code;
    int r3 = agent_tool_check("tap", frac, snap, 0, &e);
    int r4 = agent_tool_check("shell", ok, snap, 0, &e);
    int r5 = agent_tool_check("done", done, snap, 0, &e);
    int r6 = agent_tool_check("done", done_bad, snap, 0, &e);
    int r7 = agent_tool_check(NULL, ok, snap, 0, &e);
    int r8 = agent_tool_check("install_apk", ok, snap, 1, &e);
    cJSON_Delete(ok);
    cJSON_Delete(far);
    cJSON_Delete(frac);
    cJSON_Delete(done);
    cJSON_Delete(done_bad);
    adbc_ui_snap_free(snap);
    CHECK(r1 == 0);
    CHECK(r2 != 0 && code2 == OPS_ENOREF);
    CHECK(r3 != 0);
    CHECK(r4 != 0); /* no shell unless allowed */
    CHECK(r5 == 0);
    CHECK(r6 != 0);
    CHECK(r7 != 0);
    CHECK(r8 != 0); /* not in the agent's subset, shell allowed or not */
}

TEST(json_forms)
{
    ops_agent_step s = {.index = 2, .observation = "o", .hint = "", .reasoning = "r",
                        .action = "tap", .args = "{\"ref\":1}", .ok = 1, .result = "done",
                        .screen_changed = -1, .total_ms = 5};
    cJSON *j = ops_agent_step_json(&s);
    CHECK(j);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    CHECK(t);
    int good = strstr(t, "\"args\":{\"ref\":1}") && !strstr(t, "screen_changed") &&
               strstr(t, "\"total\":5");
    free(t);
    CHECK(good);
    ops_agent_result r = {.end = OPS_AGENT_SAFETY_STOP, .steps = 1};
    snprintf(r.reason, sizeof r.reason, "why");
    j = ops_agent_result_json(&r);
    CHECK(j);
    t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    good = t && strstr(t, "\"end\":\"safety_stop\"") && strstr(t, "\"reason\":\"why\"") &&
           !strstr(t, "answer");
    free(t);
    CHECK(good);
    CHECK(ops_agent_step_json(NULL) == NULL && ops_agent_result_json(NULL) == NULL);
    CHECK_STR(ops_agent_end_name(OPS_AGENT_MAX_STEPS), "max_steps");
}

int main(void)
{
    RUN(safety_normaliser);
    RUN(safety_real_screens_stop);
    RUN(safety_evasions_stop);
    RUN(safety_world_screens);
    RUN(safety_ordinary_screens_pass);
    RUN(safety_recorded_screens_pass);
    RUN(safety_own_list);
    RUN(settings);
    RUN(config_table);
    RUN(run_refuses_before_starting);
    RUN(call_checked_before_the_device);
    RUN(json_forms);
    return T_DONE();
}
