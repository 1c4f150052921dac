"""NeedleBench windows and depths at the shortest length, checked by `scripts/check_windows.py`.

The checker reads the compiled items and the haystack text only and applies its own sentence rules, so
it does not share the placement engine's boundary index. Its own tests below feed it windows written
by hand, with defects placed on purpose, to show that it finds each kind.

The slice is the whole 1,000-token column of `specs/needlebench/needlebench-4k.yaml` for one tokenizer
and two repeats: every task, both languages and question positions, every depth, with the window
starts drawn at random per item (a property over a few hundred random windows). 1,000 tokens is the
hardest length of the family: Chinese statute sentences average about 65 tokens there, and M-RT puts
20 needles in the window.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
from needlec.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "needlebench" / "needlebench-4k.yaml"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_windows", ROOT / "scripts" / "check_windows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nb-1000") / "out"
    select = {"length": {"1000"}, "repeat": {"0", "1"}, "tokenizer": {"cl100k_base"}}
    compile_spec(SPEC, out, CompileOptions(select=select, progress=False))
    return out


def test_every_window_is_whole_sentences_and_every_needle_within_tolerance(dataset: Path) -> None:
    found = _checker().check(SPEC, dataset)
    assert found == {}, {key: examples[:2] for key, examples in found.items()}


def test_the_slice_holds_both_languages_and_short_windows_made_up(dataset: Path) -> None:
    rows = [json.loads(line) for path in (dataset / "data").glob("*/*.jsonl") for line in path.open(encoding="utf-8")]
    assert len({r["config"] for r in rows}) == 24
    assert {r["languages"]["haystack"] for r in rows} == {"en", "zh"}
    # some windows of whole Chinese sentences needed breaks to be exact; they say how many
    breaks = [r for r in rows if (r.get("structure") or {}).get("window", {}).get("line_breaks")]
    assert any(r["languages"]["haystack"] == "zh" for r in breaks)
    # every item of a whole-sentence config records the count, 0 included: one schema per config, which
    # `datasets` needs when a file's first rows have no breaks and later ones do
    assert all(isinstance(r["structure"]["window"]["line_breaks"], int) for r in rows)


# The checker's own tests: windows written by hand.

HAYSTACK = "The ship left at dawn. Its crew was small! Nobody knew why? 船在黎明时出发。船员很少。"


def _item(start: int, end: int, context: str, needles: list[dict[str, Any]], tokens: int) -> dict[str, Any]:
    return {
        "context_span": {"message": 0, "start": 0, "end": len(context)},
        "messages": [{"role": "user", "content": context}],
        "haystack": {"start_char": start, "end_char": end},
        "context_tokens": tokens,
        "needles": needles,
    }


def test_the_checker_accepts_whole_sentences() -> None:
    check = _checker().check_item
    start = HAYSTACK.index("Its")
    end = HAYSTACK.index("Nobody") - 1  # after "small!"
    assert check(_item(start, end, HAYSTACK[start:end], [], 0), HAYSTACK, 5.0, None) == []
    zh = HAYSTACK.index("船员")
    assert check(_item(zh, len(HAYSTACK), HAYSTACK[zh:], [], 0), HAYSTACK, 5.0, None) == []


@pytest.mark.parametrize(
    ("start", "end", "kinds"),
    [
        (HAYSTACK.index("crew"), HAYSTACK.index("Nobody") - 1, {"starts inside a sentence"}),
        (HAYSTACK.index("rew"), HAYSTACK.index("Nobody") - 1, {"starts inside a sentence", "starts inside a word"}),
        (
            HAYSTACK.index("Its"),
            HAYSTACK.index("small") + 3,
            {"ends inside a sentence", "ends inside a word", "the context ends inside a sentence"},
        ),
        (
            HAYSTACK.index("船员"),
            HAYSTACK.index("很少"),
            {"ends inside a sentence", "the context ends inside a sentence"},
        ),
    ],
)
def test_the_checker_finds_cut_windows(start: int, end: int, kinds: set[str]) -> None:
    found = _checker().check_item(_item(start, end, HAYSTACK[start:end], [], 0), HAYSTACK, 5.0, None)
    assert {kind for kind, _ in found} == kinds


def test_the_checker_recounts_tokens_and_depths() -> None:
    import tiktoken

    encode = tiktoken.get_encoding("cl100k_base").encode_ordinary
    tail = "More words follow the key, so that its depth is not bounded by what the needles after it need. "
    context = "One two three four five six seven eight nine ten. The key is red. " + 2 * tail
    at = context.index("The key")
    before = len(encode(context[:at]))  # the words before the needle, counted by tiktoken itself
    total = len(encode(context))
    needle = {"id": "n0", "role": "target", "text": "The key is red.", "char_offset": at, "token_offset": before}
    end = len(context)
    ok = {**needle, "target_depth_percent": 100.0 * before / total}
    assert _checker().check_item(_item(0, end, context, [ok], total), context, 1.0, encode) == []
    far = {**needle, "target_depth_percent": 100.0 * before / total - 10}
    wrong = {**needle, "token_offset": before + 1, "target_depth_percent": 100.0 * before / total}
    found = _checker().check_item(_item(0, end, context, [far, wrong], total + 2), context, 1.0, encode)
    assert {kind for kind, _ in found} == {
        "needle beyond its depth tolerance",
        "wrong needle offset",
        "wrong context count",
    }


def test_needles_that_cannot_reach_their_depths_fail_validation(tmp_path: Path) -> None:
    # 20 M-RT needles one point apart at 1,000 tokens: the needles before the 20th take far more than
    # 19% + 6 points of the context, whatever the haystack
    spec = tmp_path / "packed.yaml"
    spec.write_text(
        f"extends: {SPEC}\n"
        "variants:\n"
        "  task:\n"
        "    m-rt:\n"
        "      task: m-rt\n"
        "      grid: {lengths: [1000, 2000], depths: [0], repeats: 2}\n"
        "      needle: {task: m-rt, needles: 20}\n"
        f"      placement: {{multi: {list(range(20))}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as caught:
        load_plan(spec)
    text = caught.value.render()
    assert f"{spec}:8:" in text and "placement.multi" in text
    assert "at 1,000 tokens the needles cannot reach their depths" in text
