"""The compile pipeline: plan -> sources -> haystacks -> indexes -> items -> checks -> export.

Items are built in blocks that never straddle two cells (config x tokenizer x length; see
`compile/shards.py`), in forked worker processes when `jobs > 1`. Whoever builds a block writes
it to its own shard file in a store beside the output and sends back only a summary; the parent
appends the shards to their data files in key order once all are built, so the output is
byte-identical for any number of workers and any `--shard I/N` split, items never travel through
a pipe, and a config is never held in memory whole. The store outlives a failed, killed or
interrupted compile, so the next run builds only what is missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

from needlec.compile.checks import check_budgets, check_item, leak_problem
from needlec.compile.existing import check_replace
from needlec.compile.items import build_drawn, build_item, draw_item
from needlec.compile.overlap import OverlapStats, both, stemmed_precision
from needlec.compile.plan import ConfigPlan, ItemKey, Plan, load_plan
from needlec.compile.progress import Progress
from needlec.compile.ranking import prepare_rankings, ranking_warnings
from needlec.compile.select import check_not_empty, resolve_select
from needlec.compile.shards import (
    SLICE_FILE,
    SLICE_SHARDS,
    STORE_MARK,
    Block,
    ShardStore,
    Summary,
    code_version,
    in_shard,
    is_slice,
    plan_blocks,
    read_slice,
    store_dir,
)
from needlec.compile.size import Size, check_size, haystack_ids, human_bytes, plan_size
from needlec.compile.warnings import Repetition, repetitions, unstated_answers
from needlec.errors import (
    ContractError,
    NeedlecError,
    OutputError,
    PluginError,
    PluginFault,
    Problem,
    SourceError,
    SpecError,
)
from needlec.exporters.hf import render_card
from needlec.exporters.manifest import MANIFEST, build_manifest, file_entry
from needlec.haystacks.builders import haystack_builder
from needlec.haystacks.filters.stage import FilterStage, documents_sha256
from needlec.haystacks.index import Haystack, HaystackIndex, boundary_positions, repeat_to
from needlec.haystacks.sources import SOURCES, SourceContext, SourceDocument, SourceLoader, SourceText
from needlec.kinds.base import NeedleKind, needle_kind
from needlec.placement.engine import Counter
from needlec.placement.layouts import layout_for
from needlec.placement.view import HaystackView
from needlec.registry import plugin_origin
from needlec.spec.loader import dotted
from needlec.spec.models import Spec
from needlec.spec.reports import ReportsSpec
from needlec.tokenizer import Tokenizer, load_tokenizer
from needlec.util import canonical
from needlec.util.atomic import atomic_directory, check_target, inside, is_needlec_dataset, write_file_atomic
from needlec.util.canonical import sha256_json
from needlec.util.sums import every_file, write_sums
from needlec.version import __version__


def default_cache_dir() -> Path:
    base = os.environ.get("NEEDLEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "needlec"
    )
    return Path(base)


@dataclass
class CompileOptions:
    """How to run a compile; none of these change the bytes of any item."""

    jobs: int = 1  # the CLI's default is every available core (`available_cores`)
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
    shard: tuple[int, int] | None = None  # (I, N): build only the I-th of N shares of the shards, as a slice
    slices: tuple[Path, ...] = ()  # `merge`: take every shard from these slices and build none


@dataclass
class CompileResult:
    out_dir: Path | None
    items: int
    tokens: int
    estimated_bytes: int
    manifest: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)  # e.g. a spec licence the corpora do not allow
    built: int = 0  # shards built by this run
    reused: int = 0  # shards found finished (an earlier, interrupted run or the slices of a merge)
    shards: int = 0  # shards of this output


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
        self._views: dict[tuple[str, str, int, str, tuple[int, ...]], HaystackView] = {}
        self.tokenizers: dict[str, Tokenizer] = {}

    def sources(self, spec: Spec) -> list[SourceText]:
        out = []
        configs: list[Any] = list(spec.haystack.sources)  # each one of the registered source models
        for i, config in enumerate(configs):
            key = source_key(config)
            if key not in self._sources:
                try:
                    loader: SourceLoader = SOURCES.get(config.type).factory
                    loaded = loader(config, self.context)
                    if not isinstance(loaded, SourceText):
                        raise PluginError(
                            f"{SOURCES.origin(config.type)} returned {type(loaded).__name__}; a source loader "
                            "returns a needlec.haystacks.sources.base.SourceText"
                        )
                    self._sources[key] = loaded
                except SourceError as exc:
                    path = ("haystack", "sources", i)
                    raise SpecError(
                        [Problem(str(exc), self.plan.doc.locate(path), dotted(path))], "a haystack source failed:"
                    ) from None
            out.append(self._sources[key])
        return out

    def documents(self, spec: Spec) -> list[SourceDocument]:
        """Every source's documents after that source's filters (cached per filter run), each tagged
        with the index of its source."""
        filtered = self.filters.apply(spec, self.sources(spec))
        return [d if d.source == i else replace(d, source=i) for i, s in enumerate(filtered) for d in s.documents]

    def haystacks(self, spec: Spec) -> list[Haystack]:
        key = spec.haystack.model_dump_json() + f"|{spec.seed}" + self.filters.key(spec)
        if key not in self._haystacks:
            documents = self.documents(spec) if reads_sources(spec) else []
            if reads_sources(spec) and not any(d.text.strip() for d in documents):
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
        # the passages' sources too: rankings of one text pooled from other sources differ
        key = (haystack.sha256, label, max_length, spec.haystack.start + spec.haystack.joiner, haystack.groups)
        if key not in self._views:
            random_start = spec.haystack.start == "random"
            starts = [0]
            if random_start:  # the same for every tokenizer and length: found once per haystack text
                text = haystack.text
                if haystack.sha256 not in self._starts:
                    self._starts[haystack.sha256] = [p for p in boundary_positions(text, "sentence") if p < len(text)]
                starts = self._starts[haystack.sha256]
            self._views[key] = _index(
                haystack,
                self.tokenizer(spec, label),
                max_length,
                random_start,
                spec.haystack.joiner,
                starts,
                self.context.cache_dir / "indexes",
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


def reads_sources(spec: Spec) -> bool:
    """Whether the spec's haystack builder reads its sources (RULER's generated haystacks do not, so
    their compiles neither load nor list them)."""
    return bool(getattr(type(spec.haystack.builder), "reads_sources", True))


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
            "sources": [d.source for d in documents],
        }
    )


def _index(
    haystack: Haystack,
    tokenizer: Tokenizer,
    max_length: int,
    random_start: bool,
    joiner: str,
    starts: list[int],
    cache: Path | None = None,
) -> HaystackView:
    """Index just enough (repeated) haystack text for the longest item, plus margins (the index read from
    `cache` when the same text was indexed before with the same tokenizer)."""
    base = haystack.text
    needed = int(max_length * 1.05) + 4096
    sample = base[:200_000]
    chars_per_token = len(sample) / max(1, _sample_tokens(sample, tokenizer, cache))
    extra = len(base) if random_start else 0
    chars = int(needed * chars_per_token * 1.3) + extra + 10_000
    while True:
        text, copies = repeat_to(base, joiner, chars)
        index = HaystackIndex(haystack, text[:chars], copies, tokenizer, cache)
        first_token = index.token_at(max(starts))
        if index.n_tokens >= first_token + needed:
            return HaystackView(index=index, counter=Counter(index), starts=starts, base_chars=len(base))
        chars *= 2


def _sample_tokens(sample: str, tokenizer: Tokenizer, cache: Path | None) -> int:
    """Tokens of a haystack's first characters (how much text an index needs), kept beside the cached
    indexes: counting 200,000 characters costs a small compile about 0.02-0.04 CPU s."""
    if cache is None:
        return tokenizer.count(sample)
    import hashlib

    digest = hashlib.sha256(f"sample|{tokenizer.identity()}\0".encode() + sample.encode("utf-8")).hexdigest()
    path = cache / f"{digest}.tokens"
    with suppress(OSError, ValueError):
        return int(path.read_text(encoding="ascii"))
    count = tokenizer.count(sample)
    with suppress(OSError):  # a read-only cache: count again next time
        cache.mkdir(parents=True, exist_ok=True)
        write_file_atomic(path, str(count).encode("ascii"))
    return count


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


Work = tuple[ConfigPlan, ItemKey, HaystackView, NeedleKind, bool]

# Worker state: set in the parent before the pool forks, read by `_run_block` in the children.
_STATE: dict[str, Any] = {}


@dataclass(frozen=True)
class CompiledItem:
    """One item as a compile keeps it: its line of the dataset, the problems its checks found, its overlap
    figures (config, what they are against, scores) and its context's tokens."""

    line: bytes
    problems: list[str]
    overlap: list[tuple[str, str, dict[str, float]]]
    tokens: int


