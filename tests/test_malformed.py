"""Every malformed spec of `tests/malformed/` fails cleanly through the real CLI.

Each case is run in its own process under a memory limit (`RLIMIT_AS`), a CPU-time watchdog
(`RLIMIT_CPU`, 20 s) and a generous wall-clock timeout: it must exit 2, point at `FILE:LINE` of
the offending key (and name the key path when the table gives one), print no traceback and at
most 40 lines. The expected line of each case is
marked `#!` in the YAML file itself and repeated in `cases.yaml`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "malformed"
CASES: list[dict[str, Any]] = json.loads(
    "\n".join(
        line for line in (HERE / "cases.yaml").read_text(encoding="utf-8").splitlines() if not line.startswith("#")
    )
)
MEMORY_LIMIT = 3 * 1024**3  # address space; far below what an alias bomb or a huge grid would take
CPU_LIMIT_S = 20  # the watchdog on work done; the kernel stops a case that computes longer
WALL_LIMIT_S = 180  # generous: the machine may be shared, but a case that waits forever still ends


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))


def run_cli(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a fresh process, under the memory limit and the watchdog."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=WALL_LIMIT_S,
        preexec_fn=_limit_memory,
        check=False,
    )


def test_the_corpus_is_large_and_every_line_is_marked() -> None:
    assert len(CASES) >= 100
    for case in CASES:
        text = (HERE / case["file"]).read_text(encoding="utf-8")
        if case["file"].endswith(".yaml"):
            marked = [n for n, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("#!")]
            assert marked == [case["line"]], case["file"]


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_malformed_spec_fails_cleanly(case: dict[str, Any], tmp_path: Path) -> None:
    spec = case["file"]
    args = ["compile", spec, "-o", str(tmp_path / "out"), "-q"] if case["command"] == "compile" else ["validate", spec]
    result = run_cli(args, HERE)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output and "please report" not in output.lower(), output
    assert len(output.splitlines()) <= 40, output
    if case["command"] == "compile":
        assert case.get("contains", "") in output
        return
    assert f"{spec}:{case['line']}" in output, output
    if case["key"]:
        assert f": {case['key']}: " in output, output
    if case.get("contains"):
        assert case["contains"] in output, output
    assert not (tmp_path / "out").exists()
