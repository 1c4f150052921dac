"""Aggregates over scored items, computed from item fields only (never from lists of config names).

Every function takes `Scored` records (an item in the contract shape plus its score in [0, 1])
and returns plain JSON-ready data; means are in points (0-100). The definitions follow the
scoring page of the docs, which states each formula.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlec.scoring.stats import least_squares_slope, points, summarize


@dataclass(frozen=True)
class Scored:
    """One scored item: the item (contract shape), its mean score in [0, 1], and metric details."""

    item: Mapping[str, Any]
    score: float
    details: Mapping[str, Any] = field(default_factory=dict)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def group_by(rows: Iterable[Scored], key: Callable[[Scored], Hashable]) -> dict[Any, list[Scored]]:
    """Rows grouped by `key`, groups in first-seen order."""
    out: dict[Any, list[Scored]] = defaultdict(list)
    for row in rows:
        out[key(row)].append(row)
    return dict(out)


def by_field(rows: Sequence[Scored], name: str) -> list[dict[str, Any]]:
    """Mean and 95% interval per value of an item field (e.g. `context_length`), sorted by value."""
    groups = group_by(rows, lambda r: r.item.get(name))
    return [
        {name: value, **summarize([r.score for r in groups[value]])}
        for value in sorted(groups, key=lambda v: (v is None, v))
    ]


def heatmap(rows: Sequence[Scored]) -> dict[str, Any]:
    """Length x depth grid of mean scores (points); cells whose repeats disagree are listed."""
    lengths = sorted({r.item["context_length"] for r in rows})
    depths = sorted({float(r.item["depth_percent"]) for r in rows})
    cells = group_by(rows, lambda r: (r.item["context_length"], float(r.item["depth_percent"])))
    grid: list[list[float | None]] = []
    disagree = []
    for d in depths:
        line: list[float | None] = []
        for length in lengths:
            got = cells.get((length, d))
            if not got:
                line.append(None)
                continue
            scores = [r.score for r in got]
            line.append(points(_mean(scores)))
            if len(set(scores)) > 1:
                disagree.append({"context_length": length, "depth_percent": d, "scores": scores})
        grid.append(line)
    return {"lengths": lengths, "depths": depths, "cells": grid, "disagreeing_cells": disagree}


def needle_observations(row: Scored) -> list[tuple[float, float]]:
    """(depth percent, score) pairs of a row: one per target needle when the metric reports a hit per
    fact and facts and target needles pair up one to one (multi-needle retrieval), else one at the
    item's grid depth."""
    targets = [n for n in row.item.get("needles") or [] if n.get("role", "target") == "target"]
    hits = row.details.get("hits")
    if isinstance(hits, list) and len(targets) > 1 and len(hits) == len(targets):
        return [(float(n["depth_percent"]), 1.0 if h else 0.0) for n, h in zip(targets, hits, strict=True)]
    return [(float(row.item["depth_percent"]), row.score)]


def position_bands(rows: Sequence[Scored], begin: float = 20.0, end: float = 80.0) -> dict[str, Any]:
    """Beginning (depth <= begin), middle (begin < depth < end), end (depth >= end) means, and the
    positional degradation (beginning + end) / 2 - middle in points, with the lesson's verdict."""
    bands: dict[str, list[float]] = {"beginning": [], "middle": [], "end": []}
    for row in rows:
        for depth, score in needle_observations(row):
            band = "beginning" if depth <= begin else "end" if depth >= end else "middle"
            bands[band].append(score)
    out: dict[str, Any] = {"edges": [begin, end]}
    for name, scores in bands.items():
        out[name] = summarize(scores)
    means = [out[b]["mean"] for b in ("beginning", "middle", "end")]
    if None in means:
        out["degradation"] = None
        out["verdict"] = None
    else:
        deg = round((means[0] + means[2]) / 2 - means[1], 4)
        out["degradation"] = deg
        out["verdict"] = "good" if deg < 10 else "serious" if deg > 30 else "moderate"
    return out


def middle_band_curve(rows: Sequence[Scored], band: tuple[float, float]) -> dict[int, float]:
    """Mean score (points) per length over needle observations with band[0] <= depth <= band[1]."""
    per: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        for depth, score in needle_observations(row):
            if band[0] <= depth <= band[1]:
                per[int(row.item["context_length"])].append(score)
    return {length: points(_mean(v)) for length, v in sorted(per.items())}


def degradation_slope(curve: Mapping[int, float]) -> float | None:
    """Least-squares slope of a length curve over log2(length): points per doubling."""
    xs = [math.log2(length) for length in curve]
    slope = least_squares_slope(xs, list(curve.values()))
    return None if slope is None else round(slope, 4)


