"""Each family's headline table against a hand computation.

Every test compiles a small slice of a shipped spec with `select`, answers the items by a rule
written here (right or wrong per item), and checks the family's numbers, table and console
output against values worked out by hand from that rule (the arithmetic is in the comments).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import needlec
from needlec.cli import main
from needlec.scoring.api import ScoreResult
from needlec.scoring.report import write_report

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
WRONG = ""  # an empty answer: no keyword, no similarity, no letter


def compiled(tmp: pytest.TempPathFactory, spec: str, select: dict[str, Any]) -> Path:
    out = tmp.mktemp("family") / "dataset"
    needlec.compile(SPECS / spec, out, select=select)
    return out


def right_answer(item: dict[str, Any]) -> str:
    """A response naming the first alias of every required fact (the option letter for MC items)."""
    if item.get("answer_letter"):
        return str(item["answer_letter"])
    return " ".join(str(fact[0]) for fact in item["answers"])


def respond(dataset: Path, out: Path, right: Callable[[dict[str, Any]], bool]) -> Path:
    """Write a response per item: right where `right(item)` holds, else the empty answer."""
    rows = [
        {"id": it["id"], "response": right_answer(it) if right(it) else WRONG}
        for it in needlec.load_items(dataset, as_dict=True)
    ]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def read_csv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


# -- RULER -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ruler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # three of RULER's 13 tasks and passkey at 4096 tokens, repeats 0 and 1: niah_single_1, vt and
    # passkey have one depth (2 items each), qa_1 has five depths (10 items)
    return compiled(
        tmp_path_factory,
        "ruler.yaml",
        {"config": ["niah_single_1", "vt", "qa_1", "passkey"], "length": "4096", "repeat": ["0", "1"]},
    )


def ruler_rule(dataset: Path) -> Callable[[dict[str, Any]], bool]:
    qa = sorted(it["id"] for it in needlec.load_items(dataset, config="qa_1", as_dict=True))
    right_qa = set(qa[:7])

    def right(item: dict[str, Any]) -> bool:
        task = item["task"]
        if task == "niah_single_1":
            return bool(item["repeat"] == 0)  # 1 of 2: 50
        if task == "vt":
            return True  # 2 of 2: 100
        if task == "qa_1":
            return item["id"] in right_qa  # 7 of 10: 70
        return False  # passkey: 0 of 2, outside RULER's average

    return right


def test_ruler_table_averages_the_13_task_set_and_the_console_prints_that_average(
    ruler: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    responses = respond(ruler, tmp_path / "r.jsonl", ruler_rule(ruler))
    assert main(["score", str(ruler), str(responses), "-o", str(tmp_path / "report"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    # RULER's average weighs its tasks equally: (50 + 100 + 70) / 3 = 73.3333; passkey stays out.
    # The item-weighted mean over all 16 items, (1 + 2 + 7 + 0) / 16 = 62.5, is not what is printed.
    assert "average over 3 tasks and 1 lengths: 73.33" in out
    assert "effective length (85.6 points): -" in out  # 73.33 < 85.6 at the first length
    assert "62.5" not in out
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    family = summary["families"]["ruler"]
    assert family["overall"] == pytest.approx(73.3333, abs=1e-4)
    assert family["average"] == {"4096": pytest.approx(73.3333, abs=1e-4)}
    assert family["extra_tasks"] == {"passkey": {"4096": 0.0}}
    assert family["effective_length"] == {"threshold": 85.6, "effective_length": None, "first_failing_length": 4096}
    assert len(family["missing_tasks"]) == 10  # the 13 less the three scored
    table = read_csv(tmp_path / "report" / "ruler.csv")
    assert table == [
        ["task", "4096"],
        ["niah_single_1", "50.0"],
        ["vt", "100.0"],
        ["qa_1", "70.0"],
        ["average (3 tasks)", "73.3333"],
        ["passkey (not in the average)", "0.0"],
    ]
    markdown = (tmp_path / "report" / "ruler.md").read_text(encoding="utf-8")
    assert "| average (3 tasks) | 73.33 |" in markdown
    assert "| task | 4096 |" in markdown


# -- NeedleBench -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def needlebench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 4K spec, repeat 0, depth 0: S-RT in English and Chinese, M-RT and M-RS in English, at
    # 1000, 2000, 3000 and 4000 tokens
    return compiled(
        tmp_path_factory,
        "needlebench/needlebench-4k.yaml",
        {
            "config": ["s-rt-en-after", "s-rt-zh-after", "m-rt-en-after", "m-rs-en-after"],
            "repeat": "0",
            "depth": "0",
        },
    )


def test_needlebench_table_scores_tasks_per_language_and_weighs_v1_and_v2(needlebench: Path, tmp_path: Path) -> None:
    def right(item: dict[str, Any]) -> bool:
        task, lang, length = item["task"], item["languages"]["needle"], item["context_length"]
        if task == "s-rt":
            return lang == "en" or length <= 2000  # en 100, zh 50: S-RT = (100 + 50) / 2 = 75
        if task == "m-rt":
            return bool(length == 1000)  # 1 length of 4: 25
        return bool(length <= 3000)  # M-RS: 3 lengths of 4: 75

    result = needlec.score(needlebench, [respond(needlebench, tmp_path / "r.jsonl", right)])
    family = result.summary["families"]["needlebench"]
    assert family["tasks"] == {"m-rs": 75.0, "m-rt": 25.0, "s-rt": 75.0}
    assert family["by_language"] == {"m-rs": {"en": 75.0}, "m-rt": {"en": 25.0}, "s-rt": {"en": 100.0, "zh": 50.0}}
    assert family["overall_v1"] == pytest.approx(0.4 * 75 + 0.3 * 25 + 0.3 * 75)  # 60
    assert family["overall_v2"] == pytest.approx((75 + 25 + 75) / 3, abs=1e-4)  # 58.3333
    table = result.tables["needlebench"]
    assert dict(table.headline) == {
        "overall v1 (0.4 S-RT + 0.3 M-RT + 0.3 M-RS)": 60.0,
        "overall v2 (mean of the three tasks)": pytest.approx(58.3333, abs=1e-4),
    }
    assert ("s-rt", "zh", 8, 50.0) in table.rows  # 4 lengths x 2 items (two needles' orders) per cell
    assert ("s-rt", "all (mean over languages)", 16, 75.0) in table.rows
    # every config shows needlebench_overall (the family default), so a config left out of the
    # recorded `reports.show` would drop out; here all four count
    assert sum(row[2] for row in table.rows if row[1] != "all (mean over languages)") == len(result.rows)


# -- NoLiMa ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nolima(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the main config at 250, 500, 1000 and 2000 tokens, one haystack, depth 0: 68 cases per length
    return compiled(
        tmp_path_factory,
        "nolima.yaml",
        {"config": "main", "length": ["250", "500", "1000", "2000"], "depth": "0", "haystack": "h0", "repeat": "0"},
    )


def test_nolima_table_reports_the_base_score_and_the_85_percent_effective_length(nolima: Path, tmp_path: Path) -> None:
    at_2000 = sorted(it["id"] for it in needlec.load_items(nolima, as_dict=True) if it["context_length"] == 2000)
    assert len(at_2000) == 68
    right_2000 = set(at_2000[:57])

    def right(item: dict[str, Any]) -> bool:
        return item["context_length"] <= 1000 or item["id"] in right_2000

    result = needlec.score(nolima, [respond(nolima, tmp_path / "r.jsonl", right)])
    main_config = result.summary["families"]["nolima"]["configs"]["main"]
    # base score: the mean over 250, 500 and 1000 = 100; at 2000: 57 / 68 = 83.8235 < 0.85 x 100
    assert main_config["base_score"] == 100.0
    assert main_config["curve"] == {"250": 100.0, "500": 100.0, "1000": 100.0, "2000": pytest.approx(83.8235, abs=1e-4)}
    assert (main_config["effective_length"], main_config["first_failing_length"]) == (1000, 2000)
    table = result.tables["nolima"]
    assert table.columns == ("config", "base score", "250", "500", "1000", "2000", "effective length")
    assert table.rows == (("main", 100.0, 100.0, 100.0, 100.0, pytest.approx(83.8235, abs=1e-4), 1000),)
    # the manifest records NoLiMa's rule for the config, and its per-config headline agrees
    headline = result.summary["configs"]["main"]["effective_length"]["headline"]
    assert (headline["rule"], headline["effective_length"]) == ("nolima", 1000)


# -- MLNeedle --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlneedle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the pilot's English haystack with English and Chinese needles (1000 and 2000 tokens, depths
    # 0, 50, 100, 4 items each) and their no-distractor baselines (the needle passage alone)
    return compiled(
        tmp_path_factory,
        "mlneedle-pilot.yaml",
        {"config": ["en-en-exact", "en-none-exact", "zh-en-exact", "zh-none-exact"]},
    )


def mlneedle_right(item: dict[str, Any]) -> bool:
    needle, haystack = item["languages"]["needle"], item["languages"]["haystack"]
    length, depth, repeat = item["context_length"], item["depth_percent"], item["repeat"]
    if haystack == "none":
        return needle == "en" or repeat == 0  # baselines: en 6 of 6 = 100, zh 3 of 6 = 50
    if needle == "en":
        return length == 1000 or depth != 50  # 1000: 100; 2000: 8 of 12 = 66.6667
    return length == 1000 and depth == 0  # 1000: 4 of 12 = 33.3333; 2000: 0


def test_mlneedle_table_and_effective_length_follow_the_paper_rule(mlneedle: Path, tmp_path: Path) -> None:
    result = needlec.score(mlneedle, [respond(mlneedle, tmp_path / "r.jsonl", mlneedle_right)])
    family = result.summary["families"]["mlneedle"]["mlneedle-exact"]
    # overall: baseline (6 + 3) / 12 = 75; curve 1000: (12 + 4) / 24 = 66.6667, 2000: 8 / 24 = 33.3333;
    # 0.75 x 75 = 56.25: 1000 passes, 2000 fails
    assert family["baseline"] == 75.0
    assert family["overall"]["effective_length"] == 1000
    assert family["overall"]["first_failing_length"] == 2000
    table = result.tables["mlneedle"]
    assert table.columns[4:] == (
        "items",
        "mean",
        "depth 0",
        "depth 50",
        "depth 100",
        "1000",
        "2000",
        "baseline",
        "effective length",
    )
    rows = {row[1:4]: row for row in table.rows}
    # en needle, en haystack: depth 0 = 8/8, depth 50 = 4/8, depth 100 = 8/8; baseline 100 (en), so
    # 0.75 x 100 = 75: 1000 (100) passes, 2000 (66.67) fails
    en = rows[("en", "en", "en")]
    assert en[4:] == (
        24,
        pytest.approx(83.3333, abs=1e-4),
        100.0,
        50.0,
        100.0,
        100.0,
        pytest.approx(66.6667, abs=1e-4),
        100.0,
        1000,
    )
    # zh needle: baseline 50, so 0.75 x 50 = 37.5: 1000 (33.33) already fails
    zh = rows[("zh", "en", "en")]
    assert zh[-2:] == (50.0, None)
    assert zh[-4] == pytest.approx(33.3333, abs=1e-4)
    # the baseline rows are listed, with no effective length of their own
    assert rows[("en", "none", "en")][-2:] == (None, None)


def test_mlneedle_configs_headline_the_paper_rule_from_the_manifest(mlneedle: Path, tmp_path: Path) -> None:
    manifest = json.loads((mlneedle / "manifest.json").read_text(encoding="utf-8"))
    for name in ("en-en-exact", "zh-en-exact", "en-none-exact"):
        recorded = manifest["configs"][name]["reports"]
        assert recorded["effective_length"] == {"rule": "mlneedle", "threshold": None}
        assert recorded["baseline"] == {"config": None, "length": None, "items": "no_distractors"}
    card = (mlneedle / "README.md").read_text(encoding="utf-8")
    assert "mlneedle: score >= 0.75 x baseline" in card
    assert "ruler: score >=" not in card and "85.6" not in card
    result = needlec.score(mlneedle, [respond(mlneedle, tmp_path / "r.jsonl", mlneedle_right)])
    configs = result.summary["configs"]
    # each config against its own language cell's baseline (computed above by hand)
    assert configs["en-en-exact"]["effective_length"]["headline"] == {
        "rule": "mlneedle",
        "threshold": 0.75,
        "effective_length": 1000,
        "first_failing_length": 2000,
    }
    assert configs["zh-en-exact"]["effective_length"]["headline"]["effective_length"] is None
    assert configs["zh-en-exact"]["effective_length"]["mlneedle"]["baseline"] == 50.0
    assert configs["en-none-exact"]["effective_length"]["headline"]["effective_length"] is None


# -- ATC -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def atc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # v1 multiple choice, direct prompt in English, repeat 0: one question per step (2..19 people),
    # each asked in 4 rotations of its options
    return compiled(tmp_path_factory, "atc/atc-v1-mc.yaml", {"config": "direct-en", "repeat": "0"})


def test_atc_table_reports_accuracy_circular_eval_and_the_step_weighted_score(atc: Path, tmp_path: Path) -> None:
    items = list(needlec.load_items(atc, as_dict=True))
    assert sorted({it["structure"]["score_step"] for it in items}) == list(range(2, 20))
    assert len(items) == 18 * 4

    def right(item: dict[str, Any]) -> bool:
        # steps 2..10: every rotation right; steps 11..19: only rotation 0 right
        return item["structure"]["score_step"] <= 10 or item["group"]["rotation"] == 0

    result = needlec.score(atc, [respond(atc, tmp_path / "r.jsonl", right)])
    # accuracy (9 x 4 + 9 x 1) / 72 = 62.5; CircularEval 9 / 18 = 50;
    # step-weighted 100 x (2 + ... + 10) / (2 + ... + 19) = 100 x 54 / 189 = 28.5714
    assert result.tables["atc"].rows == (("en-direct-en", 72, 62.5, 50.0, pytest.approx(28.5714, abs=1e-4)),)
    family = result.summary["families"]["atc"]
    assert family["overall"] == pytest.approx(28.5714, abs=1e-4)
    assert family["accuracy"] == {"en-direct-en": 62.5}
    assert family["circular"] == {"en-direct-en": 50.0}
    files = write_report(result, tmp_path / "report", plots=False)
    assert {Path("atc.csv"), Path("atc.md")} <= set(files)
    assert read_csv(tmp_path / "report" / "atc.csv")[0] == [
        "task",
        "items",
        "accuracy",
        "circular_eval",
        "step_weighted",
    ]


def test_no_family_table_for_a_plain_niah_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tmp_path / "niah"
    needlec.compile(
        SPECS / "niah.yaml", dataset, select={"config": "passkey", "length": "1000", "tokenizer": "cl100k_base"}
    )
    responses = respond(dataset, tmp_path / "r.jsonl", lambda item: item["depth_percent"] < 50)  # 5 of 11
    result: ScoreResult = needlec.score(dataset, [responses])
    assert result.tables == {} and "families" not in result.summary
    assert main(["score", str(dataset), str(responses), "-o", str(tmp_path / "report"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "scored 11 items: mean 45.4545 points" in out  # 5 / 11 with no family of its own


def test_the_new_reports_values_are_checked() -> None:
    from pydantic import ValidationError

    from needlec.spec.reports import ReportsSpec

    ok = ReportsSpec.model_validate({"effective_length": {"rule": "mlneedle"}, "baseline": {"items": "no_distractors"}})
    assert ok.effective_length.value() == 0.75 and ok.baseline is not None and ok.baseline.items == "no_distractors"
    assert ReportsSpec.model_validate({"effective_length": {"rule": "none"}}).effective_length.rule == "none"
    with pytest.raises(ValidationError, match="rule `none` takes no threshold"):
        ReportsSpec.model_validate({"effective_length": {"rule": "none", "threshold": 0.5}})
    with pytest.raises(ValidationError, match="exactly one of `config`, `length` and `items`"):
        ReportsSpec.model_validate({"baseline": {"items": "no_distractors", "length": 250}})
    with pytest.raises(ValidationError):
        ReportsSpec.model_validate({"baseline": {"items": "random"}})
