"""Shared helpers for the filter tests: small specs over a planted haystack, and running them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

QUESTION = "What is the best thing to do on a rainy afternoon in Lisbon?"
ANSWER = "yellow tram"
NEEDLE = (
    "The best thing to do on a rainy afternoon in Lisbon is to ride the old yellow tram up the hill "
    "and drink hot chocolate."
)
KEY_QUESTION = "Where is the spare key hidden?"

# Sentences that give the answers away, planted between paragraphs of real prose.
PLANT_TRAM = (
    "Whenever it rained in the afternoon, Naomi said the best thing to do was to ride the yellow tram up the hill."
)
PLANT_KEY = "The spare key, Boaz told the reapers, was hidden under the blue flowerpot by the gate."
FACTS = {
    QUESTION: [("yellow tram", "ride the yellow tram")],
    KEY_QUESTION: [("blue flowerpot", "under the blue flowerpot")],
}


def prose(book: str = "Ruth") -> str:
    from needlec.haystacks.sources.builtin import _web_bible

    documents, _ = _web_bible()
    return next(d.text for d in documents if d.id == book)


def plant(text: str, sentences: list[str]) -> str:
    """Insert each sentence after a sentence end of the text, spread evenly through it."""
    import re

    ends = [m.end() for m in re.finditer(r"[.!?] (?=[A-Z])", text)]
    spots = [ends[len(ends) * (i + 1) // (len(sentences) + 1)] for i in range(len(sentences))]
    for spot, sentence in sorted(zip(spots, sentences, strict=True), reverse=True):
        text = text[:spot] + sentence + " " + text[spot:]
    return text


def write_spec(folder: Path, haystack: str, filters: list[dict[str, Any]], **extra: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hay.txt").write_text(haystack, encoding="utf-8")
    spec: dict[str, Any] = {
        "name": "filtered",
        "title": "Filtered haystack",
        "tokenizers": ["cl100k_base"],
        "haystack": {"sources": [{"type": "files", "paths": ["hay.txt"], "filters": filters}]},
        "grid": {"lengths": [300, 600], "depths": [0, 50, 100]},
        "needle": {"needles": [NEEDLE], "question": QUESTION, "answers": [ANSWER]},
        "prompt": {"user": "{{ context }}\n\nQuestion: {{ question }}"},
        "scoring": {"metric": "contains"},
    }
    spec.update(extra)
    path = folder / "spec.json"
    path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return path


def filtered(spec: Path, cache: Path) -> tuple[str, Any]:
    """The filtered text of the spec's only document, and the filter stage that made it."""
    from needlec.compile.pipeline import Prepared
    from needlec.compile.plan import load_plan

    plan = load_plan(spec, cache)
    prepared = Prepared(plan, cache)
    documents = prepared.documents(plan.configs[0].spec)
    assert len(documents) == 1
    return documents[0].text, prepared.filters


def replay(original: str, records: list[dict[str, Any]]) -> str:
    """Apply audit records (non-overlapping, in input coordinates) to the original text."""
    out, position = [], 0
    for record in sorted(records, key=lambda r: r["start"]):
        assert record["start"] >= position
        out.append(original[position : record["start"]])
        assert original[record["start"] : record["end"]] == record["removed"]
        out.append(record["replacement"])
        position = record["end"]
    out.append(original[position:])
    return "".join(out)


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
