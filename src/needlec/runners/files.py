"""The four adapters' file writers. Each returns the names of the files it wrote."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from needlec.errors import OutputError
from needlec.util.canonical import line


def flat_prompt(item: dict[str, Any], answer_prefix: bool = True) -> str:
    """The item's chat messages as one completion prompt: system text, a blank line, the user text,
    then the item's `answer_prefix` (when present and wanted) after a blank line."""
    parts = [str(m.get("content", "")) for m in item.get("messages") or []]
    prompt = "\n\n".join(p for p in parts if p)
    prefix = item.get("answer_prefix")
    if answer_prefix and prefix:
        prompt += "\n\n" + str(prefix)
    return prompt


def _max_tokens(item: dict[str, Any], options: dict[str, Any]) -> int:
    return int(options.get("max_tokens") or item.get("max_new_tokens") or 128)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(line(r) for r in rows))


def write_prompts(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """prompts.jsonl: `{"id", "prompt", "max_new_tokens"}` per item, for completion (base) models."""
    rows = [
        {
            "id": it["id"],
            "prompt": flat_prompt(it, not options.get("no_answer_prefix")),
            "max_new_tokens": _max_tokens(it, options),
        }
        for it in items
    ]
    _write_jsonl(out / "prompts.jsonl", rows)
    return ["prompts.jsonl"]


def write_openai_batch(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """requests.jsonl for the OpenAI Batch API (`custom_id` = item id, chat completions, temperature 0).

    The chat completions API cannot continue a prefilled answer, so items with an `answer_prefix` are refused
    unless `no_answer_prefix` says to send them without it (they then ask what the same items without a
    prefill ask)."""
    prefixed = [it for it in items if it.get("answer_prefix")]
    if prefixed and not options.get("no_answer_prefix"):
        configs = ", ".join(dict.fromkeys(str(it.get("config")) for it in prefixed))
        raise OutputError(
            f"{len(prefixed)} item(s) of config(s) {configs} start their answer with a prefill (`answer_prefix`), "
            "which the chat completions API cannot continue. Pass --no-answer-prefix (from Python, options="
            "{'no_answer_prefix': True}) to send them without it, "
            "--config to export the other configs only, or export --to prompts, lm-eval or inspect, which keep it."
        )
    model = options.get("model")
    if not model:
        raise OutputError(
            "a Batch API request names its model: pass --model NAME (from Python, options={'model': NAME}), "
            "the model the batch will run on"
        )
    rows = [
        {
            "custom_id": it["id"],
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {
                "model": model,
                "messages": it["messages"],
                "max_tokens": _max_tokens(it, options),
                "temperature": 0,
            },
        }
        for it in items
    ]
    _write_jsonl(out / "requests.jsonl", rows)
    return ["requests.jsonl"]


def _items_file(items: list[dict[str, Any]], out: Path) -> str:
    _write_jsonl(out / "items.jsonl", items)
    return "items.jsonl"


INSPECT_TASK = '''"""Inspect AI tasks for a needlec dataset, one per config; the scorer is needlec's own.

Scores are in points (0-100), the scale of `needlec score`: an item scores 100 x needlec's score
in [0, 1]. Each task reports `mean` (its config's mean, as `needlec score` prints it) and the mean
per context length (`length_N`) and per grid depth (`depth_D`).

Run every config:  inspect eval task.py --model openai/MODEL
One config:        inspect eval task.py@TASK --model openai/MODEL   (TASK: one of the functions at the end)
Then:              needlec score DATASET logs/*.eval -o REPORT
A local OpenAI-compatible server: add --model-base-url http://HOST:PORT/v1 -M responses_api=false
"""

import json
import re
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Score, Target, grouped, mean, scorer
from inspect_ai.solver import TaskState, generate

from needlec.scoring.api import score_response

HERE = Path(__file__).parent
ITEMS = {}
with (HERE / "items.jsonl").open(encoding="utf-8") as fh:
    for row in fh:
        item = json.loads(row)
        ITEMS[item["id"]] = item

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
SCALE = 100.0  # points, as needlec score reports them
PREFILL = PREFILL_ANSWERS  # an item's answer_prefix goes last, as an assistant message the model continues


def sample(item):
    messages = [ROLES[m["role"]](content=m["content"]) for m in item["messages"]]
    if PREFILL and item.get("answer_prefix"):  # the start of the answer, for the model to continue
        messages.append(ChatMessageAssistant(content=item["answer_prefix"]))
    target = [a if isinstance(a, str) else a[0] for a in item["answers"]]
    metadata = {
        "config": item.get("config"),
        "context_length": item.get("context_length"),
        "depth_percent": item.get("depth_percent"),
    }
    return Sample(id=item["id"], input=messages, target=target, metadata=metadata)


@scorer(
    metrics=[
        mean(),
        grouped(mean(), "context_length", all=False, name_template="length_{group_name}"),
        grouped(mean(), "depth_percent", all=False, name_template="depth_{group_name}"),
    ]
)
def needlec_scorer():
    async def score(state: TaskState, target: Target) -> Score:
        value, details = score_response(ITEMS[state.sample_id], state.output.completion)
        return Score(value=SCALE * value, answer=state.output.completion, metadata=details)

    return score


def needlec_task(config, max_tokens):
    items = [item for item in ITEMS.values() if item.get("config") == config]
    return Task(
        dataset=MemoryDataset([sample(item) for item in items], name=config),
        solver=generate(),
        scorer=needlec_scorer(),
        config=GenerateConfig(temperature=0, max_tokens=max_tokens),
        metadata={"needlec_config": config, "scale": "points (0-100)"},
    )
'''


def _identifiers(names: list[str], prefix: str) -> dict[str, str]:
    """A distinct Python identifier (and task name) per config name: `prefix_` + the name with
    every other character than letters, digits and `_` replaced by `_` (numbered on a clash)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = f"{prefix}_" + re.sub(r"\W", "_", name, flags=re.ASCII)
        ident, n = base, 2
        while ident in used:
            ident, n = f"{base}_{n}", n + 1
        used.add(ident)
        out[name] = ident
    return out


def _configs(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Items per config, configs in first-seen (dataset) order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for it in items:
        out.setdefault(str(it.get("config")), []).append(it)
    return out


def write_inspect(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """task.py (one Inspect task per config, needlec's scorer, scores in points) and items.jsonl."""
    names = [_items_file(items, out)]
    configs = _configs(items)
    functions = _identifiers(list(configs), "needlec")
    code = INSPECT_TASK.replace("PREFILL_ANSWERS", str(not options.get("no_answer_prefix")))
    code += "\n\n# The tasks, one per config (run one with task.py@NAME), each with its items' answer budget:\n"
    for name, members in configs.items():
        label = json.dumps(name, ensure_ascii=True)
        budget = max(_max_tokens(it, options) for it in members)
        code += (
            f"\n\n@task\ndef {functions[name]}():\n"
            f'    """Config {label} ({len(members)} items)."""\n'
            f"    return needlec_task({label}, {budget})\n"
        )
    (out / "task.py").write_text(code, encoding="utf-8")
    return [*names, "task.py"]


LM_EVAL_UTILS = '''"""Helpers of the needlec lm-evaluation-harness tasks: needlec's scorer, in points (0-100)."""

import json

from needlec.scoring.api import score_response


def process_results(doc, results):
    value, _ = score_response(json.loads(doc["item"]), results[0])
    return {"needlec_score": 100.0 * value}
'''


def _chat_parts(item: dict[str, Any]) -> tuple[str, str]:
    """(system text, user text) of an item's messages: the system messages' contents, and every
    other message's content joined by a blank line (items hold one user message)."""
    messages = item.get("messages") or []
    system = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system")
    return system, user


def _lm_eval_task(name: str, docs: str, max_tokens: int, answer_prefix: bool) -> str:
    """One lm-eval subtask YAML: the config's docs, the system message as `description` (sent as a
    system message under --apply_chat_template), the user text, the answer prefix as `gen_prefix`."""
    return (
        f"task: {name}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {docs}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        "description: system\n"
        "doc_to_text: user\n"
        'doc_to_target: ""\n'
        'target_delimiter: ""\n'
        + ("gen_prefix: answer_prefix\n" if answer_prefix else "")
        + "process_results: !function utils.process_results\n"
        "generation_kwargs:\n"
        "  until: []\n"
        "  do_sample: false\n"
        "  temperature: 0\n"
        f"  max_gen_toks: {max_tokens}\n"
        "metric_list:\n"
        "  - metric: needlec_score\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "metadata:\n"
        "  version: 1\n"
    )


def write_lm_eval(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """An lm-eval group (`GROUP.yaml`) with one subtask per config (`tasks/TASK.yaml`, data in
    `docs/TASK.jsonl`), and utils.py (needlec's scorer, in points).

    Each doc holds the item's system text, user text and answer prefix apart, so a chat model gets
    the system message as a system message; `item` is the whole item as JSON text for the scorer.
    The group's `needlec_score` is the mean over every item (weighted by size), as `needlec score`'s
    item mean; each subtask's is its config's mean.
    """
    benchmark = str(items[0].get("benchmark") or "dataset")
    group = options.get("task_name") or re.sub(r"\W", "_", f"needlec_{benchmark}", flags=re.ASCII)
    answer_prefix = not options.get("no_answer_prefix")
    configs = _configs(items)
    names = _identifiers(list(configs), group)
    (out / "docs").mkdir()
    (out / "tasks").mkdir()
    written: list[str] = []
    for config, members in configs.items():
        task = names[config]
        rows = []
        for it in members:
            system, user = _chat_parts(it)
            rows.append(
                {
                    "id": it["id"],
                    "system": system,
                    "user": user,
                    "answer_prefix": str(it.get("answer_prefix") or ""),
                    "item": json.dumps(it, ensure_ascii=False, sort_keys=True),
                }
            )
        _write_jsonl(out / "docs" / f"{task}.jsonl", rows)
        max_tokens = max(_max_tokens(it, options) for it in members)
        text = _lm_eval_task(task, f"docs/{task}.jsonl", max_tokens, answer_prefix)
        (out / "tasks" / f"{task}.yaml").write_text(text, encoding="utf-8")
        written += [f"docs/{task}.jsonl", f"tasks/{task}.yaml"]
    listing = "".join(f"  - {names[c]}\n" for c in configs)
    group_yaml = (
        f"# lm-evaluation-harness group for {benchmark}: one subtask per config; scores in points (0-100)\n"
        f"group: {group}\n"
        "task:\n"
        f"{listing}"
        "aggregate_metric_list:\n"
        "  - metric: needlec_score\n"
        "    aggregation: mean\n"
        "    weight_by_size: true\n"
        "metadata:\n"
        "  version: 1\n"
    )
    (out / f"{group}.yaml").write_text(group_yaml, encoding="utf-8")
    (out / "tasks" / "utils.py").write_text(LM_EVAL_UTILS, encoding="utf-8")
    return [f"{group}.yaml", *written, "tasks/utils.py"]
