"""Handbook chunks of Kestrel Home Electronics (a fictional company): travel and expenses, refunds and
returns, support hours, IT. Written for evalops' sample knowledge base. Each entry: (doc_id, title, text).
"""

TRAVEL_EN = [
    ("travel-01", "Travel policy: scope and who approves a trip",
     "This policy covers business travel by all Kestrel employees and contractors travelling on Kestrel's behalf. "
     "Every trip needs approval before anything is booked: your line manager approves domestic trips, and trips "
     "abroad also need the approval of your department head. Submit the request in TripDesk at least 10 working "
     "days before departure so that visas and insurance can be arranged."),
    ("travel-02", "Booking flights: cabin class by flight duration",
     "Book the lowest logical fare in economy class for flights up to 6 hours. Premium economy is allowed when the "
     "scheduled flight time of a single leg is more than 6 hours. Business class is allowed only for legs longer "
     "than 10 hours and needs the written approval of a vice president. Connecting flights that save more than "
     "USD 200 against a direct flight must be chosen when they add less than 3 hours."),
    ("travel-03", "Booking flights: where and when to book",
     "Book all flights through TripDesk, the company travel portal, so that the trip is covered by our travel "
     "insurance and duty-of-care tracking. Book at least 14 days ahead where possible. Tickets bought outside "
     "TripDesk are reimbursed only if they are cheaper than the TripDesk fare for the same itinerary on the "
     "same day; attach a screenshot of both prices to the expense claim."),
    ("travel-04", "Hotels: nightly limits by city tier",
     "Hotel costs are reimbursed up to a nightly limit that depends on the city. Tier 1 cities (London, New York, "
     "San Francisco, Tokyo, Zurich, Hong Kong): up to USD 260 per night. Tier 2 cities (Berlin, Shanghai, Beijing, "
     "Singapore, Sydney, Toronto): up to USD 200. All other cities: up to USD 150. Limits are per room per night "
     "before taxes. Amounts above the limit are paid by the traveller unless the hotel is the conference venue."),
    ("travel-05", "Hotels: booking rules and exceptions",
     "Book hotels through TripDesk or use a preferred hotel from the list on the intranet. Standard rooms only; "
     "suites and upgrades are personal expenses. When no room under the limit is available within 5 km of the "
     "meeting place, your manager can approve an exception in TripDesk before you book. Stays with friends or "
     "family are not reimbursed as lodging, but you may claim a thank-you gift of up to USD 40 per trip."),
    ("travel-06", "Meals and per diem rates",
     "Meals during business travel are covered by a daily allowance (per diem) instead of receipts. Domestic "
     "travel: USD 60 per full day. International travel: USD 75 per full day, USD 90 in Tier 1 cities. On the day "
     "of departure and the day of return you receive 75% of the rate. Meals paid by the company, a client or a "
     "conference are deducted: breakfast 15%, lunch 30%, dinner 55% of the daily rate."),
    ("travel-07", "Client entertainment",
     "Meals with clients or partners are reimbursed at cost, up to USD 120 per person including tax and tip, when "
     "the business purpose and the names and companies of all guests are recorded on the claim. Entertainment "
     "above that amount, or for government officials of any amount, needs prior approval from Legal and Finance. "
     "Entertainment of employees only is not client entertainment; see the team events policy."),
    ("travel-08", "Alcohol",
     "Alcohol is reimbursed only as part of a client entertainment meal and only in moderation. Alcohol on a "
     "personal meal, in a hotel minibar or on a flight is not reimbursed and is not covered by the per diem rate. "
     "Reviewers reject claims where alcohol is not itemised on the receipt."),
    ("travel-09", "Taxis, ride-hailing and public transport",
     "Use public transport or the airport train where it is practical. Taxis and ride-hailing services (such as "
     "Uber, Lyft or DiDi) are reimbursed for business trips, airport transfers and travel between 22:00 and 06:00. "
     "Premium ride categories (black car, business van) are not reimbursed unless three or more colleagues share "
     "the ride. Keep the electronic receipt showing the route."),
    ("travel-10", "Rental cars",
     "Rent a car only when it is cheaper than taxis or public transport for the trip, or when you carry equipment. "
     "Book a compact or intermediate car through TripDesk; the rate includes collision damage waiver and liability "
     "insurance, so decline the extra insurance at the counter. Refuel before returning the car: refuelling charges "
     "of the rental company are not reimbursed."),
    ("travel-11", "Using your own car: mileage rate",
     "When you drive your own car on company business you can claim a mileage allowance of USD 0.58 per mile "
     "(EUR 0.30 per kilometre in Europe). The allowance covers fuel, wear and insurance; parking and tolls are "
     "claimed separately with receipts. Commuting between home and your usual office is never business mileage. "
     "Record the start, destination and purpose of each journey in the claim."),
    ("travel-12", "Receipts: what you need to keep",
     "Attach an itemised receipt for every expense of USD 25 or more, and for every hotel stay and flight, whatever "
     "the amount. A credit card slip alone is not a receipt. Photos taken with the Expensa mobile app are accepted; "
     "keep paper originals for 90 days in case of an audit. In mainland China an official fapiao is required (see "
     "the Chinese section of this policy)."),
    ("travel-13", "Lost or missing receipts",
     "If a receipt is lost, complete the missing-receipt declaration in Expensa, describing the date, the vendor, "
     "the amount and the business purpose. Your manager must approve the declaration. You can use a declaration "
     "at most three times in a calendar year and never for amounts above USD 300; above that, ask the vendor for "
     "a duplicate receipt."),
    ("travel-14", "Submitting an expense claim",
     "Submit expense claims in Expensa within 30 days after the end of the trip. Group the expenses of one trip in "
     "one report and link it to the TripDesk trip number. Your manager approves the report, then Finance reviews "
     "it; approved claims are paid with the next payroll run or by bank transfer within 10 working days."),
    ("travel-15", "Late expense claims",
     "Claims submitted more than 30 days after the trip need a written explanation and the approval of your "
     "department head. Claims submitted more than 90 days after the expense are not reimbursed, except when the "
     "delay was caused by the company. At the end of the financial year (31 December) all open expenses must be "
     "submitted by 10 January."),
    ("travel-16", "Corporate card",
     "Employees who travel more than four times a year receive a Kestrel corporate card. Use it for all business "
     "travel and entertainment expenses; cash advances from an ATM are allowed only abroad and only up to USD 300 "
     "per trip. Never use the card for personal purchases, even if you intend to pay the amount back. Report a lost "
     "card to the card issuer immediately and to Finance within one working day."),
    ("travel-17", "Personal expenses that are never reimbursed",
     "The following are personal and never reimbursed: upgrades, minibar, in-room movies, gym or spa fees, "
     "laundry on trips shorter than six nights, fines and parking tickets, lost luggage you did not declare, "
     "travel for family members, pet care, and loyalty-programme fees. Expenses of a personal extension of a "
     "business trip are personal too."),
    ("travel-18", "Combining business and personal travel",
     "You may add personal days to a business trip when the additional cost to Kestrel is zero: book the flight "
     "with the personal dates only if the fare is not higher than the fare for the business dates, and attach both "
     "quotes. Hotel nights, meals and transport on personal days are your own. Travel insurance covers the "
     "personal days only for trips of up to 14 days in total."),
    ("travel-19", "Visas, vaccinations and passports",
     "Kestrel pays visa fees, the cost of a visa service where the embassy requires one, and required "
     "vaccinations for business travel. A second passport is reimbursed when your travel pattern requires it "
     "(for example, pending visa applications). Passport renewals are personal unless the passport was filled "
     "with business travel stamps."),
    ("travel-20", "Travel insurance and medical emergencies",
     "All trips booked through TripDesk are covered by the company's travel insurance, including medical "
     "treatment abroad, repatriation, and lost luggage up to USD 2,500. In a medical emergency call the assistance "
     "number on the back of your insurance card, available 24 hours a day. Keep all medical bills; the insurer "
     "reimburses them directly."),
    ("travel-21", "Cancelled or changed trips",
     "When a trip is cancelled or changed for business reasons, Kestrel pays the cancellation and change fees. "
     "Cancel through TripDesk so that refundable fares are refunded to the company. Fees caused by a personal "
     "change of plans are paid by the traveller unless the reason is illness or a family emergency."),
    ("travel-22", "Conference registrations",
     "Conference and training registration fees are paid by the team's training budget and need the approval of "
     "your manager before registering. Use early-bird rates where possible. Paid dinners and social events of the "
     "conference are included; extra paid workshops need their own approval."),
    ("travel-23", "Internet, phone and roaming",
     "Hotel Wi-Fi and in-flight Wi-Fi for work are reimbursed. Company phones have an international roaming "
     "package; turn it on in the MyPhone portal before you leave. Roaming charges on a personal phone are "
     "reimbursed only for business calls itemised on the bill."),
    ("travel-24", "Tips and gratuities",
     "Tips for taxis, hotel porters and restaurant service are reimbursed up to the customary local rate, at most "
     "20% of the bill. Tips are included in the per diem rate for your own meals and cannot be claimed separately. "
     "Record cash tips without a receipt in the claim with a short description."),
    ("travel-25", "Currency and exchange rates",
     "Enter foreign expenses in the currency of the receipt. Expensa converts them using the exchange rate of "
     "the transaction date. For card payments you may instead use the rate on your card statement; attach the "
     "statement line. Bank fees for cash withdrawals abroad on the corporate card are reimbursed."),
    ("travel-26", "Travel advances",
     "Employees without a corporate card can request a travel advance of up to 80% of the estimated trip costs in "
     "TripDesk, at least 7 days before departure. The advance is settled against your expense claim; any amount "
     "not used must be paid back within 30 days after the trip."),
    ("travel-27", "Frequent-flyer points and hotel loyalty programmes",
     "You may keep frequent-flyer miles and hotel points earned on business travel, but loyalty preferences must "
     "never influence your choice of airline or hotel when it raises the cost. Upgrades paid with your own points "
     "are allowed."),
    ("travel-28", "Travel safety and high-risk destinations",
     "Trips to destinations rated high or extreme risk by our security provider need the approval of the Chief "
     "Operating Officer and a security briefing before departure. TripDesk shows the risk rating when you book. "
     "Register your mobile number in TripDesk so that the security team can reach you during an incident."),
    ("travel-29", "Expense audits",
     "Finance audits a random sample of expense claims every month and all claims above USD 5,000. You may be asked "
     "for original receipts or further explanation; answer within 10 working days. Incorrect claims are "
     "deducted from future payments, and deliberate false claims are treated as misconduct."),
]

