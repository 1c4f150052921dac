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
from needlec.languages.names import BUILTIN_NAMES, NAME_ALIASES
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
    assert len(pairs) == 30
    tokenize = re.compile(r"\w+").findall
    for group in needle.groups:
        assert group.default != group.inverted
        for pair in group.pairs:
            for w_q in filter(None, (pair.one_hop, pair.two_hop)):
                shared = set(map(str.lower, tokenize(pair.w_n))) & set(map(str.lower, tokenize(w_q)))
                assert not shared, f"{pair.id}: W_n and W_q share {shared}"
    from needlec.kinds.base import needle_kind

    cases = needle_kind(needle).cases()
    assert len(cases) == 68
    assert {c.split(".")[2] for c in cases} == {"one", "two"}
    assert {c.split(".")[3] for c in cases} == {"default", "inverted"}


def test_main_grid_is_the_papers(plan) -> None:
    from needlec.kinds.base import needle_kind

    main = plan.config("main")
    assert main.spec.grid.length_points() == [250, 500, 1000, 2000, 4000, 8000, 16000, 32000]
    per_length = len(needle_kind(main.spec.needle).cases()) * len(main.depth_points()) * len(haystack_ids(main.spec))
    assert per_length == 68 * 26 * 5 == 8840
    keys = list(plan.keys(main, haystack_ids(main.spec)))
    assert sum(1 for k in keys if k.length == 4000) == 8840
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
    """Re-checked here from the output alone, independently of the compiler's own check: no
    content word of W_q, and no character name, anywhere in the window but the inserted texts."""
    function_words = {"a", "an", "the", "of", "and", "to", "in", "on", "at", "by", "for", "with", "from"}
    for item in rows(compiled, "main") + rows(compiled, "distractor"):
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
        for inserted in item["needles"]:  # targets and distractors
            context = context.replace(inserted["text"], " ")
        words = {w.casefold() for w in re.findall(r"\w+", context)}
        content = {w.casefold() for w in re.findall(r"\w+", item["values"]["w_q"])} - function_words
        assert not content & words, (item["id"], content & words)
        assert item["answers"][0][0].casefold() not in context.casefold(), item["id"]


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
    assert {"excluded", "excluded_inside_word"} <= set(report)
    answers = {i["answers"][0][0] for i in rows(compiled, "main")}
    assert not answers & set(report["excluded"])
    # no pool name is part of a longer word anywhere in a context, needles included
    pool = [n.casefold() for n in BUILTIN_NAMES]
    for item in rows(compiled, "main"):
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
        for word in set(re.findall(r"[\w'-]+", context.casefold())):
            assert not [n for n in pool if n in word and n != word], (item["id"], word)


# Written for this test, not taken from the code: everyday English words (and a few names)
# that contain short given names, the way "Canadian" contains "Nadia".
HIDING_WORDS = [
    "canadian",
    "february",
    "desire",
    "besides",
    "beside",
    "feminine",
    "effeminate",
    "june",
    "junior",
    "junction",
    "pillars",
    "dollars",
    "cellars",
    "particulars",
    "gravity",
    "ravine",
    "ravioli",
    "graduate",
    "gradually",
    "forenoon",
    "florence",
    "customary",
    "accustomed",
    "zurich",
    "siphon",
    "yawn",
    "yawning",
    "tamarind",
    "amaranth",
    "catamaran",
    "chiding",
    "noah",
    "genoa",
    "commanders",
    "bystanders",
    "islanders",
    "selina",
    "lucian",
    "kirin",
    "skirt",
    "renaissance",
    "omelette",
    "remained",
    "meiosis",
]


def test_name_pool_hides_in_no_common_word_or_other_name() -> None:
    names = [n.casefold() for n in BUILTIN_NAMES]
    assert len(names) == len(set(names)) >= 100
    for name in names:
        assert not [w for w in HIDING_WORDS if name in w], name
        assert not [m for m in names if name in m and name != m], name
    for name in ("esi", "noa", "lars", "mei", "jun", "radu", "ravi", "oren", "femi", "nadia", "ebru", "zuri"):
        assert name not in names
    for name, others in NAME_ALIASES.items():
        assert name in BUILTIN_NAMES and others and name not in others


