"""Size estimates against real compiles, and the ceilings that replaced the item limit.

For every shipped spec a small slice (the first config, its shortest length, repeat 0) is
compiled for real and the bytes of its data files are compared with the dry-run estimate of the
same slice: they must agree within 20%. `mlneedle/mlneedle-online.yaml` is left out: it downloads
its sources.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SPECS

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
from needlec.compile.size import DISK_MARGIN, DISK_RESERVE, Size, check_size, free_bytes, plan_size
from needlec.errors import NeedlecError

NEEDS_MORE = {"mlneedle/mlneedle-online.yaml"}
SHIPPED = sorted(
    str(p.relative_to(SPECS)) for p in SPECS.rglob("*.yaml") if str(p.relative_to(SPECS)) not in NEEDS_MORE
)
NEEDLEC = str(Path(sys.executable).parent / "needlec")


@pytest.mark.parametrize("name", SHIPPED)
def test_the_estimate_of_a_slice_is_within_20_percent_of_its_bytes(name: str, tmp_path: Path) -> None:
    plan = load_plan(SPECS / name)
    config = plan.configs[0]
    select = {"config": {config.name}, "length": {str(min(config.spec.grid.length_points()))}, "repeat": {"0"}}
    estimate = plan_size(plan, select)
    result = compile_spec(SPECS / name, tmp_path / "out", CompileOptions(select=select, progress=False))
    written = sum(p.stat().st_size for p in (tmp_path / "out" / "data").rglob("*.jsonl"))
    assert result.items == estimate.items
    assert 0.8 <= written / estimate.bytes <= 1.2, (name, written, estimate.bytes)


def test_no_item_ceiling_unless_the_user_sets_one(tmp_path: Path) -> None:
    # NoLiMa is 155,200 items (about 10 GB): sized, not refused, when the disk can hold it
    plan = load_plan(SPECS / "nolima.yaml")
    size = plan_size(plan, {})
    assert size.items == 155_200
    if free_bytes(tmp_path) > size.bytes * DISK_MARGIN + DISK_RESERVE:
        check_size(size, None, None, tmp_path)
    with pytest.raises(NeedlecError, match="the limit you set \\(--max-items\\) is 1,000"):
        check_size(size, 1000, None, tmp_path)
    with pytest.raises(NeedlecError, match="--max-bytes"):
        check_size(size, None, 10**6, tmp_path)


def test_an_output_that_does_not_fit_the_free_space_is_refused(tmp_path: Path) -> None:
    free = free_bytes(tmp_path / "not" / "yet")  # read on the nearest folder that exists
    assert 0 < free <= shutil.disk_usage(tmp_path).total
    too_big = Size(items=10, tokens=10, bytes=free)  # with the margin it cannot fit
    with pytest.raises(NeedlecError, match="free") as caught:
        check_size(too_big, None, None, tmp_path / "out")
    assert "write elsewhere with -o" in str(caught.value)


def test_compile_prints_its_size_before_it_starts_and_honours_max_items(tmp_path: Path) -> None:
    spec = str(SPECS / "niah.yaml")
    select = ["--select", "config=single", "--select", "length=1000"]
    done = subprocess.run(
        [NEEDLEC, "compile", spec, "-o", str(tmp_path / "a"), "-q", *select],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # 2 tokenizers x 11 depths at 1,000 tokens: 22 items, 22,000 context tokens
    assert lines[0].startswith("compiling 22 items (22,000 context tokens, about ")
    assert lines[1].startswith("wrote 22 items")
    refused = subprocess.run(
        [NEEDLEC, "compile", spec, "-o", str(tmp_path / "b"), "-q", *select, "--max-items", "21"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert refused.returncode == 2
    assert "would write 22 items; the limit you set (--max-items) is 21" in refused.stderr
    assert not (tmp_path / "b").exists()