def prefix_rule(curve: Mapping[int, float], threshold: float) -> dict[str, Any]:
    """Effective length under the prefix rule: the largest tested length such that every tested
    length up to it scores >= threshold; also the first failing length (None when none fails)."""
    effective = None
    first_fail = None
    for length in sorted(curve):
        if curve[length] >= threshold:
            effective = length
        else:
            first_fail = length
            break
    return {"threshold": round(threshold, 4), "effective_length": effective, "first_failing_length": first_fail}


def length_curve(rows: Sequence[Scored]) -> dict[int, float]:
    """Mean score (points) per `context_length`."""
    groups = group_by(rows, lambda r: int(r.item["context_length"]))
    return {length: points(_mean([r.score for r in groups[length]])) for length in sorted(groups)}


def effective_lengths(
    rows: Sequence[Scored],
    *,
    ruler_threshold: float = 85.6,
    lesson_tau: float = 0.85,
    middle_band: tuple[float, float] = (100 / 3, 200 / 3),
    nolima_ratio: float = 0.85,
    nolima_base_max_length: int = 1000,
    baseline: float | None = None,
    mlneedle_ratio: float = 0.75,
    baseline_length: int | None = None,
) -> dict[str, Any]:
    """The four effective-length definitions, each with its parameters (prefix rule throughout).

    `ruler`: score >= an absolute threshold. `lesson`: middle-band score >= tau x 100.
    `nolima`: score >= ratio x base score, the base being the mean over lengths <= base_max_length.
    `mlneedle`: score >= ratio x the no-distractor baseline (only when a baseline is known); when the
    baseline was measured at `baseline_length` of these rows, that length is left out of its curve.
    """
    curve = length_curve(rows)
    out: dict[str, Any] = {"curve": {str(k): v for k, v in curve.items()}}
    out["ruler"] = prefix_rule(curve, ruler_threshold)
    middle = middle_band_curve(rows, middle_band)
    out["lesson"] = {
        **prefix_rule(middle, 100 * lesson_tau),
        "tau": lesson_tau,
        "band": [round(middle_band[0], 4), round(middle_band[1], 4)],
    }
    base_rows = [r for r in rows if int(r.item["context_length"]) <= nolima_base_max_length]
    if base_rows:
        base = points(_mean([r.score for r in base_rows]))
        out["nolima"] = {**prefix_rule(curve, nolima_ratio * base), "base_score": base, "ratio": nolima_ratio}
    else:
        out["nolima"] = None
    if baseline is not None:
        relative = {k: v for k, v in curve.items() if k != baseline_length}
        out["mlneedle"] = {
            **prefix_rule(relative, mlneedle_ratio * baseline),
            "baseline": baseline,
            "ratio": mlneedle_ratio,
        }
        if baseline_length is not None:
            out["mlneedle"]["baseline_length"] = baseline_length
    else:
        out["mlneedle"] = None
    return out


def language_matrix(rows: Sequence[Scored]) -> list[dict[str, Any]] | None:
    """Mean per (needle language, haystack language, question language); None without `languages`."""
    if not any(r.item.get("languages") for r in rows):
        return None

    def key(r: Scored) -> tuple[str, str, str]:
        langs = r.item.get("languages") or {}
        return (str(langs.get("needle", "?")), str(langs.get("haystack", "?")), str(langs.get("question", "?")))

    groups = group_by(rows, key)
    return [
        {"needle": k[0], "haystack": k[1], "question": k[2], **summarize([r.score for r in groups[k]])}
        for k in sorted(groups)
    ]


def balanced_accuracy(rows: Sequence[Scored]) -> dict[str, Any] | None:
    """For existence items (`expected` yes/no): (accuracy on yes + accuracy on no) / 2, in points."""
    yes = [r.score for r in rows if str(r.item.get("expected", "")).lower() == "yes"]
    no = [r.score for r in rows if str(r.item.get("expected", "")).lower() == "no"]
    if not yes and not no:
        return None
    tpr = _mean(yes) if yes else None
    tnr = _mean(no) if no else None
    both = [v for v in (tpr, tnr) if v is not None]
    return {
        "balanced_accuracy": points(_mean(both)) if len(both) == 2 else None,
        "yes_accuracy": None if tpr is None else points(tpr),
        "no_accuracy": None if tnr is None else points(tnr),
        "n_yes": len(yes),
        "n_no": len(no),
    }


