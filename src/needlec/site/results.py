"""Results pages: what `needlec score` reports, one page per benchmark, runs side by side.

Each `--results` folder is one run (a report written by `needlec score`: `summary.json` and
`plots/`), labelled by its folder name. A benchmark's page has a comparison table (one row per
run, one column per config), then per config the headline numbers of every run, the score by
length, and each run's heatmap (the report's SVG, copied next to the page).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needlec.errors import NeedlecError
from needlec.site.markdown import cell, code, short_number, table

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")  # as the report names its plot files


def safe(name: str) -> str:
    """A config or run name as the report (and the results folder) spells it in file names."""
    return _SAFE.sub("_", name)


@dataclass(frozen=True)
class Run:
    """One score report: its label (the folder name), folder and summary."""

    label: str
    folder: Path
    summary: dict[str, Any]

    @property
    def benchmarks(self) -> list[str]:
        return [str(b) for b in self.summary.get("benchmarks") or []]


def read_runs(folders: Sequence[Path]) -> list[Run]:
    """The reports in the given folders, in the order given; each must hold a `summary.json`."""
    runs: list[Run] = []
    for folder in folders:
        path = folder / "summary.json"
        if not path.is_file():
            raise NeedlecError(f"{folder}: no summary.json; --results takes folders written by `needlec score -o`")
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise NeedlecError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(summary, dict) or not isinstance(summary.get("configs"), dict):
            raise NeedlecError(f"{path}: not a needlec score summary (no `configs` mapping)")
        label = folder.resolve().name
        if any(r.label == label for r in runs):
            raise NeedlecError(f"two --results folders are named {label!r}; runs are labelled by folder name")
        runs.append(Run(label, folder, summary))
    return runs


def _points(value: Any) -> str:
    return "–" if value is None else f"{float(value):.1f}"


def _interval(stats: dict[str, Any]) -> str:
    ci = stats.get("ci95")
    return f"{_points(ci[0])}–{_points(ci[1])}" if isinstance(ci, list) and len(ci) == 2 else "–"


def _effective(cfg: dict[str, Any]) -> str:
    lengths = cfg.get("effective_length")
    if not isinstance(lengths, dict):
        return "–"
    chosen = lengths.get("headline") or dict(lengths.get("ruler") or {}, rule="ruler")
    value = chosen.get("effective_length")
    shown = "none" if value is None else short_number(int(value))
    return f"{shown} ({chosen.get('rule')})"


def _degradation(cfg: dict[str, Any]) -> str:
    position = cfg.get("position")
    if not isinstance(position, dict) or position.get("degradation") is None:
        return "–"
    return f"{position['degradation']:.1f} ({position.get('verdict')})"


def _configs(runs: Sequence[Run]) -> list[str]:
    return sorted({name for run in runs for name in run.summary["configs"]})


def comparison(runs: Sequence[Run]) -> str:
    """One row per run: the overall mean and interval, then each config's mean (points)."""
    configs = _configs(runs)
    rows = []
    for run in runs:
        overall = run.summary.get("overall") or {}
        per = [_points((run.summary["configs"].get(c) or {}).get("mean")) for c in configs]
        rows.append(
            [code(run.label), _points(overall.get("mean")), _interval(overall), str(overall.get("n", "–")), *per]
        )
    return table(["run", "overall", "95% CI", "items", *(code(c) for c in configs)], rows)


def _by_length(runs: Sequence[Run], config: str) -> str:
    curves: dict[str, dict[int, float]] = {}
    for run in runs:
        cfg = run.summary["configs"].get(config) or {}
        curves[run.label] = {int(r["context_length"]): r["mean"] for r in cfg.get("by_length") or []}
    lengths = sorted({n for curve in curves.values() for n in curve})
    if not lengths:
        return ""
    rows = [[short_number(n), *(_points(curves[r.label].get(n)) for r in runs)] for n in lengths]
    return table(["length", *(code(r.label) for r in runs)], rows)


