"""The NIAH spec's fitting, prefill and Kamradt-grid configs, re-checked from the output alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SPECS

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
from needlec.errors import NeedlecError
from needlec.tokenizer import _tiktoken


def test_fit_counts_the_whole_prompt_and_prefill_is_written(tmp_path: Path) -> None:
    select = {
        "config": {"single", "single-fit", "single-prefill"},
        "length": {"4000"},
        "depth": {"50"},
        "tokenizer": {"cl100k_base"},
    }
    plan = load_plan(SPECS / "niah.yaml")
    lengths = plan.config("single-fit").spec.grid.length_points()
    assert lengths == plan.config("single").spec.grid.length_points() and 128000 in lengths
    spec = tmp_path / "short.yaml"
    spec.write_text(f"extends: {SPECS / 'niah.yaml'}\ngrid: {{lengths: [4000]}}\n", encoding="utf-8")
    compile_spec(spec, tmp_path / "out", CompileOptions(select=select, progress=False))
    tokenizer = _tiktoken("cl100k_base")
    found = {}
    for path in (tmp_path / "out" / "data").rglob("*.jsonl"):
        (item,) = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        found[item["config"]] = item
        whole = sum(tokenizer.count(m["content"]) for m in item["messages"])
        if item["config"] == "single-fit":
            assert whole == 4000  # counted independently: every message's content
        else:
            assert whole > 4000 and item["context_tokens"] == 4000
    assert set(found) == {"single", "single-fit", "single-prefill"}
    assert found["single-prefill"]["answer_prefix"] == "The sentence of the document that answers this is:"
    assert not found["single"].get("answer_prefix")


def test_kamradt_grid_follows_his_published_spacing() -> None:
    config = load_plan(SPECS / "niah.yaml").config("kamradt-grid")
    # By hand: 15 lengths from 1,000 to 128,000 in steps of 127,000 / 14 = 9,071.43 tokens,
    # each rounded to a whole token (1000 + 9071.43 = 10071.43 -> 10071, + 18142.86 -> 19143, ...).
    assert config.spec.grid.length_points() == [
        1000, 10071, 19143, 28214, 37286, 46357, 55429, 64500,
        73571, 82643, 91714, 100786, 109857, 118929, 128000,
    ]  # fmt: skip
    # By hand: 15 depths from 0% to 100% in steps of 100 / 14 = 7.14 points, rounded to whole
    # percents (7.14 -> 7, 28.57 -> 29, 78.57 -> 79, ...).
    assert config.depth_points() == [0, 7, 14, 21, 29, 36, 43, 50, 57, 64, 71, 79, 86, 93, 100]
    # every context is cut 200 tokens short of its length, the rest of the contract unchanged
    assert config.spec.length.buffer == 200 and config.spec.length.counted == "context"


def _items(folder: Path) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in sorted((folder / "data").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def test_buffer_cuts_the_counted_text_short_of_the_length(tmp_path: Path) -> None:
    tokenizer = _tiktoken("cl100k_base")
    select = {"config": {"kamradt-grid"}, "length": {"1000"}, "depth": {"50"}, "tokenizer": {"cl100k_base"}}
    compile_spec(SPECS / "niah.yaml", tmp_path / "grid", CompileOptions(select=select, progress=False))
    (item,) = _items(tmp_path / "grid")
    span = item["context_span"]
    assert isinstance(span, dict) and isinstance(item["messages"], list)
    context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
    assert item["context_length"] == 1000  # the label keeps the grid length
    assert tokenizer.count(context) == item["context_tokens"] == 1000 - 200

    # the whole prompt counted, with a buffer: every message's content adds up to length - buffer
    spec = tmp_path / "fit.yaml"
    spec.write_text(
        f"extends: {SPECS / 'niah.yaml'}\ngrid: {{lengths: [3000]}}\nlength: {{counted: prompt, buffer: 150}}\n",
        encoding="utf-8",
    )
    select = {"config": {"single"}, "depth": {"0", "100"}, "tokenizer": {"cl100k_base", "o200k_base"}}
    compile_spec(spec, tmp_path / "fit", CompileOptions(select=select, progress=False))
    items = _items(tmp_path / "fit")
    assert len(items) == 4
    for item in items:
        assert isinstance(item["messages"], list)
        counter = _tiktoken(str(item["tokenizer"]))
        assert sum(counter.count(m["content"]) for m in item["messages"]) == 3000 - 150 == item["prompt_tokens"]


def test_buffer_must_leave_room(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"extends: {SPECS / 'niah.yaml'}\nlength: {{buffer: 1000}}\n", encoding="utf-8")
    with pytest.raises(NeedlecError) as info:
        load_plan(spec)
    shown = info.value.render()
    assert "length.buffer" in shown and "smallest is 1000" in shown and "bad.yaml:" in shown
