"""`needlec score DATASET RESPONSES... -o REPORT`: judge a runner's responses and write a report."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def cmd_score(args: argparse.Namespace) -> int:
    """Score the responses, write the report, print the headline numbers."""
    from needlec.scoring.api import score
    from needlec.scoring.report import write_report

    result = score(
        args.dataset,
        args.responses,
        allow_missing=args.allow_missing,
        allow_unknown=args.allow_unknown,
        tokenizer=args.tokenizer,
        config=args.config,
    )
    files = write_report(result, args.output, plots=not args.no_plots)
    bookkeeping = result.summary["responses"]
    if result.missing:
        print(f"warning: {bookkeeping['missing']} item(s) had no response and were left out", file=sys.stderr)
    if result.unknown:
        print(
            f"warning: {bookkeeping['unknown']} response id(s) are not in the dataset and were ignored", file=sys.stderr
        )
    overall = result.summary["overall"]
    if result.tables:
        # the family's own overall numbers (e.g. RULER's 13-task average), not an item-weighted mean
        print(f"scored {bookkeeping['scored_items']} items")
        for table in result.tables.values():
            print()
            print(table.to_console())
        print()
        print("item means per config (points):")
    else:
        print(f"scored {bookkeeping['scored_items']} items: mean {overall['mean']} points (95% CI {overall['ci95']})")
    for name, cfg in result.summary["configs"].items():
        print(f"  {name}: {cfg['mean']} ({cfg['metric']}, n={cfg['n']})")
    print(f"wrote {len(files)} files to {args.output}")
    return 0


def add_score_command(sub: Any) -> None:
    """Register `needlec score` on the CLI's sub-command parser."""
    p = sub.add_parser(
        "score",
        help="score a runner's responses against a compiled dataset",
        description="Judge each response with the metric its item names (the `scoring` field), then "
        "write REPORT/scores.jsonl (one line per item), REPORT/summary.json (aggregates with 95% "
        "intervals: by length, by depth, heatmap, position bands, effective lengths, family scores), "
        "each family's headline table as REPORT/FAMILY.csv and REPORT/FAMILY.md (printed here too) and "
        'REPORT/plots/. RESPONSES are JSONL files of {"id", "response"} or the native outputs of '
        "Inspect, the LM Evaluation Harness or the OpenAI Batch API, detected automatically. Offline and "
        "deterministic: the same inputs give the same bytes.",
    )
    p.add_argument("dataset", metavar="DATASET", help="a compiled dataset folder (or one items JSONL file)")
    p.add_argument("responses", nargs="+", metavar="RESPONSES", help="response files; several are combined")
    p.add_argument("-o", "--output", required=True, metavar="REPORT", help="report folder (replaced if it is a report)")
    p.add_argument(
        "--allow-missing", action="store_true", help="score a partial run: items without a response are left out"
    )
    p.add_argument("--allow-unknown", action="store_true", help="ignore responses whose id is not in the dataset")
    p.add_argument("--tokenizer", metavar="NAME", help="expect responses only for the items of this tokenizer")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME",
        help="expect responses only for these configs (repeatable)",
    )
    p.add_argument("--no-plots", action="store_true", help="write scores, summary and family tables only")
    p.set_defaults(func=cmd_score)
