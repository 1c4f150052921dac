"""Compile speed of the placement engine against re-encoding the same outputs with tiktoken.

Compiles a fixed grid (N samples at each of 4K, 32K and 128K tokens on cl100k_base, depths
spread over 0..100) with the real pipeline, several times, and prints the median samples/s, MB/s
and peak RSS. In the same run it times tiktoken encoding every output context once, which is
what a compiler that re-tokenizes each sample must at least spend.

Each grid is compiled once per `--jobs` value (default 1 and 2) and the speed-up over the first
is printed. The marginal cost of a 128K item is the time difference between compiling 2N and N
samples at 128K, divided by N (fixed costs such as indexing cancel out). Peak RSS is reported for
the parent process and, separately, for the largest worker.

    python benchmarks/compile_speed.py [--samples 100] [--runs 3] [--jobs 1,2] [--lengths 4000,32000,128000]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.tokenizer import _tiktoken

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (4000, 32000, 128000)


def write_spec(folder: Path, samples: int, lengths: tuple[int, ...]) -> Path:
    spec = folder / f"bench-{'-'.join(map(str, lengths))}.yaml"
    spec.write_text(
        f"extends: {ROOT / 'specs' / 'niah.yaml'}\n"
        "tokenizers: [cl100k_base]\n"
        f"grid:\n  lengths: {list(lengths)}\n"
        f"  depths: {{start: 0, stop: 100, count: {samples}}}\n"
        "variants: null\n",
        encoding="utf-8",
    )
    return spec


def contexts_of(out: Path) -> list[str]:
    contexts = []
    for path in sorted((out / "data").rglob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                item = json.loads(line)
                span = item["context_span"]
                contexts.append(item["messages"][span["message"]]["content"][span["start"] : span["end"]])
    return contexts


def compile_seconds(folder: Path, samples: int, lengths: tuple[int, ...], jobs: int, runs: int) -> float:
    """Median seconds of `runs` compiles (after one warm-up) of a grid."""
    spec = write_spec(folder, samples, lengths)
    out = folder / "out"
    options = CompileOptions(progress=False, jobs=jobs, cache_dir=folder / "cache")
    compile_spec(spec, out, options)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        compile_spec(spec, out, options)
        times.append(time.perf_counter() - start)
    shutil.rmtree(out)
    return statistics.median(times)


def measure(
    folder: Path, lengths: tuple[int, ...], args: argparse.Namespace, jobs: int
) -> tuple[float, float, int, int]:
    """Median compile seconds, median re-encode seconds, items and bytes for one grid."""
    spec = write_spec(folder, args.samples, lengths)
    out = folder / "out"
    options = CompileOptions(progress=False, jobs=jobs, cache_dir=folder / "cache")
    compile_spec(spec, out, options)  # warm-up: tokenizer tables and the embedded corpus
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        result = compile_spec(spec, out, options)
        times.append(time.perf_counter() - start)
    size = sum(p.stat().st_size for p in (out / "data").rglob("*.jsonl"))
    contexts = contexts_of(out)
    encoder = _tiktoken("cl100k_base")
    encode_times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        for context in contexts:
            encoder.encode(context)
        encode_times.append(time.perf_counter() - start)
    shutil.rmtree(out)
    return statistics.median(times), statistics.median(encode_times), result.items, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100, help="samples per length (default 100)")
    parser.add_argument("--runs", type=int, default=3, help="timed compiles; the median is reported")
    parser.add_argument("--jobs", default="1,2", help="comma-separated worker counts to compare (default 1,2)")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="comma-separated grid lengths")
    parser.add_argument("--no-marginal", action="store_true", help="skip the marginal cost of a 128K item")
    args = parser.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    lengths = tuple(int(n) for n in args.lengths.split(","))
    grids = [(length,) for length in lengths] + ([lengths] if len(lengths) > 1 else [])
    print(f"{args.samples} samples per length on cl100k_base, jobs {jobs}, median of {args.runs} runs")
    print("whole compiles, including loading the spec, the corpus and indexing the haystack once:")
    head = f"{'grid':>16} {'jobs':>4} {'samples/s':>10} {'MB/s':>8} {'ms/sample':>10} {'re-encode ms':>13} {'ratio':>7}"
    print(f"{head} {'speed-up':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for grid in grids:
            first = None
            for j in jobs:
                compile_s, encode_s, n, size = measure(Path(tmp), grid, args, j)
                first = first or compile_s
                label = "+".join(f"{v // 1000}K" for v in grid)
                print(
                    f"{label:>16} {j:>4} {n / compile_s:>10,.0f} {size / compile_s / 1e6:>8,.1f} "
                    f"{compile_s / n * 1000:>10.2f} {encode_s / n * 1000:>13.2f} {compile_s / encode_s:>7.3f} "
                    f"{first / compile_s:>8.2f}x"
                )
        if not args.no_marginal:
            n = args.samples
            for j in jobs:
                small = compile_seconds(Path(tmp), n, (128000,), j, args.runs)
                large = compile_seconds(Path(tmp), 2 * n, (128000,), j, args.runs)
                print(f"marginal cost of a 128K item, jobs {j}: {(large - small) / n * 1000:.2f} ms ({n} vs {2 * n})")
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: parent {parent:,.0f} MB, largest worker {worker:,.0f} MB")


if __name__ == "__main__":
    main()
