"""Check a compiled MLNeedle dataset from the item text alone, with rules of its own.

    python scripts/check_mlneedle.py DATASET [--config NAME ...] [--encoding o200k_base]

Each item's context is split into passages on blank lines, and it checks, without needlec's
passage tables or rankings:

- the passages are numbered `[0]`, `[1]`, ... in order, and no text follows the last one but a
  declared filler (blank line, then the filler repeated); a baseline (haystack `none`) is one
  passage alone, unnumbered and without filler;
- exactly one passage holds a gold answer (any language, casefolded; a whole word where the script
  has spaces) and it is the recorded needle, at index 0 (depth 0), floor(n/2) (depth 50) or n-1
  (depth 100); an existence negative (`expected: no`) holds no answer at all;
- each passage is written in the haystack's script (Latin, Arabic, Devanagari or Han; the mixed
  haystack may hold any of them) and the needle in the needle language's script;
- the context re-encodes to `context_tokens`, which equals the item's length when the context is
  counted (the baseline's length is what its passage measures), and no U+FFFD appears;
- over all items with distractors, the needle is the shortest passage of its context in no more than
  15% of them (chance with 20-odd passages is about 5%).

Prints a count per defect kind and config, the first examples, and the shortest-needle share; exits 1
on any defect.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

LABEL = re.compile(r"^\[(\d+)\] ")
SCRIPTS = {"en": "Latin", "de": "Latin", "es": "Latin", "vi": "Latin", "ar": "Arabic", "hi": "Devanagari", "zh": "Han"}
SHORTEST_LIMIT = 0.15


def script_of(text: str) -> str:
    """The script most letters of `text` are written in (by Unicode character names)."""
    counts: Counter[str] = Counter()
    for char in text:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        for script in ("LATIN", "ARABIC", "DEVANAGARI", "CJK"):
            if name.startswith(script):
                counts[script] += 1
                break
    if not counts:
        return "none"
    top = counts.most_common(1)[0][0]
    return {"LATIN": "Latin", "ARABIC": "Arabic", "DEVANAGARI": "Devanagari", "CJK": "Han"}[top]


def _spaced_word_char(char: str) -> bool:
    """A letter, mark or digit of a script that puts spaces between words (not Han)."""
    return (char.isalnum() or unicodedata.category(char).startswith("M")) and script_of(char) != "Han"


def holds(text: str, alias: str) -> bool:
    """`alias` in `text`, casefolded and NFKC; a whole word unless it is written in Han (a Han character
    next to it ends a word: "4827" is whole in "了4827毫米")."""
    hay = unicodedata.normalize("NFKC", text).casefold()
    term = unicodedata.normalize("NFKC", alias).casefold().strip()
    if not term:
        return False
    if script_of(term) == "Han":
        return term in hay
    at = hay.find(term)
    while at >= 0:
        before = hay[at - 1] if at else " "
        after = hay[at + len(term)] if at + len(term) < len(hay) else " "
        if not _spaced_word_char(before) and not _spaced_word_char(after):
            return True
        at = hay.find(term, at + 1)
    return False


def check_item(item: dict[str, Any], encode: Any) -> tuple[list[tuple[str, str]], bool | None]:
    """(defects, whether the needle is the shortest passage, or None where that does not apply)."""
    defects: list[tuple[str, str]] = []
    span = item["context_span"]
    context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
    languages = item["languages"]
    baseline = languages["haystack"] == "none"
    if "\ufffd" in context:
        defects.append(("U+FFFD in the context", ""))
    if len(encode(context)) != item["context_tokens"]:
        defects.append(("token count", f"{len(encode(context))} != {item['context_tokens']}"))
    if not baseline and item["context_tokens"] != item["context_length"]:
        defects.append(("length", f"{item['context_tokens']} != {item['context_length']}"))
    # the baseline is one passage shown alone, without a number
    blocks = [] if baseline else context.split("\n\n")
    passages = [context] if baseline else []
    for i, block in enumerate(blocks):
        match = LABEL.match(block)
        if match is None:
            # only the filler may follow the last passage
            if i != len(blocks) - 1 or baseline or not block.strip() or set(block) - set(" ."):
                defects.append(("text that is not a numbered passage", block[:60]))
            continue
        if int(match.group(1)) != len(passages):
            defects.append(("numbering", f"[{match.group(1)}] at {len(passages)}"))
        passages.append(block[match.end() :])
    aliases = [a for group in item["answers"] for a in group]
    holding = [i for i, p in enumerate(passages) if any(holds(p, a) for a in aliases)]
    negative = item.get("expected") == "no"
    if negative:
        if holding:
            defects.append(("a negative holds an answer", f"passages {holding}"))
        return defects, None
    targets = [n for n in item["needles"] if n["role"] == "target"]
    if len(targets) != 1:
        return [*defects, ("needles", f"{len(targets)} target needles")], None
    needle = targets[0]["text"]
    at = [i for i, p in enumerate(passages) if p == needle]
    if len(at) != 1:
        return [*defects, ("needle passage", f"found {len(at)} times")], None
    if holding != at:
        defects.append(("answer outside the needle", f"answers in {holding}, needle at {at}"))
    n = len(passages)
    depth = item["depth_percent"]
    expected = 0 if depth <= 0 else n - 1 if depth >= 100 else n // 2 if depth == 50 else None
    if expected is not None and at[0] != expected:
        defects.append(("needle index", f"depth {depth}: {at[0]} of {n}, expected {expected}"))
    if script_of(needle) != SCRIPTS[languages["needle"]]:
        defects.append(("needle script", f"{script_of(needle)} for {languages['needle']}"))
    want = SCRIPTS.get(languages["haystack"])
    for i, passage in enumerate(passages):
        if i != at[0] and want is not None and script_of(passage) != want:
            defects.append(("passage script", f"[{i}] {script_of(passage)} in a {languages['haystack']} haystack"))
    if baseline:
        if n != 1:
            defects.append(("baseline", f"{n} passages"))
        return defects, None
    lengths = [len(encode(p)) for p in passages]
    return defects, lengths[at[0]] <= min(lengths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--config", action="append", default=[])
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args()
    import tiktoken

    from needlec.tokenizer import _seed_tiktoken_cache

    _seed_tiktoken_cache(args.encoding)  # the table ships with needlec's dependencies; no download
    enc = tiktoken.get_encoding(args.encoding)

    def encode(text: str) -> list[int]:
        return enc.encode(text, disallowed_special=())

    defects: Counter[tuple[str, str]] = Counter()
    examples: list[str] = []
    items = 0
    shortest = []
    for path in sorted((args.dataset / "data").rglob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            item = json.loads(line)
            if args.config and item["config"] not in args.config:
                continue
            items += 1
            found, short = check_item(item, encode)
            if short is not None:
                shortest.append(short)
            for kind, detail in found:
                defects[(kind, item["config"])] += 1
                if len(examples) < 12:
                    examples.append(f"  {item['id']}: {kind}: {detail}")
    share = sum(shortest) / len(shortest) if shortest else 0.0
    print(f"{items} items checked; the needle is the shortest passage in {sum(shortest)} of {len(shortest)} items")
    print(f"with distractors ({share:.1%})")
    for (kind, config), n in sorted(defects.items()):
        print(f"  {n:>6}  {kind}  ({config})")
    if examples:
        print("first examples:")
        print("\n".join(examples))
    if share > SHORTEST_LIMIT:
        print(f"the needle is the shortest passage in more than {SHORTEST_LIMIT:.0%} of the items")
    bad = bool(defects) or share > SHORTEST_LIMIT
    print("defects: " + (str(sum(defects.values())) if bad else "0"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