TRAVEL_ZH = [
    ("travel-zh-01", "差旅政策：出差审批",
     "所有出差在预订机票和酒店之前都必须先获得审批。国内出差由直属经理审批，出境出差还需要部门负责人审批。"
     "请至少在出发前10个工作日在 TripDesk 提交出差申请，以便办理签证和保险。"),
    ("travel-zh-02", "差旅政策：机票舱位标准",
     "单程飞行时间不超过6小时的航班只能预订经济舱，并选择最低的合理票价。单段航程超过6小时可以预订超级经济舱。"
     "单段超过10小时才可以预订公务舱，而且需要副总裁书面批准。"),
    ("travel-zh-03", "差旅政策：酒店住宿标准",
     "酒店费用按城市等级设置每晚上限。一类城市（伦敦、纽约、东京、香港等）每晚不超过260美元；二类城市（上海、北京、"
     "柏林、新加坡等）每晚不超过200美元；其他城市每晚不超过150美元。上限为每间每晚的税前房价，超出部分由员工自行承担。"),
    ("travel-zh-04", "差旅政策：餐补（每日补贴）",
     "出差期间的餐费按每日补贴标准发放，无需提供餐费发票。国内出差每天60美元（中国大陆按人民币300元/天执行），"
     "国际出差每天75美元，一类城市每天90美元。出发日和返回日按75%发放。公司或客户已经提供的餐食需要按比例扣除。"),
    ("travel-zh-05", "报销凭证：发票（增值税发票）要求",
     "在中国大陆发生的费用必须取得正规发票，抬头为“凯斯翠电子（上海）有限公司”，并填写正确的纳税人识别号。"
     "收据、小票或手写单据不能代替发票。电子发票请下载PDF版本上传到 Expensa，不要只上传截图。"),
    ("travel-zh-06", "报销凭证：发票丢失怎么办",
     "发票丢失时，请先联系开票方申请重开或提供发票复印件并加盖发票专用章。无法补开的，可以在 Expensa 填写"
     "《遗失凭证说明》，由经理审批。每个自然年最多使用三次，单笔金额不得超过人民币2000元。"),
    ("travel-zh-07", "费用报销的提交时限",
     "请在出差结束后30天内通过 Expensa 提交报销单，并关联 TripDesk 的行程编号。超过30天需要书面说明并由部门负责人"
     "审批；费用发生超过90天的报销申请不予受理。年底（12月31日）前发生的费用须在次年1月10日前提交。"),
    ("travel-zh-08", "市内交通：出租车与网约车",
     "出差期间请优先乘坐地铁、机场快线等公共交通。因公务、往返机场或在22:00至次日06:00之间乘坐出租车或网约车"
     "（如滴滴）可以报销，须保留显示行程路线的电子发票。专车、豪华车型不予报销，三人及以上同行拼车除外。"),
    ("travel-zh-09", "私车公用的里程补贴",
     "因公使用私家车可按每公里人民币1.2元申请里程补贴，补贴已包含油费、车辆损耗和保险。停车费和过路费凭发票另行报销。"
     "上下班通勤不属于公务里程。报销时请写明出发地、目的地和事由。"),
    ("travel-zh-10", "公司信用卡（商务卡）使用规定",
     "每年出差超过四次的员工可以申领公司商务卡，用于差旅和业务招待费用。境外可以提取现金，每次出差不超过300美元。"
     "严禁用商务卡支付任何个人消费。卡片丢失请立即致电发卡银行挂失，并在一个工作日内告知财务部。"),
    ("travel-zh-11", "不予报销的个人费用",
     "以下费用属于个人费用，一律不予报销：升舱、迷你吧、付费电影、健身或水疗、六晚以下出差的洗衣费、罚款和违章停车、"
     "家属随行费用、宠物寄养以及会员费。出差期间顺延的私人行程所产生的费用也由个人承担。"),
    ("travel-zh-12", "业务招待费标准",
     "宴请客户或合作伙伴的餐费按实际发生额报销，每人不超过120美元（含税和服务费），报销单上须写明招待事由以及"
     "所有客人的姓名和单位。超过标准或招待政府官员的，无论金额大小，均须事先获得法务部和财务部批准。"),
    ("travel-zh-13", "出差期间的通讯费用",
     "出差期间因工作产生的酒店网络费和机上Wi-Fi费用可以报销。公司手机开通了国际漫游套餐，出发前请在 MyPhone 门户中开启。"
     "个人手机产生的漫游费用只报销账单中列明的公务通话部分。"),
    ("travel-zh-14", "差旅保险与紧急医疗",
     "通过 TripDesk 预订的行程都包含公司差旅保险，涵盖境外医疗、紧急转运和最高2500美元的行李丢失。"
     "遇到紧急医疗情况，请拨打保险卡背面的24小时救援电话，并保留所有医疗单据。"),
]

