"""The compile pipeline: plan -> sources -> haystacks -> indexes -> items -> checks -> export.

Items are computed in chunks that never straddle two data files (in forked worker processes
when `jobs > 1`). Each chunk is written by whoever built it to its own shard file; the parent
appends the shards to their data file in key order and deletes them, so the output is
byte-identical for any number of workers, items never travel through a pipe, and a config is
never held in memory whole.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

from tqdm import tqdm

from needlec.compile.checks import check_budgets, check_item, leak_problem
from needlec.compile.existing import check_replace
from needlec.compile.items import build_item
from needlec.compile.overlap import OverlapStats, both, stemmed_precision
from needlec.compile.plan import ConfigPlan, ItemKey, Plan, load_plan
from needlec.compile.ranking import prepare_rankings, ranking_warnings
from needlec.compile.select import check_not_empty, resolve_select
from needlec.compile.size import Size, check_size, haystack_ids, plan_size
from needlec.compile.warnings import Repetition, repetitions
from needlec.errors import ContractError, NeedlecError, Problem, SourceError, SpecError
from needlec.exporters.hf import render_card
from needlec.exporters.manifest import MANIFEST, build_manifest, file_entry
from needlec.haystacks.builders import haystack_builder
from needlec.haystacks.filters.stage import FilterStage, documents_sha256
from needlec.haystacks.index import Haystack, HaystackIndex, boundary_positions, repeat_to
from needlec.haystacks.sources import SOURCES, SourceContext, SourceDocument, SourceLoader, SourceText
from needlec.kinds.base import NeedleKind, needle_kind
from needlec.placement.engine import Counter
from needlec.placement.view import HaystackView
from needlec.spec.loader import dotted
from needlec.spec.models import Spec
from needlec.spec.reports import ReportsSpec
from needlec.tokenizer import Tokenizer, load_tokenizer
from needlec.util import canonical
from needlec.util.atomic import atomic_directory, check_target, inside
from needlec.util.canonical import sha256_json
from needlec.util.sums import every_file, write_sums


def default_cache_dir() -> Path:
    base = os.environ.get("NEEDLEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "needlec"
    )
    return Path(base)


@dataclass
class CompileOptions:
    """How to run a compile; none of these change the bytes of any item."""

    jobs: int = 1
    select: dict[str, set[str]] = field(default_factory=dict)
    dry_run: bool = False
    progress: bool = True
    verify: bool = False
    cache_dir: Path | None = None
    max_items: int | None = None  # None: no ceiling but the free disk space
    max_bytes: int | None = None
    announce: Callable[[Size], None] | None = None  # told the size once it is checked, before any work
    strict: bool = False  # warnings (e.g. a repeated haystack) become errors
    tokenizers: list[Any] = field(default_factory=list)  # tokenizer configs replacing the spec's (--tokenizer)
    force: bool = False  # replace a dataset of another spec, or one with items this compile leaves out


@dataclass
class CompileResult:
    out_dir: Path | None
    items: int
    tokens: int
    estimated_bytes: int
    manifest: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)  # e.g. a spec licence the corpora do not allow


class Prepared:
    """Everything item building needs, computed once in the parent (and shared with workers).

    Work is shared across the configs of one compile by what it depends on, never by config:
    sources by their settings (filters left out: they run afterwards), filter runs by their cache
    key (`FilterStage`), haystacks by a canonical hash of the builder settings, joiner, seed and
    the sha256 of the filtered documents, and indexes by haystack sha256, tokenizer and length.
    Each cache lives as long as this object (one compile) and holds one entry per distinct
    content, so configs that differ only in their needles or prompts reuse one set of haystacks
    and token indexes, and the bytes of every item are those of a compile of its config alone.
    """

    def __init__(self, plan: Plan, cache_dir: Path) -> None:
        self.plan = plan
        self.context = SourceContext(spec_dir=plan.spec_dir, cache_dir=cache_dir)
        self.filters = FilterStage(plan, cache_dir)
        self._sources: dict[str, SourceText] = {}
        self._haystacks: dict[str, list[Haystack]] = {}
        self._built: dict[str, list[Haystack]] = {}  # canonical content hash -> haystacks
        self._starts: dict[str, list[int]] = {}  # haystack sha256 -> sentence starts of its text
        self._kinds: dict[str, NeedleKind] = {}
        self.kind_reports: dict[str, dict[str, object]] = {}
        self.ranking_reports: dict[str, dict[str, Any]] = {}  # config -> `haystack.builder.rank` record
        self._views: dict[tuple[str, str, int, str], HaystackView] = {}
        self.tokenizers: dict[str, Tokenizer] = {}

    def sources(self, spec: Spec) -> list[SourceText]:
        out = []
        configs: list[Any] = list(spec.haystack.sources)  # each one of the registered source models
        for i, config in enumerate(configs):
            key = source_key(config)
            if key not in self._sources:
                try:
                    loader: SourceLoader = SOURCES.get(config.type).factory
                    self._sources[key] = loader(config, self.context)
                except SourceError as exc:
                    path = ("haystack", "sources", i)
                    raise SpecError(
                        [Problem(str(exc), self.plan.doc.locate(path), dotted(path))], "a haystack source failed:"
                    ) from None
            out.append(self._sources[key])
        return out

    def documents(self, spec: Spec) -> list[SourceDocument]:
        """Every source's documents after that source's filters (cached per filter run)."""
        return [d for s in self.filters.apply(spec, self.sources(spec)) for d in s.documents]

    def haystacks(self, spec: Spec) -> list[Haystack]:
        key = spec.haystack.model_dump_json() + f"|{spec.seed}" + self.filters.key(spec)
        if key not in self._haystacks:
            documents = self.documents(spec)
            if not any(d.text.strip() for d in documents):
                at = ("haystack", "sources")
                problem = Problem("the haystack sources produced no text", self.plan.doc.locate(at), dotted(at))
                raise SpecError([problem], "the haystack is empty:")
            content = haystack_key(spec, documents)
            if content not in self._built:
                builder = haystack_builder(spec.haystack.builder)
                self._built[content] = builder.build(documents, spec.haystack.joiner, spec.seed, self.plan.spec_dir)
            self._haystacks[key] = self._built[content]
        return self._haystacks[key]

    def kind(self, config: ConfigPlan) -> NeedleKind:
        """The config's needle kind, bound to its haystacks (e.g. names found in them removed)."""
        if config.name not in self._kinds:
            kind = needle_kind(config.spec.needle)
            self.kind_reports[config.name] = kind.bind_haystacks([h.text for h in self.haystacks(config.spec)])
            self._kinds[config.name] = kind
        return self._kinds[config.name]

    def tokenizer(self, spec: Spec, label: str) -> Tokenizer:
        if label not in self.tokenizers:
            i, config = next((i, t) for i, t in enumerate(spec.tokenizers) if t.label == label)
            try:
                self.tokenizers[label] = load_tokenizer(config, self.plan.spec_dir)
            except NeedlecError as exc:  # named at the spec's key, as every error from a spec value is
                at = ("tokenizers", i)
                problem = Problem(str(exc), self.plan.doc.locate(at), dotted(at))
                raise SpecError([problem], "a tokenizer could not be loaded:") from None
        return self.tokenizers[label]

    def view(self, spec: Spec, haystack: Haystack, label: str, max_length: int) -> HaystackView:
        key = (haystack.sha256, label, max_length, spec.haystack.start + spec.haystack.joiner)
        if key not in self._views:
            random_start = spec.haystack.start == "random"
            starts = [0]
            if random_start:  # the same for every tokenizer and length: found once per haystack text
                text = haystack.text
                if haystack.sha256 not in self._starts:
                    self._starts[haystack.sha256] = [p for p in boundary_positions(text, "sentence") if p < len(text)]
                starts = self._starts[haystack.sha256]
            self._views[key] = _index(
                haystack, self.tokenizer(spec, label), max_length, random_start, spec.haystack.joiner, starts
            )
        return self._views[key]


