"""Publishing: the release folder, its card and checksums, verification, download.

The Hugging Face Hub cannot be reached from the test machines, so uploads are tested with
`--dry-run`, with a stand-in for `HfApi`, and downloads from a local release folder; the real
Hub paths are only checked to fail cleanly when offline.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SPECS

from needlec.errors import OutputError
from needlec.publish.card import card_problems, schema_problems, split_front_matter
from needlec.publish.release import publish, write_release
from needlec.publish.verify import download, parse_remote, read_sums, verify_dataset

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NEEDLEC, *args], capture_output=True, text=True, timeout=300, env=env)


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


def _data_files(folder: Path) -> list[str]:
    return [f["path"] for info in _manifest(folder)["configs"].values() for f in info["files"]]


def _flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def release(small_niah: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("release") / "niah"
    write_release(small_niah, folder)
    return folder


def test_release_holds_the_data_manifest_card_and_checksums(small_niah: Path, release: Path) -> None:
    files = sorted(p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file())
    assert files == sorted(["README.md", "SHA256SUMS", "manifest.json", *_data_files(small_niah)])
    assert (release / "manifest.json").read_bytes() == (small_niah / "manifest.json").read_bytes()
    for relative in _data_files(small_niah):
        assert (release / relative).read_bytes() == (small_niah / relative).read_bytes()
    sums = read_sums(release / "SHA256SUMS")
    assert sorted(sums) == sorted(f for f in files if f != "SHA256SUMS")
    for relative, digest in sums.items():
        assert hashlib.sha256((release / relative).read_bytes()).hexdigest() == digest
    lines = (release / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert lines == sorted(lines, key=lambda line: line.split("  ", 1)[1])
    if shutil.which("sha256sum"):
        check = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=release, capture_output=True)
        assert check.returncode == 0, check.stdout


def test_release_is_deterministic(small_niah: Path, release: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    write_release(small_niah, again)
    for path in release.rglob("*"):
        if path.is_file():
            assert (again / path.relative_to(release)).read_bytes() == path.read_bytes(), path


def test_card_metadata_meets_the_hub_rules(small_niah: Path, release: Path) -> None:
    meta, body = split_front_matter((release / "README.md").read_text(encoding="utf-8"))
    assert meta["license"] == "cc-by-4.0"
    assert meta["language"] == ["en"]
    assert meta["task_categories"] == ["question-answering"]
    assert meta["size_categories"] == ["n<1K"]
    manifest = _manifest(small_niah)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == set(manifest["configs"])
    assert sum(1 for c in meta["configs"] if c.get("default")) == 1
    # the configs in the compiled card's order (the spec's: single, multi, passkey), so the default stays its
    compiled, _ = split_front_matter((small_niah / "README.md").read_text(encoding="utf-8"))
    assert [c["config_name"] for c in meta["configs"]] == [c["config_name"] for c in compiled["configs"]]
    assert meta["configs"][0]["config_name"] == "single" and meta["configs"][0].get("default")
    for name, info in manifest["configs"].items():
        assert configs[name]["data_files"] == [{"split": f["split"], "path": f["path"]} for f in info["files"]]
    assert card_problems(meta) == []
    assert "## Verifying a copy" in body and "# Needle in a Haystack" in body
    from huggingface_hub import DatasetCard

    card = DatasetCard((release / "README.md").read_text(encoding="utf-8"))
    assert card.data.to_dict()["configs"] == meta["configs"]


def test_every_config_loads_offline_with_one_schema(small_niah: Path, release: Path, tmp_path: Path) -> None:
    from datasets import load_dataset

    manifest = _manifest(small_niah)
    assert schema_problems(release, manifest) == []
    for name, info in manifest["configs"].items():
        # datasets caches local folders by path, so each load gets a fresh cache folder
        loaded = load_dataset(str(release), name=name, cache_dir=str(tmp_path / f"hf-{name}"))
        assert sorted(loaded) == sorted(f["split"] for f in info["files"])
        features = {split: loaded[split].features for split in loaded}
        assert len({repr(f) for f in features.values()}) == 1, f"config {name}: splits differ"
        for entry in info["files"]:
            split = loaded[entry["split"]]
            assert split.num_rows == entry["rows"]
            assert split[0]["config"] == name and split[0]["tokenizer"] == entry["split"]


def test_verify_accepts_a_compile_and_a_release(small_niah: Path, release: Path) -> None:
    compiled = verify_dataset(small_niah)
    assert compiled.ok and compiled.has_sums  # compiles list every file, the card included, in SHA256SUMS
    released = verify_dataset(release)
    assert released.ok and released.has_sums, released.problems
    result = run("verify", str(release))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: ") and "SHA256SUMS" in result.stdout


def test_verify_detects_a_single_flipped_byte_in_any_data_file(release: Path, tmp_path: Path) -> None:
    data_files = _data_files(release)
    assert len(data_files) == 6
    for i, relative in enumerate(data_files):
        copy = tmp_path / f"copy{i}"
        shutil.copytree(release, copy)
        size = (copy / relative).stat().st_size
        _flip(copy / relative, (size * (i + 1)) // (len(data_files) + 1))
        report = verify_dataset(copy)
        assert not report.ok, f"a flipped byte in {relative} went unnoticed"
        assert all(relative in p for p in report.problems), report.problems
        assert any("sha256" in p for p in report.problems)
    result = run("verify", str(tmp_path / "copy0"))
    assert result.returncode == 2
    assert data_files[0] in result.stderr and "Traceback" not in result.stderr


def test_verify_detects_changes_to_card_manifest_and_file_set(release: Path, tmp_path: Path) -> None:
    card = tmp_path / "card"
    shutil.copytree(release, card)
    _flip(card / "README.md", 10)
    assert any("README.md" in p and "SHA256SUMS" in p for p in verify_dataset(card).problems)

    manifest = tmp_path / "manifest"
    shutil.copytree(release, manifest)
    data = _manifest(manifest)
    first = next(iter(data["configs"].values()))["files"][0]
    first["rows"] += 1
    (manifest / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    problems = verify_dataset(manifest).problems
    assert any("content hash" in p for p in problems)
    assert any(first["path"] in p and "rows" in p for p in problems)

    extra = tmp_path / "extra"
    shutil.copytree(release, extra)
    (extra / "data" / "stray.jsonl").write_text("{}\n", encoding="utf-8")
    (extra / _data_files(release)[-1]).unlink()
    problems = verify_dataset(extra).problems
    assert any("stray.jsonl" in p and "does not list" in p for p in problems)
    assert any(_data_files(release)[-1] in p and "missing" in p for p in problems)


def test_publish_refuses_a_damaged_dataset(small_niah: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(small_niah, damaged)
    _flip(damaged / _data_files(small_niah)[0], 100)
    with pytest.raises(OutputError, match="fails verification"):
        write_release(damaged, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_card_rules_reject_bad_split_names_and_missing_metadata() -> None:
    meta = {
        "license": "cc-by-4.0",
        "language": ["en"],
        "task_categories": ["question-answering"],
        "size_categories": ["n<1K"],
        "configs": [{"config_name": "a", "default": True, "data_files": [{"split": "my-tok", "path": "x"}]}],
    }
    assert any("my-tok" in p for p in card_problems(meta))
    del meta["license"]
    assert any("license" in p for p in card_problems(meta))


def test_schema_check_names_the_field_that_differs(tmp_path: Path) -> None:
    rows_a = [{"id": "1", "seed": 1, "needles": [{"depth": 1.0}]}, {"id": "2", "seed": 2, "needles": []}]
    rows_b = [{"id": "3", "seed": "three", "needles": [{"depth": 2}]}]
    for name, rows in (("a", rows_a), ("b", rows_b)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    manifest = {"configs": {"c": {"files": [{"path": "a.jsonl", "split": "a"}, {"path": "b.jsonl", "split": "b"}]}}}
    problems = schema_problems(tmp_path, manifest)
    assert len(problems) == 2 and all("config c: splits a and b differ" in p for p in problems)
    assert any("`seed` is int in one split and str" in p for p in problems)
    assert any("`needles[].depth` is float in one split and int" in p for p in problems)  # Arrow types differ
    (tmp_path / "b.jsonl").write_text('{"id": "3", "seed": 3, "needles": [{"depth": 2.5}]}\n', encoding="utf-8")
    assert schema_problems(tmp_path, manifest) == []


def test_publish_dry_run_to_the_hub_lists_files_and_needs_no_token(release: Path, small_niah: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "HF_TOKEN"}
    result = run("publish", str(small_niah), "--to", "hf://needlec-test/niah", "--dry-run", env=env)
    assert result.returncode == 0, result.stderr
    assert "would upload 9 files" in result.stdout and "hf://needlec-test/niah" in result.stdout
    for relative, digest in read_sums(release / "SHA256SUMS").items():
        assert f"{relative}  " in result.stdout and digest in result.stdout


def test_publish_to_the_hub_without_a_token_stops_before_uploading(small_niah: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "HF_TOKEN"}
    result = run("publish", str(small_niah), "--to", "hf://needlec-test/niah", env=env)
    assert result.returncode == 2
    assert "HF_TOKEN" in result.stderr and "Traceback" not in result.stderr


def test_upload_sends_the_release_folder(small_niah: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    calls: list[tuple[str, Any]] = []

    class FakeApi:
        def __init__(self, token: str) -> None:
            calls.append(("token", token))

        def create_repo(self, repo_id: str, **kwargs: Any) -> None:
            calls.append(("create", (repo_id, kwargs)))

        def upload_folder(self, folder_path: str, **kwargs: Any) -> Any:
            files = sorted(p.relative_to(folder_path).as_posix() for p in Path(folder_path).rglob("*") if p.is_file())
            calls.append(("upload", (files, kwargs)))
            return type("Info", (), {"commit_url": "https://example.invalid/commit/1"})()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setenv("HF_TOKEN", "secret-token")
    result = publish(small_niah, "hf://needlec-test/niah", private=True)
    assert result.uploaded and result.url == "https://example.invalid/commit/1"
    assert calls[0] == ("token", "secret-token")
    assert calls[1] == ("create", ("needlec-test/niah", {"repo_type": "dataset", "private": True, "exist_ok": True}))
    files, kwargs = calls[2][1]
    assert "SHA256SUMS" in files and "README.md" in files and len(files) == 9
    assert kwargs["repo_id"] == "needlec-test/niah" and kwargs["repo_type"] == "dataset"


def test_publish_to_a_folder_through_the_cli(small_niah: Path, release: Path, tmp_path: Path) -> None:
    result = run("publish", str(small_niah), "--to", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wrote 9 files")
    assert (tmp_path / "out" / "SHA256SUMS").read_bytes() == (release / "SHA256SUMS").read_bytes()
    dry = run("publish", str(small_niah), "--to", str(tmp_path / "dry"), "--dry-run")
    assert dry.returncode == 0 and "would write 9 files" in dry.stdout
    assert not (tmp_path / "dry").exists()


def test_download_copies_and_verifies_a_release(release: Path, tmp_path: Path) -> None:
    result = run("download", str(release), str(tmp_path / "copy"))
    assert result.returncode == 0, result.stderr
    assert "8 files verified" in result.stdout
    assert verify_dataset(tmp_path / "copy").ok

    damaged = tmp_path / "damaged"
    shutil.copytree(release, damaged)
    _flip(damaged / "manifest.json", 50)
    with pytest.raises(OutputError, match="fails verification"):
        download(str(damaged), tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_download_from_the_hub_fails_cleanly_offline(tmp_path: Path) -> None:
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1"}
    result = run("download", "hf://needlec-test/niah", str(tmp_path / "dl"), env=env)
    assert result.returncode == 2
    assert "download failed" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "dl").exists()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("hf://org/name", ("org", "name", None)),
        ("hf://org/name@v1.0", ("org", "name", "v1.0")),
        ("https://huggingface.co/datasets/org/name", ("org", "name", None)),
        ("https://huggingface.co/datasets/org/name/tree/main", ("org", "name", "main")),
    ],
)
def test_hub_addresses_are_parsed(source: str, expected: tuple[str, str, str | None]) -> None:
    assert parse_remote(source) == (f"{expected[0]}/{expected[1]}", expected[2])


def test_release_card_keeps_the_compile_prose(small_niah: Path, release: Path) -> None:
    original = yaml.safe_load((small_niah / "README.md").read_text(encoding="utf-8").split("---")[1])
    meta, _ = split_front_matter((release / "README.md").read_text(encoding="utf-8"))
    for key in ("license", "language", "pretty_name", "task_categories", "tags"):
        assert meta[key] == original[key]


def test_release_carries_the_filter_audit(tmp_path: Path) -> None:
    """The card links the filter audit, so a release must hold it and checksum it."""

    from needlec.compile.pipeline import CompileOptions, compile_spec

    (tmp_path / "hay.txt").write_text(
        "The gardener waters the roses at dawn. A yellow tram rattles past "
        "the square. Bread is baked before sunrise.\n" * 40,
        encoding="utf-8",
    )
    spec = tmp_path / "filtered.yaml"
    spec.write_text(
        f"extends: {SPECS / 'niah.yaml'}\nvariants: null\ntokenizers: [cl100k_base]\n"
        "haystack:\n  sources:\n    - type: files\n      paths: [hay.txt]\n"
        "      filters: [{type: literal_terms, from_spec: [answers]}]\n"
        "grid: {lengths: [500], depths: [50]}\n",
        encoding="utf-8",
    )
    compiled = tmp_path / "compiled"
    compile_spec(spec, compiled, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    audit = sorted(p.relative_to(compiled).as_posix() for p in (compiled / "audit").rglob("*") if p.is_file())
    assert audit, "a filtered compile writes an audit"
    folder = tmp_path / "release"
    write_release(compiled, folder)
    sums = read_sums(folder / "SHA256SUMS")
    for relative in audit:
        assert (folder / relative).read_bytes() == (compiled / relative).read_bytes()
        assert relative in sums
    assert verify_dataset(folder).ok


def test_publish_and_download_never_replace_another_dataset_without_force(
    small_niah: Path, release: Path, tmp_path: Path
) -> None:
    """A release or download folder holding another dataset (another content hash) is refused, as a compile
    into a folder of another spec is; the same dataset again replaces its copy, and --force replaces any."""
    from needlec.compile.pipeline import CompileOptions, compile_spec

    other = tmp_path / "other"
    select = {"length": {"1000"}, "config": {"single"}, "tokenizer": {"cl100k_base"}}
    compile_spec(SPECS / "niah.yaml", other, CompileOptions(select=select, progress=False))
    before = {p.relative_to(other).as_posix(): p.read_bytes() for p in other.rglob("*") if p.is_file()}
    theirs = _manifest(small_niah)["content_hash"][:12]
    for args in (["publish", str(small_niah), "--to", str(other)], ["download", str(release), str(other)]):
        refused = run(*args)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert f"refusing to replace {other}: it holds another dataset of spec 'niah'" in refused.stderr
        assert f"({theirs})" in refused.stderr and "Pass --force" in refused.stderr
        assert {p.relative_to(other).as_posix(): p.read_bytes() for p in other.rglob("*") if p.is_file()} == before
    again = tmp_path / "again"
    assert run("publish", str(small_niah), "--to", str(again)).returncode == 0
    assert run("publish", str(small_niah), "--to", str(again)).returncode == 0  # the same dataset: replaced
    assert run("download", str(release), str(again)).returncode == 0
    forced = run("download", str(release), str(other), "--force")
    assert forced.returncode == 0, forced.stderr
    assert _manifest(other)["content_hash"] == _manifest(small_niah)["content_hash"]


def test_a_missing_folder_a_release_folder_and_lost_checksums_are_named(small_niah: Path, tmp_path: Path) -> None:
    missing = run("verify", str(tmp_path / "nope"))
    assert missing.returncode == 2 and f"{tmp_path / 'nope'}: no such folder" in missing.stderr, missing.stderr
    shelf = tmp_path / "shelf"  # what `needlec release` writes: a catalogue of datasets, no manifest of its own
    shelf.mkdir()
    (shelf / "catalogue.json").write_text('{"datasets": []}', encoding="utf-8")
    for args in (["inspect", str(shelf)], ["publish", str(shelf), "--to", str(tmp_path / "out")]):
        done = run(*args)
        assert done.returncode == 2 and "a release folder of many datasets" in done.stderr, done.stderr
        assert "--catalogue" in done.stderr
    copy = tmp_path / "copy"
    shutil.copytree(small_niah, copy)
    (copy / "SHA256SUMS").unlink()
    lost = run("verify", str(copy))
    assert lost.returncode != 0 and "SHA256SUMS: missing, so README.md" in lost.stdout + lost.stderr
