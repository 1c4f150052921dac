"""Time ATC item generation (graph, uniqueness check, rendering) over the v2 power-of-two sweep.

Run: `python benchmarks/atc_generate.py` - prints one row per topology and step count with the
milliseconds per question (four CircularEval items, four few-shot examples) and the length of the
rendered facts in characters.
"""

from __future__ import annotations

import random
import time

from needlec.kinds.atc.graph import TOPOLOGIES, GraphParams, NameSampler, generate
from needlec.kinds.atc.render import render_items
from needlec.languages.kinship import load_pack


def main(repeats: int = 5) -> None:
    """Print a table of generation times per language, topology and step count."""
    print("lang  topology  steps  ms/question  chars")
    for lang in ("en", "zh"):
        pack = load_pack(lang)
        for topology in TOPOLOGIES:
            for steps in [2**k for k in range(1, 10)]:
                start = time.perf_counter()
                chars = 0
                for seed in range(repeats):
                    rng = random.Random(seed)
                    names = NameSampler(pack.names, rng)
                    graph = generate(GraphParams(steps=steps, topology=topology), pack, rng, names)
                    items = render_items(graph, pack, rng, names, shots=4, shot_style="reasoning")
                    chars += sum(len(s.text) for s in items[0].needles)
                ms = (time.perf_counter() - start) * 1000 / repeats
                print(f"{lang:4}  {topology:8}  {steps:5}  {ms:11.1f}  {chars // repeats:5}")


if __name__ == "__main__":
    main()
