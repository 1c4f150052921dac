"""The `documents` layout (RULER QA, RAG-chunk): numbered whole documents, gold ones at chosen slots.

With `needle.chunk_tokens`, `chunks` or a `chunk_order` other than `haystack` (RULER's RAG-chunk task),
the context is k retrieved chunks instead (`placement/layouts/chunks.py`).

RULER's QA prompt lists documents as "Document 1:\\n...", separated by blank lines. Here the
context is a run of whole consecutive haystack documents (the distractors) with the item's gold
document(s) put in: the first gold document at the slot of the grid depth (0 = first document,
100 = last, `round(depth / 100 * (n - 1))` in between), any further gold document at a slot
drawn from the item's rng. Every document is numbered in the order shown; a declared filler after
the last document makes the token count exact. Before it returns, the assembly checks that no
distractor in the window holds an answer alias or names a gold entity (compared casefolded, as
substrings), so a distractor can never answer the question or state a competing value.

Counts go through the haystack view's seam counter: the context is a run of the haystack with the
labels, gold documents and padding inserted, so only the seams around those inserts are encoded.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from needlec.errors import ContractError
from needlec.haystacks.index import HaystackIndex
from needlec.placement.engine import Counter, Insert, InsertColumns, Placement
from needlec.placement.layouts import LAYOUTS, LayoutSettings, Placed, Request
from needlec.placement.layouts.chunks import chunk_table, chunking_of, place_chunks
from needlec.placement.layouts.passages import PassageTable, pad_to, steps_first
from needlec.placement.layouts.slots import (
    DOCUMENT_JOINER,
    DocumentLayout,
    gold_slot,
    gold_slots,
    label_list,
    labels_of,
)

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView


def place_documents(
    index: HaystackIndex,
    table: PassageTable,
    *,
    start: int,
    target: int,
    golds: Sequence[str],
    depth: float,
    rng: random.Random,
    layout: DocumentLayout,
    counter: Counter,
    prefix: str = "",
    suffix: str = "",
    forbidden: Sequence[str] = (),
) -> tuple[Placement, dict[str, object]]:
    """Whole documents from the first one at or after `start`, the gold ones at their slots, exactly
    `target` tokens counted over `prefix + context + suffix` (both empty when only the context counts).

    Raises ContractError when the haystack runs out of documents, the length cannot hold the gold
    documents, or a distractor in the window contains one of `forbidden` (answers, gold names).
    """
    tokenizer = index.tokenizer
    joiner_tokens = max(1, tokenizer.count_pieces(DOCUMENT_JOINER))
    # a label's cost at the largest number the length can show (documents take over 50 tokens)
    label_tokens = tokenizer.count_pieces(layout.label.format(index=max(1, target // 50)))
    gold_cost = sum(tokenizer.count_pieces(gold) + joiner_tokens + label_tokens for gold in golds)
    budget = target - counter.encoded(prefix + suffix) - gold_cost
    if budget < 0:
        raise ContractError(f"target length {target} is too small for the gold document(s) of the item")
    first = bisect.bisect_left(table.spans, (start,))
    if first >= len(table.spans):
        first = 0
    if table.blocks_ok:
        # counting by pieces was checked on this haystack: the count of k documents is a sum of memoised
        # piece counts, so the largest k that fits is found exactly, and one assembly usually lands
        return _place_by_pieces(
            index, table, first, target, golds, depth, rng, layout, counter, prefix, suffix, forbidden
        )
    used = 0
    k = 0
    while first + k < len(table.spans):
        cost = table.count(first + k, index) + joiner_tokens + label_tokens
        if used + cost > budget - 2:  # a little room: seams may merge differently
            break
        used += cost
        k += 1
    else:
        raise ContractError(
            f"the documents haystack runs out of documents for length {target}; raise `haystack.builder.count`"
        )
    # the slot draws use one rng state, whatever number of documents is finally taken
    state = rng.getstate()

    def attempt(count: int) -> tuple[Placement, dict[str, object]] | None:
        rng.setstate(state)
        return _assemble(index, counter, (prefix, suffix), table, first, count, golds, depth, rng, layout, target)

    result = None
    while result is None and k >= 0:
        result = attempt(k)
        if result is None:
            k -= 1
    if result is None:
        raise ContractError(f"could not pad the documents to exactly {target} tokens with the filler {layout.filler!r}")
    # the estimate above counts every seam in full; where the filler left room for whole documents,
    # take as many more as the measured average cost says fit, halving the step when that overshoots
    # (a few retries at most)
    for _ in range(6):
        slack = int(str(result[1]["filler_tokens"]))
        average = max(1.0, (target - slack) / (k + len(golds)))
        extra = min(int(slack // average), len(table.spans) - first - k)
        better = None
        while extra >= 1 and better is None:
            better = attempt(k + extra)
            if better is None:
                extra //= 2
        if better is None:
            break
        k += extra
        result = better
    _check_distractors(index, table, first, k, forbidden)
    return result


def _place_by_pieces(
    index: HaystackIndex,
    table: PassageTable,
    first: int,
    target: int,
    golds: Sequence[str],
    depth: float,
    rng: random.Random,
    layout: DocumentLayout,
    counter: Counter,
    prefix: str,
    suffix: str,
    forbidden: Sequence[str],
) -> tuple[Placement, dict[str, object]]:
    """`place_documents` where whole pieces add up (`PassageTable.blocks_ok`): k from exact piece sums."""
    enc = counter.encoded
    base = layout.index_base
    total = enc(prefix) + enc(suffix) + 2  # a little room for the joiner before the padding
    total += sum(enc(gold + DOCUMENT_JOINER) + enc(layout.label.format(index=g + base)) for g, gold in enumerate(golds))
    # the most documents whose pieces (and labels, numbered after the gold ones) fit, a block of them at a time
    labels = labels_of(layout.label)
    k = 0
    while True:
        if first + k >= len(table.spans):
            raise ContractError(
                f"the documents haystack runs out of documents for length {target}; raise `haystack.builder.count`"
            )
        hi = min(len(table.spans), first + k + 256)
        docs = table.piece_tokens(first + k, hi, index.text, DOCUMENT_JOINER, enc, index)
        numbers = k + len(golds) + base
        shown = table.label_tokens(labels, layout.label, numbers + len(docs), enc)[numbers:]
        running = list(itertools.accumulate(map(operator.add, docs, shown), initial=total))
        fit = max(0, bisect.bisect_right(running, target) - 1)  # documents of this block that fit
        k += fit
        if fit < len(docs):
            break
        total = running[-1]
    state = rng.getstate()
    result = None
    while result is None and k >= 0:
        rng.setstate(state)
        result = _assemble(index, counter, (prefix, suffix), table, first, k, golds, depth, rng, layout, target)
        if result is None:
            k -= 1
    if result is None:
        raise ContractError(f"could not pad the documents to exactly {target} tokens with the filler {layout.filler!r}")
    _check_distractors(index, table, first, k, forbidden)
    return result


def _sums_ahead(
    values: Sequence[Any],
    marks: Iterable[int],
    size: Callable[[Any], int] | None = None,
) -> dict[int, int]:
    """For each mark m, the sum of `values[:m]` (of their `size`s, when given), each stretch summed once."""
    out: dict[int, int] = {}
    total = last = 0
    for m in sorted(marks):
        stretch = values[last:m]
        total += sum(stretch if size is None else map(size, stretch))
        out[m] = total
        last = m
    return out


def _check_distractors(index: HaystackIndex, table: PassageTable, first: int, k: int, forbidden: Sequence[str]) -> None:
    """Refuse a window whose distractor documents contain an answer alias or a gold entity's name."""
    folded, offsets = table.folded(index.text)
    lo, hi = offsets[first], offsets[first + k]
    for term in (term.casefold() for term in forbidden if term):
        at = folded.find(term, lo, hi)
        if at >= 0:
            i = bisect.bisect_right(offsets, at) - 1
            raise ContractError(f"distractor document {i} of the haystack contains {term!r} of the item's gold facts")


