"""RAG-chunk contexts for the `documents` layout: k retrieved chunks of about C tokens, listed by rank.

A chunk is a run of whole consecutive haystack documents, as many as keep it within `chunk_tokens`
(C) tokens; a document longer than C is a chunk of its own (documents are never cut, and each item
records the chunks' achieved sizes). Without `chunk_tokens` every document is a chunk. The gold chunk
is a haystack chunk (the host) with the gold document put in at a position drawn from the item's rng,
trailing documents dropped until it fits C again; the host is then not shown as a distractor.

The distractor chunks and their order follow `chunk_order`:

- `haystack`: the chunks that follow the host in the haystack, in haystack order;
- `random`: chunks drawn at random, in the order drawn;
- `ranked`: the chunks a BM25 retriever scores highest for the question, most relevant first (as a
  retriever lists them), `ranked_reverse` the same chunks least relevant first.

Every order skips chunks that contain an answer alias or a gold entity's name (compared casefolded,
as substrings). The gold chunk goes to the slot of the grid depth among all k chunks (`gold_slot`),
so accuracy can be read against the gold chunk's rank. With `chunks` the context holds exactly k
chunks; without it, as many as the length holds. A declared filler after the last chunk makes the
token count exact.

Counts are sums of memoised piece counts (labels, chunks), checked once per haystack view against a
whole count of the same text; where the check fails, every count is a whole count.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from needlec.errors import ContractError
from needlec.haystacks.passages import PASSAGE_JOINER
from needlec.haystacks.retrieval import BM25
from needlec.placement.engine import Insert, Placement
from needlec.placement.layouts.passages import JOINT_CHARS, PassageTable, TailMeasure, pad_to
from needlec.placement.layouts.slots import DOCUMENT_JOINER, DocumentLayout, gold_slot, label_list, labels_of
from needlec.util.absence import Absence

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView

CHUNK_DOC_JOINER = "\n"

__all__ = ["ChunkTable", "Chunking", "chunk_table", "chunking_of", "place_chunks"]


@dataclass(frozen=True)
class Chunking:
    """The item's chunk settings (`needle.chunk_tokens`, `chunks`, `chunk_order` of the RULER kind)."""

    chunk_tokens: int | None = None
    chunks: int | None = None
    order: str = "haystack"


