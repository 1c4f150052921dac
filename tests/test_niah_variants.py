"""The NIAH spec's fitting, prefill and Kamradt-grid configs, re-checked from the output alone."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from conftest import SPECS

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
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


def test_kamradt_grid_is_fifteen_by_fifteen() -> None:
    config = load_plan(SPECS / "niah.yaml").config("kamradt-grid")
    lengths = config.spec.grid.length_points()
    assert len(lengths) == 15 and lengths[0] == 1000 and lengths[-1] == 128000
    steps = {b - a for a, b in itertools.pairwise(lengths)}
    assert max(steps) - min(steps) <= 1  # evenly spaced, up to rounding (127000 / 14 per step)
    depths = config.depth_points()
    assert len(depths) == 15 and depths[0] == 0 and depths[-1] == 100
    assert abs(depths[1] - 100 / 14) < 0.01
