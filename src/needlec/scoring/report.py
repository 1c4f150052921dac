"""The report folder: `scores.jsonl`, `summary.json`, each family's headline table (`FAMILY.csv`,
`FAMILY.md`), and plots per config (SVG and PNG)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from needlec.errors import OutputError
from needlec.scoring.api import ScoreResult
from needlec.util.atomic import atomic_directory
from needlec.util.canonical import dumps, line

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def score_lines(result: ScoreResult) -> list[bytes]:
    """One canonical JSON line per scored item: id, score, metric, version, details."""
    lines = []
    for row in result.rows:
        scoring = row.item.get("scoring") or {}
        record: dict[str, Any] = {
            "id": row.item["id"],
            "config": row.item.get("config"),
            "score": round(row.score, 6),
            "metric": scoring.get("metric"),
            "version": scoring.get("version"),
            "details": row.details,
        }
        lines.append(line(record))
    return lines


def _is_report(folder: Path) -> bool:
    """A folder `needlec score` wrote: it holds `summary.json` and `scores.jsonl`."""
    return (folder / "summary.json").is_file() and (folder / "scores.jsonl").is_file()


def write_report(result: ScoreResult, out: str | Path, plots: bool = True) -> list[Path]:
    """Write the report folder `out` atomically; returns the files written (relative to `out`).

    An existing folder is replaced only when it is a previous report (it holds `summary.json`);
    any other non-empty folder is refused, so no user file is ever lost.
    """
    if not isinstance(result, ScoreResult):
        raise TypeError(f"write_report takes the ScoreResult that `score` returns; got {type(result).__name__}")
    target = Path(out)
    if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / "summary.json").is_file())):
        raise OutputError(f"{target}: exists and is not a needlec score report; choose another -o")
    written: list[Path] = []
    with atomic_directory(target, owned=_is_report, what="a needlec score report") as root:
        (root / "scores.jsonl").write_bytes(b"".join(score_lines(result)))
        (root / "summary.json").write_bytes(dumps(result.summary, indent=True) + b"\n")
        written += [Path("scores.jsonl"), Path("summary.json")]
        for name, table in result.tables.items():
            safe = _SAFE.sub("_", name)
            (root / f"{safe}.csv").write_text(table.to_csv(), encoding="utf-8", newline="")
            (root / f"{safe}.md").write_text(table.to_markdown(), encoding="utf-8", newline="")
            written += [Path(f"{safe}.csv"), Path(f"{safe}.md")]
        if plots:
            written += _write_plots(result, root)
    return written


def _write_plots(result: ScoreResult, root: Path) -> list[Path]:
    from needlec.scoring.plots import heatmap_figure, length_figure, render

    plot_dir = root / "plots"
    plot_dir.mkdir()
    written = []
    for name, cfg in result.summary["configs"].items():
        safe = _SAFE.sub("_", name)
        figures = {}
        if "heatmap" in cfg:  # a spec's `reports.show` may leave a plot out
            figures[f"{safe}-heatmap"] = heatmap_figure(f"{name}: mean score", cfg["heatmap"])
        if "by_length" in cfg:
            figures[f"{safe}-by-length"] = length_figure(f"{name}: score by length", cfg["by_length"])
        for stem, fig in figures.items():
            for fmt in ("svg", "png"):
                (plot_dir / f"{stem}.{fmt}").write_bytes(render(fig, fmt))
                written.append(Path("plots") / f"{stem}.{fmt}")
    return written
