"""Generate the site's pages under `docs/generated/` of the mkdocs project, then run mkdocs.

The generated folder is replaced as a whole (built beside it and renamed into place), so a failed
run leaves the previous pages intact. Hand-written pages elsewhere under `docs/` are never touched.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from needlec.compile.plan import load_plan
from needlec.dataset.manifest import read_manifest
from needlec.errors import NeedlecError
from needlec.site.benchmark_page import render_page
from needlec.site.catalogue import benchmarks_index, catalogue
from needlec.site.cli_help import render_cli_help
from needlec.site.collect import Benchmark, collect
from needlec.site.plots import depths_svg, lengths_svg
from needlec.site.reference import render_reference
from needlec.site.results import read_runs, write_results
from needlec.util.atomic import atomic_directory, check_target

GENERATED = "generated"
SPEC_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class SiteOptions:
    """Where the mkdocs project is, where the HTML goes, and which compiled datasets to describe."""

    project: Path = Path("site")
    output: Path | None = None
    datasets: list[Path] = field(default_factory=list)
    results: list[Path] = field(default_factory=list)
    """Score report folders (`needlec score -o`): each benchmark they name gets a results page."""
    build: bool = True
    cache_dir: Path | None = None
    log: Callable[[str], None] = lambda message: None
    cli_parser: argparse.ArgumentParser | None = None
    """The command line's parser, for the command-help page. The CLI passes its own (the site
    package sits below the CLI and never imports it); without one the page says how to make it."""


@dataclass
class SiteResult:
    generated: Path
    output: Path | None
    benchmarks: list[str]


def default_specs(project: Path) -> list[Path]:
    """The shipped specs: every spec file in `specs/` beside the mkdocs project, sub-folders included."""
    folder = project.resolve().parent / "specs"
    return sorted(p for p in folder.rglob("*") if p.suffix in SPEC_SUFFIXES) if folder.is_dir() else []


def _spec_documents(specs: Sequence[Path], docs: Path) -> list[Any]:
    """Where the field reference finds real examples: the specs with each variant's overrides,
    then the YAML examples of the hand-written spec language page."""
    texts = [path.read_text(encoding="utf-8") for path in specs]
    guide = docs / "reference" / "spec.md"
    if guide.is_file():
        texts += re.findall(r"```yaml\n(.*?)```", guide.read_text(encoding="utf-8"), flags=re.DOTALL)
    documents: list[Any] = []
    for text in texts:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if not isinstance(data, dict):
            continue
        documents.append(data)
        for values in (data.get("variants") or {}).values():
            documents.extend(v for v in (values or {}).values() if isinstance(v, dict))
    return documents


def _datasets_by_name(folders: Sequence[Path]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in folders:
        manifest = read_manifest(folder, "pass a folder written by `needlec compile` to --dataset")
        found[manifest["spec"]["name"]] = folder
    return found


def generate(specs: Sequence[Path], options: SiteOptions) -> tuple[Path, list[Benchmark]]:
    """Write every generated page; returns the generated folder and the benchmarks it describes."""
    docs = options.project / "docs"
    if not (options.project / "mkdocs.yml").is_file():
        raise NeedlecError(f"{options.project}: no mkdocs.yml; --project must name the site's mkdocs project")
    datasets = _datasets_by_name(options.datasets)
    runs = read_runs(options.results)  # before any compile: a wrong folder fails at once
    benches: list[Benchmark] = []
    for spec in specs:
        options.log(f"collecting {spec}")
        dataset = datasets.get(load_plan(spec, options.cache_dir).spec.name) if datasets else None
        bench = collect(spec, dataset, options.cache_dir)
        if any(b.name == bench.name for b in benches):
            raise NeedlecError(f"two specs are named {bench.name!r}; benchmark names must be unique")
        benches.append(bench)
    unused = set(datasets) - {b.name for b in benches}
    if unused:
        raise NeedlecError(f"--dataset given for {', '.join(sorted(unused))}, but no such spec is being built")
    benches.sort(key=lambda b: (b.plan.spec.title.lower(), b.name))
    target = docs / GENERATED
    with atomic_directory(
        target, owned=lambda p: (p / "catalogue.md").is_file(), guard=specs, what="a generated pages folder"
    ) as tmp:
        pages = tmp / "benchmarks"
        pages.mkdir()
        for bench in benches:
            (pages / bench.name).mkdir()
            (pages / bench.name / "lengths.svg").write_bytes(lengths_svg(bench))
            (pages / bench.name / "depths.svg").write_bytes(depths_svg(bench))
            (pages / f"{bench.name}.md").write_text(render_page(bench, bench.name), encoding="utf-8")
        (pages / "index.md").write_text(benchmarks_index(benches), encoding="utf-8")
        (tmp / "catalogue.md").write_text(catalogue(benches, f"{GENERATED}/benchmarks/"), encoding="utf-8")
        reference = tmp / "reference"
        reference.mkdir()
        examples = default_specs(options.project) or list(specs)  # the same page whichever specs are built
        (reference / "spec-fields.md").write_text(render_reference(_spec_documents(examples, docs)), encoding="utf-8")
        if options.cli_parser is not None:
            cli_help = render_cli_help(options.cli_parser)
        else:
            cli_help = "# Command help\n\nThis page is generated by `needlec site build`.\n"
        (reference / "cli-help.md").write_text(cli_help, encoding="utf-8")
        nav: dict[str, list[list[str]]] = {
            "benchmarks": [[b.plan.spec.title, f"{GENERATED}/benchmarks/{b.name}.md"] for b in benches]
        }
        if runs:
            results = tmp / "results"
            results.mkdir()
            titles = {b.name: b.plan.spec.title for b in benches}
            links = {b.name: f"../benchmarks/{b.name}.md" for b in benches}
            written = write_results(results, runs, titles, links)
            nav["results"] = [["All results", f"{GENERATED}/results/index.md"]] + [
                [f"Results: {title}", f"{GENERATED}/results/{page}"] for title, page in written
            ]
        (tmp / "nav.json").write_text(json.dumps(nav, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target, benches


def run_mkdocs(project: Path, output: Path) -> None:
    """`mkdocs build --strict` in its own process (mkdocs resolves paths against the working directory)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "--clean",
        "-f",
        "mkdocs.yml",
        "-d",
        str(output.resolve()),
    ]
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=False)
    warnings = [line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    if result.returncode != 0 or warnings:
        shown = "\n".join(warnings or result.stderr.strip().splitlines()[-20:])
        raise NeedlecError(f"mkdocs build --strict failed:\n{shown}")


def _is_built_site(folder: Path) -> bool:
    """A folder mkdocs built (it has a search index and a sitemap); only such a folder is replaced."""
    return (folder / "search" / "search_index.json").is_file() or (folder / "sitemap.xml").is_file()


def build_site(specs: Sequence[Path] | None, options: SiteOptions | None = None) -> SiteResult:
    """Generate the pages for `specs` (default: the shipped specs) and, unless told not to, the HTML."""
    options = options or SiteOptions()
    chosen = list(specs) if specs else default_specs(options.project)
    if not chosen:
        raise NeedlecError("no spec files given and none found in specs/")
    generated, benches = generate(chosen, options)
    output = None
    if options.build:
        output = check_target(
            options.output or options.project / "site",
            owned=_is_built_site,
            guard=(options.project / "mkdocs.yml", *chosen),
            what="a site built by mkdocs",
        )
        options.log("running mkdocs build --strict")
        run_mkdocs(options.project, output)
    return SiteResult(generated, output, [b.name for b in benches])
