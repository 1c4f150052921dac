"""`needlec publish`, `needlec download` and `needlec verify`: thin wrappers over the library."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from needlec.errors import NeedlecError, OutputError


def cmd_release(args: argparse.Namespace) -> int:
    from needlec.compile.pipeline import available_cores
    from needlec.publish.catalogue import ReleaseOptions, release
    from needlec.site.markdown import human_bytes

    options = ReleaseOptions(
        pilot=args.pilot,
        jobs=args.jobs if args.jobs is not None else available_cores(),
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        online=args.online,
        progress=not args.quiet,
    )
    catalogue = release(args.specs or ["specs"], args.output, options)
    datasets = catalogue["datasets"]
    total = sum(int(d["bytes"]) for d in datasets)
    items = sum(int(d["items"]) for d in datasets)
    print(f"released {len(datasets)} dataset(s), {items:,} items, {human_bytes(total)} in {args.output}")
    for d in datasets:
        print(f"  {d['name']}: {d['items']:,} items, {len(d['configs'])} config(s), content hash {d['content_hash']}")
    for skipped in catalogue["skipped"]:
        print(f"  {skipped['name']}: skipped: {skipped['why']}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from needlec.publish.release import publish
    from needlec.site.markdown import human_bytes

    if args.catalogue:
        from needlec.publish.catalogue import publish_catalogue

        published = publish_catalogue(
            args.dataset, args.to, dry_run=args.dry_run, private=args.private, log=lambda m: print(m, file=sys.stderr)
        )
        verb = "would publish" if args.dry_run else "published"
        print(f"{verb} {len(published['datasets'])} dataset(s) of the catalogue in {args.dataset} to {args.to}")
        return 0

    result = publish(
        args.dataset,
        args.to,
        dry_run=args.dry_run,
        private=args.private,
        message=args.message or "",
        log=lambda m: print(m, file=sys.stderr),
        force=args.force,
    )
    where = f"hf://{result.repo_id} (dataset repository)" if result.repo_id else str(result.folder)
    if result.dry_run:
        print(
            f"dry run: would {'upload' if result.repo_id else 'write'} {len(result.files)} files "
            f"({human_bytes(result.total_bytes)}) to {where}:"
        )
        for f in result.files:
            print(f"  {f.path}  {f.bytes:,} bytes  sha256 {f.sha256}")
        return 0
    verb = "uploaded" if result.uploaded else "wrote"
    print(f"{verb} {len(result.files)} files ({human_bytes(result.total_bytes)}) to {where}")
    if result.url:
        print(result.url)
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from needlec.publish.verify import download

    catalogue = args.catalogue or os.environ.get("NEEDLEC_CATALOGUE") or None
    if catalogue and not Path(args.source).exists() and not args.source.startswith(("hf://", "http")):
        from needlec.publish.catalogue import download_entry

        if args.revision:
            raise NeedlecError("--revision applies to a repository, not to a catalogue name")
        report = download_entry(
            args.source, args.dir, catalogue, token=os.environ.get("HF_TOKEN") or None, force=args.force
        )
        print(
            f"downloaded {args.source} to {report.folder}: {len(report.checked)} files verified, content hash "
            f"{report.content_hash} (as the catalogue lists)"
        )
        return 0
    report = download(
        args.source, args.dir, revision=args.revision, token=os.environ.get("HF_TOKEN") or None, force=args.force
    )
    print(f"downloaded to {report.folder}: {len(report.checked)} files verified, content hash {report.content_hash}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from needlec.publish.catalogue import CATALOGUE, verify_catalogue
    from needlec.publish.verify import verify_dataset

    folder = Path(args.dir)
    if not (folder / "manifest.json").is_file() and (folder / CATALOGUE).is_file():  # a release folder
        problems, reports = verify_catalogue(folder)
        problems += [f"{name}/{problem}" for name, report in reports for problem in report.problems]
        if problems:
            raise OutputError(
                f"{args.dir} fails verification ({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n  "
                + "\n  ".join(problems)
            )
        for name, report in reports:
            print(f"ok: {name}: {len(report.checked)} files, content hash {report.content_hash}")
        checked = "" if (folder / "SHA256SUMS").is_file() else f" (no SHA256SUMS here: {CATALOGUE} itself is unchecked)"
        print(f"ok: {len(reports)} dataset(s) match {CATALOGUE}{checked}")
        return 0
    report = verify_dataset(args.dir, allow_partial=True)
    if not report.ok:
        raise OutputError(
            f"{args.dir} fails verification ({len(report.problems)} problem"
            f"{'s' if len(report.problems) != 1 else ''}):\n  " + "\n  ".join(report.problems)
        )
    sums = "manifest and SHA256SUMS" if report.has_sums else "manifest (no SHA256SUMS in this folder)"
    print(f"ok: {len(report.checked)} files match the {sums}; content hash {report.content_hash}")
    if report.partial is not None:
        held, total = report.partial
        print(f"a partial copy: it holds {len(held)} of the dataset's {total} configs ({', '.join(held)})")
    return 0


def add_publish_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `publish`, `download` and `verify` on the main parser's subcommands."""
    p = sub.add_parser(
        "publish",
        help="make a release folder or upload a dataset to the Hugging Face Hub",
        description="Verify the compiled dataset DIR, then build its release in the Hugging Face dataset "
        "layout: the data files per config, README.md (a dataset card whose metadata lists license, "
        "languages, task categories, size category and configs), manifest.json and SHA256SUMS. "
        "--to PATH writes the release folder there; --to hf://ORG/NAME uploads it to that dataset "
        "repository with the token in $HF_TOKEN.",
    )
    p.add_argument(
        "dataset", metavar="DIR", help="a folder written by `needlec compile` (`needlec release` with --catalogue)"
    )
    p.add_argument(
        "--to",
        required=True,
        metavar="PATH|hf://ORG/NAME",
        help="a folder for the release (replaced atomically), or a Hub dataset repository",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the files that would be written or uploaded, with sizes and sha256; change nothing",
    )
    p.add_argument(
        "--private", action="store_true", help="create the Hub repository as private (when it does not exist yet)"
    )
    p.add_argument("-m", "--message", metavar="TEXT", help="commit message for the upload")
    p.add_argument(
        "--catalogue",
        action="store_true",
        help="DIR is a release folder (`needlec release`): publish every dataset in it, to hf://ORG/NAME each "
        "with the catalogue in hf://ORG/catalogue (give --to hf://ORG), or to the folder --to PATH",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a release folder --to PATH that holds another dataset than this one (refused without it)",
    )
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser(
        "release",
        help="compile many specs into one catalogue folder, verified",
        description="Compile every spec given (files or folders; default: the specs/ folder here) into DIR/NAME, "
        "NAME being each spec's `name`, verify each, and describe them in DIR/catalogue.json (name, family, "
        "paper, configs, splits, items, tokens, bytes, content hash, the licence of each haystack) with "
        "DIR/SHA256SUMS over every file of the release. With --pilot each dataset is a pilot slice: every "
        "config at its shortest length and first depth, repeat 0. A release that stops keeps what it finished; run it "
        "again to build only the rest. Specs whose haystacks must be downloaded are skipped unless --online.",
    )
    p.add_argument("specs", nargs="*", metavar="SPEC", help="spec files or folders of specs (default: specs)")
    p.add_argument(
        "-o", "--output", required=True, metavar="DIR", help="the release folder (new, or an earlier release)"
    )
    p.add_argument("--pilot", action="store_true", help="a pilot slice of each spec instead of the whole benchmark")
    p.add_argument(
        "-j", "--jobs", type=int, default=None, metavar="N", help="worker processes per compile (default: every core)"
    )
    p.add_argument("--online", action="store_true", help="also build specs whose haystacks are downloaded")
    p.add_argument("--cache-dir", metavar="DIR", help="download and filter cache (as for compile)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser(
        "download",
        help="fetch a published dataset and verify it",
        description="Download a published dataset from the Hugging Face Hub (hf://ORG/NAME[@REV], "
        "ORG/NAME or https://huggingface.co/datasets/ORG/NAME) or copy a release folder, verify it "
        "against its manifest and SHA256SUMS, and move it into DIR only when it is complete and "
        "intact. A private repository needs $HF_TOKEN.",
    )
    p.add_argument(
        "source",
        metavar="REPO_OR_URL",
        help="hf://ORG/NAME, ORG/NAME, a Hub URL or a folder; with --catalogue, a catalogue name (NAME[/CONFIG])",
    )
    p.add_argument("dir", metavar="DIR", help="where the copy goes (replaced atomically)")
    p.add_argument("--revision", metavar="REV", help="a branch, tag or commit of the Hub repository")
    p.add_argument(
        "--catalogue",
        metavar="DIR|hf://ORG",
        help="find SOURCE by name (NAME or NAME/CONFIG) in this catalogue: a release folder or a Hub organisation "
        "that published one (default: $NEEDLEC_CATALOGUE); NAME/CONFIG fetches that config's data files only",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a dataset in DIR that is another dataset than this one (refused without it)",
    )
    p.set_defaults(func=cmd_download)

    p = sub.add_parser(
        "verify",
        help="check a dataset folder against its manifest and checksums",
        description="Re-hash every file of DIR: each data file's sha256, size and row count must match "
        "manifest.json, the manifest's content hash must match its contents, no unlisted data files "
        "may exist, and every file listed in SHA256SUMS (when present) must match it. A copy of some "
        "configs only (`download NAME/CONFIG`) passes when those configs' files are intact, and says which "
        "it holds. A release folder (`needlec release`, with catalogue.json) is checked dataset by dataset, "
        "each against the content hash the catalogue lists. Exit code 0 when all match, 2 otherwise.",
    )
    p.add_argument("dir", metavar="DIR", help="a compiled, published or downloaded dataset folder, or a release folder")
    p.set_defaults(func=cmd_verify)