def config_reports(spec: Spec, kind: NeedleKind) -> dict[str, Any] | None:
    """The `reports:` settings a config's manifest records: the spec's own, else the needle kind's
    family default (e.g. NoLiMa's headline rule), checked like a spec's; None when neither has any."""
    if spec.reports is not None:
        return spec.reports.model_dump(mode="json")
    default = kind.default_reports()
    return None if default is None else ReportsSpec.model_validate(default).model_dump(mode="json")


def source_key(config: Any) -> str:
    """What a source's documents depend on: its settings without `filters` (run on them later)."""
    return str(config.model_dump_json(exclude={"filters"}))


def haystack_key(spec: Spec, documents: list[SourceDocument]) -> str:
    """Canonical hash of everything a builder's haystacks depend on (builders are pure functions
    of their settings, the filtered documents, the joiner and the seed)."""
    builder: Any = spec.haystack.builder
    return sha256_json(
        {
            "builder": builder.model_dump(mode="json"),
            "joiner": spec.haystack.joiner,
            "seed": spec.seed,
            "documents": documents_sha256(documents),
        }
    )


def _index(
    haystack: Haystack, tokenizer: Tokenizer, max_length: int, random_start: bool, joiner: str, starts: list[int]
) -> HaystackView:
    """Index just enough (repeated) haystack text for the longest item, plus margins."""
    base = haystack.text
    needed = int(max_length * 1.05) + 4096
    sample = base[:200_000]
    chars_per_token = len(sample) / max(1, tokenizer.count(sample))
    extra = len(base) if random_start else 0
    chars = int(needed * chars_per_token * 1.3) + extra + 10_000
    while True:
        text, copies = repeat_to(base, joiner, chars)
        index = HaystackIndex(haystack, text[:chars], copies, tokenizer)
        first_token = index.token_at(max(starts))
        if index.n_tokens >= first_token + needed:
            return HaystackView(index=index, counter=Counter(index), starts=starts, base_chars=len(base))
        chars *= 2


