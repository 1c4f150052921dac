"""Marginal CPU per item, per family and task, at several lengths, against Kamradt NIAH.

Each row loads a shipped spec (one config of it), prepares its haystacks once, and then builds items
in-process at each length with `build_item`, the way a compile's workers do. Only the items are timed
(CPU seconds, `time.process_time`): haystack preparation, filters and indexing are fixed costs that a
compile pays once per haystack, and so are the caches that fill over a compile's first items (`--warm`
items are built untimed at each length first), and each view is prepared for as many items as a compile
of the whole config builds over it (`Layout.prepare`: RAG-chunk counts its chunk table ahead), so what
remains is the marginal cost of one more item. The figure is the median over the items; the ratio column
divides it by Kamradt NIAH's median at the same length with the same tokenizer, its items built in turn
with the row's (one of each, then the next, which goes first alternating), so that the machine's speed,
which can drift by half within minutes, moves both alike. The draw column is the row's needle draw alone
at the longest length (the kind's `draw_at`, before any layout), against the same NIAH item: a floor
under the row's ratio that no layout removes (FWE draws RULER's whole Zipf stream of coded words for
each item). The two compile columns time one more item at the longest length as a compile's worker takes
it (`compile_item`: the build, the length and depth checks, the overlap figures against the budgets and
the dataset line), against NIAH's the same way: what a user pays per item, where the build is what the
layout engine costs (`--no-compile` leaves them out).

    python benchmarks/families.py [--lengths 4096,32768,131072] [--items 5] [--warm 20] [--only ruler]
        [--hf PATH/tokenizer.json] [--no-compile]

`--hf` adds a row per family for a Hugging Face `tokenizer.json` (its ratio is against NIAH with
the same file). Two more parts run in the same invocation when asked for, each by its own script in
a fresh process: `--jobs 1,2,0` times whole compiles on that many worker processes (0 = every core)
with `benchmarks/scaling.py`, and `--ruler PATH` (a checkout of NVIDIA/RULER, with `--ruler-python`
an interpreter that has its generator's dependencies) compares needlec with RULER's own generator
at the same lengths with `benchmarks/ruler_compare.py`. OpenCompass's NeedleBench generator is not
compared: it reads its haystack files from the Hugging Face hub, which an offline machine cannot.

    python benchmarks/families.py --jobs 1,2,0 --ruler PATH/TO/RULER --ruler-python PATH/TO/python
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from needlec.compile.items import build_item, draw_item
from needlec.compile.pipeline import Prepared, Work, compile_item, default_cache_dir, prepare_layouts, prepare_work
from needlec.compile.plan import load_plan
from needlec.kinds.ruler.kind import TaskName

ROOT = Path(__file__).resolve().parents[1]
WARM = 20
"""Items built at each length before the timed ones. Some per-haystack work fills lazily over the first items
rather than in the first: RULER QA's name checks scan the haystack until its search table is built, and the
prompt's and seams' memos fill. A compile pays these once."""


COMPILE_WARM = 3
"""Items taken through `compile_item` untimed before the timed ones of the compile columns."""


@dataclass(frozen=True)
class Row:
    """One measured family or task: a spec, one of its configs and the label printed."""

    label: str
    spec: str
    config: str | None = None


ROWS = [
    Row("niah (Kamradt)", "specs/niah.yaml", "single"),
    *(Row(f"ruler {task}", "specs/ruler.yaml", task) for task in get_args(TaskName)),
    Row("needlebench s-rt en", "specs/needlebench/needlebench-4k.yaml", "s-rt-en-after"),
    Row("needlebench s-rt zh", "specs/needlebench/needlebench-4k.yaml", "s-rt-zh-after"),
    Row("needlebench m-rt en", "specs/needlebench/needlebench-4k.yaml", "m-rt-en-after"),
    Row("needlebench m-rt zh", "specs/needlebench/needlebench-4k.yaml", "m-rt-zh-after"),
    Row("needlebench m-rs en", "specs/needlebench/needlebench-4k.yaml", "m-rs-en-after"),
    Row("needlebench m-rs zh", "specs/needlebench/needlebench-4k.yaml", "m-rs-zh-after"),
    Row("mlneedle passages", "specs/mlneedle-pilot.yaml", None),
    Row("atc in haystack", "specs/atc/atc-v1-mc-haystack.yaml", None),
    Row("nolima", "specs/nolima.yaml", "main"),
]


def hf_spec(folder: Path, row: Row, tokenizer_json: Path) -> Path:
    """A spec extending the row's spec with one Hugging Face tokenizer instead of its own."""
    path = folder / f"{Path(row.spec).stem}-hf.yaml"
    path.write_text(
        f"extends: {ROOT / row.spec}\ntokenizers: [{{type: hf, path: {tokenizer_json}, name: hf}}]\n",
        encoding="utf-8",
    )
    return path


