"""Error-code reference chunks (order, payment, shipping, account and app errors) of the fictional Kestrel
online store and apps. One chunk per code: (code, short title, what it means and what to do)."""

ERRORS = [
    ("ORDER-2001", "Cart expired",
     "Items are reserved in the cart for 60 minutes. After that the reservation is released and checkout fails with "
     "ORDER-2001. Reload the cart; items still in stock are reserved again."),
    ("ORDER-2003", "Item out of stock",
     "One item in the order sold out between adding it to the cart and paying. Remove the item or choose Notify me. "
     "No payment has been taken."),
    ("ORDER-2007", "Quantity limit exceeded",
     "The product has a per-customer limit (usually 2 units for new releases and 5 for other items). Reduce the "
     "quantity. Business customers can order larger quantities through Kestrel Business."),
    ("ORDER-2011", "Shipping address could not be verified",
     "The postcode, city and street do not match. Check the spelling and the postcode; for new buildings choose "
     "Use address anyway. Parcel lockers must be selected as a pickup point, not typed as an address."),
    ("ORDER-2012", "Delivery not available to this region",
     "We cannot deliver the item to the selected country or region, often because of battery shipping rules or "
     "plug types. Buy from the Kestrel store of the destination country instead."),
    ("ORDER-2015", "Coupon not valid for this order",
     "The coupon does not apply to the items in the cart, or the minimum order value was not reached. Coupons cannot "
     "be combined with other coupons or with Kestrel Plus member prices."),
    ("ORDER-2016", "Coupon expired",
     "The coupon's validity period has ended. Expired coupons cannot be extended; support can check whether a "
     "replacement campaign is running."),
    ("ORDER-2019", "Order total changed",
     "The price or the shipping cost changed while you were checking out, so the total no longer matches what you "
     "confirmed. Review the new total and confirm the order again. You are never charged the old amount."),
    ("ORDER-2021", "Possible duplicate order",
     "An order with the same items and address was placed in the last 10 minutes. Check Orders before confirming; "
     "choose Place order anyway if you really want a second order."),
    ("ORDER-2024", "Order on hold for verification",
     "The payment was authorised but the order was put on hold by our fraud-prevention checks, for example because "
     "the billing and shipping addresses differ or the order value is unusually high. We e-mail you within 24 hours "
     "and may ask for identity verification. Do not place the order again: the hold is released automatically once "
     "the check is passed, and cancelled orders are refunded in full."),
    ("ORDER-2025", "Order can no longer be changed",
     "The order is already being packed, so the address and items can no longer be changed. Cancel is not possible "
     "either; refuse the delivery or return the item after it arrives."),
    ("ORDER-2028", "Gift card balance too low",
     "The gift card does not cover the order total. Add a second payment method for the rest, or remove items. "
     "Up to three gift cards can be used on one order."),
    ("ORDER-2030", "Pre-order limit reached",
     "Pre-orders are limited to one unit per customer and product. The pre-order will ship on the release date "
     "shown on the product page; you are charged when it ships."),
    ("ORDER-2033", "Tax could not be calculated",
     "Sales tax or VAT could not be calculated for the address, usually because the postcode is incomplete. Enter "
     "the full postcode. For tax-exempt purchases, use a Kestrel Business account with a verified exemption."),
    ("ORDER-2034", "Invoice no longer available for change",
     "Invoices can be corrected or reissued with a different company name only within 90 days of the order date. "
     "After that, support can provide a copy of the original invoice but cannot change it."),
    ("PAY-3101", "Card declined by the issuer",
     "Your bank declined the payment without giving a reason to us. Check the card details, or contact your bank; "
     "many banks decline online payments abroad or above a daily limit. Try another card or payment method."),
    ("PAY-3102", "Payment timed out",
     "The payment provider did not confirm the payment within 15 minutes, so the checkout was stopped. If money was "
     "reserved on your account, the reservation is released automatically within 3 to 5 business days. Place the "
     "order again; do not use the browser back button during payment."),
    ("PAY-3104", "3-D Secure authentication failed",
     "The bank's security check (3-D Secure, for example a code by SMS or approval in the banking app) failed or was "
     "not completed in time. Make sure your banking app is up to date and approve the payment within 5 minutes."),
    ("PAY-3105", "Card expired",
     "The card's expiry date has passed. Update the card in Account > Payment methods or use another card."),
    ("PAY-3107", "Currency not supported",
     "The card cannot be charged in the currency of this store. Use the Kestrel store of your country, or a card "
     "that supports foreign-currency payments."),
    ("PAY-3110", "Insufficient funds",
     "The bank declined the payment because the available balance or credit limit is too low. No order was created."),
    ("PAY-3112", "Alipay or WeChat Pay payment cancelled",
     "The payment was cancelled in the Alipay or WeChat Pay app, or the QR code expired after 5 minutes. Start the "
     "payment again from the order page within 30 minutes, or the order is cancelled automatically."),
    ("PAY-3115", "Instalments not available",
     "Paying in instalments is available only for orders between USD 150 and USD 5,000 and for customers who passed "
     "the credit check of our instalment partner. Choose another payment method."),
    ("PAY-3120", "Refund to card failed",
     "The refund could not be sent to the original card, usually because the card was cancelled. Support will "
     "contact you to refund by bank transfer or store credit."),
    ("PAY-3121", "Payment method not allowed for business orders",
     "Kestrel Business orders can be paid by invoice, company card or bank transfer. Personal wallets such as PayPal "
     "cannot be used on a business account."),
    ("SHIP-4001", "Tracking not yet available",
     "The parcel has been handed to the carrier but the carrier has not scanned it yet. Tracking usually appears "
     "within 24 hours of the shipping e-mail."),
    ("SHIP-4003", "Address undeliverable",
     "The carrier could not find the address. The parcel returns to our warehouse and you are refunded, or you can "
     "ask support to resend it to a corrected address within 5 days."),
    ("SHIP-4005", "Parcel held at customs",
     "The parcel is held by customs in the destination country. You may be asked for an ID number or to pay import "
     "duties. Follow the instructions in the carrier's message; parcels not cleared within 14 days are returned."),
    ("SHIP-4008", "Delivery attempt failed",
     "Nobody was available to receive the parcel. The carrier tries again the next working day, then leaves it at a "
     "pickup point for 7 days. Reschedule the delivery from the tracking page."),
    ("SHIP-4010", "Parcel lost",
     "The carrier has confirmed that the parcel is lost. We send a replacement free of charge, or refund you in full "
     "if the item is out of stock. You do not need to file a claim with the carrier."),
    ("SHIP-4012", "Pickup point full",
     "The selected pickup point or locker cannot accept more parcels. The carrier delivers to the nearest "
     "alternative pickup point and sends you its address."),
    ("SHIP-4014", "Signature required",
     "Orders above USD 800 need a signature on delivery and cannot be left at the door or with a neighbour."),
    ("ACCT-5001", "E-mail address already registered",
     "An account with this e-mail address already exists. Sign in instead, or use Forgot password to regain access."),
    ("ACCT-5002", "Verification code expired",
     "Verification codes sent by e-mail or SMS are valid for 10 minutes. Request a new code; the old one no longer "
     "works."),
    ("ACCT-5004", "Account temporarily locked",
     "After 5 failed sign-in attempts the account is locked for 30 minutes to protect it. Wait, or reset the password "
     "to unlock it immediately."),
    ("ACCT-5006", "Phone number already linked",
     "The mobile number is linked to another Kestrel account. Remove it from the other account first, or contact "
     "support if you no longer have access to it."),
    ("ACCT-5009", "Account deletion pending",
     "You asked to delete the account. It is deleted after a 14-day waiting period; sign in before then to cancel "
     "the deletion."),
    ("ACCT-5011", "Account belongs to another region",
     "Accounts are tied to the region where they were created. Use the Kestrel store of that region, or create a "
     "new account for this region."),
    ("ACCT-5013", "Minimum age",
     "You must be at least 16 years old to create a Kestrel account."),
    ("APP-6001", "Device offline",
     "The Kestrel Home app cannot reach the device. Check that the device has power and that your Wi-Fi works; "
     "restart the device. Devices support 2.4 GHz Wi-Fi only unless the manual says otherwise."),
    ("APP-6002", "Pairing failed",
     "The device could not join your Wi-Fi network during setup. Move the phone and the device closer to the router, "
     "check the Wi-Fi password, and turn off VPN apps on the phone during pairing."),
    ("APP-6004", "Firmware update failed",
     "The firmware update did not complete. The device keeps working with the old version; retry the update with a "
     "stable Wi-Fi connection and do not unplug the device while the update runs."),
    ("APP-6007", "Device already bound to another account",
     "The device is still registered to another Kestrel account. The previous owner must remove it in the app, or "
     "you can factory-reset the device and send the proof of purchase to support."),
    ("APP-6009", "Cloud region not available",
     "The app is connected to a cloud region that does not serve your country. Sign out, select the correct region "
     "on the sign-in screen and sign in again."),
]

