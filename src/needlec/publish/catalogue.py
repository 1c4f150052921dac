"""The catalogue: many specs compiled into one folder, described by `catalogue.json`, and found by name.

    DIR/catalogue.json        what each dataset is: name, family, paper, configs, splits, items, tokens,
                              bytes, content hash, the licence of each haystack, the spec and selection
    DIR/NAME/...              one compiled dataset per spec (data files, manifest, card, SHA256SUMS)
    DIR/SHA256SUMS            every file of the folder

`release` compiles the specs one after another and rewrites `catalogue.json` after each, so a release
that stops keeps every finished dataset; run again, it reuses a dataset whose spec, selection and
needlec are unchanged and which still verifies, and the compile it stopped in resumes from its shards.
A spec whose haystack must be downloaded is left out (and listed with the reason) unless asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needlec.errors import NeedlecError, OutputError
from needlec.util.atomic import WRITTEN, atomic_directory
from needlec.util.sums import SUMS, every_file, write_sums
from needlec.version import __version__

CATALOGUE = "catalogue.json"
CATALOGUE_VERSION = 1


@dataclass
class ReleaseOptions:
    """How to build a catalogue; none of these change a dataset's bytes beyond its selection."""

    pilot: bool = False  # each spec's pilot slice (`pilot_select`) instead of the whole benchmark
    jobs: int = 1
    cache_dir: Path | None = None
    online: bool = False  # also build specs whose haystacks are downloaded
    progress: bool = True
    log: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr, flush=True))


def find_specs(paths: Sequence[str | Path]) -> list[Path]:
    """Spec files from files and folders (a folder gives every `*.yaml` below it, sorted)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(path.rglob("*.yaml")))
        elif path.is_file():
            found.append(path)
        else:
            raise NeedlecError(f"{path}: no such spec file or folder")
    if not found:
        raise NeedlecError("no spec to release: " + ", ".join(str(p) for p in paths))
    return found


def pilot_select(plan: Any) -> dict[str, set[str]]:
    """A spec's pilot slice: every config at its shortest length and first depth, repeat 0, every tokenizer.

    Every config of the benchmark is present (so every `load_dataset(NAME, CONFIG)` of the full release
    works on the pilot), with as few items as the grid allows.
    """
    lengths = {str(min(c.spec.grid.length_points())) for c in plan.configs}
    depths = {_depth(c.depth_points()[0]) for c in plan.configs}
    return {"length": lengths, "depth": depths, "repeat": {"0"}}


def _depth(value: float) -> str:
    return f"{value:g}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _licences(manifest: dict[str, Any], spec_licence: str) -> list[dict[str, str]]:
    """Each haystack source of a dataset with its licence (from the corpus catalogue where it is one)."""
    from needlec.haystacks.sources.corpora import corpus_info

    out = []
    for source in manifest.get("sources", []):
        name = str(source.get("name", ""))
        licence = str(source.get("licence") or spec_licence)
        kind, _, corpus = name.partition(":")
        if not source.get("licence") and kind in ("builtin", "corpus") and corpus:
            with suppress(NeedlecError):
                licence = corpus_info(corpus).licence
        out.append({"source": name, "licence": licence, "sha256": str(source.get("sha256", ""))})
    return out


def _entry(
    name: str, spec_path: Path, root: Path, plan: Any, select: dict[str, set[str]], folder: Path, tokens: int
) -> dict[str, Any]:
    from needlec.dataset.manifest import read_manifest

    manifest = read_manifest(folder)
    spec = plan.spec
    files = [f for c in manifest["configs"].values() for f in c["files"]]
    return {
        "name": name,
        "title": spec.title,
        "family": spec.family or spec.name,  # as the items say (`family`)
        "spec": _relative(spec_path, root),
        "spec_sha256": _sha256(spec_path),
        "select": {k: sorted(v) for k, v in sorted(select.items())},
        "license": spec.license,
        "paper": _paper(spec.citation or ""),
        "citation": spec.citation or "",
        "configs": sorted(manifest["configs"]),
        "splits": sorted({str(f["split"]) for f in files}),
        "items": sum(int(f["rows"]) for f in files),
        "tokens": tokens,
        "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
        "content_hash": manifest["content_hash"],
        "needlec_version": manifest["needlec_version"],
        "code": _code(),  # needlec's version and the sha256 of its files: what a reuse must match
        "haystacks": _licences(manifest, spec.license),
        "path": name,
    }


def _paper(citation: str) -> str:
    """The paper's address from a BibTeX citation: its arXiv identifier, else the first address in it, else ''."""
    import re

    arxiv = re.search(r"(?:arXiv:|eprint\s*=\s*\{)\s*(\d{4}\.\d{4,5})", citation)
    if arxiv:
        return f"https://arxiv.org/abs/{arxiv.group(1)}"
    url = re.search(r"https?://[^\s{}]+", citation)
    return url.group(0) if url else ""


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name  # outside the folder the release runs in: the file name, never a machine's path