def compile_item(
    benchmark: str,
    config: ConfigPlan,
    key: ItemKey,
    view: HaystackView,
    kind: NeedleKind,
    verify: bool = False,
    sample_context: bool = False,
) -> CompiledItem:
    """Build one item and do what a compile does with it besides writing it: check it (`check_item`, with
    the haystack's counter; `verify` re-encodes it whole), look for forbidden terms in its window, score its
    question against its needles (and against its whole context where `sample_context`) and check those
    figures against the spec's budgets, and serialise it."""
    item, leaks, draw = build_drawn(benchmark, config, key, view, kind)
    # the needles counted as the draw has them (a `Lines` block is counted from its tally)
    drawn = {text: text for text in draw.needles}
    counter = view.counter

    def count(text: str) -> int:
        return counter.tokens(drawn.get(text, text))

    def joined(text: str, joiner: str) -> int:  # a needle and the joiner after it, as the window search counts it
        return counter.joined_tokens(drawn.get(text, text), joiner)

    problems = check_item(item, config.spec, view.index.tokenizer, verify, count, joined)
    problems.extend(leak_problem(item.id, leaks))
    # items carry the unstemmed figures; the stemmed ones go to the manifest's statistics (the targets' texts as
    # the draw has them: `item.targets()`' texts)
    evidence = list(draw.needles)
    needle_scores = {**item.overlap, **stemmed_precision(item.question, evidence)}
    overlap = [(config.name, "needle", needle_scores)]
    problems.extend(check_budgets(item.id, config.spec, "needle", needle_scores))
    if sample_context:
        scores = both(item.question, item.context())
        overlap.append((config.name, "context", scores))
        problems.extend(check_budgets(item.id, config.spec, "context", scores))
    return CompiledItem(canonical.line(item.row()), problems, overlap, item.context_tokens)


