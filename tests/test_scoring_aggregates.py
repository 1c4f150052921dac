"""Aggregates against values written by hand from their definitions (docs: scoring page)."""

from __future__ import annotations

from typing import Any

import pytest

from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored
from needlec.scoring.stats import wilson


def row(score: float, **item: Any) -> Scored:
    base = {"id": str(id(item)), "context_length": 1000, "depth_percent": 50.0}
    return Scored({**base, **item}, score)


def atc_rows(correct_steps: set[int]) -> list[Scored]:
    """10 questions per step 2..19, 4 rotations each; a question is right in every rotation iff its step
    is in `correct_steps`."""
    rows = []
    for step in range(2, 20):
        for q in range(10):
            for rot in range(4):
                rows.append(
                    Scored(
                        {
                            "id": f"{step}-{q}-{rot}",
                            "family": "atc",
                            "languages": {"question": "en"},
                            "prompt_variant": "direct",
                            "structure": {"steps": step},
                            "group": {"id": f"{step}-{q}", "rotation": rot, "size": 4},
                        },
                        1.0 if step in correct_steps else 0.0,
                    )
                )
    return rows


def test_atc_all_correct_is_100() -> None:
    assert agg.atc_score(atc_rows(set(range(2, 20))))["overall"] == 100.0


def test_atc_only_step_19_correct() -> None:
    assert agg.atc_score(atc_rows({19}))["overall"] == pytest.approx(19 * 100 / 189, abs=1e-4)


def test_atc_one_wrong_rotation_fails_the_question() -> None:
    rows = atc_rows(set(range(2, 20)))
    # Break rotation 3 of question 0 at step 2: P_2 drops from 100 to 90, so the score loses 2*10/189.
    rows[3] = Scored(rows[3].item, 0.0)
    assert rows[3].item["structure"]["steps"] == 2
    assert agg.atc_score(rows)["overall"] == pytest.approx(100 - 2 * 10 / 189, abs=1e-4)


def test_needlebench_overall_v1_and_v2() -> None:
    rows = []
    # S-RT: EN all right (1.0), ZH half right (0.5) -> 75. M-RT: 0.6 everywhere -> 60. M-RS: EN 0, ZH 1 -> 50.
    for lang, s in (("en", [1, 1]), ("zh", [1, 0])):
        rows += [row(x, family="needlebench", task="S-RT", languages={"needle": lang}) for x in s]
    rows += [row(0.6, family="needlebench", task="m-rt", languages={"needle": lang}) for lang in ("en", "zh")]
    rows += [
        row(float(lang == "zh"), family="needlebench", task="m-rs", languages={"needle": lang}) for lang in ("en", "zh")
    ]
    got = agg.needlebench_overall(rows)
    assert got["tasks"] == {"m-rs": 50.0, "m-rt": 60.0, "s-rt": 75.0}
    assert got["overall_v1"] == pytest.approx(0.4 * 75 + 0.3 * 60 + 0.3 * 50)
    assert got["overall_v2"] == pytest.approx((75 + 60 + 50) / 3)


def test_position_bands_and_degradation() -> None:
    rows = [
        row(1.0, depth_percent=0.0),
        row(1.0, depth_percent=20.0),
        row(0.0, depth_percent=50.0),
        row(1.0, depth_percent=50.0),
        row(0.0, depth_percent=80.0),
        row(1.0, depth_percent=100.0),
    ]
    got = agg.position_bands(rows)
    assert (got["beginning"]["mean"], got["middle"]["mean"], got["end"]["mean"]) == (100.0, 50.0, 50.0)
    assert got["degradation"] == 25.0
    assert got["verdict"] == "moderate"


def test_multi_needle_items_count_per_needle() -> None:
    needles = [{"role": "target", "depth_percent": d} for d in (10.0, 50.0, 90.0)]
    r = Scored(
        {"id": "m", "context_length": 1000, "depth_percent": 10.0, "needles": needles},
        2 / 3,
        {"hits": [True, False, True]},
    )
    got = agg.position_bands([r])
    assert (got["beginning"]["mean"], got["middle"]["mean"], got["end"]["mean"]) == (100.0, 0.0, 100.0)


def test_effective_length_prefix_rule_on_a_non_monotone_curve() -> None:
    # Scores by length: 1000 -> 100, 2000 -> 90, 4000 -> 50, 8000 -> 95.
    rows = [
        row(s, context_length=length)
        for length, ss in ((1000, [1, 1]), (2000, [1] * 9 + [0]), (4000, [1, 0]), (8000, [1] * 19 + [0]))
        for s in ss
    ]
    got = agg.effective_lengths(rows, baseline=100.0)
    assert got["ruler"]["effective_length"] == 2000  # 90 >= 85.6; 4000 fails, 8000 never counts
    assert got["ruler"]["first_failing_length"] == 4000
    # NoLiMa base = mean over lengths <= 1000 = 100; threshold 85.
    assert got["nolima"]["base_score"] == 100.0 and got["nolima"]["effective_length"] == 2000
    # MLNeedle: 0.75 x 100 = 75.
    assert got["mlneedle"]["threshold"] == 75.0 and got["mlneedle"]["effective_length"] == 2000


def test_degradation_slope_points_per_doubling() -> None:
    assert agg.degradation_slope({1000: 90.0, 2000: 80.0, 4000: 70.0}) == pytest.approx(-10.0)


def test_balanced_accuracy() -> None:
    rows = [row(1.0, expected="yes")] * 3 + [row(0.0, expected="no"), row(1.0, expected="no")]
    got = agg.balanced_accuracy(rows)
    assert got["balanced_accuracy"] == 75.0  # (100 + 50) / 2


def test_circular_groups_and_acc_1() -> None:
    rows = [row(1.0, group={"id": "q1", "rotation": r, "size": 4}) for r in range(4)]
    rows += [row(1.0 if r == 0 else 0.0, group={"id": "q2", "rotation": r, "size": 4}) for r in range(4)]
    got = agg.circular(rows)
    assert (got["circular"], got["acc_1"], got["acc_all"]) == (50.0, 100.0, 62.5)


def test_heatmap_cells_and_disagreement() -> None:
    rows = [
        row(1.0, context_length=1000, depth_percent=0.0),
        row(0.0, context_length=1000, depth_percent=0.0),
        row(1.0, context_length=2000, depth_percent=50.0),
    ]
    got = agg.heatmap(rows)
    assert got["lengths"] == [1000, 2000] and got["depths"] == [0.0, 50.0]
    assert got["cells"] == [[50.0, None], [None, 100.0]]
    assert len(got["disagreeing_cells"]) == 1


def test_wilson_interval_by_hand() -> None:
    # p = 0.5, n = 4, z = 1.96: centre 0.5, half-width 1.96*sqrt(0.0625 + 0.0600)/1.9604 = 0.3500.
    lo, hi = wilson(2, 4)
    assert lo == pytest.approx(0.1500, abs=2e-4) and hi == pytest.approx(0.8500, abs=2e-4)
