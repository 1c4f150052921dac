"""Fuzz: mutated shipped specs never end in a traceback, only in a clean NeedlecError or success."""

from __future__ import annotations

import random
from pathlib import Path

from fuzz_support import mutated_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from needlec.compile.plan import load_plan
from needlec.errors import NeedlecError


def check_one(seed: int, folder: Path) -> str:
    """Validate one mutated spec in-process; returns "ok" or "error" (anything else raises)."""
    spec = folder / f"fuzz-{seed}.yaml"
    spec.write_text(mutated_text(random.Random(seed)), encoding="utf-8")
    try:
        load_plan(spec, cache_dir=folder / "cache")
    except NeedlecError as exc:
        assert exc.render().strip()
        return "error"
    return "ok"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_mutated_specs_never_raise_anything_but_needlec_errors(seed: int, tmp_path: Path) -> None:
    assert check_one(seed, tmp_path) in ("ok", "error")
