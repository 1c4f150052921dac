"""RAG-chunk contexts (`chunk_tokens`, `chunks`, `chunk_order`), checked by reading the compiled text.

The context is split into its chunks on the labels alone; each chunk is re-encoded on its own, the
answer is looked for in every chunk, and the ranked orders are compared with each other and with a
random order by how many question words their chunks share. The BM25 retriever is checked against
scores worked out from the formula by hand.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import yaml

from needlec.api import load_spec
from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.errors import SpecError
from needlec.haystacks.retrieval import BM25, terms

ROOT = Path(__file__).resolve().parents[1]
CHUNK = re.compile(r"^Retrieved chunk (\d+):\n", re.MULTILINE)
ORDERS = ["ranked", "ranked_reverse", "random"]
C = 300
K = 5
Compiled = dict[str, list[dict[str, Any]]]


def _spec(folder: Path, order: str, **needle: Any) -> Path:
    spec = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    spec["name"] = f"rag-{order}"
    spec["grid"]["lengths"] = [3000]
    task = spec["variants"]["task"]["rag_chunk"]
    task["grid"] = {"depths": [0, 50, 100], "repeats": 3}
    task["needle"] = {"task": "rag_chunk", "chunk_tokens": C, "chunks": K, "chunk_order": order, **needle}
    spec["variants"]["task"] = {"rag_chunk": task}
    path = folder / f"{order}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("rag")
    out: dict[str, list[dict[str, Any]]] = {}
    for order in ORDERS:
        target = folder / order
        compile_spec(_spec(folder, order), target, CompileOptions(progress=False))
        lines = (target / "data" / "rag_chunk" / "cl100k_base.jsonl").read_text(encoding="utf-8").splitlines()
        out[order] = [json.loads(line) for line in lines]
    return out


def _chunks(item: dict[str, Any]) -> list[str]:
    span = item["context_span"]
    context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
    marks = list(CHUNK.finditer(context))
    assert [int(m.group(1)) for m in marks] == list(range(1, len(marks) + 1))
    texts = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(context)
        texts.append(context[mark.end() : end])
    # the filler after the last chunk is a blank line and " ." repeated
    texts[-1] = re.sub(r"\n\n( \.)+$", "", texts[-1])
    return [t.strip("\n") for t in texts]


@pytest.mark.parametrize("order", ORDERS)
def test_k_chunks_within_the_size_gold_at_the_depths_rank(compiled: Compiled, order: str) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    items = compiled[order]
    assert len(items) == 3 * 3
    for item in items:
        span = item["context_span"]
        context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
        assert len(encoding.encode(context)) == item["context_tokens"]
        chunks = _chunks(item)
        assert len(chunks) == K
        for text in chunks:
            assert len(encoding.encode(text)) <= C
            # whole documents only: every line of a chunk ends a sentence
            assert all(line.rstrip().endswith((".", "!", "?")) for line in text.split("\n"))
        (aliases,) = item["answers"]
        holding = [i + 1 for i, text in enumerate(chunks) if any(a.casefold() in text.casefold() for a in aliases)]
        # by hand: depth 0 -> chunk 1, 50 -> chunk 3 of 5, 100 -> chunk 5
        assert holding == [{0.0: 1, 50.0: 3, 100.0: 5}[item["depth_percent"]]]
        needle = item["needles"][0]
        assert needle["text"] in chunks[holding[0] - 1]
        assert context[needle["char_offset"] :].startswith(needle["text"])
        assert len(encoding.encode(context[: needle["char_offset"]])) == needle["token_offset"]


def test_reverse_shows_the_same_chunks_backwards(compiled: dict[str, list[dict[str, Any]]]) -> None:
    for ranked, reverse in zip(compiled["ranked"], compiled["ranked_reverse"], strict=True):
        assert ranked["seed"] == reverse["seed"]
        a = [c for c in ranked["structure"]["documents"]["chunk_ids"] if c is not None]
        b = [c for c in reverse["structure"]["documents"]["chunk_ids"] if c is not None]
        assert a == b[::-1]


def test_ranked_chunks_share_more_question_words_than_random_ones(compiled: dict[str, list[dict[str, Any]]]) -> None:
    def shared(items: list[dict[str, Any]]) -> float:
        total = 0
        count = 0
        for item in items:
            question = set(re.findall(r"[a-z]+", item["question"].lower()))
            for text in _chunks(item):
                if any(a.casefold() in text.casefold() for a in item["answers"][0]):
                    continue  # the gold chunk
                total += len(question & set(re.findall(r"[a-z]+", text.lower())))
                count += 1
        return total / count

    assert shared(compiled["ranked"]) > shared(compiled["random"])
    # the instruction says how the chunks are listed
    assert "rank 1 first" in compiled["ranked"][0]["values"]["instruction"]
    assert "no particular order" in compiled["random"][0]["values"]["instruction"]


def test_bm25_by_hand() -> None:
    docs = ["the cat sat", "the dog sat on the mat", "a bird"]
    bm25 = BM25(docs)
    average = (3 + 6 + 2) / 3
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # "cat" and "mat" each occur in one document of three

    def part(tf: int, length: int) -> float:
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))

    scores = bm25.scores("Cat? MAT")
    assert scores == pytest.approx([part(1, 3), part(1, 6), 0.0])
    assert bm25.ranking("cat mat") == [0, 1, 2]
    assert bm25.ranking("bird", among=[0, 1]) == [0, 1]  # ties go to the earlier text
    # unspaced scripts count each character as a term
    assert terms("北京大学 Peking") == ["北", "京", "大", "学", "peking"]


def test_bm25_scores_are_the_formula_summed_term_by_term() -> None:
    # real prose, one paragraph per text; the reference sums the formula over each query term's
    # postings in a plain loop, term by term in sorted order, so every float must be the same
    prose = "\n\n".join((ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "ARCHITECTURE.md"))
    docs = [p for p in re.split(r"\n\s*\n", prose) if p.strip()]
    bm25 = BM25(docs)
    counted = [{t: doc_terms.count(t) for t in set(doc_terms)} for doc_terms in (terms(d) for d in docs)]
    lengths = [sum(c.values()) for c in counted]
    average = sum(lengths) / len(docs)
    for query in ["How does the compile count tokens?", "seam window safe point", "BM25 ranked chunks", "zzz"]:
        expected = [0.0] * len(docs)
        for term in sorted(set(terms(query))):
            holding = [i for i, c in enumerate(counted) if term in c]
            if not holding:
                continue
            idf = math.log(1.0 + (len(docs) - len(holding) + 0.5) / (len(holding) + 0.5))
            for i in holding:
                tf = counted[i][term]
                norm = 1.2 * (1.0 - 0.75 + 0.75 * lengths[i] / average)
                expected[i] += idf * tf * 2.2 / (tf + norm)
        assert bm25.scores(query) == expected
        assert bm25.ranking(query) == sorted(range(len(docs)), key=lambda i: (-expected[i], i))
        # among some texts, given in index order (ties, as most texts score 0.0) or not
        some = list(range(0, len(docs), 3))
        shuffled = some[::-1][1::2] + some[::2]
        for among in (some, shuffled):
            assert bm25.ranking(query, among) == sorted(among, key=lambda i: (-expected[i], i))


def test_chunk_fields_belong_to_rag_chunk(tmp_path: Path) -> None:
    spec = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    spec["variants"]["task"]["qa_1"]["needle"]["chunk_order"] = "ranked"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    rendered = info.value.render()
    assert "`chunk_order` applies to `task: rag_chunk` only" in rendered
    assert f"{path}:" in rendered


def test_too_many_chunks_for_the_length_is_a_clean_error(tmp_path: Path) -> None:
    path = _spec(tmp_path, "ranked")
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["variants"]["task"]["rag_chunk"]["needle"]["chunks"] = 40
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with pytest.raises(Exception) as info:
        compile_spec(path, tmp_path / "out", CompileOptions(progress=False))
    assert "40 chunks" in str(info.value) and "do not fit" in str(info.value)
    assert not (tmp_path / "out").exists()


GOLDS = [
    "Marlow Fenwick founded the river guild in 1791. It kept the locks open through three floods.",
    "The lighthouse keeper's ledger names Odile Carrow as the one who repaired the lamp in the winter storm",
    "北方的学院由林墨创立，藏书三千卷。",
]


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
def test_the_gold_chunk_counted_by_its_parts_is_its_encoding(tmp_path: Path, tokenizer: str) -> None:
    """The gold chunk is counted as its documents and the gold one (`_gold_chunk`); every count it gives
    equals an encoding of that text, and on the shipped haystack the parts count apart (no whole encode)."""
    import random

    from needlec.compile.pipeline import Prepared
    from needlec.compile.plan import load_plan
    from needlec.placement.layouts.chunks import _gold_chunk, chunk_table

    spec = tmp_path / "rag.yaml"
    spec.write_text(f"extends: {ROOT / 'specs' / 'ruler.yaml'}\ntokenizers: [{tokenizer}]\n", encoding="utf-8")
    plan = load_plan(spec, tmp_path / "cache")
    config = plan.config("rag_chunk")
    prepared = Prepared(plan, tmp_path / "cache")
    haystack = prepared.haystacks(config.spec)[0]
    view = prepared.view(config.spec, haystack, config.spec.tokenizers[0].label, 4096)
    table = chunk_table(view, C)
    tails = table.tail_measure(view, " .")
    count = view.index.tokenizer.count
    by_parts = 0
    for host in range(0, len(table.texts), max(1, len(table.texts) // 25)):
        for seed, gold in enumerate(GOLDS):
            got = _gold_chunk(view, table, host, gold, C, random.Random(seed), tails)
            assert got.tokens == count(got.head + got.tail)
            assert got.tokens <= C or got.tail == gold  # over the size only when the gold document is alone
            if got.head_tokens is not None:
                by_parts += 1
                assert got.head_tokens == count(got.head)
                assert got.tail_tokens == count(got.tail)
                assert got.tail_joined == count(got.tail + "\n\n")
    assert by_parts >= 0.9 * 25 * len(GOLDS)


def test_chunks_that_fit_are_those_the_whole_running_total_gives() -> None:
    # `_fit` sums the costs over a span it guesses from the mean chunk, doubled until the total passes the
    # target: the answer must be the one a running total over every candidate gives, wherever the target
    # falls (before the first chunk, among them, beyond them all) and however sizes differ from the mean
    from needlec.placement.layouts.chunks import ChunkTable, _fit
    from needlec.placement.layouts.slots import DocumentLayout, label_list

    enc = tiktoken.get_encoding("cl100k_base")

    def encoded(text: str) -> int:
        return len(enc.encode_ordinary(text))

    rng = random.Random(7)
    layout = DocumentLayout()
    for trial in range(40):
        n = rng.randint(1, 400)
        # mostly small chunks with a few huge ones, or the other way round: the mean misleads the guess
        tokens = [rng.choice([rng.randint(1, 20), rng.randint(400, 900)]) for _ in range(n)]
        table = ChunkTable(
            docs=[(i,) for i in range(n)], texts=[""] * n, tokens=tokens, folded=[""] * n, starts=[0] * n
        )
        candidates = rng.sample(range(n), rng.randint(1, n))
        if trial % 2:  # the small chunks first, as a ranking may give them: many more fit than the mean says
            candidates.sort(key=tokens.__getitem__)
        first = rng.randint(0, 300)
        labels = [encoded(label) for label in label_list(layout.label, len(candidates) + 1 + layout.index_base)]
        joiner = encoded("\n\n")
        running = [first]
        for k, c in enumerate(candidates):
            running.append(running[-1] + labels[1 + layout.index_base + k] + tokens[c] + joiner)
        for target in (first - 1, first, rng.randint(first, running[-1] + 50), running[-1], running[-1] + 1):
            expected = -1  # the most candidates whose running total stays within the target (-1: not even none)
            for k, used in enumerate(running):
                if used <= target:
                    expected = k
            assert _fit(table, candidates, layout, encoded, first, target) == expected, (trial, target)


def test_counting_ahead_leaves_every_item_as_first_use_makes_it(tmp_path: Path) -> None:
    """A compile of at least as many items as a chunk table has chunks counts the table ahead
    (`ChunkTable.precount`, through `Layout.prepare`), a compile of fewer on first use: the items are the
    same bytes either way, and what is counted ahead is each text's own encoding."""
    from needlec.compile.items import build_item
    from needlec.compile.pipeline import Prepared, prepare_layouts, prepare_work
    from needlec.compile.plan import load_plan
    from needlec.placement.layouts.chunks import chunk_table

    spec = tmp_path / "rag.yaml"
    spec.write_text(
        f"extends: {ROOT / 'specs' / 'ruler.yaml'}\ngrid: {{lengths: [4096]}}\ntokenizers: [cl100k_base]\n",
        encoding="utf-8",
    )
    plan = load_plan(spec, tmp_path / "cache")
    config = plan.config("rag_chunk")
    ids = [h.id for h in Prepared(plan, tmp_path / "cache").haystacks(config.spec)]
    keys = list(plan.keys(config, ids))
    few = keys[:: len(keys) // 6][:6]

    def items(served: int | None) -> tuple[list[str], Any, Any]:
        work = prepare_work(Prepared(plan, tmp_path / "cache"), [(config, few)])  # prepared for these 6 items
        view, kind = work[0][2], work[0][3]
        if served is not None:  # prepared again, as a compile of `served` items over the view prepares it
            prepare_layouts(config, kind, [(view, few[0], served)])
        built = [build_item(plan.spec.name, config, key, view, kind)[0].model_dump_json() for key in few]
        return built, chunk_table(view, 512), view

    first_use, lazy, _ = items(None)
    ahead, counted, view = items(len(lazy.texts))
    assert ahead == first_use
    # counted ahead: every chunk with the joiner after it (the 6 items of the first compile showed only some)
    assert counted._with_joiner is not None and min(counted._with_joiner) >= 0
    assert lazy._with_joiner is not None and min(lazy._with_joiner) < 0
    count = tiktoken.get_encoding("cl100k_base").encode_ordinary
    for c in range(0, len(counted.texts), max(1, len(counted.texts) // 20)):
        assert counted._with_joiner[c] == len(count(counted.texts[c] + "\n\n"))
    # and each document with the line break after it, as a gold chunk's parts are counted
    spans = view.passages.spans
    docs = [view.index.text[slice(*spans[d])] for run in counted.docs[:: max(1, len(counted.docs) // 10)] for d in run]
    assert docs
    for doc in docs:
        assert view.counter._memo[doc + "\n"] == len(count(doc + "\n"))
        assert view.counter._memo[doc] == len(count(doc))
    # one item fewer than the chunks: nothing counted ahead
    _, short, _ = items(len(lazy.texts) - 1)
    assert short._with_joiner is not None and min(short._with_joiner) < 0