def test_haystack_names_are_dropped_even_inside_words() -> None:
    from needlec.kinds.latent_hop import LatentHopKind, LatentHopNeedle

    config = LatentHopNeedle.model_validate(
        {
            "type": "latent_hop",
            "names": ["Nadia", "Kofi", "Ravi", "Ingrid"],
            "groups": [
                {
                    "id": "g",
                    "default": "{{ char }} saw {{ w_n }}.",
                    "inverted": "{{ w_n }} saw {{ char }}.",
                    "question": "Who saw {{ w_q }}?",
                    "direct_question": "Who saw {{ w_n }}?",
                    "pairs": [{"id": "p", "w_n": "the Atomium", "one_hop": "Brussels"}],
                }
            ],
        }
    )
    kind = LatentHopKind(config)
    report = kind.bind_haystacks(["A Canadian ship sailed on.", "Gravity held; INGRID waved."])
    assert kind.pool == ("Kofi",)
    assert sorted(report["excluded"]) == ["Ingrid", "Nadia", "Ravi"]  # type: ignore[call-overload]
    assert report["excluded_inside_word"] == 2


def test_plural_keywords_take_plural_verbs_and_aliases_count(plan) -> None:
    import random

    from needlec.kinds.base import needle_kind

    needle = plan.config("main").spec.needle.model_copy(update={"names": ["Dmitri", "Zhiwei"]})
    kind = needle_kind(needle)
    towers = kind.draw("landmarks.petronas.one.inverted", random.Random(1))
    assert "the Petronas Towers stand just beside" in towers.needles[0]
    atomium = kind.draw("landmarks.atomium.one.inverted", random.Random(1))
    assert "the Atomium stands just beside" in atomium.needles[0]
    answers = {kind.draw("landmarks.atomium.one.default", random.Random(s)).answers[0] for s in range(20)}
    assert answers == {("Dmitri", "Dmitry", "Dimitri"), ("Zhiwei", "Zhi-wei", "Zhi Wei")}


def test_question_and_needle_share_no_stem(plan) -> None:
    """A crude suffix stripper written here: no question word shares a stem with its needle."""
    import random

    from needlec.kinds.base import needle_kind

    def stems(text: str) -> set[str]:
        out = set()
        for word in re.findall(r"[a-z]+", text.lower()):
            for suffix in ("ing", "ed", "es", "s"):
                if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                    word = word[: -len(suffix)]
                    break
            out.add(word)
        return out - {"the", "a", "an", "of", "to", "in", "for", "which", "character"}

    kind = needle_kind(plan.config("main").spec.needle)
    for case in kind.cases():
        draw = kind.draw(case, random.Random(0))
        question = draw.question.replace(draw.values["w_q"], " ")
        needle = draw.needles[0].replace(draw.values["char"], " ")
        assert not stems(question) & stems(needle), (case, stems(question) & stems(needle))


def test_needles_sit_at_their_exact_depth_at_short_lengths(tmp_path: Path) -> None:
    """All 26 placements distinct at every length; within 1 point of the target from 1K up
    (a target the needle cannot reach, 100% or beyond, is judged against the deepest reachable
    start, as the compile does)."""
    spec = tmp_path / "short.yaml"
    spec.write_text(
        f"extends: {SPECS / 'nolima.yaml'}\nvariants: null\n"
        "needle: {select: {cases: [landmarks.petronas.one.inverted, diet.vegan.one.default]}}\n"
        "grid: {lengths: [250, 500, 1000, 2000], depths: {start: 0, stop: 100, count: 26}}\n",
        encoding="utf-8",
    )
    compile_spec(spec, tmp_path / "out", CompileOptions(progress=False, jobs=2))
    tokenizer = _tiktoken("cl100k_base")
    offsets: dict[tuple, set[int]] = {}
    for path in (tmp_path / "out" / "data").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            needle = item["needles"][0]
            length = item["context_length"]
            offsets.setdefault((length, item["case"], item["haystack"]["id"]), set()).add(needle["token_offset"])
            reachable = 100 * (item["context_tokens"] - tokenizer.count(needle["text"])) / item["context_tokens"]
            wanted = min(needle["target_depth_percent"], reachable)
            if length >= 1000:
                assert abs(needle["depth_percent"] - wanted) <= 1.0, item["id"]
            elif length == 500:
                assert abs(needle["depth_percent"] - wanted) <= 2.0, item["id"]
    assert len(offsets) == 4 * 2 * 5
    for key, found in offsets.items():
        assert len(found) >= (25 if key[0] == 250 else 26), key


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