class Runner:
    """One config of a spec with its haystacks prepared once: builds fresh items at any length."""

    def __init__(self, spec: Path, config_name: str | None) -> None:
        cache = default_cache_dir()
        self.plan = load_plan(spec, cache)
        self.config = self.plan.config(config_name) if config_name else self.plan.configs[0]
        self.prepared = Prepared(self.plan, cache)
        ids = [h.id for h in self.prepared.haystacks(self.config.spec)]
        keys = list(self.plan.keys(self.config, ids))
        self.first = keys[0]
        # the items a compile of the config builds over the first key's view, which its layout is prepared for
        self.served = sum((k.haystack, k.tokenizer) == (self.first.haystack, self.first.tokenizer) for k in keys)
        self.depths = self.config.depth_points()
        self.drawn = 0  # repeats used so far: every build is a fresh item

    def _work(self, length: int, items: int) -> list[Work]:
        """`items` fresh items at `length` (each a repeat not drawn before), the grid's depths in turn."""
        keys = [
            dataclasses.replace(
                self.first, length=length, depth=self.depths[i % len(self.depths)], repeat=self.drawn + i
            )
            for i in range(items)
        ]
        self.drawn += items
        work = prepare_work(self.prepared, [(self.config, keys)])
        # the view prepared as a compile of the whole config prepares it (`Layout.prepare`), not for these few keys
        _, key, view, kind, _ = work[0]
        prepare_layouts(self.config, kind, [(view, key, self.served)])
        return work

    def builds(self, length: int, items: int, warm: int = 1) -> list[tuple[Callable[[], object], Callable[[], object]]]:
        """`items` item builds at `length`, ready to time, each with its needle draw alone (`warm` more are
        built first: lazy per-haystack work such as boundary lists, piece counts and search tables is a
        fixed cost that a compile pays once, not a per-item one)."""
        name = self.plan.spec.name
        thunks = [
            (
                functools.partial(build_item, name, self.config, key, view, kind),
                functools.partial(draw_item, self.config, key, view, kind),
            )
            for _, key, view, kind, _ in self._work(length, items + warm)
        ]
        for build, _ in thunks[:warm]:
            build()
        return thunks[warm:]

    def compiles(self, length: int, items: int, warm: int = COMPILE_WARM) -> list[Callable[[], object]]:
        """`items` fresh items at `length` as a compile's worker takes each (`compile_item`: the build, the
        checks, the overlap figures and the dataset line), ready to time, after `warm` more taken untimed (the
        checks' and the overlap's own memos fill; the builds' caches are warm from `builds`)."""
        name = self.plan.spec.name
        thunks = [
            functools.partial(compile_item, name, self.config, key, view, kind, False, sample)
            for _, key, view, kind, sample in self._work(length, items + warm)
        ]
        for thunk in thunks[:warm]:
            thunk()
        return thunks[warm:]


def timed(build: Callable[[], object]) -> float:
    began = time.process_time()
    build()
    return time.process_time() - began


def interleaved(
    pairs: Iterable[tuple[Callable[[], object], Callable[[], object]]],
    after: Callable[[int], None] = lambda i: None,
) -> tuple[float, float]:
    """The median CPU seconds of each side of the pairs, timed in turn (row, NIAH, NIAH, row, row, ...) so
    that a machine whose speed drifts moves both alike and neither always runs right after the other (in a
    fixed order, NIAH against itself measured 1.05-1.10); `after(i)` runs after pair i's row is timed."""
    mine, theirs = [], []
    for i, (own, niah) in enumerate(pairs):
        if i % 2:  # which of the two goes first alternates: the one after the other's runs colder
            theirs.append(timed(niah))
        mine.append(timed(own))
        after(i)
        if not i % 2:
            theirs.append(timed(niah))
    return statistics.median(mine), statistics.median(theirs)


def measure(
    row: Runner, base: Runner, lengths: list[int], items: int, warm: int = 1
) -> dict[int, tuple[float, float, float]]:
    """Median CPU seconds of one item build per length for a row and for Kamradt NIAH, built in turn
    (`interleaved`), and of the row's needle draw alone (`draw_item`: what the kind draws before any layout,
    timed again after each build, which it repeats exactly)."""
    return {length: _measure_at(row, base, length, items, warm) for length in lengths}


