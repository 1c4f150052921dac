"""The readable side of the audit: a Markdown summary of every filter run and what it took out.

The JSONL file beside it has every removal in full; this page is for a person deciding whether
the filters did the right thing, so it shortens long sentences and lists review candidates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from needlec.haystacks.filters.base import FilterResult, Removal
    from needlec.haystacks.filters.edits import Edit


class AuditedRun(Protocol):
    """What the summary reads of a filter run (`stage.FilterRun` is one); named here so that this module
    does not import the stage that imports it."""

    name: str
    source: str
    params: dict[str, Any]
    cache_key: str
    input_sha256: str
    output_sha256: str
    result: FilterResult
    edits: list[tuple[str, Edit, str, list[Removal]]]

    def counts(self) -> dict[str, int]: ...


MAX_ROWS = 200


def _cell(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def reason_text(reason: dict[str, Any]) -> str:
    """One line saying why a sentence went (used by the summary and the `filter` command)."""
    rule = reason.get("rule", "")
    if "matches" in reason:
        parts = [f"term {m['term']!r}" if "term" in m else f"regex {m['regex']!r}" for m in reason["matches"]]
        return ", ".join(parts)
    if rule == "distractor" and reason.get("keyword") is None:
        return f"distractor {reason.get('candidate')!r} ({reason.get('why')})"
    if rule == "distractor":
        return f"distractor {reason.get('candidate')!r} (keyword {reason.get('keyword')!r}, {reason.get('why')})"
    if rule == "answer_candidate":
        return f"answers {reason.get('question')!r} with {reason.get('answer')!r} ({reason.get('why')})"
    if rule == "name":
        return f"pool name {reason.get('name')!r}"
    return str(rule)


def render_summary(runs: list[AuditedRun]) -> str:
    lines = [
        "# Haystack filter audit",
        "",
        "Every filter run of this compile, what it was given and what it took out of the "
        "haystack sources. `filters.jsonl` beside this page has each removal in full, with "
        "character offsets into the text the filter read.",
        "",
    ]
    for run in runs:
        counts = run.counts()
        lines += [
            f"## `{run.name}` on `{run.source}`",
            "",
            f"- cache key: `{run.cache_key}`",
            f"- input sha256: `{run.input_sha256}`, output sha256: `{run.output_sha256}`",
            f"- parameters: `{json.dumps(run.params, ensure_ascii=False, sort_keys=True)}`",
            "- counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
            "",
        ]
        for kind, values in run.result.exclusions.items():
            lines += [f"Excluded {kind} ({len(values)}): " + ", ".join(values), ""]
        if run.edits:
            lines += ["| document | characters | why | removed |", "|---|---|---|---|"]
            for doc, edit, removed, reasons in run.edits[:MAX_ROWS]:
                why = "; ".join(dict.fromkeys(reason_text({"rule": r.rule, **r.detail}) for r in reasons))
                lines.append(f"| {_cell(doc, 40)} | {edit.start}-{edit.end} | {_cell(why, 120)} | {_cell(removed)} |")
            if len(run.edits) > MAX_ROWS:
                lines.append(f"| … | | {len(run.edits) - MAX_ROWS} more in filters.jsonl | |")
            lines.append("")
        else:
            lines += ["Nothing was removed.", ""]
        review = [r for r in run.result.review if r.get("kind") == "candidate"]
        if review:
            lines += [
                "Candidates ranked for review (top k per keyword):",
                "",
                "| keyword | candidate | score | ranked by | decision |",
                "|---|---|---|---|---|",
            ]
            for entry in review[:MAX_ROWS]:
                lines.append(
                    f"| {_cell(entry['keyword'], 40)} | {_cell(entry['candidate'], 40)} | "
                    f"{entry['score']:.3f} | {entry['ranked_by']} | {entry['decision']} |"
                )
            lines.append("")
    return "\n".join(lines)
