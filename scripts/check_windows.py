"""Check a compiled dataset's windows and depths from the item text alone, with rules of its own.

    python scripts/check_windows.py SPEC DATASET [--config NAME ...]

For every item it finds the haystack the item names (by sha256, rebuilt from SPEC) and checks, without
the placement engine's boundary index:

- the window starts where a sentence starts: the haystack text before it ends with a sentence end
  (`.!?` in Latin script, `。！？` in CJK, then closing quotes or brackets) or a line break;
- the window ends where a sentence ends, by the same rule, and the context's last visible character is a
  sentence end (the haystack's or the last needle's);
- no window starts or ends inside a word (the characters on both sides of each edge are not both
  letters or digits);
- the recorded token counts re-encode (the context and each needle's offset);
- each target needle is within the spec's depth tolerance of its target, a target beyond what the
  needle can reach (the needles from it to the end need their own tokens) counted as that reach.

Prints a count per defect kind and config and the first examples; exits 1 on any defect. Only
tiktoken encodings are re-encoded here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SENTENCE_ENDS = ".!?\u3002\uff01\uff1f"
CLOSERS = "\"')]\u201d\u2019\u300d\u300f\uff09\u3011"
FILL = " \t\n\u3000"


def ends_sentence(before: str) -> bool:
    """Whether text that ends with `before` ends a sentence (or a line): the window may start after it."""
    stripped = before.rstrip(FILL)
    if not stripped or "\n" in before[len(stripped) :]:
        return True
    return stripped.rstrip(CLOSERS)[-1:] in SENTENCE_ENDS


def inside_word(left: str, right: str) -> bool:
    return left.isalnum() and right.isalnum() and not (_cjk(left) or _cjk(right))


def _cjk(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def check_item(
    item: dict[str, Any], haystack: str, tolerance: float, encode: Any, lines: bool = False
) -> list[tuple[str, str]]:
    """The defects of one item as (kind, detail) pairs (empty when none)."""
    defects: list[tuple[str, str]] = []
    span = item["context_span"]
    context = item["messages"][span["message"]]["content"][span["start"] : span["end"]]
    start, end = item["haystack"]["start_char"], item["haystack"]["end_char"]
    if not ends_sentence(haystack[:start]):
        defects.append(("starts inside a sentence", f"...{haystack[max(0, start - 30) : start]!r}|{context[:30]!r}"))
    if start > 0 and inside_word(haystack[start - 1], haystack[start : start + 1] or " "):
        defects.append(("starts inside a word", f"{haystack[start - 10 : start + 10]!r}"))
    if not ends_sentence(haystack[:end]):
        defects.append(("ends inside a sentence", f"{haystack[max(0, end - 40) : end]!r}|{haystack[end : end + 20]!r}"))
    if end < len(haystack) and inside_word(haystack[end - 1 : end] or " ", haystack[end]):
        defects.append(("ends inside a word", f"{haystack[end - 10 : end + 10]!r}"))
    # a word list (`snap: line`) ends where a line of the haystack ends, or with whole-line needles
    # after a window that ends on a line break
    line_end = lines and (haystack[end : end + 1] in ("", "\n") or haystack[:end].endswith("\n"))
    if not ends_sentence(context) and not line_end:
        defects.append(("the context ends inside a sentence", f"...{context[-40:]!r}"))
    if encode is None:
        return defects
    total = len(encode(context))
    if total != item["context_tokens"]:
        defects.append(
            ("wrong context count", f"context re-encodes to {total} tokens, recorded {item['context_tokens']}")
        )
    targets = [n for n in item["needles"] if n["role"] == "target"]
    for needle in targets:
        before = len(encode(context[: needle["char_offset"]]))
        if before != needle["token_offset"]:
            defects.append(
                (
                    "wrong needle offset",
                    f"needle {needle['id']}: {before} tokens before it, recorded {needle['token_offset']}",
                )
            )
        tail = sum(len(encode(n["text"])) for n in targets if n["char_offset"] >= needle["char_offset"])
        reach = 100.0 * max(0, total - tail) / total
        wanted = min(needle["target_depth_percent"], reach)
        got = 100.0 * before / total
        if abs(got - wanted) > tolerance + 0.05:  # the recorded depths are rounded to 0.1
            defects.append(
                (
                    "needle beyond its depth tolerance",
                    f"needle {needle['id']} at depth {got:.1f}%, target {wanted:.1f}% (tolerance {tolerance:g})",
                )
            )
    return defects


def _rows(dataset: Path, configs: set[str] | None) -> Iterator[dict[str, Any]]:
    for path in sorted((dataset / "data").glob("*/*.jsonl")):
        if configs and path.parent.name not in configs:
            continue
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)


def check(spec: Path, dataset: Path, configs: set[str] | None = None) -> dict[tuple[str, str], list[str]]:
    """Defects by (config, kind), each with the item id and detail."""
    import tiktoken

    from needlec.compile.pipeline import Prepared
    from needlec.compile.plan import load_plan

    plan = load_plan(spec)
    prepared = Prepared(plan, Path.home() / ".cache" / "needlec")
    texts: dict[str, str] = {}
    tolerances = {c.name: c.spec.placement.depth_tolerance for c in plan.configs}
    by_lines = {c.name: c.spec.placement.snap == "line" for c in plan.configs}
    encoders: dict[str, Any] = {}
    found: dict[tuple[str, str], list[str]] = {}
    for item in _rows(dataset, configs):
        sha = item["haystack"]["sha256"]
        if sha not in texts:
            config = plan.config(item["config"])
            texts.update({h.sha256: h.text for h in prepared.haystacks(config.spec)})
        name = item["tokenizer"]
        if name not in encoders:
            try:
                encoders[name] = tiktoken.get_encoding(name).encode_ordinary
            except ValueError:
                encoders[name] = None
        defects = check_item(item, texts[sha], tolerances[item["config"]], encoders[name], by_lines[item["config"]])
        for kind, detail in defects:
            found.setdefault((item["config"], kind), []).append(f"{item['id']}: {detail}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", type=Path)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--config", action="append", help="check only this config (repeatable)")
    args = parser.parse_args()
    found = check(args.spec, args.dataset, set(args.config) if args.config else None)
    items = Counter(row["config"] for row in _rows(args.dataset, set(args.config) if args.config else None))
    print(f"{sum(items.values())} items in {len(items)} configs")
    if not found:
        print("0 defects")
        return 0
    for (config, kind), examples in sorted(found.items()):
        print(f"{config}: {len(examples)} x {kind}")
        for example in examples[:2]:
            print(f"    {example[:220]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
