"""The command line through its installed console script, as a user runs it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SPECS

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NEEDLEC, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_help_lists_every_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("compile", "validate", "schema", "inspect"):
        assert command in result.stdout
        assert run(command, "--help").returncode == 0


def test_dry_run_counts_without_writing(tmp_path: Path) -> None:
    result = run("compile", str(SPECS / "niah.yaml"), "-o", str(tmp_path / "out"), "--dry-run")
    assert result.returncode == 0, result.stderr
    # By hand: single, multi, passkey, single-fit and single-prefill each have 8 lengths (1K..128K,
    # doubling; they sum to 255,000) x 11 depths x 2 tokenizers = 176 items and 176 x 255,000 / 8
    # context tokens; kamradt-grid has 15 x 15 x 2 = 450 items over 15 lengths evenly spaced from
    # 1K to 128K (mean 64,500): 5 x 176 + 450 = 1,330 items and
    # 5 x 22 x 255,000 + 30 x 15 x 64,500 = 28,050,000 + 29,025,000 = 57,075,000 tokens.
    assert re.search(r"^1330 items, 57,075,000 context tokens, about [\d.,]+ MB", result.stdout)
    assert not (tmp_path / "out").exists()
    # the ceilings a user sets hold for a dry run as for the compile it sizes
    for limit in (["--max-items", "10"], ["--max-bytes", "1000"]):
        result = run("compile", str(SPECS / "niah.yaml"), "--dry-run", *limit)
        assert result.returncode == 2 and "the limit you set" in result.stderr, result.stderr
    # a slice's dry run says that it sized the whole compile, of which the slice builds about 1/N
    result = run("compile", str(SPECS / "niah.yaml"), "--dry-run", "--shard", "2/4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1330 items") and "slice 2/4 builds one shard in 4" in result.stdout


def test_compile_then_inspect(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run(
        "compile",
        str(SPECS / "niah.yaml"),
        "-o",
        str(out),
        "--select",
        "length=1000",
        "--select",
        "config=single,passkey",
        "-q",
    )
    assert result.returncode == 0, result.stderr
    assert "wrote 44 items" in result.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["configs"]) == {"single", "passkey"}
    assert manifest["content_hash"] in result.stdout

    shown = run("inspect", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "single/cl100k_base: 11 items, 11,000 context tokens" in shown.stdout
    assert ">>>The access code for the archive vault is " in shown.stdout  # configs are listed sorted

    # a damaged line is named, not a traceback; a config's file that is not there (a download of one config)
    # is said so
    damaged = tmp_path / "damaged"
    shutil.copytree(out, damaged)
    data = damaged / "data" / "single" / "cl100k_base.jsonl"
    lines = data.read_text().splitlines(keepends=True)
    data.write_text("".join([*lines[:2], lines[2][:50] + "\n", *lines[3:]]))
    (damaged / "data" / "passkey" / "cl100k_base.jsonl").unlink()
    shown = run("inspect", str(damaged), "--no-sample")
    assert shown.returncode == 2 and "Traceback" not in shown.stderr, shown.stderr
    assert f"{data}:3: not an item line" in shown.stderr
    data.write_text("".join(lines))
    shown = run("inspect", str(damaged), "--no-sample")
    assert shown.returncode == 0, shown.stderr
    assert "passkey/cl100k_base: not in this folder" in shown.stdout


def test_schema_writes_only_a_schema(tmp_path: Path) -> None:
    """`schema -o` makes missing folders and replaces a schema it wrote; a folder or any other file (a dataset's
    manifest) is refused, and left as it was."""
    target = tmp_path / "new" / "spec.schema.json"
    for _ in range(2):
        done = run("schema", "-o", str(target))
        assert done.returncode == 0, done.stderr
    assert "$schema" in json.loads(target.read_text())
    other = tmp_path / "manifest.json"
    other.write_text('{"needlec_version": "0"}')
    for bad, words in ((other, "it is not a JSON Schema"), (tmp_path, "it is a folder")):
        done = run("schema", "-o", str(bad))
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr
    assert other.read_text() == '{"needlec_version": "0"}'
    # a schema of the user's own is a JSON Schema, but not one needlec wrote
    mine = tmp_path / "mine.schema.json"
    mine.write_text('{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "mine"}')
    done = run("schema", "-o", str(mine))
    assert done.returncode == 2 and "it is not a JSON Schema needlec wrote" in done.stderr
    assert json.loads(mine.read_text())["title"] == "mine"
    # the item schema may replace the spec schema needlec wrote there
    assert run("schema", "--item", "-o", str(target)).returncode == 0
    assert json.loads(target.read_text())["title"] == "Item"


def test_a_reader_that_stops_reading_is_no_error() -> None:
    """`needlec corpora | head -1`: the pipe closes early; the command ends quietly, without a traceback."""
    shell = f"{NEEDLEC} corpora --json | head -c 10 >/dev/null; {NEEDLEC} inspect {SPECS / 'niah.yaml'} | head -c 1"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr and "bug in needlec" not in done.stderr, done.stderr


def test_inspect_spec_shows_grid_and_sample() -> None:
    result = run("inspect", str(SPECS / "niah.yaml"))
    assert result.returncode == 0, result.stderr
    assert "lengths    1,000, 2,000, 4,000, 8,000, 16,000, 32,000, 64,000, 128,000" in result.stdout
    assert "total        1330 items, 57,075,000 context tokens" in result.stdout  # derived in the test above
    assert "sample item:" in result.stdout and "<<<" in result.stdout


def test_schema_command_matches_library(tmp_path: Path) -> None:
    from needlec.spec.models import json_schema

    printed = run("schema")
    assert printed.returncode == 0
    assert json.loads(printed.stdout) == json_schema()
    assert run("schema", "-o", str(tmp_path / "s.json")).returncode == 0
    assert json.loads((tmp_path / "s.json").read_text()) == json_schema()


def test_validate_accepts_shipped_specs() -> None:
    result = run("validate", *[str(p) for p in sorted(SPECS.glob("*.yaml"))])
    assert result.returncode == 0, result.stderr
    assert (
        "niah.yaml: ok (6 config(s): single, multi, passkey, single-fit, single-prefill, kamradt-grid)" in result.stdout
    )


def test_bad_select_is_a_clear_error(tmp_path: Path) -> None:
    result = run("compile", str(SPECS / "niah.yaml"), "-o", str(tmp_path / "o"), "--select", "config=singel")
    assert result.returncode == 2
    assert "no config named singel" in result.stderr and "Traceback" not in result.stderr


def test_readme_spec_example_compiles(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(extends: niah\.yaml.*?)```", readme, re.S)
    assert example, "README lost its spec example"
    shutil.copy(SPECS / "niah.yaml", tmp_path / "niah.yaml")
    (tmp_path / "niah-short.yaml").write_text(example.group(1), encoding="utf-8")
    result = run("compile", "niah-short.yaml", "-o", "out", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (tmp_path / "out/data/default/cl100k_base.jsonl").open()]
    assert len(rows) == 10 and rows[0]["answers"] == [["blue flowerpot"]]


def test_a_broken_pipe_that_is_not_standard_outputs_is_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a reader of standard output that stopped reading ends a command quietly; a broken pipe elsewhere (a
    worker's, a server's) is reported as what it is, with its traceback."""
    import needlec.cli as cli

    def broken(args: object) -> int:
        raise BrokenPipeError(32, "a worker's pipe")

    monkeypatch.setattr(cli, "cmd_schema", broken)
    assert cli.main(["schema"]) == cli.BUG_EXIT
    err = capsys.readouterr().err
    assert "BrokenPipeError" in err and "a worker's pipe" in err


