"""The filter stage: run each source's filters in order, cache whole runs, keep the audit.

A run is identified by its cache key: sha256 over the filter's name and version, its parameters
(operational ones left out), the inputs it resolved (terms, model id, decision files' sha256)
and the sha256 of the documents it read. A run found in the cache is replayed from its stored
result without loading any model, so a warm compile is offline and byte-identical.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from needlec.errors import NeedlecError, PluginError, Problem, SpecError
from needlec.haystacks.filters.base import (
    FILTERS,
    Activity,
    Document,
    FilterContext,
    FilterError,
    FilterResult,
    Removal,
)
from needlec.haystacks.filters.edits import Edit, apply, plan_edits
from needlec.util.atomic import write_file_atomic
from needlec.util.canonical import dumps, sha256_json
from needlec.util.progress import note

if TYPE_CHECKING:
    from needlec.compile.plan import Plan
    from needlec.haystacks.sources import SourceSpec, SourceText
    from needlec.spec.models import Spec


def documents_sha256(documents: Sequence[Document]) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(hashlib.sha256(doc.id.encode() + b"\0" + doc.text.encode()).digest())
    return digest.hexdigest()


@dataclass
class FilterRun:
    """One filter applied to one source's documents: its identity, result and applied edits."""

    name: str
    version: str
    source: str
    source_index: int
    params: dict[str, Any]
    inputs: dict[str, Any]
    cache_key: str
    input_sha256: str
    output_sha256: str
    result: FilterResult
    edits: list[tuple[str, Edit, str, list[Removal]]]  # (document, edit, removed text, reasons)
    cached: bool

    def audit_records(self) -> list[dict[str, Any]]:
        return [
            {
                "filter": self.name,
                "cache_key": self.cache_key,
                "source": self.source,
                "document": doc,
                "start": edit.start,
                "end": edit.end,
                "removed": removed,
                "replacement": edit.replacement,
                "reasons": [{"rule": r.rule, "sentence": [r.start, r.end], **r.detail} for r in reasons],
            }
            for doc, edit, removed, reasons in self.edits
        ]

    def counts(self) -> dict[str, int]:
        counts = {
            "edits": len(self.edits),
            "characters_removed": sum(e.end - e.start for _, e, _, _ in self.edits),
            "sentences": len({(r.document, r.start) for _, _, _, rs in self.edits for r in rs}),
        }
        counts.update(self.result.counts)
        counts.update({f"excluded_{k}": len(v) for k, v in self.result.exclusions.items()})
        return dict(sorted(counts.items()))

    def manifest_entry(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "source": self.source,
            "params": self.params,
            "cache_key": self.cache_key,
            "input_sha256": self.input_sha256,
            "output_sha256": self.output_sha256,
            "counts": self.counts(),
            "audit_sha256": sha256_json(self.audit_records()),
            "exclusions": self.result.exclusions,
        }


