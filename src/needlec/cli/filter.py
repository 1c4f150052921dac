"""`needlec filter`: run only the filter stage of a spec and show what it took out.

Useful before a compile (to review what an LLM or an embedder flagged) and after editing a
decisions file. It shares the compile's cache, so a later compile replays these runs offline.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from needlec.haystacks.filters.stage import FilterStage


@dataclass
class FilterReport:
    """The stage after running every selected config's filters, and the configs it ran for."""

    stage: FilterStage
    configs: list[str]


def run_filters(
    spec_path: str | Path, cache_dir: Path | None = None, configs: list[str] | None = None, progress: bool = False
) -> FilterReport:
    """Load a spec, read its sources and run their filters (nothing else is built)."""
    from needlec.compile.pipeline import Prepared, default_cache_dir
    from needlec.compile.plan import load_plan
    from needlec.errors import NeedlecError

    cache = cache_dir or default_cache_dir()
    plan = load_plan(spec_path, cache)
    names = [c.name for c in plan.configs]
    unknown = sorted(set(configs or []) - set(names))
    if unknown:
        raise NeedlecError(f"--config: no config named {', '.join(unknown)} (configs: {', '.join(names)})")
    prepared = Prepared(plan, cache)
    prepared.filters.progress = progress
    chosen = [c for c in plan.configs if not configs or c.name in configs]
    for config in chosen:
        prepared.documents(config.spec)
    return FilterReport(prepared.filters, [c.name for c in chosen])


def _excerpt(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_report(report: FilterReport, show: int) -> str:
    stage = report.stage
    from needlec.haystacks.filters.audit import reason_text

    if not stage.runs:
        return f"no filters in the haystack sources of config(s) {', '.join(report.configs)}"
    lines = []
    for run in stage.runs.values():
        counts = run.counts()
        origin = "from cache" if run.cached else "ran now"
        extra = ", ".join(
            f"{k} {v}" for k, v in counts.items() if k not in ("edits", "sentences", "characters_removed")
        )
        redacted = any(edit.replacement for _, edit, _, _ in run.edits)  # `action: redact`: replaced, not cut
        what = "redacted" if redacted else "removed"
        lines.append(
            f"{run.name} on {run.source}: {what} {counts['sentences']} sentence(s) in {len(run.edits)} cut(s) "
            "(neighbouring sentences go in one), "
            f"{counts['characters_removed']} characters{' (each replaced by its redaction)' if redacted else ''} "
            f"({origin}; {extra})"
        )
        for doc, edit, removed, reasons in run.edits[:show]:
            why = "; ".join(dict.fromkeys(reason_text({"rule": r.rule, **r.detail}) for r in reasons))
            lines.append(f"  {doc} {edit.start}-{edit.end}  {why}")
            lines.append(f"      {_excerpt(removed)!r}")
        if len(run.edits) > show:
            lines.append(f"  ... and {len(run.edits) - show} more cut(s) (see --audit)")
        for kind, values in run.result.exclusions.items():
            lines.append(f"  excluded {kind}: {', '.join(values) or '(none)'}")
    a = stage.activity
    lines.append(
        f"{len(stage.runs)} filter run(s): {a.cached_runs} from cache, {a.fresh_runs} ran now; "
        f"{a.model_calls} model call(s), {a.cached_verdicts} cached verdict(s) reused, "
        f"{a.texts_encoded} text(s) embedded"
    )
    return "\n".join(lines)


def cmd_filter(args: argparse.Namespace) -> int:
    from needlec.haystacks.filters.review import write_review

    report = run_filters(
        args.spec, Path(args.cache_dir) if args.cache_dir else None, args.config or None, progress=not args.quiet
    )
    print(render_report(report, args.show))
    if args.review:
        entries: list[dict[str, Any]] = report.stage.review()
        write_review(Path(args.review), entries)
        print(f"wrote {len(entries)} review entr{'y' if len(entries) == 1 else 'ies'} to {args.review}")
    if args.audit:
        written = report.stage.write_audit(Path(args.audit))
        for path in written:
            print(f"wrote {Path(args.audit) / path}")
    return 0


def add_filter_command(sub: Any) -> None:
    p = sub.add_parser(
        "filter",
        help="run only the haystack filters and show what they remove",
        description="Load SPEC, read its haystack sources and run their filters, then "
        "print what each filter removed and why. Verdicts and results go to the same "
        "cache as `compile`, which then replays them without calling any model.",
    )
    p.add_argument("spec", metavar="SPEC", help="path of the spec file (.yaml, .yml or .json)")
    p.add_argument(
        "--review",
        metavar="FILE",
        help="write every flagged chunk and ranked candidate to "
        "FILE (YAML) for a person to decide; name the edited file in a filter's `decisions:`",
    )
    p.add_argument(
        "--audit",
        metavar="DIR",
        help="also write audit/filters.jsonl and audit/summary.md under DIR, as a compile does",
    )
    p.add_argument(
        "--config",
        action="append",
        metavar="NAME",
        help="only this config's haystacks (repeatable; default: every config)",
    )
    p.add_argument("--show", type=int, default=10, metavar="N", help="removals listed per filter run (default 10)")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="filter and download cache (default: "
        "$NEEDLEC_CACHE_DIR, else $XDG_CACHE_HOME/needlec, else ~/.cache/needlec)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or retry messages")
    p.set_defaults(func=cmd_filter)


__all__ = ["FilterReport", "add_filter_command", "render_report", "run_filters"]