def is_no_distractor(row: Scored) -> bool:
    """An item compiled without distractors (`passages` builder, `distractors: false`): a baseline item."""
    return _is_baseline(row)


def _is_baseline(row: Scored) -> bool:
    passages = (row.item.get("structure") or {}).get("passages") or {}
    return bool(passages.get("baseline"))


def mlneedle_effective(rows: Sequence[Scored], ratio: float = 0.75) -> dict[str, Any] | None:
    """MLNeedle's effective length per task: the largest length (prefix rule) whose mean score is at
    least `ratio` x the no-distractor baseline's mean score.

    Baseline items are those compiled with `passages` builder `distractors: false`
    (`structure.passages.baseline`). Per task, `overall` uses every baseline and every other item;
    `by_languages` pairs each (needle, haystack, question) curve with the baseline of the same needle and
    question languages. None when no item of an `mlneedle-*` task has a baseline.
    """
    ml = [r for r in rows if str(r.item.get("task", "")).startswith("mlneedle-")]
    if not any(_is_baseline(r) for r in ml):
        return None

    def langs(r: Scored) -> tuple[str, str, str]:
        given = r.item.get("languages") or {}
        return (str(given.get("needle", "?")), str(given.get("haystack", "?")), str(given.get("question", "?")))

    out: dict[str, Any] = {}
    for task, task_rows in sorted(group_by(ml, lambda r: str(r.item.get("task"))).items()):
        base_rows = [r for r in task_rows if _is_baseline(r)]
        rest = [r for r in task_rows if not _is_baseline(r)]
        if not base_rows:
            continue
        baseline = points(_mean([r.score for r in base_rows]))
        entry: dict[str, Any] = {
            "baseline": baseline,
            "ratio": ratio,
            "overall": {
                **prefix_rule(length_curve(rest), ratio * baseline),
                "curve": {str(k): v for k, v in length_curve(rest).items()},
            },
        }
        bases = group_by(base_rows, lambda r: (langs(r)[0], langs(r)[2]))
        cells = []
        for key, cell_rows in sorted(group_by(rest, langs).items()):
            own = bases.get((key[0], key[2]))
            if not own:
                continue
            cell_base = points(_mean([r.score for r in own]))
            cells.append(
                {
                    "needle": key[0],
                    "haystack": key[1],
                    "question": key[2],
                    "baseline": cell_base,
                    **prefix_rule(length_curve(cell_rows), ratio * cell_base),
                }
            )
        entry["by_languages"] = cells
        out[task] = entry
    return out or None


def _question_key(row: Scored) -> str:
    group = row.item.get("group") or {}
    return str(group.get("id") or row.item["id"])


def circular(rows: Sequence[Scored]) -> dict[str, Any] | None:
    """CircularEval over items with a `group`: a question counts only if every rotation is right.

    Reports `circular` (share of groups all right), `acc_1` (rotation 0 only) and `acc_all`
    (every rotated item on its own), in points.
    """
    grouped = [r for r in rows if r.item.get("group")]
    if not grouped:
        return None
    groups = group_by(grouped, _question_key)
    perfect = [1.0 if all(r.score == 1.0 for r in g) else 0.0 for g in groups.values()]
    first = [r.score for r in grouped if int((r.item.get("group") or {}).get("rotation", 0)) == 0]
    return {
        "groups": len(groups),
        "circular": points(_mean(perfect)),
        "acc_1": points(_mean(first)) if first else None,
        "acc_all": points(_mean([r.score for r in grouped])),
        "incomplete_groups": sorted(
            k for k, g in groups.items() if len(g) != int((g[0].item.get("group") or {}).get("size", len(g)))
        ),
    }


def atc_step(row: Scored) -> int:
    """An ATC item's step weight: `structure.score_step` (the label a spec chose, e.g. the v1 count of
    people), else `structure.steps`, else its number of target needles."""
    structure = row.item.get("structure") or {}
    if isinstance(structure, Mapping):
        for key in ("score_step", "steps"):
            if key in structure:
                return int(structure[key])
    return sum(1 for n in row.item.get("needles") or [] if n.get("role", "target") == "target")


def atc_task(row: Scored) -> str:
    """An ATC item's task: its question language and prompt variant (else its config)."""
    lang = (row.item.get("languages") or {}).get("question", "?")
    return f"{lang}-{row.item.get('prompt_variant') or row.item.get('config') or 'default'}"


