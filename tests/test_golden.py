"""Golden outputs: every shipped spec compiles, on a small grid, to the pinned bytes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def _regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SPECS = _regenerate().shipped_specs()


def test_every_shipped_spec_is_pinned_or_says_why_not() -> None:
    regenerate = _regenerate()
    assert "needlebench/needlebench-4k" in SPECS and "atc/atc-v2" in SPECS  # sub-folders are found
    for name in SPECS:
        assert name in regenerate.SELECTIONS or name in regenerate.NOT_PINNED, name


@pytest.mark.parametrize("name", [s for s in SPECS if s not in _regenerate().NOT_PINNED])
def test_shipped_spec_compiles_to_its_golden_bytes(name: str, tmp_path: Path) -> None:
    regenerate = _regenerate()
    path = regenerate.golden_path(name)
    assert path.is_file(), f"no golden record for specs/{name}.yaml; run `python tests/golden/regenerate.py`"
    pinned = json.loads(path.read_text(encoding="utf-8"))
    record = regenerate.compile_golden(name, tmp_path)
    assert record["files"] and all(f["rows"] > 0 for f in record["files"].values())
    assert record == pinned, (
        f"specs/{name}.yaml no longer compiles to its golden bytes. If the change is intended, run "
        "`python tests/golden/regenerate.py` and say why in CHANGELOG.md"
    )