@dataclass
class ChunkTable:
    """The chunks of one haystack view for one chunk size: their documents, texts and token counts."""

    docs: list[tuple[int, ...]]  # document indices (in the passage table) of each chunk
    texts: list[str]
    tokens: list[int]
    folded: list[str]  # casefolded texts, for the answer-free check
    starts: list[int]  # character offset of each chunk's first document in the haystack
    retriever: BM25 | None = None
    pieces_ok: bool | None = None  # whether piece sums matched a whole count on this view
    _joined: tuple[Absence, list[int]] | None = None  # the casefolded chunks joined by NUL, and where each starts
    _with_joiner: list[int] | None = None  # `joined_tokens` (-1: not counted yet)
    _tails: dict[str, TailMeasure] = field(default_factory=dict)  # per filler: the last chunk with the pad
    _labels: dict[str, list[int]] = field(default_factory=dict)  # per label template: tokens per number
    _mean: float | None = None  # `mean_tokens`

    def tail_measure(self, view: HaystackView, filler: str) -> TailMeasure:
        """The measure of a context's last chunk with the pad and suffix after it, kept per filler."""
        got = self._tails.get(filler)
        if got is None:
            got = self._tails[filler] = TailMeasure(view.counter.encoded, view.index.tokenizer.count, filler)
        return got

    def joined_tokens(self, c: int, encoded: Callable[[str], int]) -> int:
        """Tokens of chunk c with the joiner between shown documents after it (`encoded`, once per chunk): kept by
        the chunk's number, so a context of hundreds of chunks looks them up without hashing their texts."""
        if self._with_joiner is None:
            self._with_joiner = [-1] * len(self.texts)
        got = self._with_joiner[c]
        if got < 0:
            got = self._with_joiner[c] = encoded(self.texts[c] + DOCUMENT_JOINER)
        return got

    def mean_tokens(self) -> float:
        """The chunks' mean tokens (worked out once)."""
        if self._mean is None:
            self._mean = sum(self.tokens) / max(1, len(self.tokens))
        return self._mean

    def label_tokens(self, template: str, hi: int, encoded: Callable[[str], int]) -> list[int]:
        """Tokens of the labels numbered 0 to `hi - 1` made from `template`, counted once per table."""
        known = self._labels.setdefault(template, [])
        if len(known) < hi:
            known += map(encoded, label_list(template, hi)[len(known) : hi])
        return known

    def joined_list(self, chunks: list[int], encoded: Callable[[str], int]) -> list[int]:
        """`joined_tokens` of each of `chunks`, looked up a list at a time."""
        if self._with_joiner is None:
            self._with_joiner = [-1] * len(self.texts)
        got = list(map(self._with_joiner.__getitem__, chunks))
        if -1 in got:
            got = [self.joined_tokens(c, encoded) for c in chunks]
        return got

    def precount(self, view: HaystackView, tails: TailMeasure) -> None:
        """Count ahead what items ask of this table on first use, for a compile of as many items as the table
        has chunks or more (`DocumentsLayout.prepare`): each chunk with the joiner after it (`joined_tokens`),
        and the parts `_gold_chunk` makes of a host chunk: each document with the line break after it, each
        alone, and the check of each cut between two neighbours (`TailMeasure.apart`). Items then encode only
        what is new to them (the gold document, its cuts, the prompt around the context); their counts are the
        ones first use would find, so no byte changes."""
        counter = view.counter
        if self._with_joiner is None:
            self._with_joiner = [-1] * len(self.texts)
        missing = [c for c, got in enumerate(self._with_joiner) if got < 0]
        counts = counter.tokenizer.count_many([self.texts[c] + DOCUMENT_JOINER for c in missing])
        for c, got in zip(missing, counts, strict=True):
            self._with_joiner[c] = got
        if view.passages is None or all(len(run) == 1 for run in self.docs):
            return  # every chunk one document: a gold chunk is the gold document alone
        text, spans, index = view.index.text, view.passages.spans, view.index
        alone = [d for run in self.docs for d in run]  # (each counted by the packing already)
        counter.remember(
            [text[spans[d][0] : spans[d][1]] for d in alone], [view.passages.count(d, index) for d in alone]
        )
        pieces: list[str] = []
        cuts: list[tuple[str, str]] = []
        for run in self.docs:
            parts = [text[spans[d][0] : spans[d][1]] for d in run]
            pieces += (part + CHUNK_DOC_JOINER for part in parts)
            for left, right in itertools.pairwise(parts):
                a = (left + CHUNK_DOC_JOINER)[-JOINT_CHARS:]
                for b in dict.fromkeys((right[:JOINT_CHARS], (right + CHUNK_DOC_JOINER)[:JOINT_CHARS])):
                    cuts.append((a, b))
                    pieces += (a + b, a, b)
        counter.remember(pieces)
        for left, right in cuts:
            tails.apart(left, right)

    def bm25(self) -> BM25:
        if self.retriever is None:
            self.retriever = BM25(self.texts)
        return self.retriever

    def eligible(self, forbidden: Sequence[str]) -> list[bool]:
        """Per chunk, whether it is free of every forbidden term (casefolded substrings): each term is looked
        for in all chunks at once, joined by a NUL that no term holds, and each place found rules out its chunk
        (most drawn names are ruled out of every chunk without a scan: `Absence`)."""
        terms = sorted({t.casefold() for t in forbidden if t})
        if any("\x00" in t for t in terms):
            return [not any(t in f for t in terms) for f in self.folded]
        if self._joined is None:
            offsets = list(itertools.accumulate((len(f) + 1 for f in self.folded), initial=0))
            self._joined = (Absence("\x00".join(self.folded)), offsets)
        joined, offsets = self._joined
        free = [True] * len(self.folded)
        for term in terms:
            at = joined.find(term)
            while at >= 0:
                i = bisect.bisect_right(offsets, at) - 1
                free[i] = False
                at = joined.find(term, offsets[i + 1])  # the next chunk on
        return free


