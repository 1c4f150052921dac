"""`needlec site build --results`: a results page per benchmark, built to HTML by mkdocs in strict mode.

One tiny spec is compiled for real and scored twice (all right; two cells wrong), and the site is
built for that spec alone with both reports. The expected means come from the response rule, by
hand: the second run misses one of six items in each config (5/6 = 83.3 points).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from site_support import copy_project
from test_scoring_reports import SPEC, WRONG

from needlec.cli import build_parser
from needlec.errors import NeedlecError
from needlec.site.build import SiteOptions, build_site

NEEDLEC = str(Path(sys.executable).parent / "needlec")


class _Tables(HTMLParser):
    """Rows of every <table> (cell texts) and the src of every <img>."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.images: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _run(*args: str) -> None:
    done = subprocess.run([NEEDLEC, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _responses(dataset: Path, path: Path, wrong: set[tuple[str, int, float]]) -> Path:
    rows = []
    for file in sorted((dataset / "data").rglob("*.jsonl")):
        for line in file.open(encoding="utf-8"):
            item = json.loads(line)
            cell = (item["config"], item["context_length"], float(item["depth_percent"]))
            rows.append({"id": item["id"], "response": "No idea." if cell in wrong else "Marmalade."})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("site-results")
    spec = root / "tiny.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    dataset = root / "ds"
    _run("compile", str(spec), "-o", str(dataset), "-q")
    for label, wrong in (("model-a", set()), ("model-b", WRONG)):
        _run("score", str(dataset), str(_responses(dataset, root / f"{label}.jsonl", wrong)), "-o", str(root / label))
    project = copy_project(root / "project" / "site")
    options = SiteOptions(
        project=project, datasets=[dataset], results=[root / "model-a", root / "model-b"], cli_parser=build_parser()
    )
    return project, build_site([spec], options)


def _page(project: Path, result: Any) -> _Tables:
    html = result.output / "generated" / "results" / "tiny" / "index.html"
    parsed = _Tables()
    parsed.feed(html.read_text(encoding="utf-8"))
    return parsed


def test_the_comparison_table(built: tuple[Path, Any]) -> None:
    project, result = built
    comparison = _page(project, result).tables[0]
    assert comparison[0] == ["run", "overall", "95% CI", "items", "baseline", "full"]
    assert [row[:2] + row[3:] for row in comparison[1:]] == [
        ["model-a", "100.0", "12", "100.0", "100.0"],
        ["model-b", "83.3", "12", "83.3", "83.3"],
    ]


def test_config_tables_follow_the_specs_reports(built: tuple[Path, Any]) -> None:
    project, result = built
    tables = _page(project, result).tables
    # comparison, then per config (baseline, full) its table and its by-length table
    assert len(tables) == 5
    headers = ["run", "mean", "95% CI", "items", "metric", "effective length", "positional degradation"]
    base, full = tables[1], tables[3]
    assert base[0] == full[0] == headers
    # `baseline` shows no effective length and no position bands (its reports.show)
    assert [(r[0], r[1], r[5], r[6]) for r in base[1:]] == [
        ("model-a", "100.0", "–", "–"),
        ("model-b", "83.3", "–", "–"),
    ]
    # `full`: the mlneedle headline. model-a: baseline 100, every length 100 -> 1000 (1K).
    # model-b: baseline 83.3 -> threshold 62.5; 250 -> 100 passes, 500 -> 50 fails -> 250
    assert [(r[0], r[5]) for r in full[1:]] == [("model-a", "1K (mlneedle)"), ("model-b", "250 (mlneedle)")]
    assert tables[4] == [
        ["length", "model-a", "model-b"],
        ["250", "100.0", "100.0"],
        ["500", "100.0", "50.0"],
        ["1K", "100.0", "100.0"],
    ]


def test_heatmaps_are_shown_for_the_configs_that_draw_them(built: tuple[Path, Any]) -> None:
    project, result = built
    images = _page(project, result).images
    # only the baseline config shows a heatmap (its `reports.show`); one per run
    heatmaps = sorted(src for src in images if src.endswith("-heatmap.svg"))
    assert [src.split("/")[-2:] for src in heatmaps] == [
        ["model-a", "baseline-heatmap.svg"],
        ["model-b", "baseline-heatmap.svg"],
    ]
    folder = result.output / "generated" / "results" / "tiny"
    assert all((folder / src).resolve().is_file() for src in heatmaps)
    assert re.search(r'href="[^"]*results/tiny/"', (result.output / "index.html").read_text(encoding="utf-8"))


def test_a_folder_that_is_not_a_report_is_refused(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "site")
    options = SiteOptions(project=project, results=[tmp_path], build=False)
    with pytest.raises(NeedlecError, match=r"no summary\.json"):
        build_site([project.parent / "specs" / "niah.yaml"], options)
