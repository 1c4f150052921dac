"""Readable summaries of a spec (its grid, before compiling) or of a compiled dataset folder."""

from __future__ import annotations

import json
from collections import Counter as Tally
from pathlib import Path
from typing import Any

from needlec.compile.plan import Plan
from needlec.compile.size import config_size
from needlec.dataset.manifest import describe_repetition, read_manifest
from needlec.errors import NeedlecError
from needlec.placement.engine import merge_spans


def summarize_plan(plan: Plan) -> str:
    spec = plan.spec
    lines = [f"{spec.name}: {spec.title}", f"  spec sha256  {plan.spec_sha256}"]
    total_items = total_tokens = 0
    for config in plan.configs:
        c = config.spec
        lengths = c.grid.length_points()
        depths = config.depth_points()
        tokenizers = [t.label for t in c.tokenizers]
        size = config_size(config, {})
        tokens = size.tokens
        total_items += size.items
        total_tokens += tokens
        axes = ", ".join(f"{a}={v}" for a, v in config.axes) or "no variants"
        lines += [
            f"  config {config.name} ({axes})",
            f"    tokenizers {', '.join(tokenizers)}",
            f"    lengths    {_ints(lengths)}",
            f"    depths     {', '.join(f'{d:g}' for d in depths)}",
            f"    items      {size.items}  ({tokens:,} context tokens)",
        ]
    lines.append(f"  total        {total_items} items, {total_tokens:,} context tokens")
    return "\n".join(lines)


def _ints(values: list[int]) -> str:
    return ", ".join(f"{v:,}" for v in values)


def render_item(item: dict[str, Any], width: int = 240) -> str:
    """An item as a person would read it: the chat with the long context cut down around needles."""
    span = item["context_span"]
    lines = [
        f"id        {item['id']}",
        f"tokens    {item['context_tokens']} context / {item['prompt_tokens']} prompt "
        f"(target {item['context_length']}, {item['tokenizer']})",
        f"question  {item['question']}",
        f"answers   {'; '.join(' or '.join(fact) for fact in item['answers'])}",
    ]
    for i, n in enumerate(item["needles"]):
        lines.append(
            f"{n.get('role', 'target')} {n.get('id', i)}  depth {n['depth_percent']}% "
            f"(target {n['target_depth_percent']}%), "
            f"token {n['token_offset']}, char {n['char_offset']}"
        )
    for index, message in enumerate(item["messages"]):
        content = message["content"]
        if index == span["message"]:
            context = content[span["start"] : span["end"]]
            content = content[: span["start"]] + _excerpt(context, item["needles"], width) + content[span["end"] :]
        lines.append(f"--- {message['role']} ---")
        lines.append(content)
    return "\n".join(lines)


def _excerpt(context: str, needles: list[dict[str, Any]], width: int) -> str:
    keep: list[tuple[int, int]] = [(0, width // 2), (max(0, len(context) - width // 2), len(context))]
    for n in needles:
        start = n["char_offset"]
        keep.append((max(0, start - width), min(len(context), start + len(n["text"]) + width)))
    merged = merge_spans(keep)
    marks = {n["char_offset"]: len(n["text"]) for n in needles}
    out = []
    cursor = 0
    for a, b in merged:
        if a > cursor:
            out.append(f" [... {a - cursor:,} characters ...] ")
        piece = context[a:b]
        for offset in sorted(marks, reverse=True):
            if a <= offset < b:
                rel = offset - a
                piece = piece[:rel] + ">>>" + piece[rel : rel + marks[offset]] + "<<<" + piece[rel + marks[offset] :]
        out.append(piece)
        cursor = b
    return "".join(out)


def summarize_dataset(folder: Path) -> tuple[str, dict[str, Any] | None]:
    manifest = read_manifest(folder)
    lines = [
        f"{manifest['spec']['name']} (needlec {manifest['needlec_version']}, "
        f"item schema v{manifest['item_schema_version']})",
        f"  content hash {manifest['content_hash']}",
    ]
    sample = None
    for name, info in manifest["configs"].items():
        for f in info["files"]:
            tokens = rows = 0
            lengths: Tally[int] = Tally()
            path = folder / f["path"]
            if not path.is_file():  # a download of other configs only, or a damaged folder (`verify` says which)
                lines.append(f"  {name}/{f['split']}: not in this folder ({f['path']})")
                continue
            with path.open("rb") as handle:
                for number, raw in enumerate(handle, 1):
                    try:
                        item = json.loads(raw)
                        tokens += item["context_tokens"]
                        lengths[item["context_length"]] += 1
                    except (ValueError, KeyError, TypeError):
                        raise NeedlecError(
                            f"{path}:{number}: not an item line; run `needlec verify {folder}` to see what changed"
                        ) from None
                    rows += 1
                    if sample is None:
                        sample = item
            if rows != f["rows"]:
                lines.append(f"  {name}/{f['split']}: warning: {rows} items in the file, the manifest says {f['rows']}")
            lines.append(
                f"  {name}/{f['split']}: {rows} items, {tokens:,} context tokens, "
                f"{path.stat().st_size:,} bytes, lengths {_ints(sorted(lengths))}"
            )
        for entry in info.get("repetition") or []:
            lines.append(f"  {name}: warning: {describe_repetition(entry)}")
    return "\n".join(lines), sample
