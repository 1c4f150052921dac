"""NeedleBench needle data, draws and reference grids.

Expected grid numbers are written out by hand from the NeedleBench report (Table 7) and the reference configs, not
computed with the module under test. Uniqueness, derivability and fictionality are checked by code written here,
independent of the validators in the package.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from needlec.kinds.needlebench import grid
from needlec.kinds.needlebench.data import (
    ClashTable,
    _fits,
    chain_order,
    draw_retrieval,
    keyword_clash,
    keywords_overlap,
    reasoning_chains,
    retrieval_records,
)
from needlec.kinds.needlebench.kind import check_keywords
from needlec.languages.needlebench.files import data_root, read_verified
from needlec.languages.needlebench.models import Fact, NeedleDataError, ReasoningChain, RetrievalRecord

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "src" / "needlec" / "languages" / "needlebench"
LANGS = ("en", "zh")

# Real places, bodies, beings, works and brands (and the report's own example names) that must never appear.
REAL_EN = (
    "Paris",
    "London",
    "Rome",
    "Tokyo",
    "Beijing",
    "Shanghai",
    "Cairo",
    "Egypt",
    "Nile",
    "Amazon",
    "Everest",
    "Olympus",
    "Atlantis",
    "Avalon",
    "Camelot",
    "Excalibur",
    "Merlin",
    "Arthur",
    "Pellinore",
    "Tristan",
    "Mars",
    "Jupiter",
    "Saturn",
    "Venus",
    "Mercury",
    "Neptune",
    "Pluto",
    "Sirius",
    "Andromeda",
    "Vega",
    "Orion",
    "Polaris",
    "Emerald",
    "Stardust",
    "Hogwarts",
    "Narnia",
    "Gondor",
    "Mordor",
    "Westeros",
    "Tatooine",
    "Morax",
    "Belek",
    "Issel",
    "Thames",
    "Danube",
    "Himalaya",
    "Sahara",
    "Google",
    "Orix",
    "Wikipedia",
    "England",
    "China",
    "America",
    "Africa",
)
REAL_ZH = (
    "北京",
    "上海",
    "长江",
    "黄河",
    "泰山",
    "昆仑",
    "长安",
    "洛阳",
    "蓬莱",
    "瑶池",
    "西湖",
    "故宫",
    "长城",
    "澜沧",
    "猎户",
    "北极星",
    "火星",
    "木星",
    "土星",
    "金星",
    "嫦娥",
    "广寒",
    "孙悟空",
    "女娲",
    "诸葛",
    "秦始皇",
    "李白",
    "杜甫",
    "中国",
    "日本",
    "美国",
    "琉璃",
    "敦煌",
    "西藏",
    "江南",
    "岭南",
    "桃花源",
    "翡翠岛",
    "星尘",
)


def _all_strings(obj: object) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _all_strings(v)]
    if isinstance(obj, list | tuple):
        return [s for v in obj for s in _all_strings(v)]
    return []


def _records_text(lang: str) -> list[str]:
    raw = json.loads((DATA / f"retrieval_{lang}.json").read_text("utf-8"))
    raw_chains = json.loads((DATA / f"chains_{lang}.json").read_text("utf-8"))
    return _all_strings(raw) + _all_strings(raw_chains)


# ---------------------------------------------------------------------------------------------------------------------
# Data files: pins, counts, text hygiene
# ---------------------------------------------------------------------------------------------------------------------
def test_manifest_pins_every_data_file_by_sha256() -> None:
    manifest = json.loads((DATA / "manifest.json").read_text("utf-8"))
    shipped = sorted(p.name for p in DATA.glob("*.json") if p.name != "manifest.json")
    assert (
        sorted(manifest["files"])
        == shipped
        == [
            "chains_en.json",
            "chains_zh.json",
            "retrieval_en.json",
            "retrieval_zh.json",
        ]
    )
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


def test_a_changed_data_file_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    assert read_verified("retrieval_en.json", copy) == json.loads((DATA / "retrieval_en.json").read_text("utf-8"))
    target = copy / "retrieval_en.json"
    target.write_bytes(target.read_bytes().replace(b"Isle", b"Isla", 1))
    with pytest.raises(NeedleDataError, match="sha256"):
        read_verified("retrieval_en.json", copy)
    with pytest.raises(NeedleDataError, match="not listed"):
        read_verified("extra.json", copy)


def test_installed_package_ships_the_data_files() -> None:
    names = {entry.name for entry in data_root().iterdir()}
    assert {"manifest.json", "retrieval_en.json", "retrieval_zh.json", "chains_en.json", "chains_zh.json"} <= names


def test_build_script_reproduces_the_shipped_files_byte_for_byte() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_needlebench_data.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout


@pytest.mark.parametrize("lang", LANGS)
def test_counts_per_language_and_step(lang: str) -> None:
    assert len(retrieval_records(lang)) >= 100
    chains = reasoning_chains(lang)
    assert len(chains) >= 100
    for steps in (2, 3, 4, 5):
        selected = reasoning_chains(lang, steps)
        assert len(selected) >= 25
        assert all(c.steps == steps == len(c.facts) for c in selected)
    assert sum(len(reasoning_chains(lang, s)) for s in (2, 3, 4, 5)) == len(chains)


@pytest.mark.parametrize("lang", LANGS)
def test_no_replacement_characters_and_clean_text(lang: str) -> None:
    for text in _records_text(lang):
        assert "\ufffd" not in text
        assert unicodedata.normalize("NFC", text) == text
        assert text == text.strip() and "  " not in text
        assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs") for ch in text), text


def test_chinese_data_is_written_in_chinese_and_english_in_english() -> None:
    for text in _records_text("zh"):
        assert not re.search(r"[A-Za-z]", text) or re.fullmatch(r"[a-z0-9-_]+", text), text
    for record in retrieval_records("zh"):
        assert re.search(r"[\u4e00-\u9fff]", record.needle) and record.needle.endswith("。")
    for record in retrieval_records("en"):
        assert not re.search(r"[\u3000-\u9fff]", record.needle + record.question + record.answer_format)
    en_keywords = {r.keyword for r in retrieval_records("en")}
    zh_keywords = {r.keyword for r in retrieval_records("zh")}
    assert not en_keywords & zh_keywords


@pytest.mark.parametrize("lang", LANGS)
def test_nothing_real_world_appears(lang: str) -> None:
    texts = _records_text(lang)
    for text in texts:
        for noun in REAL_EN:
            assert not re.search(rf"\b{noun}\b", text), (noun, text)
        for noun in REAL_ZH:
            assert noun not in text, (noun, text)


# Ordinary English words that invented names may share with the built-in English haystack.
COMMON_NAME_WORDS = frozenset(
    {
        "anchor",
        "ash",
        "bell",
        "book",
        "borrowed",
        "brook",
        "brotherhood",
        "censer",
        "circle",
        "company",
        "compass",
        "crooked",
        "crown",
        "diadem",
        "frost",
        "gull",
        "harp",
        "heron",
        "high",
        "hollow",
        "horn",
        "isle",
        "league",
        "loom",
        "merry",
        "mirror",
        "mist",
        "moon",
        "moth",
        "mount",
        "ninth",
        "order",
        "paper",
        "patient",
        "pelican",
        "point",
        "quiet",
        "restless",
        "river",
        "salt",
        "salted",
        "seal",
        "seer",
        "silent",
        "sparrow",
        "spindle",
        "star",
        "steward",
        "storm",
        "stream",
        "stubborn",
        "thistle",
        "thorn",
        "wandering",
        "water",
        "woolen",
        "bone",
        "glass",
        "iron",
        "silver",
        "copper",
        "jade",
        "pearl",
        "amber",
        "slate",
        "chalk",
        "vein",
        "quartz",
        "the",
        "of",
        "a",
        "on",
        "at",
        "city",
        "kingdom",
        "walled",
        "gas",
        "giant",
        "system",
        "sunken",
        "library",
        "observatory",
        "academy",
        "tides",
        "airship",
        "lighthouse",
        "mark",
    }
)


def test_english_names_never_occur_in_the_builtin_haystack() -> None:
    from needlec.haystacks.sources.builtin import _web_bible

    documents, _ = _web_bible()
    text = "\n".join(d.text for d in documents).casefold()
    words = set(re.findall(r"\w+", text))
    names = {chain_name for c in reasoning_chains("en") for chain_name in (*c.path, *c.aliases)}
    for r in retrieval_records("en"):
        names |= {r.keyword, r.subject, *r.aliases}
    for name in names:
        parts = re.findall(r"\w+", name.casefold())
        shared = {p for p in parts if p in words}
        assert shared <= COMMON_NAME_WORDS, (
            name,
            shared - COMMON_NAME_WORDS,
        )
        if shared == set(parts):  # every word is ordinary: the whole phrase must still be absent
            assert not re.search(rf"\b{re.escape(name.casefold())}\b", text), name


# ---------------------------------------------------------------------------------------------------------------------
# Retrieval records: per-record shape and whole-set uniqueness
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_each_record_states_and_asks_its_fact(lang: str) -> None:
    for r in retrieval_records(lang):
        assert r.id.startswith(f"nb-rt-{lang}-")
        assert r.keyword in r.needle
        assert r.subject.casefold() in r.needle.casefold()
        assert r.subject.casefold() in r.question.casefold()
        assert r.keyword.casefold() not in r.question.casefold()
        assert r.answer_format.count("____") == 1
        assert r.keyword.casefold() not in r.answer_format.casefold()
        assert r.question.endswith("?" if lang == "en" else "？")
        assert r.answers[0] == r.keyword and len(set(r.answers)) == len(r.answers)


@pytest.mark.parametrize("lang", LANGS)
def test_subjects_keywords_ids_pairwise_unique_and_not_nested(lang: str) -> None:
    records = retrieval_records(lang)
    for field in ("id", "subject", "keyword", "needle"):
        values = [getattr(r, field).casefold() for r in records]
        assert len(set(values)) == len(values), field
    for a, b in itertools.permutations(records, 2):
        kw = a.keyword.casefold()
        assert kw not in b.keyword.casefold(), (a.id, b.id)
        assert kw not in b.subject.casefold(), (a.id, b.id)
        assert kw not in b.needle.casefold(), (a.id, b.id)
        for alias in a.aliases:
            assert alias.casefold() not in b.needle.casefold(), (a.id, alias, b.id)
        assert a.subject.casefold() not in b.subject.casefold(), (a.id, b.id)


def _check_item(drawn: list[RetrievalRecord], n: int) -> None:
    assert len(drawn) == n
    assert len({r.id for r in drawn}) == n
    assert len({(r.subject, r.keyword) for r in drawn}) == n
    for a, b in itertools.permutations(drawn, 2):
        assert a.subject.casefold() != b.subject.casefold()
        assert a.keyword.casefold() not in b.keyword.casefold()
        assert a.keyword.casefold() not in b.subject.casefold()
        assert a.keyword.casefold() not in b.needle.casefold()


@pytest.mark.parametrize("lang", LANGS)
def test_drawn_items_are_unique_and_non_overlapping(lang: str) -> None:
    for seed in range(60):
        for n in (1, 5, 20):
            _check_item(draw_retrieval(random.Random(f"{lang}-{seed}-{n}"), n, lang), n)


def _record(rid: str, subject: str, keyword: str) -> RetrievalRecord:
    return RetrievalRecord(
        id=rid,
        category="test",
        subject=subject,
        keyword=keyword,
        aliases=(),
        needle=f"The vault of {subject} holds the {keyword}.",
        question=f"What does the vault of {subject} hold?",
        answer_format="The vault holds the ____.",
    )


def _clashing_pool() -> list[RetrievalRecord]:
    return [
        _record("a", "Quorvane", "Glass Crown"),
        _record("b", "Thalmere", "Cinderglass Crown"),  # contains a's keyword
        _record("c", "Ulmspire", "Ashpearl Loom"),
        _record("d", "Ulmspire Deeps", "Tidebone Harp"),  # subject contains c's subject
        _record("e", "Velmora", "Moonslate Bell"),
        RetrievalRecord(  # an alias of f is the keyword of a
            id="f",
            category="test",
            subject="Orvock",
            keyword="Glasscrown",
            aliases=("Glass Crown",),
            needle="The vault of Orvock holds the Glasscrown.",
            question="What does the vault of Orvock hold?",
            answer_format="The vault holds the ____.",
        ),
    ]


def test_clashing_records_never_share_an_item() -> None:
    pool = _clashing_pool()
    seen_pairs: set[frozenset[str]] = set()
    for seed in range(200):
        drawn = draw_retrieval(random.Random(seed), 3, "en", pool=pool)
        ids = {r.id for r in drawn}
        assert not {"a", "b"} <= ids and not {"c", "d"} <= ids and not {"a", "f"} <= ids, ids
        seen_pairs |= {frozenset(p) for p in itertools.combinations(ids, 2)}
    assert frozenset({"a", "c"}) in seen_pairs and frozenset({"b", "d"}) in seen_pairs
    assert frozenset({"f", "e"}) in seen_pairs
    with pytest.raises(NeedleDataError, match="mutually compatible"):
        draw_retrieval(random.Random(0), 5, "en", pool=pool)


@pytest.mark.parametrize("lang", LANGS)
def test_a_draw_of_the_shipped_records_is_the_draw_record_by_record(lang: str) -> None:
    """The shipped records are drawn by clash bits worked out once (`ClashTable`); given as a pool, each
    record is checked against those kept. Both draws are the same, and the bits are the pairwise relations."""
    shipped = retrieval_records(lang)
    for seed in range(40):
        for n in (1, 7, 20):
            by_bits = draw_retrieval(random.Random(f"{seed}-{n}"), n, lang)
            by_records = draw_retrieval(random.Random(f"{seed}-{n}"), n, lang, pool=list(shipped))
            assert [r.id for r in by_bits] == [r.id for r in by_records]
    table = ClashTable(shipped)
    for i, j in itertools.combinations(range(len(shipped)), 2):
        a, b = shipped[i], shipped[j]
        assert bool(table.fits[i] >> j & 1) == bool(table.fits[j] >> i & 1) == (not _fits(a, [b]))
        assert bool(table.overlaps[i] >> j & 1) == (keywords_overlap(a, b) or keywords_overlap(b, a))


def test_clash_bits_keep_clashing_records_apart() -> None:
    """On records that do clash (the shipped ones never do), the bits draw what the record-by-record check
    draws, and clear only draws whose keywords do not overlap."""
    pool = _clashing_pool()
    table = ClashTable(pool)
    for seed in range(200):
        for n in (2, 3):
            expected = [r.id for r in draw_retrieval(random.Random(seed), n, "en", pool=pool)]
            assert [r.id for r in table.draw(random.Random(seed), n)] == expected
    a, b, c, d, e, f = pool
    assert table.clear([a, c, e]) and table.clear([b, d])
    assert not table.clear([a, b]) and not table.clear([e, a, f])  # "Glass Crown" inside the other keyword
    assert not ClashTable(pool[::-1]).clear([a, b])  # the table's earlier record holds the later one's keyword
    assert not table.clear([a, c, a])  # a record twice overlaps itself
    assert not table.clear([_record("g", "Quorvane", "Glass Crown")])  # not one of the table's records


def test_keyword_clashes_are_found_in_shipped_and_own_records() -> None:
    shipped = retrieval_records("en")
    drawn = list(shipped[:20])
    assert keyword_clash(drawn, "en") is None and keyword_clash(drawn) is None
    assert keyword_clash([*drawn[:3], drawn[1]], "en") == (1, 3)  # a record drawn twice overlaps itself
    own = _clashing_pool()[:2]
    assert keyword_clash([*drawn[:2], *own], "en") == (2, 3)  # a's keyword inside b's
    with pytest.raises(NeedleDataError, match="keywords of a and b overlap"):
        check_keywords(own, "en")


def test_draws_are_reproducible_and_vary_with_the_seed() -> None:
    first = [r.id for r in draw_retrieval(random.Random(7), 20, "en")]
    again = [r.id for r in draw_retrieval(random.Random(7), 20, "en")]
    other = [r.id for r in draw_retrieval(random.Random(8), 20, "en")]
    assert first == again
    assert first != other
    state = random.getstate()
    draw_retrieval(random.Random(9), 5, "zh")
    assert random.getstate() == state  # global random state untouched


def test_impossible_requests_are_user_errors() -> None:
    with pytest.raises(NeedleDataError, match="cannot draw"):
        draw_retrieval(random.Random(0), len(retrieval_records("en")) + 1, "en")
    with pytest.raises(NeedleDataError, match="no language"):
        retrieval_records("fr")
    with pytest.raises(NeedleDataError, match="2 to 5"):
        reasoning_chains("en", 6)


# ---------------------------------------------------------------------------------------------------------------------
# Reasoning chains: the answer follows from the triples alone
# ---------------------------------------------------------------------------------------------------------------------
def _walk(facts: list[Fact], question: str) -> tuple[list[str], list[str]]:
    """Derive the hop path from the triples: start at the only subject named in the question that no fact points
    to, then follow the one outgoing fact of each entity until none is left."""
    outgoing: dict[str, Fact] = {}
    for fact in facts:
        assert fact.subject not in outgoing, "an entity with two outgoing facts makes the walk ambiguous"
        outgoing[fact.subject] = fact
    targets = {f.object for f in facts}
    starts = [s for s in outgoing if s not in targets and s in question]
    assert len(starts) == 1, starts
    path, relations = [starts[0]], []
    while path[-1] in outgoing:
        fact = outgoing[path[-1]]
        relations.append(fact.relation)
        path.append(fact.object)
        assert len(path) <= len(facts) + 1, "cycle"
    return path, relations


@pytest.mark.parametrize("lang", LANGS)
def test_every_chain_answer_is_derived_from_its_triples(lang: str) -> None:
    for chain in reasoning_chains(lang):
        for order in ("chain", "shuffled"):
            facts = chain_order(chain, order, random.Random(chain.id))
            path, relations = _walk(facts, chain.question)
            assert len(relations) == chain.steps == len(facts)  # every fact is used
            assert path[-1] == chain.answer
            assert tuple(path) == chain.path
            assert path[0] == chain.question_entity


@pytest.mark.parametrize("lang", LANGS)
def test_no_single_fact_answers_the_question(lang: str) -> None:
    for chain in reasoning_chains(lang):
        entities = chain.path
        for fact in chain.facts:
            assert fact.subject in fact.text and fact.object in fact.text
            named = [e for e in entities if e in fact.text]
            assert len(named) == 2, (chain.id, fact.text)  # a fact names its two ends and nothing else of the chain
        # the question's entity occurs in the first fact only, the answer in the last fact only
        assert [chain.question_entity in f.text for f in chain.facts] == [True] + [False] * (chain.steps - 1)
        assert [chain.answer in f.text for f in chain.facts] == [False] * (chain.steps - 1) + [True]
        assert chain.answer not in chain.question
        relations = [f.relation for f in chain.facts]
        for first, second in itertools.pairwise(relations):
            assert first != second, chain.id  # no "teacher of the teacher" loops
            assert (first, second) != ("capital_of", "lies_in"), chain.id  # a capital lies in its own realm
        assert [e for e in entities if e in chain.question] == [chain.question_entity]


@pytest.mark.parametrize("lang", LANGS)
def test_chain_entities_are_unique_across_the_data(lang: str) -> None:
    seen: dict[str, str] = {}
    for chain in reasoning_chains(lang):
        for entity in chain.path:
            assert entity not in seen, (entity, chain.id, seen.get(entity))
            seen[entity] = chain.id
    retrieval_names = {r.subject for r in retrieval_records(lang)} | {r.keyword for r in retrieval_records(lang)}
    assert not retrieval_names & set(seen)


def test_chain_order_keeps_or_permutes_without_touching_the_chain() -> None:
    chain: ReasoningChain = reasoning_chains("en", 5)[0]
    assert chain_order(chain, "chain", random.Random(0)) == list(chain.facts)
    orders = {
        tuple(f.relation + f.subject for f in chain_order(chain, "shuffled", random.Random(s))) for s in range(30)
    }
    assert len(orders) > 1
    for order in orders:
        assert sorted(order) == sorted(f.relation + f.subject for f in chain.facts)
    assert chain_order(chain, "chain", random.Random(0)) == list(chain.facts)
    with pytest.raises(NeedleDataError):
        chain_order(chain, "backwards", random.Random(0))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------------
# Grids (hand-written from the report's Table 7 and the reference configs)
# ---------------------------------------------------------------------------------------------------------------------
DEPTHS_20 = (0, 5, 10, 15, 21, 26, 31, 36, 42, 47, 52, 57, 63, 68, 73, 78, 84, 89, 94, 100)
DEPTHS_11 = (0, 10, 21, 31, 42, 52, 63, 73, 84, 94, 100)
V1 = {
    "4k": ((1000, 2000, 3000, 4000), DEPTHS_20, (600, 1000, 600)),
    "8k": ((5000, 6000, 7000, 8000), DEPTHS_20, (800, 1300, 1000)),
    "32k": ((9000, 13000, 17000, 21000, 25000, 29000, 31000, 32000), DEPTHS_11, (3000, 3000, 3000)),
    "128k": ((16000, 32000, 48000, 64000, 80000, 96000, 112000, 128000), DEPTHS_11, (600, 3000, 600)),
    "200k": ((16000, 48000, 80000, 112000, 128000, 144000, 176000, 200000), DEPTHS_11, (600, 3000, 600)),
    "256k": ((32000, 128000, 256000), DEPTHS_11, (600, 3000, 600)),
    "1000k": ((20000, 160000, 300000, 440000, 580000, 720000, 860000, 1000000), DEPTHS_11, (600, 3000, 600)),
}
V2_LENGTHS = {
    "4k": (1000, 2000, 3000, 4000),
    "8k": (1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000),
    "32k": (1000, 4000, 8000, 12000, 16000, 20000, 24000, 28000, 32000),
    "128k": (1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000),
    "200k": (1000, 25000, 50000, 75000, 100000, 125000, 150000, 175000, 200000),
    "1000k": (1000, 125000, 250000, 375000, 500000, 625000, 750000, 875000, 1000000),
}


@pytest.mark.parametrize("size", list(V1))
def test_v1_grid_equals_the_reference_numbers(size: str) -> None:
    lengths, depths, (srt, mrt, mrs) = V1[size]
    g = grid.v1_grid(size.upper())
    assert g.lengths == lengths
    assert g.depths == depths
    assert (g.repeats("s-rt"), g.repeats("m-rt"), g.repeats("m-rs")) == (10, 25, 10)
    assert (g.buffer("en", "s-rt"), g.buffer("en", "m-rt"), g.buffer("en", "m-rs")) == (srt, mrt, mrs)
    assert {g.buffer("zh", t) for t in ("s-rt", "m-rt", "m-rs")} == {200}


@pytest.mark.parametrize("size", list(V2_LENGTHS))
def test_v2_grid_equals_the_reference_numbers(size: str) -> None:
    g = grid.v2_grid(size)
    assert g.lengths == V2_LENGTHS[size]
    assert g.depths == (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
    assert g.buffer("en", "m-rt") == (500 if size in ("4k", "8k") else 3000)
    assert g.buffer("zh", "s-rt") == 200
    with pytest.raises(NeedleDataError):
        grid.v2_grid("256k")


def test_item_counts_per_cell_follow_from_the_grid() -> None:
    four = grid.v1_grid("4k")
    assert four.item_count("s-rt") == 800  # 4 lengths x 20 depths x 10
    assert four.item_count("m-rt") == 100  # 4 lengths x 25, each item one needle per depth
    assert four.needles_per_item("m-rt") == 20
    assert four.item_count("m-rs") == 3200  # 4 step counts x 4 lengths x 20 depths x 10
    assert four.needles_per_item("m-rs", steps=4) == 4
    big = grid.v1_grid("128k")
    assert (big.item_count("s-rt"), big.item_count("m-rt"), big.item_count("m-rs")) == (880, 200, 3520)
    assert big.needles_per_item("m-rt") == 11
    small = grid.v1_grid("256k")
    assert (small.item_count("s-rt"), small.item_count("m-rt"), small.item_count("m-rs")) == (330, 75, 1320)
    assert grid.v2_grid("200k").item_count("s-rt") == 990  # 9 lengths x 11 depths x 10
    sweep = grid.NeedleCountSweep()
    assert sweep.item_count() == 1000  # 5 counts x 4 lengths x 50
    assert sweep.depths(5) == (0, 25, 50, 75, 100)
    assert sweep.depths(1) == (0,)


def test_linear_depths_truncate_like_int() -> None:
    assert grid.linear_depths(20) == DEPTHS_20
    assert grid.linear_depths(3) == (0, 50, 100)
    assert grid.linear_depths(7) == (0, 16, 33, 50, 66, 83, 100)
    with pytest.raises(NeedleDataError):
        grid.linear_depths(0)
    with pytest.raises(NeedleDataError, match="no size"):
        grid.v1_grid("64k")


def test_chain_positions_follow_the_reference_rule_by_hand() -> None:
    # haystack 1000 tokens, facts of 10, 20, 30 tokens, gap = 10% of 1000 = 100
    assert grid.chain_positions(1000, [10, 20, 30], 50) == [500, 610, 730]
    assert grid.chain_positions(1000, [10, 20, 30], 0) == [0, 110, 230]
    # at 95% the second and third facts are clamped to the end of the text built so far
    assert grid.chain_positions(1000, [10, 20, 30], 95) == [950, 1010, 1030]
    assert grid.chain_positions(1000, [10, 20], 21, gap_tokens=5) == [210, 225]
    assert grid.achieved_depths([500, 610, 730], 1060) == [47.1698, 57.5472, 68.8679]
    with pytest.raises(NeedleDataError):
        grid.chain_positions(1000, [10], 101)


@pytest.mark.parametrize("depth", [0, 21, 52, 84, 94, 100])
def test_chain_positions_match_a_real_splice(depth: int) -> None:
    haystack = list(range(5000))
    needles = [[-1] * 40, [-2] * 55, [-3] * 25, [-4] * 70, [-5] * 33]
    positions = grid.chain_positions(len(haystack), [len(n) for n in needles], depth)
    text = list(haystack)
    for start, needle in zip(positions, needles, strict=True):
        text[start:start] = needle  # insert left to right, as the engine will
    assert len(text) == 5000 + sum(len(n) for n in needles)
    for start, needle in zip(positions, needles, strict=True):
        assert text[start : start + len(needle)] == needle  # an earlier offset never moves
    for (a, first), b in zip(zip(positions, needles, strict=True), positions[1:], strict=False):
        assert b >= a + len(first)  # facts never overlap and keep chain order


def test_spread_depths_kamradt() -> None:
    assert grid.spread_depths(40, 3) == [40.0, 60.0, 80.0]
    assert grid.spread_depths(0, 4) == [0.0, 25.0, 50.0, 75.0]
    assert grid.spread_depths(100, 2) == [100.0, 100.0]
