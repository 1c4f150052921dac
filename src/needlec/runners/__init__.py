"""Runner adapters: a compiled dataset rewritten as the input of an evaluation runner.

`needlec export DATASET --to inspect|lm-eval|openai-batch|prompts -o DIR`. Every adapter keeps the
item id, so the runner's native output can be fed back to `needlec score` unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from needlec.errors import OutputError
from needlec.runners import files as _files
from needlec.runners.files import flat_prompt
from needlec.util.atomic import WRITTEN, atomic_directory, check_target

Writer = Callable[[list[dict[str, Any]], Path, dict[str, Any]], list[str]]

RUNNERS: dict[str, Writer] = {
    "prompts": _files.write_prompts,
    "openai-batch": _files.write_openai_batch,
    "inspect": _files.write_inspect,
    "lm-eval": _files.write_lm_eval,
}

__all__ = ["RUNNERS", "export", "flat_prompt"]


EXPORT_OPTIONS = {"model", "max_tokens", "no_answer_prefix", "task_name"}
"""What `export`'s `options` may hold (the CLI's --model, --max-tokens and --no-answer-prefix; lm-eval's group name)."""


def export(
    dataset: str | Path,
    to: str,
    out: str | Path,
    *,
    tokenizer: str | None = None,
    config: Sequence[str] = (),
    options: dict[str, Any] | None = None,
) -> list[str]:
    """Write the runner files for `dataset`'s items into the folder `out`; returns file names.

    `out` must be missing, empty or an earlier export holding only what it wrote (its `.needlec-written`
    lists every file), so nothing of the user's is replaced.
    """
    from needlec.scoring.dataset import select_items

    if to not in RUNNERS:
        raise OutputError(f"unknown runner {to!r}; choose one of {', '.join(sorted(RUNNERS))}")
    options = dict(options or {})
    unknown = sorted(set(options) - EXPORT_OPTIONS)
    if unknown:
        raise OutputError(
            f"unknown export option(s) {', '.join(unknown)}; the options are {', '.join(sorted(EXPORT_OPTIONS))}"
        )
    budget = options.get("max_tokens")
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 1):
        raise OutputError(f"--max-tokens must be a positive number of tokens; got {budget!r}")
    target = check_target(Path(out), _is_export, guard=(Path(dataset),), what="an earlier export")
    chosen = select_items(dataset, tokenizer, config)
    bare = [str(item["id"]) for item in chosen if "messages" not in item]
    if bare:  # what a runner sends is the item's messages
        raise OutputError(
            f"{len(bare)} item(s) of {dataset} have no `messages` to send (first: {bare[0]!r}); export reads a "
            "compiled dataset, whose items all have them"
        )
    with atomic_directory(target, _is_export, guard=(Path(dataset),), what="an earlier export") as tmp:
        files = RUNNERS[to](chosen, tmp, options)
        (tmp / EXPORT_RECORD).write_text(json.dumps({"needlec_export": to}) + "\n", encoding="utf-8")
        return files


EXPORT_RECORD = ".needlec-export.json"
"""What marks a folder `export` wrote (with the runner it was for), which a later export may replace."""


def _is_export(folder: Path) -> bool:
    """A folder an earlier `export` wrote: it holds `EXPORT_RECORD`. (The folder's `.needlec-written` must list
    every file in it too, or it is not replaced.)"""
    try:
        record = json.loads((folder / EXPORT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and "needlec_export" in record and (folder / WRITTEN).is_file()
