"""Gather what a benchmark page shows: the resolved spec, a compiled manifest and a few items.

A page is built from the spec and a compiled dataset. When no dataset folder is given, the spec
is compiled on a reduced grid into a temporary folder, which is enough for sample items, achieved
depths and lengths and a file list; the full grid's shape (every config) comes from the plan.

The reduced grid is bounded whatever the spec, so a page costs seconds: at most
`PREVIEW_CONFIGS` configs, picked evenly from the spec's config list (the first and the last
included; `sampled_configs`), each at its smallest length, up to `PREVIEW_DEPTHS` depths spread
over its grid, the first haystack and repeat 0 only; configs whose items would take the slice
over `PREVIEW_TOKEN_BUDGET` context tokens are left out (never the first). The page names the
configs that were sampled.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import Plan, load_plan, uncached_download
from needlec.compile.select import SELECT_KEYS
from needlec.compile.size import haystack_ids
from needlec.dataset.manifest import read_manifest

PREVIEW_TOKEN_BUDGET = 1_000_000
PREVIEW_DEPTHS = 11
PREVIEW_CONFIGS = 8
ROWS_READ_PER_FILE = 2000
SAMPLES = 4


@dataclass(frozen=True)
class ConfigGrid:
    """The full grid of one config, as the plan defines it (nothing compiled)."""

    name: str
    axes: tuple[tuple[str, str], ...]
    tokenizers: tuple[str, ...]
    lengths: tuple[int, ...]
    depths: tuple[float, ...]
    cases: int
    haystacks: int
    repeats: int
    items: int
    tokens: int


@dataclass
class Benchmark:
    """Everything a benchmark page and its catalogue card are generated from."""

    spec_path: Path
    plan: Plan
    manifest: dict[str, Any]
    grids: list[ConfigGrid]
    preview: dict[str, list[str]] | None  # the --select of the reduced compile; None for a given dataset
    samples: list[dict[str, Any]] = field(default_factory=list)
    depths: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # config -> (target, achieved)
    # config -> (target: the length less the spec's buffer, counted)
    lengths_achieved: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    unavailable: str | None = None  # why no items were compiled for the page (e.g. the haystack is downloaded)

    @property
    def name(self) -> str:
        return self.plan.spec.name

    @property
    def total_items(self) -> int:
        return sum(g.items for g in self.grids)

    @property
    def all_lengths(self) -> list[int]:
        return sorted({n for g in self.grids for n in g.lengths})


def grid_of(plan: Plan) -> list[ConfigGrid]:
    grids = []
    for config in plan.configs:
        spec = config.spec
        keys = list(plan.keys(config, haystack_ids(spec)))
        grids.append(
            ConfigGrid(
                name=config.name,
                axes=config.axes,
                tokenizers=tuple(t.label for t in spec.tokenizers),
                lengths=tuple(spec.grid.length_points()),
                depths=tuple(config.depth_points()),
                cases=len({k.case for k in keys}),
                haystacks=len({k.haystack for k in keys}),
                repeats=spec.grid.repeats,
                items=len(keys),
                tokens=sum(k.length for k in keys),
            )
        )
    return grids


def _spread(values: tuple[float, ...], count: int) -> list[float]:
    """Up to `count` values picked evenly from a sorted tuple, ends included."""
    if len(values) <= count:
        return list(values)
    return sorted({values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)})


def _matching(plan: Plan, select: dict[str, set[str]]) -> tuple[int, int]:
    """Items and context tokens a compile with `select` would build."""
    items = tokens = 0
    for config in plan.configs:
        if config.name not in select["config"]:
            continue
        for key in plan.keys(config, haystack_ids(config.spec)):
            if key.selected(select):
                items += 1
                tokens += key.length
    return items, tokens


def sampled_configs(names: list[str], count: int = PREVIEW_CONFIGS) -> list[str]:
    """Up to `count` names picked evenly from `names`, first and last included, in their order.

    Deterministic and independent of the configs' sizes, so a page samples the same configs
    every time and the picks cover the whole variant matrix (the list is its row-major order).
    """
    if len(names) <= count:
        return list(names)
    if count <= 1:
        return names[:count]
    return [names[round(i * (len(names) - 1) / (count - 1))] for i in range(count)]


def preview_select(plan: Plan, grids: list[ConfigGrid]) -> dict[str, set[str]]:
    """A slice of the grid that compiles in seconds, whatever the spec (see the module docstring).

    Configs come from `sampled_configs`; each adds its smallest length and a spread of its
    depths, and is skipped when the slice would exceed the token budget (the first never is, so
    every page has sample items).
    """
    select: dict[str, set[str]] = {"config": set(), "length": set(), "depth": set(), "repeat": {"0"}}
    if "haystack" in SELECT_KEYS:
        select["haystack"] = {haystack_ids(c.spec)[0] for c in plan.configs}
    by_name = {g.name: g for g in grids}
    for name in sampled_configs([c.name for c in plan.configs]):
        grid = by_name[name]
        trial = {key: set(values) for key, values in select.items()}
        trial["config"].add(grid.name)
        trial["length"].add(str(min(grid.lengths)))
        trial["depth"].update(f"{d:g}" for d in _spread(grid.depths, PREVIEW_DEPTHS))
        if select["config"] and _matching(plan, trial)[1] > PREVIEW_TOKEN_BUDGET:
            continue
        select = trial
    return select


def no_preview(plan: Plan, cache_dir: Path | None) -> str | None:
    """Why a page gets no compiled preview, or None: a haystack that must be downloaded (offline builds
    stay offline) or distractors ranked by an embedding model whose vectors do not ship with the
    embedded corpora (minutes on a first compile)."""
    from needlec.compile.pipeline import default_cache_dir
    from needlec.haystacks.filters.encoders import model_id, shipped_vectors

    if uncached_download(plan, cache_dir or default_cache_dir()) is not None:
        return "its haystack is downloaded (a `url` source), and the site is built offline"
    for config in plan.configs:
        rank = getattr(config.spec.haystack.builder, "rank", None)
        if rank is not None and shipped_vectors(model_id(rank.encoder, rank.model)) is None:
            return "its distractors are ranked with an embedding model, which takes minutes on a first compile"
    return None


def collect(spec_path: Path, dataset: Path | None, cache_dir: Path | None = None) -> Benchmark:
    """Load the spec and read (or compile a preview of) its dataset."""
    plan = load_plan(spec_path, cache_dir)
    grids = grid_of(plan)
    if dataset is not None:
        return _read(Benchmark(spec_path, plan, _manifest(dataset), grids, None), dataset)
    why = no_preview(plan, cache_dir)
    if why is not None:
        empty = {"configs": {}, "content_hash": "", "sources": [], "filters": []}
        return Benchmark(spec_path, plan, empty, grids, None, unavailable=why)
    select = preview_select(plan, grids)
    with tempfile.TemporaryDirectory(prefix="needlec-site-") as tmp:
        out = Path(tmp) / plan.spec.name
        result = compile_spec(spec_path, out, CompileOptions(select=select, progress=False, cache_dir=cache_dir))
        assert result.manifest is not None
        preview = {key: sorted(values) for key, values in select.items()}
        return _read(Benchmark(spec_path, plan, result.manifest, grids, preview), out)


def _manifest(folder: Path) -> dict[str, Any]:
    return read_manifest(folder, "pass a folder written by `needlec compile`")


def _rows(path: Path, limit: int) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for i, line in enumerate(handle):
            if i >= limit:
                return
            yield orjson.loads(line)


def _read(bench: Benchmark, folder: Path) -> Benchmark:
    """Achieved depths and lengths per config, and one sample item per config (mid-depth)."""
    buffers = {config.name: config.spec.length.buffer for config in bench.plan.configs}
    for name, info in bench.manifest["configs"].items():
        pairs: list[tuple[float, float]] = []
        lengths: list[tuple[int, int]] = []
        buffer = buffers.get(name, 0)  # tokens the spec keeps free below each length: not part of its target
        candidates: list[dict[str, Any]] = []
        for entry in info["files"]:
            for item in _rows(folder / entry["path"], ROWS_READ_PER_FILE):
                pairs.extend((n["target_depth_percent"], n["depth_percent"]) for n in item["needles"])
                counted = item["prompt_tokens"] if item.get("length_counted") == "prompt" else item["context_tokens"]
                if item.get("length_reserve") == "max_new_tokens":  # RULER's rule: the reply's budget counts
                    counted += item.get("max_new_tokens", 0)
                lengths.append((item["context_length"] - buffer, counted))
                if entry is info["files"][0]:
                    candidates.append(item)
        bench.depths[name] = pairs
        bench.lengths_achieved[name] = lengths
        if candidates and len(bench.samples) < SAMPLES:
            bench.samples.append(_middle(candidates))
    return bench


def _middle(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The item of the smallest length whose depth is nearest the middle of the grid."""
    smallest = min(i["context_length"] for i in items)
    pool = [i for i in items if i["context_length"] == smallest]
    depths = sorted(Counter(i["depth_percent"] for i in pool))
    middle = depths[len(depths) // 2]
    return next(i for i in pool if i["depth_percent"] == middle)