def chunk_table(view: HaystackView, chunk_tokens: int | None) -> ChunkTable:
    """The view's chunks for `chunk_tokens` (built once per view and size)."""
    tables: dict[int | None, ChunkTable] = view.chunks
    if chunk_tokens in tables:
        return tables[chunk_tokens]
    if view.passages is None:
        view.passages = PassageTable.of(view.index.text)
    table = view.passages
    text = view.index.text
    count = view.index.tokenizer.count
    docs: list[tuple[int, ...]] = []
    if chunk_tokens is None:
        docs = [(i,) for i in range(len(table.spans))]
    else:
        joiner = max(1, count(CHUNK_DOC_JOINER))
        run: list[int] = []
        used = 0
        for i in range(len(table.spans)):
            cost = table.count(i, view.index) + (joiner if run else 0)
            if run and used + cost > chunk_tokens:
                docs.append(tuple(run))
                run, used = [], 0
                cost = table.count(i, view.index)
            run.append(i)
            used += cost
        if run:
            docs.append(tuple(run))
    texts = [CHUNK_DOC_JOINER.join(text[table.spans[d][0] : table.spans[d][1]] for d in run) for run in docs]
    # chunks are counted whole once per view; the packing above summed document counts, which a seam
    # may change by a token, so a chunk over the size loses its last documents here
    tokens: list[int] = []
    for c, chunk in enumerate(texts):
        n = count(chunk)
        while chunk_tokens is not None and n > chunk_tokens and len(docs[c]) > 1:
            docs[c] = docs[c][:-1]
            chunk = texts[c] = CHUNK_DOC_JOINER.join(text[table.spans[d][0] : table.spans[d][1]] for d in docs[c])
            n = count(chunk)
        tokens.append(n)
    built = ChunkTable(
        docs=docs,
        texts=texts,
        tokens=tokens,
        folded=[t.casefold() for t in texts],
        starts=[table.spans[run[0]][0] for run in docs],
    )
    tables[chunk_tokens] = built
    return built


@dataclass(frozen=True)
class _GoldChunk:
    """The gold chunk: the documents before the gold one (`head`, each with its line break), the gold document
    and what follows (`tail`), and their tokens: of the whole chunk, and, where its parts count apart, of
    `head`, of `tail` and of `tail` with the blank line after it (None: not known, encode them)."""

    head: str
    tail: str
    tokens: int
    head_tokens: int | None = None
    tail_tokens: int | None = None
    tail_joined: int | None = None


def _gold_chunk(
    view: HaystackView,
    table: ChunkTable,
    host: int,
    gold: str,
    chunk_tokens: int | None,
    rng: random.Random,
    tails: TailMeasure,
) -> _GoldChunk:
    """The gold chunk: the host chunk's documents with the gold one put in among them, trailing documents
    dropped until it fits `chunk_tokens`. Its documents recur across items and the gold one does not, so it
    is counted as its parts (each document with the line break after it, memoised) where every cut between
    two parts counts apart (`TailMeasure.apart`), else encoded whole."""
    if chunk_tokens is None:
        n = view.index.tokenizer.count_pieces(gold)
        return _GoldChunk("", gold, n, 0, n, None)
    text = view.index.text
    spans = view.passages.spans
    others = [text[spans[d][0] : spans[d][1]] for d in table.docs[host]]
    at = rng.randrange(len(others) + 1)
    count = view.index.tokenizer.count
    enc = view.counter.encoded
    while True:
        before = others[:at]
        after = others[at:]
        head = "".join(part + CHUNK_DOC_JOINER for part in before)
        tail = gold + "".join(CHUNK_DOC_JOINER + part for part in after)
        # the parts: each document with the line break after it, the last without
        parts = [part + CHUNK_DOC_JOINER for part in before] + [gold, *after]
        parts[len(before) : -1] = [part + CHUNK_DOC_JOINER for part in parts[len(before) : -1]]
        if all(map(tails.apart, parts[:-1], parts[1:])):
            counts = list(map(enc, parts))
            n = sum(counts)
            head_tokens = sum(counts[: len(before)])
            tail_tokens = n - head_tokens
            # with the blank line after it: the last part's cut checked again where the check reaches past it
            last = parts[-1] + DOCUMENT_JOINER
            sure = len(parts) < 2 or len(parts[-1]) >= JOINT_CHARS or tails.apart(parts[-2], last)
            joined = tail_tokens - counts[-1] + enc(last) if sure else None
            got = _GoldChunk(head, tail, n, head_tokens, tail_tokens, joined)
        else:
            got = _GoldChunk(head, tail, count(head + tail))
        if got.tokens <= chunk_tokens or not others:
            return got
        # drop the document farthest from the gold one, so the gold keeps its neighbours
        if len(after) >= len(before):
            others.pop()
        else:
            others.pop(0)
            at -= 1


def _order(
    table: ChunkTable, chunking: Chunking, eligible: list[bool], host: int, question: str, rng: random.Random
) -> list[int]:
    """Candidate distractor chunks in the order they are taken (and, but for `ranked_reverse`, shown)."""
    n = len(table.texts)
    if chunking.order == "haystack":
        return [c for c in [*range(host + 1, n), *range(host)] if eligible[c]]
    pool = list(itertools.compress(range(n), eligible))
    if eligible[host]:
        pool.remove(host)
    if chunking.order == "random":
        return rng.sample(pool, len(pool))
    return table.bm25().ranking(question, pool)