def _run_block(index: int) -> tuple[int, Summary]:
    """Build one block's items into its shard file; only the summary travels back."""
    plan: Plan = _STATE["plan"]
    work: list[Work] = _STATE["work"]
    verify: bool = _STATE["verify"]
    store: ShardStore = _STATE["store"]
    block: Block = _STATE["blocks"][index]
    summary = Summary(block.count, 0)
    part = store.temporary(block.name)
    digest = hashlib.sha256()
    try:
        with part.open("wb") as shard:
            for config, key, view, kind, sample_context in work[block.start : block.end]:
                got = compile_item(plan.spec.name, config, key, view, kind, verify, sample_context)
                summary.problems.extend(got.problems)
                summary.overlap.extend(got.overlap)
                summary.tokens += got.tokens
                shard.write(got.line)
                digest.update(got.line)
                summary.size += len(got.line)
    except NeedlecError as exc:  # this cell cannot be built; the others go on and are kept
        part.unlink(missing_ok=True)
        return index, Summary(block.count, 0, error=f"{block.cell}: {exc.render()}")
    except Exception as exc:
        part.unlink(missing_ok=True)
        import multiprocessing

        origin = plugin_origin(exc.__traceback__)
        if origin is None or multiprocessing.parent_process() is None:
            raise  # (in this process the exception, its type and its frames reach the caller as they are)
        # a plugin's fault in a worker, named here where its frames are (they do not reach the parent)
        raise PluginFault(origin, "".join(traceback.format_exception(exc))) from exc
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    summary.sha256 = digest.hexdigest()
    store.finish(block.name, part, summary)
    return index, summary