REFUNDS_EN = [
    ("refund-01", "Returns: the 30-day return window",
     "Most Kestrel products bought from kestrel.com or a Kestrel store can be returned within 30 days of delivery "
     "for a full refund. The product must be complete, with all accessories, manuals and the original packaging. "
     "Start a return in your account under Orders > Return an item, or contact customer support with your order "
     "number."),
    ("refund-02", "Opened electronics and the restocking fee",
     "Opened electronics returned without a defect within the return window are refunded minus a 15% restocking "
     "fee. The fee is waived for defective products, for items that were never opened (seal intact), and for "
     "members of Kestrel Plus. Headphones and earbuds can be returned only if the hygiene seal is intact."),
    ("refund-03", "How long a refund takes",
     "Once the returned item arrives at our warehouse we inspect it within 3 working days. Approved refunds go back "
     "to the original payment method: credit and debit cards take 5 to 10 business days, PayPal 3 to 5 days, "
     "Alipay and WeChat Pay 1 to 3 days. Store credit is available immediately. You receive an e-mail when the "
     "refund is issued."),
    ("refund-04", "Return shipping costs",
     "Returns of defective or wrongly delivered items are free: we e-mail you a prepaid return label. For other "
     "returns a return shipping fee of USD 6.95 is deducted from the refund, or you can drop the parcel at a Kestrel "
     "store for free. Large items such as the RoboSweep RS-60 are collected by our courier for USD 19."),
    ("refund-05", "Items that cannot be returned",
     "The following cannot be returned unless they are defective: gift cards, downloadable software and licence "
     "keys once activated, products engraved or customised to order, consumables that were opened (filters, "
     "descaling tablets, cleaning kits), and items bought in a clearance sale marked final sale."),
    ("refund-06", "Damaged or faulty on arrival",
     "If a product arrives damaged or does not work out of the box, report it within 7 days of delivery with photos "
     "of the product and the packaging. We send a replacement at no cost, or refund you in full including the "
     "original shipping charge. You do not need to pay for the return."),
    ("refund-07", "Exchanges",
     "To exchange an item for another colour or model, return the original and place a new order; this is faster "
     "than a direct exchange and keeps the current price. Exchanges for the same model because of a defect are "
     "handled as warranty replacements."),
    ("refund-08", "Returning a gift",
     "Gifts can be returned within 30 days of delivery with the order number or the gift receipt. The refund is "
     "issued as store credit to the person returning the gift, and the buyer is not told. Gifts bought during the "
     "holiday season follow the extended holiday return period."),
    ("refund-09", "Holiday extended return period",
     "Products bought between 1 November and 24 December can be returned until 31 January of the following year. "
     "All other return conditions, including the restocking fee for opened electronics, still apply."),
    ("refund-10", "Price adjustment after a price drop",
     "If the price of a product you bought on kestrel.com drops within 14 days of delivery, we refund the difference "
     "once per order. Ask customer support with your order number. Price adjustments do not apply to flash sales, "
     "coupons, or prices of other retailers."),
    ("refund-11", "Partial refunds",
     "A partial refund is issued when a returned product is missing accessories, shows damage that was not there on "
     "delivery, or is returned after the return window with our agreement. The deduction is explained in the refund "
     "e-mail. You can instead ask us to send the item back to you at your cost."),
    ("refund-12", "Returning part of a bundle",
     "Items bought as a bundle at a bundle discount must be returned together for a full refund. If you return only "
     "part of a bundle, the refund is the price of the returned item minus its share of the bundle discount."),
    ("refund-13", "Refund to an expired or cancelled card",
     "If the card you paid with has expired or been cancelled, the refund is normally forwarded to the new card by "
     "your bank. If your bank rejects it, we contact you and issue the refund by bank transfer or store credit, at "
     "your choice, within 5 working days."),
    ("refund-14", "Store credit",
     "Store credit never expires and can be used on kestrel.com and in Kestrel stores. It cannot be exchanged for "
     "cash or transferred to another account. Unused store credit from a return is refunded to the original payment "
     "method on request within 12 months."),
    ("refund-15", "Subscription cancellation and refunds",
     "Kestrel Plus and the filter subscription can be cancelled at any time in your account. Annual plans are "
     "refunded pro rata for the full months left; monthly plans stop at the end of the current month and are not "
     "refunded. Cancelling within 14 days of the first payment gives a full refund."),
    ("refund-16", "Chargebacks and payment disputes",
     "Please contact us before opening a dispute with your bank: most problems are solved faster directly. If a "
     "chargeback is opened, the order is frozen until the bank decides, and any refund we issue in parallel is "
     "reversed to avoid paying twice."),
    ("refund-17", "International returns",
     "Orders delivered outside the country of purchase can be returned only through the Kestrel store of the country "
     "where you bought them. Customs duties and import taxes paid on delivery are refunded only for defective items, "
     "and only with the customs receipt."),
    ("refund-18", "Warranty claims are not returns",
     "After the return window, a defect is handled under the product warranty, not as a return: the product is "
     "repaired or replaced, not refunded. See the warranty section of the product manual for the warranty period of "
     "your model."),
    ("refund-19", "Missing parts or accessories",
     "If a part or accessory is missing from a new product, contact support within 30 days of delivery. We ship the "
     "missing part free of charge; you do not need to return the product."),
    ("refund-20", "Returns bought in a store",
     "Products bought in a Kestrel store can be returned in any Kestrel store of the same country with the receipt. "
     "Card payments are refunded to the same card; cash payments up to USD 500 are refunded in cash, above that by "
     "bank transfer."),
    ("refund-21", "Order cancellation before shipping",
     "An order can be cancelled free of charge until it is shipped: open the order and choose Cancel order. Once the "
     "status is Shipped, cancelling is no longer possible; refuse the delivery or return the parcel instead."),
    ("refund-22", "Returns for business customers",
     "Business customers buying through Kestrel Business have a 14-day return window for unopened products and no "
     "restocking fee on defective items. Returns are credited to the business account on the next invoice."),
]

