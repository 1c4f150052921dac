"""The item fields a needle kind or the prompt may set, and the placement rules beyond Kamradt's spread.

A small multiple-choice kind (`draw_kind.py`, a real kind compiled by the real pipeline) checks the
optional `Draw` fields end to end without depending on any family's data. Kinds register before the
spec models are built, so those compiles run in a fresh interpreter that imports the kind first.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import random_depths
from needlec.errors import ContractError, SpecError
from needlec.spec.models import RandomDepthsRule

HERE = Path(__file__).resolve().parent

HEAD = """\
name: drawtest
title: Draw fields
tokenizers: [cl100k_base]
haystack: {sources: [{type: builtin, corpus: web-bible}]}
scoring: {metric: contains}
"""


def _compile(tmp_path: Path, body: str, with_kind: bool = False) -> list[dict[str, Any]]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEAD + body, encoding="utf-8")
    out = tmp_path / "out"
    if with_kind:
        script = "import sys, draw_kind; draw_kind.main(sys.argv[1], sys.argv[2])"
        done = subprocess.run(
            [sys.executable, "-c", script, str(spec), str(out)],
            cwd=HERE,
            env={**os.environ, "PYTHONPATH": str(HERE)},
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    else:
        compile_spec(spec, out, CompileOptions(progress=False))
    return [json.loads(line) for line in (out / "data" / "default" / "cl100k_base.jsonl").open(encoding="utf-8")]


def test_kind_fields_reach_the_item_and_rotations_share_one_draw(tmp_path: Path) -> None:
    rows = _compile(
        tmp_path,
        """\
grid: {lengths: [400], depths: [50], repeats: 2}
needle: {type: test_rotating_choice}
prompt:
  user: "{{ question }}\\n\\n{{ context }}\\n\\n{{ question }}\\n{{ options }}"
  answer_prefix: "Answer:"
  max_new_tokens: 50
placement: {depth_tolerance: 30}
""",
        with_kind=True,
    )
    assert len(rows) == 8
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["group"]["id"], []).append(row)
        assert row["task"] == "lantern"
        assert row["max_new_tokens"] == 3  # the kind's budget wins over the prompt's
        assert row["answer_prefix"] == "Answer:"
        assert row["question_position"] == "both"
        assert row["expected"] == "yes"
        assert row["scoring"]["metric"] == "choice"
        assert row["needles"][0]["language"] == "de"
        letter = row["answer_letter"]
        chosen = next(o["text"] for o in row["options"] if o["letter"] == letter)
        assert chosen == row["answers"][0][0]
        assert f"painted {chosen}." in row["needles"][0]["text"]
    assert len(groups) == 2  # one group per repeat
    for members in groups.values():
        assert sorted(m["group"]["rotation"] for m in members) == [0, 1, 2, 3]
        assert {m["group"]["size"] for m in members} == {4}
        assert len({m["answer_letter"] for m in members}) == 4
        assert len({m["seed"] for m in members}) == 1
        assert len({m["haystack"]["start_char"] for m in members}) == 1
        assert len({json.dumps(m["structure"]) for m in members}) == 1
        assert "/q@" not in members[0]["group"]["id"]


def test_step_rule_puts_each_needle_a_fixed_step_deeper(tmp_path: Path) -> None:
    rows = _compile(
        tmp_path,
        """\
grid: {lengths: [3000], depths: [20, 85], repeats: 1}
needle:
  needles: ["Ivo keeps the ledger.", "The ledger is in the loft.", "The loft key is under the bell."]
  question: Where is the loft key?
  answers: [under the bell]
prompt: {user: "{{ context }}\\n{{ question }}"}
placement: {multi: {step: 10}, depth_tolerance: 5}
""",
    )
    by_depth = {row["depth_percent"]: row for row in rows}
    assert [n["target_depth_percent"] for n in by_depth[20]["needles"]] == [20, 30, 40]
    assert [n["target_depth_percent"] for n in by_depth[85]["needles"]] == [85, 95, 100]
    for row in rows:
        for needle in row["needles"]:
            assert abs(needle["depth_percent"] - needle["target_depth_percent"]) <= 5


def test_random_rule_keeps_the_gap_and_the_range(tmp_path: Path) -> None:
    rows = _compile(
        tmp_path,
        """\
grid: {lengths: [4000], depths: [0], repeats: 6}
needle:
  needles: ["Ada hid the map.", "Bo hid the key.", "Cy hid the coin.", "Di hid the ring."]
  question: Who hid the key?
  answers: [Bo]
prompt: {user: "{{ context }}\\n{{ question }}"}
placement: {multi: {random: {low: 10, high: 90, min_gap: 15}}, depth_tolerance: 3}
""",
    )
    seen = set()
    for row in rows:
        targets = [n["target_depth_percent"] for n in row["needles"]]
        seen.add(tuple(targets))
        assert all(10 <= t <= 90 for t in targets)
        for a, b in itertools.combinations(targets, 2):
            assert abs(a - b) >= 15 - 1e-3
    assert len(seen) == 6  # every item draws its own depths


def test_random_depths_cover_the_range_evenly() -> None:
    rule = RandomDepthsRule(low=0, high=100, min_gap=0)
    rng = random.Random(7)
    values = [d for _ in range(4000) for d in random_depths(rule, 1, rng)]
    deciles = [sum(1 for v in values if k * 10 <= v < (k + 1) * 10) for k in range(10)]
    # 4,000 uniform draws: each decile expects 400; a 5-sigma band is about +-95
    assert all(300 <= count <= 500 for count in deciles), deciles


def test_random_depths_that_cannot_fit_are_refused() -> None:
    with pytest.raises(ContractError, match="do not fit"):
        random_depths(RandomDepthsRule(low=40, high=60, min_gap=15), 3, random.Random(0))


def test_an_infeasible_random_rule_is_a_spec_error_with_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        HEAD
        + """\
grid: {lengths: [1000], depths: [0], repeats: 1}
needle:
  needles: ["One.", "Two.", "Three."]
  question: Which?
  answers: [One]
prompt: {user: "{{ context }} {{ question }}"}
placement:
  multi: {random: {min_gap: 60}}
""",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as caught:
        compile_spec(spec, tmp_path / "out", CompileOptions(progress=False))
    text = caught.value.render()
    assert "placement.multi.random" in text and "spec.yaml:13:" in text  # the `random:` line
    assert not (tmp_path / "out").exists()
