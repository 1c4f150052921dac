"""The benchmark catalogue: one card per benchmark, shown on the home page and the Benchmarks index."""

from __future__ import annotations

import re

from needlec.site.collect import Benchmark
from needlec.site.markdown import cell, code, short_number


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return (match.group(1) if match else flat) or "No description."


FAMILY_PAGES = {"atc": "atc.md", "mlneedle": "mlneedle.md", "needlebench": "needlebench-data.md", "ruler": "ruler.md"}
"""The hand-written page of each family that has one (under the docs folder)."""


def card(bench: Benchmark, link: str, root: str = "") -> str:
    """One catalogue card; `root` leads from the page that shows it to the docs folder."""
    from needlec.compile.size import human_bytes, plan_size
    from needlec.site.benchmark_page import spec_file

    spec = bench.plan.spec
    lengths = bench.all_lengths
    span = (
        short_number(lengths[0])
        if len(lengths) == 1
        else f"{short_number(lengths[0])}–{short_number(lengths[-1])} ({len(lengths)} lengths)"
    )
    depths = sorted({d for g in bench.grids for d in g.depths})
    tokenizers = sorted({t for g in bench.grids for t in g.tokenizers})
    facts = [
        f"**Grid:** {bench.total_items:,} items, {len(bench.grids)} config{'s' if len(bench.grids) != 1 else ''} "
        f"× {len(tokenizers)} tokenizer{'s' if len(tokenizers) != 1 else ''}",
        f"**Lengths:** {span}, {len(depths)} depth{'s' if len(depths) != 1 else ''}",
        f"**Languages:** {', '.join(spec.languages)}",
        f"**Size:** about {human_bytes(plan_size(bench.plan, {}).bytes)} for the whole benchmark",
        f"**Compile:** `needlec compile {spec_file(bench)}`",
    ]
    family = spec.family or spec.name
    if family in FAMILY_PAGES:
        facts.append(f"**Family:** [{cell(family)} page]({root}{FAMILY_PAGES[family]})")
    body = "<br>\n    ".join(facts)
    return (
        f"-   **[{cell(spec.title)}]({link})** {code(spec.name)}\n\n    ---\n\n"
        f"    {cell(_first_sentence(spec.description))}\n\n    {body}\n"
    )


def catalogue(benches: list[Benchmark], prefix: str) -> str:
    """Material "grid cards"; `prefix` is the folder of the benchmark pages relative to the page."""
    if not benches:
        return "No benchmark specs were found.\n"
    root = "../../" if not prefix else ""  # the benchmarks index sits two folders below the docs folder
    cards = "\n".join(card(b, f"{prefix}{b.name}.md", root) for b in benches)
    return f'<div class="grid cards needlec-catalogue" markdown>\n\n{cards}\n</div>\n'


def benchmarks_index(benches: list[Benchmark]) -> str:
    intro = (
        "Every benchmark below is generated from a spec shipped in `specs/`. Each page shows the "
        "grid, needles, prompt templates, haystack sources, filters, overlap statistics, plots of "
        "the length and depth distributions, sample items and how to get the data."
    )
    return f"# Benchmarks\n\n{intro}\n\n{catalogue(benches, '')}"