REFUNDS_ZH = [
    ("refund-zh-01", "七天无理由退货（中国大陆）",
     "在中国大陆通过凯斯翠官方商城或天猫旗舰店购买的商品，自签收之日起7天内享受无理由退货。商品须保持完好，配件、"
     "说明书和包装齐全。已拆封的耳机因卫生原因不支持无理由退货。"),
    ("refund-zh-02", "退货运费由谁承担",
     "因质量问题或发错货产生的退货，运费由凯斯翠承担，我们会提供免费上门取件。七天无理由退货的运费由消费者承担，"
     "购买了运费险的订单由保险公司赔付。"),
    ("refund-zh-03", "退款到账时间",
     "仓库收到退货后3个工作日内完成检验。审核通过后原路退款：支付宝和微信支付1至3个工作日到账，银行卡5至10个工作日"
     "到账，花呗退款会恢复相应额度。退款成功后会发送短信通知。"),
    ("refund-zh-04", "15天质量问题换货",
     "签收后15天内出现性能故障，可以选择换货或维修。请在商城“我的订单”中提交售后申请并上传故障照片或视频，"
     "经检测确认为质量问题后为您更换同型号新品。"),
    ("refund-zh-05", "发票与退货",
     "申请退货时需要一并退回纸质发票；已开具电子发票的订单，退款完成后系统会自动冲红。部分退货时将按实际成交金额"
     "重新开具发票。"),
    ("refund-zh-06", "不支持退货的商品",
     "以下商品除质量问题外不支持退货：礼品卡、已激活的软件和激活码、定制或刻字商品、已拆封的耗材（滤网、除垢片、"
     "清洁套装）以及标注“清仓不退换”的商品。"),
    ("refund-zh-07", "签收时发现商品损坏",
     "签收时发现外包装破损或商品损坏，请当场拒收或在签收后48小时内联系客服，并提供商品和包装的照片。我们会免费补发"
     "或全额退款（含运费）。"),
    ("refund-zh-08", "价格保护",
     "在凯斯翠官方商城购买的商品，签收后7天内如遇官方降价，可申请退还差价，每个订单限一次。秒杀、优惠券和其他平台"
     "的价格不在价格保护范围内。"),
    ("refund-zh-09", "取消订单",
     "订单在发货前可以免费取消。订单状态变为“已发货”后无法取消，请拒收包裹或在签收后申请退货。"),
    ("refund-zh-10", "以旧换新补贴退货",
     "参加以旧换新活动的订单退货时，旧机不予退回，已发放的以旧换新补贴将从退款金额中扣除。"),
]

