"""Pathological values in shipped specs of every family fail cleanly, quickly and are quoted in part.

The cases are made here from the shipped specs (a 100,000- or 200,000-character value in place of
one field, 5 MB files) rather than committed, and run through the real CLI in a fresh process
under a CPU-time watchdog (`RLIMIT_CPU`): a case that computes for long is killed and fails.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPECS

CPU_LIMIT_S = 15  # the watchdog; a clean error takes a few seconds of start-up and loading
BIG = "x" * 200_000

# (spec under specs/, text to replace, replacement, expected key path, expected words)
CASES = [
    ("ruler.yaml", "task: niah_single_1", "task: " + BIG, "needle.task", "expected one of"),
    ("needlebench/base.yaml", "task: s-rt", "task: " + BIG, "needle.task", "expected one of 's-rt'"),
    ("atc/atc-v2.yaml", "topology: chain", "topology: " + BIG, "needle.topology", "expected one of 'chain'"),
    ("atc/atc-v2.yaml", "task: atc-open", "task: " + BIG, "needle.task", "at most 64"),
    ("mlneedle.yaml", "mode: exact", "mode: exact\n  items: [" + BIG + "]", "needle.items[0]", "unknown MLNeedle"),
    ("mlneedle.yaml", "mode: exact", "mode: exact\n  items: " + BIG, "needle.items", "expected a list"),
    ("mlneedle.yaml", "mode: exact", "mode: exact\n  items: []", "needle.items", "lists no item"),
    ("niah.yaml", "name: niah", "name: " + "n" * 100_000, "name", "at most 64 characters"),
    ("niah.yaml", "type: template", "type: " + "t" * 100_000, "needle.type", "unknown type"),
    ("nolima.yaml", "type: latent_hop", "type: " + "t" * 100_000, "needle.type", "unknown type"),
    ("niah.yaml", "seed: ", "seed: " + "9" * 100_000 + " #", "seed", "not a usable number"),
]


def _watchdog() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))


def validate(spec: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", "validate", str(spec)],
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=_watchdog,
        check=False,
    )


def _variant(tmp_path: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    """A copy of the shipped specs with one value replaced; returns the file and the value's line."""
    root = tmp_path / "specs"
    shutil.copytree(SPECS, root, ignore=shutil.ignore_patterns("*.jsonl"))
    source = root / name
    text = source.read_text(encoding="utf-8")
    assert old in text, (name, old)
    target = source.parent / f"bad-{source.name}"
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    line = text[: text.index(old)].count("\n") + 1 + (1 if new.startswith(old + "\n") else 0)
    return target, line


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}:{c[3]}:{len(c[2])}" for c in CASES])
def test_a_huge_value_fails_cleanly_with_its_place(case: tuple[str, str, str, str, str], tmp_path: Path) -> None:
    name, old, new, key, words = case
    spec, line = _variant(tmp_path, name, old, new)
    result = validate(spec)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[:2000]
    assert "Traceback" not in output
    assert f"{spec.name}:{line}:" in output, output[:2000]
    assert f": {key}: " in output and words in output, output[:2000]
    assert len(output) < 2000  # the value is quoted only in part


def test_a_five_megabyte_file_is_refused_by_its_size(tmp_path: Path) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text((SPECS / "niah.yaml").read_text(encoding="utf-8") + "# " + "y" * 5_000_000 + "\n")
    result = validate(spec)
    assert result.returncode == 2
    assert "spec file is 5,00" in result.stderr and "the limit is 2,000,000" in result.stderr
    assert len(result.stderr) < 1000


def test_long_error_lines_are_clipped_and_say_how_much() -> None:
    from needlec.cli import MAX_LINE, clip

    text = "head: " + "z" * 10_000 + " tail"
    shown = clip(f"short line\n{text}")
    first, second = shown.splitlines()
    assert first == "short line"
    assert len(second) < MAX_LINE + 60
    assert second.startswith("head: zzz") and second.endswith("zzz tail")
    keep = MAX_LINE // 2 - 20
    assert f"({len(text) - 2 * keep:,} characters left out)" in second


def test_redaction_is_linear_on_long_runs_of_letters() -> None:
    from needlec.util.redact import redact

    # a URL with credentials is still masked; a 200,000-letter run is returned unchanged
    assert redact("see https://user:pw@example.org/x") == "see https://***@example.org/x"
    assert redact(BIG) == BIG


def _niah_with(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    text = (SPECS / "niah.yaml").read_text(encoding="utf-8")
    assert old in text
    spec = tmp_path / "spec.yaml"
    spec.write_text(text.replace(old, new, 1), encoding="utf-8")
    return spec, text[: text.index(old)].count("\n") + 1


def test_an_empty_haystack_file_is_named_at_the_spec_key(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    text = (SPECS / "niah.yaml").read_text(encoding="utf-8")
    start, end = text.index("haystack:"), text.index("\ngrid:")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text[:start] + "haystack:\n  sources:\n    - type: files\n      paths: [empty.txt]\n" + text[end:])
    line = text[:start].count("\n") + 3  # the `- type: files` entry under `sources:`
    command = ["compile", str(spec), "-o", str(tmp_path / "out"), "-q", "--select", "config=single,passkey"]
    result = subprocess.run(
        [sys.executable, "-m", "needlec.cli", *command, "--select", "length=1000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"spec.yaml:{line}:" in result.stderr and "haystack.sources: " in result.stderr
    assert "produced no text" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_missing_tokenizer_file_is_found_by_validate(tmp_path: Path) -> None:
    spec, line = _niah_with(
        tmp_path,
        "tokenizers: [cl100k_base, o200k_base]",
        "tokenizers:\n  - {type: hf, name: mine, path: missing/tokenizer.json}",
    )
    result = validate(spec)
    assert result.returncode == 2
    assert f"spec.yaml:{line + 1}:" in result.stderr and "tokenizers[0].path: " in result.stderr
    assert "tokenizer file not found: missing/tokenizer.json" in result.stderr
