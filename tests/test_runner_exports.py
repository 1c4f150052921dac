"""The Inspect and lm-eval exports keep the dataset's structure, end to end with the real runners.

Each runner runs in-process with a stand-in model of its own kind (an Inspect `ModelAPI`, an
lm-eval `LM`) that answers from the messages it receives: right for items at grid depths below
50, wrong otherwise. NIAH's `single` and `multi` configs at 1000 tokens have the depths 0, 10, ...,
100, so 5 of 11 items per config are right: 100 x 5 / 11 = 45.4545 points per config, per length
and overall; 100 at depth 0 and 0 at depth 50.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import needlec

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = 100 * 5 / 11


@pytest.fixture(scope="module")
def niah(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runners") / "niah"
    needlec.compile(
        ROOT / "specs" / "niah.yaml",
        out,
        select={"config": ["single", "multi"], "length": "1000", "tokenizer": "cl100k_base"},
    )
    return out


@pytest.fixture()
def in_folder(tmp_path: Path) -> Iterator[Path]:
    """Run inside `tmp_path` (both runners resolve the exported files relative to the working folder)."""
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


class Answers:
    """Looks an item up by the user text a runner sends, and answers it right or wrong by depth."""

    def __init__(self, dataset: Path) -> None:
        self.by_user: dict[str, dict[str, Any]] = {}
        for item in needlec.load_items(dataset, as_dict=True):
            user = [m["content"] for m in item["messages"] if m["role"] == "user"]
            self.by_user[user[0]] = item
        self.roles: list[list[str]] = []

    def answer(self, roles: list[str], user: str) -> str:
        self.roles.append(roles)
        item = next(it for text, it in self.by_user.items() if user.startswith(text))
        if item["depth_percent"] < 50:
            return " ".join(fact[0] for fact in item["answers"])
        return "I do not know."


def _check_needlec_agrees(dataset: Path, responses: list[Path]) -> None:
    result = needlec.score(dataset, responses)
    assert {name: cfg["mean"] for name, cfg in result.summary["configs"].items()} == {
        "multi": pytest.approx(EXPECTED, abs=1e-4),
        "single": pytest.approx(EXPECTED, abs=1e-4),
    }


def test_inspect_runs_one_task_per_config_in_points(niah: Path, in_folder: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi

    answers = Answers(niah)

    @modelapi(name="needlec_depth_oracle")
    class Oracle(ModelAPI):
        def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None, **_: Any) -> None:
            super().__init__(model_name, base_url, api_key, [], GenerateConfig())

        async def generate(self, input: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
            user = next(m.text for m in input if m.role == "user")
            text = answers.answer([m.role for m in input], user)
            return ModelOutput.from_content(model=self.model_name, content=text)

    needlec.export(niah, "inspect", "export")
    os.chdir("export")
    logs = inspect_eval("task.py", model="needlec_depth_oracle/x", log_dir="logs", display="none")
    assert sorted(log.eval.task for log in logs) == ["needlec_multi", "needlec_single"]
    for log in logs:
        assert log.status == "success"
        metrics = {m.name: m.value for score in log.results.scores for m in score.metrics.values()}
        assert metrics["mean"] == pytest.approx(EXPECTED)  # points, as needlec score reports
        assert metrics["length_1000"] == pytest.approx(EXPECTED)
        assert (metrics["depth_0.0"], metrics["depth_50.0"]) == (100.0, 0.0)
        assert log.eval.metadata == {
            "needlec_config": log.eval.task.removeprefix("needlec_"),
            "scale": "points (0-100)",
        }
    assert {tuple(roles) for roles in answers.roles} == {("system", "user")}  # the system message as such
    _check_needlec_agrees(niah, sorted(Path("logs").glob("*.eval")))


def test_lm_eval_runs_a_group_of_per_config_subtasks_with_a_system_message(niah: Path, in_folder: Path) -> None:
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    answers = Answers(niah)

    class Oracle(LM):  # type: ignore[misc]
        @property
        def tokenizer_name(self) -> str:
            return "needlec-depth-oracle"

        def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
            return json.dumps(chat_history)  # as lm-eval's chat-completions models send the messages

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            out = []
            for request in requests:
                chat = json.loads(request.args[0])
                user = next(m["content"] for m in chat if m["role"] == "user")
                out.append(answers.answer([m["role"] for m in chat], user))
            return out

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

    names = needlec.export(niah, "lm-eval", "export")
    assert names[0] == "needlec_niah.yaml"
    os.chdir("export")
    results = simple_evaluate(
        model=Oracle(),
        tasks=["needlec_niah"],
        task_manager=TaskManager(include_path="."),
        apply_chat_template=True,
        log_samples=True,
    )
    assert results is not None
    scores = {name: entry["needlec_score,none"] for name, entry in results["results"].items()}
    assert scores == {
        "needlec_niah": pytest.approx(EXPECTED),  # the group: every item, weighted by size
        "needlec_niah_multi": pytest.approx(EXPECTED),
        "needlec_niah_single": pytest.approx(EXPECTED),
    }
    assert {tuple(roles) for roles in answers.roles} == {("system", "user")}
    # the samples files `lm_eval --log_samples` writes: one JSON line per sample record
    Path("out").mkdir()
    for task in ("needlec_niah_multi", "needlec_niah_single"):
        lines = [json.dumps(sample, default=str) + "\n" for sample in results["samples"][task]]
        Path("out", f"samples_{task}_run.jsonl").write_text("".join(lines), encoding="utf-8")
    _check_needlec_agrees(niah, sorted(Path("out").rglob("samples_*.jsonl")))
