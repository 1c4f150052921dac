"""Golden outputs: every shipped spec compiles, on a small grid, to the pinned bytes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
SPECS = sorted(p.stem for p in (GOLDEN.parent.parent / "specs").glob("*.yaml"))


def _regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SPECS)
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
