"""`validate --deep`: the checks that need the haystack sources loaded, each placed at its key.

The schema and `load_plan` see only the spec. Some problems show only once the sources are read:
a `snippets` builder whose `min_document_tokens` no document reaches, or a name pool that is too
small once the names found in the haystacks are removed. Reading the sources (and running the
haystack filters, whose results are cached) costs what the start of a compile costs, so these
checks run on request rather than in every `validate`.
"""

from __future__ import annotations

from pathlib import Path

from needlec.compile.pipeline import Prepared, default_cache_dir
from needlec.compile.plan import ConfigPlan, ItemKey, Plan, kind_problems
from needlec.compile.warnings import repetition_warnings
from needlec.errors import NeedlecError, Problem, SpecError
from needlec.haystacks.builders import SnippetBuilder
from needlec.kinds.base import needle_kind
from needlec.placement.view import HaystackView
from needlec.spec.loader import Document, KeyPath, dotted, merge_documents


def deep_problems(plan: Plan, cache_dir: Path | None = None, prepared: Prepared | None = None) -> list[Problem]:
    """Every problem of every config that needs the sources: builder feasibility, the bound name pool."""
    if prepared is None:
        prepared = Prepared(plan, cache_dir or default_cache_dir())
        prepared.filters.progress = False
    found_in: dict[tuple[str, str, str], tuple[Problem, list[str]]] = {}
    for config in plan.configs:
        doc = _config_document(plan.doc, config)
        found = _builder_problems(prepared, config, doc)
        if not found:
            try:
                texts = [h.text for h in prepared.haystacks(config.spec)]
            except SpecError as exc:
                found = list(exc.problems)
            except NeedlecError as exc:
                key: KeyPath = ("haystack",)
                found = [Problem(str(exc), doc.locate(key, prefer_key=True), dotted(key))]
            else:
                kind = needle_kind(config.spec.needle)
                kind.bind_haystacks(texts)
                found = kind_problems(kind, doc)
        for p in found:
            found_in.setdefault((str(p.location), p.key_path, p.message), (p, []))[1].append(config.name)
    problems = []
    for p, names in found_in.values():
        if 1 < len(plan.configs) != len(names):
            # say which configs when the problem is not everyone's
            p = Problem(f"config {', '.join(names)}: {p.message}", p.location, p.key_path, p.hint)
        problems.append(p)
    return problems


def deep_check(plan: Plan, cache_dir: Path | None = None) -> list[str]:
    """Raise a SpecError listing every problem `deep_problems` finds; else the warnings a compile of the whole
    grid would print about its haystacks (`deep_warnings`)."""
    prepared = Prepared(plan, cache_dir or default_cache_dir())
    prepared.filters.progress = False
    problems = deep_problems(plan, cache_dir, prepared)
    if problems:
        raise SpecError(problems)
    return deep_warnings(plan, prepared)


def deep_warnings(plan: Plan, prepared: Prepared) -> list[str]:
    """The haystack warnings of a compile of the whole grid: each haystack repeated to reach a length, per config
    and tokenizer (`repetitions`). The haystacks are indexed for each tokenizer up to the longest length, as a
    compile's start indexes them."""
    work: list[tuple[ConfigPlan, ItemKey, HaystackView]] = []
    for config in plan.configs:
        spec = config.spec
        if getattr(spec.haystack.builder, "rank", None) is not None:
            continue  # ranked contexts are picked passages, never a repeated window
        lengths = spec.grid.length_points()
        for haystack in prepared.haystacks(spec):
            for tokenizer in spec.tokenizers:
                view = prepared.view(spec, haystack, tokenizer.label, max(lengths))
                work += (
                    (config, ItemKey(config.name, tokenizer.label, n, 0.0, "", haystack.id, 0, config.redraw), view)
                    for n in lengths
                )
    return repetition_warnings(work)


def _config_document(doc: Document, config: ConfigPlan) -> Document:
    """The spec document as this config sees it (its variant overrides merged), for locating keys."""
    merged = doc
    for axis, value in config.axes:
        merged = merge_documents(merged, doc, ("variants", axis, value))
    return merged


def _builder_problems(prepared: Prepared, config: ConfigPlan, doc: Document) -> list[Problem]:
    """A `snippets` builder that no document is long enough for (the compile would stop there)."""
    builder = config.spec.haystack.builder
    if not isinstance(builder, SnippetBuilder) or builder.min_document_tokens <= 0:
        return []
    try:
        documents = prepared.documents(config.spec)
    except NeedlecError:
        return []  # the source problem itself is reported when the haystacks are built
    # the builder's own measure: characters / 4, documents with text only
    longest = max((len(d.text) // 4 for d in documents if d.text.strip()), default=0)
    if longest >= builder.min_document_tokens:
        return []
    key: KeyPath = ("haystack", "builder", "min_document_tokens")
    return [
        Problem(
            f"no document has at least {builder.min_document_tokens:,} tokens (the longest of "
            f"{len(documents)} has about {longest:,}), so the snippets builder has nothing to cut from",
            doc.locate(key, prefer_key=True),
            dotted(key),
            "Lower `min_document_tokens` or add longer documents.",
        )
    ]