def _assemble(
    index: HaystackIndex,
    counter: Counter,
    frame: tuple[str, str],
    table: PassageTable,
    s: int,
    k: int,
    golds: Sequence[str],
    depth: float,
    rng: random.Random,
    layout: DocumentLayout,
    target: int,
) -> tuple[Placement, dict[str, object]] | None:
    count = k + len(golds)
    slots = gold_slots(depth, count, len(golds), rng)
    gold_at = {slot: g for g, slot in enumerate(slots)}
    begin = table.spans[s][0]
    end = table.spans[s + k - 1][1] if k else begin
    labels = labels_of(layout.label)
    base_index = layout.index_base
    enc = counter.encoded
    text = index.text
    spans = table.spans
    label_costs = table.label_tokens(labels, layout.label, count + base_index, enc)
    doc_costs = table.piece_tokens(s, s + k, text, DOCUMENT_JOINER, enc, index)
    # the inserts as two lists (`InsertColumns`): a label per document, thousands per long context
    positions: list[int] = []
    texts: list[str] = []
    gold_insert: dict[int, int] = {}  # gold index -> index of its insert (its label is the insert before)
    # Counting by pieces: every document (or gold) shown with the joiner after it is one piece and every
    # label another, each counted once and memoised; tokens do not cross a label's edges (a label starts
    # after a blank line and ends with a line break), which is checked once per haystack against the seam
    # counter before it is relied on. `costs` holds the pieces' tokens in order (label, document, label, ...);
    # the first and the last piece are kept as text for the frame and the padding.
    costs: list[int] = []
    gold_piece: dict[int, int] = {}
    d = 0  # distractor documents shown so far
    slot = 0
    firsts = table.firsts()
    # the haystack text after each insert, up to the next one (`InsertColumns.hay`): a distractor's label is
    # followed by its document and the text up to the next document's start, where the next insert is (the
    # next label, or a gold one's); the last distractor's by its document alone (the window ends there); a
    # gold document's label and text by nothing (the next insert is at the same place, or the window ends)
    gaps = table.gaps(text)
    around = [""]  # from `begin` to the first insert: set below
    shown_labels = label_list(layout.label, count + base_index)
    for stop in [*sorted(gold_at), count]:
        # the run of distractors up to the next gold slot, each with its label before it, then that gold document
        n_run = stop - slot
        positions += firsts[s + d : s + d + n_run]
        texts += shown_labels[slot + base_index : stop + base_index]
        run_costs = [0] * (2 * n_run)
        run_costs[0::2] = label_costs[slot + base_index : stop + base_index]
        run_costs[1::2] = doc_costs[d : d + n_run]
        costs += run_costs
        around += gaps[s + d : s + d + n_run]
        if n_run and d + n_run == k:
            around[-1] = text[spans[s + k - 1][0] : end]
        d += n_run
        slot = stop
        if stop == count:
            break
        g = gold_at[stop]
        gold = golds[g]
        label = labels(stop + base_index)
        pos = spans[s + d][0] if d < k else end
        positions += (pos, pos)
        texts.append(label if d < k else (DOCUMENT_JOINER if stop else "") + label)
        gold_insert[g] = len(texts)
        texts.append(gold + DOCUMENT_JOINER if d < k else gold)
        costs.append(label_costs[stop + base_index])
        gold_piece[g] = len(costs)
        last = stop == count - 1
        costs.append(enc(gold + ("" if last else DOCUMENT_JOINER)))
        around += ("", "")
        slot = stop + 1
    around[0] = text[begin : positions[0]] if positions else text[begin:end]
    # the last piece has no joiner after it
    if count - 1 in gold_at:
        final = golds[gold_at[count - 1]]
    else:
        a, b = spans[s + k - 1]
        final = text[a:b]
        costs[-1] = enc(final)
    pieces = [labels(base_index), final]  # the first and the last piece

    prefix, suffix = frame
    middle = sum(costs[1:-1])
    by_pieces = table.blocks_ok is not False

    inserts = InsertColumns(positions, texts)

    # the last piece with the pad and the suffix after it, from the piece's own count: a long pad of filler
    # repeats goes by the filler's rate between its edges, not encoded whole for every repeat count tried
    tails = table.tail_measure(enc, index.tokenizer.count, layout.filler)
    head = enc(prefix + pieces[0])

    def measure(pad: str) -> int:
        if not by_pieces:
            extra = [Insert(end, pad)] if pad else []
            return counter.count(begin, end, [*inserts, *extra], prefix, suffix)
        return head + middle + tails.after(pieces[-1], costs[-1], pad, suffix)

    if by_pieces and table.blocks_ok is None:
        table.blocks_ok = measure("") == counter.count(begin, end, list(inserts), prefix, suffix)
        by_pieces = table.blocks_ok
    padded = pad_to(True, layout.filler, target, measure)  # (DOCUMENT_JOINER is PASSAGE_JOINER: a blank line)
    if padded is None:
        return None
    pad = padded
    if pad:
        positions.append(end)
        texts.append(pad)
        around.append("")
    if by_pieces:
        context_tokens = sum(costs[:-1]) + tails.after(pieces[-1], costs[-1], pad)
        before = _sums_ahead(costs, gold_piece.values())  # the tokens of the pieces ahead of each gold piece
        needle_tokens = tuple(before[gold_piece[g]] for g in range(len(golds)))
    else:
        listed = list(inserts)
        offsets = counter.offsets(begin, end, listed)
        context_tokens = counter.count(begin, end, listed)
        needle_tokens = tuple(offsets[gold_insert[g]] for g in range(len(golds)))
    # each gold document's character offset: the haystack from `begin` to its position and every insert
    # ahead of it (the inserts are in position order)
    shown = _sums_ahead(texts, gold_insert.values(), len)
    chars = [positions[i] - begin + shown[i] for i in (gold_insert[g] for g in range(len(golds)))]
    placement = Placement(
        start=begin,
        end=end,
        inserts=InsertColumns(positions, texts, (begin, end, around)),
        total_tokens=target,
        context_tokens=context_tokens,
        needle_tokens=needle_tokens,
        needle_chars=tuple(chars),
    )
    info: dict[str, object] = {
        "count": count,
        "gold_index": [slot + layout.index_base for slot in slots],
        "gold_slot": list(slots),
        "first": s,
        "filler_tokens": index.tokenizer.count_pieces(pad) if pad else 0,
        "filler": layout.filler if pad else None,
    }
    return placement, info