def atc_score(rows: Sequence[Scored]) -> dict[str, Any] | None:
    """ATC step-weighted score per (question language, prompt variant, else config) and their mean.

    A question (a CircularEval group, or a lone item) is correct when all its items score 1.
    P_step = 100 x share of correct questions among those of that step; TaskScore =
    sum(step x P_step) / sum(step) over the steps present. Overall = mean of the task scores.
    """
    atc = [r for r in rows if r.item.get("family") == "atc"]
    if not atc:
        return None
    tasks: dict[str, Any] = {}

    for name, members in sorted(group_by(atc, atc_task).items()):
        questions = group_by(members, _question_key)
        per_step: dict[int, list[float]] = defaultdict(list)
        for group in questions.values():
            per_step[atc_step(group[0])].append(1.0 if all(r.score == 1.0 for r in group) else 0.0)
        p_step = {step: 100 * _mean(v) for step, v in sorted(per_step.items())}
        weight = sum(p_step.keys())
        score = sum(step * p for step, p in p_step.items()) / weight if weight else 0.0
        tasks[name] = {"score": round(score, 4), "p_step": {str(s): round(p, 4) for s, p in p_step.items()}}
    overall = round(_mean([t["score"] for t in tasks.values()]), 4)
    return {"tasks": tasks, "overall": overall}


RULER_THRESHOLD = 85.6
"""RULER's effective-length threshold: Llama-2-7B's average score at 4K, in points."""


def ruler_average(
    rows: Sequence[Scored], threshold: float = RULER_THRESHOLD, core: Collection[str] | None = None
) -> dict[str, Any] | None:
    """RULER's family score: per length, the mean over tasks of each task's mean score (points), and
    the effective length under the prefix rule at `threshold`; None without RULER items.

    Tasks weigh equally whatever their item counts, as in RULER's tables; a length counts only
    where every task was scored (else it is listed under `incomplete_lengths`). With `core` (RULER's
    13 task names), only those tasks enter the average; the others (passkey, RAG-chunk) are listed
    under `extra_tasks` with their own curves. `overall` is the mean of the per-length averages,
    the "Avg." column of RULER's tables.
    """
    ruler = [r for r in rows if r.item.get("family") == "ruler"]
    if not ruler:
        return None
    tasks = group_by(ruler, lambda r: str(r.item.get("task", "")))
    curves = {name: length_curve(members) for name, members in sorted(tasks.items())}
    per_task = {name: c for name, c in curves.items() if core is None or name in core}
    extra = {name: c for name, c in curves.items() if name not in per_task}
    lengths = sorted({length for curve in per_task.values() for length in curve})
    complete = [length for length in lengths if all(length in curve for curve in per_task.values())]
    average = {length: round(_mean([curve[length] for curve in per_task.values()]), 4) for length in complete}
    out: dict[str, Any] = {
        "tasks": {name: {str(k): v for k, v in curve.items()} for name, curve in per_task.items()},
        "average": {str(k): v for k, v in average.items()},
        "overall": round(_mean(list(average.values())), 4) if average else None,
        "incomplete_lengths": [length for length in lengths if length not in complete],
        "effective_length": prefix_rule(average, threshold),
    }
    if core is not None:
        out["extra_tasks"] = {name: {str(k): v for k, v in curve.items()} for name, curve in extra.items()}
        out["missing_tasks"] = sorted(set(core) - set(per_task))
    return out


NEEDLEBENCH_TASKS = ("s-rt", "m-rt", "m-rs")


def needlebench_overall(rows: Sequence[Scored]) -> dict[str, Any] | None:
    """NeedleBench task scores (mean over needle languages of each language's item mean) and the
    overall: v1 = 0.4 S-RT + 0.3 M-RT + 0.3 M-RS, v2 = the plain mean of the three."""
    nb = [r for r in rows if r.item.get("family") == "needlebench"]
    if not nb:
        return None
    task_scores: dict[str, float] = {}
    for task, members in group_by(nb, lambda r: str(r.item.get("task", "")).lower()).items():
        langs = group_by(members, lambda r: (r.item.get("languages") or {}).get("needle", "?"))
        task_scores[task] = round(_mean([100 * _mean([r.score for r in m]) for m in langs.values()]), 4)
    have = all(t in task_scores for t in NEEDLEBENCH_TASKS)
    s, mrt, mrs = (task_scores.get(t, 0.0) for t in NEEDLEBENCH_TASKS)
    return {
        "tasks": dict(sorted(task_scores.items())),
        "overall_v1": round(0.4 * s + 0.3 * mrt + 0.3 * mrs, 4) if have else None,
        "overall_v2": round((s + mrt + mrs) / 3, 4) if have else None,
    }
