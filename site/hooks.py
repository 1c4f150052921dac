"""mkdocs hooks for the needlec site.

`needlec site build` writes pages under docs/generated/. These hooks list the generated benchmark
pages (and the results pages, when score reports were given) in the navigation (their number
depends on the shipped specs), add any hand-written page that mkdocs.yml does not list yet under
"Guides" (so a new page is never left out of the navigation), and put the catalogue into the home
page where it says <!-- needlec:catalogue -->.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

GENERATED = "generated"
CATALOGUE_MARKER = "<!-- needlec:catalogue -->"


def _generated(config: Any) -> Path:
    folder = Path(config["docs_dir"]) / GENERATED
    if not (folder / "nav.json").is_file():
        raise PluginError(
            f"{folder} is missing: run `needlec site build` (or `needlec site build "
            "--pages-only` before `mkdocs build`) to generate the benchmark pages"
        )
    return folder


def _listed(node: Any) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, dict):
        return set().union(*(_listed(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_listed(v) for v in node))
    return set()


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").capitalize()


def on_config(config: Any) -> Any:
    generated = json.loads((_generated(config) / "nav.json").read_text(encoding="utf-8"))
    pages = generated["benchmarks"]
    results = generated.get("results") or []  # present when `needlec site build --results` was given
    nav = config["nav"] or []
    docs = Path(config["docs_dir"])
    listed = _listed(nav)
    unlisted = sorted(
        p.relative_to(docs).as_posix() for p in docs.rglob("*.md") if p.relative_to(docs).parts[0] != GENERATED
    )
    extra = [{_title(docs / path): path} for path in unlisted if path not in listed]
    for entry in nav:
        if isinstance(entry, dict) and "Benchmarks" in entry:
            entry["Benchmarks"] = [
                {"All benchmarks": f"{GENERATED}/benchmarks/index.md"},
                *({title: path} for title, path in pages),
                *({title: path} for title, path in results),
            ]
        if isinstance(entry, dict) and "Guides" in entry and extra:
            entry["Guides"] = [*entry["Guides"], *extra]
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CATALOGUE_MARKER not in markdown:
        return markdown
    catalogue = (_generated(config) / "catalogue.md").read_text(encoding="utf-8")
    return markdown.replace(CATALOGUE_MARKER, catalogue)