def read_catalogue(folder: Path) -> dict[str, Any]:
    """`catalogue.json` of a release folder (an empty catalogue when there is none yet)."""
    path = folder / CATALOGUE
    if not path.is_file():
        return {"catalogue_version": CATALOGUE_VERSION, "datasets": [], "skipped": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise OutputError(f"{path}: not a catalogue ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), list):
        raise OutputError(f"{path}: not a catalogue (no `datasets` list)")
    return data


def _write_catalogue(folder: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    temporary = folder / f".{CATALOGUE}.part"
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, folder / CATALOGUE)


def _code() -> str:
    from needlec.compile.shards import code_version

    return code_version()


def _reusable(old: dict[str, Any] | None, spec_path: Path, select: dict[str, set[str]], folder: Path) -> bool:
    from needlec.publish.verify import verify_dataset

    if old is None or not folder.is_dir():
        return False
    same = (
        old.get("spec_sha256") == _sha256(spec_path)
        and old.get("select") == {k: sorted(v) for k, v in sorted(select.items())}
        and old.get("code") == _code()
    )
    if not same:
        return False
    report = verify_dataset(folder)
    return report.ok and report.content_hash == old.get("content_hash")


def release(specs: Sequence[str | Path], out_dir: str | Path, options: ReleaseOptions | None = None) -> dict[str, Any]:
    """Compile every spec of `specs` (files or folders) into `out_dir` and describe them in `catalogue.json`.

    Returns the catalogue. Datasets are named by their spec's `name`, which must be unique.
    """
    from needlec.compile.pipeline import CompileOptions, compile_spec, default_cache_dir
    from needlec.compile.plan import load_plan, uncached_download
    from needlec.publish.verify import verify_dataset
    from needlec.util.atomic import check_target

    options = options or ReleaseOptions()
    paths = find_specs(specs)
    out = Path(out_dir)
    cache_dir = options.cache_dir or default_cache_dir()
    plans = [(path, load_plan(path, cache_dir)) for path in paths]  # every spec is valid before any is built
    names: dict[str, Path] = {}
    for path, plan in plans:
        if plan.spec.name in names:
            raise NeedlecError(f"two specs are named {plan.spec.name!r}: {names[plan.spec.name]} and {path}")
        names[plan.spec.name] = path
    if out.exists() and not (out / CATALOGUE).is_file() and any(out.iterdir()):
        raise OutputError(f"{out} is a folder that is not a needlec release; give an empty or new folder")
    out.mkdir(parents=True, exist_ok=True)
    root = Path.cwd()
    old = {d["name"]: d for d in read_catalogue(out).get("datasets", [])}
    catalogue: dict[str, Any] = {
        "catalogue_version": CATALOGUE_VERSION,
        "needlec_version": __version__,
        "pilot": options.pilot,
        "datasets": [],
        "skipped": [],
    }
    for number, (path, plan) in enumerate(plans, start=1):
        name = plan.spec.name
        folder = out / name
        check_target(folder)  # a name may not point outside the release or at a foreign folder
        if not options.online:
            url = uncached_download(plan, cache_dir)
            if url is not None:
                why = f"downloads its haystack ({url}); run with --online"
                options.log(f"[{number}/{len(plans)}] {name}: skipped: {why}")
                catalogue["skipped"].append({"name": name, "spec": _relative(path, root), "why": why})
                continue
        select = pilot_select(plan) if options.pilot else {}
        if _reusable(old.get(name), path, select, folder):
            options.log(f"[{number}/{len(plans)}] {name}: already built and verified")
            catalogue["datasets"].append(_entry(name, path, root, plan, select, folder, int(old[name]["tokens"])))
            _write_catalogue(out, catalogue)
            continue
        options.log(f"[{number}/{len(plans)}] {name}: compiling {_relative(path, root)}")
        compile_options = CompileOptions(
            jobs=options.jobs,
            select=select,
            progress=options.progress,
            cache_dir=cache_dir,
            force=True,  # a release replaces its own earlier datasets (another selection, another needlec)
        )
        result = compile_spec(path, folder, compile_options)
        report = verify_dataset(folder)
        if not report.ok:
            raise OutputError(f"{folder} fails verification:\n  " + "\n  ".join(report.problems))
        catalogue["datasets"].append(_entry(name, path, root, plan, select, folder, result.tokens))
        _write_catalogue(out, catalogue)
    kept = {d["name"] for d in catalogue["datasets"]}
    stale = sorted(n for n in old if n not in kept and (out / n).is_dir())
    for name in stale:
        options.log(
            f"note: {out / name} is not part of this release; it stays, outside catalogue.json, and `needlec verify "
            f"{out}` reports it until it is moved out"
        )
    _write_catalogue(out, catalogue)
    listed = [CATALOGUE] + [
        f"{d['path']}/{f}" for d in catalogue["datasets"] for f in every_file(out / d["path"]) if f != SUMS
    ]
    listed += [f"{d['path']}/{SUMS}" for d in catalogue["datasets"] if (out / d["path"] / SUMS).is_file()]
    write_sums(out, sorted(listed))
    return catalogue


def verify_catalogue(folder: Path) -> tuple[list[str], list[tuple[str, Any]]]:
    """Check a release folder: `catalogue.json` against the folder's `SHA256SUMS`, and each dataset it lists
    (`verify_dataset`, with its content hash the catalogue's). Returns the catalogue's own problems and each
    dataset's name and report."""
    from needlec.publish.verify import read_sums, verify_dataset
    from needlec.util.sums import file_digest

    catalogue = read_catalogue(folder)
    problems: list[str] = []
    sums = read_sums(folder / SUMS) if (folder / SUMS).is_file() else {}
    if not sums and not _is_published(folder):  # (a folder `publish --catalogue --to` wrote has none)
        problems.append(f"{SUMS}: missing, so changes to {CATALOGUE} go unnoticed")
    elif sums and sums.get(CATALOGUE) != file_digest(folder / CATALOGUE)[0]:
        problems.append(f"{CATALOGUE}: its sha256 does not match {SUMS}")
    # what else the folder holds: the release is the catalogue, its checksums and the datasets it lists
    listed = {Path(str(item.get("path", item.get("name")))).parts[0] for item in catalogue["datasets"]}
    for entry in sorted(folder.iterdir()):
        if entry.name in (CATALOGUE, SUMS) or entry.name.startswith(".") or entry.name in listed:
            continue  # (hidden: needlec's own records and locks)
        if entry.is_dir():
            problems.append(
                f"{entry.name}/: a folder {CATALOGUE} does not list (a dataset an earlier release left, or another "
                "folder); move it out of the release, or release its spec again"
            )
        else:
            problems.append(f"{entry.name}: a file that is no part of the release; move it out of the folder")
    reports: list[tuple[str, Any]] = []
    for item in catalogue["datasets"]:
        name = str(item.get("name"))
        report = verify_dataset(folder / str(item.get("path", name)))
        if report.ok and report.content_hash != item.get("content_hash"):
            report.problems.append(
                f"content hash {report.content_hash} is not the {item.get('content_hash')} that {CATALOGUE} lists"
            )
        reports.append((name, report))
    return problems, reports


def entry(catalogue: dict[str, Any], name: str) -> dict[str, Any]:
    """The dataset called `name` in a catalogue; an error naming the closest ones when there is none."""
    import difflib

    for item in catalogue.get("datasets", []):
        if item.get("name") == name:
            return dict(item)
    names = [str(d.get("name")) for d in catalogue.get("datasets", [])]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f" (closest: {', '.join(close)})" if close else ""
    raise NeedlecError(f"no dataset named {name!r} in the catalogue{hint}; it lists: {', '.join(names) or 'nothing'}")


CATALOGUE_REPO = "catalogue"
"""The Hub dataset repository of an organisation that holds its published `catalogue.json`."""


def publish_catalogue(
    folder: str | Path,
    to: str,
    *,
    dry_run: bool = False,
    private: bool = False,
    log: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """Publish every dataset of the release `folder`: to `hf://ORG/NAME` each (and the catalogue, with the
    repository of each dataset, to `hf://ORG/catalogue`) or into the folder `to` (`to/NAME` and
    `to/catalogue.json`). Returns the published catalogue."""
    from needlec.publish.release import publish

    source = Path(folder)
    catalogue = read_catalogue(source)
    if not catalogue["datasets"]:
        raise NeedlecError(f"{source}: no {CATALOGUE} with datasets; build one with `needlec release -o {source}`")
    org = to[len("hf://") :].strip("/") if to.startswith("hf://") else None
    if org is not None and (not org or "/" in org):
        raise NeedlecError(f"{to}: give the organisation only (hf://ORG); each dataset goes to hf://ORG/NAME")
    published = dict(catalogue)
    published["datasets"] = []
    if org is None and not dry_run:  # a folder: written whole beside it and swapped in, under the -o rules
        there = Path(to).resolve()
        if there == source.resolve() or source.resolve() in there.parents:
            raise OutputError(f"refusing to publish into {to}: it is inside the release folder {source} being read")
        with atomic_directory(Path(to), _is_published, guard=(source,), what="a published catalogue") as tmp:
            for item in catalogue["datasets"]:
                name = str(item["name"])
                log(f"{name}: publishing to {Path(to) / name}")
                publish(source / str(item["path"]), str(tmp / name), log=log)
                published["datasets"].append(dict(item))
            _write_catalogue(tmp, published)
        return published
    for item in catalogue["datasets"]:
        name = str(item["name"])
        target = f"hf://{org}/{name}" if org is not None else str(Path(to) / name)
        log(f"{name}: publishing to {target}")
        publish(source / str(item["path"]), target, dry_run=dry_run, private=private, log=log)
        published["datasets"].append({**item, **({"repo": f"{org}/{name}"} if org is not None else {})})
    if dry_run or org is None:
        return published
    import tempfile

    from needlec.publish.release import TOKEN_ENV, upload

    with tempfile.TemporaryDirectory(prefix="needlec-catalogue-") as tmp:
        staged = Path(tmp)
        _write_catalogue(staged, published)
        write_sums(staged, [CATALOGUE])
        upload(staged, f"{org}/{CATALOGUE_REPO}", os.environ.get(TOKEN_ENV, ""), private, "Publish the catalogue")
    return published


def _is_published(folder: Path) -> bool:
    """A folder `publish --catalogue --to PATH` wrote: a catalogue of datasets, no release's `SHA256SUMS`, and
    the record of what it holds that its atomic write left (`.needlec-written`), which lists the catalogue."""
    try:
        data = json.loads((folder / CATALOGUE).read_text(encoding="utf-8"))
        written = (folder / WRITTEN).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and isinstance(data.get("datasets"), list)
        and not (folder / SUMS).is_file()
        and CATALOGUE in written
    )


def load_catalogue(source: str) -> tuple[dict[str, Any], Path | None, str | None]:
    """A catalogue from a release folder (or a folder written by `publish --catalogue --to PATH`) or a Hub
    organisation (`hf://ORG`, whose `catalogue` repository holds it): (catalogue, folder, org)."""
    if source.startswith("hf://"):
        org = source[len("hf://") :].strip("/")
        if not org or "/" in org:
            raise NeedlecError(f"{source}: a catalogue on the Hub is named by its organisation, hf://ORG")
        from huggingface_hub import hf_hub_download

        try:
            path = hf_hub_download(f"{org}/{CATALOGUE_REPO}", CATALOGUE, repo_type="dataset")
        except Exception as exc:
            raise NeedlecError(f"{source}: cannot read the catalogue: {type(exc).__name__}: {exc}") from None
        return read_catalogue(Path(path).parent), None, org
    folder = Path(source)
    if not (folder / CATALOGUE).is_file():
        raise NeedlecError(f"{source}: no {CATALOGUE} here (a release folder or hf://ORG is expected)")
    return read_catalogue(folder), folder, None


def download_entry(
    name: str, dest: str | Path, catalogue_source: str, token: str | None = None, force: bool = False
) -> Any:
    """Download the catalogue entry `NAME` or `NAME/CONFIG` into `dest` and verify it (only that config's
    data files for `NAME/CONFIG`); the folder lands only when complete and intact."""
    from needlec.publish.verify import download

    dataset, _, config = name.partition("/")
    catalogue, folder, org = load_catalogue(catalogue_source)
    item = entry(catalogue, dataset)
    if config and config not in item.get("configs", []):
        raise NeedlecError(f"{dataset} has no config {config!r}; its configs: {', '.join(item.get('configs', []))}")
    configs = {config} if config else None
    if folder is not None:
        root, there = folder.resolve(), Path(dest).resolve()
        if there == root or root in there.parents:
            raise OutputError(
                f"refusing to download into {dest}: it is inside the catalogue folder {folder} being read, whose "
                "datasets it could replace; choose a folder outside it"
            )
        source = str(folder / str(item["path"]))
    elif item.get("repo"):
        source = f"hf://{item['repo']}"
    else:
        source = f"hf://{org}/{dataset}"
    expected = item.get("content_hash")
    if not isinstance(expected, str) or not expected:
        raise NeedlecError(f"{dataset}: the catalogue lists no content hash for it, so a copy cannot be checked")
    # checked before the copy lands: a dataset that is not the one the catalogue names never replaces `dest`
    return download(source, dest, token=token, configs=configs, expected_hash=expected, force=force)


__all__ = [
    "CATALOGUE",
    "ReleaseOptions",
    "download_entry",
    "entry",
    "find_specs",
    "load_catalogue",
    "pilot_select",
    "publish_catalogue",
    "read_catalogue",
    "release",
]