def place_chunks(
    view: HaystackView,
    *,
    chunking: Chunking,
    start: int,
    target: int,
    gold: str,
    depth: float,
    rng: random.Random,
    layout: DocumentLayout,
    question: str,
    forbidden: Sequence[str],
    prefix: str = "",
    suffix: str = "",
) -> tuple[Placement, dict[str, object]]:
    """k chunks (the gold one at the depth's slot) exactly `target` tokens over `prefix + context + suffix`."""
    table = chunk_table(view, chunking.chunk_tokens)
    eligible = table.eligible(forbidden)
    hosts = list(itertools.compress(range(len(table.texts)), eligible))
    if not hosts:
        raise ContractError("every chunk of the haystack holds an answer or a gold name; the item has no host chunk")
    if chunking.order == "haystack":
        host = next((c for c in hosts if table.starts[c] >= start), hosts[0])
    else:
        host = hosts[rng.randrange(len(hosts))]
    tails = table.tail_measure(view, layout.filler)
    gold_chunk = _gold_chunk(view, table, host, gold, chunking.chunk_tokens, rng, tails)
    gold_tokens = gold_chunk.tokens
    candidates = _order(table, chunking, eligible, host, question, rng)
    enc = view.counter.encoded
    base = layout.index_base

    numbered = labels_of(layout.label)

    def label(slot: int) -> str:
        return numbered(slot + base)

    # how many distractors: fixed, or as many as fit (each costs its label, its text and a joiner)
    frame = enc(prefix) + enc(suffix) + 2  # a little room for the seams
    fixed = enc(label(0)) + gold_tokens + enc(DOCUMENT_JOINER)
    if chunking.chunks is not None:
        wanted = chunking.chunks - 1
        if len(candidates) < wanted:
            raise ContractError(
                f"the haystack has {len(candidates)} answer-free chunks besides the gold one, fewer than the "
                f"{wanted} distractor chunks of `chunks: {chunking.chunks}`; raise `haystack.builder.count`"
            )
        chosen = candidates[:wanted]
    else:
        # the longest run of candidates whose costs (label numbered from 1, text, joiner) fit after the gold one
        n = len(candidates)
        fit = _fit(table, candidates, layout, enc, frame + fixed, target)
        chosen = candidates[:fit]
        if fit == n:
            raise ContractError(
                f"the documents haystack runs out of chunks for length {target}; raise `haystack.builder.count`"
            )
    state = rng.getstate()
    while True:
        rng.setstate(state)
        result = _assemble(view, table, chunking, chosen, gold_chunk, depth, layout, target, prefix, suffix)
        if result is not None:
            break
        if chunking.chunks is not None or not chosen:
            need = sum(table.tokens[c] for c in chosen) + gold_tokens
            raise ContractError(
                f"{len(chosen) + 1} chunks ({need:,} tokens without labels) do not fit in {target} tokens; "
                "use a longer length, fewer `chunks` or a smaller `chunk_tokens`"
            )
        chosen.pop()
    placement, info = result
    info["host_chunk"] = host
    return placement, info


def _fit(
    table: ChunkTable,
    candidates: list[int],
    layout: DocumentLayout,
    encoded: Callable[[str], int],
    first: int,
    target: int,
) -> int:
    """How many of `candidates`, in order, fit in `target` tokens after `first`: each costs its label (numbered
    from 1), its text and a joiner. The running total is summed over as many candidates as the mean chunk
    size says may fit and a quarter more, the span doubled until the total passes the target (a haystack's
    candidates are hundreds or thousands of chunks; a 4K context takes a few of them)."""
    n = len(candidates)
    base = layout.index_base
    joiner = encoded(DOCUMENT_JOINER)
    mean = table.mean_tokens() + joiner + 1
    span = int(max(0, target - first) / mean * 1.25) + 16
    while True:
        span = min(span, n)
        labelled = table.label_tokens(layout.label, span + 1 + base, encoded)[1 + base : span + 1 + base]
        costs = map(operator.add, labelled, map(table.tokens.__getitem__, candidates[:span]))
        used = list(itertools.accumulate(map(joiner.__add__, costs), initial=first))
        if used[-1] > target or span == n:
            return bisect.bisect_right(used, target) - 1  # every cost is positive: the running total grows
        span *= 2


