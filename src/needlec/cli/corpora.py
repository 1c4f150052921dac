"""`needlec corpora`: list the embedded haystack corpora with their sizes and licences."""

from __future__ import annotations

import argparse
import json


def cmd_corpora(args: argparse.Namespace) -> int:
    """Print the catalog as a table (or JSON), optionally narrowed by group or language."""
    from needlec.haystacks.sources import corpora

    chosen = corpora.select((), [args.group] if args.group else (), [args.language] if args.language else ())
    if args.json:
        rows = [
            {
                "name": c.name,
                "title": c.title,
                "language": c.language,
                "group": c.group,
                "documents": c.documents,
                "passages": c.passages,
                "characters": c.characters,
                "tokens": c.tokens,
                "licence": c.licence,
                "sha256": c.sha256,
                "alignment": c.alignment,
                "provenance": c.provenance,
                "cleaning": list(c.cleaning),
            }
            for c in chosen
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    encodings = sorted({e for c in chosen for e in c.tokens})
    header = ["corpus", "lang", "group", "docs", "characters", *encodings, "licence"]
    table = [header] + [
        [
            c.name,
            c.language,
            c.group,
            str(c.documents),
            f"{c.characters:,}",
            *(f"{c.tokens[e]:,}" if e in c.tokens else "-" for e in encodings),
            c.licence,
        ]
        for c in chosen
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    numeric = {3, 4, *range(5, 5 + len(encodings))}
    for row in table:
        cells = [
            cell.rjust(w) if i in numeric else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    return 0


def add_corpora_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `needlec corpora` on the main parser's subcommands."""
    p = sub.add_parser(
        "corpora",
        help="list the embedded haystack corpora",
        description="List the embedded haystack corpora (usable offline with `type: builtin`): name, "
        "language, group, documents, size in characters and in tokens per tokenizer (counted when the "
        "corpora were built), and licence. Token counts are of the documents as the builtin source "
        "yields them.",
    )
    p.add_argument("--group", metavar="GROUP", help="only this group (novels, zh-modern, aligned-bible, udhr, bible)")
    p.add_argument("--language", metavar="LANG", help="only this language (ISO 639-1, e.g. zh)")
    p.add_argument("--json", action="store_true", help="print the full catalog entries as JSON")
    p.set_defaults(func=cmd_corpora)
