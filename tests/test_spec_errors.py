"""Bad specs through the real command line: short reports that point at the offending line."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from needlec.errors import SpecError
from needlec.spec import loader

ROOT = Path(__file__).resolve().parents[1]
NIAH = ROOT / "specs" / "niah.yaml"
MAX_LINES = 25

# A small valid spec; each case below changes one line of it (or adds lines after it).
BASE = """\
name: small
title: Small test spec
seed: 7
tokenizers: [cl100k_base]
haystack:
  sources:
    - type: builtin
      books: [Ruth]
grid:
  lengths: [200, 400]
  depths: [0, 50, 100]
  repeats: 1
needle:
  needles:
    - The magic word is banana.
  question: What is the magic word?
  answers: [banana]
prompt:
  system: You answer from the document only.
  user: |-
    Read the document.

    {{ context }}

    {{ question }}
scoring:
  metric: contains
"""


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def needlec(*args: str | Path, cwd: Path) -> Result:
    env = {**os.environ, "NEEDLEC_CACHE_DIR": str(cwd / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "needlec.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_command(command: str, spec: str, cwd: Path) -> Result:
    if command == "validate":
        return needlec("validate", spec, cwd=cwd)
    return needlec("compile", "--dry-run", "--quiet", spec, cwd=cwd)


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, f"{old!r} must occur exactly once in the spec"
    return text.replace(old, new)


def line_of(text: str, marker: str, occurrence: int = 1) -> int:
    """1-based number of the line holding the `occurrence`-th copy of `marker`."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if marker in line]
    assert len(hits) >= occurrence, f"{marker!r} not found {occurrence} time(s)"
    return hits[occurrence - 1]


def assert_reported(result: Result, where: list[str], expected: list[str]) -> None:
    """A failed run with a short report naming every location and message, without a traceback."""
    report = result.output
    assert result.returncode == 2, report
    assert "Traceback" not in report, report
    assert len(report.splitlines()) < MAX_LINES, report
    for location in where:
        assert location in result.stderr, f"{location!r} missing from:\n{report}"
    for text in expected:
        assert text in result.stderr, f"{text!r} missing from:\n{report}"


@dataclass(frozen=True)
class Case:
    id: str
    spec: str
    marker: str  # text on the line the report must point at
    expected: tuple[str, ...]
    occurrence: int = 1


