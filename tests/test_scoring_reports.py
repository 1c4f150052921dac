"""The spec's `reports:` mapping: recorded per config in the manifest, obeyed by `needlec score`.

A tiny spec (two configs, three lengths, two depths) is compiled for real; responses are right or
wrong by a rule fixed here, so every expected mean and effective length below is worked out by
hand from the definitions on the scoring page.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import needlec
from needlec.errors import NeedlecError

NEEDLEC = str(Path(sys.executable).parent / "needlec")

SPEC = """\
name: tiny
title: Tiny report test
seed: 7
tokenizers: [cl100k_base]
haystack:
  sources:
    - type: builtin
      corpus: web-bible
grid:
  lengths: [250, 500, 1000]
  depths: [0, 50]
needle:
  needles: [The lighthouse keeper keeps a tortoise named Marmalade.]
  question: What is the name of the lighthouse keeper's tortoise?
  answers: [Marmalade]
prompt:
  user: "{{ context }}\\n\\n{{ question }}"
scoring:
  metric: contains
reports:
  show: [by_length, effective_length]
  effective_length: {rule: mlneedle, threshold: 0.75}
  baseline: {config: baseline}
variants:
  setting:
    baseline:
      reports: {show: [by_length, heatmap]}
    full: {}
"""

# Which (config, length, depth) cells are answered wrongly; every other item gets the answer.
WRONG = {("baseline", 1000, 50.0), ("full", 500, 0.0)}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reports")
    (root / "tiny.yaml").write_text(SPEC, encoding="utf-8")
    out = root / "ds"
    done = subprocess.run(
        [NEEDLEC, "compile", str(root / "tiny.yaml"), "-o", str(out), "-q"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return out


def _items(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((dataset / "data").rglob("*.jsonl")) for line in f.open()]


@pytest.fixture(scope="module")
def responses(dataset: Path) -> Path:
    rows = []
    for item in _items(dataset):
        cell = (item["config"], item["context_length"], float(item["depth_percent"]))
        rows.append({"id": item["id"], "response": "I do not know." if cell in WRONG else "It is Marmalade."})
    path = dataset.parent / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_manifest_records_each_configs_reports(dataset: Path) -> None:
    configs = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))["configs"]
    assert configs["full"]["reports"]["show"] == ["by_length", "effective_length"]
    assert configs["baseline"]["reports"]["show"] == ["by_length", "heatmap"]  # the variant's override
    assert configs["baseline"]["reports"]["baseline"] == {"config": "baseline", "length": None, "items": None}


def test_score_follows_the_recorded_reports(dataset: Path, responses: Path) -> None:
    report = dataset.parent / "report"
    done = subprocess.run(
        [NEEDLEC, "score", str(dataset), str(responses), "-o", str(report)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    full, base = summary["configs"]["full"], summary["configs"]["baseline"]
    always = {"family", "task", "metric", "metric_version", "n", "mean", "ci95", "ci_method", "reports"}
    assert set(full) - always == {"by_length", "effective_length"}
    assert set(base) - always == {"by_length", "heatmap"}
    # baseline config: 5 of 6 right -> 83.3333 points; full: 250 -> 100, 500 -> 50, 1000 -> 100
    assert base["mean"] == pytest.approx(83.3333)
    assert [row["mean"] for row in full["by_length"]] == [100.0, 50.0, 100.0]
    mlneedle = full["effective_length"]["mlneedle"]
    assert mlneedle["baseline"] == pytest.approx(83.3333)
    assert mlneedle["threshold"] == pytest.approx(0.75 * 83.3333, abs=1e-3)  # 62.5: 250 passes, 500 fails
    assert full["effective_length"]["headline"] == {
        "rule": "mlneedle",
        "threshold": 0.75,
        "effective_length": 250,
        "first_failing_length": 500,
    }
    plots = sorted(p.name for p in (report / "plots").iterdir())
    assert plots == [
        "baseline-by-length.png",
        "baseline-by-length.svg",
        "baseline-heatmap.png",
        "baseline-heatmap.svg",
        "full-by-length.png",
        "full-by-length.svg",
    ]


def test_a_baseline_length_is_taken_from_the_items(dataset: Path, responses: Path) -> None:
    # the Python API overrides the recorded settings: baseline = the full config's own 250 items (100)
    result = needlec.score(
        dataset,
        [responses],
        reports={"full": {"effective_length": {"rule": "mlneedle"}, "baseline": {"length": 250}}},
    )
    full = result.summary["configs"]["full"]
    mlneedle = full["effective_length"]["mlneedle"]
    assert mlneedle["baseline"] == 100.0 and mlneedle["baseline_length"] == 250
    # threshold 75; the curve without 250 starts at 500 (50 points): it fails at once
    assert (mlneedle["effective_length"], mlneedle["first_failing_length"]) == (None, 500)
    assert full["effective_length"]["headline"]["threshold"] == 0.75  # mlneedle's default ratio
    assert "heatmap" in full  # no `show`: every aggregate
    assert "reports" not in result.summary["configs"]["baseline"]  # not in the mapping: defaults


def test_invalid_reports_are_user_errors(dataset: Path, responses: Path, tmp_path: Path) -> None:
    with pytest.raises(NeedlecError, match="invalid `reports`"):
        needlec.score(dataset, [responses], reports={"full": {"effective_length": {"rule": "mlneedle"}}})
    spec = tmp_path / "bad.yaml"
    spec.write_text(SPEC.replace("baseline: {config: baseline}", "baseline: {config: baseline, length: 250}"))
    problems = needlec.validate(spec)
    assert [(p.key_path, p.location.line if p.location else None) for p in problems] == [
        ("reports.baseline", 23)  # the 23rd line of SPEC
    ]
    assert "exactly one" in problems[0].message


def test_a_report_is_replaced_by_scoring_again(dataset: Path, responses: Path, tmp_path: Path) -> None:
    report = tmp_path / "again"
    runs = []
    for _ in range(2):  # the second run replaces the first report (it is one)
        done = subprocess.run(
            [NEEDLEC, "score", str(dataset), str(responses), "-o", str(report)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        runs.append({p.name: p.read_bytes() for p in report.rglob("*") if p.is_file()})
    assert runs[0] == runs[1] and "summary.json" in runs[0]


def test_the_card_lists_each_configs_reports(dataset: Path) -> None:
    card = (dataset / "README.md").read_text(encoding="utf-8")
    assert "## Reports" in card
    assert "| baseline | by_length, heatmap | mlneedle: score >= 0.75 x baseline | config baseline |" in card
    assert "| full | by_length, effective_length | mlneedle: score >= 0.75 x baseline | config baseline |" in card
