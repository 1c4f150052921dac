"""Needles aimed at close depths push each other deeper: the depth contract counts a needle as on target
from its aimed depth to where the needles before it push it.

RULER's FWE inserts its Zipf stream as 100 blocks at random depths; the blocks fill most of the
context, so where many depths fall close together the later blocks cannot sit at theirs. Repeat 364 of
the shipped spec's 4,096-token cell is such an item: its block 68, aimed at 60.0%, can only start at
70.2%, where the block before it ends. Before the push rule the compile refused such items (four of the
shipped benchmark's items of FWE's earlier draws); repeat 364 is one of the draws since.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from conftest import SPECS

import needlec
from needlec.compile.checks import check_item, reachable_depths
from needlec.compile.plan import load_plan
from needlec.placement.engine import depth_miss, pushed_depths
from needlec.tokenizer import load_tokenizer, tokenizer_argument


def test_pushed_depths_by_hand() -> None:
    # 1,000 context tokens, three needles of 100 tokens (10 points each) aimed at 10, 12 and 50:
    # the second starts where the first ends (20), the third is far enough to keep its 50
    assert pushed_depths([10.0, 12.0, 50.0], [100, 200, 500], [100, 100, 100], 1000) == [10.0, 20.0, 50.0]
    # the context order is the token offsets', not the needles' index order
    assert pushed_depths([50.0, 10.0, 12.0], [500, 100, 200], [100, 100, 100], 1000) == [50.0, 10.0, 20.0]
    # a push carries on down a run: 0, 0, 0 with 5-point needles -> 0, 5, 10
    assert pushed_depths([0.0, 0.0, 0.0], [0, 50, 100], [50, 50, 50], 1000) == [0.0, 5.0, 10.0]
    # on target anywhere from the aimed depth to the pushed one; outside, the distance to the nearer end
    assert depth_miss(15.0, 12.0, 20.0) == 0.0
    assert depth_miss(22.5, 12.0, 20.0) == 2.5
    assert depth_miss(11.0, 12.0, 20.0) == 1.0


def _pushed_reference(aimed: list[float], offsets: list[int], tokens: list[int], total: int) -> list[float]:
    """The recurrence written out plainly, for the many-needle path (numpy) to be checked against."""
    order = sorted(range(len(aimed)), key=lambda k: offsets[k])
    out = list(aimed)
    for previous, k in itertools.pairwise(order):
        out[k] = max(aimed[k], out[previous] + 100.0 * tokens[previous] / total)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_many_needles_take_the_same_recurrence(seed: int) -> None:
    rng = random.Random(seed)
    n = 300
    total = 20_000
    offsets = rng.sample(range(total), n)
    aimed = [round(rng.uniform(0, 100), 4) for _ in range(n)]
    tokens = [rng.randint(1, 40) for _ in range(n)]
    got = pushed_depths(aimed, offsets, tokens, total)
    want = _pushed_reference(aimed, offsets, tokens, total)
    assert got == pytest.approx(want, abs=1e-9)
    assert all(g == a for g, a, w in zip(got, aimed, want, strict=True) if w == a)  # unpushed: exactly aimed


def test_a_shipped_fwe_item_whose_blocks_push_each_other_compiles(tmp_path: Path) -> None:
    out = tmp_path / "fwe"
    select = {"config": "fwe", "length": "4096", "repeat": 364, "tokenizer": "cl100k_base"}
    needlec.compile(SPECS / "ruler.yaml", out, select=select)
    [row] = [json.loads(line) for line in (out / "data" / "fwe" / "cl100k_base.jsonl").open(encoding="utf-8")]
    item = next(needlec.load_items(out))
    plan = load_plan(SPECS / "ruler.yaml")
    spec = plan.config("fwe").spec
    tokenizer = load_tokenizer(spec.tokenizers[0], plan.spec_dir)
    # the old contract (target, or the deepest reachable) is broken by some block by more than the tolerance
    reachable = reachable_depths(item, tokenizer)
    tolerance = spec.placement.depth_tolerance
    off = [
        i
        for i, n in enumerate(row["needles"])
        if n["role"] == "target" and abs(n["depth_percent"] - min(n["target_depth_percent"], reachable[i])) > tolerance
    ]
    assert off
    # and each of those blocks starts right where the one before it in the context ends, with the line break
    # that joins them (pushed, not misplaced)
    ordered = sorted((n for n in row["needles"] if n["role"] == "target"), key=lambda n: n["token_offset"])
    for i in off:
        k = next(j for j, n in enumerate(ordered) if n["id"] == row["needles"][i]["id"])
        before = ordered[k - 1]
        assert row["needles"][i]["token_offset"] == before["token_offset"] + tokenizer.count(before["text"] + "\n")
    assert check_item(item, spec, tokenizer, verify=True) == []


def test_a_window_within_the_old_rule_is_still_the_one_taken(tmp_path: Path) -> None:
    # Repeat 234 of FWE at 4,096 tokens with the stream sized to fill 90% of the context has a window start
    # whose blocks sit within the tolerance of their targets (or reachable depths) as they are, and an earlier
    # start within it only once the blocks may push each other. The search keeps the first kind wherever one
    # exists, so items that compiled before the push rule keep their windows and their bytes; the push rule
    # only rescues items that had no such window.
    spec_path = tmp_path / "fuller.yaml"
    spec_path.write_text(
        f"extends: {SPECS / 'ruler.yaml'}\nvariants:\n  task:\n    fwe:\n      needle: {{task: fwe, fwe_fill: 0.9}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "fwe"
    select = {"config": "fwe", "length": "4096", "repeat": 234, "tokenizer": "cl100k_base"}
    needlec.compile(spec_path, out, select=select)
    item = next(needlec.load_items(out))
    plan = load_plan(spec_path)
    spec = plan.config("fwe").spec
    tokenizer = load_tokenizer(tokenizer_argument("cl100k_base"), plan.spec_dir)
    assert tokenizer.count(item.context()) == item.context_tokens
    reachable = reachable_depths(item, tokenizer)
    for i, needle in enumerate(item.needles):
        if needle.role == "target":
            aimed = min(needle.target_depth_percent, reachable[i])
            assert abs(needle.depth_percent - aimed) <= spec.placement.depth_tolerance, (i, needle.depth_percent, aimed)


def test_many_needles_reach_as_deep_as_one_by_one(tmp_path: Path) -> None:
    # CWE's 300 words and FWE's 100 blocks: the tails summed by numpy give every needle the reachable depth the
    # pass from the end gives it, float for float
    from needlec.compile.checks import _reachable_at_once, _reachable_one_by_one

    out = tmp_path / "words"
    needlec.compile(SPECS / "ruler.yaml", out, select={"config": "cwe,fwe", "length": "4096", "repeat": "0-2"})
    plan = load_plan(SPECS / "ruler.yaml")
    tokenizer = load_tokenizer(plan.config("cwe").spec.tokenizers[0], plan.spec_dir)
    items = list(needlec.load_items(out))
    assert len(items) == 6
    for item in items:
        assert len(item.needles) >= 100
        assert _reachable_at_once(item, tokenizer.count) == _reachable_one_by_one(item, tokenizer.count)
