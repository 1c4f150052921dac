"""The four adapters' file writers. Each returns the names of the files it wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    """requests.jsonl for the OpenAI Batch API (`custom_id` = item id, chat completions, temperature 0)."""
    model = options.get("model") or "MODEL"
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


INSPECT_TASK = '''"""Inspect AI task for a needlec dataset; the scorer is needlec's own.

Run:  inspect eval task.py --model openai/MODEL   (then: needlec score DATASET logs/*.eval -o REPORT)
A local OpenAI-compatible server: add --model-base-url http://HOST:PORT/v1 -M responses_api=false
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from needlec.scoring.api import score_response

HERE = Path(__file__).parent
ITEMS = {}
with (HERE / "items.jsonl").open(encoding="utf-8") as fh:
    for row in fh:
        item = json.loads(row)
        ITEMS[item["id"]] = item

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def sample(item):
    messages = [ROLES[m["role"]](content=m["content"]) for m in item["messages"]]
    target = [a if isinstance(a, str) else a[0] for a in item["answers"]]
    return Sample(id=item["id"], input=messages, target=target, metadata={"config": item.get("config")})


@scorer(metrics=[mean()])
def needlec_scorer():
    async def score(state: TaskState, target: Target) -> Score:
        value, details = score_response(ITEMS[state.sample_id], state.output.completion)
        return Score(value=value, answer=state.output.completion, metadata=details)

    return score


@task
def needlec_task():
    return Task(
        dataset=MemoryDataset([sample(item) for item in ITEMS.values()]),
        solver=generate(),
        scorer=needlec_scorer(),
        config=GenerateConfig(temperature=0, max_tokens=MAX_TOKENS),
    )
'''


def write_inspect(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """task.py (an Inspect task with needlec's scorer) and items.jsonl."""
    names = [_items_file(items, out)]
    code = INSPECT_TASK.replace("MAX_TOKENS", str(max(_max_tokens(it, options) for it in items)))
    (out / "task.py").write_text(code, encoding="utf-8")
    return [*names, "task.py"]


LM_EVAL_UTILS = '''"""Helpers of the needlec lm-evaluation-harness task: prompt text and needlec's scorer."""

import json

from needlec.runners import flat_prompt
from needlec.scoring.api import score_response


def doc_to_text(doc):
    return flat_prompt(json.loads(doc["item"]), ANSWER_PREFIX)


def process_results(doc, results):
    value, _ = score_response(json.loads(doc["item"]), results[0])
    return {"needlec_score": value}
'''


def write_lm_eval(items: list[dict[str, Any]], out: Path, options: dict[str, Any]) -> list[str]:
    """needlec.yaml (task), utils.py (prompt and scorer) and docs.jsonl (`id`, `item` as JSON text)."""
    benchmark = str(items[0].get("benchmark") or "dataset")
    task_name = options.get("task_name") or f"needlec_{benchmark}".replace("-", "_")
    rows = [{"id": it["id"], "item": json.dumps(it, ensure_ascii=False, sort_keys=True)} for it in items]
    _write_jsonl(out / "docs.jsonl", rows)
    max_tokens = max(_max_tokens(it, options) for it in items)
    yaml = (
        f"task: {task_name}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        "    test: docs.jsonl\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        "doc_to_text: !function utils.doc_to_text\n"
        'doc_to_target: ""\n'
        "process_results: !function utils.process_results\n"
        "generation_kwargs:\n"
        "  until: []\n"
        "  do_sample: false\n"
        "  temperature: 0\n"
        f"  max_gen_toks: {max_tokens}\n"
        "metric_list:\n"
        "  - metric: needlec_score\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
    )
    (out / "needlec.yaml").write_text(yaml, encoding="utf-8")
    utils = LM_EVAL_UTILS.replace("ANSWER_PREFIX", "False" if options.get("no_answer_prefix") else "True")
    (out / "utils.py").write_text(utils, encoding="utf-8")
    return ["docs.jsonl", "needlec.yaml", "utils.py"]
