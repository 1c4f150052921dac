"""`needlec site build`: the command-line face of the site generator."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_site_build(args: argparse.Namespace) -> int:
    from needlec.site.build import SiteOptions, build_site

    def log(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr)

    options = SiteOptions(
        project=Path(args.project),
        output=Path(args.output) if args.output else None,
        datasets=[Path(d) for d in args.dataset],
        results=[Path(r) for r in args.results],
        build=not args.pages_only,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        log=log,
        cli_parser=getattr(args, "root_parser", None),  # set by `needlec.cli.main`; None: a placeholder page
    )
    result = build_site([Path(s) for s in args.specs], options)
    print(
        f"generated pages for {len(result.benchmarks)} benchmark(s) ({', '.join(result.benchmarks)}) "
        f"in {result.generated}"
    )
    if result.output is not None:
        print(f"built the site in {result.output}")
    return 0


def add_site_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `needlec site` and its `build` subcommand on the main parser's subcommands."""
    site = sub.add_parser(
        "site",
        help="generate and build the documentation site",
        description="Work with the documentation site (an mkdocs-material project).",
    )
    actions = site.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    p = actions.add_parser(
        "build",
        help="generate the benchmark pages and build the site",
        description="Generate the site's pages from each SPEC (a page per benchmark with its grid, "
        "needles, prompts, haystack, filters, overlap statistics, plots, sample items and data files; "
        "the catalogue; the spec field and command references) into docs/generated/ of the mkdocs "
        "project, then build the HTML with mkdocs in strict mode, where any warning is an error. "
        "Works offline. Without --dataset, each spec is compiled on a reduced grid (its smallest "
        "lengths) for its page.",
    )
    p.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="spec files to describe (default: every spec in specs/ beside the project)",
    )
    p.add_argument("-o", "--output", metavar="DIR", help="folder for the built HTML site (default: PROJECT/site)")
    p.add_argument(
        "--project",
        metavar="DIR",
        default="site",
        help="the mkdocs project folder holding mkdocs.yml and docs/ (default: site)",
    )
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="DIR",
        help="a compiled dataset folder to describe instead of compiling a reduced grid; "
        "matched to its spec by name (repeatable)",
    )
    p.add_argument(
        "--results",
        action="append",
        default=[],
        metavar="DIR",
        help="a report folder written by `needlec score -o` (one run, labelled by the folder name); each "
        "benchmark the reports name gets a results page with the comparison table, the per-config "
        "tables and the heatmaps (repeatable)",
    )
    p.add_argument("--pages-only", action="store_true", help="write the generated pages but do not run mkdocs")
    p.add_argument(
        "--cache-dir", metavar="DIR", help="download and filter cache for the compiles (default as for compile)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=cmd_site_build)