ERRORS_ZH = [
    ("err-zh-ORDER-2024", "错误码 ORDER-2024：订单审核中",
     "付款已授权，但订单触发了风控审核，例如收货地址与账单地址不一致或订单金额异常。我们会在24小时内通过邮件或短信"
     "联系您，可能需要核验身份。请不要重复下单，审核通过后订单会自动恢复；审核未通过而取消的订单会全额退款。"),
    ("err-zh-PAY-3102", "错误码 PAY-3102：支付超时",
     "支付渠道在15分钟内没有返回支付结果，结算已中止。如果账户中的款项被冻结，将在3至5个工作日内自动解冻。"
     "请重新下单，支付过程中不要点击浏览器的返回按钮。"),
    ("err-zh-PAY-3112", "错误码 PAY-3112：支付宝或微信支付已取消",
     "在支付宝或微信中取消了付款，或者二维码超过5分钟已失效。请在30分钟内从订单页面重新发起支付，否则订单将自动取消。"),
    ("err-zh-SHIP-4005", "错误码 SHIP-4005：包裹海关查验",
     "包裹在目的国海关被查验，可能需要提供身份证号码或缴纳进口关税。请按照快递公司短信中的指引处理，14天内未清关的"
     "包裹将被退回。"),
    ("err-zh-ACCT-5004", "错误码 ACCT-5004：账号暂时锁定",
     "连续5次登录失败后，账号将被锁定30分钟。请稍后再试，或通过重置密码立即解锁。"),
    ("err-zh-APP-6001", "错误码 APP-6001：设备离线",
     "Kestrel Home App 无法连接设备。请检查设备是否通电、家中Wi-Fi是否正常，并重启设备。除说明书另有说明外，"
     "设备仅支持2.4GHz Wi-Fi。"),
]


def error_chunks():
    """(doc_id, title, text) for every error code."""
    out = [(f"err-{code}", f"Error {code}: {title}", f"Error {code} - {title}. {text}") for code, title, text in ERRORS]
    return out + ERRORS_ZH