def _units(
    plan: Plan, prepared: Prepared | None, select: dict[str, set[str]]
) -> list[tuple[ConfigPlan, list[ItemKey]]]:
    _check_select(plan, select)
    out = []
    for config in plan.configs:
        if "config" in select and config.name not in select["config"]:
            continue
        ids = [h.id for h in prepared.haystacks(config.spec)] if prepared else haystack_ids(config.spec)
        keys = [k for k in plan.keys(config, ids) if k.selected(select)]
        if keys:
            out.append((config, keys))
    return out


def _check_select(plan: Plan, select: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every `--select` key and value checked against the grid (compile/select.py), canonically spelled."""
    return resolve_select(plan, select)


@dataclass
class ChunkResult:
    """What a chunk of items produced: its shard file and what the checks need to know.

    The JSONL lines themselves stay on disk: a worker writes its chunk to its own shard file and
    only this summary travels back to the parent.
    """

    shard: Path
    count: int
    tokens: int
    problems: list[str]
    overlap: list[tuple[str, str, dict[str, float]]]  # (config, "needle" | "context", scores)


Work = tuple[ConfigPlan, ItemKey, HaystackView, NeedleKind, bool]
Chunk = tuple[int, int]  # [start, end) into the work list, all of one (config, tokenizer) file

# Worker state: set in the parent before the pool forks, read by `_run_chunk` in the children.
_STATE: dict[str, Any] = {}
SHARDS = ".shards"


def _run_chunk(chunk: Chunk) -> ChunkResult:
    plan: Plan = _STATE["plan"]
    work: list[Work] = _STATE["work"]
    verify: bool = _STATE["verify"]
    result = ChunkResult(_STATE["shards"] / f"{chunk[0]:010d}.jsonl", chunk[1] - chunk[0], 0, [], [])
    with result.shard.open("wb") as shard:
        for config, key, view, kind, sample_context in work[chunk[0] : chunk[1]]:
            item, leaks = build_item(plan.spec.name, config, key, view, kind)
            result.problems.extend(check_item(item, config.spec, view.index.tokenizer, verify))
            result.problems.extend(leak_problem(item.id, leaks))
            # items carry the unstemmed figures; the stemmed ones go to the manifest's statistics
            evidence = " ".join(n.text for n in item.targets())
            needle_scores = {**item.overlap, **stemmed_precision(item.question, evidence)}
            result.overlap.append((config.name, "needle", needle_scores))
            result.problems.extend(check_budgets(item.id, config.spec, "needle", needle_scores))
            if sample_context:
                scores = both(item.question, item.context())
                result.overlap.append((config.name, "context", scores))
                result.problems.extend(check_budgets(item.id, config.spec, "context", scores))
            result.tokens += item.context_tokens
            shard.write(canonical.line(item.row()))
    return result


def _worker_signals() -> None:
    """Workers die quietly when the pool ends them; only the parent turns SIGTERM into cleanup."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _slot(work: Work) -> tuple[str, str]:
    return work[0].name, work[1].tokenizer


def _chunks(work: list[Work], jobs: int) -> list[Chunk]:
    """Consecutive runs of at most `size` items that never straddle two output files."""
    size = max(1, min(32, len(work) // max(1, jobs * 8)))
    chunks = []
    start = 0
    while start < len(work):
        slot = _slot(work[start])
        end = start + 1
        while end < len(work) and end - start < size and _slot(work[end]) == slot:
            end += 1
        chunks.append((start, end))
        start = end
    return chunks


def _execute(plan: Plan, work: list[Work], jobs: int, verify: bool, shards: Path) -> Iterator[ChunkResult]:
    """Run every chunk (forked workers when `jobs > 1`); results come back in work order."""
    shards.mkdir(parents=True, exist_ok=True)
    _STATE.update(plan=plan, work=work, verify=verify, shards=shards)
    chunks = _chunks(work, jobs)
    try:
        if jobs <= 1 or len(chunks) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            for chunk in chunks:
                yield _run_chunk(chunk)
            return
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_signals) as pool:
            yield from pool.imap(_run_chunk, chunks)
    finally:
        _STATE.clear()


def compile_spec(
    spec_path: str | Path, out_dir: str | Path | None, options: CompileOptions | None = None
) -> CompileResult:
    """Compile a spec into `out_dir` (atomically), or only size it up with `dry_run`."""
    options = options or CompileOptions()
    cache_dir = options.cache_dir or default_cache_dir()
    plan = load_plan(spec_path, cache_dir, options.tokenizers or None)
    options = replace(options, select=_check_select(plan, options.select))
    size = plan_size(plan, options.select)
    check_not_empty(size.items)
    if options.dry_run:
        return CompileResult(None, size.items, size.tokens, size.bytes, None)
    if out_dir is None:
        raise NeedlecError("an output directory is required (-o DIR)")
    target = check_target(Path(out_dir), guard=(Path(spec_path),))  # refuse a bad -o before any work
    check_size(size, options.max_items, options.max_bytes, target)
    check_replace(target, plan, options.select, options.force)  # nothing lost without --force
    if options.announce is not None:
        options.announce(size)
    prepared = Prepared(plan, cache_dir)
    prepared.filters.progress = options.progress
    units = _units(plan, prepared, options.select)
    work = prepare_work(prepared, units)
    repeated = repetitions(work)
    warnings = [r.message() for r in repeated]
    for config, _ in units:
        if config.name in prepared.ranking_reports:
            warnings += ranking_warnings(config, prepared.ranking_reports[config.name])
    if warnings and options.strict:
        raise NeedlecError("--strict: the compile has warnings:\n  " + "\n  ".join(warnings))
    out = Path(out_dir)
    files: dict[tuple[str, str], list[Any]] = {}
    problems: list[str] = []
    tally: dict[tuple[str, str], OverlapStats] = {}
    total_tokens = 0
    with atomic_directory(out, guard=(Path(spec_path),)) as tmp:
        bar = tqdm(
            total=len(work),
            unit="item",
            desc=f"compile {plan.spec.name}",
            file=sys.stderr,
            disable=not options.progress,
            dynamic_ncols=True,
        )
        handles: dict[tuple[str, str], BinaryIO] = {}
        position = 0
        try:
            # shards arrive in work order; appending each to its file keeps key order for any --jobs
            for chunk in _execute(plan, work, options.jobs, options.verify, tmp / SHARDS):
                slot = _slot(work[position])
                position += chunk.count
                if slot not in handles:
                    relative = f"data/{slot[0]}/{slot[1]}.jsonl"
                    path = inside(tmp, relative)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    handles[slot] = path.open("wb")
                    files[slot] = [relative, 0]
                with chunk.shard.open("rb") as shard:
                    shutil.copyfileobj(shard, handles[slot], 1 << 20)
                chunk.shard.unlink()
                files[slot][1] += chunk.count
                total_tokens += chunk.tokens
                problems.extend(chunk.problems)
                for name, against, scores in chunk.overlap:
                    tally.setdefault((name, against), OverlapStats()).add(scores)
                bar.update(chunk.count)
        finally:
            for handle in handles.values():
                handle.close()
            bar.close()
            shutil.rmtree(tmp / SHARDS, ignore_errors=True)
        if problems:
            shown = "\n".join(f"  {p}" for p in problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise ContractError(f"{len(problems)} item(s) break the spec's contracts:\n{shown}{more}")
        manifest = _manifest(plan, prepared, units, files, tmp, tally, repeated)
        prepared.filters.write_audit(tmp)
        (tmp / MANIFEST).write_bytes(canonical.dumps(manifest, indent=True) + b"\n")
        (tmp / "README.md").write_text(render_card(plan, manifest), encoding="utf-8")
        write_sums(tmp, every_file(tmp))  # covers the card and audit too, so `verify` notices any edit
    from needlec.haystacks.sources.corpora import licence_warnings

    warnings += licence_warnings(plan.spec.license, manifest["sources"])
    return CompileResult(out.resolve(), len(work), total_tokens, size.bytes, manifest, warnings)


def build_one(plan: Plan, config: ConfigPlan, key: ItemKey, cache_dir: Path | None = None) -> dict[str, Any]:
    """Build a single item in memory (for `inspect` and documentation), without writing anything.

    Returns the item's JSON row (as written to the data files).
    """
    prepared = Prepared(plan, cache_dir or default_cache_dir())
    haystack = next(h for h in prepared.haystacks(config.spec) if h.id == key.haystack)
    view = prepared.view(config.spec, haystack, key.tokenizer, key.length)
    prepare_rankings(
        config, [key], {(key.haystack, key.tokenizer): view}, prepared.kind(config), prepared.context.cache_dir
    )
    item, _ = build_item(plan.spec.name, config, key, view, prepared.kind(config))
    return item.row()


def _overlap_report(tally: dict[tuple[str, str], OverlapStats], config: ConfigPlan) -> dict[str, Any]:
    out: dict[str, Any] = {
        against: tally[(config.name, against)].as_dict()
        for against in ("needle", "context")
        if (config.name, against) in tally
    }
    if "context" in out:
        out["context"]["length"] = min(config.spec.grid.length_points())
    return out


def prepare_work(prepared: Prepared, units: list[tuple[ConfigPlan, list[ItemKey]]]) -> list[Work]:
    """Pair every item key with its haystack view and needle kind (indexes built here, once)."""
    work: list[Work] = []
    for config, keys in units:
        haystacks = {h.id: h for h in prepared.haystacks(config.spec)}
        kind = prepared.kind(config)
        longest: dict[tuple[str, str], int] = {}
        for key in keys:
            slot = (key.haystack, key.tokenizer)
            longest[slot] = max(longest.get(slot, 0), key.length)
        views = {slot: prepared.view(config.spec, haystacks[slot[0]], slot[1], n) for slot, n in longest.items()}
        ranked = prepare_rankings(config, keys, views, kind, prepared.context.cache_dir)
        if ranked is not None:  # ranked before the workers fork, so they only look rankings up
            prepared.ranking_reports[config.name] = ranked
        # context overlap is measured on a sample: smallest length, first depth, first repeat
        sample = (min(config.spec.grid.length_points()), config.depth_points()[0], 0)
        work.extend(
            (config, key, views[(key.haystack, key.tokenizer)], kind, (key.length, key.depth, key.repeat) == sample)
            for key in keys
        )
    return work


def _manifest(
    plan: Plan,
    prepared: Prepared,
    units: list[tuple[ConfigPlan, list[ItemKey]]],
    files: dict[tuple[str, str], list[Any]],
    root: Path,
    tally: dict[tuple[str, str], OverlapStats],
    repeated: list[Repetition],
) -> dict[str, Any]:
    configs: dict[str, dict[str, Any]] = {}
    sources: dict[str, dict[str, Any]] = {}
    for config, _ in units:
        for source in prepared.sources(config.spec):
            sources[source.sha256 + source.name] = source.describe()
        entries = [
            file_entry(root, rel, label, rows) for (name, label), (rel, rows) in files.items() if name == config.name
        ]
        configs[config.name] = {
            "variant": dict(config.axes),
            "files": entries,
            "haystacks": [
                {"id": h.id, "sha256": h.sha256, "characters": len(h.text)} for h in prepared.haystacks(config.spec)
            ],
            "overlap": _overlap_report(tally, config),
        }
        wanted = config_reports(config.spec, prepared.kind(config))
        if wanted is not None:
            configs[config.name]["reports"] = wanted
        report = prepared.kind_reports.get(config.name)
        if report:
            configs[config.name]["needle_kind"] = report
        if config.name in prepared.ranking_reports:
            configs[config.name]["ranking"] = prepared.ranking_reports[config.name]
        records = [r.record() for r in repeated if r.config == config.name]
        if records:  # only when a haystack is repeated, so other manifests keep their bytes
            configs[config.name]["repetition"] = records
    return build_manifest(
        spec_name=plan.spec.name,
        spec_file=plan.path.name,
        spec_sha256=plan.spec_sha256,
        sources=[sources[k] for k in sorted(sources)],
        tokenizers=[prepared.tokenizers[k].describe() for k in sorted(prepared.tokenizers)],
        filters=prepared.filters.manifest(),
        configs=configs,
    )
