"""Sample items as HTML: the chat a runner sends, the context collapsed, the needles marked."""

from __future__ import annotations

from typing import Any

from needlec.site.markdown import cell, code, escape, short_number, table

FULL_CONTEXT_CHARS = 12_000
WINDOW = 600


def _marked(context: str, needles: list[dict[str, Any]]) -> str:
    """The context as HTML with each needle in <mark>; long contexts are cut around the needles."""
    spans = sorted((n["char_offset"], n["char_offset"] + len(n["text"])) for n in needles)
    if len(context) <= FULL_CONTEXT_CHARS:
        keep = [(0, len(context))]
    else:
        wanted = [(0, WINDOW), (len(context) - WINDOW, len(context))]
        wanted += [(max(0, a - WINDOW), min(len(context), b + WINDOW)) for a, b in spans]
        keep = []
        for a, b in sorted(wanted):
            if keep and a <= keep[-1][1]:
                keep[-1] = (keep[-1][0], max(keep[-1][1], b))
            else:
                keep.append((a, b))
    out: list[str] = []
    cursor = 0
    for a, b in keep:
        if a > cursor:
            out.append(f'<span class="needlec-gap">[… {a - cursor:,} characters left out …]</span>')
        position = a
        for start, end in spans:
            if end <= position or start >= b:
                continue
            start, end = max(start, position), min(end, b)
            out.append(escape(context[position:start]))
            out.append(f'<mark class="needlec-needle">{escape(context[start:end])}</mark>')
            position = end
        out.append(escape(context[position:b]))
        cursor = b
    return "".join(out)


def _messages_html(item: dict[str, Any]) -> str:
    span = item["context_span"]
    parts = []
    for index, message in enumerate(item["messages"]):
        content = message["content"]
        if index == span["message"]:
            context = content[span["start"] : span["end"]]
            body = (
                escape(content[: span["start"]])
                + f'<span class="needlec-context">{_marked(context, item["needles"])}</span>'
                + escape(content[span["end"] :])
            )
        else:
            body = escape(content)
        parts.append(
            f'<div class="needlec-message"><p class="needlec-role">{escape(message["role"])}</p>'
            f'<pre class="needlec-text">{body}</pre></div>'
        )
    return "\n".join(parts)


def sample_section(item: dict[str, Any]) -> str:
    """One sample: a summary table and a collapsed <details> holding the full prompt."""
    needles = "<br>".join(
        f"{n['depth_percent']:g}% (target {n['target_depth_percent']:g}%), token {n['token_offset']:,}"
        for n in item["needles"]
    )
    summary = table(
        ["field", "value"],
        [
            ("id", code(item["id"])),
            ("tokenizer", code(item["tokenizer"])),
            ("context tokens", f"{item['context_tokens']:,} (target {item['context_length']:,})"),
            ("question", cell(item["question"])),
            ("answers", "; ".join(" or ".join(code(alias) for alias in fact) for fact in item["answers"])),
            ("needles", needles),
            ("scoring", code(item["scoring"].get("metric", ""))),
        ],
    )
    title = f"### `{item['config']}` · {short_number(item['context_length'])} tokens · depth {item['depth_percent']:g}%"
    details = (
        f'<details class="needlec-sample" data-search-exclude>\n'
        f"<summary>The prompt as sent, with the needle{'s' if len(item['needles']) > 1 else ''} "
        f"highlighted ({item['context_tokens']:,} context tokens)</summary>\n"
        f"{_messages_html(item)}\n</details>"
    )
    return f"{title}\n\n{summary}\n\n{details}"
