"""The shipped v1 ATC spec scored end to end: synthetic responses to its real items reproduce the
hand-computed CircularEval and step-weighted task scores.

v1 labels its steps 2..19 (people on the chain; 1..18 sentences), ten questions per step, four
rotations per question. Task score = sum(label x P_label) / sum(labels), sum(2..19) = 189.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.scoring.api import score
from needlec.scoring.responses import Response

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("direct-en", "reasoning-zh")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("atc") / "atc-v1-mc"
    options = CompileOptions(progress=False, select={"config": set(CONFIGS)})
    compile_spec(ROOT / "specs" / "atc" / "atc-v1-mc.yaml", out, options)
    return out


def _items(dataset: Path) -> list[dict[str, Any]]:
    from needlec.scoring.dataset import iter_items

    return list(iter_items(dataset))


def _respond(items: list[dict[str, Any]], right: Any) -> list[Response]:
    """'Answer: <letter>' for every item; the right letter where `right(item)`, else the next one."""
    out = []
    for item in items:
        letter = item["answer_letter"]
        if not right(item):
            letter = "ABCD"[("ABCD".index(letter) + 1) % 4]
        # answers in the form of the item's own examples: reasoning first, then the answer line
        zh = item["config"].endswith("zh")
        prefix = ""
        if item["config"].startswith("reasoning"):
            prefix = "推理：沿着事实一步步往上找。\n" if zh else "Reasoning: the chain, fact by fact.\n"
        out.append(Response(item["id"], f"{prefix}{'答案：' if zh else 'Answer: '}{letter}", "synthetic"))
    return out


def _atc(dataset: Path, right: Any) -> dict[str, Any]:
    items = _items(dataset)
    result = score(dataset, _respond(items, right))
    families: dict[str, Any] = result.summary["families"]
    return dict(families["atc"])


def test_the_items_carry_v1_labels(dataset: Path) -> None:
    items = _items(dataset)
    assert len(items) == len(CONFIGS) * 18 * 10 * 4
    assert sorted({i["structure"]["score_step"] for i in items}) == list(range(2, 20))
    assert all(i["structure"]["score_step"] == len(i["needles"]) + 1 for i in items)


def test_all_correct_scores_100(dataset: Path) -> None:
    atc = _atc(dataset, lambda item: True)
    assert atc["tasks"]["en-direct-en"]["score"] == 100.0
    assert atc["tasks"]["zh-reasoning-zh"]["score"] == 100.0
    assert atc["overall"] == 100.0


def test_only_step_19_correct(dataset: Path) -> None:
    atc = _atc(dataset, lambda item: item["structure"]["score_step"] == 19)
    assert atc["tasks"]["en-direct-en"]["score"] == pytest.approx(19 * 100 / 189, abs=1e-4)
    assert atc["overall"] == pytest.approx(19 * 100 / 189, abs=1e-4)


def test_one_wrong_rotation_fails_its_question(dataset: Path) -> None:
    # rotation 2 of repeat 0 at label 2 is wrong in English: P_2 = 90, so the task loses 2 x 10 / 189
    def right(item: dict[str, Any]) -> bool:
        return not (
            item["config"] == "direct-en"
            and item["structure"]["score_step"] == 2
            and item["repeat"] == 0
            and item["group"]["rotation"] == 2
        )

    atc = _atc(dataset, right)
    assert atc["tasks"]["en-direct-en"]["p_step"]["2"] == 90.0
    assert atc["tasks"]["en-direct-en"]["score"] == pytest.approx(100 - 2 * 10 / 189, abs=1e-4)
    assert atc["tasks"]["zh-reasoning-zh"]["score"] == 100.0
    assert atc["overall"] == pytest.approx((200 - 2 * 10 / 189) / 2, abs=1e-4)
