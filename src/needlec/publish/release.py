"""Publish a compiled dataset: a release folder in the Hugging Face layout, optionally uploaded.

A release holds the data files per config (unchanged bytes), `manifest.json` (unchanged), a
`README.md` dataset card whose metadata the Hub accepts, and `SHA256SUMS` over all of them. The
source folder is verified first, so a corrupted compile is never published.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needlec.dataset.manifest import MANIFEST, read_manifest
from needlec.errors import NeedlecError, OutputError, Problem
from needlec.publish.card import release_card, schema_problems
from needlec.publish.verify import held_configs, parse_remote, verify_dataset
from needlec.util.atomic import atomic_directory, check_same_dataset
from needlec.util.sums import file_digest, write_sums

TOKEN_ENV = "HF_TOKEN"


@dataclass(frozen=True)
class ReleaseFile:
    path: str
    bytes: int
    sha256: str


@dataclass
class PublishResult:
    target: str
    repo_id: str | None
    folder: Path | None
    files: list[ReleaseFile]
    dry_run: bool
    uploaded: bool = False
    url: str = ""

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)


def parse_target(target: str) -> tuple[str | None, Path | None]:
    """`hf://ORG/NAME` names a Hub dataset repository; anything else is a local folder."""
    if target.startswith("hf://"):
        remote = parse_remote(target)
        assert remote is not None
        if remote[1]:
            raise NeedlecError(f"{target}: a revision cannot be given when publishing")
        return remote[0], None
    return None, Path(target)


def _check_source(dataset: Path) -> dict[str, Any]:
    report = verify_dataset(dataset)
    if not report.ok and verify_dataset(dataset, allow_partial=True).ok:
        held = ", ".join(held_configs(dataset, read_manifest(dataset)) or [])
        raise OutputError(
            f"{dataset} is a partial copy (it holds only config(s) {held}, as `download NAME/CONFIG` fetches them); "
            "publishing needs every config: download or compile the whole dataset"
        )
    if not report.ok:
        raise OutputError(
            f"{dataset} fails verification; recompile it before publishing:", [Problem(p) for p in report.problems]
        )
    manifest = read_manifest(dataset)
    problems = schema_problems(dataset, manifest)
    if problems:
        raise OutputError("the Hub needs one uniform schema per config:", [Problem(p) for p in problems])
    return manifest


def write_release(dataset: str | Path, folder: str | Path, force: bool = False) -> list[ReleaseFile]:
    """Assemble the release of `dataset` in `folder` (replaced atomically); returns its files. A folder that
    holds another dataset is replaced only with `force`."""
    dataset, folder = Path(dataset), Path(folder)
    if dataset.resolve() == folder.resolve():
        raise NeedlecError("the release folder must differ from the dataset folder")
    manifest = _check_source(dataset)
    readme = dataset / "README.md"
    card = release_card(readme.read_text(encoding="utf-8") if readme.is_file() else "", manifest)
    data_files = [f["path"] for info in manifest["configs"].values() for f in info["files"]]
    # the filter audit the card links to travels with the release
    audit = sorted(p.relative_to(dataset).as_posix() for p in (dataset / "audit").rglob("*") if p.is_file())
    with atomic_directory(folder, guard=(dataset,)) as tmp:
        check_same_dataset(folder, str(manifest.get("content_hash", "")), force, f"{dataset}")
        for relative in [*data_files, *audit]:
            (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dataset / relative, tmp / relative)
        shutil.copyfile(dataset / MANIFEST, tmp / MANIFEST)
        (tmp / "README.md").write_text(card, encoding="utf-8")
        write_sums(tmp, [*data_files, *audit, MANIFEST, "README.md"])
        files = _listing(tmp)
    return files


def _listing(folder: Path) -> list[ReleaseFile]:
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        sha, size, _ = file_digest(path)
        out.append(ReleaseFile(path.relative_to(folder).as_posix(), size, sha))
    return out


def upload(folder: Path, repo_id: str, token: str, private: bool = False, message: str = "") -> str:
    """Create the dataset repository if needed and upload the release folder as one commit."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=message or "Publish with needlec",
        )
    except Exception as exc:
        raise NeedlecError(f"hf://{repo_id}: upload failed: {type(exc).__name__}: {exc}") from None
    return str(getattr(info, "commit_url", "") or f"https://huggingface.co/datasets/{repo_id}")


def publish(
    dataset: str | Path,
    to: str,
    *,
    dry_run: bool = False,
    private: bool = False,
    message: str = "",
    log: Callable[[str], None] = lambda m: None,
    force: bool = False,
) -> PublishResult:
    """Build the release of `dataset` for `to` (a folder or hf://ORG/NAME); upload unless `dry_run`. A folder
    that holds another dataset is replaced only with `force`.

    The Hub token comes only from the HF_TOKEN environment variable and is never written anywhere.
    """
    dataset = Path(dataset)
    repo_id, folder = parse_target(to)
    if repo_id is None and not dry_run:
        assert folder is not None
        files = write_release(dataset, folder, force)
        return PublishResult(to, None, folder.resolve(), files, dry_run=False)
    token = os.environ.get(TOKEN_ENV, "")
    if repo_id is not None and not dry_run and not token:
        raise NeedlecError(f"set {TOKEN_ENV} to a Hugging Face token with write access to upload to {to}")
    with tempfile.TemporaryDirectory(prefix="needlec-release-") as tmp:
        staged = Path(tmp) / "release"
        files = write_release(dataset, staged)
        result = PublishResult(to, repo_id, None if repo_id else folder, files, dry_run=dry_run)
        if repo_id is not None and not dry_run:
            log(f"uploading {len(files)} files to hf://{repo_id}")
            result.url = upload(staged, repo_id, token, private, message)
            result.uploaded = True
    return result
