"""Paired configs: the same grid cell draws the same values and window in every config of an axis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.items import build_item
from needlec.compile.pipeline import CompileOptions, Prepared, compile_spec
from needlec.compile.plan import ConfigPlan, Plan, load_plan
from needlec.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]

CROSS_LINGUAL = """\
name: pairs
title: Cross-lingual pair
languages: [en]
tokenizers: [cl100k_base]
haystack:
  sources: [{type: builtin, corpus: web-bible}]
  start: random
grid: {lengths: [600, 900], depths: [10, 50, 90], repeats: 2}
needle:
  needles: ["The gate code of the orchard is {{ code }}."]
  question: What is the gate code of the orchard?
  answers: ["{{ code }}"]
  vars: {code: {kind: digits, length: 9}}
prompt: {user: "{{ context }}\\n\\n{{ question }}"}
scoring: {metric: contains}
placement: {depth_tolerance: 20}  # short contexts of long verses
variants:
  lang:
    en: {}
    de:
      item_languages: {needle: de, question: de}
      needle:
        needles: ["Der Torcode des Obstgartens lautet {{ code }}."]
        question: Wie lautet der Torcode des Obstgartens?
    fresh:
      redraw: true
"""


def _by_cell(folder: Path, config: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    rows = [json.loads(line) for line in (folder / "data" / config / "cl100k_base.jsonl").open(encoding="utf-8")]
    return {(r["context_length"], r["depth_percent"], r["case"], r["haystack"]["id"], r["repeat"]): r for r in rows}


@pytest.fixture(scope="module")
def cross_lingual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pairs")
    (folder / "pairs.yaml").write_text(CROSS_LINGUAL, encoding="utf-8")
    out = folder / "out"
    compile_spec(folder / "pairs.yaml", out, CompileOptions(progress=False))
    return out


def test_cross_lingual_configs_share_values_and_windows(cross_lingual: Path) -> None:
    en, de = _by_cell(cross_lingual, "en"), _by_cell(cross_lingual, "de")
    assert set(en) == set(de) and len(en) == 2 * 3 * 2
    starts = set()
    for cell, row in en.items():
        other = de[cell]
        assert row["values"] == other["values"]
        assert row["haystack"]["start_char"] == other["haystack"]["start_char"]
        assert row["answers"] == other["answers"] == [[row["values"]["code"]]]
        assert row["question"] != other["question"]
        starts.add(row["haystack"]["start_char"])
    # the draws still vary from cell to cell: pairing is across configs, not across the grid
    assert len({r["values"]["code"] for r in en.values()}) == len(en)
    assert len(starts) > 1
    assert de[next(iter(de))]["languages"] == {"needle": "de", "haystack": "en", "question": "de"}


def test_redraw_gives_a_config_its_own_draws(cross_lingual: Path) -> None:
    en, fresh = _by_cell(cross_lingual, "en"), _by_cell(cross_lingual, "fresh")
    # 12 independent 9-digit codes: a single coincidence has probability about 1e-8
    assert all(en[cell]["values"]["code"] != fresh[cell]["values"]["code"] for cell in en)


def test_redraw_must_be_a_boolean(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(CROSS_LINGUAL.replace("redraw: true", "redraw: sometimes"), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_plan(tmp_path / "bad.yaml")
    assert "variants.lang.fresh.redraw" in caught.value.render()


def _items(prepared: Prepared, plan: Plan, config: ConfigPlan, cells: set[tuple[Any, ...]]) -> dict[Any, Any]:
    haystacks = {h.id: h for h in prepared.haystacks(config.spec)}
    kind = prepared.kind(config)
    out = {}
    for key in plan.keys(config, list(haystacks)):
        cell = (key.length, key.depth, key.case, key.haystack, key.repeat)
        if cell in cells:
            view = prepared.view(config.spec, haystacks[key.haystack], key.tokenizer, key.length)
            out[cell] = build_item(plan.spec.name, config, key, view, kind)[0]
    return out


def test_direct_and_latent_nolima_questions_share_values_and_windows(tmp_path: Path) -> None:
    spec = tmp_path / "nolima-random.yaml"
    spec.write_text(f"extends: {ROOT / 'specs' / 'nolima.yaml'}\nhaystack: {{start: random}}\n", encoding="utf-8")
    plan = load_plan(spec, tmp_path / "cache")
    prepared = Prepared(plan, tmp_path / "cache")
    main, direct, mc = plan.config("main"), plan.config("direct"), plan.config("mc")
    cases = sorted(prepared.kind(direct).cases())[:3]
    cells = {(8000, depth, case, h, 0) for depth in (20.0, 60.0) for case in cases for h in ("h0", "h3")}
    latent, plain, options = (_items(prepared, plan, c, cells) for c in (main, direct, mc))
    assert set(latent) == set(plain) == set(options) == cells
    for cell in cells:
        a, b, c = latent[cell], plain[cell], options[cell]
        assert a.haystack == b.haystack == c.haystack  # same haystack text and window
        assert a.values == b.values and a.answers == b.answers
        assert a.needles[0].text == b.needles[0].text
        assert a.question != b.question and b.values is not None and b.values["w_n"] in b.question
        assert c.answers == a.answers  # the options are drawn after the character