class DocumentsLayout:
    """Numbered whole documents, the draw's needles as the gold documents (the first at the grid depth's slot)."""

    def place(self, view: HaystackView, request: Request) -> Placed:
        return steps_first(lambda: self._place(view, request), request.rng)

    def prepare(self, view: HaystackView, structure: dict[str, Any] | None, builder: Any, items: int) -> None:
        """RAG-chunk contexts: the view's chunk table built (once, in the parent of a compile's workers), and,
        for `items` at least its number of chunks (a whole benchmark shows every chunk many times), counted
        ahead (`ChunkTable.precount`); a compile of a few items counts on first use what its items show."""
        chunking = chunking_of(structure)
        if chunking is None:
            return
        if view.passages is None:
            view.passages = PassageTable.of(view.index.text)
        table = chunk_table(view, chunking.chunk_tokens)
        if items >= len(table.texts):
            table.precount(view, table.tail_measure(view, str(getattr(builder, "filler", " ."))))

    def _place(self, view: HaystackView, request: Request) -> Placed:
        if request.targets < len(request.needles) or not request.needles:
            raise ContractError(
                "a `ruler_documents` haystack takes one or more gold documents and no distractor sentences"
            )
        if view.passages is None:
            view.passages = PassageTable.of(view.index.text)
        settings: dict[str, Any] = (request.structure or {}).get("document_layout", {})
        layout = replace(DocumentLayout(**settings), filler=str(getattr(request.builder, "filler", " .")))
        chunking = chunking_of(request.structure)
        if chunking is not None:
            if len(request.needles) != 1:
                raise ContractError("RAG-chunk contexts take exactly one gold document")
            placement, info = place_chunks(
                view,
                chunking=chunking,
                start=request.start,
                target=request.target,
                gold=request.needles[0],
                depth=request.depth,
                rng=request.rng,
                layout=layout,
                question=request.question,
                forbidden=request.forbidden,
                prefix=request.prefix,
                suffix=request.suffix,
            )
            # the gold chunk is placed by its slot among k chunks (the grid depth's slot); its token depth is
            # recorded as reached, with no tolerance to meet (with 512-token chunks a slot spans many points)
            return Placed(placement, {"documents": info}, list(placement.depths()))
        placement, info = place_documents(
            view.index,
            view.passages,
            start=request.start,
            target=request.target,
            golds=request.needles,
            depth=request.depth,
            rng=request.rng,
            layout=layout,
            counter=view.counter,
            prefix=request.prefix,
            suffix=request.suffix,
            forbidden=request.forbidden,
        )
        # the first gold document follows the grid; the others sit where they were drawn
        return Placed(placement, {"documents": info}, [request.depth, *placement.depths()[1:]])


LAYOUTS.register("documents", LayoutSettings)(DocumentsLayout)


__all__ = ["DOCUMENT_JOINER", "DocumentLayout", "DocumentsLayout", "gold_slot", "gold_slots", "place_documents"]