def _families(runs: Sequence[Run]) -> str:
    parts = []
    nb = [(r, (r.summary.get("families") or {}).get("needlebench")) for r in runs]
    if any(v for _, v in nb):
        tasks = sorted({t for _, v in nb if v for t in v.get("tasks") or {}})
        rows = [
            [
                code(r.label),
                *(_points((v.get("tasks") or {}).get(t)) for t in tasks),
                _points(v.get("overall_v1")),
                _points(v.get("overall_v2")),
            ]
            for r, v in nb
            if v
        ]
        parts.append("### NeedleBench overall\n\n" + table(["run", *tasks, "overall v1", "overall v2"], rows))
    atc = [(r, (r.summary.get("families") or {}).get("atc")) for r in runs]
    if any(v for _, v in atc):
        rows = [[code(r.label), _points(v.get("overall"))] for r, v in atc if v]
        parts.append("### ATC step-weighted score\n\n" + table(["run", "overall"], rows))
    return "\n\n".join(parts)


def render_results(bench: str, title: str, runs: Sequence[Run], benchmark_page: str | None) -> str:
    """The Markdown of one benchmark's results page (images are `<bench>/<run>/<config>-heatmap.svg`)."""
    lines = [f"# Results: {cell(title)}", ""]
    about = f"the [{cell(title)}]({benchmark_page}) benchmark" if benchmark_page else f"benchmark {code(bench)}"
    lines += [
        f"Scores of {len(runs)} run{'s' if len(runs) != 1 else ''} on {about}, as `needlec score` reported "
        "them (means and intervals in points, 0-100; definitions on the [Scoring](../../scoring.md) page). "
        "Each run is labelled by the name of its report folder.",
        "",
        "## Comparison",
        "",
        comparison(runs),
        "",
    ]
    families = _families(runs)
    if families:
        lines += ["## Family scores", "", families, ""]
    for config in _configs(runs):
        present = [r for r in runs if config in r.summary["configs"]]
        lines += [f"## Config {code(config)}", ""]
        rows = []
        for run in present:
            cfg = run.summary["configs"][config]
            rows.append(
                [
                    code(run.label),
                    _points(cfg.get("mean")),
                    _interval(cfg),
                    str(cfg.get("n", "–")),
                    code(cfg.get("metric")),
                    _effective(cfg),
                    _degradation(cfg),
                ]
            )
        headers = ["run", "mean", "95% CI", "items", "metric", "effective length", "positional degradation"]
        lines += [table(headers, rows), ""]
        curve = _by_length(present, config)
        if curve:
            lines += ["Score by context length:", "", curve, ""]
        for run in present:
            if (run.folder / "plots" / f"{safe(config)}-heatmap.svg").is_file():
                image = f"{bench}/{safe(run.label)}/{safe(config)}-heatmap.svg"
                lines += [f"![{cell(run.label)}: {cell(config)} heatmap]({image})", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_results(
    folder: Path, runs: Sequence[Run], titles: dict[str, str], pages: dict[str, str]
) -> list[tuple[str, str]]:
    """Write a results page per benchmark (and its heatmaps) into `folder`; returns (title, page file).

    `titles` and `pages` give the title and benchmark page link of the benchmarks being built; a
    benchmark only the reports name gets a page under its name, without a link.
    """
    benchmarks = sorted({b for run in runs for b in run.benchmarks})
    written = []
    for bench in benchmarks:
        present = [r for r in runs if bench in r.benchmarks]
        for run in present:
            target = folder / bench / safe(run.label)
            for config in run.summary["configs"]:
                source = run.folder / "plots" / f"{safe(config)}-heatmap.svg"
                if source.is_file():
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target / source.name)
        title = titles.get(bench, bench)
        page = render_results(bench, title, present, pages.get(bench))
        (folder / f"{bench}.md").write_text(page, encoding="utf-8")
        written.append((title, f"{bench}.md"))
    rows = [
        [f"[{cell(title)}]({name})", str(sum(1 for r in runs if name[:-3] in r.benchmarks))] for title, name in written
    ]
    index = (
        "# Results\n\nScore reports given to `needlec site build --results`, one page per benchmark.\n\n"
        + (table(["benchmark", "runs"], rows) if rows else "No results were given.")
        + "\n"
    )
    (folder / "index.md").write_text(index, encoding="utf-8")
    return written