class FilterStage:
    """Runs and remembers filter chains for the sources of a plan's configs."""

    def __init__(
        self, plan: Plan, cache_dir: Path, progress: bool = False, log: Callable[[str], None] | None = None
    ) -> None:
        self.plan = plan
        self.cache_dir = cache_dir
        self.progress = progress
        self.log = log
        self.activity = Activity()
        self.runs: dict[str, FilterRun] = {}
        self._applied: dict[str, list[Any]] = {}
        self._outputs: dict[str, list[Any]] = {}  # run cache key -> edited documents (shared by configs)

    def _emit(self, message: str) -> None:
        """Progress and retry messages: to the given log, else to stderr when progress is on."""
        if self.log is not None:
            self.log(message)
        elif self.progress:
            note(message)

    @staticmethod
    def has_filters(spec: Spec) -> bool:
        sources: list[SourceSpec] = list(spec.haystack.sources)
        return any(s.filters for s in sources)

    def key(self, spec: Spec) -> str:
        """What, besides the haystack section, a filtered haystack depends on (the needle set)."""
        needle: Any = spec.needle
        return needle.model_dump_json() if self.has_filters(spec) else ""

    def apply(self, spec: Spec, sources: Sequence[SourceText]) -> list[SourceText]:
        """The sources with their filters applied (unchanged when a source has none)."""
        out = []
        configs: list[SourceSpec] = list(spec.haystack.sources)
        needle: Any = spec.needle
        for index, (config, source) in enumerate(zip(configs, sources, strict=True)):
            filters: list[Any] = list(config.filters)
            if not filters:
                out.append(source)
                continue
            memo = config.model_dump_json() + source.sha256 + needle.model_dump_json()
            if memo not in self._applied:
                documents: list[Any] = list(source.documents)
                for position, params in enumerate(filters):
                    documents = self._run(spec, index, position, source.name, params, documents)
                self._applied[memo] = documents
            out.append(dataclasses.replace(source, documents=tuple(self._applied[memo])))
        return out

    def _problem(self, exc: Exception, index: int, position: int) -> SpecError:
        path = ("haystack", "sources", index, "filters", position)
        from needlec.spec.loader import dotted

        return SpecError(
            [Problem(str(exc).removeprefix("error: "), self.plan.doc.locate(path), dotted(path))],
            "a haystack filter failed:",
        )

    def _run(self, spec: Spec, index: int, position: int, source: str, params: Any, documents: list[Any]) -> list[Any]:
        name = params.type
        implementation = FILTERS.get(name).factory()
        ctx = FilterContext(
            spec=spec,
            spec_dir=self.plan.spec_dir,
            cache_dir=self.cache_dir,
            source=source,
            activity=self.activity,
            progress=self.progress,
            log=self._emit,
            extended_dirs=tuple(dict.fromkeys(f.parent for f in reversed(self.plan.doc.files[:-1]))),
        )
        input_sha = documents_sha256(documents)
        try:
            inputs = implementation.key_inputs(params, ctx)
        except FilterError:
            raise
        except NeedlecError as exc:
            raise self._problem(exc, index, position) from None
        key = sha256_json(
            {
                "filter": name,
                "version": implementation.version,
                "params": params.key_params(),
                "inputs": inputs,
                "input_sha256": input_sha,
            }
        )
        if key in self._outputs:  # the same run for another config (e.g. same terms, another needle)
            self.activity.cached_runs += 1
            return self._outputs[key]
        path = self.cache_dir / "filters" / "runs" / key[:2] / f"{key}.json"
        result = self._load(path, key)
        cached = result is not None
        if result is None:
            self._emit(f"running {name} on {source}")
            try:
                result = implementation.run(params, documents, ctx)
            except FilterError:
                raise
            except NeedlecError as exc:
                raise self._problem(exc, index, position) from None
            if not isinstance(result, FilterResult):
                raise PluginError(
                    f"{FILTERS.origin(name)} returned {type(result).__name__} from run(); a filter returns a "
                    "needlec.haystacks.filters.base.FilterResult"
                )
            write_file_atomic(path, dumps({"key": key, "filter": name, "result": result.to_json()}))
            self.activity.fresh_runs += 1
        else:
            self.activity.cached_runs += 1
        action, redaction = params.edit_mode()
        edited, edits = self._edit(documents, result, action, redaction, name)
        if key not in self.runs:
            self.runs[key] = FilterRun(
                name,
                implementation.version,
                source,
                index,
                params.key_params(),
                inputs,
                key,
                input_sha,
                documents_sha256(edited),
                result,
                edits,
                cached,
            )
        self._outputs[key] = edited
        return edited

    def _load(self, path: Path, key: str) -> FilterResult | None:
        try:
            data = orjson.loads(path.read_bytes())
            if data.get("key") != key:
                return None
            return FilterResult.from_json(data["result"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            return None

    @staticmethod
    def _edit(
        documents: list[Any], result: FilterResult, action: str, redaction: str, name: str
    ) -> tuple[list[Any], list[tuple[str, Edit, str, list[Removal]]]]:
        by_doc: dict[str, list[Removal]] = {}
        known = {d.id: d for d in documents}
        for removal in result.removals:
            doc = known.get(removal.document)
            if doc is None or not 0 <= removal.start < removal.end <= len(doc.text):
                raise FilterError(f"filter {name} returned a span outside its input: {removal}")
            by_doc.setdefault(removal.document, []).append(removal)
        out, log = [], []
        for doc in documents:
            removals = by_doc.get(doc.id)
            if not removals:
                out.append(doc)
                continue
            edits = plan_edits(doc.text, [(r.start, r.end) for r in removals], action, redaction)
            for edit in edits:
                reasons = sorted(
                    (r for r in removals if edit.start <= r.start and r.end <= edit.end),
                    key=lambda r: (r.start, r.rule),
                )
                log.append((doc.id, edit, doc.text[edit.start : edit.end], reasons))
            out.append(dataclasses.replace(doc, text=apply(doc.text, edits)))
        return out, log

    def manifest(self) -> list[dict[str, Any]]:
        return [run.manifest_entry() for run in self.runs.values()]

    def exclusions(self) -> dict[str, list[str]]:
        """Values other stages must avoid, merged over every run (e.g. pool names in the text)."""
        merged: dict[str, set[str]] = {}
        for run in self.runs.values():
            for kind, values in run.result.exclusions.items():
                merged.setdefault(kind, set()).update(values)
        return {k: sorted(v) for k, v in sorted(merged.items())}

    def review(self) -> list[dict[str, Any]]:
        return [
            {"filter": run.name, "source": run.source, **entry}
            for run in self.runs.values()
            for entry in run.result.review
        ]

    def write_audit(self, root: Path) -> list[str]:
        """Write `audit/filters.jsonl` and `audit/summary.md` under `root`; returns their paths."""
        if not self.runs:
            return []
        from needlec.haystacks.filters.audit import render_summary

        folder = root / "audit"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n"
            for run in self.runs.values()
            for r in run.audit_records()
        ]
        (folder / "filters.jsonl").write_bytes(b"".join(lines))
        (folder / "summary.md").write_text(render_summary(list(self.runs.values())), encoding="utf-8")
        return ["audit/filters.jsonl", "audit/summary.md"]
