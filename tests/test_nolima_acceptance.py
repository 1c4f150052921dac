"""Issue 16's acceptance scan of the shipped NoLiMa spec, re-checked from compiled output alone.

Every config that has a length from 500 to 2,000 tokens is compiled there (every case, every
haystack, three depths) and each item's window is scanned, independently of the compiler's own
checks: no content word of its W_q occurs outside the inserted texts; none of the passages known
to give a false answer is present; no word of the reviewed distractor list is present; no name of
the pool hides inside another word.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import SPECS

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.languages.names import BUILTIN_NAMES

# Function words a W_q may contain ("Leonardo da Vinci", "Vincent van Gogh"), listed by hand.
FUNCTION_WORDS = {"a", "an", "the", "of", "and", "to", "in", "on", "at", "by", "for", "with", "from", "da", "van"}

# Passages that answered questions by accident: the Bible passages (the haystack is no
# longer the Bible, so they must not occur at all) and the three the answer-candidate review
# took out of the novels.
FALSE_ANSWERS = [
    "and Lot with him, into the South",
    "you shall not eat of it",
    "could bear nothing rich",
    "sitting down out of doors to eat would inevitably make him ill",
    "DANISH SAILOR",
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nolima-acceptance") / "out"
    select = {"length": {"500", "1000", "2000"}, "depth": {"0", "40", "100"}}
    compile_spec(SPECS / "nolima.yaml", out, CompileOptions(select=select, progress=False, jobs=2))
    return out


def _items(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((folder / "data").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _haystack_text(item: dict) -> str:
    """The window without the inserted texts (targets and distractor sentences)."""
    span = item["context_span"]
    context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
    for inserted in item["needles"]:
        context = context.replace(inserted["text"], " ")
    return context


def test_the_selection_covers_every_config_with_a_short_length(compiled: Path) -> None:
    items = _items(compiled)
    configs = {i["config"] for i in items}
    # by the spec: main (500, 1000, 2000) and the 1K configs; long, hard, direct, mc and cot start at 4K+
    assert configs == {"main", "onehop", "twohop", "default-order", "inverted-order", "distractor"}
    assert {i["context_length"] for i in items if i["config"] == "main"} == {500, 1000, 2000}
    assert len({i["haystack"]["id"] for i in items}) == 5


def test_no_content_word_of_w_q_in_any_window(compiled: Path) -> None:
    for item in _items(compiled):
        words = {w.casefold() for w in re.findall(r"\w+", _haystack_text(item))}
        content = {w.casefold() for w in re.findall(r"\w+", item["values"]["w_q"])} - FUNCTION_WORDS
        assert content and not content & words, (item["id"], content & words)


def test_known_false_answers_and_reviewed_distractors_are_absent(compiled: Path) -> None:
    review = yaml.safe_load((SPECS.parent / "reviews" / "nolima-distractors.yaml").read_text(encoding="utf-8"))
    distractors = [re.compile(rf"(?<![\w'’-]){re.escape(w)}(?![\w'’-])", re.IGNORECASE) for w in review["remove"]]
    for item in _items(compiled):
        text = _haystack_text(item)
        assert not [p for p in FALSE_ANSWERS if p.casefold() in text.casefold()], item["id"]
        assert not [p.pattern for p in distractors if p.search(text)], item["id"]


def test_no_pool_name_hides_inside_another_word(compiled: Path) -> None:
    pool = [n.casefold() for n in BUILTIN_NAMES]
    where: dict[str, str] = {}  # every distinct word of every context (needles included) -> an item
    for item in _items(compiled):
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
        for word in re.findall(r"[\w'-]+", context.casefold()):
            where.setdefault(word, item["id"])
    hidden = {(word, where[word]) for word in where for n in pool if n in word and n != word}
    assert not hidden, sorted(hidden)[:10]


def test_the_card_says_which_stages_ran_and_what_they_removed(compiled: Path) -> None:
    manifest = json.loads((compiled / "manifest.json").read_text(encoding="utf-8"))
    names = [run["name"] for run in manifest["filters"]]
    assert {"literal_terms", "embedding_distractors", "answer_candidates"} <= set(names)
    card = (compiled / "README.md").read_text(encoding="utf-8")
    rows = [line for line in card.splitlines() if line.startswith("| `answer_candidates`")]
    assert rows and all("reviewed decisions applied" in r and "removed_chunks 3" in r for r in rows)
    rows = [line for line in card.splitlines() if line.startswith("| `embedding_distractors`")]
    assert rows and all("distractors 30" in r for r in rows)
