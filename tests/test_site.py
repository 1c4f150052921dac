"""The documentation site generator: pages for every shipped spec, references, the authoring guide."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from site_support import ROOT, SITE, SPECS, built_site, copy_project

from needlec.cli import build_parser
from needlec.errors import NeedlecError
from needlec.site.benchmark_page import filters_block, overlap_section
from needlec.site.build import SiteOptions, build_site, run_mkdocs
from needlec.site.cli_help import help_texts
from needlec.site.markdown import cell, md_cell, value_block
from needlec.site.reference import sections, walk_models
from needlec.spec.models import json_schema

NEEDLEC = str(Path(sys.executable).parent / "needlec")
GUIDE = SITE / "docs" / "guides" / "authoring.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return built_site(tmp_path_factory)


def _names() -> list[tuple[str, str]]:
    """(name, title) of every shipped spec."""
    out = []
    for spec in SPECS:
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        out.append((data["name"], data["title"]))
    return out


def test_every_shipped_spec_has_a_full_page(site: tuple[Path, Any]) -> None:
    project, result = site
    assert sorted(result.benchmarks) == sorted(name for name, _ in _names())
    for name, title in _names():
        page = (project / "docs" / "generated" / "benchmarks" / f"{name}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {title}\n")
        for heading in (
            "## Grid",
            "## Distributions",
            "## Needles and questions",
            "## Prompt templates",
            "## Haystack",
            "### Filters",
            "## Lexical overlap",
            "## Sample items",
            "## Get the data",
        ):
            assert f"\n{heading}\n" in page, f"{name}: no {heading}"
        for plot in ("lengths.svg", "depths.svg"):
            assert f"]({name}/{plot})" in page
            svg = (project / "docs" / "generated" / "benchmarks" / name / plot).read_bytes()
            assert svg.startswith(b"<?xml") and b"<svg" in svg and b"<dc:date>" not in svg
        html = (result.output / "generated" / "benchmarks" / name / "index.html").read_text(encoding="utf-8")
        assert html.count('class="needlec-plot"') == 2 and "lengths.svg" in html and "depths.svg" in html
        spec_path = next(p for p in SPECS if yaml.safe_load(p.read_text(encoding="utf-8"))["name"] == name)
        assert f"| spec | `specs/{spec_path.relative_to(ROOT / 'specs').as_posix()}` |" in page  # sub-folder and all
        if name in NO_PREVIEW:  # nothing compiled offline: the page says why and how to compile a slice
            assert f"No items were compiled for this page: {NO_PREVIEW[name]}" in page
            assert "load_dataset(" in page and "needlec compile specs/mlneedle/" in page
            # and claims nothing about a compile that did not run: the filters are the spec's
            assert f"Not known, as no items were compiled for this page: {NO_PREVIEW[name]}" in page
            assert f"Not measured, as no items were compiled for this page: {NO_PREVIEW[name]}" in page
            assert "The spec cleans its haystack with `literal_terms` (source 1)" in page
            continue
        samples = re.findall(r'<details class="needlec-sample".*?</details>', page, flags=re.DOTALL)
        # every sample with a needle shows it highlighted; a needle-absent existence item (an MLNeedle
        # negative) has none, so a page needs at least one highlighted sample, not all
        assert samples and any('<mark class="needlec-needle">' in s for s in samples)
        assert "load_dataset(" in page and re.search(r"\| `[0-9a-f]{64}` \|", page)
        assert "Length contract: " in page
        if name == "niah":  # kamradt-grid keeps 200 tokens free below each length: its target is the rest
            exact, total = re.search(r"Length contract: ([\d,]+) of ([\d,]+) compiled items", page).groups()
            assert exact == total, page[page.index("Length contract") :][:200]


NO_PREVIEW = {
    "mlneedle-online": "its haystack is downloaded",
}
"""Shipped specs whose pages compile nothing offline in seconds, and the reason each page gives."""


def test_sub_folder_specs_have_pages_and_catalogue_cards(site: tuple[Path, Any]) -> None:
    project, result = site
    assert {"atc-v2", "needlebench-4k", "mlneedle-question-language"} <= set(result.benchmarks)
    catalogue = (project / "docs" / "generated" / "catalogue.md").read_text(encoding="utf-8")
    assert "`needlec compile specs/atc/atc-v2.yaml`" in catalogue
    assert "[atc page](atc.md)" in catalogue and "[ruler page](ruler.md)" in catalogue
    assert catalogue.count("**Size:** about ") == len(SPECS)
    index = (project / "docs" / "generated" / "benchmarks" / "index.md").read_text(encoding="utf-8")
    assert "[atc page](../../atc.md)" in index


def test_catalogue_lists_every_shipped_spec(site: tuple[Path, Any]) -> None:
    _, result = site
    home = (result.output / "index.html").read_text(encoding="utf-8")
    index = (result.output / "generated" / "benchmarks" / "index.html").read_text(encoding="utf-8")
    for name, title in _names():
        for page in (home, index):
            assert title.replace("'", "&#39;") in page or title in page
        assert f'href="generated/benchmarks/{name}/"' in home
    assert "needlec:catalogue" not in home


def test_site_builds_offline_with_search(site: tuple[Path, Any]) -> None:
    _, result = site
    pages = list(result.output.rglob("*.html"))
    assert len(pages) >= 8
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page
    index = json.loads((result.output / "search" / "search_index.json").read_text(encoding="utf-8"))
    titles = {doc["title"] for doc in index["docs"]}
    for _, title in _names():
        assert title in titles
    assert not any("lighthouse is named" in doc["text"] for doc in index["docs"])


def test_generated_pages_are_deterministic(site: tuple[Path, Any], tmp_path: Path) -> None:
    """`needlec site build --pages-only` through the CLI regenerates the same bytes."""
    project, _ = site
    other = copy_project(tmp_path / "site")
    niah = next(s for s in SPECS if s.name == "niah.yaml")
    result = subprocess.run(
        [NEEDLEC, "site", "build", str(niah), "--project", str(other), "--pages-only", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "generated pages for 1 benchmark(s) (niah)" in result.stdout
    assert not (other / "site").exists()
    ours = other / "docs" / "generated"
    theirs = project / "docs" / "generated"
    for relative in (
        "benchmarks/niah.md",
        "benchmarks/niah/lengths.svg",
        "benchmarks/niah/depths.svg",
        "reference/spec-fields.md",
        "reference/cli-help.md",
    ):
        assert (ours / relative).read_bytes() == (theirs / relative).read_bytes(), relative


def test_a_compiled_dataset_can_be_described(small_niah: Path, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "site")
    niah = next(s for s in SPECS if s.name == "niah.yaml")
    build_site([niah], SiteOptions(project=project, datasets=[small_niah], build=False))
    page = (project / "docs" / "generated" / "benchmarks" / "niah.md").read_text(encoding="utf-8")
    manifest = json.loads((small_niah / "manifest.json").read_text(encoding="utf-8"))
    assert "the compiled dataset this page was built from" in page and "reduced grid" not in page
    for info in manifest["configs"].values():
        for entry in info["files"]:
            assert f"| `{entry['path']}` |" in page and f"`{entry['sha256']}`" in page
    with pytest.raises(NeedlecError, match="no such spec"):
        build_site(
            [niah], SiteOptions(project=project, datasets=[small_niah, _renamed(small_niah, tmp_path)], build=False)
        )


def _renamed(dataset: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "other"
    shutil.copytree(dataset, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["spec"]["name"] = "not-a-spec"
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return copy


def test_spec_field_reference_documents_every_field(site: tuple[Path, Any]) -> None:
    """Every field of every model has a type, default, description and example (fails otherwise)."""
    project, _ = site
    page = (project / "docs" / "generated" / "reference" / "spec-fields.md").read_text(encoding="utf-8")
    documents = [yaml.safe_load(s.read_text(encoding="utf-8")) for s in SPECS]
    found = {section.name: section for section in sections(documents)}
    missing = []
    for path, name, model in walk_models(json_schema()):
        section = found.get(name)
        assert section is not None and path in section.paths, f"{name} at {path} has no section"
        rows = {row.key: row for row in section.rows}
        for key in model["properties"]:
            row = rows[key]
            for column in ("type", "default", "description", "example"):
                if not getattr(row, column).strip():
                    missing.append(f"{name}.{key}: no {column}")
            assert f"| `{key}` | {row.type} | {row.default} | {md_cell(row.description)} |" in page
    assert not missing, "spec fields without documentation:\n  " + "\n  ".join(missing)
    assert "| `lengths` | list of integer or [LengthRange](#lengthrange) | required |" in page


def test_cli_help_page_quotes_every_command(site: tuple[Path, Any]) -> None:
    project, _ = site
    page = (project / "docs" / "generated" / "reference" / "cli-help.md").read_text(encoding="utf-8")
    texts = help_texts(build_parser())
    assert {"needlec", "needlec publish", "needlec verify", "needlec download", "needlec site build"} <= set(texts)
    for name, text in texts.items():
        assert f"## {name}\n\n```text\n{text.rstrip()}\n```" in page, name


def test_generic_rendering_of_filters_and_overlap() -> None:
    assert "No filters" in filters_block([])
    block = filters_block([{"name": "literal-terms", "terms": ["Saffron"], "audit": {"dropped": 3, "kept": 97}}])
    assert "**literal-terms**" in block and "| `dropped` | 3 |" in block
    manifest: dict[str, Any] = {"configs": {"a": {"files": []}}}
    bench: Any = type("B", (), {"manifest": manifest, "unavailable": None})()
    assert overlap_section(bench).startswith("None recorded")
    manifest["configs"]["a"]["overlap"] = {"needle": {"items": 2, "mean": {"rouge1": 0.5}}}
    text = overlap_section(bench)
    assert "#### `configs.a.overlap`" in text and "| key | items | mean.rouge1 |" in text
    assert "| `needle` | 2 | 0.5 |" in text
    assert value_block([1, [2]]).startswith("```json")
    assert cell("a|b <c> *d*\ne") == "a\\|b &lt;c&gt; \\*d\\*<br>e"


def test_a_page_missing_from_mkdocs_yml_joins_the_navigation(site: tuple[Path, Any], tmp_path: Path) -> None:
    project, _ = site
    copy = tmp_path / "site"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("site"))
    (copy / "docs" / "extra-notes.md").write_text("# Extra notes\n\nA page nobody listed.\n", encoding="utf-8")
    run_mkdocs(copy, tmp_path / "html")
    home = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "Extra notes" in home and (tmp_path / "html" / "extra-notes" / "index.html").is_file()


def test_site_build_reports_a_missing_project(tmp_path: Path) -> None:
    with pytest.raises(NeedlecError, match=r"no mkdocs\.yml"):
        build_site(SPECS[:1], SiteOptions(project=tmp_path / "nowhere", build=False))


# --- the authoring guide, followed as written ------------------------------------------------


def _guide_blocks(kind: str) -> list[tuple[str, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    return [
        (m.group(1) or "", m.group(2))
        for m in re.finditer(rf'```{kind}(?: title="([^"]+)")?\n(.*?)```', text, flags=re.DOTALL)
    ]


def test_authoring_guide_is_followed(tmp_path: Path) -> None:
    """Write the guide's spec files from the page source, run its commands and its Python code."""
    (tmp_path / "specs").mkdir()
    shutil.copyfile(ROOT / "specs" / "niah.yaml", tmp_path / "specs" / "niah.yaml")
    files = [(title, body) for title, body in _guide_blocks("yaml") if title]
    assert [t for t, _ in files] == ["specs/lighthouse.yaml", "specs/niah-short.yaml"]
    for title, body in files:
        (tmp_path / title).write_text(body, encoding="utf-8")
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HF_HUB_OFFLINE": "1",
    }
    ran = 0
    for _, block in _guide_blocks("console"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("$ needlec "):
                continue
            args = line[len("$ needlec ") :].split()
            result = subprocess.run(
                [NEEDLEC, *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
            )
            assert result.returncode == 0, f"{line}\n{result.stderr}"
            expected = [x for x in lines[i + 1 :] if x][:1]
            if expected and not expected[0].startswith("$"):
                assert expected[0] in result.stdout.splitlines(), f"{line}: expected {expected[0]!r}"
            ran += 1
    assert ran >= 6
    assert (tmp_path / "build" / "lighthouse" / "manifest.json").is_file()
    python = [body for _, body in _guide_blocks("python")]
    assert len(python) == 1
    result = subprocess.run(
        [sys.executable, "-c", python[0]], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("lighthouse/two/cl100k_base/1000/0/")
