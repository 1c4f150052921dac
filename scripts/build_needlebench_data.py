"""Author the NeedleBench needle data (retrieval records and reasoning chains, English and Chinese).

The shipped JSON files under `src/needlec/languages/needlebench/` are the source of truth; this script is how they
were assembled, kept so that the data can be extended reproducibly. It composes fictional names from the word parts
below (all invented for this project), renders them into sentence patterns written separately for each language, and
re-rolls any draw that would break the uniqueness rules (a keyword equal to or inside another keyword, subject or
needle). Running it again with the same seed gives byte-identical files and refreshes `manifest.json`.

Usage: python scripts/build_needlebench_data.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "needlec" / "languages" / "needlebench"
SEED = 20240712
RETRIEVAL_PER_CATEGORY = 10
CHAINS_PER_STEP = 30
BLANK = "____"
# Combinations of the word parts that would spell a real place, river, being or brand: never drawn.
BLOCKED = ("morax", "belek", "issel", "zephath", "澜沧", "琉璃", "砂漠")

# --------------------------------------------------------------------------------------------------------------------
# English word parts (invented)
# --------------------------------------------------------------------------------------------------------------------
EN_PLACE_HEAD = [
    "Vel",
    "Quor",
    "Thal",
    "Sarn",
    "Oss",
    "Mirel",
    "Kesh",
    "Drav",
    "Ylth",
    "Corv",
    "Nimb",
    "Brae",
    "Zeph",
    "Ulm",
    "Tarr",
    "Gorm",
    "Iss",
    "Lorn",
    "Wyv",
    "Pell",
    "Hask",
    "Orv",
    "Ebb",
    "Skarl",
    "Fael",
    "Jorr",
    "Calv",
    "Merr",
]
EN_PLACE_TAIL = [
    "mora",
    "haven",
    "reach",
    "spire",
    "holt",
    "mere",
    "gard",
    "ith",
    "ora",
    "vane",
    "dun",
    "ock",
    "esse",
    "arra",
    "wyn",
    "oth",
    "ance",
    "el",
    "ios",
    "quay",
]
EN_MATERIAL_A = [
    "Cinder",
    "Frost",
    "Dusk",
    "Salt",
    "Moon",
    "Ash",
    "Thorn",
    "Mist",
    "Ember",
    "Tide",
    "Glimmer",
    "Star",
    "Storm",
    "Hollow",
    "Rune",
    "Brine",
    "Gloam",
    "Sleet",
    "Umber",
    "Wisp",
]
EN_MATERIAL_B = [
    "glass",
    "vein",
    "amber",
    "iron",
    "slate",
    "pearl",
    "silver",
    "copper",
    "quartz",
    "bone",
    "chalk",
    "jade",
]
EN_OBJECTS = [
    "Compass",
    "Lantern",
    "Chalice",
    "Astrolabe",
    "Crown",
    "Loom",
    "Hourglass",
    "Spindle",
    "Mirror",
    "Seal",
    "Horn",
    "Sextant",
    "Censer",
    "Diadem",
    "Harp",
    "Orrery",
    "Bell",
    "Quill",
    "Tiara",
    "Anklet",
]
EN_GIVEN = [
    "Teshk",
    "Oriel",
    "Maelis",
    "Corvan",
    "Idrel",
    "Sephine",
    "Tavro",
    "Ulwen",
    "Yselde",
    "Quenna",
    "Dovik",
    "Lirae",
    "Fennic",
    "Astrel",
    "Myrrin",
    "Kelvar",
    "Orsolde",
    "Baelith",
    "Cassimer",
    "Ettrin",
    "Halvette",
    "Irvold",
    "Joriane",
    "Kestrin",
    "Lusander",
    "Morwenne",
    "Nerith",
    "Ophrael",
    "Pellinar",
    "Rhosyn",
    "Sabetha",
    "Thurvin",
    "Vaelora",
    "Wendrick",
    "Ysmay",
    "Zorvath",
    "Amarind",
    "Belcroft",
    "Criselle",
    "Drusvel",
]
EN_FAMILY = [
    "Vaun",
    "Marrowind",
    "Quillfeather",
    "Ostravel",
    "Velloway",
    "Thistlewick",
    "Carrowmere",
    "Dunhallow",
    "Embervale",
    "Farrowgate",
    "Gildersheave",
    "Harrowcombe",
    "Ironvein",
    "Kettleburn",
    "Larkspire",
    "Mossgrove",
    "Nettlefold",
    "Orrinshaw",
    "Pennywhistle",
    "Ravenquay",
    "Saltmarsh",
    "Tallowmere",
    "Underbough",
    "Wraithmoor",
    "Yarrowby",
    "Zennor-Vask",
    "Brackenvane",
    "Coldhollow",
    "Drearwater",
    "Fenwright",
]
EN_TITLES = ["Admiral", "Warden", "Archon", "Magister", "Steward", "Regent", "Captain", "High Seer"]
EN_SYLL_A = ["Or", "Quel", "Zar", "Vey", "Thra", "Ix", "Mor", "Sil", "Kael", "Drun", "Bel", "Ny", "Ulk", "Hesp", "Grim"]
EN_SYLL_B = ["ath", "ix", "orra", "eth", "uun", "ax", "ilm", "ondra", "avex", "yrr", "ossa", "ek", "umbra", "inth"]
EN_GUILD_HEAD = [
    "Amberkite",
    "Lanternwright",
    "Saltglass",
    "Duskweaver",
    "Ironquill",
    "Tidewarden",
    "Cloudmason",
    "Gearwhistle",
    "Starwright",
    "Mistcarver",
    "Ashlantern",
    "Bellfounder",
    "Copperwing",
    "Thornbinder",
    "Driftmarrow",
    "Frostloom",
]
EN_GUILD_TAIL = ["Guild", "Order", "Brotherhood", "Company", "Circle", "Consortium", "Society", "League"]
EN_SHIP_A = [
    "Wandering",
    "Patient",
    "Ninth",
    "Crooked",
    "Silent",
    "Restless",
    "Borrowed",
    "Lucky",
    "Drowsy",
    "Velvet",
    "Quiet",
    "Stubborn",
    "Salted",
    "Gilded",
    "Merry",
    "Paper",
    "Tardy",
    "Woolen",
    "Humming",
    "Sleepy",
]
EN_SHIP_B = [
    "Quill",
    "Heron",
    "Sparrow",
    "Ledger",
    "Gull",
    "Tern",
    "Thimble",
    "Kestrel",
    "Anchor",
    "Albatross",
    "Wren",
    "Moth",
    "Otter",
    "Bittern",
    "Pelican",
    "Marten",
    "Minnow",
    "Thistle",
]
EN_RIVER_TAIL = ["River", "Water", "Brook", "Stream"]

# --------------------------------------------------------------------------------------------------------------------
# Chinese word parts (invented combinations)
# --------------------------------------------------------------------------------------------------------------------
ZH_PLACE_CHARS = list("霞雾澜汐沧漠烬霜岚珀曜渊琉溟枫芷晖棠砂蘅璃翎潼澄鸢朔昙筠绛黛")
ZH_MATERIAL = [
    "霜纹",
    "烬晶",
    "暮珀",
    "潮骨",
    "月岩",
    "灰珠",
    "棘银",
    "雾铜",
    "星垩",
    "焰英",
    "潭玉",
    "风铁",
    "夜琉",
    "冰螺",
]
ZH_OBJECTS = [
    "罗盘",
    "灯盏",
    "酒樽",
    "星盘",
    "冠冕",
    "织机",
    "沙漏",
    "纺锤",
    "铜镜",
    "印玺",
    "号角",
    "钥匙",
    "香炉",
    "竖琴",
]
ZH_SURNAME = [
    "岑",
    "闻人",
    "宇文",
    "司空",
    "祁",
    "殷",
    "阮",
    "沐",
    "晏",
    "裴",
    "卞",
    "钟离",
    "慕容",
    "郗",
    "乐正",
    "巫马",
]
ZH_GIVEN_CHARS = list("澈砚筝翊珩蘅岫霁昭璇棠濯笙琰曦渺芜湛逸黎谙")
ZH_FOREIGN_A = ["奥瑞", "塔尔", "维赛", "伊德", "莫林", "赛芙", "卡斯", "洛薇", "恩佐", "希尔", "泽娜", "贝洛"]
ZH_FOREIGN_B = ["凡恩", "马洛", "奎德", "索兰", "维克", "阿伦", "弗洛", "蒂斯", "伦瑟", "哈维", "科尔", "瑟琳"]
ZH_BEAST_CHARS = list("猊貅獬狰犼鵸鸾蛟狻")
ZH_TEA = ["云隐", "雪芽", "石乳", "松烟", "晚露", "青涧", "兰髓", "霁月", "苔衣", "碧纱", "鹤影", "溪烟"]
ZH_ORG_TAIL = ["商会", "盟", "社", "阁", "坊", "镖局", "书院", "行会"]
ZH_BOOK_A = ["沉舟", "观澜", "拾萤", "听潮", "问星", "归墟", "焚灯", "折柳", "守拙", "栖云", "渡鹤", "寻砂"]
ZH_BOOK_B = ["录", "经", "志", "笺", "谱", "集"]
# Traditional forms of the simplified characters above, so that an answer written in traditional script also counts.
ZH_TRADITIONAL = str.maketrans(
    "雾澜沧烬岚渊枫晖鸢昙绛纹银铜垩风铁罗盘灯盏织机纺锤镜玺号钥炉竖闻钟离乐马砚筝霁芜谙奥尔维赛泽贝兰伦狰鸾云隐烟涧纱鹤会阁镖书观萤听问归栖寻录经笺谱岛国",
    "霧瀾滄燼嵐淵楓暉鳶曇絳紋銀銅堊風鐵羅盤燈盞織機紡錘鏡璽號鑰爐豎聞鍾離樂馬硯箏霽蕪諳奧爾維賽澤貝蘭倫猙鸞雲隱煙澗紗鶴會閣鏢書觀螢聽問歸棲尋錄經箋譜島國",
)


def _compound_aliases(word: str, split: int) -> list[str]:
    """Spellings a reader may use for an invented compound such as 'Cinderglass': 'Cinder-glass', 'Cinder glass'."""
    head, tail = word[:split], word[split:]
    return [f"{head}-{tail}", f"{head} {tail}"]


@dataclass
class Named:
    """An invented name and the alternative spellings that also count as that name."""

    name: str
    aliases: list[str]


class Namer:
    """Draws invented names of one language from the word parts, never the same one twice."""

    def __init__(self, rng: random.Random, lang: str) -> None:
        self.rng = rng
        self.lang = lang
        self.used: set[str] = set()

    def _fresh(self, make: Callable[[], Named]) -> Named:
        for _ in range(10_000):
            named = make()
            key = named.name.casefold()
            if key in self.used or any(b in key for b in BLOCKED):
                continue
            if any(key in u or u in key for u in self.used):
                continue
            self.used.add(key)
            traditional = named.name.translate(ZH_TRADITIONAL)
            if self.lang == "zh" and traditional != named.name:
                return Named(named.name, [*named.aliases, traditional])
            return named
        raise RuntimeError("word parts exhausted")

    # English -----------------------------------------------------------------------------------------------------
    def en_place(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(EN_PLACE_HEAD) + self.rng.choice(EN_PLACE_TAIL), []))

    def en_artefact(self) -> Named:
        def make() -> Named:
            a, b = self.rng.choice(EN_MATERIAL_A), self.rng.choice(EN_MATERIAL_B)
            obj = self.rng.choice(EN_OBJECTS)
            return Named(f"{a}{b} {obj}", [f"{x} {obj}" for x in _compound_aliases(a + b, len(a))])

        return self._fresh(make)

    def en_person(self, title: bool = False) -> Named:
        def make() -> Named:
            name = f"{self.rng.choice(EN_GIVEN)} {self.rng.choice(EN_FAMILY)}"
            if title:
                return Named(f"{self.rng.choice(EN_TITLES)} {name}", [name])
            return Named(name, [])

        return self._fresh(make)

    def en_coined(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(EN_SYLL_A) + self.rng.choice(EN_SYLL_B), []))

    def en_guild(self) -> Named:
        def make() -> Named:
            head = self.rng.choice(EN_GUILD_HEAD)
            return Named(f"{head} {self.rng.choice(EN_GUILD_TAIL)}", [])

        return self._fresh(make)

    def en_ship(self) -> Named:
        return self._fresh(lambda: Named(f"{self.rng.choice(EN_SHIP_A)} {self.rng.choice(EN_SHIP_B)}", []))

    def en_river(self) -> Named:
        def make() -> Named:
            head = self.rng.choice(EN_PLACE_HEAD) + self.rng.choice(["en", "ow", "ire", "ath", "um"])
            return Named(f"{head} {self.rng.choice(EN_RIVER_TAIL)}", [])

        return self._fresh(make)

    # Chinese -----------------------------------------------------------------------------------------------------
    def zh_place(self, suffix: str) -> Named:
        return self._fresh(lambda: Named("".join(self.rng.sample(ZH_PLACE_CHARS, 2)) + suffix, []))

    def zh_artefact(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(ZH_MATERIAL) + self.rng.choice(ZH_OBJECTS), []))

    def zh_person(self) -> Named:
        def make() -> Named:
            if self.rng.random() < 0.3:
                a, b = self.rng.choice(ZH_FOREIGN_A), self.rng.choice(ZH_FOREIGN_B)
                return Named(f"{a}·{b}", [f"{a}{b}", f"{a}•{b}"])
            given = "".join(self.rng.sample(ZH_GIVEN_CHARS, 2))
            return Named(self.rng.choice(ZH_SURNAME) + given, [])

        return self._fresh(make)

    def zh_beast(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(ZH_PLACE_CHARS) + self.rng.choice(ZH_BEAST_CHARS), []))

    def zh_tea(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(ZH_TEA) + self.rng.choice(["春", "白", "毫", "香"]), []))

    def zh_org(self) -> Named:
        return self._fresh(
            lambda: Named("".join(self.rng.sample(ZH_PLACE_CHARS, 2)) + self.rng.choice(ZH_ORG_TAIL), [])
        )

    def zh_book(self) -> Named:
        return self._fresh(lambda: Named(self.rng.choice(ZH_BOOK_A) + self.rng.choice(ZH_BOOK_B), []))

    def zh_ship(self) -> Named:
        return self._fresh(lambda: Named("".join(self.rng.sample(ZH_PLACE_CHARS, 2)) + "号", []))


# --------------------------------------------------------------------------------------------------------------------
# Retrieval categories: (category, subject maker, keyword maker, needle, question, answer format)
# --------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Category:
    """One kind of retrieval fact: how its subject and keyword are named and the sentences that state and ask it."""

    name: str
    subject: Callable[[Namer], Named]
    keyword: Callable[[Namer], Named]
    needles: tuple[str, ...]
    question: str
    answer_format: str


EN_CATEGORIES = [
    Category(
        "island-relic",
        lambda n: Named(n.en_place().name + " Isle", []),
        Namer.en_artefact,
        (
            "Hidden in the sea caves of {s} lies the {k}.",
            "In the sea caves of {s}, hidden below the tideline, lies the {k}.",
        ),
        "What lies hidden in the sea caves of {s}?",
        "The relic hidden in the sea caves of {s} is the " + BLANK + ".",
    ),
    Category(
        "star-ruler",
        lambda n: Named("the " + n.en_place().name + " star system", []),
        lambda n: n.en_person(title=True),
        (
            "Every planet of {s} answers to a single ruler: {k}.",
            "The sovereign of {s} is {k}, who has held the throne for three centuries.",
        ),
        "Who rules {s}?",
        "The ruler of {s} is " + BLANK + ".",
    ),
    Category(
        "guild-emblem",
        Namer.en_guild,
        Namer.en_artefact,
        (
            "At every midsummer procession the {s} carries the {k} as its emblem.",
            "The emblem of the {s} has always been the {k}, polished before each parade.",
        ),
        "What does the {s} carry as its emblem?",
        "The emblem of the {s} is the " + BLANK + ".",
    ),
    Category(
        "gate-beast",
        lambda n: Named("the walled city of " + n.en_place().name, []),
        Namer.en_coined,
        (
            "The gates of {s} are watched over by an ancient beast named {k}.",
            "No traveller enters {s} without first bowing to its guardian beast, {k}.",
        ),
        "What is the name of the beast that guards {s}?",
        "The beast that guards {s} is called " + BLANK + ".",
    ),
    Category(
        "airship-captain",
        lambda n: Named("the airship " + n.en_ship().name, []),
        lambda n: n.en_person(title=False),
        (
            "The crew of {s} take orders from one captain only, {k}.",
            "Since her maiden flight, {s} has been commanded by {k}.",
        ),
        "Who is the captain of {s}?",
        "The captain of {s} is " + BLANK + ".",
    ),
    Category(
        "comet-name",
        lambda n: Named("the observatory on Mount " + n.en_place().name, []),
        Namer.en_coined,
        (
            "Astronomers at {s} named the brightest comet they ever recorded {k}.",
            "The brightest comet catalogued by {s} bears the name {k}.",
        ),
        "What did the astronomers at {s} name their brightest comet?",
        "The brightest comet recorded at {s} is named " + BLANK + ".",
    ),
    Category(
        "academy-founder",
        lambda n: Named("the " + n.en_place().name + " Academy of Tides", []),
        lambda n: n.en_person(title=False),
        (
            "{S} was founded by {k} with a single borrowed telescope.",
            "The founder of {s} was {k}, a former lighthouse keeper.",
        ),
        "Who founded {s}?",
        "The founder of {s} was " + BLANK + ".",
    ),
    Category(
        "realm-coin",
        lambda n: Named("the kingdom of " + n.en_place().name, []),
        lambda n: Named(n.en_coined().name + " mark", []),
        (
            "Merchants throughout {s} settle every debt in coins called the {k}.",
            "The only coin accepted in the markets of {s} is the {k}.",
        ),
        "Which coin is used in the markets of {s}?",
        "The coin used in the markets of {s} is the " + BLANK + ".",
    ),
    Category(
        "tower-keeper",
        lambda n: Named("the lighthouse at " + n.en_place().name + " Point", []),
        lambda n: n.en_person(title=True),
        (
            "For forty winters the lamp of {s} has been tended by {k}.",
            "The keeper of {s} is {k}, who never leaves the tower after dusk.",
        ),
        "Who keeps {s}?",
        "The keeper of {s} is " + BLANK + ".",
    ),
    Category(
        "vault-key",
        Namer.en_guild,
        Namer.en_artefact,
        (
            "In the deepest vault of the {s}, behind seven iron doors, rests the {k}.",
            "Locked in the deepest vault of the {s} rests the {k}.",
        ),
        "What rests in the deepest vault of the {s}?",
        "The deepest vault of the {s} holds the " + BLANK + ".",
    ),
    Category(
        "moon-name",
        lambda n: Named("the gas giant " + n.en_place().name, []),
        Namer.en_coined,
        (
            "The largest moon of {s} is known to its settlers as {k}.",
            "Settlers orbiting {s} call its largest moon {k}.",
        ),
        "What is the largest moon of {s} called?",
        "The largest moon of {s} is called " + BLANK + ".",
    ),
    Category(
        "library-book",
        lambda n: Named("the sunken library of " + n.en_place().name, []),
        lambda n: Named("Book of " + n.en_coined().name, []),
        (
            "The only volume saved from {s} was the {k}.",
            "When the waters rose over {s}, the librarians rescued just one volume, the {k}.",
        ),
        "Which volume was saved from {s}?",
        "The volume saved from {s} was the " + BLANK + ".",
    ),
]

ZH_CATEGORIES = [
    Category(
        "island-relic",
        lambda n: n.zh_place("岛"),
        Namer.zh_artefact,
        ("在{s}的海蚀洞深处，藏着传说中的{k}。", "{s}的渔民世代守着一个秘密：潮洞最深处埋着{k}。"),
        "{s}的海蚀洞深处藏着什么？",
        "{s}海蚀洞深处藏着的宝物是" + BLANK + "。",
    ),
    Category(
        "star-ruler",
        lambda n: n.zh_place("星系"),
        Namer.zh_person,
        ("{s}的每一颗行星都听命于同一位君主——{k}。", "执掌{s}已有三百年的，是女王{k}。"),
        "{s}由谁统治？",
        "{s}的统治者是" + BLANK + "。",
    ),
    Category(
        "tea-hill",
        lambda n: n.zh_place("山"),
        Namer.zh_tea,
        ("{s}南坡的老茶树，只产一种茶，当地人叫它“{k}”。", "说起{s}的名茶，茶客们只认{k}。"),
        "{s}出产的名茶叫什么？",
        "{s}出产的名茶叫" + BLANK + "。",
    ),
    Category(
        "gate-beast",
        lambda n: n.zh_place("城"),
        Namer.zh_beast,
        ("守护{s}城门的，是一头名叫{k}的上古异兽。", "进{s}的人都要先向城门口那头叫{k}的异兽行礼。"),
        "守护{s}城门的异兽叫什么？",
        "守护{s}城门的异兽名叫" + BLANK + "。",
    ),
    Category(
        "airship-captain",
        Namer.zh_ship,
        Namer.zh_person,
        ("飞艇{s}上的水手只听一个人的号令，那就是船长{k}。", "自首航起，飞艇{s}便一直由{k}掌舵。"),
        "飞艇{s}的船长是谁？",
        "飞艇{s}的船长是" + BLANK + "。",
    ),
    Category(
        "academy-founder",
        lambda n: n.zh_place("书院"),
        Namer.zh_person,
        ("{s}是{k}在一间借来的旧草堂里创办起来的。", "当年创办{s}的人名叫{k}，原本是个看灯塔的。"),
        "{s}是谁创办的？",
        "{s}的创办者是" + BLANK + "。",
    ),
    Category(
        "monastery-scroll",
        lambda n: n.zh_place("寺"),
        Namer.zh_book,
        ("{s}的僧人千年来只抄写一部经卷，名为《{k}》。", "{s}藏经楼里供奉的唯一一部经卷是《{k}》。"),
        "{s}的僧人抄写的是哪部经卷？",
        "{s}的僧人抄写的经卷是《" + BLANK + "》。",
    ),
    Category(
        "escort-flag",
        Namer.zh_org,
        Namer.zh_artefact,
        ("{s}每逢大典，总要把{k}摆在正堂中央。", "{s}的镇堂之宝是{k}，平日锁在后院的铁柜里。"),
        "{s}的镇堂之宝是什么？",
        "{s}的镇堂之宝是" + BLANK + "。",
    ),
    Category(
        "river-ferry",
        lambda n: n.zh_place("河"),
        Namer.zh_person,
        ("想渡过{s}的人，都得把船钱交给摆渡人{k}。", "{s}上唯一的摆渡人叫{k}，从不在夜里开船。"),
        "{s}上的摆渡人是谁？",
        "{s}上的摆渡人是" + BLANK + "。",
    ),
    Category(
        "moon-name",
        lambda n: n.zh_place("星"),
        lambda n: n.zh_place("月"),
        ("{s}最大的那颗卫星，移民们管它叫{k}。", "环绕{s}运行的卫星里，最大的一颗名为{k}。"),
        "{s}最大的卫星叫什么？",
        "{s}最大的卫星叫" + BLANK + "。",
    ),
    Category(
        "kiln-glaze",
        lambda n: n.zh_place("窑"),
        lambda n: n.zh_place("釉"),
        ("{s}烧出的瓷器，最出名的是一种叫{k}的釉色。", "行家一看釉色就知道是{s}的货，那种釉叫{k}。"),
        "{s}最出名的釉色叫什么？",
        "{s}最出名的釉色叫" + BLANK + "。",
    ),
    Category(
        "lighthouse-keeper",
        lambda n: n.zh_place("角灯塔"),
        Namer.zh_person,
        ("四十个冬天以来，{s}的灯一直由{k}照看。", "{s}的守塔人是{k}，天黑以后从不离开塔顶。"),
        "{s}的守塔人是谁？",
        "{s}的守塔人是" + BLANK + "。",
    ),
]


def _fill(template: str, s: str, k: str) -> str:
    """Render a sentence; `{S}` is the subject with its first letter capitalised (sentence start)."""
    return template.replace("{S}", s[:1].upper() + s[1:]).replace("{s}", s).replace("{k}", k)


def build_retrieval(lang: str, rng: random.Random, namer: Namer) -> list[dict[str, object]]:
    """Build the retrieval records of one language, `RETRIEVAL_PER_CATEGORY` per category."""
    cats = EN_CATEGORIES if lang == "en" else ZH_CATEGORIES
    records: list[dict[str, object]] = []
    for cat in cats:
        for i in range(RETRIEVAL_PER_CATEGORY):
            subject = cat.subject(namer)
            keyword = cat.keyword(namer)
            needle = _fill(cat.needles[i % len(cat.needles)], subject.name, keyword.name)
            if lang == "en" and not needle[:1].isupper():
                needle = needle[:1].upper() + needle[1:]
            records.append(
                {
                    "category": cat.name,
                    "subject": subject.name,
                    "keyword": keyword.name,
                    "aliases": keyword.aliases,
                    "needle": needle,
                    "question": _fill(cat.question, subject.name, keyword.name),
                    "answer_format": _fill(cat.answer_format, subject.name, keyword.name),
                }
            )
    rng.shuffle(records)
    for n, rec in enumerate(records, 1):
        rec["id"] = f"nb-rt-{lang}-{n:03d}"
    return [dict(sorted(r.items())) for r in records]


# --------------------------------------------------------------------------------------------------------------------
# Reasoning chains: typed relations between invented entities
# --------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Relation:
    """A relation from one entity type to another: how a fact states it and how a question describes its object."""

    name: str
    domain: str
    range: str
    facts: tuple[str, ...]  # {s} subject name, {o} object name
    describe: str  # {x}: a mention or description of the subject; yields a description of the object


EN_MENTION = {
    "person": "{n}",
    "org": "the {n}",
    "city": "{n}",
    "realm": "{n}",
    "artefact": "the {n}",
    "ship": "the airship {n}",
    "river": "the {n}",
}
ZH_MENTION = {t: "{n}" for t in EN_MENTION}

EN_RELATIONS = [
    Relation(
        "founded_by",
        "org",
        "person",
        ("The {s} was founded by {o}.", "{o} gathered the first members of the {s}."),
        "the founder of {x}",
    ),
    Relation(
        "born_in",
        "person",
        "city",
        ("{s} was born in the city of {o}.", "{s} grew up in {o}, the city of their birth."),
        "the city where {x} was born",
    ),
    Relation(
        "lies_in",
        "city",
        "realm",
        ("The city of {s} lies within the realm of {o}.", "{s} pays its taxes to the realm of {o}."),
        "the realm that contains {x}",
    ),
    Relation(
        "ruled_by",
        "realm",
        "person",
        ("The realm of {s} is ruled by {o}.", "{o} wears the crown of {s}."),
        "the ruler of {x}",
    ),
    Relation(
        "mentored_by",
        "person",
        "person",
        ("{s} learned every trade secret from {o}.", "{o} was the teacher of {s}."),
        "the teacher of {x}",
    ),
    Relation(
        "member_of",
        "person",
        "org",
        ("{s} is a sworn member of the {o}.", "{s} swore the oath of the {o}."),
        "the order joined by {x}",
    ),
    Relation(
        "made_by",
        "artefact",
        "person",
        ("The {s} was forged by {o}.", "{o} crafted the {s} by hand."),
        "the maker of {x}",
    ),
    Relation(
        "commands",
        "person",
        "ship",
        ("{s} commands the airship {o}.", "The airship {o} is captained by {s}."),
        "the airship commanded by {x}",
    ),
    Relation(
        "home_port",
        "ship",
        "city",
        ("The airship {s} is moored at {o} between voyages.", "The home port of the airship {s} is {o}."),
        "the home port of {x}",
    ),
    Relation(
        "river_of",
        "city",
        "river",
        ("The {o} runs through the city of {s}.", "Barges on the {o} stop at the docks of {s}."),
        "the river that runs through {x}",
    ),
    Relation(
        "guards",
        "org",
        "artefact",
        ("The {s} guards the {o} in its vault.", "The {o} is kept under the watch of the {s}."),
        "the relic guarded by {x}",
    ),
    Relation(
        "capital_of",
        "realm",
        "city",
        ("The capital of {s} is {o}.", "{o} is the seat of the throne of {s}."),
        "the capital of {x}",
    ),
    Relation(
        "source_of",
        "river",
        "realm",
        ("The {s} rises in the hills of {o}.", "The springs of the {s} lie in {o}."),
        "the realm where {x} rises",
    ),
]

ZH_RELATIONS = [
    Relation("founded_by", "org", "person", ("{s}由{o}一手创立。", "当年召集{s}第一批成员的人是{o}。"), "{x}的创立者"),
    Relation("born_in", "person", "city", ("{s}出生在{o}。", "{s}的故乡是{o}。"), "{x}的出生地"),
    Relation("lies_in", "city", "realm", ("{s}隶属于{o}。", "{s}每年向{o}缴纳赋税。"), "{x}所属的国度"),
    Relation("ruled_by", "realm", "person", ("{s}的国君是{o}。", "如今执掌{s}的是{o}。"), "{x}的国君"),
    Relation("mentored_by", "person", "person", ("{s}的手艺全是跟{o}学的。", "{o}是{s}的师父。"), "{x}的师父"),
    Relation("member_of", "person", "org", ("{s}是{o}的正式成员。", "{s}早年加入了{o}。"), "{x}所在的组织"),
    Relation("made_by", "artefact", "person", ("{s}出自{o}之手。", "{o}亲手打造了{s}。"), "{x}的打造者"),
    Relation("commands", "person", "ship", ("{s}是飞艇{o}的船长。", "飞艇{o}由{s}指挥。"), "{x}指挥的飞艇"),
    Relation("home_port", "ship", "city", ("飞艇{s}每次远航归来都停在{o}。", "飞艇{s}的母港是{o}。"), "{x}的母港"),
    Relation("river_of", "city", "river", ("{o}穿过{s}城中。", "{s}的码头就建在{o}岸边。"), "{x}的城中河"),
    Relation("guards", "org", "artefact", ("{s}把{o}锁在自家的密库里看守。", "{o}一直由{s}看管。"), "{x}看守的宝物"),
    Relation("capital_of", "realm", "city", ("{s}的都城是{o}。", "{o}是{s}的国都。"), "{x}的都城"),
    Relation("source_of", "river", "realm", ("{s}发源于{o}境内的群山。", "{s}的源头在{o}。"), "{x}的发源地"),
]


# Consecutive relations that would read as a loop (a teacher's teacher, a member's order's member) or contradict the
# previous fact (the capital of a realm cannot lie within another realm).
EXCLUDED_STEPS = {(r.name, r.name) for r in EN_RELATIONS} | {("capital_of", "lies_in")}


def _entity(namer: Namer, lang: str, etype: str) -> Named:
    """An invented entity of one type, in the conventions of one language."""
    if lang == "en":
        makers: dict[str, Callable[[], Named]] = {
            "person": namer.en_person,
            "org": namer.en_guild,
            "city": namer.en_place,
            "realm": namer.en_place,
            "artefact": namer.en_artefact,
            "ship": namer.en_ship,
            "river": namer.en_river,
        }
    else:
        makers = {
            "person": namer.zh_person,
            "org": namer.zh_org,
            "city": lambda: namer.zh_place("城"),
            "realm": lambda: namer.zh_place("国"),
            "artefact": namer.zh_artefact,
            "ship": namer.zh_ship,
            "river": lambda: namer.zh_place("河"),
        }
    return makers[etype]()


def build_chains(lang: str, rng: random.Random, namer: Namer) -> list[dict[str, object]]:
    """Build `CHAINS_PER_STEP` chains for each step count 2..5 by random walks over the typed relations."""
    relations = EN_RELATIONS if lang == "en" else ZH_RELATIONS
    mention = EN_MENTION if lang == "en" else ZH_MENTION
    types = sorted({r.domain for r in relations})
    chains: list[dict[str, object]] = []
    for steps in (2, 3, 4, 5):
        made = 0
        while made < CHAINS_PER_STEP:
            start = rng.choice(types)
            path_rel: list[Relation] = []
            current = start
            for _ in range(steps):
                previous = path_rel[-1].name if path_rel else ""
                options = [r for r in relations if r.domain == current and (previous, r.name) not in EXCLUDED_STEPS]
                if not options:
                    break
                rel = rng.choice(options)
                path_rel.append(rel)
                current = rel.range
            if len(path_rel) != steps:
                continue
            entities = [_entity(namer, lang, start)] + [_entity(namer, lang, r.range) for r in path_rel]
            facts = []
            for i, rel in enumerate(path_rel):
                text = _fill(rng.choice(rel.facts).replace("{o}", "{k}"), entities[i].name, entities[i + 1].name)
                if lang == "en":
                    text = text[:1].upper() + text[1:]
                facts.append(
                    {"text": text, "subject": entities[i].name, "relation": rel.name, "object": entities[i + 1].name}
                )
            desc = mention[start].replace("{n}", entities[0].name)
            for rel in path_rel:
                desc = rel.describe.replace("{x}", desc)
            last_type = path_rel[-1].range
            if lang == "en":
                question = f"Who is {desc}?" if last_type == "person" else f"What is the name of {desc}?"
                fmt = f"{desc[:1].upper()}{desc[1:]} is {BLANK}."
            else:
                question = f"{desc}是谁？" if last_type == "person" else f"{desc}叫什么名字？"
                fmt = f"{desc}是{BLANK}。"
            made += 1
            chains.append(
                {
                    "id": f"nb-rs-{lang}-{steps}-{made:02d}",
                    "steps": steps,
                    "facts": facts,
                    "question": question,
                    "answer_format": fmt,
                    "question_entity": entities[0].name,
                    "answer": entities[-1].name,
                    "aliases": entities[-1].aliases,
                    "path": [e.name for e in entities],
                }
            )
    return chains


def _dump(obj: object) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def build() -> dict[str, bytes]:
    """All data files and the manifest, as bytes keyed by file name."""
    files: dict[str, bytes] = {}
    for lang in ("en", "zh"):
        rng = random.Random(f"{SEED}-{lang}")
        namer = Namer(rng, lang)
        files[f"retrieval_{lang}.json"] = _dump(
            {"language": lang, "version": 1, "records": build_retrieval(lang, rng, namer)}
        )
        files[f"chains_{lang}.json"] = _dump({"language": lang, "version": 1, "chains": build_chains(lang, rng, namer)})
    manifest = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    files["manifest.json"] = _dump({"files": manifest, "version": 1})
    return files


def main() -> int:
    """Write the data files (or, with --check, report whether the shipped ones differ)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare with the shipped files, write nothing")
    args = parser.parse_args()
    files = build()
    if args.check:
        stale = [n for n, d in files.items() if not (OUT / n).is_file() or (OUT / n).read_bytes() != d]
        print("stale: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {len(files)} files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
