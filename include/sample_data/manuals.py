"""Product-manual chunks of the fictional Kestrel product line, one chunk per manual section.

Each product has specific facts (model number, lights, filters, reset procedure); shared sections
(warranty, safety) follow the same wording pattern with the product's own values, as real manuals do.
That makes lexical look-alikes: a query without a model number has several plausible chunks.
"""

PRODUCTS = {
    "AX-200": {
        "name": "AeroPure AX-200 air purifier",
        "warranty_years": 2,
        "sections": {
            "specs": "The AeroPure AX-200 is a compact air purifier for rooms up to 20 m2 (215 sq ft). Clean air "
                     "delivery rate 140 m3/h, noise 24 to 48 dB, power 28 W, weight 3.1 kg. It uses one H13 True HEPA "
                     "filter with an activated-carbon layer (replacement part AXF-200). Three fan speeds and a sleep mode.",
            "setup": "Remove the plastic bag from the filter before first use: open the back cover by pressing the two "
                     "clips, take out the filter, unwrap it and put it back with the pull tab facing you. Place the AX-200 "
                     "at least 30 cm from walls and curtains, plug it in and press the power button once.",
            "lights": "AX-200 indicator lights: the ring around the power button is blue when the air is good, purple "
                      "when it is moderate and red when it is poor. A steady orange filter light means the filter will "
                      "need changing within 2 weeks; a blinking orange filter light means change the filter now.",
            "maintenance": "Replace the AX-200 filter every 6 to 8 months, or when the filter light blinks orange. After "
                           "fitting a new AXF-200 filter, hold the filter button for 3 seconds until the light goes out "
                           "to reset the filter timer. Vacuum the pre-filter mesh once a month; do not wash the HEPA filter.",
            "troubleshooting": "If the AX-200 makes a rattling noise, check that the filter is seated correctly and the "
                               "back cover clicked shut. If the air-quality ring stays red for hours, clean the dust "
                               "sensor opening on the side with a dry cotton bud. Weak airflow usually means a clogged filter.",
            "reset": "To restore the AX-200 to factory settings, unplug it, hold the power and speed buttons together, "
                     "plug it back in while holding them and release after 5 seconds when all lights flash twice.",
        },
    },
    "AX-350": {
        "name": "AeroPure AX-350 air purifier",
        "warranty_years": 2,
        "sections": {
            "specs": "The AeroPure AX-350 cleans rooms up to 45 m2 (485 sq ft). Clean air delivery rate 350 m3/h, noise "
                     "22 to 55 dB, power 45 W, weight 6.4 kg. It has a laser PM2.5 sensor with a numeric display, Wi-Fi "
                     "for the Kestrel Home app and a two-stage filter: washable pre-filter and H13 HEPA-carbon filter AXF-350.",
            "setup": "Unpack the AX-350, remove the protective film from the display and the bag from the filter. "
                     "Install the Kestrel Home app, tap Add device and hold the Wi-Fi button on the AX-350 for 3 seconds "
                     "until the Wi-Fi symbol blinks. The AX-350 supports 2.4 GHz networks only.",
            "lights": "The AX-350 display shows the PM2.5 value in micrograms per cubic metre. The colour bar is green "
                      "below 35, yellow from 35 to 75 and red above 75. A blinking Wi-Fi symbol means pairing mode; a "
                      "steady symbol means connected. Error E1 on the display means the fan is blocked, E2 a sensor fault.",
            "maintenance": "Wash the AX-350 pre-filter under running water every 2 weeks and let it dry completely. "
                           "Replace the AXF-350 main filter every 12 months or when the app reports 0% filter life; then "
                           "reset the filter counter in the app under Settings > Filter or by holding the Timer button for 5 seconds.",
            "troubleshooting": "If the AX-350 cannot connect to Wi-Fi, make sure your router broadcasts a 2.4 GHz network "
                               "and that the password has no special characters the app cannot send. If the PM2.5 value "
                               "stays at 999, clean the sensor window behind the small side flap.",
            "reset": "Factory reset of the AX-350: hold the Wi-Fi and Timer buttons together for 10 seconds until the "
                     "display shows rS. The purifier restarts, forgets the Wi-Fi network and must be added to the app again.",
        },
    },
    "KT-15": {
        "name": "BrewMate KT-15 electric kettle",
        "warranty_years": 2,
        "sections": {
            "specs": "The BrewMate KT-15 kettle holds 1.5 litres and boils 1 litre in about 3 minutes at 2200 W "
                     "(1800 W on 120 V models). Stainless-steel body, removable limescale filter, keep-warm for 30 "
                     "minutes and five temperature presets: 40, 70, 80, 90 and 100 degrees Celsius.",
            "setup": "Before first use, fill the KT-15 to the MAX mark, boil, and pour the water away. Repeat twice to "
                     "remove any manufacturing residue. Always place the kettle on its own power base, on a dry, flat surface.",
            "lights": "KT-15 lights: a red ring means heating, a white ring means the set temperature was reached, and a "
                      "slowly pulsing white ring means keep-warm is on. If all five preset lights blink, the kettle was "
                      "switched on empty and has shut off to protect the element; let it cool for 10 minutes.",
            "maintenance": "Descale the KT-15 every 4 weeks in hard-water areas: fill with 0.5 l water and 0.5 l white "
                           "vinegar or a descaling tablet, boil, leave for one hour, then rinse and boil clean water twice. "
                           "Rinse the limescale filter under the tap; it can be removed by pulling it upwards.",
            "troubleshooting": "If the KT-15 switches off before the water boils, it is usually limescale on the "
                               "element: descale it. If it does not switch on at all, check that the lid is fully "
                               "closed; the kettle does not heat with the lid open.",
        },
    },
    "NB-7": {
        "name": "SkyLink NB-7 Wi-Fi 6 router",
        "warranty_years": 2,
        "sections": {
            "specs": "The SkyLink NB-7 is a dual-band Wi-Fi 6 (802.11ax) router, AX3000: up to 574 Mbps on 2.4 GHz and "
                     "2402 Mbps on 5 GHz. Four gigabit LAN ports, one gigabit WAN port, WPA3 security, guest network "
                     "and parental controls in the SkyLink app.",
            "setup": "Connect the NB-7 WAN port (blue) to your modem with the supplied cable and switch the router on. "
                     "Join the Wi-Fi network printed on the label under the router, then open the SkyLink app or "
                     "http://192.168.50.1 and follow the setup wizard. The default admin password is on the label.",
            "lights": "NB-7 status LED: solid white - connected to the internet; blinking white - starting up or updating "
                      "firmware (do not unplug); solid amber - connected to the modem but no internet; blinking amber - "
                      "no cable in the WAN port; red - hardware fault, contact support.",
            "troubleshooting": "If the NB-7 LED is amber, restart the modem first, then the router. If devices drop off "
                               "the 5 GHz network, change the channel to Auto and disable DFS channels in Advanced "
                               "Wireless settings. Slow speeds on one device often mean it is connected to 2.4 GHz.",
            "reset": "Factory reset of the NB-7: with the router on, press and hold the recessed RESET button on the back "
                     "with a paper clip for 10 seconds until the LED blinks white quickly. All settings, including the "
                     "Wi-Fi name and password, return to the values on the label.",
            "firmware": "The NB-7 checks for firmware updates every night at 3:00 and installs them automatically if auto "
                        "update is on. To update manually, open the SkyLink app, tap the router and choose Firmware. The "
                        "update takes about 4 minutes; the LED blinks white during the update.",
        },
    },
    "NB-9 Pro": {
        "name": "SkyLink NB-9 Pro mesh Wi-Fi system",
        "warranty_years": 3,
        "sections": {
            "specs": "The SkyLink NB-9 Pro is a tri-band Wi-Fi 6E mesh system with a main router and up to 4 satellites. "
                     "Each unit covers about 200 m2. It has a 2.5 gigabit WAN port, a 6 GHz band for fast devices and a "
                     "dedicated 5 GHz backhaul between units.",
            "setup": "Set up the NB-9 Pro main unit first, with the SkyLink app, like a router. Then place each satellite "
                     "halfway between the main unit and the area without coverage, switch it on and tap Add satellite in "
                     "the app. Satellites pair automatically within 2 minutes when they are in range.",
            "lights": "NB-9 Pro light ring: blue - working and connected; pulsing blue - pairing; yellow on a satellite - "
                      "weak connection to the main unit, move it closer; red on the main unit - no internet.",
            "troubleshooting": "If an NB-9 Pro satellite shows yellow, move it one room closer to the main unit or connect "
                               "it to the main unit with an Ethernet cable (wired backhaul). Devices that do not support "
                               "6 GHz still connect on 2.4 or 5 GHz.",
            "reset": "To factory-reset an NB-9 Pro unit, hold the reset pin on the bottom for 15 seconds until the ring "
                     "turns red and then pulses blue. Reset the main unit only when you want to rebuild the whole mesh; "
                     "satellites must then be added again.",
        },
    },
    "LX-40": {
        "name": "Lumen LX-40 smart desk lamp",
        "warranty_years": 2,
        "sections": {
            "specs": "The Lumen LX-40 desk lamp gives up to 1000 lumens with a colour temperature from 2700 K to 6500 K, "
                     "colour rendering index above 95, and a 10 W wireless charging pad in the base. Power 18 W.",
            "setup": "Fit the lamp arm into the base until it clicks, connect the 24 V adapter and touch the power symbol. "
                     "To use voice assistants, add the LX-40 in the Kestrel Home app; it works with Google Home and Alexa.",
            "troubleshooting": "If the LX-40 flickers at low brightness, update its firmware in the Kestrel Home app. If "
                               "the phone does not charge on the base, remove thick phone cases over 5 mm and check that "
                               "the charging light under the pad turns green.",
            "reset": "Reset the LX-40 by touching and holding the power and brightness-up symbols together for 8 seconds "
                     "until the lamp blinks three times.",
        },
    },
    "PB-20000": {
        "name": "VoltPack PB-20000 power bank",
        "warranty_years": 1,
        "sections": {
            "specs": "The VoltPack PB-20000 has a capacity of 20,000 mAh (74 Wh), which is allowed in cabin baggage on "
                     "most airlines without approval (limit 100 Wh). Outputs: USB-C 65 W power delivery and USB-A 18 W. "
                     "Recharges from empty in about 2.5 hours with a 65 W charger.",
            "lights": "The four LEDs of the PB-20000 show the remaining charge in steps of 25%. A blinking first LED means "
                      "below 5%. All four LEDs blinking together means over-temperature protection: unplug and let it cool.",
            "troubleshooting": "If the PB-20000 does not charge a laptop, use a USB-C cable rated for 5 A / 100 W; "
                               "ordinary 3 A cables limit power to 60 W or less. If it stops charging phones after a few "
                               "seconds, turn on low-current mode by double-pressing the button.",
            "safety": "Do not use the PB-20000 if it is swollen, dented or smells unusual. Keep it away from heat above "
                      "45 degrees Celsius, such as a car dashboard in summer. Always carry it in cabin baggage, never in "
                      "checked luggage.",
        },
    },
    "H3": {
        "name": "QuietWave H3 noise-cancelling headphones",
        "warranty_years": 1,
        "sections": {
            "specs": "QuietWave H3 over-ear headphones with active noise cancelling, 40 mm drivers, Bluetooth 5.3 with "
                     "multipoint (two devices at once), up to 35 hours of battery life with noise cancelling on and "
                     "5 hours of playback from a 10-minute charge.",
            "setup": "To pair the H3, hold the power button for 5 seconds until the light blinks blue and red, then "
                     "select QuietWave H3 in your phone's Bluetooth settings. To add a second device, repeat the steps; "
                     "the H3 remembers up to 8 devices.",
            "troubleshooting": "If the H3 noise cancelling makes a whistling sound, check that the ear cushions seal well "
                               "and are attached correctly. If one side is quiet, reset the headphones and re-pair them. "
                               "Update the firmware in the QuietWave app to fix most connection drops.",
            "reset": "Factory reset of the H3: switch the headphones on, then hold the power and noise-cancelling buttons "
                     "together for 10 seconds until the light flashes purple. Remove the H3 from the Bluetooth list of "
                     "your devices before pairing again.",
        },
    },
    "RS-60": {
        "name": "RoboSweep RS-60 robot vacuum",
        "warranty_years": 2,
        "sections": {
            "specs": "The RoboSweep RS-60 robot vacuum has LiDAR navigation, 4000 Pa suction, a 400 ml dust bin, a 250 ml "
                     "water tank for mopping and up to 150 minutes of runtime. It maps up to four floors in the Kestrel "
                     "Home app.",
            "setup": "Place the RS-60 dock against a wall with 0.5 m of free space on each side and 1.5 m in front. Put "
                     "the robot on the dock to charge fully before the first cleaning, then add it in the Kestrel Home app "
                     "and start a mapping run.",
            "lights": "RS-60 light: white - cleaning or ready; blinking orange - charging; solid red - error, check the app "
                      "for the error message. Error 3 means the wheel is stuck; error 5 means the main brush is tangled.",
            "maintenance": "Empty the RS-60 dust bin after every run, clean the main brush weekly and replace it every 6 "
                           "to 12 months. Replace the side brush every 3 to 6 months and the filter every 3 months.",
            "troubleshooting": "If the RS-60 does not return to its dock, clean the charging contacts and make sure the "
                               "dock is not in direct sunlight, which blinds its infrared signal. If the map is wrong "
                               "after moving furniture, start a new mapping run.",
        },
    },
}

