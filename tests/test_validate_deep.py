"""`validate` checks what it can know before building items, each at the `file:line` of its key.

Static needle overlap budgets are checked by every `validate`; the checks that read the haystack
sources (a `snippets` builder no document is long enough for, a name pool that names found in the
haystacks shrink too far) run with `validate --deep`. Every case goes through the real CLI on
real files; the expected lines are those of the spec texts written here, counted by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import SPECS


def _validate(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", "validate", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _clean_failure(result: subprocess.CompletedProcess[str]) -> str:
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output and len(output.splitlines()) <= 40, output
    return output


STORY = (  # one sentence, so any snippet cut from it holds both names
    "Yuki walked to the harbour before sunrise, where Stefan was already mending the nets, "
    "and the two of them talked about the storm that had passed in the night.\n"
)

POOL_SPEC = f"""\
extends: {SPECS / "nolima.yaml"}
variants: null
haystack:
  sources: [{{type: files, paths: [story.txt]}}]
  builder: {{count: 1, min_document_tokens: 0}}
needle:
  names: [Yuki, Stefan, Mirela]
"""  # `names` is on line 7


def test_deep_finds_a_pool_emptied_by_names_in_the_haystack(tmp_path: Path) -> None:
    (tmp_path / "story.txt").write_text(STORY, encoding="utf-8")
    (tmp_path / "pool.yaml").write_text(POOL_SPEC, encoding="utf-8")
    shallow = _validate(tmp_path, "pool.yaml")
    assert shallow.returncode == 0, shallow.stderr  # three names are enough until the haystack is read
    output = _clean_failure(_validate(tmp_path, "--deep", "pool.yaml"))
    assert "pool.yaml:7:" in output and ": needle.names: " in output, output
    # two of the three names occur in the story; one is left, two are needed
    assert "1 name(s) left after removing 2" in output and "Yuki" in output and "Stefan" in output, output
    assert "at least 2 are needed" in output, output


def test_deep_accepts_a_pool_the_haystack_leaves_large_enough(tmp_path: Path) -> None:
    (tmp_path / "story.txt").write_text(STORY, encoding="utf-8")
    (tmp_path / "pool.yaml").write_text(POOL_SPEC.replace("Mirela]", "Mirela, Oskar]"), encoding="utf-8")
    result = _validate(tmp_path, "--deep", "pool.yaml")
    assert result.returncode == 0, result.stderr
    assert "sources read and checked" in result.stdout


def test_deep_warns_of_a_haystack_repeated_to_reach_a_length(tmp_path: Path) -> None:
    """What the compile of the whole grid would warn about its haystacks, `validate --deep` says first."""
    (tmp_path / "story.txt").write_text(STORY * 20, encoding="utf-8")  # about 700 tokens
    (tmp_path / "short.yaml").write_text(
        f"extends: {SPECS / 'niah.yaml'}\nvariants: null\ntokenizers: [cl100k_base]\n"
        "haystack:\n  sources: [{type: files, paths: [story.txt]}]\n  builder: {type: concat}\n"
        "grid:\n  lengths: [500, 2000, 4000]\n  depths: [50]\n  repeats: 1\n",
        encoding="utf-8",
    )
    assert "repeated" not in _validate(tmp_path, "short.yaml").stderr  # the shallow check reads no source
    result = _validate(tmp_path, "--deep", "short.yaml")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: short.yaml: ")]
    assert len(warnings) == 1, result.stderr
    assert "is repeated up to" in warnings[0] and "2 length(s) (2,000, 4,000 tokens)" in warnings[0], warnings
    # the compile prints the same line
    compiled = subprocess.run(
        [sys.executable, "-m", "needlec.cli", "compile", "short.yaml", "-o", "out", "-q"],
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert warnings[0].removeprefix("warning: short.yaml: ") in compiled.stderr, compiled.stderr


BUILDER_SPEC = f"""\
extends: {SPECS / "niah.yaml"}
haystack:
  sources: [{{type: files, paths: [story.txt]}}]
  builder:
    type: snippets
    count: 2
    snippet_tokens: 20
    target_tokens: 200
    min_document_tokens: 5000
"""  # `min_document_tokens` is on line 9


def test_deep_finds_a_builder_with_no_long_enough_document(tmp_path: Path) -> None:
    (tmp_path / "story.txt").write_text(STORY, encoding="utf-8")
    (tmp_path / "snip.yaml").write_text(BUILDER_SPEC, encoding="utf-8")
    assert _validate(tmp_path, "snip.yaml").returncode == 0
    output = _clean_failure(_validate(tmp_path, "--deep", "snip.yaml"))
    assert "snip.yaml:9:" in output and ": haystack.builder.min_document_tokens: " in output, output
    # the story has len(STORY) // 4 tokens by the builder's measure (characters / 4)
    assert f"the longest of 1 has about {len(STORY) // 4}" in output, output
    # the three configs of niah share the problem, so it is reported once, for all of them
    assert output.count("min_document_tokens:") == 1 and "config " not in output, output


BUDGET_SPEC = f"""\
extends: {SPECS / "niah.yaml"}
variants: null
needle:
  needles: [The secret word is banana.]
  question: What is the secret word?
  answers: [banana]
overlap_budgets:
  - {{metric: rouge2_precision, max: 0.9}}
  - {{metric: rouge1_precision, max: 0.5}}
"""  # the second budget's `max` is on line 9


def test_a_static_overlap_budget_is_checked_by_every_validate(tmp_path: Path) -> None:
    (tmp_path / "budget.yaml").write_text(BUDGET_SPEC, encoding="utf-8")
    output = _clean_failure(_validate(tmp_path, "budget.yaml"))
    # question words: what, is, the, secret, word; four of the five occur in the needle -> 0.8 > 0.5.
    # bigrams: what-is, is-the, the-secret, secret-word; the needle has the-secret and secret-word -> 0.5 <= 0.9
    assert "budget.yaml:9:" in output and ": overlap_budgets[1].max: " in output, output
    assert "rouge1_precision 0.800" in output and "above 0.5" in output, output
    assert "overlap_budgets[0]" not in output, output


def test_a_budget_the_texts_keep_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "budget.yaml").write_text(BUDGET_SPEC.replace("max: 0.5", "max: 0.8"), encoding="utf-8")
    result = _validate(tmp_path, "budget.yaml")
    assert result.returncode == 0, result.stderr


def test_the_shipped_specs_pass_the_deep_checks() -> None:
    result = _validate(SPECS, "--deep", *sorted(p.name for p in SPECS.glob("*.yaml")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("sources read and checked") == len(list(SPECS.glob("*.yaml")))


def test_a_kind_without_checks_reports_nothing() -> None:
    """The default hook of `NeedleKindBase`: kinds written elsewhere need not implement it."""
    from needlec.kinds.base import NeedleKindBase

    assert NeedleKindBase().spec_problems() == []
