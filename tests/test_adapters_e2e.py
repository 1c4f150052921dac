"""Two runner tools answer the exported pilot through needlec's adapters, then `needlec score` reads their own logs.

SmolLM2-135M is served by llama.cpp's OpenAI-compatible server on 127.0.0.1 (the fixture pattern of
test_run_and_score_e2e.py). Inspect AI runs the `task.py` that `needlec export --to inspect` writes with its
OpenAI provider pointed at that server; lm-evaluation-harness runs the task folder of `needlec export --to lm-eval`
with its `local-chat-completions` model. `needlec score` then reads each tool's native output (the Inspect `.eval`
log, lm-eval's samples file) as it is. Whatever the small model answers, every item must get exactly one score and a
second scoring of the same output must give byte-identical report files.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_support import NEEDS_SMOLLM, smollm_server

ROOT = Path(__file__).resolve().parents[1]
NEEDLEC = str(Path(sys.executable).parent / "needlec")
SPEC = ROOT / "examples" / "passkey-pilot.yaml"  # 2 lengths x 3 depths, a 5-digit passkey, `contains`
MAX_TOKENS = "16"  # a passkey is 5 digits; a short answer keeps the run fast

pytestmark = NEEDS_SMOLLM


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with smollm_server(log, "--n_ctx", "2048", "--seed", "0") as base_url:
        yield base_url


def _run(*command: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "OPENAI_API_KEY": "none", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=cwd, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "ds"
    _run(NEEDLEC, "compile", str(SPEC), "-o", str(out), "-q")
    return out


def _item_ids(dataset: Path) -> set[str]:
    ids = set()
    for file in sorted((dataset / "data").rglob("*.jsonl")):
        for line in file.open(encoding="utf-8"):
            ids.add(json.loads(line)["id"])
    assert len(ids) == 6  # 2 lengths x 3 depths
    return ids


def _score_twice(dataset: Path, native: Path, tmp_path: Path) -> None:
    first, again = tmp_path / "report", tmp_path / "report-again"
    out = _run(NEEDLEC, "score", str(dataset), str(native), "-o", str(first))
    assert "scored 6 items" in out, out
    _run(NEEDLEC, "score", str(dataset), str(native), "-o", str(again))
    assert _tree(first) == _tree(again)
    rows = [json.loads(r) for r in (first / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(_item_ids(dataset))
    assert all(r["score"] in (0.0, 1.0) for r in rows)
    summary = json.loads((first / "summary.json").read_text(encoding="utf-8"))
    assert summary["configs"]["default"]["n"] == 6


@pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="Inspect AI is missing: pip install -e '.[runners]'"
)
def test_inspect_adapter_end_to_end(tmp_path: Path, dataset: Path, smollm: str) -> None:
    task = tmp_path / "inspect"
    _run(NEEDLEC, "export", str(dataset), "--to", "inspect", "--max-tokens", MAX_TOKENS, "-o", str(task))
    logs = tmp_path / "logs"
    inspect = shutil.which("inspect", path=str(Path(sys.executable).parent)) or "inspect"
    _run(
        inspect,
        "eval",
        "task.py",
        "--model",
        "openai/smollm2-135m",
        "--model-base-url",
        smollm,
        "-M",
        "responses_api=false",  # llama.cpp's server has no Responses API endpoint
        "--log-dir",
        str(logs),
        "--log-format",
        "eval",
        "--seed",
        "0",
        "--max-connections",
        "1",
        "--display",
        "none",
        cwd=task,
    )
    (log,) = sorted(logs.glob("*.eval"))
    _score_twice(dataset, log, tmp_path)


@pytest.mark.skipif(
    importlib.util.find_spec("lm_eval") is None, reason="lm-evaluation-harness is missing: pip install -e '.[runners]'"
)
def test_lm_eval_adapter_end_to_end(tmp_path: Path, dataset: Path, smollm: str) -> None:
    task = tmp_path / "lm-eval"
    _run(NEEDLEC, "export", str(dataset), "--to", "lm-eval", "--max-tokens", MAX_TOKENS, "-o", str(task))
    # the group YAML (one subtask per config) is the first file the export names
    name = next(task.glob("needlec_*.yaml")).stem
    out = tmp_path / "lm-out"
    _run(
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "local-chat-completions",
        "--model_args",
        f"model=smollm2-135m,base_url={smollm}/chat/completions,num_concurrent=1,max_retries=1",
        "--tasks",
        name,
        "--include_path",
        str(task),
        "--apply_chat_template",
        "--output_path",
        str(out),
        "--log_samples",
        "--seed",
        "0",
        cwd=task,
    )
    (samples,) = sorted(out.rglob("samples_*.jsonl"))
    _score_twice(dataset, samples, tmp_path)
