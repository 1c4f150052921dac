"""Where RULER contexts end: on a whole sentence, never inside a key-value sentence or a word.

A 4K slice of every task of the shipped spec (`length=4096`, `repeat=0`) is compiled once with the
real pipeline and tokenizer; the checks read the rendered context only. The spec asks for windows
whose both ends are boundaries (`placement.edges: boundary`), so no context may end inside a
sentence, a key-value statement or a word.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec

ROOT = Path(__file__).resolve().parents[1]
KEY_VALUE = ("niah_multikey_1", "niah_multikey_2", "niah_multikey_3", "niah_multivalue")
SENTENCE_HAYSTACKS = (
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    *KEY_VALUE,
    "niah_multiquery",
    "vt",
    "passkey",
)
KV_START = "A secret "
KV_SENTENCE = re.compile(r"A secret (?:number|code)s? filed under \S+ is \S+?\.")
SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`specs/ruler.yaml` at 4096 tokens, repeat 0: every task."""
    out = tmp_path_factory.mktemp("ruler-4k") / "out"
    select = {"length": {"4096"}, "repeat": {"0"}}
    compile_spec(ROOT / "specs" / "ruler.yaml", out, CompileOptions(select=select, progress=False))
    return out


def _contexts(dataset: Path, config: str) -> list[str]:
    rows = (dataset / "data" / config / "cl100k_base.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for row in rows:
        item: dict[str, Any] = json.loads(row)
        span = item["context_span"]
        out.append(str(item["messages"][span["message"]]["content"][span["start"] : span["end"]]))
    return out


def test_the_slice_holds_every_task(dataset: Path) -> None:
    configs = {p.name for p in (dataset / "data").iterdir()}
    assert set(SENTENCE_HAYSTACKS) | {"cwe", "fwe", "qa_1", "qa_2", "rag_chunk"} == configs


def test_no_key_value_context_ends_on_a_cut_sentence(dataset: Path) -> None:
    cut = []
    for config in KEY_VALUE:
        for context in _contexts(dataset, config):
            tail = context.rstrip()
            last = tail.rfind(KV_START)
            # the last key-value sentence that starts in the context must also end in it
            if last >= 0 and not KV_SENTENCE.match(tail, last):
                cut.append((config, tail[last:][:80]))
    assert not cut, cut


def test_sentence_haystacks_end_on_a_whole_sentence(dataset: Path) -> None:
    cut = [
        (config, context.rstrip()[-60:])
        for config in SENTENCE_HAYSTACKS
        for context in _contexts(dataset, config)
        if not SENTENCE_END.search(context.rstrip())
    ]
    assert not cut, cut