def _assemble(
    view: HaystackView,
    table: ChunkTable,
    chunking: Chunking,
    chosen: list[int],
    gold_chunk: _GoldChunk,
    depth: float,
    layout: DocumentLayout,
    target: int,
    prefix: str,
    suffix: str,
) -> tuple[Placement, dict[str, object]] | None:
    shown = list(reversed(chosen)) if chunking.order == "ranked_reverse" else list(chosen)
    count = len(shown) + 1
    slot = gold_slot(depth, count)
    order: list[int | None] = [*shown[:slot], None, *shown[slot:]]  # None: the gold chunk
    head, tail = gold_chunk.head, gold_chunk.tail
    enc = view.counter.encoded
    labels = label_list(layout.label, count + layout.index_base)
    label_costs = table.label_tokens(layout.label, count + layout.index_base, enc)
    base = layout.index_base
    # the pieces in order, each with its tokens: a label, then a chunk's text and the joiner after it (the
    # joiner a piece of no tokens of its own, counted with the text), or the gold chunk's parts; no joiner
    # after the last chunk
    pieces: list[str] = []
    counts: list[int] = []

    def distractors(chunks: list[int], first: int) -> None:
        """The pieces of `chunks`, shown from slot `first` on, a list operation for each kind of piece."""
        m = len(chunks)
        if not m:
            return
        ends = first + m == count  # the last of them ends the context
        block: list[str] = [DOCUMENT_JOINER] * (3 * m)
        block[0::3] = labels[first + base : first + base + m]
        block[1::3] = map(table.texts.__getitem__, chunks)
        tokens = [0] * (3 * m)
        tokens[0::3] = label_costs[first + base : first + base + m]
        tokens[1::3] = table.joined_list(chunks, enc)
        if ends:
            del block[-1], tokens[-1]
            tokens[-1] = table.tokens[chunks[-1]]
        pieces.extend(block)
        counts.extend(tokens)

    distractors(shown[:slot], 0)
    last = slot == count - 1
    pieces.append(labels[slot + base])
    counts.append(label_costs[slot + base])
    if head:
        pieces.append(head)
        counts.append(enc(head) if gold_chunk.head_tokens is None else gold_chunk.head_tokens)
    gold_piece = len(pieces)
    pieces.append(tail + ("" if last else DOCUMENT_JOINER))
    known = gold_chunk.tail_tokens if last else gold_chunk.tail_joined
    counts.append(enc(pieces[-1]) if known is None else known)
    distractors(shown[slot:], slot + 1)
    whole = view.index.tokenizer.count
    middle = sum(counts[1:-1])

    # the last piece is counted on its own (a chunk's count is the table's), the pad and suffix after it
    tails = table.tail_measure(view, layout.filler)
    last_tokens = counts[-1]
    final = order[-1]
    joined = (
        (gold_chunk.tail_joined if final is None else table.joined_tokens(final, enc))
        if PASSAGE_JOINER == DOCUMENT_JOINER
        else None
    )

    def by_pieces(pad: str) -> int:
        return enc(prefix + pieces[0]) + middle + tails.after(pieces[-1], last_tokens, pad, suffix, joined)

    def by_whole(pad: str) -> int:
        return whole("".join([prefix, *pieces, pad, suffix]))

    if table.pieces_ok is None:
        table.pieces_ok = by_pieces("") == by_whole("")
    measure: Callable[[str], int] = by_pieces if table.pieces_ok else by_whole
    pad = pad_to(True, layout.filler, target, measure)
    if pad is None:
        return None
    context = "".join([*pieces, pad])  # one copy of a long context
    chars = sum(map(len, pieces[:gold_piece]))
    if table.pieces_ok:
        before = sum(counts[:gold_piece])
        context_tokens = sum(counts[:-1]) + tails.after(pieces[-1], last_tokens, pad, "", joined)
    else:
        before = whole(context[:chars])
        context_tokens = whole(context)
    placement = Placement(
        start=0,
        end=0,
        inserts=(Insert(0, context),),
        total_tokens=target,
        context_tokens=context_tokens,
        needle_tokens=(before,),
        needle_chars=(chars,),
    )
    size = table.tokens.__getitem__
    sizes = [*map(size, shown[:slot]), gold_chunk.tokens, *map(size, shown[slot:])]
    info: dict[str, object] = {
        "count": count,
        "gold_index": [slot + layout.index_base],
        "gold_slot": [slot],
        "filler_tokens": (tails.padded(pad) if table.pieces_ok else whole(pad)) if pad else 0,
        "filler": layout.filler if pad else None,
        "chunk_tokens": chunking.chunk_tokens,
        "order": chunking.order,
        "retriever": "bm25" if chunking.order.startswith("ranked") else None,
        "chunk_ids": order,
        "chunk_sizes": sizes,
    }
    return placement, info


def chunking_of(structure: dict[str, Any] | None) -> Chunking | None:
    """The chunk settings a draw carries (`structure.chunking`), or None for plain documents."""
    settings = (structure or {}).get("chunking")
    return Chunking(**settings) if settings else None