def _measure_at(row: Runner, base: Runner, length: int, items: int, warm: int) -> tuple[float, float, float]:
    builds = row.builds(length, items, warm)
    draws: list[float] = []
    own, niah = interleaved(
        zip([b for b, _ in builds], [b for b, _ in base.builds(length, items, warm)], strict=True),
        lambda i: draws.append(timed(builds[i][1])),
    )
    return own, niah, statistics.median(draws)


def measure_compiles(row: Runner, base: Runner, length: int, items: int) -> tuple[float, float]:
    """Median CPU seconds of one more item as a compile's worker takes it (`compile_item`), for the row and
    for Kamradt NIAH in turn, at `length` (after `measure`, whose builds warmed the caches)."""
    return interleaved(zip(row.compiles(length, items), base.compiles(length, items), strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="4096,32768,131072")
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument(
        "--warm",
        type=int,
        default=WARM,
        help=f"items built at each length before the timed ones (default {WARM}): per-haystack caches fill first",
    )
    parser.add_argument("--only", default="", help="only rows whose label contains this text")
    parser.add_argument(
        "--no-compile",
        dest="compile",
        action="store_false",
        help="leave out the two compile columns (one more item at the longest length as a compile's worker "
        "takes it: build, checks, overlap figures, dataset line; in ms and against NIAH's)",
    )
    parser.add_argument("--hf", type=Path, help="also measure with this tokenizer.json")
    parser.add_argument("--jobs", help="also time whole compiles on these worker counts, e.g. 1,2,0 (scaling.py)")
    parser.add_argument("--ruler", type=Path, help="also compare with RULER's generator in this checkout")
    parser.add_argument("--ruler-python", default=sys.executable, help="the interpreter that runs RULER's generator")
    parser.add_argument("--ruler-runs", type=int, default=1, help="paired runs per RULER cell (default 1)")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    rows = [r for r in ROWS if args.only in r.label or r.label.startswith("niah (")]
    tokenizers: list[tuple[str, Path | None]] = [("spec", None)]
    if args.hf:
        tokenizers.append(("hf", args.hf.resolve()))
    header = (
        "family / task".ljust(26)
        + "".join(f"{n:>14}" for n in lengths)
        + "".join(f"{'x' + str(n):>10}" for n in lengths)
        + f"{'draw x' + str(lengths[-1]):>14}"
        + (f"{'compile ' + str(lengths[-1]):>16}{'compile x':>11}" if args.compile else "")
    )
    with tempfile.TemporaryDirectory() as tmp:
        for label, tokenizer_json in tokenizers:
            print(f"\n== tokenizer: {label} (median CPU ms per item; x = ratio to Kamradt NIAH, interleaved)")
            print(header)
            niah = ROWS[0]
            base = Runner(hf_spec(Path(tmp), niah, tokenizer_json) if tokenizer_json else ROOT / niah.spec, niah.config)
            for row in rows:
                spec = hf_spec(Path(tmp), row, tokenizer_json) if tokenizer_json else ROOT / row.spec
                try:
                    runner = Runner(spec, row.config)
                    got = measure(runner, base, lengths, args.items, args.warm)
                    compiled = measure_compiles(runner, base, lengths[-1], args.items) if args.compile else None
                except Exception as exc:  # a row that cannot run here is reported, not fatal
                    print(f"{row.label:<26}  failed: {type(exc).__name__}: {str(exc)[:80]}")
                    continue
                cells = "".join(f"{got[n][0] * 1000:>14.1f}" for n in lengths)
                ratios = "".join(f"{got[n][0] / got[n][1]:>10.2f}" for n in lengths)
                longest = got[lengths[-1]]
                line = f"{row.label:<26}{cells}{ratios}{longest[2] / longest[1]:>14.2f}"
                if compiled is not None:
                    line += f"{compiled[0] * 1000:>16.1f}{compiled[0] / compiled[1]:>11.2f}"
                print(line, flush=True)
    status = 0
    here = Path(__file__).resolve().parent
    if args.jobs:
        print(f"\n== whole compiles on {args.jobs} worker processes (benchmarks/scaling.py)", flush=True)
        scaling = [sys.executable, str(here / "scaling.py"), "--jobs", args.jobs]
        status |= subprocess.run(scaling, check=False).returncode
    if args.ruler:
        print("\n== against RULER's generator (benchmarks/ruler_compare.py)", flush=True)
        compare = [sys.executable, str(here / "ruler_compare.py"), "--ruler", str(args.ruler)]
        compare += ["--python", args.ruler_python, "--lengths", args.lengths, "--runs", str(args.ruler_runs)]
        status |= subprocess.run(compare, check=False).returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