CASES = [
    Case("unknown-top-level-key", edit("grid:\n", "grdi:\n"), "grdi:", ("unknown key 'grdi'", "Did you mean 'grid'?")),
    Case(
        "every-bad-depth",
        edit("  depths: [0, 50, 100]", "  depths: [0, 150, -5]"),
        "depths: [0, 150, -5]",
        ("grid.depths[1]: every depth must be between 0 and 100, got 150 (depths[1]) and -5 (depths[2])",),
    ),
    Case(
        "unknown-text-encoding",
        edit(
            "    - type: builtin\n      books: [Ruth]", "    - type: files\n      paths: [a.txt]\n      encoding: utf-9"
        ),
        "encoding: utf-9",
        ("haystack.sources[0].encoding: unknown text encoding 'utf-9'",),
    ),
    Case(
        "unknown-nested-key",
        edit("  lengths: [200, 400]", "  lenghts: [200, 400]"),
        "lenghts:",
        ("grid.lenghts: unknown key 'lenghts'", "Did you mean 'lengths'?"),
    ),
    Case(
        "length-in-thousands",  # 4k could be 4,000 or 4,096: the spec is told to say which
        edit("  lengths: [200, 400]", "  lengths: [200, 4k]"),
        "lengths: [200, 4k]",
        ("grid.lengths[1]: expected a whole number of tokens (got '4k'): write 4000 or 4096",),
    ),
    Case("wrong-type-seed", edit("seed: 7", "seed: abc"), "seed: abc", ("seed:", "expected a whole number", "'abc'")),
    Case(
        "misspelt-key-of-a-chosen-source-type",  # the keys listed are the `files` source's, not every source's
        edit(
            "    - type: builtin\n      books: [Ruth]", "    - type: files\n      paths: [a.txt]\n      encodng: utf-8"
        ),
        "encodng: utf-8",
        ("Did you mean 'encoding'?", "Allowed keys: encoding, field, filters, paths, type."),
    ),
    Case(
        "misspelt-key-of-a-needle-without-its-type",  # a needle without `type` is a template one: its keys only
        edit("  question: What is the magic word?", "  questoin: What is the magic word?"),
        "questoin:",
        ("Did you mean 'question'?", "Allowed keys: answers, needles, question, type, vars."),
    ),
    Case(
        "quoted-boolean",  # a string is no boolean, though it spells one
        edit("  metric: contains", '  metric: contains\n  whole_word: "yes"'),
        'whole_word: "yes"',
        ("scoring.whole_word:",),
    ),
    Case(
        "wrong-type-repeats",
        edit("  repeats: 1", "  repeats: many"),
        "repeats: many",
        ("grid.repeats:", "expected a whole number", "'many'"),
    ),
    Case(
        "unknown-source-type",
        edit("    - type: builtin\n      books: [Ruth]", "    - type: file\n      paths: [a.txt]"),
        "- type: file",
        ("unknown type 'file'", "Did you mean 'files'?"),
    ),
    Case(
        "source-type-of-a-plugin-not-installed",  # nothing close: the hint says where such a type comes from
        edit("    - type: builtin\n      books: [Ruth]", "    - type: tide_log\n      entries: 3"),
        "- type: tide_log",
        ("unknown type 'tide_log'", "A plugin's component is found once its package is installed"),
    ),
    Case(
        "files-source-matches-nothing",
        edit("    - type: builtin\n      books: [Ruth]", "    - type: files\n      paths: [haystacks/*.txt]"),
        "- type: files",
        ("haystack.sources[0]", "'haystacks/*.txt' matched no"),
    ),
    Case(
        "needle-template-syntax-error",
        edit("The magic word is banana.", "The magic word is {{ word."),
        "{{ word.",
        ("needle.needles[0]", "template syntax error"),
    ),
    Case(
        "question-unknown-variable",
        edit("What is the magic word?", "What is the {{ magic }} word?"),
        "{{ magic }}",
        ("needle.question", "'magic' is undefined"),
    ),
    Case(
        "prompt-unknown-variable",
        edit("    {{ question }}", "    {{ questoin }}"),
        "  user: |-",
        ("prompt.user", "'questoin' is undefined"),
    ),
    Case(
        "prompt-system-unknown-variable",
        edit("  system: You answer from the document only.", "  system: You are {{ persona }}."),
        "  system:",
        ("prompt.system", "'persona' is undefined"),
    ),
    Case(
        "context-missing-from-user-template",
        edit("    {{ context }}\n", "    (no document)\n"),
        "  user: |-",
        ("prompt.user", "{{ context }}"),
    ),
    Case(
        "context-twice-in-user-template",
        edit("    {{ question }}", "    {{ question }} {{ context }}"),
        "  user: |-",
        ("prompt.user", "exactly once", "it is inserted 2 times"),
    ),
    Case(
        "context-in-system-template",  # named at the system template, where it is wrong
        edit("  system: You answer from the document only.", '  system: "Document: {{ context }}"'),
        "  system:",
        ("prompt.system", "the system template must not use `{{ context }}`"),
    ),
    Case(
        "context-through-a-filter",
        edit("    {{ context }}\n", "    {{ context | upper }}\n"),
        "  user: |-",
        ("prompt.user", "a filter changed it"),
    ),
    Case(
        "duplicate-key",
        edit("seed: 7\n", "seed: 7\nseed: 8\n"),
        "seed: 8",
        ("duplicate key 'seed'", "first defined at line 3"),
    ),
    Case(
        "duplicate-nested-key",
        edit("  answers: [banana]", "  answers: [banana]\n  question: Again?"),
        "question: Again?",
        ("needle.question", "duplicate key 'question'"),
    ),
    Case(
        "yaml-syntax-unclosed-flow",
        edit("  depths: [0, 50, 100]", "  depths: [0, 50, 100"),
        "  repeats: 1",
        ("not valid YAML/JSON",),
    ),
    Case(
        "yaml-syntax-unclosed-quote",  # named where the quote opens, not at the end of the file
        edit("title: Small test spec", 'title: "Small test spec'),
        'title: "Small test spec',
        ("a quoted string opens here and is never closed", "Close the quote"),
    ),
    Case(
        "yaml-syntax-bad-indent",
        edit("  question: What is the magic word?", "   question: What is the magic word?"),
        "   question:",
        ("not valid YAML/JSON",),
    ),
]


