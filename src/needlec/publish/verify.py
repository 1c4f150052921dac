"""Check a dataset folder against its manifest and checksums, and fetch published copies.

`verify_dataset` reads every byte: each data file's sha256, size and row count must match the
manifest, the manifest's content hash must match its body, and every file of the folder (the
card `README.md`, the filter audit, ...) must be listed in `SHA256SUMS` with a matching hash.
A file covered by neither is reported too, so a single flipped byte anywhere is caught.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from needlec.dataset.manifest import MANIFEST, ManifestUnreadable, content_hash, read_manifest
from needlec.errors import NeedlecError, OutputError
from needlec.publish.card import SUMS, partial_card
from needlec.util.atomic import PARTIAL_RECORD, atomic_directory, check_same_dataset
from needlec.util.sums import every_file, file_digest

HUB_URL = re.compile(r"^https?://huggingface\.co/datasets/([\w.-]+/[\w.-]+?)(?:/tree/([^/]+))?/?$")
REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass
class VerifyReport:
    folder: Path
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    has_sums: bool = False
    content_hash: str = ""
    partial: tuple[list[str], int] | None = None  # a partial copy: the configs it holds, of how many

    @property
    def ok(self) -> bool:
        return not self.problems


def read_sums(path: Path) -> dict[str, str]:
    """A `sha256sum`-style file: `<hex>  <path>` per line."""
    sums = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line.strip())
        if not match:
            raise OutputError(f"{path}:{number}: not a `<sha256>  <path>` line")
        sums[match.group(2)] = match.group(1)
    return sums


def _inside(folder: Path, relative: str) -> Path | None:
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    return folder / pure


def held_configs(folder: Path, manifest: dict[str, Any]) -> list[str] | None:
    """The configs of a partial copy: those its `PARTIAL_RECORD` names (`download NAME/CONFIG` writes it), in the
    manifest's order; None for a folder without one (a whole dataset, or a damaged one: a folder that lost a
    config's files is no partial copy)."""
    configs = manifest.get("configs")
    try:
        record = json.loads((folder / PARTIAL_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    named = record.get("configs") if isinstance(record, dict) else None
    if not isinstance(configs, dict) or not isinstance(named, list):
        return None
    held = [name for name in configs if name in named]
    return held if held and len(held) < len(configs) else None


def write_partial_record(folder: Path, configs: set[str]) -> None:
    """Mark `folder` as a copy of `configs` only (`held_configs`), and narrow its card's `configs` to them (with
    the card's line of `SHA256SUMS` to match), so that `datasets.load_dataset` reads the copy."""
    (folder / PARTIAL_RECORD).write_text(json.dumps({"configs": sorted(configs)}) + "\n", encoding="utf-8")
    card = folder / "README.md"
    if not card.is_file():
        return
    card.write_text(partial_card(card.read_text(encoding="utf-8"), sorted(configs)), encoding="utf-8")
    sums = folder / SUMS
    if sums.is_file():
        digest = file_digest(card)[0]
        lines = sums.read_text(encoding="utf-8").splitlines()
        fixed = [
            f"{digest}  README.md" if re.fullmatch(r"[0-9a-f]{64} [ *]README\.md", line) else line for line in lines
        ]
        sums.write_text("\n".join(fixed) + "\n", encoding="utf-8")


def verify_dataset(folder: str | Path, configs: set[str] | None = None, *, allow_partial: bool = False) -> VerifyReport:
    """Check `folder` against its manifest and SHA256SUMS; with `configs`, a folder that holds only those
    configs' data files (a partial download) passes when they are intact (any other config's file that is
    there is checked too). With `allow_partial`, a folder whose `PARTIAL_RECORD` names some configs is taken
    as such a copy of them (`report.partial`); without, every config's files must be there (what publishing
    needs)."""
    folder = Path(folder)
    report = VerifyReport(folder)
    absent: set[str] = set()  # data files of configs left out on purpose
    try:
        manifest = read_manifest(folder)
    except ManifestUnreadable as exc:
        report.problems.append(str(exc))
        manifest = {}
    if not isinstance(manifest.get("configs", {}), dict):
        report.problems.append(f"{MANIFEST}: not a needlec manifest (expected an object with a `configs` mapping)")
        manifest = {}
    if configs is None and allow_partial:
        held = held_configs(folder, manifest)
        if held is not None:
            configs = set(held)
            report.partial = (held, len(manifest["configs"]))
    report.content_hash = str(manifest.get("content_hash", ""))
    if manifest and content_hash(manifest) != manifest.get("content_hash"):
        report.problems.append(f"{MANIFEST}: content hash does not match the manifest's contents")
    listed: set[str] = set()
    for name, info in (manifest.get("configs") or {}).items():
        entries = info.get("files", []) if isinstance(info, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "path" in e for e in entries):
            report.problems.append(f"{MANIFEST}: config {name!r} has no valid `files` list")
            continue
        for entry in entries:
            relative = str(entry["path"])
            listed.add(relative)
            path = _inside(folder, relative)
            if configs is not None and name not in configs and (path is None or not path.is_file()):
                absent.add(relative)  # left out of a partial copy; a file that is there is checked all the same
                continue
            if path is None or not path.is_file():
                report.problems.append(f"{relative}: missing (config {name}, split {entry.get('split')})")
                continue
            sha, size, lines = file_digest(path)
            report.checked.append(relative)
            if sha != entry.get("sha256"):
                report.problems.append(f"{relative}: sha256 {sha} does not match the manifest's {entry.get('sha256')}")
            if size != entry.get("bytes"):
                report.problems.append(f"{relative}: {size} bytes, the manifest says {entry.get('bytes')}")
            if lines != entry.get("rows"):
                report.problems.append(f"{relative}: {lines} rows, the manifest says {entry.get('rows')}")
    data = folder / "data"
    if data.is_dir():
        for path in sorted(p for p in data.rglob("*") if p.is_file()):
            relative = path.relative_to(folder).as_posix()
            if relative not in listed:
                report.problems.append(f"{relative}: a data file the manifest does not list")
    sums_path = folder / SUMS
    sums: dict[str, str] = {}
    if sums_path.is_file():
        report.has_sums = True
        sums = read_sums(sums_path)
        _check_sums(folder, sums, manifest, listed, report, absent)
    covered = listed | set(sums) | {MANIFEST, PARTIAL_RECORD}
    uncovered = [relative for relative in every_file(folder) if relative not in covered]
    if uncovered and not sums_path.is_file():  # (a compile and a release write one)
        report.problems.append(
            f"{SUMS}: missing, so {', '.join(uncovered[:3])}{' ...' if len(uncovered) > 3 else ''} go unchecked"
        )
        uncovered = []
    for relative in uncovered:
        report.problems.append(f"{relative}: not covered by {MANIFEST} or {SUMS}, so changes to it go unnoticed")
    return report


def _check_sums(
    folder: Path,
    sums: dict[str, str],
    manifest: dict[str, Any],
    listed: set[str],
    report: VerifyReport,
    absent: frozenset[str] | set[str] = frozenset(),
) -> None:
    required = set(every_file(folder)) - {PARTIAL_RECORD}  # (a partial copy's record is not the publisher's)
    report.problems += [f"{SUMS}: does not list {relative}" for relative in sorted(required - set(sums))]
    for relative, expected in sums.items():
        if relative in absent:
            continue
        path = _inside(folder, relative)
        if path is None or not path.is_file():
            report.problems.append(f"{relative}: listed in {SUMS} but missing")
            continue
        if relative in listed and relative in report.checked:
            continue  # already hashed against the manifest; compare below without reading twice
        sha = file_digest(path)[0]
        report.checked.append(relative)
        if sha != expected:
            report.problems.append(f"{relative}: sha256 {sha} does not match {SUMS}")
    for info in (manifest.get("configs") or {}).values():
        for entry in info.get("files", []) if isinstance(info, dict) else []:
            if entry["path"] in sums and sums[entry["path"]] != entry.get("sha256"):
                report.problems.append(f"{entry['path']}: {SUMS} and {MANIFEST} disagree on its sha256")


def parse_remote(source: str) -> tuple[str, str | None] | None:
    """(repo id, revision) for `hf://ORG/NAME[@REV]`, a Hub dataset URL or a bare `ORG/NAME`."""
    if source.startswith("hf://"):
        repo, _, revision = source[len("hf://") :].removeprefix("datasets/").partition("@")
        if not REPO_ID.match(repo):
            raise NeedlecError(f"{source}: expected hf://ORG/NAME")
        return repo, revision or None
    match = HUB_URL.match(source)
    if match:
        return match.group(1), match.group(2)
    if REPO_ID.match(source) and not Path(source).exists():
        return source, None
    return None


def download(
    source: str,
    dest: str | Path,
    revision: str | None = None,
    token: str | None = None,
    configs: set[str] | None = None,
    expected_hash: str | None = None,
    force: bool = False,
) -> VerifyReport:
    """Fetch a published dataset (Hub repo or local folder) into `dest`, then verify it.

    With `configs`, only those configs' data files come (with the manifest, card and checksums), and each
    must be one the dataset has. With `expected_hash` (a catalogue's content hash), the copy must have it.
    The copy lands in `dest` only when it is complete and passes every check; `dest` is replaced atomically,
    and where it holds another dataset (another content hash), only with `force`.
    """
    dest = Path(dest)
    remote = parse_remote(source)
    guard = (Path(source.removeprefix("file://")),) if remote is None else ()
    with atomic_directory(dest, guard=guard) as tmp:
        if remote is None:
            origin = Path(source.removeprefix("file://"))
            if not (origin / MANIFEST).is_file():
                raise OutputError(f"{source}: neither a Hub dataset (hf://ORG/NAME) nor a folder with a {MANIFEST}")
            keep = None if configs is None else {f"data/{c}" for c in configs}

            def ignore(directory: str, names: list[str]) -> list[str]:
                if keep is None or Path(directory) != origin / "data":
                    return []
                return [n for n in names if f"data/{n}" not in keep]

            shutil.copytree(origin, tmp, dirs_exist_ok=True, ignore=ignore)
        else:
            repo, pinned = remote
            _snapshot(repo, revision or pinned, token, tmp, configs)
        report = verify_dataset(tmp, configs)
        if not report.ok:
            raise OutputError(f"{source}: the downloaded copy fails verification:\n  " + "\n  ".join(report.problems))
        if configs is not None and set(configs) != set(read_manifest(tmp).get("configs") or {}):
            write_partial_record(tmp, configs)
        lacking = sorted(c for c in configs or () if not (tmp / "data" / c).is_dir())
        if lacking:
            raise OutputError(f"{source}: the dataset has no data for config(s) {', '.join(lacking)}; nothing was kept")
        if expected_hash is not None and report.content_hash != expected_hash:
            raise OutputError(
                f"{source}: the downloaded dataset's content hash {report.content_hash} is not the expected "
                f"{expected_hash}; nothing was kept"
            )
        check_same_dataset(dest, report.content_hash, force, f"the dataset of {source}")
    report.folder = dest.resolve()
    return report


def _snapshot(repo: str, revision: str | None, token: str | None, into: Path, configs: set[str] | None = None) -> None:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - a dependency of `datasets`
        raise NeedlecError("downloading from the Hub needs the `huggingface_hub` package") from exc
    with tempfile.TemporaryDirectory(prefix="needlec-hub-") as cache:
        try:
            patterns = None if configs is None else ["*.json", "*.md", SUMS, *(f"data/{c}/*" for c in sorted(configs))]
            snapshot_download(
                repo_id=repo,
                repo_type="dataset",
                revision=revision,
                token=token,
                local_dir=str(into),
                cache_dir=cache,
                allow_patterns=patterns,
            )
        except Exception as exc:
            raise NeedlecError(f"hf://{repo}: download failed: {type(exc).__name__}: {exc}") from None
    shutil.rmtree(into / ".cache", ignore_errors=True)