def _worker_signals() -> None:
    """Workers die quietly when the pool ends them; only the parent turns SIGTERM into cleanup."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _warm(plan: Plan, work: list[Work], pending: list[Block]) -> None:
    """Load in the parent, once, what item building loads on first use (a kind's word lists, a
    view's boundary lists and word index, memo tables), so that forked workers inherit it instead
    of each paying for it again. One item per config is built and thrown away; items are pure
    functions of their keys, so nothing else changes."""
    seen: set[str] = set()
    for block in pending:
        config, key, view, kind, _ = work[block.start]
        if config.name not in seen:
            seen.add(config.name)
            with suppress(NeedlecError):  # the worker that builds this block reports it, naming its cell
                build_item(plan.spec.name, config, key, view, kind)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), which is what `--jobs` defaults to."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _can_fork() -> bool:
    """Whether worker processes can be forked here (not on Windows or where fork is unavailable)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _execute(
    plan: Plan, work: list[Work], blocks: list[Block], pending: list[Block], jobs: int, verify: bool, store: ShardStore
) -> Iterator[tuple[int, Summary]]:
    """Build every pending block (in forked workers when `jobs > 1`), in the order they finish.

    Each worker writes its own shard files into the store; the parent only collects summaries.
    """
    _STATE.update(plan=plan, work=work, blocks=blocks, verify=verify, store=store)
    indexes = [b.index for b in pending]
    try:
        if jobs <= 1 or len(indexes) <= 1 or not _can_fork():
            for index in indexes:
                yield _run_block(index)
            return
        import multiprocessing  # only for a compile on several cores

        _warm(plan, work, pending)
        with multiprocessing.get_context("fork").Pool(min(jobs, len(indexes)), initializer=_worker_signals) as pool:
            yield from pool.imap_unordered(_run_block, indexes)
    finally:
        _STATE.clear()


def _fingerprint(plan: Plan, prepared: Prepared, config: ConfigPlan, label: str) -> dict[str, Any]:
    """Everything the items of one config and tokenizer depend on besides their keys."""
    return {
        "spec": plan.spec.name,
        "config": config.name,
        "axes": [list(a) for a in config.axes],
        "redraw": config.redraw,
        "settings": config.spec.model_dump(mode="json"),
        "haystacks": [h.sha256 for h in prepared.haystacks(config.spec)],
        "tokenizer": prepared.tokenizers[label].describe(),
    }


def _append(source: Path, target: BinaryIO) -> None:
    """Append a shard file to a data file (in the kernel where it can, without reading it here)."""
    with source.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        copy = getattr(os, "copy_file_range", None)
        if copy is not None:
            target.flush()
            done = 0
            try:
                while done < size:
                    moved = copy(handle.fileno(), target.fileno(), size - done)
                    if moved <= 0:
                        break
                    done += moved
            except OSError:
                pass
            if done == size:
                return
            handle.seek(done)
        shutil.copyfileobj(handle, target, 1 << 20)


def _kept(store: ShardStore, finished: int) -> str:
    if not finished:
        return "\nNo shard was finished; fix the problem above and run the same command again."
    return (
        f"\nThe {finished} finished shard(s) are kept in {store.root}; run the same command again "
        "to build only what is missing or changed."
    )


def compile_spec(
    spec_path: str | Path, out_dir: str | Path | None, options: CompileOptions | None = None
) -> CompileResult:
    """Compile a spec into `out_dir` (atomically), or only size it up with `dry_run`.

    With `options.shard = (I, N)` the output is a slice (the I-th of N shares of the shards);
    with `options.slices` nothing is built and the shards come from those slices (`merge`).
    """
    options = options or CompileOptions()
    if isinstance(options.jobs, bool) or not isinstance(options.jobs, int) or options.jobs < 1:
        raise NeedlecError(f"jobs must be a whole number of worker processes, at least 1; got {options.jobs!r}")
    cache_dir = options.cache_dir or default_cache_dir()
    plan = load_plan(spec_path, cache_dir, options.tokenizers or None)
    options = replace(options, select=_check_select(plan, options.select))
    size = plan_size(plan, options.select)
    check_not_empty(size.items)
    slicing = options.shard is not None
    owned = is_slice if slicing else is_needlec_dataset
    what = "a needlec slice" if slicing else "a needlec dataset"
    if options.dry_run:  # the ceilings the user set apply to a dry run too (the disk only to a real compile)
        check_size(size, options.max_items, options.max_bytes)
        if out_dir is not None:  # and so does what -o may replace: the compile it sizes would be refused
            try:
                target = check_target(Path(out_dir), owned, guard=(Path(spec_path),), what=what)
                if not slicing:
                    check_replace(target, plan, options.select, options.force)
            except OutputError as exc:  # the size is still what the dry run was asked for
                raise type(exc)(
                    f"{exc}\n(dry run: {size.items:,} items, {size.tokens:,} context tokens, about "
                    f"{human_bytes(size.bytes)} of output; a compile into {out_dir} would stop here, before any item)"
                ) from None
        return CompileResult(None, size.items, size.tokens, size.bytes, None)
    if out_dir is None:
        raise NeedlecError("an output directory is required (-o DIR; out_dir from Python)")
    target = check_target(Path(out_dir), owned, guard=(Path(spec_path),), what=what)  # refuse a bad -o early
    check_size(size, options.max_items, options.max_bytes, target)
    if not slicing:
        check_replace(target, plan, options.select, options.force)  # nothing lost without --force
    if options.announce is not None:
        options.announce(size)
    progress = Progress(options.progress)
    prepared = Prepared(plan, cache_dir)
    prepared.filters.progress = options.progress
    progress.phase("haystacks and indexes")
    units = _units(plan, prepared, options.select)
    work = prepare_work(prepared, units, progress)
    repeated = repetitions(work)
    warnings = [r.message() for r in repeated] + unstated_answers(c for c, _ in units)
    for config, _ in units:
        if config.name in prepared.ranking_reports:
            warnings += ranking_warnings(config, prepared.ranking_reports[config.name])
    if warnings and options.strict:
        raise NeedlecError("--strict: the compile has warnings:\n  " + "\n  ".join(warnings))
    configs = {c.name: c for c, _ in units}
    blocks = plan_blocks(
        [(w[0].name, w[1].tokenizer, w[1].length) for w in work],
        [w[1] for w in work],
        lambda name, label: _fingerprint(plan, prepared, configs[name], label),
        options.verify,
    )
    mine = [b for b in blocks if in_shard(b, options.shard)]
    out = Path(out_dir)
    # a slice written before by the same compile (a rerun, as `--executor ray` makes): its shards are reused
    previous = target / SLICE_SHARDS if slicing and _same_slice(target, blocks, options) else None
    store = ShardStore(store_dir(target), [Path(s) / SLICE_SHARDS for s in options.slices], previous)
    with atomic_directory(out, owned, guard=(Path(spec_path),), what=what) as tmp:
        if options.slices:
            missing = [b for b in mine if store.find(b.name) is None]
            if missing:
                raise NeedlecError(_missing_message(missing, len(blocks), options.slices, plan))
        else:
            store.open()
        summaries: dict[int, Summary] = {}
        pending: list[Block] = []
        for block in mine:
            found = store.summary(block.name)
            if found is None:
                pending.append(block)
            else:
                summaries[block.index] = found
        reused = len(summaries)
        if reused and options.progress and not options.slices:  # (a merge takes every shard from its slices)
            print(f"resuming: {reused} of {len(mine)} shard(s) already built in {store.root}", file=sys.stderr)
        if store.damaged and options.progress:
            print(
                f"{len(store.damaged)} shard(s) in {store.root} no longer match what was written (edited, cut short "
                "or half copied): building them again",
                file=sys.stderr,
            )
        workers = 1 if len(pending) <= 1 else min(options.jobs, len(pending))
        progress.phase(f"items: {len(pending)} shard(s) to build with {workers} worker(s)")
        failures: list[str] = []
        with progress.items(
            f"compile {plan.spec.name}", sum(b.count for b in mine), sum(s.count for s in summaries.values())
        ) as bar:
            for index, summary in _execute(plan, work, blocks, pending, options.jobs, options.verify, store):
                if summary.error is not None:
                    failures.append(summary.error)
                else:
                    summaries[index] = summary
                bar.update(summary.count)
        if failures:
            shown = "\n".join(f"  {f}" for f in failures[:20])
            more = f"\n  ... and {len(failures) - 20} more" if len(failures) > 20 else ""
            raise NeedlecError(
                f"{len(failures)} shard(s) could not be built:\n{shown}{more}" + _kept(store, len(summaries))
            )
        problems = [p for b in mine for p in summaries[b.index].problems]
        if problems:
            cells = sorted({b.cell for b in mine if summaries[b.index].problems})
            shown = "\n".join(f"  {p}" for p in problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise ContractError(
                f"{len(problems)} item(s) break the spec's contracts, in {len(cells)} cell(s) "
                f"({', '.join(cells[:10])}{', ...' if len(cells) > 10 else ''}):\n{shown}{more}"
                + (_DEPTH_HINT if any(" at depth " in p for p in problems) else "")
                + _kept(store, len(summaries))
            )
        total_tokens = sum(summaries[b.index].tokens for b in mine)
        progress.phase("writing the slice" if slicing else "writing data files, manifest and card")
        if slicing:
            assert options.shard is not None
            _write_slice(tmp, plan, store, mine, blocks, options)
            manifest = None
        else:
            files: dict[tuple[str, str], list[Any]] = {}
            tally: dict[tuple[str, str], OverlapStats] = {}
            handles: dict[tuple[str, str], BinaryIO] = {}
            try:
                for block in mine:  # key order, so the data files are the same for any --jobs or slices
                    if block.slot not in handles:
                        relative = f"data/{block.slot[0]}/{block.slot[1]}.jsonl"
                        path = inside(tmp, relative)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        handles[block.slot] = path.open("wb")
                        files[block.slot] = [relative, 0]
                    _append(store.lines(block.name), handles[block.slot])
                    files[block.slot][1] += block.count
                    for name, against, scores in summaries[block.index].overlap:
                        tally.setdefault((name, against), OverlapStats()).add(scores)
            finally:
                for handle in handles.values():
                    handle.close()
            manifest = _manifest(plan, prepared, units, files, tmp, tally, repeated)
            prepared.filters.write_audit(tmp)
            (tmp / MANIFEST).write_bytes(canonical.dumps(manifest, indent=True) + b"\n")
            (tmp / "README.md").write_text(render_card(plan, manifest), encoding="utf-8")
            write_sums(tmp, every_file(tmp))  # covers the card and audit too, so `verify` notices any edit
    if not options.slices and (store.root / STORE_MARK).is_file():
        shutil.rmtree(store.root, ignore_errors=True)  # the dataset (or slice) holds everything now
    if manifest is not None:
        from needlec.haystacks.sources.corpora import licence_warnings

        warnings += licence_warnings(plan.spec.license, manifest["sources"])
    count = sum(b.count for b in mine)
    return CompileResult(
        out.resolve(),
        count,
        total_tokens,
        size.bytes,
        manifest,
        warnings,
        built=len(pending),
        reused=reused,
        shards=len(mine),
    )


def merge_slices(
    slices: list[Path], out_dir: str | Path, spec_path: str | Path | None = None, options: CompileOptions | None = None
) -> CompileResult:
    """Join the slices of one compile (`--shard 1/N` ... `N/N`) into the dataset a single
    compile would have written: same data files, manifest, card and SHA256SUMS.

    The spec (recorded in the slices, or `spec_path`) is prepared again for the manifest
    (sources, haystacks, tokenizers); no item is built, every shard comes from a slice.
    """
    if not slices:
        raise NeedlecError("merge needs at least one slice")
    records = [read_slice(Path(s)) for s in slices]
    first = records[0]
    count = int(first["shard"][1])
    for folder, record in zip(slices, records, strict=True):
        if record["compile"] != first["compile"] or int(record["shard"][1]) != count:
            differ = [
                what
                for key, what in (
                    ("spec_sha256", "spec"),
                    ("select", "selection (--select)"),
                    ("code", "needlec version"),
                    ("verify", "--verify"),
                )
                if record.get(key) != first.get(key)
            ]
            if int(record["shard"][1]) != count:
                differ.append(f"shard count ({record['shard'][1]} against {count})")
            why = ", ".join(differ) if differ else "the spec's grid or haystacks"
            raise NeedlecError(
                f"{folder} is a slice of another compile than {slices[0]}: its {why} differs; merge only the "
                "slices of one `--shard I/N` run"
            )
    seen: dict[int, Path] = {}
    for folder, record in zip(slices, records, strict=True):
        index = int(record["shard"][0])
        if index in seen:
            raise NeedlecError(
                f"{seen[index]} and {folder} are both slice {index}/{count} of the compile; give each slice once"
            )
        seen[index] = Path(folder)
    have = sorted(seen)
    lacking = sorted(set(range(1, count + 1)) - set(have))
    if lacking:
        raise NeedlecError(
            f"merge needs all {count} slices of the compile; missing "
            + ", ".join(f"--shard {i}/{count}" for i in lacking)
        )
    spec = Path(spec_path) if spec_path is not None else Path(str(first["spec_file"]))
    if not spec.is_file():
        raise NeedlecError(f"the slices were compiled from {spec}, which is not here; name the spec with --spec")
    base = options or CompileOptions()
    merged = CompileOptions(
        jobs=1,
        select={k: set(v) for k, v in first["select"].items()},
        progress=base.progress,
        verify=bool(first["verify"]),
        cache_dir=base.cache_dir,
        max_items=base.max_items,
        max_bytes=base.max_bytes,
        strict=base.strict,
        force=base.force,
        slices=tuple(Path(s) for s in slices),
    )
    return compile_spec(spec, out_dir, merged)


_DEPTH_HINT = (
    "\nA needle lands at a boundary of `placement.snap` (a sentence by default), so in a short context a long "
    "sentence can move it several points: raise `placement.depth_tolerance`, snap to smaller units, or set "
    "`placement.window: needle`, which moves the window so that a boundary sits at the first needle's depth."
)


def _missing_message(missing: list[Block], total: int, slices: tuple[Path, ...], plan: Plan) -> str:
    """Which cells no slice has, and which `--shard I/N` would have built them; first, where the spec's bytes are
    not those the slices were compiled from, that the spec changed (the usual cause)."""
    cells = sorted({b.cell for b in missing})
    lacks = (
        f"lack {len(missing)} of the compile's {total} shard(s), in {len(cells)} cell(s): "
        f"{', '.join(cells[:10])}{', ...' if len(cells) > 10 else ''}"
    )
    recorded = read_slice(slices[0]).get("spec_sha256")
    if recorded and recorded != plan.spec_sha256:
        return (
            f"{plan.path} has changed since the slices were compiled from it (its sha256 is not the one "
            f"{slices[0] / SLICE_FILE} records), and for the spec as it is now the slices {lacks}. Merge with the "
            "spec the slices were compiled from (--spec), or compile the slices again from this one."
        )
    return (
        f"the slices ({', '.join(str(s) for s in slices)}) {lacks}. "
        "Merge every slice of the same compile (same spec, selection and needlec), or build the missing ones."
    )


def _write_slice(
    tmp: Path, plan: Plan, store: ShardStore, mine: list[Block], blocks: list[Block], options: CompileOptions
) -> None:
    """A slice: its shards (moved out of the store) and `slice.json`, which `merge` reads."""
    assert options.shard is not None
    folder = tmp / SLICE_SHARDS
    folder.mkdir()
    for block in mine:
        source = store.find(block.name)
        for suffix in (".jsonl", ".json"):
            name = f"{block.name}{suffix}"
            if source == store.root:
                os.replace(store.root / name, folder / name)
            else:  # a shard of the slice this one replaces: linked (or copied), as that folder goes at the swap
                _link_or_copy(store.lines(block.name).with_suffix(suffix), folder / name)
    record = _slice_record(plan, mine, blocks, options)
    (tmp / SLICE_FILE).write_bytes(canonical.dumps(record, indent=True) + b"\n")


def _link_or_copy(source: Path, destination: Path) -> None:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


def _same_slice(target: Path, blocks: list[Block], options: CompileOptions) -> bool:
    """Whether `target` is a slice of this very compile and share (same shards, code, selection and check), so
    that its shards are this run's."""
    if not is_slice(target):
        return False
    try:
        record = read_slice(target)
    except (NeedlecError, ValueError):
        return False
    assert options.shard is not None
    return (
        record.get("compile") == sha256_json([b.name for b in blocks])
        and record.get("shard") == list(options.shard)
        and record.get("code") == code_version()
        and record.get("verify") == options.verify
    )


def _slice_record(plan: Plan, mine: list[Block], blocks: list[Block], options: CompileOptions) -> dict[str, Any]:
    assert options.shard is not None
    return {
        "needlec_slice": 1,
        "needlec_version": __version__,
        "code": code_version(),
        "spec_file": str(plan.path.resolve()),
        "spec_sha256": plan.spec_sha256,
        "select": {k: sorted(v) for k, v in sorted(options.select.items())},
        "verify": options.verify,
        "shard": list(options.shard),
        "shards": len(mine),
        "compile": sha256_json([b.name for b in blocks]),
    }


def build_one(
    plan: Plan, config: ConfigPlan, key: ItemKey, cache_dir: Path | None = None, prepared: Prepared | None = None
) -> dict[str, Any]:
    """Build a single item in memory (for `inspect` and documentation), without writing anything.

    Returns the item's JSON row (as written to the data files). `prepared` (the plan's, from an earlier call)
    keeps its haystacks, indexes and kinds for the next item, which is then built without preparing them again.
    """
    prepared = prepared if prepared is not None else Prepared(plan, cache_dir or default_cache_dir())
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


def prepare_work(
    prepared: Prepared, units: list[tuple[ConfigPlan, list[ItemKey]]], progress: Progress | None = None
) -> list[Work]:
    """Pair every item key with its haystack view and needle kind (indexes built here, once).

    With `progress`, a bar counts the configs prepared (sources, filters, haystacks, indexes).
    """
    work: list[Work] = []
    with (progress or Progress(False)).items("prepare configs", len(units), unit="config") as bar:
        for config, keys in units:
            work.extend(_config_work(prepared, config, keys))
            bar.update(1)
    return work


def _config_work(prepared: Prepared, config: ConfigPlan, keys: list[ItemKey]) -> list[Work]:
    haystacks = {h.id: h for h in prepared.haystacks(config.spec)}
    kind = prepared.kind(config)
    longest: dict[tuple[str, str], int] = {}
    served: dict[tuple[str, str], tuple[ItemKey, int]] = {}  # per view: its first key and how many it builds
    for key in keys:
        slot = (key.haystack, key.tokenizer)
        longest[slot] = max(longest.get(slot, 0), key.length)
        first, items = served.get(slot, (key, 0))
        served[slot] = (first, items + 1)
    views = {slot: prepared.view(config.spec, haystacks[slot[0]], slot[1], n) for slot, n in longest.items()}
    ranked = prepare_rankings(config, keys, views, kind, prepared.context.cache_dir, prepared.filters.progress)
    if ranked is not None:  # ranked before the workers fork, so they only look rankings up
        prepared.ranking_reports[config.name] = ranked
    prepare_layouts(config, kind, [(views[slot], first, items) for slot, (first, items) in served.items()])
    # context overlap is measured on a sample: smallest length, first depth, first repeat
    sample = (min(config.spec.grid.length_points()), config.depth_points()[0], 0)
    return [
        (config, key, views[(key.haystack, key.tokenizer)], kind, (key.length, key.depth, key.repeat) == sample)
        for key in keys
    ]


def prepare_layouts(config: ConfigPlan, kind: NeedleKind, views: list[tuple[HaystackView, ItemKey, int]]) -> None:
    """Prepare the config's layout on each view for the items it will build there (`Layout.prepare`): given as
    (view, one of its keys, how many items), the key drawn for the structure the layout reads. Run before a
    compile's workers fork; items are pure functions of their keys, so no byte changes."""
    prepare = getattr(layout_for(config.spec), "prepare", None)  # (an optional hook: see `Layout`)
    if prepare is None:
        return
    for view, key, items in views:
        with suppress(NeedlecError):  # a key that cannot be drawn is reported by the worker that builds it
            prepare(view, draw_item(config, key, view, kind)[3].structure, config.spec.haystack.builder, items)


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
        for source in prepared.sources(config.spec) if reads_sources(config.spec) else []:
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
