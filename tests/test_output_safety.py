"""Output folders: only missing, empty or needlec-written folders are replaced; nothing escapes them."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from needlec.errors import OutputError
from needlec.util.atomic import (
    PARTIAL,
    WRITTEN,
    atomic_directory,
    check_target,
    foreign_files,
    inside,
    is_needlec_dataset,
)


def _dataset(folder: Path, marker: str = "v1") -> Path:
    """A stand-in for a dataset folder: a needlec manifest, a file, and SHA256SUMS listing both (as a compile's)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"needlec_version": "0", "configs": {}}), encoding="utf-8")
    (folder / "marker.txt").write_text(marker, encoding="utf-8")
    digest = {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ("manifest.json", "marker.txt")
    }
    (folder / "SHA256SUMS").write_text("".join(f"{h}  {name}\n" for name, h in digest.items()), encoding="utf-8")
    return folder


def test_missing_and_empty_folders_are_written(tmp_path: Path) -> None:
    for target in (tmp_path / "new", tmp_path / "empty"):
        if target.name == "empty":
            target.mkdir()
        with atomic_directory(target) as tmp:
            (tmp / "a.txt").write_text("x", encoding="utf-8")
        assert (target / "a.txt").read_text(encoding="utf-8") == "x"


def test_a_needlec_dataset_is_replaced_whole(tmp_path: Path) -> None:
    target = _dataset(tmp_path / "ds")
    with atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("new", encoding="utf-8")
    assert sorted(p.name for p in target.iterdir()) == [WRITTEN, "new.txt"]
    assert not list(tmp_path.glob(f".ds{PARTIAL}*"))


def test_a_folder_of_user_files_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (target / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(OutputError, match="not empty and not a needlec dataset"), atomic_directory(target):
        pass
    assert (target / "thesis.tex").read_text(encoding="utf-8") == "years of work"


def test_a_manifest_that_is_not_ours_does_not_count(tmp_path: Path) -> None:
    target = tmp_path / "other"
    target.mkdir()
    (target / "manifest.json").write_text("[1, 2]", encoding="utf-8")
    assert not is_needlec_dataset(target)
    with pytest.raises(OutputError), atomic_directory(target):
        pass
    assert (target / "manifest.json").read_text(encoding="utf-8") == "[1, 2]"


def test_an_existing_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("keep me", encoding="utf-8")
    with pytest.raises(OutputError, match="existing file"):
        check_target(target)
    assert target.read_text(encoding="utf-8") == "keep me"


def test_a_folder_under_an_existing_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("keep me", encoding="utf-8")
    for target in (blocker / "out", blocker / "deeper" / "out"):
        with pytest.raises(OutputError, match=r"file\.txt is an existing file, so no folder can be made inside it"):
            check_target(target)
    with pytest.raises(OutputError, match="no folder can be made inside it"), atomic_directory(blocker / "out"):
        pass
    assert blocker.read_text(encoding="utf-8") == "keep me"


def test_root_home_cwd_and_ancestors_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for target in (Path("/"), Path("~"), Path("."), Path(".."), tmp_path, work / ".." / ".."):
        with pytest.raises(OutputError, match="refusing to write"):
            check_target(target)


def test_the_folder_holding_the_spec_is_refused(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "s.yaml"
    spec.write_text("name: x\n", encoding="utf-8")
    for target in (specs, tmp_path):
        with pytest.raises(OutputError):
            check_target(target, guard=(spec,))
    assert spec.read_text(encoding="utf-8") == "name: x\n"


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "ds"
    started, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with atomic_directory(target) as tmp:
                (tmp / "first.txt").write_text("1", encoding="utf-8")
                started.set()
                release.wait(10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(10)
    with pytest.raises(OutputError, match="another needlec command"), atomic_directory(target):
        pass
    release.set()
    thread.join()
    assert not errors
    assert (target / "first.txt").is_file()


def test_the_swap_keeps_a_complete_folder_at_every_moment(tmp_path: Path) -> None:
    target = _dataset(tmp_path / "ds", "old")
    seen: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                seen.append((target / "marker.txt").read_text(encoding="utf-8"))
            except FileNotFoundError:
                seen.append("MISSING")

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for round_ in range(30):
            with atomic_directory(target) as tmp:
                _dataset(tmp, f"new{round_}")
    finally:
        stop.set()
        watcher.join()
    assert "MISSING" not in seen
    assert (target / "marker.txt").read_text(encoding="utf-8") == "new29"


def test_an_interrupted_swap_is_reported_with_the_way_back(tmp_path: Path) -> None:
    old = _dataset(tmp_path / f".ds{PARTIAL}old-123456", "old")  # what a crash between two renames leaves
    with pytest.raises(OutputError, match="mv "), atomic_directory(tmp_path / "ds"):
        pass
    assert (old / "marker.txt").read_text(encoding="utf-8") == "old"


def test_a_failed_write_keeps_the_old_dataset(tmp_path: Path) -> None:
    target = _dataset(tmp_path / "ds", "old")
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "half.txt").write_text("x", encoding="utf-8")
        raise RuntimeError("boom")
    assert (target / "marker.txt").read_text(encoding="utf-8") == "old"
    assert not list(tmp_path.glob(f".ds{PARTIAL}*"))


def test_a_failed_write_takes_back_only_the_empty_folders_it_made(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_directory(tmp_path / "runs" / "2026" / "dec" / "ds") as tmp:
        (tmp / "half.txt").write_text("x", encoding="utf-8")
        raise RuntimeError("boom")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["notes.txt"]  # the user's folder stays

    # a folder it made that holds something by then (a compile's kept shards) stays, with those above it
    with pytest.raises(RuntimeError), atomic_directory(tmp_path / "runs" / "2027" / "ds"):
        (tmp_path / "runs" / "2027" / ".ds.shards").mkdir()
        raise RuntimeError("boom")
    assert [p.name for p in (tmp_path / "runs" / "2027").iterdir()] == [".ds.shards"]

    # a write that succeeds keeps every folder it made
    with atomic_directory(tmp_path / "runs" / "2028" / "ds") as tmp:
        (tmp / "a.txt").write_text("x", encoding="utf-8")
    assert (tmp_path / "runs" / "2028" / "ds" / "a.txt").is_file()


@pytest.mark.parametrize("relative", ["../evil.jsonl", "/tmp/evil.jsonl", "data/../../evil.jsonl", "a/../../b"])
def test_written_paths_cannot_leave_the_output_folder(tmp_path: Path, relative: str) -> None:
    with pytest.raises(OutputError, match="outside the output folder"):
        inside(tmp_path / "out", relative)


def test_a_link_inside_the_output_cannot_lead_out(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path, out / "data")
    with pytest.raises(OutputError):
        inside(out, "data/../../x.jsonl")
    assert inside(out, "data2/x.jsonl") == (out / "data2" / "x.jsonl").resolve()


def test_a_written_folder_records_its_files_and_refuses_others(tmp_path: Path) -> None:
    """A folder without SHA256SUMS gets `.needlec-written`; a file added to it afterwards, or one SHA256SUMS
    does not list, keeps the folder from being replaced."""
    target = tmp_path / "report"
    with atomic_directory(target) as tmp:
        (tmp / "plots").mkdir()
        (tmp / "plots" / "a.svg").write_text("<svg/>", encoding="utf-8")
        (tmp / "summary.json").write_text("{}", encoding="utf-8")
    assert (target / WRITTEN).read_text(encoding="utf-8").split() == ["plots/a.svg", "summary.json", WRITTEN]
    assert foreign_files(target) == []
    (target / "plots" / "mine.svg").write_text("my own", encoding="utf-8")
    with (
        pytest.raises(OutputError, match=r"1 other file\(s\) \(plots/mine.svg\)"),
        atomic_directory(target, owned=lambda folder: (folder / "summary.json").is_file()),
    ):
        pass
    assert (target / "plots" / "mine.svg").read_text(encoding="utf-8") == "my own"

    listed = _dataset(tmp_path / "ds")
    assert foreign_files(listed) == []
    (listed / "notes.txt").write_text("mine", encoding="utf-8")
    (listed / ".DS_Store").write_bytes(b"\0")  # a file browser's: no reason to keep the folder
    assert foreign_files(listed) == ["notes.txt"]
    with pytest.raises(OutputError, match=r"notes\.txt"):
        check_target(listed)
    assert (listed / "notes.txt").read_text(encoding="utf-8") == "mine"
    # SHA256SUMS missing or unreadable: the manifest still says what needlec wrote, and the user's file stays
    for damage in (b"", b"\xff\xfe not text", None):
        if damage is None:
            (listed / "SHA256SUMS").unlink()
        else:
            (listed / "SHA256SUMS").write_bytes(damage)
        assert foreign_files(listed) == ["marker.txt", "notes.txt"]  # (marker.txt: the manifest lists no data)
        with pytest.raises(OutputError, match=r"notes\.txt"):
            check_target(listed)


def test_another_targets_temporary_folders_are_left_alone(tmp_path: Path) -> None:
    # `out[12]` as a glob pattern matches `out1`: the clean-up of its leftovers must not take out1's work in
    # progress, nor the previous dataset out1 keeps while it swaps, nor those of a target whose name
    # begins like this one's
    busy = tmp_path / f".out1{PARTIAL}0123456789ab"
    busy.mkdir()
    (busy / "half.jsonl").write_text("{}\n", encoding="utf-8")
    kept = _dataset(tmp_path / f".out1{PARTIAL}old-0123456789ab", "previous")
    longer = tmp_path / f".out[12].x{PARTIAL}0123456789ab"
    longer.mkdir()
    mine = tmp_path / f".out[12]{PARTIAL}0123456789ab"  # this target's own leftover goes
    mine.mkdir()
    with atomic_directory(tmp_path / "out[12]") as tmp:
        (tmp / "a.txt").write_text("a", encoding="utf-8")
    assert (busy / "half.jsonl").is_file() and (kept / "marker.txt").read_text(encoding="utf-8") == "previous"
    assert longer.is_dir() and not mine.exists()
    assert (tmp_path / "out[12]" / "a.txt").read_text(encoding="utf-8") == "a"


def test_a_dataset_whose_card_was_edited_is_not_replaced(tmp_path: Path) -> None:
    # a dataset folder as a compile leaves it: SHA256SUMS lists the card and the manifest with their hashes
    target = tmp_path / "ds"
    target.mkdir()
    (target / "manifest.json").write_text(json.dumps({"needlec_version": "0", "configs": {}}), encoding="utf-8")
    (target / "README.md").write_text("# card\n", encoding="utf-8")
    sums = "".join(
        f"{hashlib.sha256((target / name).read_bytes()).hexdigest()}  {name}\n"
        for name in ("README.md", "manifest.json")
    )
    (target / "SHA256SUMS").write_text(sums, encoding="utf-8")
    with atomic_directory(target) as tmp:  # as written: replaced
        (tmp / "manifest.json").write_text(json.dumps({"needlec_version": "0", "configs": {}}), encoding="utf-8")
        (tmp / "README.md").write_text("# card\n", encoding="utf-8")
        (tmp / "SHA256SUMS").write_text(sums, encoding="utf-8")
    (target / "README.md").write_text("# card\n\nMy notes on this run.\n", encoding="utf-8")
    with pytest.raises(OutputError, match=r"README\.md changed since needlec wrote it"), atomic_directory(target):
        pass
    assert "My notes" in (target / "README.md").read_text(encoding="utf-8")
