"""The `needlebench` needle kind compiled by the real pipeline, the shipped NeedleBench specs, and the overall score.

Small grids with the real cl100k_base and o200k_base tokenizers over the embedded English and Chinese corpora. Every
expected value is computed here from its definition (the item's own fields, a fresh tokenizer, the paper's counts),
never read back from the module under test.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from needlec.compile.items import context_of
from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
from needlec.compile.size import config_size
from needlec.errors import SpecError
from needlec.scoring.aggregates import Scored
from needlec.scoring.api import score_response
from needlec.scoring.summary import build_summary

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs" / "needlebench"
TOKENIZERS = ("cl100k_base", "o200k_base")

SMALL = f"""\
extends: {(SPECS / "base.yaml").as_posix()}
name: nbtest
title: NeedleBench test grid
variants:
  task:
    s-rt:
      grid: {{lengths: [700, 1500], depths: [0, 47, 100], repeats: 2}}
    m-rt:
      task: m-rt
      grid: {{lengths: [2500], depths: [0], repeats: 2}}
      needle: {{task: m-rt, needles: 6}}
      placement: {{multi: [0, 21, 42, 63, 84, 100]}}
    m-rs:
      task: m-rs
      grid: {{lengths: [1800], depths: [0, 52, 94], repeats: 1}}
      needle: {{task: m-rs, needles: [2, 5]}}
      placement: {{multi: {{step: 10}}}}
    m-rs-shuffled:
      task: m-rs
      grid: {{lengths: [1800], depths: [10], repeats: 2}}
      needle: {{task: m-rs, needles: [3, 4], order: shuffled, draw: per_item, recall_guide: false}}
      placement: {{multi: {{step: 10}}}}
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """config name -> items of both tokenizers, from one compile of the small grid."""
    folder = tmp_path_factory.mktemp("nb")
    spec = folder / "nbtest.yaml"
    spec.write_text(SMALL, encoding="utf-8")
    out = folder / "out"
    compile_spec(spec, out, CompileOptions(progress=False))
    items: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "data").glob("*/*.jsonl")):
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        items.setdefault(path.parent.name, []).extend(rows)
    return items


