"""MLNeedle pairing and the needle's shape, checked on compiled items with this file's own code.

Pairing: configs that differ only in the needle's, the haystack's or the question's language must
ask the same needle item, and an existence item must be a negative in all of them or in none, for
each grid cell. Otherwise a language comparison would also compare different questions.

Shape: the needle passage must not give itself away by its length. A 4K slice of the shipped grid
is compiled, the passages are re-split from the context text, every passage is re-counted with
tiktoken, and the share of items whose needle is the shortest passage is measured.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.languages import mlneedle

ROOT = Path(__file__).resolve().parent.parent
MAIN = ROOT / "specs" / "mlneedle.yaml"
QUESTION = ROOT / "specs" / "mlneedle" / "mlneedle-question-language.yaml"
BY_ID = {item.id: item for item in mlneedle.load().items}


def compiled(spec: Path, out: Path, select: dict[str, set[str]]) -> list[dict[str, Any]]:
    compile_spec(spec, out, CompileOptions(select=select, progress=False))
    return [json.loads(line) for f in sorted((out / "data").rglob("*.jsonl")) for line in f.open()]


def context(row: dict[str, Any]) -> str:
    span = row["context_span"]
    return str(row["messages"][span["message"]]["content"][span["start"] : span["end"]])


def cell(row: dict[str, Any]) -> tuple[float, str, int]:
    """The grid cell without the config and the length (the baseline has its own length label)."""
    return (row["depth_percent"], row["haystack"]["id"], row["repeat"])


def check_paired(rows: list[dict[str, Any]], configs: set[str]) -> None:
    by_cell: dict[tuple[float, str, int], dict[str, tuple[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_cell[cell(row)][f"{row['config']}|{row['context_length']}"] = (
            row["values"]["needle_id"],
            row.get("expected"),
        )
        # the asked question is the packaged question of that item in the recorded language
        item = BY_ID[row["values"]["needle_id"]]
        assert row["question"] == item.question[row["languages"]["question"]]
        for needle in row["needles"]:
            if needle["role"] == "target":
                assert needle["text"] == item.passage[row["languages"]["needle"]]
    assert {row["config"] for row in rows} == configs
    for key, drawn in by_cell.items():
        assert len({needle_id for needle_id, _ in drawn.values()}) == 1, (key, drawn)
        # existence configs: negative in every language variant or in none
        assert len({exp for _, exp in drawn.values() if exp is not None}) <= 1, (key, drawn)
    # not one item for the whole slice: the pairing is per cell
    assert len({next(iter(d.values()))[0] for d in by_cell.values()}) > 1


def test_language_variants_share_the_needle_across_needle_and_haystack(tmp_path: Path) -> None:
    configs = {
        "en-en-en-exact",
        "en-ar-en-exact",
        "en-zh-en-exact",
        "en-mul-en-exact",
        "en-none-en-exact",
        "zh-en-en-exact",
        "hi-de-en-exact",
        "en-en-en-existence",
        "vi-hi-en-existence",
        "ar-none-en-existence",
    }
    rows = compiled(
        MAIN,
        tmp_path / "main",
        {"config": configs, "length": {"4000", "512"}, "depth": {"0", "50"}, "repeat": {str(r) for r in range(6)}},
    )
    check_paired(rows, configs)


def test_language_variants_share_the_needle_across_question_languages(tmp_path: Path) -> None:
    configs = {"zh-de-en", "zh-de-zh", "zh-de-ar", "en-de-hi", "zh-none-en", "zh-none-vi"}
    rows = compiled(
        QUESTION,
        tmp_path / "question",
        {"config": configs, "length": {"4000", "512"}, "depth": {"0", "50"}, "repeat": {str(r) for r in range(6)}},
    )
    check_paired(rows, configs)


LANGS = ("en", "ar", "de", "es", "hi", "vi", "zh")
HAYSTACKS = (*LANGS, "mul")


def passages(row: dict[str, Any]) -> list[str]:
    """The numbered passages of the context, split and unnumbered here: `[i] text`, one per line."""
    lines = context(row).split("\n")
    numbered = [line for line in lines if re.match(r"\[\d+\] ", line)]
    assert [int(line[1 : line.index("]")]) for line in numbered] == list(range(len(numbered)))
    return [line[line.index("] ") + 2 :] for line in numbered]


@pytest.mark.slow
def test_the_needle_is_rarely_the_shortest_passage(tmp_path: Path) -> None:
    """At 4K, over every needle language and every haystack, the needle passage is the shortest of
    its context in at most 15% of the items (chance, with 20-odd passages, is about 4%)."""
    enc = tiktoken.get_encoding("o200k_base")
    configs = {f"{n}-{h}-en-exact" for n in LANGS for h in HAYSTACKS}
    rows = compiled(
        MAIN,
        tmp_path / "slice",
        {"config": configs, "length": {"4000"}, "depth": {"50"}, "repeat": {str(r) for r in range(8)}},
    )
    assert len(rows) == len(configs) * 8
    shortest = 0
    for row in rows:
        parts = passages(row)
        item = BY_ID[row["values"]["needle_id"]]
        needle = item.passage[row["languages"]["needle"]]
        assert parts.count(needle) == 1, row["id"]
        assert len(parts) >= 15, row["id"]  # a 4K context holds 20-odd whole passages
        lengths = [len(enc.encode(p, disallowed_special=())) for p in parts]
        mine = len(enc.encode(needle, disallowed_special=()))
        shortest += mine <= min(lengths)
    assert shortest / len(rows) <= 0.15, (shortest, len(rows))