def test_a_dry_run_refuses_the_output_its_compile_would_refuse(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    result = run("compile", str(SPECS / "niah.yaml"), "--dry-run", "-o", str(mine))
    assert result.returncode == 2 and "refusing to replace" in result.stderr, result.stderr
    assert (mine / "notes.txt").read_text() == "keep"
    # the size is still given, the same as a dry run without -o sizes it
    sized = run("compile", str(SPECS / "niah.yaml"), "--dry-run")
    assert sized.returncode == 0, sized.stderr
    items, _, tokens = sized.stdout.partition(" items, ")
    tokens = tokens.partition(" context tokens")[0]
    assert f"(dry run: {int(items):,} items, {tokens} context tokens, about " in result.stderr, result.stderr
    assert f"a compile into {mine} would stop here" in result.stderr


def test_overlap_measures_a_spec_that_breaks_its_budget(tmp_path: Path) -> None:
    # NIAH's question shares most of its words with its needle: a 0.1 budget is broken before any haystack,
    # which `validate` refuses; `overlap` is where an author sees by how much, so it measures it anyway
    spec = tmp_path / "tight.yaml"
    spec.write_text(
        f"extends: {SPECS / 'niah.yaml'}\nname: tight\n"
        "overlap_budgets:\n  - {metric: rouge1_precision, max: 0.1, against: needle}\n",
        encoding="utf-8",
    )
    assert run("validate", str(spec)).returncode == 2
    shown = run("overlap", str(spec))
    assert shown.returncode == 0, shown.stderr
    row = next(line.split() for line in shown.stdout.splitlines() if line.startswith("single "))
    assert float(row[2]) > 0.1  # rouge1/needle, the column after `items`


def test_inspect_middle_shows_the_middle_length_at_the_middle_depth() -> None:
    # niah's `single`: eight lengths 1K, 2K, ... 128K (the fifth is 16,000) and depths 0, 10, ... 100
    shown = run("inspect", str(SPECS / "niah.yaml"), "--middle")
    assert shown.returncode == 0, shown.stderr
    assert "id        niah/single/cl100k_base/16000/50/" in shown.stdout, shown.stdout[-2000:]