def _all(compiled: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [item for rows in compiled.values() for item in rows]


def test_every_config_and_item_count(compiled: dict[str, list[dict[str, Any]]]) -> None:
    # per config: 2 tokenizers x 2 question positions, languages en/zh
    per_position = {"s-rt": 2 * 3 * 2, "m-rt": 1 * 1 * 2, "m-rs": 1 * 3 * 2, "m-rs-shuffled": 1 * 1 * 2 * 2}
    for task, count in per_position.items():
        for lang in ("en", "zh"):
            for position in ("after", "before"):
                assert len(compiled[f"{task}-{lang}-{position}"]) == 2 * count


def test_exact_lengths_for_both_tokenizers(compiled: dict[str, list[dict[str, Any]]]) -> None:
    encoders = {name: tiktoken.get_encoding(name) for name in TOKENIZERS}
    for item in _all(compiled):
        context = context_of(item)
        assert len(encoders[item["tokenizer"]].encode(context, disallowed_special=())) == item["context_length"]
        assert item["context_tokens"] == item["context_length"]


def test_no_replacement_or_split_character(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for item in _all(compiled):
        for message in item["messages"]:
            text = message["content"]
            assert "\ufffd" not in text
            assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text)  # no lone surrogate from a cut code unit
        if item["languages"]["haystack"] == "zh":
            context = context_of(item)
            # a Chinese window starts and ends on whole characters: every character round-trips through UTF-8
            assert context.encode("utf-8").decode("utf-8") == context
            assert any("\u4e00" <= c <= "\u9fff" for c in context[:50])


def test_every_needle_recorded_at_its_achieved_depth(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for item in _all(compiled):
        context = context_of(item)
        encoder = tiktoken.get_encoding(item["tokenizer"])
        assert item["needles"], item["id"]
        for needle in item["needles"]:
            assert context[needle["char_offset"] :].startswith(needle["text"])
            before = len(encoder.encode(context[: needle["char_offset"]], disallowed_special=()))
            # the offset counts the tokens before the needle; BPE can merge one token across the seam
            assert abs(before - needle["token_offset"]) <= 1
            depth = 100 * needle["token_offset"] / item["context_tokens"]
            assert needle["depth_percent"] == pytest.approx(depth, abs=0.01)
            assert abs(needle["depth_percent"] - needle["target_depth_percent"]) <= 6
            assert needle["language"] == item["languages"]["needle"]


def test_mrt_keywords_unique_and_never_nested(compiled: dict[str, list[dict[str, Any]]]) -> None:
    items = [i for name, rows in compiled.items() if name.startswith("m-rt-") for i in rows]
    assert items
    for item in items:
        assert item["task"] == "m-rt"
        assert len(item["needles"]) == len(item["answers"]) == 6
        spellings = [[a.casefold() for a in fact] for fact in item["answers"]]
        for i, mine in enumerate(spellings):
            for j, theirs in enumerate(spellings):
                if i != j:
                    assert not any(a in b for a in mine for b in theirs), (item["id"], mine, theirs)
        keywords = item["structure"]["keywords"]
        assert keywords == [fact[0] for fact in item["answers"]]
        for keyword, needle in zip(keywords, item["needles"], strict=True):
            assert keyword in needle["text"]
        # one needle per listed depth, in order
        assert [n["target_depth_percent"] for n in item["needles"]] == [0, 21, 42, 63, 84, 100]
        assert item["scoring"]["per_needle"] is True


def _derive(structure: dict[str, Any]) -> str:
    """Follow the chain from the question's entity, one fact per hop, as the item's `derivation` says."""
    by_subject = {f["subject"]: f["object"] for f in structure["facts"]}
    assert len(by_subject) == structure["steps"]
    entity = structure["question_entity"]
    for _ in range(structure["steps"]):
        entity = by_subject[entity]
    return str(entity)


def test_mrs_answers_follow_from_the_recorded_chain(compiled: dict[str, list[dict[str, Any]]]) -> None:
    items = [i for name, rows in compiled.items() if name.startswith("m-rs") for i in rows]
    assert items
    shuffled_seen = False
    for item in items:
        structure = item["structure"]
        answer = _derive(structure)
        assert answer == item["answers"][0][0]
        assert structure["question_entity"] in item["question"]
        assert answer not in item["question"]
        assert item["case"] == f"steps{structure['steps']}"
        assert len(item["needles"]) == structure["steps"]
        for fact, needle in zip(structure["facts"], item["needles"], strict=True):
            assert fact["subject"] in needle["text"] and fact["object"] in needle["text"]
        positions = [f["position"] for f in structure["facts"]]
        assert sorted(positions) == list(range(structure["steps"]))
        if structure["order"] == "ordered":
            assert positions == sorted(positions)
        else:
            shuffled_seen = shuffled_seen or positions != sorted(positions)
    assert shuffled_seen


def test_mrs_needles_sit_at_the_step_depths(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for name in ("m-rs-en-after", "m-rs-zh-after", "m-rs-zh-before"):
        for item in compiled[name]:
            d = item["depth_percent"]
            wanted = [min(100.0, d + 10 * i) for i in range(len(item["needles"]))]
            assert [n["target_depth_percent"] for n in item["needles"]] == wanted
            for needle, target in zip(item["needles"], wanted, strict=True):
                assert abs(needle["depth_percent"] - target) <= 6


def test_per_repeat_draw_shares_the_needle_across_cells(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for name in ("s-rt-en-after", "s-rt-zh-before"):
        by_repeat: dict[int, set[str]] = {}
        for item in compiled[name]:
            by_repeat.setdefault(item["repeat"], set()).add(item["needles"][0]["text"])
        assert all(len(texts) == 1 for texts in by_repeat.values())  # every length and depth of a repeat
        assert len(set.union(*by_repeat.values())) == 2  # the two repeats differ
    per_item = {item["needles"][0]["text"] for item in compiled["m-rs-shuffled-en-after"]}
    assert len(per_item) > 1


def test_question_position_and_recall_guide(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for name, rows in compiled.items():
        for item in rows:
            assert item["question_position"] == name.rsplit("-", 1)[1]
            user = item["messages"][-1]["content"]
            guide = "look back through the document" in user or "找出与问题有关的内容" in user
            assert guide == (not name.startswith("m-rs-shuffled"))
            assert item["family"] == "needlebench"


def test_bad_needle_counts_are_spec_errors(tmp_path: Path) -> None:
    for needle in ("{task: m-rs, needles: [1, 2]}", "{task: s-rt, needles: 3}", "{task: m-rs, needles: [2, 2]}"):
        spec = tmp_path / "bad.yaml"
        spec.write_text(
            f"extends: {(SPECS / 'base.yaml').as_posix()}\nname: bad\ntitle: bad\nneedle: {needle}\nvariants: null\n",
            encoding="utf-8",
        )
        with pytest.raises(SpecError):
            load_plan(spec)


# ---------------------------------------------------------------------------------------------------- shipped specs

V1_DEPTHS_20 = [0, 5, 10, 15, 21, 26, 31, 36, 42, 47, 52, 57, 63, 68, 73, 78, 84, 89, 94, 100]
V1_DEPTHS_11 = [0, 10, 21, 31, 42, 52, 63, 73, 84, 94, 100]
V2_DEPTHS = list(range(0, 101, 10))
# Lengths of the v1 grid as the paper and the reference configs give them (written out by hand).
V1_LENGTHS = {
    "4k": [1000, 2000, 3000, 4000],
    "8k": [5000, 6000, 7000, 8000],
    "32k": [9000, 13000, 17000, 21000, 25000, 29000, 31000, 32000],
    "128k": [16000, 32000, 48000, 64000, 80000, 96000, 112000, 128000],
    "200k": [16000, 48000, 80000, 112000, 128000, 144000, 176000, 200000],
    "256k": [32000, 128000, 256000],
    "1000k": [20000, 160000, 300000, 440000, 580000, 720000, 860000, 1000000],
}


@pytest.mark.parametrize("size", list(V1_LENGTHS))
def test_shipped_spec_reproduces_the_v1_grid(size: str) -> None:
    plan = load_plan(SPECS / f"needlebench-{size}.yaml")
    depths = V1_DEPTHS_20 if size in ("4k", "8k") else V1_DEPTHS_11
    lengths = V1_LENGTHS[size]
    n_lengths = len(lengths)
    # items per language and question position, per tokenizer: S-RT lengths x depths x 10,
    # M-RT lengths x 25 (one needle per depth), M-RS 4 chain lengths x lengths x depths x 10
    expected = {
        "s-rt": n_lengths * len(depths) * 10,
        "m-rt": n_lengths * 25,
        "m-rs": 4 * n_lengths * len(depths) * 10,
    }
    for lang in ("en", "zh"):
        for task, count in expected.items():
            config = plan.config(f"{task}-{lang}-after")
            spec = config.spec
            assert spec.grid.length_points() == lengths
            assert spec.task == task
            assert spec.needle.language == lang
            items = config_size(config, {}).items
            assert items == count * len(TOKENIZERS), (size, task, lang)
            if task == "m-rt":
                assert spec.placement.multi == depths
                assert spec.grid.repeats == 25
            else:
                assert config.depth_points() == depths
        assert plan.config(f"m-rt-{lang}-after").spec.needle.needles == len(depths)
    haystacks = {c.spec.haystack.sources[0].corpus for c in plan.configs}
    assert haystacks == {"web-bible", "prc-statutes"}


def test_256k_has_no_v2_configs() -> None:
    # NeedleBench v2 has no 256K grid: only the three v1 tasks, in two languages and two question positions
    plan = load_plan(SPECS / "needlebench-256k.yaml")
    names = {c.name for c in plan.configs}
    assert len(names) == 12
    assert not any(name.startswith("v2-") for name in names)


@pytest.mark.parametrize("size", list(V1_LENGTHS))
def test_size_files_are_what_the_script_writes(size: str) -> None:
    # the size files are generated, never edited by hand: rerunning the script must not change them
    path = SPECS.parents[1] / "scripts" / "build_needlebench_specs.py"
    module_spec = importlib.util.spec_from_file_location("build_needlebench_specs", path)
    assert module_spec is not None and module_spec.loader is not None
    script = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(script)
    assert size in script.SIZES
    assert (SPECS / f"needlebench-{size}.yaml").read_text(encoding="utf-8") == script.spec_text(size)


def test_4k_counts_match_the_paper() -> None:
    plan = load_plan(SPECS / "needlebench-4k.yaml")
    per_tokenizer = {t: config_size(plan.config(f"{t}-zh-after"), {}).items // 2 for t in ("s-rt", "m-rt", "m-rs")}
    assert per_tokenizer == {"s-rt": 800, "m-rt": 100, "m-rs": 3200}
    assert plan.config("m-rt-en-after").spec.needle.needles == 20


@pytest.mark.parametrize("size", ["4k", "32k", "1000k"])
def test_shipped_spec_offers_the_v2_grid(size: str) -> None:
    plan = load_plan(SPECS / f"needlebench-{size}.yaml")
    v2_lengths = {
        "4k": [1000, 2000, 3000, 4000],
        "32k": [1000, 4000, 8000, 12000, 16000, 20000, 24000, 28000, 32000],
        "1000k": [1000, 125000, 250000, 375000, 500000, 625000, 750000, 875000, 1000000],
    }[size]
    for task in ("s-rt", "m-rt", "m-rs"):
        spec = plan.config(f"v2-{task}-en-after").spec
        assert spec.grid.length_points() == v2_lengths
        assert spec.scoring.alpha == 0
    assert plan.config("v2-s-rt-zh-after").depth_points() == V2_DEPTHS
    assert plan.config("v2-m-rt-zh-after").spec.placement.multi == V2_DEPTHS
    assert plan.config("v2-m-rs-en-after").spec.needle.order == "shuffled"


# ---------------------------------------------------------------------------------------------------------- scoring


def _response(item: dict[str, Any], lang_right: dict[str, Any]) -> str:
    """A synthetic response: the keywords a rule says are known, nothing else."""
    rule = lang_right[item["task"]][item["languages"]["needle"]]
    if item["task"] == "m-rt":
        return " ".join(fact[0] for fact in item["answers"][:rule])
    right = rule(item)
    return f"It is {item['answers'][0][0]}." if right else ""


def test_overall_scores_from_synthetic_responses(compiled: dict[str, list[dict[str, Any]]]) -> None:
    # S-RT: EN always right (100), ZH right only in repeat 0 (50): task 75.
    # M-RT (6 needles): EN names 3 keywords (50), ZH all 6 (100): task 75.
    # M-RS: EN right (100), ZH silent (0): task 50. An empty response scores 0 also with alpha 0.2.
    rules = {
        "s-rt": {"en": lambda i: True, "zh": lambda i: i["repeat"] == 0},
        "m-rt": {"en": 3, "zh": 6},
        "m-rs": {"en": lambda i: True, "zh": lambda i: False},
    }
    rows = []
    for name, items in compiled.items():
        if not name.endswith("-after"):
            continue
        for item in items:
            score, _ = score_response(item, _response(item, rules))
            rows.append(Scored(item, score))
    nb = build_summary(rows)["families"]["needlebench"]
    assert nb["tasks"] == {"s-rt": 75.0, "m-rt": 75.0, "m-rs": 50.0}
    assert nb["overall_v1"] == pytest.approx(0.4 * 75 + 0.3 * 75 + 0.3 * 50)  # 67.5
    assert nb["overall_v2"] == pytest.approx((75 + 75 + 50) / 3)  # 66.6667


def test_v1_similarity_credit_and_v2_binary() -> None:
    item = {
        "answers": [["Ulkix mark"]],
        "needles": [{"text": "The coin is the Ulkix mark.", "role": "target"}],
        "scoring": {"metric": "needlebench", "alpha": 0.2, "version": 1},
    }
    # "The coin is the Ulkix." vs the needle, whitespace removed: "Thecoinisthe" + "Ulkix." (18 chars) against
    # "ThecoinistheUlkixmark." (22 chars): 4 deletions ("mark"), so 0.2 x (1 - 4/22).
    score, _ = score_response(item, "The coin is the Ulkix.")
    assert score == pytest.approx(0.2 * (1 - 4 / 22))
    item["scoring"] = {"metric": "needlebench", "alpha": 0, "version": 1}
    assert score_response(item, "The coin is the Ulkix.")[0] == 0.0
    assert score_response(item, "the ulkix mark")[0] == 0.0  # the keyword check is case-sensitive
    item["answers"] = [["Ulkix mark"], ["Zorvath"], ["Quelek"]]
    item["scoring"] = {"metric": "needlebench", "per_needle": True, "alpha": 0.2, "version": 1}
    assert score_response(item, "Quelek and the Ulkix mark")[0] == pytest.approx(2 / 3)


def test_8k_spec_has_the_mrt_needle_count_sweep() -> None:
    plan = load_plan(SPECS / "needlebench-8k.yaml")
    # Hand-written linspace(0, 100, n) truncated: the reference's depth lists for 1, 5 and 10 needles.
    lists = {1: [0], 5: [0, 25, 50, 75, 100], 10: [0, 11, 22, 33, 44, 55, 66, 77, 88, 100], 20: V1_DEPTHS_20}
    for n, depths in lists.items():
        config = plan.config(f"m-rt-sweep{n}-zh-after")
        assert config.spec.placement.multi == depths
        assert config.spec.needle.needles == n
        # 4 lengths x 50 repeats per tokenizer
        assert config_size(config, {}).items == 4 * 50 * len(TOKENIZERS)
    assert plan.config("m-rt-sweep15-en-after").spec.grid.length_points() == [5000, 6000, 7000, 8000]


def test_chinese_needle_at_the_end_gets_an_exact_cut(tmp_path: Path) -> None:
    # A Chinese S-RT needle at depth 100 in 2,000 cl100k tokens of statutes: near the first window's start every
    # character is two tokens, so the count steps from 2,001 to 1,999; the compile must still hit 2,000 exactly.
    spec = tmp_path / "end.yaml"
    spec.write_text(
        f"extends: {(SPECS / 'base.yaml').as_posix()}\nname: nbend\ntitle: end\ntokenizers: [cl100k_base]\n"
        "grid: {lengths: [2000], depths: [100], repeats: 3}\n"
        "variants: {lang: {en: null}, question: {before: null}}\n",
        encoding="utf-8",
    )
    compile_spec(spec, tmp_path / "out", CompileOptions(progress=False))
    rows = [json.loads(line) for line in (tmp_path / "out" / "data").glob("*/*.jsonl").__next__().open()]
    encoder = tiktoken.get_encoding("cl100k_base")
    assert len(rows) == 3
    for item in rows:
        context = context_of(item)
        assert len(encoder.encode(context, disallowed_special=())) == 2000
        assert context.endswith(item["needles"][0]["text"])
        assert "\ufffd" not in context


def test_reference_buffers_example_cuts_each_context_short_by_its_buffer(tmp_path: Path) -> None:
    """examples/needlebench-8k-reference-buffers.yaml: English S-RT contexts are 800 tokens short of the grid length
    and Chinese ones 200 (the later `lang` axis wins), recounted with the real tokenizers; labels keep the length."""
    out = tmp_path / "out"
    select = {
        "config": {"s-rt-en-after", "s-rt-zh-after", "m-rs-en-after"},
        "length": {"5000"},
        "depth": {"0", "52"},
        "repeat": {"0"},
    }
    compile_spec(
        ROOT / "examples" / "needlebench-8k-reference-buffers.yaml", out, CompileOptions(progress=False, select=select)
    )
    encoders = {name: tiktoken.get_encoding(name) for name in TOKENIZERS}
    buffers = {"s-rt-en-after": 800, "s-rt-zh-after": 200, "m-rs-en-after": 1000}
    seen: set[str] = set()
    for path in sorted((out / "data").glob("*/*.jsonl")):
        for line in path.open(encoding="utf-8"):
            item = json.loads(line)
            seen.add(item["config"])
            assert item["context_length"] == 5000
            tokens = len(encoders[item["tokenizer"]].encode(context_of(item), disallowed_special=()))
            assert tokens == 5000 - buffers[item["config"]], (item["id"], tokens)
    assert seen == set(buffers)