SUPPORT_EN = [
    ("support-01", "Customer support hours: Americas",
     "Phone and chat support for customers in North and South America is open Monday to Friday from 8:00 to 20:00 "
     "Eastern Time and Saturday from 9:00 to 17:00 Eastern Time. Support is closed on Sundays and on US public "
     "holidays. Call 1-800-555-0142 (toll-free in the US and Canada)."),
    ("support-02", "Customer support hours: Europe, Middle East and Africa",
     "EMEA phone and chat support is open Monday to Friday from 8:00 to 18:00 Central European Time. English, "
     "German and French are available on all lines; Spanish and Italian from 9:00 to 17:00. Support is closed at "
     "weekends and on 25-26 December and 1 January."),
    ("support-03", "Customer support hours: Asia-Pacific",
     "APAC support (Singapore, Australia, Japan, Korea) is open Monday to Friday from 9:00 to 18:00 local time. "
     "Japanese and Korean are supported on the local lines. Chat in English is available 24 hours a day from "
     "Monday 7:00 to Saturday 7:00 Singapore time."),
    ("support-04", "E-mail and web support",
     "You can write to support@kestrel.example or use the contact form at any time. We answer e-mails within one "
     "working day; order and refund questions usually within 4 working hours. Include your order number and, for "
     "product problems, the model number and serial number printed under the product."),
    ("support-05", "Priority support for Kestrel Plus and business customers",
     "Kestrel Plus members and Kestrel Business customers have a priority line with a target waiting time of under "
     "2 minutes, and weekend phone support from 10:00 to 16:00 local time. Business customers also get a named "
     "account manager."),
    ("support-06", "Response times by severity for business customers",
     "For Kestrel Business service contracts: Severity 1 (all devices of a site down) - response within 1 hour, "
     "24/7; Severity 2 (major function impaired) - response within 4 business hours; Severity 3 (question or minor "
     "fault) - response within 1 business day."),
    ("support-07", "Holiday support schedule",
     "During public holidays support runs a reduced service: chat and e-mail stay open from 10:00 to 16:00 local "
     "time, phone lines are closed. Between 24 December and 1 January the holiday schedule applies in all regions; "
     "the exact dates are announced on the status page."),
    ("support-08", "Repair service and service centres",
     "Repairs are handled by Kestrel service centres. Book a repair online to receive a free shipping label, or "
     "bring the product to a Kestrel store. Typical repair time is 7 to 10 working days plus shipping; you can "
     "follow the status with the repair number."),
    ("support-09", "Escalating a complaint",
     "If you are not satisfied with the answer from support, ask the agent to escalate the case to a team leader, "
     "who contacts you within 2 working days. If the complaint is still open after 30 days you can write to the "
     "customer relations office at relations@kestrel.example."),
    ("support-10", "Support status page",
     "Known outages of the Kestrel app, cloud services and online store are published on status.kestrel.example. "
     "Subscribe to updates by e-mail or SMS. The page also shows the current support waiting times per region."),
]

