"""NoLiMa spec: the needle set's design, the paper's grid, variants, overlap and leak checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import SPECS

from needlec.compile.overlap import precision
from needlec.compile.overlap_report import measure_plan
from needlec.compile.pipeline import CompileOptions, compile_spec, haystack_ids
from needlec.compile.plan import load_plan
from needlec.tokenizer import _tiktoken

CONFIGS = [
    "main",
    "long",
    "onehop",
    "twohop",
    "default-order",
    "inverted-order",
    "hard",
    "direct",
    "mc",
    "distractor",
    "cot",
]


@pytest.fixture(scope="module")
def plan():
    return load_plan(SPECS / "nolima.yaml")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every config at a small length (one length each) and a few depths, both haystacks' worth."""
    out = tmp_path_factory.mktemp("nolima") / "out"
    compile_spec(
        SPECS / "nolima.yaml",
        out,
        CompileOptions(
            select={
                "length": {"250", "1000", "4000", "8000", "64000"},
                "depth": {"0", "48", "100"},
                "haystack": {"h0", "h3"},
            },
            progress=False,
            jobs=2,
        ),
    )
    return out


def rows(folder: Path, config: str) -> list[dict]:
    with (folder / "data" / config / "cl100k_base.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_needle_set_matches_the_papers_design(plan) -> None:
    needle = plan.config("main").spec.needle
    assert len(needle.groups) == 5
    pairs = [p for g in needle.groups for p in g.pairs]
    assert len(pairs) == 28
    tokenize = re.compile(r"\w+").findall
    for group in needle.groups:
        assert group.default != group.inverted
        for pair in group.pairs:
            for w_q in filter(None, (pair.one_hop, pair.two_hop)):
                shared = set(map(str.lower, tokenize(pair.w_n))) & set(map(str.lower, tokenize(w_q)))
                assert not shared, f"{pair.id}: W_n and W_q share {shared}"
    from needlec.kinds.base import needle_kind

    cases = needle_kind(needle).cases()
    assert len(cases) == 58
    assert {c.split(".")[2] for c in cases} == {"one", "two"}
    assert {c.split(".")[3] for c in cases} == {"default", "inverted"}


def test_main_grid_is_the_papers(plan) -> None:
    from needlec.kinds.base import needle_kind

    main = plan.config("main")
    assert main.spec.grid.length_points() == [250, 500, 1000, 2000, 4000, 8000, 16000, 32000]
    per_length = len(needle_kind(main.spec.needle).cases()) * len(main.depth_points()) * len(haystack_ids(main.spec))
    assert per_length == 58 * 26 * 5 == 7540
    keys = list(plan.keys(main, haystack_ids(main.spec)))
    assert sum(1 for k in keys if k.length == 4000) == 7540
    assert plan.config("long").spec.grid.length_points() == [64000, 128000]
    assert [c.name for c in plan.configs] == CONFIGS


def test_every_config_loads_with_datasets(compiled: Path, tmp_path: Path) -> None:
    import datasets

    for config in CONFIGS:
        ds = datasets.load_dataset(str(compiled), name=config, split="cl100k_base", cache_dir=str(tmp_path / "cache"))
        assert len(ds) > 0 and ds[0]["config"] == config


def test_contracts_hold(compiled: Path) -> None:
    tokenizer = _tiktoken("cl100k_base")
    for config in CONFIGS:
        for item in rows(compiled, config):
            span = item["context_span"]
            context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
            assert tokenizer.count(context) == item["context_tokens"] == item["context_length"]
            needle = item["needles"][0]
            assert context[needle["char_offset"] :].startswith(needle["text"])
            assert tokenizer.count(context[: needle["char_offset"]]) == needle["token_offset"]


def test_answer_and_w_q_absent_outside_the_needle(compiled: Path) -> None:
    """Re-checked here from the output alone, independently of the compiler's own check."""
    for item in rows(compiled, "main") + rows(compiled, "distractor"):
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
        for inserted in item["needles"]:  # targets and distractors
            context = context.replace(inserted["text"], " ")
        for term in (item["answers"][0][0], item["values"]["w_q"]):
            assert not re.search(rf"(?<!\w){re.escape(term)}(?!\w)", context, re.IGNORECASE), (item["id"], term)


def test_distractors_sit_in_the_middle_away_from_the_needle(compiled: Path) -> None:
    items = rows(compiled, "distractor")
    assert items
    for item in items:
        (distractor,) = [n for n in item["needles"] if n["role"] == "distractor"]
        assert distractor["id"] == "d0" and item["needles"][0]["role"] == "target"
        assert item["values"]["w_q"] in distractor["text"]
        assert 20 <= distractor["target_depth_percent"] <= 80
        assert abs(distractor["target_depth_percent"] - item["depth_percent"]) >= 20


def test_variants_change_what_they_should(compiled: Path) -> None:
    direct = rows(compiled, "direct")[0]
    assert direct["values"]["w_n"] in direct["question"]
    mc = rows(compiled, "mc")
    for item in mc:
        options = item["question"].rsplit("Options: ", 1)[1].rstrip(".").split(", ")
        assert len(options) == 4 and item["answers"][0][0] in options
    assert {i["values"]["hop"] for i in rows(compiled, "twohop")} == {"two"}
    assert {i["values"]["order"] for i in rows(compiled, "inverted-order")} == {"inverted"}
    assert len({i["case"] for i in rows(compiled, "hard")}) == 10
    assert "step by step" in rows(compiled, "cot")[0]["messages"][-1]["content"]


def test_names_in_the_haystack_are_excluded(compiled: Path) -> None:
    manifest = json.loads((compiled / "manifest.json").read_text())
    report = manifest["configs"]["main"]["needle_kind"]
    assert report["excluded"], "the embedded corpus contains some pool names (e.g. Tamar)"
    answers = {i["answers"][0][0] for i in rows(compiled, "main")}
    assert not answers & set(report["excluded"])


def test_overlap_ordering_reproduces_the_paper() -> None:
    niah = measure_plan(load_plan(SPECS / "niah.yaml"))
    nolima = measure_plan(load_plan(SPECS / "nolima.yaml"))
    assert niah["single"]["needle"]["mean"]["rouge1"] >= 0.8
    assert niah["single"]["context"]["mean"]["rouge1"] >= 0.8
    assert nolima["main"]["needle"]["mean"]["rouge1"] <= 0.1
    assert nolima["direct"]["needle"]["mean"]["rouge1"] > 5 * max(0.01, nolima["main"]["needle"]["mean"]["rouge1"])
    assert nolima["direct"]["context"]["mean"]["rouge1"] > nolima["main"]["context"]["mean"]["rouge1"]


def test_budget_violation_fails_with_a_report(tmp_path: Path) -> None:
    """A needle budget the texts alone break is refused by validation (no item is built); a context
    budget, which needs the haystack, is checked on the built items and reported with their ids."""
    from needlec.errors import ContractError, SpecError

    spec = tmp_path / "strict.yaml"
    spec.write_text(
        f"extends: {SPECS / 'nolima.yaml'}\nvariants: null\nneedle: {{question_mode: direct}}\n"
        "grid: {lengths: [500], depths: [50]}\nhaystack: {builder: {count: 1}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as refused:
        compile_spec(spec, tmp_path / "out", CompileOptions(progress=False))
    report = refused.value.render()
    assert "overlap_budgets[0].max" in report and "rouge1_precision" in report and "above 0.1" in report
    assert not (tmp_path / "out").exists()

    spec.write_text(
        f"extends: {SPECS / 'nolima.yaml'}\nvariants: null\nneedle: {{question_mode: direct}}\n"
        "grid: {lengths: [500], depths: [50]}\nhaystack: {builder: {count: 1}}\n"
        "overlap_budgets: [{metric: rouge1_precision, max: 0.01, against: context}]\n",
        encoding="utf-8",
    )
    with pytest.raises(ContractError) as caught:
        compile_spec(spec, tmp_path / "out", CompileOptions(progress=False))
    report = str(caught.value)
    assert "rouge1_precision against the context" in report and "budget 0.01" in report
    assert "nolima/default/cl100k_base/500/50/" in report
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("question", "reference", "expected"),
    [
        ("北京是中国的首都", "北京是中国的首都", 1.0),
        ("北京是中国的首都", "上海是一个城市", 1 / 8),  # only 是 is shared
        ("दिल्ली भारत की राजधानी है", "दिल्ली भारत की राजधानी है", 1.0),
        ("दिल्ली भारत की राजधानी है", "मुंबई एक बड़ा शहर है", 1 / 5),
        ("القاهرة عاصمة مصر", "القاهرة عاصمة مصر", 1.0),
        ("القاهرة عاصمة مصر", "الرياض مدينة كبيرة", 0.0),
    ],
)
def test_overlap_tokenizer_keeps_non_latin_scripts(question: str, reference: str, expected: float) -> None:
    assert precision(question, reference)["rouge1"] == pytest.approx(expected, abs=1e-6)


def test_snippet_haystacks_are_deterministic_and_distinct(tmp_path: Path) -> None:
    select = {"config": {"distractor"}, "length": {"1000"}, "depth": {"0", "60"}}
    one = compile_spec(SPECS / "nolima.yaml", tmp_path / "a", CompileOptions(select=select, progress=False, jobs=1))
    two = compile_spec(SPECS / "nolima.yaml", tmp_path / "b", CompileOptions(select=select, progress=False, jobs=2))
    assert one.manifest["content_hash"] == two.manifest["content_hash"]
    for path in (tmp_path / "a").rglob("*.jsonl"):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()
    haystacks = one.manifest["configs"]["distractor"]["haystacks"]
    assert len(haystacks) == 5 and len({h["sha256"] for h in haystacks}) == 5
