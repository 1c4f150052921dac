"""Compile speed of the placement engine against re-encoding the same outputs with tiktoken.

Compiles a fixed grid (N samples at each of 4K, 32K and 128K tokens on cl100k_base, depths
spread over 0..100) with the real pipeline, several times, and prints the median samples/s, MB/s
and peak RSS. In the same run it times tiktoken encoding every output context once, which is
what a compiler that re-tokenizes each sample must at least spend.

    python benchmarks/compile_speed.py [--samples 100] [--runs 3] [--jobs 1]
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


def measure(folder: Path, lengths: tuple[int, ...], args: argparse.Namespace) -> tuple[float, float, int, int]:
    """Median compile seconds, median re-encode seconds, items and bytes for one grid."""
    spec = write_spec(folder, args.samples, lengths)
    out = folder / "out"
    options = CompileOptions(progress=False, jobs=args.jobs, cache_dir=folder / "cache")
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
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for the compile")
    args = parser.parse_args()
    print(f"{args.samples} samples per length on cl100k_base, jobs={args.jobs}, median of {args.runs} runs")
    print("whole compiles, including loading the spec, the corpus and indexing the haystack once:")
    print(f"{'grid':>22} {'samples/s':>10} {'MB/s':>8} {'ms/sample':>10} {'re-encode ms/sample':>20} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for lengths in [(length,) for length in LENGTHS] + [LENGTHS]:
            compile_s, encode_s, n, size = measure(Path(tmp), lengths, args)
            label = "+".join(f"{v // 1000}K" for v in lengths)
            print(
                f"{label:>22} {n / compile_s:>10,.0f} {size / compile_s / 1e6:>8,.1f} "
                f"{compile_s / n * 1000:>10.2f} {encode_s / n * 1000:>20.2f} {compile_s / encode_s:>7.3f}"
            )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss_mb:,.0f} MB")


if __name__ == "__main__":
    main()
