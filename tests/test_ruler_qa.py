"""RULER QA 1 / QA 2, RAG-chunk and passkey from the shipped spec, checked by reading the context.

The QA checks split the rendered context into its numbered documents on their own and look for
the answer and the question's subject in each, instead of trusting what the item records. The
last test compiles the filler and word-list haystacks with `length.counted: prompt` and counts
the rendered prompt with each tokenizer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import yaml

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.scoring.api import score
from needlec.scoring.responses import Response

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = [1500, 3000]
REPEATS = 2
DEPTHS = [0, 25, 50, 75, 100]
QA = ["qa_1", "qa_2", "rag_chunk"]
DOCUMENT = re.compile(r"^(Document|Retrieved chunk) (\d+):\n", re.MULTILINE)


def _spec(folder: Path, configs: list[str], **overrides: Any) -> Path:
    spec = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    spec["grid"]["lengths"] = LENGTHS
    spec["grid"]["repeats"] = REPEATS
    for name in configs:
        grid = spec["variants"]["task"][name].get("grid")
        if grid:
            grid["repeats"] = REPEATS
    spec["variants"]["task"] = {k: v for k, v in spec["variants"]["task"].items() if k in configs}
    spec.update(overrides)
    path = folder / "ruler.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ruler_qa")
    out = folder / "out"
    compile_spec(_spec(folder, [*QA, "passkey"]), out, CompileOptions(progress=False))
    return out


def _items(dataset: Path, config: str, tokenizer: str = "cl100k_base") -> list[dict[str, Any]]:
    lines = (dataset / "data" / config / f"{tokenizer}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _prompt_tokens(encoding: tiktoken.Encoding, item: dict[str, Any]) -> int:
    """The prompt RULER's rule counts (the shipped spec's `length.reserve`): the user message and the
    answer prefix, encoded apart as the spec counts messages without a chat template."""
    assert len(item["messages"]) == 1 and item["length_reserve"] == "max_new_tokens"
    return len(encoding.encode(item["messages"][0]["content"])) + len(encoding.encode(item["answer_prefix"]))


def _context(item: dict[str, Any]) -> str:
    span = item["context_span"]
    return str(item["messages"][span["message"]]["content"][span["start"] : span["end"]])


def _documents(context: str) -> list[tuple[int, str]]:
    """(shown number, text) of each numbered document, split on the labels alone."""
    marks = list(DOCUMENT.finditer(context))
    docs = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(context)
        docs.append((int(mark.group(2)), context[mark.end() : end].strip()))
    return docs


@pytest.mark.parametrize("config", QA)
def test_answer_only_in_the_gold_document_and_lengths_exact(dataset: Path, config: str) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    items = _items(dataset, config)
    assert len(items) == len(LENGTHS) * len(DEPTHS) * REPEATS
    for item in items:
        context = _context(item)
        assert _prompt_tokens(encoding, item) + item["max_new_tokens"] == item["context_length"]
        docs = _documents(context)
        assert [n for n, _ in docs] == list(range(1, len(docs) + 1))
        (aliases,) = item["answers"]
        holding = [n for n, text in docs if any(a.casefold() in text.casefold() for a in aliases)]
        gold = item["structure"]["documents"]["gold_index"]
        # the document that holds the answer is the last hop's gold document, and no other
        assert holding == [gold[-1]]
        # the question's subject is named only in the first hop's gold document
        subject = item["structure"]["subject"]
        assert subject in item["question"]
        naming = [n for n, text in docs if subject.casefold() in text.casefold()]
        assert naming == [gold[0]]
        if config == "qa_2":
            bridge = item["structure"]["bridge"]
            assert bridge not in item["question"]
            assert [n for n, text in docs if bridge in text] == sorted(gold)
        # the question stands before and after the documents
        user = item["messages"][-1]["content"]
        assert user.count(item["question"]) == 2
        assert user.index(item["question"]) < item["context_span"]["start"]
        assert user.rindex(item["question"]) >= item["context_span"]["end"]


@pytest.mark.parametrize("config", QA)
def test_gold_positions_follow_the_grid_and_spread(dataset: Path, config: str) -> None:
    slots: dict[float, set[int]] = {}
    for item in _items(dataset, config):
        docs = _documents(_context(item))
        count = len(docs)
        first_gold = item["structure"]["documents"]["gold_index"][0]
        # by hand: depth 0 -> document 1, 100 -> the last, 50 -> the middle one (rounded)
        expected = {0: 1, 25: round((count - 1) / 4) + 1, 50: round((count - 1) / 2) + 1, 100: count}
        depth = item["depth_percent"]
        if depth in expected:
            assert first_gold == expected[depth], (depth, count, first_gold)
        slots.setdefault(depth, set()).add(first_gold)
    # five grid depths give five distinct slot groups, not one slot for every item
    flat = {s for group in slots.values() for s in group}
    assert len(slots) == len(DEPTHS) and len(flat) >= len(DEPTHS)
    assert max(flat) > 3 * min(flat)


def test_qa_scoring_accepts_any_alias(dataset: Path) -> None:
    items = _items(dataset, "qa_1")
    responses = []
    expected = []
    for i, item in enumerate(items):
        aliases = item["answers"][0]
        if i % 3 == 0:
            responses.append(Response(item["id"], f"It is {aliases[-1].upper()}.", "test"))
            expected.append(1.0)
        elif i % 3 == 1:
            responses.append(Response(item["id"], aliases[0], "test"))
            expected.append(1.0)
        else:
            responses.append(Response(item["id"], "I could not tell.", "test"))
            expected.append(0.0)
    result = score(dataset, responses, config=["qa_1"])
    by_id = {row.item["id"]: row.score for row in result.rows}
    assert [by_id[item["id"]] for item in items] == expected


def test_passkey_items(dataset: Path) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    for item in _items(dataset, "passkey"):
        context = _context(item)
        assert _prompt_tokens(encoding, item) + item["max_new_tokens"] == item["context_length"]
        keys = re.findall(r"The access code is (\d+)\.", context)
        assert keys and set(keys) == {item["answers"][0][0]}
        assert 1 <= int(keys[0]) <= 50_000
        assert item["max_new_tokens"] == 16


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
def test_counted_prompt_is_exact_for_filler_word_list_and_document_haystacks(tmp_path: Path, tokenizer: str) -> None:
    configs = ["niah_single_1", "niah_multikey_2", "cwe", "fwe", "qa_1"]
    path = _spec(
        tmp_path,
        configs,
        tokenizers=[tokenizer],
        length={"counted": "prompt", "tolerance": 0},
    )
    out = tmp_path / "out"
    compile_spec(path, out, CompileOptions(progress=False))
    encoding = tiktoken.get_encoding(tokenizer)
    for config in configs:
        items = _items(out, config, tokenizer)
        assert {item["context_length"] for item in items} == set(LENGTHS)
        for item in items:
            rendered = "".join(m["content"] for m in item["messages"])
            assert len(item["messages"]) == 1
            assert len(encoding.encode(rendered)) == item["context_length"], (config, item["id"])
            assert len(encoding.encode(_context(item))) < item["context_length"]


def _hand_index(docs: list[str]) -> tuple[Any, Any]:
    from needlec.haystacks.index import Haystack, HaystackIndex
    from needlec.placement.layouts.passages import PassageTable
    from needlec.tokenizer import _tiktoken

    text = "\n\n".join(docs)
    index = HaystackIndex(Haystack("h0", text), text, 1, _tiktoken("cl100k_base"))
    return index, PassageTable.of(text)


@pytest.mark.parametrize(("depth", "expected_number"), [(0, 1), (50, None), (100, None)])
def test_place_documents_by_hand(depth: float, expected_number: int | None) -> None:
    import random

    from needlec.placement.engine import Counter, assemble
    from needlec.placement.layouts.documents import DocumentLayout, place_documents

    docs = [f"Filler record {i} tells of the harbour at Oskwith and its grey boats." for i in range(400)]
    index, table = _hand_index(docs)
    gold = "The Velmora Guild was founded by Tassin Orrow."
    placement, info = place_documents(
        index,
        table,
        start=0,
        target=600,
        golds=[gold],
        depth=depth,
        rng=random.Random(7),
        layout=DocumentLayout(),
        counter=Counter(index),
        forbidden=["Tassin Orrow", "Velmora Guild"],
    )
    context = placement.context(index.text)
    assert index.tokenizer.count(context) == 600
    # the documents are joined from the strings the table holds (`InsertColumns.hay`): the context they make
    # is the haystack sliced at every insert
    assert getattr(placement.inserts, "hay", None) is not None
    assert context == assemble(index.text, placement.start, placement.end, list(placement.inserts))
    shown = [int(n) for n in re.findall(r"^Document (\d+):\n", context, re.MULTILINE)]
    count = len(shown)
    assert shown == list(range(1, count + 1))
    # by hand: depth 0 -> the first document, 50 -> the middle (rounded), 100 -> the last
    number = {0: 1, 50: round((count - 1) / 2) + 1, 100: count}[int(depth)]
    assert expected_number in (None, number)
    assert f"Document {number}:\n{gold}" in context
    assert info["gold_index"] == [number] and info["count"] == count


def test_place_documents_refuses_a_distractor_holding_the_answer() -> None:
    import random

    from needlec.errors import ContractError
    from needlec.placement.engine import Counter
    from needlec.placement.layouts.documents import DocumentLayout, place_documents

    docs = [f"Filler record {i} tells of the harbour at Oskwith and its grey boats." for i in range(400)]
    docs[3] = "Tassin Orrow once sold rope in the harbour at Oskwith."
    index, table = _hand_index(docs)
    with pytest.raises(ContractError, match="tassin orrow"):
        place_documents(
            index,
            table,
            start=0,
            target=600,
            golds=["The Velmora Guild was founded by Tassin Orrow."],
            depth=50,
            rng=random.Random(7),
            layout=DocumentLayout(),
            counter=Counter(index),
            forbidden=["Tassin Orrow"],
        )


def test_qa_task_over_another_haystack_is_refused(tmp_path: Path) -> None:
    from needlec.errors import NeedlecError

    path = _spec(tmp_path, ["qa_1"])
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["variants"]["task"]["qa_1"]["haystack"] = {"builder": {"type": "repeat"}}
    spec["grid"]["lengths"] = [1500]
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with pytest.raises(NeedlecError, match="ruler_documents"):
        compile_spec(path, tmp_path / "out", CompileOptions(progress=False))


@pytest.mark.parametrize("count", [1, 2, 3, 7, 40, 1865])
def test_gold_slots_draw_what_a_list_of_the_other_slots_draws(count: int) -> None:
    """`gold_slots` draws the further gold slots from the slots but the first without listing them: for every
    first slot and number of golds, the draw equals `random.sample` over that list, with the same rng."""
    import random

    from needlec.placement.layouts.slots import gold_slot, gold_slots

    for depth in (0.0, 37.5, 50.0, 100.0):
        first = gold_slot(depth, count)
        others = [slot for slot in range(count) if slot != first]
        for golds in range(1, min(count, 5) + 1):
            for seed in range(10):
                expected = [first, *random.Random(seed).sample(others, golds - 1)]
                assert gold_slots(depth, count, golds, random.Random(seed)) == expected


@pytest.mark.parametrize("target", [120, 600, 2_000])
@pytest.mark.parametrize("depth", [0, 30, 100])
def test_documents_with_several_golds_join_as_the_haystack_sliced(target: int, depth: float) -> None:
    """Two gold documents (RULER QA 2), next to each other or apart, at the first slot, inside, at the end, in a
    context of a few documents or many: the context joined from the table's strings is the haystack sliced at
    every insert, and every gold document is in it once."""
    import random

    from needlec.placement.engine import Counter, assemble
    from needlec.placement.layouts.documents import DocumentLayout, place_documents

    docs = [f"Archive note {i} lists the ferries of Quellmouth by their colours." for i in range(300)]
    index, table = _hand_index(docs)
    golds = ["The Ashfen Lodge was built by Corra Vell.", "Corra Vell was born in the town of Mistrel."]
    placement, _ = place_documents(
        index,
        table,
        start=0,
        target=target,
        golds=golds,
        depth=depth,
        rng=random.Random(11),
        layout=DocumentLayout(),
        counter=Counter(index),
        forbidden=["Corra Vell", "Mistrel"],
    )
    context = placement.context(index.text, "Q:\n", "\nA:")
    assert getattr(placement.inserts, "hay", None) is not None
    sliced = assemble(index.text, placement.start, placement.end, list(placement.inserts))
    assert context == "Q:\n" + sliced + "\nA:"
    assert all(context.count(gold) == 1 for gold in golds)
    assert index.tokenizer.count(sliced) == target
