"""`score()`: a compiled dataset plus responses in, per-item scores and a summary out."""

from __future__ import annotations

import itertools
import numbers
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from needlec.dataset.manifest import MANIFEST, read_manifest
from needlec.errors import NeedlecError, PluginError
from needlec.registry import METRICS
from needlec.scoring import metrics as _metrics  # noqa: F401  (registers the built-in metrics)
from needlec.scoring.aggregates import Scored
from needlec.scoring.dataset import select_items
from needlec.scoring.families.base import Table
from needlec.scoring.responses import Response, read_responses
from needlec.scoring.summary import build_summary, family_reports
from needlec.spec.reports import ReportsSpec

SHOW = 5


@dataclass
class ScoreResult:
    """Per-item scores (in dataset order), the summary, the response bookkeeping, and the family
    reports' headline tables (by family name, e.g. `tables["ruler"]`)."""

    rows: list[Scored]
    summary: dict[str, Any]
    missing: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    tables: dict[str, Table] = field(default_factory=dict)


class _Judge:
    """Validated metric configs, cached by their JSON form (items of a config share one)."""

    def __init__(self) -> None:
        self._cache: dict[bytes, tuple[Any, Any, str]] = {}

    def __call__(self, item: dict[str, Any], response: str) -> tuple[float, dict[str, Any]]:
        spec = item.get("scoring") or {"metric": "contains"}
        key = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
        if key not in self._cache:
            name = str(spec.get("metric"))
            if name not in METRICS:
                raise NeedlecError(
                    f"item {item.get('id')}: {METRICS.unknown_message(name)} (the dataset names a metric that no "
                    "installed plugin registers, or plugins are off: NEEDLEC_PLUGINS)"
                )
            component = METRICS.get(name)
            args = {k: v for k, v in spec.items() if k != "version"}
            config = component.config.model_validate(args)
            wanted = spec.get("version")
            have = getattr(config, "version", 1)  # a metric without a version is version 1, as items record
            if wanted is not None and wanted != have:
                raise NeedlecError(
                    f"item {item.get('id')}: compiled for {name} version {wanted}, but this needlec "
                    f"implements version {have}; use the needlec release the dataset was compiled with"
                )
            self._cache[key] = (component.factory, config, name)
        factory, config, name = self._cache[key]
        got = factory(config, response, item)
        if (
            not isinstance(got, tuple)
            or len(got) != 2
            or not isinstance(got[0], numbers.Real)
            or not isinstance(got[1], dict)
        ):
            raise PluginError(
                f"{METRICS.origin(name)} returned {got!r:.100} for item {item.get('id')}; a metric returns "
                "(score, details): a number and a dict"
            )
        return float(got[0]), got[1]


def score_response(item: dict[str, Any] | Any, response: str) -> tuple[float, dict[str, Any]]:
    """Score one response to one item (a dataset line as a dict, schema 2 or older, or an `Item` as
    `load_items` gives it) with the metric the item names.

    This is what runner integrations call (the exported Inspect scorer and lm-eval
    `process_results`), so every runner judges exactly as `needlec score` does.
    """
    from needlec.scoring.dataset import to_contract

    if hasattr(item, "model_dump"):  # a typed Item: its dataset line
        item = item.model_dump(mode="json")
    if not isinstance(item, dict) or "answers" not in item:
        raise NeedlecError("score_response needs an item: a dataset line (dict) or an Item from load_items")
    if not isinstance(response, str):
        raise NeedlecError(f"score_response needs the response as text, not {type(response).__name__}")
    return _Judge()(to_contract(item), response)


def dataset_reports(dataset: str | Path) -> dict[str, dict[str, Any]]:
    """The `reports:` settings per config that a dataset folder's manifest records (empty for a file)."""
    folder = Path(dataset)
    if not (folder / MANIFEST).is_file():
        return {}
    configs = read_manifest(folder).get("configs") or {}
    return {name: entry["reports"] for name, entry in configs.items() if isinstance(entry.get("reports"), dict)}


def _first(ids: Iterable[str]) -> str:
    ids = list(ids)
    head = ", ".join(ids[:SHOW])
    return head + (f" (and {len(ids) - SHOW} more)" if len(ids) > SHOW else "")


def _as_response(given: object, number: int) -> Response:
    """A `Response`, or a dict as a responses file's line has it (`{"id": ..., "response": ...}`)."""
    if isinstance(given, Response):
        return given
    origin = f"response {number}"
    if isinstance(given, Mapping) and "id" in given and "response" in given:
        text = given["response"]
        if text is None:
            return Response(str(given["id"]), "", origin, error="the response is null")
        if isinstance(text, str):
            return Response(str(given["id"]), text, origin)
    raise NeedlecError(
        f"{origin}: expected a Response or a dict {{'id': ..., 'response': text or None}}; got {given!r:.80}"
    )