# Section titles as they appear in the manuals.
SECTION_TITLES = {
    "specs": "specifications",
    "setup": "setting up",
    "lights": "indicator lights",
    "maintenance": "cleaning and maintenance",
    "troubleshooting": "troubleshooting",
    "reset": "factory reset",
    "firmware": "firmware updates",
    "safety": "safety",
}

WARRANTY = (
    "The {name} has a {years}-year limited warranty from the date of purchase, covering defects in materials and "
    "workmanship. Keep your receipt or order confirmation as proof of purchase. The warranty does not cover "
    "consumables such as filters and brushes, damage from drops, liquids or unauthorised repair, or normal wear. "
    "Register the {model} in the Kestrel Home app to receive an additional {extra} months of warranty."
)

MANUALS_ZH = [
    ("manual-zh-AX-350-maintenance", "AX-350 空气净化器：滤网清洗与更换",
     "AX-350 的初效滤网每两周用清水冲洗一次，晾干后再装回。主滤网（型号 AXF-350）建议每12个月更换一次，"
     "或在App提示滤网寿命为0%时更换。更换后在App“设置 > 滤网”中重置，或长按“定时”键5秒重置滤网计时。"),
    ("manual-zh-AX-350-lights", "AX-350 空气净化器：显示屏与故障代码",
     "AX-350 显示屏显示PM2.5数值（微克/立方米）。颜色条绿色表示低于35，黄色为35至75，红色表示高于75。"
     "显示E1表示风机被堵住，E2表示传感器故障，请联系售后。"),
    ("manual-zh-AX-350-reset", "AX-350 空气净化器：恢复出厂设置",
     "同时按住 Wi-Fi 键和定时键10秒，直到屏幕显示 rS，净化器重启并清除已保存的Wi-Fi网络，需要在App中重新添加设备。"),
    ("manual-zh-KT-15-maintenance", "KT-15 电水壶：除垢方法",
     "水质较硬的地区建议每四周除垢一次：倒入0.5升清水和0.5升白醋（或一片除垢片），煮沸后静置一小时，倒掉后用清水"
     "冲洗，再煮两次清水。水垢过滤网可以向上拔出，直接用水冲洗。"),
    ("manual-zh-KT-15-lights", "KT-15 电水壶：指示灯说明",
     "红色光圈表示正在加热，白色光圈表示已达到设定温度，白色光圈缓慢闪烁表示保温中。五个温度指示灯同时闪烁，"
     "说明水壶干烧后已自动断电保护，请冷却10分钟后再使用。"),
    ("manual-zh-NB-9-Pro-setup", "NB-9 Pro 分布式路由：安装子路由",
     "先用 SkyLink App 按普通路由器的方式设置 NB-9 Pro 主路由。然后把子路由放在主路由和信号盲区的中间位置，通电后在App中"
     "点击“添加子路由”，子路由在信号范围内会在2分钟内自动配对。"),
    ("manual-zh-NB-9-Pro-lights", "NB-9 Pro 分布式路由：指示灯说明",
     "蓝色常亮表示工作正常；蓝色呼吸闪烁表示正在配对；子路由显示黄色表示与主路由连接较弱，请把子路由移近一些；"
     "主路由显示红色表示无法连接互联网。"),
    ("manual-zh-NB-7-reset", "NB-7 路由器：恢复出厂设置",
     "路由器通电状态下，用回形针按住背面的 RESET 孔10秒，直到指示灯快速闪烁白色。所有设置（包括Wi-Fi名称和密码）"
     "将恢复为机身标签上的默认值。"),
    ("manual-zh-PB-20000-safety", "PB-20000 移动电源：安全与乘机须知",
     "PB-20000 容量为20000毫安时（74瓦时），低于民航规定的100瓦时，可以随身携带登机，严禁放入托运行李。如果移动电源"
     "出现鼓包、变形或异味，请立即停止使用。"),
    ("manual-zh-RS-60-lights", "RS-60 扫地机器人：指示灯与错误代码",
     "白灯表示正在清扫或待机；橙灯闪烁表示正在充电；红灯常亮表示故障，请在App中查看提示。错误3表示轮子被卡住，"
     "错误5表示主刷被缠绕。"),
]

EXTRA_MONTHS = {"AX-200": 6, "AX-350": 6, "KT-15": 6, "NB-7": 12, "NB-9 Pro": 12, "LX-40": 6, "PB-20000": 6, "H3": 6, "RS-60": 12}


def manual_chunks():
    """(doc_id, title, text) for every manual section, warranty included."""
    out = []
    for model, product in PRODUCTS.items():
        slug = model.replace(" ", "-")
        for section, text in product["sections"].items():
            out.append((f"manual-{slug}-{section}", f"{product['name']}: {SECTION_TITLES[section]}", text))
        warranty = WARRANTY.format(
            name=product["name"], years=product["warranty_years"], model=model, extra=EXTRA_MONTHS[model]
        )
        out.append((f"manual-{slug}-warranty", f"{product['name']}: warranty", warranty))
    return out + MANUALS_ZH