SUPPORT_ZH = [
    ("support-zh-01", "客服工作时间（中国大陆）",
     "中国大陆客服热线 400-820-0142 的服务时间为每天9:00至21:00（北京时间），法定节假日照常服务。在线客服（官方商城、"
     "微信公众号）为7×24小时在线，夜间由智能客服接待，人工客服在早上9点后回复。"),
    ("support-zh-02", "春节期间客服安排",
     "春节假期（除夕至正月初三）电话客服暂停服务，在线客服每天10:00至16:00提供人工服务。假期期间提交的售后申请"
     "将在正月初四起按顺序处理。"),
    ("support-zh-03", "维修服务网点",
     "全国共有120家授权服务网点，可在官方商城“服务网点”页面按城市查询。送修时请携带购买凭证；保修期内维修免费，"
     "维修周期一般为7至10个工作日。"),
    ("support-zh-04", "投诉与升级处理",
     "如对客服处理结果不满意，可以要求升级至客服主管，主管将在2个工作日内与您联系。也可以发送邮件至 "
     "relations@kestrel.example 反映问题。"),
]

IT_EN = [
    ("it-01", "Resetting your Kestrel account password",
     "Employees reset their network password at id.kestrel.example. Passwords must have at least 14 characters and "
     "are valid for 365 days. After five wrong attempts the account is locked for 15 minutes; the IT helpdesk can "
     "unlock it sooner after verifying your identity."),
    ("it-02", "IT helpdesk",
     "The IT helpdesk is reachable on extension 4357 (HELP) and in the #it-help chat channel, Monday to Friday "
     "from 7:00 to 19:00 local time. Outside these hours, call the on-call number only for problems that stop you "
     "from working."),
    ("it-03", "Reporting phishing and security incidents",
     "Report suspicious e-mails with the Report Phishing button in Outlook. Report a lost laptop or phone, or any "
     "suspected security incident, to security@kestrel.example immediately, day or night. Do not try to investigate "
     "on your own."),
    ("it-04", "Laptops and equipment",
     "New employees receive a laptop, a headset and a monitor. Equipment is replaced every four years, or earlier "
     "when it is faulty. Lost or stolen equipment must be reported to IT and to the police within 24 hours."),
    ("it-05", "Working from home: equipment allowance",
     "Employees with an approved remote or hybrid work arrangement can claim a one-time home-office allowance of "
     "USD 400 for a desk, chair or lighting, every three years. Claim it in Expensa with receipts under the "
     "category Home office."),
    ("it-06", "VPN and remote access",
     "Use the GlobalConnect VPN to reach internal systems from outside the office. The VPN requires multi-factor "
     "authentication with the Authenticator app. Public Wi-Fi is allowed only with the VPN on."),
    ("it-07", "Software requests",
     "Request software through the Self-Service portal. Approved standard software installs automatically; other "
     "software needs a licence check by IT Procurement, which takes about 5 working days."),
    ("it-08", "Data retention for customer data",
     "Customer personal data in support tickets is kept for 3 years after the ticket is closed and then deleted. "
     "Never copy customer data into personal notes, chat tools or spreadsheets outside the support system."),
]

IT_ZH = [
    ("it-zh-01", "员工账号密码重置",
     "员工可以在 id.kestrel.example 自助重置网络账号密码。密码至少14位，有效期365天。连续输错五次账号将被锁定15分钟，"
     "如需提前解锁请联系IT服务台核实身份。"),
    ("it-zh-02", "居家办公设备补贴",
     "经批准远程或混合办公的员工，每三年可以申请一次400美元的居家办公设备补贴，用于购买桌椅或照明设备，"
     "请在 Expensa 中选择“居家办公”类别并上传发票。"),
]

ALL = TRAVEL_EN + TRAVEL_ZH + REFUNDS_EN + REFUNDS_ZH + SUPPORT_EN + SUPPORT_ZH + IT_EN + IT_ZH
