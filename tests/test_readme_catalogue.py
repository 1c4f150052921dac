"""README's catalogue of shipped specs: every spec is listed, and its numbers are those of the spec.

The figures (configs, items, estimated size, the pilot's items) are recomputed here from each
spec's plan; the pilot command must parse with the real CLI parser and select items that exist.
Run this file as a script to print the table's rows as they should read:
`python tests/test_readme_catalogue.py`.
"""

from __future__ import annotations

import re
import shlex
import sys

import pytest
from conftest import ROOT, SPECS

from needlec.cli import build_parser
from needlec.compile.plan import load_plan
from needlec.compile.select import parse_select, resolve_select
from needlec.compile.size import human_bytes, plan_size

README = ROOT / "README.md"
ROW = re.compile(
    r"^\| `(specs/[^`]+\.yaml)` \| ([^|]+) \| ([^|]+) \| ([\d,]+) \| ([\d,]+) \| ([^|]+) \| "
    r"`([^`]+)` \((\d[\d,]*) items\) \|$"
)


def shipped() -> list[str]:
    """Every shipped spec, sub-folders included (NeedleBench's `base.yaml` compiles on its own too)."""
    return sorted(f"specs/{p.relative_to(SPECS)}" for p in SPECS.rglob("*.yaml"))


def rows() -> dict[str, tuple[str, ...]]:
    found = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            found[match.group(1)] = match.groups()
    return found


def figures(spec: str, pilot: str) -> tuple[int, int, str, int]:
    """(configs, items, estimated size, pilot items) of a spec, computed from its plan."""
    plan = load_plan(ROOT / spec)
    size = plan_size(plan, {})
    args = build_parser().parse_args(shlex.split(pilot)[1:])
    select = resolve_select(plan, parse_select(args.select))
    return len(plan.configs), size.items, human_bytes(size.bytes), plan_size(plan, select).items


def test_every_shipped_spec_has_a_row() -> None:
    listed = rows()
    missing = [spec for spec in shipped() if spec not in listed]
    assert not missing, f"README's catalogue lacks: {missing}"


@pytest.mark.parametrize("spec", shipped())
def test_a_row_reads_what_its_spec_compiles_to(spec: str) -> None:
    row = rows().get(spec)
    if row is None:
        pytest.fail(f"no README row for {spec}")
    _, _, _, configs, items, size, pilot, pilot_items = row
    expected = figures(spec, pilot)
    assert (int(configs.replace(",", "")), int(items.replace(",", "")), size.strip()) == expected[:3], spec
    assert int(pilot_items.replace(",", "")) == expected[3], spec
    assert pilot.startswith(f"needlec compile {spec} ")
    assert expected[3] <= 500, "a pilot should stay small enough to finish in about a minute"


def test_the_nolima_and_niah_rows_say_what_the_specs_hold() -> None:
    text = README.read_text(encoding="utf-8")
    # NoLiMa: 68 question-needle cases over 30 keyword pairs, counted from the spec's groups
    from needlec.kinds.base import needle_kind

    plan = load_plan(SPECS / "nolima.yaml")
    needle = plan.spec.needle.model_dump()
    pairs = [p for g in needle["groups"] for p in g["pairs"]]
    cases = needle_kind(plan.config("main").spec.needle).cases()
    assert f"{len(cases)} question-needle cases" in text and f"{len(pairs)} keyword pairs" in text
    niah = load_plan(SPECS / "niah.yaml")
    for config in niah.configs:
        assert f"`{config.name}`" in text, config.name


if __name__ == "__main__":  # print the rows' computed columns, to paste after checking them
    for spec in shipped():
        row = rows().get(spec)
        pilot = row[6] if row else f"needlec compile {spec} -o build/pilot"
        print(spec, *figures(spec, pilot), sep=" | ", file=sys.stdout)
