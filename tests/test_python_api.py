"""The public Python API: the documented example runs as written, and user errors are returned or raised cleanly."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import pytest

import needlec
from needlec.errors import NeedlecError, SpecError

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "site" / "docs" / "guides" / "python-api.md"


def test_the_documented_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"^```pycon\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 3
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(blocks), {}, "python-api.md", str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    outcome = runner.summarize(verbose=False)
    assert outcome.attempted >= 10
    assert outcome.failed == 0


def test_validate_returns_problems_and_never_raises_for_user_errors(tmp_path: Path) -> None:
    assert [p.message for p in needlec.validate(tmp_path / "absent.yaml")] == ["spec file not found"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Not A Slug\n", encoding="utf-8")
    problems = needlec.validate(bad)
    assert problems[0].key_path == "name"  # the slug pattern
    missing = {"title", "haystack", "grid", "needle", "prompt", "scoring"}  # the required keys besides `name`
    assert {p.message for p in problems[1:]} == {f"required key {key!r} is missing" for key in missing}
    with pytest.raises(SpecError):
        needlec.load_spec(bad)


def test_compile_dry_run_sizes_without_writing(tmp_path: Path) -> None:
    # niah.yaml's length grid starts at 1000; its depth grid has 11 points (0, 10, ..., 100)
    result = needlec.compile(
        ROOT / "specs" / "niah.yaml",
        tmp_path / "out",
        select={"config": ["single"], "length": 1000, "tokenizer": ["cl100k_base", "o200k_base"]},
        dry_run=True,
    )
    assert (result.items, result.tokens) == (11 * 2, 11 * 2 * 1000)  # 11 depths x 2 tokenizers, 1000 tokens each
    assert result.manifest is None and not (tmp_path / "out").exists()


def test_compile_reports_an_unknown_select_key_as_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(NeedlecError, match="--select accepts"):
        needlec.compile(ROOT / "specs" / "niah.yaml", tmp_path / "out", select={"colour": "red"}, dry_run=True)


def test_compile_name_is_the_function_even_after_the_compiler_package_is_imported() -> None:
    import needlec.compile.pipeline

    assert callable(needlec.compile) and needlec.compile.__module__ == "needlec.api"


def test_dir_and_all_list_the_public_api_without_importing_it() -> None:
    code = (
        "import needlec, sys\n"
        "names = dir(needlec)\n"
        "assert 'pydantic' not in sys.modules and 'needlec.api' not in sys.modules\n"
        "print(','.join(n for n in names if not n.startswith('_')))\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    public = out.stdout.strip().split(",")
    expected = {"compile", "load_spec", "validate", "load_items", "score", "score_response", "write_report", "export"}
    assert expected <= set(public)
    assert set(public) == set(needlec.__all__) - {"__version__"}  # nothing private leaks into completion
    for name in needlec.__all__:
        assert getattr(needlec, name) is not None


@pytest.fixture(scope="module")
def passkey_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """niah.yaml's passkey config at 1000 tokens, for two tokenizers: 11 depths each."""
    out = tmp_path_factory.mktemp("load") / "niah"
    needlec.compile(
        ROOT / "specs" / "niah.yaml",
        out,
        select={"config": ["passkey", "single"], "length": "1000", "tokenizer": ["cl100k_base", "o200k_base"]},
    )
    return out


def test_load_items_yields_typed_items_per_config_and_split(passkey_dataset: Path) -> None:
    from needlec.dataset.item import Item

    every = list(needlec.load_items(passkey_dataset))
    assert len(every) == 2 * 2 * 11  # 2 configs x 2 tokenizers x 11 depths
    assert all(isinstance(item, Item) for item in every)
    one = list(needlec.load_items(passkey_dataset, config="passkey", split="o200k_base"))
    assert len(one) == 11
    assert {(i.config, i.tokenizer) for i in one} == {("passkey", "o200k_base")}
    assert sorted(i.depth_percent for i in one) == [float(d) for d in range(0, 101, 10)]
    # the typed item's context is the span the messages hold, and every target needle sits in it
    for item in one:
        assert all(n.text in item.context() for n in item.targets())
    # the rows as stored: the same lines the data file holds, parsed independently
    path = passkey_dataset / "data" / "passkey" / "o200k_base.jsonl"
    stored = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert list(needlec.load_items(passkey_dataset, "passkey", "o200k_base", as_dict=True)) == stored


