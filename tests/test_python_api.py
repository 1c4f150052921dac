"""The public Python API: the documented example runs as written, and user errors are returned or raised cleanly."""

from __future__ import annotations

import doctest
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
