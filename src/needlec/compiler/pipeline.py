"""The compile pipeline: plan -> sources -> haystacks -> indexes -> items -> checks -> export.

Items are computed in deterministic chunks (in worker processes when `jobs > 1`) and streamed
to disk in key order, so the output is byte-identical for any number of workers and a config is
never held in memory whole.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from needlec.compiler.haystack import Haystack, HaystackIndex, boundary_positions, repeat_to
from needlec.compiler.items import HaystackView, build_item
from needlec.compiler.loader import dotted
from needlec.compiler.placement import Counter
from needlec.compiler.plan import ConfigPlan, ItemKey, Plan, load_plan
from needlec.compiler.spec import Spec
from needlec.compiler.tokenizers import Tokenizer, load_tokenizer
from needlec.errors import ContractError, NeedlecError, Problem, SourceError, SpecError
from needlec.exporters import canonical
from needlec.exporters.atomic import atomic_directory
from needlec.exporters.hf import render_card
from needlec.exporters.manifest import MANIFEST, build_manifest, file_entry
from needlec.sources import SOURCES, SourceContext, SourceText

SELECT_KEYS = ("config", "tokenizer", "length", "depth")
HAYSTACK_ID = "h0"


def default_cache_dir() -> Path:
    base = os.environ.get("NEEDLEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "needlec")
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


@dataclass
class CompileResult:
    out_dir: Path | None
    items: int
    tokens: int
    estimated_bytes: int
    manifest: dict[str, Any] | None


class Prepared:
    """Everything item building needs, computed once in the parent (and shared with workers)."""

    def __init__(self, plan: Plan, cache_dir: Path) -> None:
        self.plan = plan
        self.context = SourceContext(spec_dir=plan.spec_dir, cache_dir=cache_dir)
        self._sources: dict[str, SourceText] = {}
        self._haystacks: dict[str, Haystack] = {}
        self._views: dict[tuple[str, str, int, str], HaystackView] = {}
        self.tokenizers: dict[str, Tokenizer] = {}

    def sources(self, spec: Spec) -> list[SourceText]:
        out = []
        configs: list[Any] = list(spec.haystack.sources)  # each one of the registered source models
        for i, config in enumerate(configs):
            key = config.model_dump_json()
            if key not in self._sources:
                try:
                    self._sources[key] = SOURCES.get(config.type).factory(config, self.context)
                except SourceError as exc:
                    path = ("haystack", "sources", i)
                    raise SpecError([Problem(str(exc), self.plan.doc.locate(path), dotted(path))],
                                    "a haystack source failed:") from None
            out.append(self._sources[key])
        return out

    def haystack(self, spec: Spec) -> Haystack:
        key = spec.haystack.model_dump_json()
        if key not in self._haystacks:
            texts = [d.text for s in self.sources(spec) for d in s.documents]
            text = spec.haystack.joiner.join(t for t in texts if t)
            if not text.strip():
                raise SourceError("the haystack sources produced no text")
            self._haystacks[key] = Haystack(HAYSTACK_ID, text)
        return self._haystacks[key]

    def tokenizer(self, spec: Spec, label: str) -> Tokenizer:
        if label not in self.tokenizers:
            config = next(t for t in spec.tokenizers if t.label == label)
            self.tokenizers[label] = load_tokenizer(config, self.plan.spec_dir)
        return self.tokenizers[label]

    def view(self, spec: Spec, label: str, max_length: int) -> HaystackView:
        haystack = self.haystack(spec)
        key = (haystack.sha256, label, max_length, spec.haystack.start + spec.haystack.joiner)
        if key not in self._views:
            self._views[key] = _index(haystack, self.tokenizer(spec, label), max_length,
                                      spec.haystack.start == "random", spec.haystack.joiner)
        return self._views[key]


def _index(haystack: Haystack, tokenizer: Tokenizer, max_length: int, random_start: bool,
           joiner: str) -> HaystackView:
    """Index just enough (repeated) haystack text for the longest item, plus margins."""
    base = haystack.text
    needed = int(max_length * 1.05) + 4096
    sample = base[:200_000]
    chars_per_token = len(sample) / max(1, tokenizer.count(sample))
    extra = len(base) if random_start else 0
    chars = int(needed * chars_per_token * 1.3) + extra + 10_000
    starts = [p for p in boundary_positions(base, "sentence") if p < len(base)] if random_start else [0]
    while True:
        text, copies = repeat_to(base, joiner, chars)
        index = HaystackIndex(haystack, text[:chars], copies, tokenizer)
        first_token = index.token_at(max(starts))
        if index.n_tokens >= first_token + needed:
            return HaystackView(index=index, counter=Counter(index), starts=starts, base_chars=len(base))
        chars *= 2


def _selected(key: ItemKey, select: dict[str, set[str]]) -> bool:
    values = {"config": key.config, "tokenizer": key.tokenizer, "length": str(key.length),
              "depth": f"{key.depth:g}"}
    return all(values[name] in allowed for name, allowed in select.items())


def _units(plan: Plan, select: dict[str, set[str]]) -> list[tuple[ConfigPlan, list[ItemKey]]]:
    unknown = set(select) - set(SELECT_KEYS)
    if unknown:
        raise NeedlecError(f"--select accepts {', '.join(SELECT_KEYS)}; got {', '.join(sorted(unknown))}")
    if "config" in select:
        missing = select["config"] - {c.name for c in plan.configs}
        if missing:
            names = ", ".join(c.name for c in plan.configs)
            raise NeedlecError(f"--select config: no config named {', '.join(sorted(missing))} (configs: {names})")
    out = []
    for config in plan.configs:
        keys = [k for k in plan.keys(config, [HAYSTACK_ID]) if _selected(k, select)]
        if keys:
            out.append((config, keys))
    return out


# Worker state: set in the parent before the pool forks, read by `_run_chunk` in the children.
_STATE: dict[str, Any] = {}


def _run_chunk(chunk: tuple[int, int]) -> tuple[bytes, int, int, list[str]]:
    plan: Plan = _STATE["plan"]
    work: list[tuple[ConfigPlan, ItemKey, HaystackView]] = _STATE["work"]
    verify: bool = _STATE["verify"]
    lines = []
    tokens = 0
    problems: list[str] = []
    for config, key, view in work[chunk[0]:chunk[1]]:
        item = build_item(plan.spec.name, config, key, view)
        problems.extend(check_item(item, config.spec, view.index.tokenizer, verify))
        tokens += item["context_tokens"]
        lines.append(canonical.line(item))
    return b"".join(lines), chunk[1] - chunk[0], tokens, problems


def reachable_depth(item: dict[str, Any], index: int, counter: Tokenizer) -> float:
    """Deepest a needle can sit: the needles from it to the end of the context need their tokens."""
    offset = item["needles"][index]["char_offset"]
    tail = sum(counter.count(n["text"]) for n in item["needles"] if n["char_offset"] >= offset)
    return 100.0 * max(0, item["context_tokens"] - tail) / item["context_tokens"]


def check_item(item: dict[str, Any], spec: Spec, counter: Tokenizer, verify: bool) -> list[str]:
    """Contract checks on one item; with `verify`, also re-encode it in full (slow, exact).

    A target depth beyond what the needle can reach (100% means the needle ends the context, so it
    starts one needle-length earlier) is measured against the reachable depth instead.
    """
    tokenizer = counter
    problems = []
    counted = item["context_tokens"] if spec.length.counted == "context" else item["prompt_tokens"]
    if abs(counted - item["context_length"]) > spec.length.tolerance:
        problems.append(f"{item['id']}: {counted} tokens, target {item['context_length']}")
    for i, needle in enumerate(item["needles"]):
        target = min(needle["target_depth_percent"], reachable_depth(item, i, counter))
        if abs(needle["depth_percent"] - target) > spec.placement.depth_tolerance:
            problems.append(f"{item['id']}: needle {i} at depth {needle['depth_percent']}%, target "
                            f"{target}% (tolerance {spec.placement.depth_tolerance})")
    if verify:
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"]:span["end"]]
        if tokenizer.count(context) != item["context_tokens"]:
            problems.append(f"{item['id']}: re-encoding gives {tokenizer.count(context)} tokens, "
                            f"recorded {item['context_tokens']}")
        for i, needle in enumerate(item["needles"]):
            before = tokenizer.count(context[:needle["char_offset"]])
            if before != needle["token_offset"]:
                problems.append(f"{item['id']}: needle {i} token offset {needle['token_offset']}, "
                                f"re-encoding gives {before}")
    return problems


def _worker_signals() -> None:
    """Workers die quietly when the pool ends them; only the parent turns SIGTERM into cleanup."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _chunks(total: int, jobs: int) -> list[tuple[int, int]]:
    size = max(1, min(32, total // max(1, jobs * 8)))
    return [(i, min(total, i + size)) for i in range(0, total, size)]


def _execute(plan: Plan, work: list[tuple[ConfigPlan, ItemKey, HaystackView]], jobs: int,
             verify: bool) -> Iterator[tuple[bytes, int, int, list[str]]]:
    _STATE.update(plan=plan, work=work, verify=verify)
    chunks = _chunks(len(work), jobs)
    try:
        if jobs <= 1 or len(chunks) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            for chunk in chunks:
                yield _run_chunk(chunk)
            return
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_signals) as pool:
            yield from pool.imap(_run_chunk, chunks)
    finally:
        _STATE.clear()


def compile_spec(spec_path: str | Path, out_dir: str | Path | None,
                 options: CompileOptions | None = None) -> CompileResult:
    """Compile a spec into `out_dir` (atomically), or only size it up with `dry_run`."""
    options = options or CompileOptions()
    cache_dir = options.cache_dir or default_cache_dir()
    plan = load_plan(spec_path, cache_dir)
    units = _units(plan, options.select)
    n_items = sum(len(keys) for _, keys in units)
    tokens = sum(k.length for _, keys in units for k in keys)
    estimate = sum(int(k.length * 4.3) + 2000 for _, keys in units for k in keys)
    if options.dry_run:
        return CompileResult(None, n_items, tokens, estimate, None)
    if out_dir is None:
        raise NeedlecError("an output directory is required (-o DIR)")
    prepared = Prepared(plan, cache_dir)
    work: list[tuple[ConfigPlan, ItemKey, HaystackView]] = []
    for config, keys in units:
        longest: dict[str, int] = {}
        for key in keys:
            longest[key.tokenizer] = max(longest.get(key.tokenizer, 0), key.length)
        views = {label: prepared.view(config.spec, label, n) for label, n in longest.items()}
        work.extend((config, key, views[key.tokenizer]) for key in keys)
    out = Path(out_dir)
    files: dict[tuple[str, str], list[Any]] = {}
    problems: list[str] = []
    total_tokens = 0
    with atomic_directory(out) as tmp:
        bar = tqdm(total=n_items, unit="item", desc=f"compile {plan.spec.name}", file=sys.stderr,
                   disable=not options.progress, dynamic_ncols=True)
        handles: dict[tuple[str, str], Any] = {}
        order = [(config, key) for config, key, _ in work]
        position = 0
        try:
            for blob, count, chunk_tokens, chunk_problems in _execute(plan, work, options.jobs, options.verify):
                # chunks may straddle two files, so route each line by its key
                for line in blob.splitlines(keepends=True):
                    config, key = order[position]
                    position += 1
                    slot = (config.name, key.tokenizer)
                    if slot not in handles:
                        relative = f"data/{config.name}/{key.tokenizer}.jsonl"
                        (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
                        handles[slot] = (tmp / relative).open("wb")
                        files[slot] = [relative, 0]
                    handles[slot].write(line)
                    files[slot][1] += 1
                total_tokens += chunk_tokens
                problems.extend(chunk_problems)
                bar.update(count)
        finally:
            for handle in handles.values():
                handle.close()
            bar.close()
        if problems:
            shown = "\n".join(f"  {p}" for p in problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise ContractError(f"{len(problems)} item(s) break the spec's contracts:\n{shown}{more}")
        manifest = _manifest(plan, prepared, units, files, tmp)
        (tmp / MANIFEST).write_bytes(canonical.dumps(manifest, indent=True) + b"\n")
        (tmp / "README.md").write_text(render_card(plan, manifest), encoding="utf-8")
    return CompileResult(out.resolve(), n_items, total_tokens, estimate, manifest)


def _manifest(plan: Plan, prepared: Prepared, units: list[tuple[ConfigPlan, list[ItemKey]]],
              files: dict[tuple[str, str], list[Any]], root: Path) -> dict[str, Any]:
    configs: dict[str, dict[str, Any]] = {}
    sources: dict[str, dict[str, Any]] = {}
    for config, _ in units:
        for source in prepared.sources(config.spec):
            sources[source.sha256 + source.name] = source.describe()
        entries = [file_entry(root, rel, label, rows) for (name, label), (rel, rows) in files.items()
                   if name == config.name]
        configs[config.name] = {"variant": dict(config.axes), "files": entries}
    return build_manifest(
        spec_name=plan.spec.name, spec_file=plan.path.name, spec_sha256=plan.spec_sha256,
        sources=[sources[k] for k in sorted(sources)],
        tokenizers=[prepared.tokenizers[k].describe() for k in sorted(prepared.tokenizers)],
        filters=[], configs=configs)
