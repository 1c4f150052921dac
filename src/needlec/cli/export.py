"""`needlec export DATASET --to RUNNER -o DIR`: the dataset as a runner's input files."""

from __future__ import annotations

import argparse
from typing import Any

RUN_HINTS = {
    "prompts": 'feed {out}/prompts.jsonl to your completion runner, writing one {{"id", "response"}} line per '
    "item to responses.jsonl; then needlec score {dataset} responses.jsonl -o {dataset}-report",
    "openai-batch": "upload {out}/requests.jsonl to the Batch API and save its output file as output.jsonl; "
    "then needlec score {dataset} output.jsonl -o {dataset}-report",
    "inspect": "inspect eval {out}/task.py --model openai/MODEL (one task per config; task.py@TASK runs one); "
    "then needlec score {dataset} logs/*.eval -o {dataset}-report",
    "lm-eval": "(cd {out} && lm_eval --model local-chat-completions --apply_chat_template --include_path . "
    "--tasks {task} --log_samples --output_path results); then needlec score {dataset} "
    "{out}/results/*/samples_*.jsonl -o {dataset}-report",
}
"""The command that runs each runner's files and the `needlec score` that reads its output (`-o` included)."""


def cmd_export(args: argparse.Namespace) -> int:
    """Write the runner files and print how to run them."""
    from needlec.runners import export

    options = {"model": args.model, "max_tokens": args.max_tokens, "no_answer_prefix": args.no_answer_prefix}
    names = export(args.dataset, args.to, args.output, tokenizer=args.tokenizer, config=args.config, options=options)
    print(f"wrote {', '.join(names)} to {args.output}")
    task = names[0].removesuffix(".yaml") if args.to == "lm-eval" else ""  # the group: one subtask per config
    print("next: " + RUN_HINTS[args.to].format(out=args.output, dataset=str(args.dataset).rstrip("/"), task=task))
    return 0


def add_export_command(sub: Any) -> None:
    """Register `needlec export` on the CLI's sub-command parser."""
    p = sub.add_parser(
        "export",
        help="write a dataset as the input of an evaluation runner",
        description="Rewrite a compiled dataset for a runner: `inspect` (Inspect AI tasks, one per config, "
        "with needlec's scorer in points and means per length and depth), `lm-eval` (an "
        "lm-evaluation-harness group with one subtask per config, the system message sent as a system "
        "message, and a process_results calling needlec's scorer, in points), `openai-batch` (a Batch API "
        "request file, custom_id = item id) or `prompts` (flat prompt JSONL for completion models). "
        "Item ids are kept, so the runner's output goes "
        "straight to `needlec score`.",
    )
    p.add_argument("dataset", metavar="DATASET", help="a compiled dataset folder")
    p.add_argument("--to", required=True, choices=sorted(RUN_HINTS), help="the runner")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="a new or empty folder, or an earlier export, which is replaced",
    )
    p.add_argument("--tokenizer", metavar="NAME", help="only the items of this tokenizer")
    p.add_argument("--config", action="append", default=[], metavar="NAME", help="only these configs (repeatable)")
    p.add_argument(
        "--model",
        metavar="NAME",
        help="model name written into OpenAI Batch requests, required there (the other runners take it when run)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="generation budget (default: the item's, else 128; Inspect and lm-eval take the largest of a "
        "config's items)",
    )
    p.add_argument(
        "--no-answer-prefix",
        action="store_true",
        help="leave the items' answer prefix (a prefilled start of the answer) out: of flat prompts, lm-eval's "
        "gen_prefix and Inspect's final assistant message; needed for openai-batch, which cannot continue one",
    )
    p.set_defaults(func=cmd_export)