@pytest.mark.parametrize("command", ["validate", "compile"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_spec_is_reported_at_its_line(case: Case, command: str, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(case.spec, encoding="utf-8")
    line = line_of(case.spec, case.marker, case.occurrence)

    result = run_command(command, "spec.yaml", tmp_path)

    assert_reported(result, [f"spec.yaml:{line}:"], list(case.expected))
    assert "spec is invalid (" in result.stderr
    if command == "compile":
        assert result.stderr.startswith("error: ")
        assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("command", ["validate", "compile"])
def test_base_spec_is_valid(command: str, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(BASE, encoding="utf-8")
    result = run_command(command, "spec.yaml", tmp_path)
    assert result.returncode == 0, result.output
    assert result.stderr == ""
    if command == "validate":
        assert result.stdout.strip() == "spec.yaml: ok (1 config(s): default)"
    else:
        assert result.stdout.startswith("6 items, 1,800 context tokens")


def test_absolute_spec_path_is_named_in_the_report(tmp_path: Path) -> None:
    spec = tmp_path / "sub dir" / "bad.yaml"
    spec.parent.mkdir()
    text = edit("seed: 7", "seed: abc")
    spec.write_text(text, encoding="utf-8")
    result = needlec("validate", spec, cwd=tmp_path)
    assert_reported(result, [f"{spec}:{line_of(text, 'seed: abc')}:"], ["seed:"])


def test_schema_problems_are_all_reported_at_once(tmp_path: Path) -> None:
    text = edit("seed: 7", "seed: abc")
    text = edit("  lengths: [200, 400]", "  lenghts: [200, 400]", text)
    text = edit("    - type: builtin\n      books: [Ruth]", "    - type: bultin\n      books: [Ruth]", text)
    text = edit("  metric: contains", "  metric: contains\n  bogus: 1", text)
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    result = needlec("validate", "spec.yaml", cwd=tmp_path)

    where = [
        f"spec.yaml:{line_of(text, marker)}:" for marker in ("seed: abc", "lenghts:", "- type: bultin", "bogus: 1")
    ]
    assert_reported(
        result,
        where,
        [
            "seed:",
            "'abc'",
            "unknown key 'lenghts'",
            "Did you mean 'lengths'?",
            "unknown type 'bultin'",
            "Did you mean 'builtin'?",
            "unknown key 'bogus'",
        ],
    )
    assert "spec is invalid (" in result.stderr
    assert "problems):" in result.stderr


def test_problems_inside_one_mapping_are_all_reported_at_once(tmp_path: Path) -> None:
    # a range's bad spacing, its reversed ends and a bad depth beside it: three problems in one round, where
    # checks that ran after the whole mapping had validated used to wait for the first to be fixed
    text = edit(
        "  lengths: [200, 400]\n  depths: [0, 50, 100]",
        "  lengths: {min: 400, max: 200, count: 2, spacing: logarithmic}\n  depths: [0, 50, 120]",
    )
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    result = needlec("validate", "spec.yaml", cwd=tmp_path)
    line = line_of(text, "spacing: logarithmic")
    assert_reported(
        result,
        [f"spec.yaml:{line}:", f"spec.yaml:{line + 1}:"],
        [
            "grid.lengths.max: `max` must be at least `min`",
            "grid.lengths.spacing: expected one of 'linear', 'log', got 'logarithmic'",
            "grid.depths[2]: every depth must be between 0 and 100, got 120",
        ],
    )
    assert "spec is invalid (3 problems):" in result.stderr


def test_duplicate_keys_are_all_reported_at_once(tmp_path: Path) -> None:
    text = edit("seed: 7\n", "seed: 7\nseed: 8\n")
    text = edit("  repeats: 1\n", "  repeats: 1\n  repeats: 2\n", text)
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    result = needlec("validate", "spec.yaml", cwd=tmp_path)

    assert_reported(
        result,
        [f"spec.yaml:{line_of(text, 'seed: 8')}:", f"spec.yaml:{line_of(text, 'repeats: 2')}:"],
        ["duplicate key 'seed'", "duplicate key 'repeats'", "(2 problems)"],
    )


def test_source_and_prompt_problems_are_reported_together(tmp_path: Path) -> None:
    text = edit(
        "    - type: builtin\n      books: [Ruth]",
        "    - type: files\n      paths: [missing/*.txt]\n    - type: files\n      paths: [none/*.md]",
    )
    text = edit("    {{ context }}\n", "    (no document)\n", text)
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    for command in ("validate", "compile"):
        result = run_command(command, "spec.yaml", tmp_path)
        assert_reported(
            result,
            [
                f"spec.yaml:{line_of(text, 'paths: [missing') - 1}:",
                f"spec.yaml:{line_of(text, 'paths: [none') - 1}:",
                f"spec.yaml:{line_of(text, '  user: |-')}:",
            ],
            ["haystack.sources[0]", "haystack.sources[1]", "prompt.user", "(3 problems)"],
        )


def test_every_variant_is_checked(tmp_path: Path) -> None:
    text = (
        BASE
        + """\
variants:
  size:
    small: {}
    large:
      grid:
        repeats: lots
  style:
    plain: {}
    fancy:
      prompt:
        sytem: Be fancy.
"""
    )
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    result = needlec("validate", "spec.yaml", cwd=tmp_path)

    assert_reported(
        result,
        [f"spec.yaml:{line_of(text, 'repeats: lots')}:", f"spec.yaml:{line_of(text, 'sytem:')}:"],
        ["grid.repeats:", "'lots'", "unknown key 'sytem'", "Did you mean 'system'?"],
    )
    # each problem is reported once, although it occurs in two of the four configs
    assert result.stderr.count("'lots'") == 1
    assert result.stderr.count("unknown key 'sytem'") == 1


def test_errors_in_a_spec_that_extends_niah_point_at_the_child(tmp_path: Path) -> None:
    parent = os.path.relpath(NIAH, tmp_path)
    good = f"""\
extends: {parent}
grid:
  lengths: [1000]
variants:
  needles:
    passkey:
      needle:
        needles:
          - The vault code is {{{{ code }}}}.
"""
    (tmp_path / "child.yaml").write_text(good, encoding="utf-8")
    ok = needlec("validate", "child.yaml", cwd=tmp_path)
    assert ok.returncode == 0, ok.output
    assert "6 config(s): single, multi, passkey, single-fit, single-prefill, kamradt-grid" in ok.stdout

    bad = good.replace("{{ code }}", "{{ cod }}").replace("  lengths: [1000]", "  lenghts: [1000]")
    (tmp_path / "child.yaml").write_text(bad, encoding="utf-8")
    result = needlec("validate", "child.yaml", cwd=tmp_path)
    assert_reported(
        result, [f"child.yaml:{line_of(bad, 'lenghts:')}:"], ["unknown key 'lenghts'", "Did you mean 'lengths'?"]
    )
    assert "niah.yaml" not in result.stderr

    bad = good.replace("{{ code }}", "{{ cod }}")
    (tmp_path / "child.yaml").write_text(bad, encoding="utf-8")
    result = needlec("compile", "--dry-run", "child.yaml", cwd=tmp_path)
    assert_reported(result, [f"child.yaml:{line_of(bad, '{{ cod }}')}:"], ["needle.needles[0]", "'cod' is undefined"])


def test_missing_extended_spec_points_at_extends(tmp_path: Path) -> None:
    text = "name: x\nextends: nowhere/parent.yaml\n"
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    result = needlec("validate", "spec.yaml", cwd=tmp_path)
    assert_reported(result, ["spec.yaml:2:"], ["extends:", "'nowhere/parent.yaml' not found"])


def test_validate_reports_each_file_and_fails_if_any_fails(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(BASE, encoding="utf-8")
    bad = edit("  repeats: 1", "  repeats: many")
    (tmp_path / "bad.yaml").write_text(bad, encoding="utf-8")

    result = needlec("validate", "good.yaml", "bad.yaml", "missing.yaml", cwd=tmp_path)

    assert_reported(result, [f"bad.yaml:{line_of(bad, 'repeats: many')}:", "missing.yaml"], ["spec file not found"])
    assert "good.yaml: ok" in result.stdout


def test_empty_and_non_mapping_specs(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing here\n", encoding="utf-8")
    (tmp_path / "list.yaml").write_text("- name: x\n", encoding="utf-8")
    (tmp_path / "latin.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    for name, message in [
        ("empty.yaml", "the spec is empty"),
        ("list.yaml", "must be a mapping"),
        ("latin.yaml", "not UTF-8"),
    ]:
        result = needlec("compile", "--dry-run", name, cwd=tmp_path)
        assert_reported(result, [name], [message])


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML was built without libyaml")
@pytest.mark.parametrize(
    "path",
    sorted(
        [
            *(ROOT / "specs").rglob("*.yaml"),
            *(ROOT / "examples").glob("*.yaml"),
            *(ROOT / "tests" / "malformed").glob("*"),
        ]
    ),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_libyaml_reads_a_spec_as_the_python_parser_does(path: Path) -> None:
    """Specs are read by libyaml where PyYAML has it: the same values at the same lines and columns, and a
    text it refuses is read again by the pure-Python parser, whose report users see."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")

    def read(parser: Any) -> Any:
        try:
            doc = loader._load_text(text, path.name, parser) if parser else loader.load_text(text, path.name)
        except loader._Refused:
            return "refused"
        except SpecError as exc:
            return exc.render()
        return doc.data, doc.values, doc.keys

    slow = read(yaml.SafeLoader)
    assert read(yaml.CSafeLoader) in (slow, "refused")
    assert read(None) == slow


def test_a_problem_the_merge_makes_names_its_configs(tmp_path: Path) -> None:
    """The spec's own scoring is fine, and so is the variant's; merged, config `short` keeps `extract` and `then`,
    which `contains` does not use. The report points at the key, names the key that picks the kind (`metric`,
    not `type`) and says which configs have the problem, once for all of them."""
    text = (
        BASE.replace(
            "scoring:\n  metric: contains\n",
            "scoring:\n  metric: final_answer\n  extract: [last_line]\n  then: {metric: exact}\n",
        )
        + """\
variants:
  answer:
    full: {}
    short:
      scoring: {metric: contains}
  size:
    one: {}
    two: {grid: {repeats: 2}}
"""
    )
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    result = needlec("validate", "spec.yaml", cwd=tmp_path)

    assert_reported(
        result,
        [f"spec.yaml:{line_of(text, 'extract:')}:", f"spec.yaml:{line_of(text, 'then:')}:"],
        [
            "scoring.extract: key 'extract' is not used by this kind (metric 'contains') "
            "(in configs 'short-one', 'short-two')",
            "check the `metric` key",
        ],
    )
    assert result.stderr.count("in configs 'short-one', 'short-two'") == 2


def test_an_option_metric_over_needles_without_options_is_refused(tmp_path: Path) -> None:
    """`choice` scores the option a response picks; the template kind gives no options, so every item would
    score 0. validate says so at the metric."""
    text = BASE.replace("scoring:\n  metric: contains\n", "scoring:\n  metric: choice\n")
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")

    result = needlec("validate", "spec.yaml", cwd=tmp_path)

    assert_reported(
        result,
        [f"spec.yaml:{line_of(text, 'metric: choice')}:"],
        ["scoring.metric: metric `choice` scores the option a response picks", "gives its items no options"],
    )