def test_load_items_names_a_missing_config_split_or_folder(passkey_dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(NeedlecError, match="no config 'pasky'"):
        needlec.load_items(passkey_dataset, config="pasky")
    with pytest.raises(NeedlecError, match=r"no split 'gpt2'.*cl100k_base, o200k_base"):
        needlec.load_items(passkey_dataset, split="gpt2")
    with pytest.raises(NeedlecError, match="no such dataset folder"):
        needlec.load_items(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NeedlecError, match="not a dataset folder"):
        needlec.load_items(tmp_path / "empty")


def test_compile_takes_select_as_the_command_lines_strings(tmp_path: Path) -> None:
    # the same selection as a mapping, as one --select string per key, and as one string
    spec = ROOT / "specs" / "niah.yaml"
    as_map = needlec.compile(spec, None, select={"config": "passkey", "length": [1000, 2000]}, dry_run=True)
    as_list = needlec.compile(spec, None, select=["config=passkey", "length=1000,2000"], dry_run=True)
    one = needlec.compile(spec, None, select="config=passkey", dry_run=True)
    # passkey: 11 depths x 2 tokenizers per length; the one-string selection keeps every length
    assert (as_map.items, as_list.items) == (44, 44)
    assert one.items > 44
    with pytest.raises(NeedlecError, match="KEY=V1,V2"):
        needlec.compile(spec, None, select="passkey", dry_run=True)
    with pytest.raises(NeedlecError, match="a selection's values are"):
        needlec.compile(spec, None, select={"config": None}, dry_run=True)


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_compile_refuses_jobs_that_are_not_a_count_of_workers(jobs: object, tmp_path: Path) -> None:
    with pytest.raises(NeedlecError, match="jobs must be a whole number"):
        needlec.compile(ROOT / "specs" / "niah.yaml", tmp_path / "out", jobs=jobs, dry_run=True)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()


def test_compile_takes_the_command_lines_ceilings_and_shard(tmp_path: Path) -> None:
    spec = ROOT / "specs" / "niah.yaml"
    select = {"config": "passkey", "length": 1000, "tokenizer": "cl100k_base"}
    with pytest.raises(NeedlecError, match="--max-items"):
        needlec.compile(spec, tmp_path / "out", select=select, max_items=10)
    assert not (tmp_path / "out").exists()
    # a slice holds shards, not a dataset: the two halves merge into the whole selection's 11 items
    halves = [needlec.compile(spec, tmp_path / f"slice{i}", select=select, shard=(i, 2)) for i in (1, 2)]
    assert all(h.manifest is None for h in halves)
    from needlec.compile.pipeline import CompileOptions, merge_slices

    merged = merge_slices([tmp_path / "slice1", tmp_path / "slice2"], tmp_path / "merged", spec, CompileOptions())
    assert merged.items == 11
    with pytest.raises(NeedlecError, match="--shard"):
        needlec.compile(spec, tmp_path / "bad", select=select, shard="3/2")


def test_write_report_names_what_it_takes() -> None:
    with pytest.raises(TypeError, match="ScoreResult"):
        needlec.write_report(None, "unused")  # type: ignore[arg-type]


def test_a_spec_errors_text_holds_its_problems(tmp_path: Path) -> None:
    # an uncaught SpecError (or `str(exc)`) shows every problem with its file:line, not only the head line
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (ROOT / "specs" / "niah.yaml").read_text(encoding="utf-8").replace("depth_tolerance", "depth_tolerence")
    )
    with pytest.raises(SpecError) as caught:
        needlec.load_spec(bad)
    text = str(caught.value)
    assert text.startswith("spec is invalid (1 problem):\n")
    assert f"{bad}:50" in text and "placement.depth_tolerence" in text


def test_load_items_reads_one_data_file_and_names_bad_arguments(passkey_dataset: Path) -> None:
    file = passkey_dataset / "data" / "passkey" / "cl100k_base.jsonl"
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert [item.id for item in needlec.load_items(file)] == [r["id"] for r in rows]
    assert [i.id for i in needlec.load_items(file, config="passkey", split="cl100k_base")] == [r["id"] for r in rows]
    assert list(needlec.load_items(file, config="single")) == []
    with pytest.raises(NeedlecError, match="one config name"):
        list(needlec.load_items(passkey_dataset, config=["passkey", "single"]))  # type: ignore[call-overload]
    with pytest.raises(NeedlecError, match=r"not a folder or a \.jsonl/\.parquet data file"):
        list(needlec.load_items(passkey_dataset / "manifest.json"))


def test_an_error_from_a_worker_process_keeps_its_problems() -> None:
    # a worker's error reaches the parent pickled: it must come back with its class, text and problems
    import pickle

    from needlec.errors import ContractError, Location, Problem

    one = SpecError([Problem("unknown key 'grdi'", Location("spec.yaml", 3, 1), "grdi")])
    back = pickle.loads(pickle.dumps(one))
    assert type(back) is SpecError and str(back) == str(one) and back.problems == one.problems
    assert str(back).startswith("spec is invalid (1 problem):")
    plain = pickle.loads(pickle.dumps(ContractError("item x: 10 tokens, target 12")))
    assert type(plain) is ContractError and str(plain) == "item x: 10 tokens, target 12" and plain.exit_code == 3
