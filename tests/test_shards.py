"""Shards: resume after a kill or a failed cell, `--shard I/N` slices and `merge`, byte identity."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from needlec.cli import main
from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.shards import BLOCK, STORE_MARK
from needlec.errors import ContractError


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def finished(store: Path) -> set[str]:
    """Names of the finished shards in a store (a summary on disk means a whole shard)."""
    return {p.stem for p in store.glob("*.json") if p.name != STORE_MARK}


BASE = """\
name: shards-test
title: Shards test
description: One needle in prose, for the shard tests.
license: CC-BY-4.0
languages: [en]
seed: 11
tokenizers: [cl100k_base, o200k_base]
haystack:
  sources: [{type: builtin, corpus: web-bible}]
needle:
  type: template
  needles: [The lighthouse keeper on Marrow Point paints his door green every spring.]
  question: What colour does the lighthouse keeper on Marrow Point paint his door?
  answers: [green]
placement: {snap: sentence, depth_tolerance: 6}
prompt:
  user: "{{ context }}\\n\\n{{ question }}"
scoring: {metric: contains}
"""


def write_spec(folder: Path, body: str) -> Path:
    """A small spec of our own (the base above plus `body`, whose keys come after)."""
    path = folder / "spec.yaml"
    path.write_text(BASE + body, encoding="utf-8")
    return path


def test_killed_compile_resumes_with_only_the_missing_shards(tmp_path: Path) -> None:
    # 2 configs x 2 tokenizers x 2 lengths = 8 cells of 11 depths x 4 repeats (44 items: 3 shards each)
    spec = write_spec(
        tmp_path,
        "grid:\n  lengths: [8000, 16000]\n  depths: {start: 0, stop: 100, count: 11}\n  repeats: 4\n"
        "variants:\n  needles:\n    single: {}\n    passkey:\n      needle:\n"
        "        needles: ['The vault code is {{ code }}.']\n        question: What is the vault code?\n"
        "        answers: ['{{ code }}']\n        vars: {code: {kind: digits, length: 7}}\n",
    )
    cells, per_cell = 8, -(-44 // BLOCK)
    total = cells * per_cell
    out = tmp_path / "out"
    store = tmp_path / ".out.shards"
    proc = subprocess.Popen(
        [sys.executable, "-m", "needlec.cli", "compile", str(spec), "-o", str(out), "-j", "2", "--verify", "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so the kill reaches the workers too
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(finished(store)) < 3 and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the compile ended before it could be killed: " + proc.stderr.read().decode()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    time.sleep(0.5)  # let orphaned workers (if any) die with their group
    kept = finished(store)
    assert 3 <= len(kept) < total
    assert not out.exists()

    result = compile_spec(spec, out, CompileOptions(progress=False, jobs=2, verify=True))
    assert (result.shards, result.reused, result.built) == (total, len(kept), total - len(kept))
    assert not store.exists() and not list(tmp_path.glob(".out.partial-*"))

    fresh = compile_spec(spec, tmp_path / "fresh", CompileOptions(progress=False, jobs=1, verify=True))
    assert (fresh.reused, fresh.built) == (0, total)
    assert tree_bytes(out) == tree_bytes(tmp_path / "fresh")


def test_failing_cell_names_itself_and_the_others_are_kept(tmp_path: Path) -> None:
    grid = "grid:\n  lengths: [1000, 2000]\n  depths: [0, 50, 100]\n"
    # the `strict` config snaps to paragraphs with no depth tolerance: its 50% needles land elsewhere
    bad = write_spec(
        tmp_path,
        grid + "variants:\n  budget:\n    loose: {}\n    strict:\n"
        "      placement: {snap: paragraph, depth_tolerance: 0}\n",
    )
    out = tmp_path / "out"
    with pytest.raises(ContractError) as failed:
        compile_spec(bad, out, CompileOptions(progress=False))
    message = failed.value.render()
    cells = "strict/cl100k_base/1000, strict/cl100k_base/2000, strict/o200k_base/1000, strict/o200k_base/2000"
    assert f"in 4 cell(s) ({cells})" in message
    assert "loose/" not in message and "depth" in message
    assert "8 finished shard(s) are kept" in message
    assert not out.exists()
    store = tmp_path / ".out.shards"
    assert len(finished(store)) == 8  # both configs' four cells, one shard each

    # the tolerance is widened: only the `strict` config's shards change, the `loose` ones are reused
    fixed = write_spec(
        tmp_path,
        grid + "variants:\n  budget:\n    loose: {}\n    strict:\n"
        "      placement: {snap: paragraph, depth_tolerance: 50}\n",
    )
    result = compile_spec(fixed, out, CompileOptions(progress=False))
    assert (result.reused, result.built) == (4, 4)
    compile_spec(fixed, tmp_path / "fresh", CompileOptions(progress=False))
    assert tree_bytes(out) == tree_bytes(tmp_path / "fresh")


def test_slices_merge_into_the_single_machine_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, "grid:\n  lengths: [1000, 4000]\n  depths: {start: 0, stop: 100, count: 21}\n")
    whole = tmp_path / "whole"
    assert main(["compile", str(spec), "-o", str(whole), "-j", "1", "-q"]) == 0
    slices = [tmp_path / f"slice{i}" for i in (1, 2, 3)]
    for i, folder in enumerate(slices, start=1):
        assert main(["compile", str(spec), "--shard", f"{i}/3", "-o", str(folder), "-j", "2", "-q"]) == 0
    assert "done: " in capsys.readouterr().out

    # the slices hold disjoint shares whose union is the whole compile's shards
    names = [{p.stem for p in (s / "shards").glob("*.json")} for s in slices]
    assert all(names) and sum(len(n) for n in names) == len(set().union(*names))

    assert main(["merge", "-o", str(tmp_path / "partial"), str(slices[0]), str(slices[2]), "-q"]) == 2
    assert "missing --shard 2/3" in capsys.readouterr().err
    merged = tmp_path / "merged"
    assert main(["merge", "-o", str(merged), *map(str, reversed(slices)), "-q"]) == 0
    assert tree_bytes(merged) == tree_bytes(whole)
    assert "SHA256SUMS" in tree_bytes(merged)

    # a slice of another compile (another selection) is refused by name
    other = tmp_path / "other"
    assert main(["compile", str(spec), "--shard", "2/3", "--select", "length=1000", "-o", str(other), "-q"]) == 0
    assert main(["merge", "-o", str(tmp_path / "mixed"), str(slices[0]), str(other), str(slices[2]), "-q"]) == 2
    assert "is a slice of another compile than" in (err := capsys.readouterr().err) and "selection (--select)" in err

    # a finished slice compiled again reuses its own shards and stays byte for byte the same
    before = tree_bytes(slices[0])
    capsys.readouterr()
    assert main(["compile", str(spec), "--shard", "1/3", "-o", str(slices[0]), "-q"]) == 0
    assert f"{len(names[0])} of {len(names[0])} shards reused" in capsys.readouterr().out
    assert tree_bytes(slices[0]) == before

    # a slice given twice is named
    twice = [str(slices[0]), str(slices[0]), str(slices[1]), str(slices[2])]
    assert main(["merge", "-o", str(tmp_path / "twice"), *twice, "-q"]) == 2
    assert "are both slice 1/3" in capsys.readouterr().err

    # a merge replaces a wider dataset only with --force, which merge takes as compile does
    wider = tmp_path / "wider"
    assert main(["compile", str(spec), "-o", str(wider), "-q"]) == 0
    narrow = [tmp_path / f"narrow{i}" for i in (1, 2)]
    for i, folder in enumerate(narrow, start=1):
        assert (
            main(["compile", str(spec), "--shard", f"{i}/2", "--select", "length=1000", "-o", str(folder), "-q"]) == 0
        )
    capsys.readouterr()
    assert main(["merge", "-o", str(wider), *map(str, narrow), "-q"]) == 2
    assert "--force" in capsys.readouterr().err and tree_bytes(wider) == tree_bytes(whole)
    assert main(["merge", "-o", str(wider), *map(str, narrow), "--force", "-q"]) == 0
    out = capsys.readouterr().out
    assert "shards reused" not in out  # a merge builds nothing and reuses nothing: it joins
    assert {p.parent.name for p in (wider / "data").rglob("*.jsonl")} == {"default"}
    rows = [json.loads(line) for path in (wider / "data").rglob("*.jsonl") for line in path.open(encoding="utf-8")]
    assert rows and {row["context_length"] for row in rows} == {1000}


def test_bad_shard_and_jobs_are_clean_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, "grid:\n  lengths: [1000]\n  depths: [0]\n")
    assert main(["compile", str(spec), "--shard", "4/3", "-o", str(tmp_path / "s"), "-q"]) == 2
    assert "1 <= I <= N" in capsys.readouterr().err
    assert main(["compile", str(spec), "--shard", "one/3", "-o", str(tmp_path / "s"), "-q"]) == 2
    assert "--shard expects I/N" in capsys.readouterr().err
    assert main(["compile", str(spec), "-j", "0", "-o", str(tmp_path / "s"), "-q"]) == 2
    assert main(["merge", "-o", str(tmp_path / "m"), str(tmp_path), "-q"]) == 2
    assert "is not a slice" in capsys.readouterr().err


def test_a_slice_is_named_as_parsed_and_an_empty_one_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, "grid:\n  lengths: [1000]\n  depths: [0]\n")  # one item per tokenizer: 2 shards
    first = tmp_path / "first"
    assert main(["compile", str(spec), "--shard", " 01/03", "-o", str(first), "-q"]) == 0
    out = capsys.readouterr().out
    assert "wrote slice 1/3: 1 shard(s)" in out and "01/03" not in out and "empty" not in out
    slices = [first]
    for i in (2, 3):
        slices.append(tmp_path / f"s{i}")
        assert main(["compile", str(spec), "--shard", f"{i}/3", "-o", str(slices[-1]), "-q"]) == 0
    out = capsys.readouterr().out
    assert out.count("is empty") == 1 and "slice 3/3 is empty: the compile has fewer than 3 shards" in out
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    assert main(["compile", str(spec), "-o", str(whole), "-q"]) == 0
    assert main(["merge", "-o", str(merged), *map(str, slices), "-q"]) == 0
    assert tree_bytes(merged) == tree_bytes(whole)


def test_merge_after_the_spec_changed_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, "grid:\n  lengths: [1000]\n  depths: [0, 50]\n")
    slices = [tmp_path / f"s{i}" for i in (1, 2)]
    for i, folder in enumerate(slices, start=1):
        assert main(["compile", str(spec), "--shard", f"{i}/2", "-o", str(folder), "-q"]) == 0
    # a comment only: the items do not change, so the slices still merge
    spec.write_text(spec.read_text(encoding="utf-8") + "# reviewed\n", encoding="utf-8")
    assert main(["merge", "-o", str(tmp_path / "same"), *map(str, slices), "-q"]) == 0
    # another depth: the slices lack its shards, and the message names the edit as the cause
    spec.write_text(spec.read_text(encoding="utf-8").replace("[0, 50]", "[0, 40]"), encoding="utf-8")
    capsys.readouterr()
    assert main(["merge", "-o", str(tmp_path / "merged"), *map(str, slices), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"{spec} has changed since the slices were compiled from it" in err and "Traceback" not in err
    assert not (tmp_path / "merged").exists()


def test_a_damaged_shard_is_built_again_and_never_copied(tmp_path: Path) -> None:
    """A shard whose lines file was edited or cut short after it was written (a stray edit, a full disk, a half
    copy) does not match the size and sha256 its summary records: a rerun builds it again instead of copying
    it into the dataset."""
    grid = "grid:\n  lengths: [1000, 2000]\n  depths: [0, 50, 100]\n"
    variants = (
        "variants:\n  budget:\n    loose: {}\n    strict:\n      placement: {snap: paragraph, depth_tolerance: %d}\n"
    )
    out = tmp_path / "out"
    with pytest.raises(ContractError):
        compile_spec(write_spec(tmp_path, grid + variants % 0), out, CompileOptions(progress=False))
    store = tmp_path / ".out.shards"
    assert len(list(store.glob("*.jsonl"))) == 8
    loose = sorted(p for p in store.glob("*.jsonl") if b'"config":"loose"' in p.read_bytes())
    assert len(loose) == 4  # the shards the fixed spec reuses
    edited, cut = loose[0], loose[1]
    text = edited.read_bytes()
    assert b'"green"' in text
    edited.write_bytes(text.replace(b'"green"', b'"grean"', 1))  # same size, other bytes
    cut.write_bytes(cut.read_bytes()[:100])

    fixed = write_spec(tmp_path, grid + variants % 50)
    result = compile_spec(fixed, out, CompileOptions(progress=False))
    assert (result.reused, result.built) == (2, 6)  # of the four loose shards, the two intact ones
    compile_spec(fixed, tmp_path / "fresh", CompileOptions(progress=False))
    assert tree_bytes(out) == tree_bytes(tmp_path / "fresh")


def test_a_damaged_slice_is_refused_by_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, "grid:\n  lengths: [1000]\n  depths: {start: 0, stop: 100, count: 21}\n")
    slices = [tmp_path / f"slice{i}" for i in (1, 2)]
    for i, folder in enumerate(slices, start=1):
        assert main(["compile", str(spec), "--shard", f"{i}/2", "-o", str(folder), "-q"]) == 0
    shard = sorted((slices[1] / "shards").glob("*.jsonl"))[0]
    shard.write_bytes(b"".join(shard.read_bytes().splitlines(keepends=True)[:3]))  # a copy cut short
    merged = tmp_path / "merged"
    assert main(["merge", "-o", str(merged), *map(str, slices), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"shard {shard.stem} in {shard.parent} is damaged" in err and "Traceback" not in err
    assert not merged.exists()


def test_a_slice_gets_a_folder_of_its_own_and_is_named_as_a_slice_where_a_dataset_goes(tmp_path: Path) -> None:
    """Without -o, `--shard I/N` writes build/NAME-slice-I-of-N, not the dataset's build/NAME; a compile or merge
    into a slice's folder is refused with the slice named and the merge to run, and nothing changes."""
    spec = Path(__file__).resolve().parents[1] / "specs" / "niah.yaml"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "needlec.cli", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)

    select = ["--select", "length=1000", "--select", "config=single", "--select", "tokenizer=cl100k_base", "-q"]
    for shard in ("1/2", "2/2"):
        made = cli("compile", str(spec), "--shard", shard, *select)
        assert made.returncode == 0, made.stderr
    slice_dir, other = tmp_path / "build" / "niah-slice-1-of-2", tmp_path / "build" / "niah-slice-2-of-2"
    assert (slice_dir / "slice.json").is_file() and not (tmp_path / "build" / "niah").exists()
    before = sorted(p.relative_to(slice_dir) for p in slice_dir.rglob("*"))
    for args in (
        ["compile", str(spec), "-o", str(slice_dir), *select],
        ["merge", "-o", str(slice_dir), str(slice_dir), str(other)],
    ):
        refused = cli(*args)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "it holds a slice of a sharded compile" in refused.stderr and "needlec merge" in refused.stderr
    assert sorted(p.relative_to(slice_dir) for p in slice_dir.rglob("*")) == before