def score(
    dataset: str | Path,
    responses: str | Path | Sequence[str | Path] | Iterable[Response | Mapping[str, Any]],
    *,
    allow_missing: bool = False,
    allow_unknown: bool = False,
    tokenizer: str | None = None,
    config: Sequence[str] = (),
    reports: Mapping[str, ReportsSpec | Mapping[str, Any]] | None = None,
) -> ScoreResult:
    """Score `responses` against the items of `dataset`.

    `responses` is a responses file (any format `needlec score` reads), a list of them, or the responses
    themselves: `Response`s or dicts as a JSONL line has them, `{"id": ..., "response": text}` (None for an
    item the runner got no answer to).

    Several responses for one id are averaged. An item without a response is an error unless
    `allow_missing` (then it is left out and counted); a response whose id is not in the dataset
    is an error unless `allow_unknown`. `tokenizer` and `config` restrict which items are expected.
    `reports` maps config names to their `reports:` settings (what the summary shows, the headline
    effective-length rule, the baseline); by default they are read from the dataset's manifest,
    which records the spec's `reports:` per config.
    """
    items = select_items(dataset, tokenizer, config)
    by_id: dict[str, list[str]] = defaultdict(list)
    source: Iterable[Response]
    # (a generator is read once: the check below must not use up its first)
    given: list[Any] = [responses] if isinstance(responses, (str, Path)) else list(responses)
    if all(isinstance(r, (str, Path)) for r in given):
        seen: dict[Path, str | Path] = {}
        for path in given:  # several responses to an item are averaged: one file given twice would count double
            resolved = Path(path).resolve()
            if resolved in seen:
                raise NeedlecError(
                    f"the responses {path} are given twice (also as {seen[resolved]}); give each file once"
                )
            seen[resolved] = path
        source = (resp for path in given for resp in read_responses(path))
    else:
        source = map(_as_response, given, itertools.count(1))
    failed: dict[str, Response] = {}
    origins: dict[str, str] = {}  # where each id's first response came from (file:line)
    for resp in source:
        origins.setdefault(resp.id, resp.origin)
        if resp.error is not None:
            failed.setdefault(resp.id, resp)
        else:
            by_id[resp.id].append(resp.text)
    known = {it["id"] for it in items}
    unknown = [i for i in dict.fromkeys((*by_id, *failed)) if i not in known]
    missing = [it["id"] for it in items if it["id"] not in by_id]
    if unknown and not allow_unknown:
        shown = _first(f"{origins[i]}: {i!r}" for i in unknown)
        chosen = " (of the --tokenizer/--config chosen)" if tokenizer is not None or config else ""
        raise NeedlecError(f"{len(unknown)} response id(s) are not items of {dataset}{chosen}: {shown}")
    if not any(i in known for i in by_id):
        raise NeedlecError(
            f"no response to score: none of the {len(items)} item(s) of {dataset} has one"
            + (f" ({len(failed)} failed in the runner)" if failed else "")
        )
    if missing and not allow_missing:
        errored = [failed[i] for i in missing if i in failed]
        why = ""
        if errored:
            why = (
                f" ({len(errored)} of them failed in the runner, which recorded no answer; "
                f"first: {errored[0].origin}: {errored[0].error})"
            )
        raise NeedlecError(
            f"{len(missing)} item(s) have no response{why}: {_first(missing)}; "
            "pass --allow-missing to score a partial run (or --tokenizer/--config to pick the items you ran)"
        )
    judge = _Judge()
    rows: list[Scored] = []
    for item in items:
        texts = by_id.get(item["id"])
        if not texts:
            continue
        results = [judge(item, text) for text in texts]
        mean = sum(s for s, _ in results) / len(results)
        details = results[0][1] if len(results) == 1 else {"samples": [d for _, d in results]}
        rows.append(Scored(item, mean, details))
    repeated = sorted(i for i, t in by_id.items() if len(t) > 1 and i in known)
    wanted = dataset_reports(dataset) if reports is None else reports
    try:
        settings = {name: ReportsSpec.model_validate(value) for name, value in wanted.items()}
    except ValidationError as exc:
        raise NeedlecError(f"{dataset}: invalid `reports` settings: {exc}") from None
    families = family_reports(rows, settings)
    summary = build_summary(
        rows, missing=missing, unknown=unknown, repeated=repeated, reports=settings, families=families
    )
    tables = {name: result.table for name, result in families.items()}
    return ScoreResult(rows, summary, missing, unknown, repeated, tables)
