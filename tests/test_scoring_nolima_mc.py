"""NoLiMa's `mc` config: items carry their options and right letter, and score with `choice`.

Compiled for real from specs/nolima.yaml (one length, one depth, one haystack). Responses follow a
rule fixed here, by item position, so the expected mean is counted by hand: only a response that
names the right option and no other scores 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SPECS

NEEDLEC = str(Path(sys.executable).parent / "needlec")


@pytest.fixture(scope="module")
def mc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nolima-mc") / "ds"
    select = ["config=mc", "length=8000", "depth=0", "haystack=h0"]
    args = [a for s in select for a in ("--select", s)]
    done = subprocess.run(
        [NEEDLEC, "compile", str(SPECS / "nolima.yaml"), "-o", str(out), "-q", *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return out


def _items(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((dataset / "data").rglob("*.jsonl")) for line in f.open()]


def test_mc_items_record_their_options(mc: Path) -> None:
    items = _items(mc)
    assert items
    for item in items:
        names = [opt["text"] for opt in item["options"]]
        assert [opt["letter"] for opt in item["options"]] == ["A", "B", "C", "D"]
        assert f"Options: {', '.join(names)}." in item["question"]  # listed in the question, in this order
        right = item["answers"][0][0]
        assert names.count(right) == 1
        assert item["answer_letter"] == "ABCD"[names.index(right)]
        assert item["scoring"]["metric"] == "choice" and item["scoring"]["letters"] is False


def test_mc_scores_one_option_only(mc: Path, tmp_path: Path) -> None:
    items = _items(mc)
    rows = []
    for i, item in enumerate(items):
        right = item["answers"][0][0]
        wrong = next(opt["text"] for opt in item["options"] if opt["text"] != right)
        response = [
            f"{right}.",  # the right option alone: 1
            f"It must be {wrong}.",  # a wrong option: 0
            f"Either {right} or {wrong}.",  # two options: 0
            f"Answer: {item['answer_letter']}",  # a letter, but the options carry no letters: 0
        ][i % 4]
        rows.append({"id": item["id"], "response": response})
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = tmp_path / "report"
    done = subprocess.run(
        [NEEDLEC, "score", str(mc), str(responses), "-o", str(report), "--no-plots"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    scores = [json.loads(line)["score"] for line in (report / "scores.jsonl").read_text().splitlines()]
    assert scores == [1.0 if i % 4 == 0 else 0.0 for i in range(len(items))]
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    right = len(range(0, len(items), 4))
    assert summary["configs"]["mc"]["mean"] == pytest.approx(100 * right / len(items), abs=1e-4)
