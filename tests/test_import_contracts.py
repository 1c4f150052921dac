"""The import contracts of pyproject.toml (`[tool.importlinter]`) hold: dependencies point one way."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    command = shutil.which("lint-imports")
    if command is None:
        pytest.skip("lint-imports (the import-linter package) is not installed")
    # Analyse this checkout's sources, whatever `needlec` the interpreter would import otherwise.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [command, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout
