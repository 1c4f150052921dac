"""`needlec.score` and `needlec.score_response` from the package: lazily imported, same judge as the CLI.

The items are written here by hand (the fields the scorer reads), and the expected scores follow
from the `contains` definition (a whole-word alias in the response), not from the scorer's output.
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


def _item(item_id: str, length: int, depth: float, answer: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "benchmark": "handmade",
        "config": "single",
        "context_length": length,
        "depth_percent": depth,
        "answers": [[answer]],
        "needles": [{"text": f"The code is {answer}.", "depth_percent": depth, "role": "target"}],
        "scoring": {"metric": "contains", "version": 2},
    }


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    rows = [
        _item("a", 1000, 0.0, "Esi"),
        _item("b", 1000, 50.0, "Lars"),
        _item("c", 2000, 0.0, "Radu"),
        _item("d", 2000, 50.0, "Noa"),
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_import_needlec_does_not_import_the_scorer() -> None:
    code = "import sys, needlec; print('needlec.scoring.api' in sys.modules, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_the_package_names_are_the_scoring_functions() -> None:
    from needlec.scoring import api

    assert needlec.score is api.score
    assert needlec.score_response is api.score_response
    assert {"score", "score_response"} <= set(needlec.__all__)
    assert needlec.score.__doc__ and needlec.score_response.__doc__


def test_score_response_judges_whole_words(dataset: Path) -> None:
    item = json.loads(dataset.read_text(encoding="utf-8").splitlines()[0])
    assert needlec.score_response(item, "It was Esi.")[0] == 1.0
    assert needlec.score_response(item, "The cat sat beside the door.")[0] == 0.0  # "Esi" inside a word


def test_score_from_python(dataset: Path) -> None:
    responses = dataset.parent / "responses.jsonl"
    answers = {"a": "Esi, I think.", "b": "the pillars", "c": "Radu", "d": "Noah"}
    responses.write_text("".join(json.dumps({"id": k, "response": v}) + "\n" for k, v in answers.items()))
    result = needlec.score(dataset, [responses])
    assert [(r.item["id"], r.score) for r in result.rows] == [("a", 1.0), ("b", 0.0), ("c", 1.0), ("d", 0.0)]
    cfg = result.summary["configs"]["single"]
    assert cfg["n"] == 4 and cfg["mean"] == 50.0
    # rows are depth 0 then 50, columns lengths 1000 then 2000: a, c hit; b, d miss
    assert cfg["heatmap"]["cells"] == [[100.0, 100.0], [0.0, 0.0]]


def test_score_reports_missing_responses(dataset: Path) -> None:
    responses = dataset.parent / "partial.jsonl"
    responses.write_text(json.dumps({"id": "a", "response": "Esi"}) + "\n", encoding="utf-8")
    with pytest.raises(NeedlecError, match="3 item"):
        needlec.score(dataset, [responses])
    result = needlec.score(dataset, [responses], allow_missing=True)
    assert result.missing == ["b", "c", "d"]
    assert result.summary["overall"]["mean"] == 100.0


def test_score_takes_the_responses_as_dicts(dataset: Path) -> None:
    # the same answers as test_score_from_python, given in memory the way a JSONL line holds them
    answers = [{"id": "a", "response": "Esi, I think."}, {"id": "b", "response": "the pillars"}]
    answers += [{"id": "c", "response": "Radu"}, {"id": "d", "response": None}]  # d: no answer
    result = needlec.score(dataset, answers, allow_missing=True)
    assert [(r.item["id"], r.score) for r in result.rows] == [("a", 1.0), ("b", 0.0), ("c", 1.0)]
    assert result.missing == ["d"]
    # a generator of them, read once, first response included
    again = needlec.score(dataset, (dict(a) for a in answers), allow_missing=True)
    assert [(r.item["id"], r.score) for r in again.rows] == [("a", 1.0), ("b", 0.0), ("c", 1.0)]
    with pytest.raises(NeedlecError, match="response 2: expected a Response or a dict"):
        needlec.score(dataset, [{"id": "a", "response": "Esi"}, {"id": "b", "text": "Lars"}])
