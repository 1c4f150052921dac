"""`needlec release`: a catalogue folder of verified datasets, found again by name.

A pilot release of three shipped specs of three families (and the spec that downloads, which a release
skips offline) is built once with the real pipeline; the tests read it with `datasets`, re-hash it, and
download entries from it and from a copy published to a folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SPECS

from needlec.errors import NeedlecError
from needlec.publish.catalogue import ReleaseOptions, download_entry, publish_catalogue, release

NAMED = [
    SPECS / "niah.yaml",
    SPECS / "needlebench" / "base.yaml",
    SPECS / "atc" / "atc-tree-open.yaml",
    SPECS / "mlneedle" / "mlneedle-online.yaml",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("release") / "catalogue"
    log: list[str] = []
    release(NAMED, out, ReleaseOptions(pilot=True, jobs=2, progress=False, log=log.append))
    return out, log


def _catalogue(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
    return data


def test_the_catalogue_describes_what_is_in_the_folder(built: tuple[Path, list[str]]) -> None:
    out, _ = built
    catalogue = _catalogue(out)
    assert [d["name"] for d in catalogue["datasets"]] == ["niah", "needlebench", "atc-tree-open"]
    assert catalogue["pilot"] is True
    for entry in catalogue["datasets"]:
        folder = out / entry["path"]
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        assert entry["content_hash"] == manifest["content_hash"]
        assert entry["configs"] == sorted(manifest["configs"])
        rows = [json.loads(line) for path in (folder / "data").rglob("*.jsonl") for line in path.open(encoding="utf-8")]
        assert entry["items"] == len(rows)
        assert entry["tokens"] == sum(r["context_tokens"] for r in rows)
        assert entry["splits"] == sorted({r["tokenizer"] for r in rows})
        assert entry["bytes"] == sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        # the pilot holds every config at repeat 0
        assert {r["config"] for r in rows} == set(entry["configs"]) and {r["repeat"] for r in rows} == {0}
        assert entry["haystacks"] and all(h["licence"] for h in entry["haystacks"])
    niah = catalogue["datasets"][0]
    assert niah["family"] == "niah" and niah["spec"] == "specs/niah.yaml"
    assert niah["haystacks"][0] == {
        "source": "builtin:web-bible",
        "licence": "public-domain",
        "sha256": niah["haystacks"][0]["sha256"],
    }
    assert catalogue["datasets"][1]["paper"] == "https://arxiv.org/abs/2407.11963"  # NeedleBench's arXiv id
    assert [s["name"] for s in catalogue["skipped"]] == ["mlneedle-online"]
    assert "--online" in catalogue["skipped"][0]["why"]


def test_the_release_checksums_cover_every_file(built: tuple[Path, list[str]]) -> None:
    out, _ = built
    listed = {}
    for line in (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS"}
    files |= {f"{d}/SHA256SUMS" for d in ("niah", "needlebench", "atc-tree-open")}
    assert set(listed) == files
    for name, digest in listed.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


def test_every_dataset_loads_with_datasets(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    from datasets import load_dataset

    out, _ = built
    for entry in _catalogue(out)["datasets"]:
        config = entry["configs"][0]
        loaded = load_dataset(str(out / entry["path"]), name=config, cache_dir=str(tmp_path / entry["name"]))
        assert sorted(loaded) == entry["splits"]
        assert all(row["config"] == config for split in loaded.values() for row in split)


def test_a_second_release_reuses_what_is_built(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, first = built
    assert sum("compiling" in line for line in first) == 3
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.jsonl")}
    log: list[str] = []
    release(NAMED[:2], out, ReleaseOptions(pilot=True, progress=False, log=log.append))
    assert all("already built and verified" in line for line in log if line.startswith("[")), log
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.jsonl")} == before
    assert [d["name"] for d in _catalogue(out)["datasets"]] == ["niah", "needlebench"]
    release(NAMED, out, ReleaseOptions(pilot=True, progress=False, log=log.append))  # back to the fixture's state


def test_download_by_name_and_config(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, _ = built
    report = download_entry("niah/single", tmp_path / "single", str(out))
    assert report.ok
    assert sorted(p.name for p in (tmp_path / "single" / "data").iterdir()) == ["single"]
    whole = download_entry("needlebench", tmp_path / "nb", str(out))
    assert whole.content_hash == _catalogue(out)["datasets"][1]["content_hash"]
    with pytest.raises(NeedlecError, match="closest: niah"):
        download_entry("nia", tmp_path / "x", str(out))
    with pytest.raises(NeedlecError, match="no config 'double'"):
        download_entry("niah/double", tmp_path / "y", str(out))


def test_a_one_config_copy_verifies_loads_and_is_not_published(
    built: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import needlec
    from needlec.cli import main

    out, _ = built
    download_entry("niah/single", tmp_path / "single", str(out))
    # the pilot's single-config rows, read straight from the release folder, are what the copy yields
    source = out / "niah" / "data" / "single"
    expected = [json.loads(line)["id"] for path in source.rglob("*.jsonl") for line in path.open(encoding="utf-8")]
    assert expected
    assert sorted(item.id for item in needlec.load_items(tmp_path / "single")) == sorted(expected)
    assert sorted(i.id for i in needlec.load_items(tmp_path / "single", config="single")) == sorted(expected)
    with pytest.raises(NeedlecError, match="partial copy that holds only config\\(s\\) single"):
        list(needlec.load_items(tmp_path / "single", config="multi"))
    assert main(["verify", str(tmp_path / "single")]) == 0
    assert "holds 1 of the dataset's 6 configs (single)" in capsys.readouterr().out
    # `datasets` reads a copy too, of a config other than the card's first (its default, whose files
    # `datasets` looks for whichever config is asked): the copy's card lists only the config it holds
    from datasets import load_dataset

    download_entry("niah/passkey", tmp_path / "passkey", str(out))
    source = out / "niah" / "data" / "passkey"
    ids = [json.loads(line)["id"] for path in source.rglob("*.jsonl") for line in path.open(encoding="utf-8")]
    loaded = load_dataset(str(tmp_path / "passkey"), name="passkey", cache_dir=str(tmp_path / "hf-cache"))
    assert ids and sorted(row["id"] for split in loaded.values() for row in split) == sorted(ids)
    assert main(["verify", str(tmp_path / "passkey")]) == 0  # the card's new sha256 is in SHA256SUMS
    # a whole copy that lost a config's files, or a whole config, is damaged, not a partial copy: only a
    # download of some configs says it is one (its `.needlec-partial.json`)
    whole = download_entry("niah", tmp_path / "whole", str(out))
    assert whole.ok
    next((tmp_path / "whole" / "data" / "multi").rglob("*.jsonl")).unlink()
    assert main(["verify", str(tmp_path / "whole")]) != 0
    shutil.rmtree(tmp_path / "whole" / "data" / "multi")
    assert main(["verify", str(tmp_path / "whole")]) != 0
    assert "data/multi/cl100k_base.jsonl: missing" in capsys.readouterr().err
    with pytest.raises(NeedlecError, match="a data file the manifest lists is missing"):
        list(needlec.load_items(tmp_path / "whole"))
    # a record of some configs does not hide a damaged file of another config that is there
    forged = tmp_path / "forged"
    download_entry("niah", forged, str(out))
    (forged / ".needlec-partial.json").write_text('{"configs": ["passkey"]}', encoding="utf-8")
    data = next((forged / "data" / "multi").rglob("*.jsonl"))
    data.write_bytes(data.read_bytes().replace(b'"', b"'", 1))
    capsys.readouterr()
    assert main(["verify", str(forged)]) != 0
    assert f"{data.relative_to(forged).as_posix()}: sha256" in capsys.readouterr().err
    # the partial copy downloads again over itself (its record is needlec's own file)
    download_entry("niah/single", tmp_path / "single", str(out))
    assert json.loads((tmp_path / "single" / ".needlec-partial.json").read_text(encoding="utf-8")) == {
        "configs": ["single"]
    }
    capsys.readouterr()
    assert main(["publish", str(tmp_path / "single"), "--to", str(tmp_path / "release")]) != 0
    assert "is a partial copy" in capsys.readouterr().err
    assert not (tmp_path / "release").exists()


def test_verify_checks_a_release_folder_dataset_by_dataset(
    built: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from needlec.cli import main

    out, _ = built
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ok: 3 dataset(s) match catalogue.json" in printed and "ok: needlebench:" in printed
    # a copy with one byte of one dataset's data changed fails, naming the dataset and the file
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    data = next((copy / "needlebench" / "data").rglob("*.jsonl"))
    raw = bytearray(data.read_bytes())
    raw[10] = ord("X") if raw[10] != ord("X") else ord("Y")
    data.write_bytes(bytes(raw))
    assert main(["verify", str(copy)]) != 0
    err = capsys.readouterr().err
    assert f"needlebench/{data.relative_to(copy / 'needlebench').as_posix()}: sha256" in err
    # a catalogue entry whose hash is not its dataset's
    shutil.rmtree(copy)
    shutil.copytree(out, copy)
    catalogue = _catalogue(copy)
    catalogue["datasets"][0]["content_hash"] = "0" * 64
    (copy / "catalogue.json").write_text(json.dumps(catalogue), encoding="utf-8")
    assert main(["verify", str(copy)]) != 0
    err = capsys.readouterr().err
    assert "catalogue.json: its sha256 does not match SHA256SUMS" in err and "is not the 000" in err
    # a release folder that lost its SHA256SUMS is no published folder (which never has one)
    shutil.rmtree(copy)
    shutil.copytree(out, copy)
    (copy / "SHA256SUMS").unlink()
    assert main(["verify", str(copy)]) != 0
    assert "SHA256SUMS: missing" in capsys.readouterr().err
    # a file or a folder the catalogue does not list, beside the datasets
    shutil.rmtree(copy)
    shutil.copytree(out, copy)
    (copy / "notes.txt").write_text("mine", encoding="utf-8")
    shutil.copytree(out / "niah", copy / "niah-old")
    assert main(["verify", str(copy)]) != 0
    err = capsys.readouterr().err
    assert "notes.txt: a file that is no part of the release" in err
    assert "niah-old/: a folder catalogue.json does not list" in err


def test_a_catalogue_that_lies_never_replaces_a_download(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    """A catalogue entry whose folder holds another dataset (or a config it lacks) is refused before the copy
    lands: a good copy already in the destination stays as it was."""
    out, _ = built
    dest = tmp_path / "nb"
    good = download_entry("needlebench", dest, str(out))
    before = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    lying = tmp_path / "lying"
    shutil.copytree(out, lying)
    catalogue = _catalogue(lying)
    catalogue["datasets"][1]["path"] = catalogue["datasets"][0]["path"]  # needlebench's entry names niah's folder
    catalogue["datasets"][1]["configs"].append("ghost")
    (lying / "catalogue.json").write_text(json.dumps(catalogue), encoding="utf-8")
    with pytest.raises(NeedlecError, match="is not the expected"):
        download_entry("needlebench", dest, str(lying))
    with pytest.raises(NeedlecError, match="no data for config"):
        download_entry("needlebench/ghost", tmp_path / "ghost", str(lying))
    assert not (tmp_path / "ghost").exists()
    assert {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()} == before
    assert good.ok


def test_publish_a_catalogue_to_a_folder_and_download_from_it(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, _ = built
    target = tmp_path / "published"
    published = publish_catalogue(out, str(target))
    assert [d["name"] for d in published["datasets"]] == ["niah", "needlebench", "atc-tree-open"]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "needlec",
            "download",
            "atc-tree-open",
            str(tmp_path / "got"),
            "--catalogue",
            str(target),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    original = sorted((out / "atc-tree-open" / "data").rglob("*.jsonl"))
    copied = sorted((tmp_path / "got" / "data").rglob("*.jsonl"))
    assert [p.read_bytes() for p in copied] == [p.read_bytes() for p in original]
    # the published folder verifies, dataset by dataset (it has no SHA256SUMS of its own)
    from needlec.cli import main

    assert main(["verify", str(target)]) == 0
    # publishing again replaces the folder it wrote; a folder of the user's, or a file, is never replaced
    assert publish_catalogue(out, str(target)) == published
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "catalogue.json").write_text('{"mine": true}', encoding="utf-8")
    with pytest.raises(NeedlecError, match="refusing to replace"):
        publish_catalogue(out, str(mine))
    assert (mine / "catalogue.json").read_text(encoding="utf-8") == '{"mine": true}'
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(NeedlecError, match="existing file"):
        publish_catalogue(out, str(tmp_path / "afile"))
    for inside in (out / "niah", out / "new"):  # inside the release folder it reads
        with pytest.raises(NeedlecError, match="inside the release folder"):
            publish_catalogue(out, str(inside))
    assert not (out / "new").exists()
    # nor may a download land inside the catalogue folder it reads from
    with pytest.raises(NeedlecError, match="inside the catalogue folder"):
        download_entry("niah", target / "atc-tree-open", str(target))
    assert (target / "atc-tree-open" / "manifest.json").is_file()


def test_specs_with_one_name_are_refused(tmp_path: Path) -> None:
    twin = tmp_path / "twin.yaml"
    twin.write_text(f"extends: {SPECS / 'niah.yaml'}\n", encoding="utf-8")
    with pytest.raises(NeedlecError, match="two specs are named 'niah'"):
        release([SPECS / "niah.yaml", twin], tmp_path / "out", ReleaseOptions(pilot=True, progress=False))
    assert not (tmp_path / "out").exists()


def test_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(NeedlecError, match="not a needlec release"):
        release([SPECS / "niah.yaml"], tmp_path / "mine", ReleaseOptions(pilot=True, progress=False))
    assert (tmp_path / "mine" / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_publish_and_download_through_a_hub_on_127_0_0_1(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    from hub_standin import serve_hub

    out, _ = built
    with serve_hub() as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_standin", "HF_HUB_OFFLINE": "0"}
        env["HF_HOME"] = str(tmp_path / "hf-home")  # the download cache of this test only

        def needlec(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "needlec", *args], capture_output=True, text=True, check=False, env=env
            )

        sent = needlec("publish", str(out), "--catalogue", "--to", "hf://test-org")
        assert sent.returncode == 0, sent.stderr
        assert sorted(hub.repos) == [
            "test-org/atc-tree-open",
            "test-org/catalogue",
            "test-org/needlebench",
            "test-org/niah",
        ]
        assert hub.tokens_seen == {"hf_standin"}
        listed = json.loads(hub.repos["test-org/catalogue"].files["catalogue.json"])
        assert [d["repo"] for d in listed["datasets"]] == [
            "test-org/niah",
            "test-org/needlebench",
            "test-org/atc-tree-open",
        ]

        got = needlec("download", "niah", str(tmp_path / "niah"), "--catalogue", "hf://test-org")
        assert got.returncode == 0, got.stderr
        original = sorted(p.relative_to(out / "niah") for p in (out / "niah" / "data").rglob("*.jsonl"))
        for relative in original:
            assert (tmp_path / "niah" / relative).read_bytes() == (out / "niah" / relative).read_bytes()

        one = needlec("download", "needlebench/s-rt-en-after", str(tmp_path / "one"), "--catalogue", "hf://test-org")
        assert one.returncode == 0, one.stderr
        assert [p.name for p in (tmp_path / "one" / "data").iterdir()] == ["s-rt-en-after"]

        # what was published loads with `datasets` from the downloaded copy, config by config
        from datasets import load_dataset

        loaded = load_dataset(str(tmp_path / "niah"), name="single", cache_dir=str(tmp_path / "hf-datasets"))
        assert sorted(loaded) == ["cl100k_base", "o200k_base"]
