"""The site's bounded preview: which configs a page compiles, and what the page says about it."""

from __future__ import annotations

from pathlib import Path

from needlec.compile.plan import load_plan
from needlec.site.benchmark_page import preview_note
from needlec.site.collect import PREVIEW_CONFIGS, Benchmark, grid_of, preview_select, sampled_configs
from needlec.site.plots import stacks

ROOT = Path(__file__).resolve().parents[1]


def test_sampled_configs_are_spread_evenly_with_both_ends() -> None:
    names = [f"c{i}" for i in range(126)]
    # positions i * 125 / 7 for i = 0..7, rounded: 0, 17.86, 35.71, 53.57, 71.43, 89.29, 107.14, 125
    assert sampled_configs(names, 8) == ["c0", "c18", "c36", "c54", "c71", "c89", "c107", "c125"]
    assert sampled_configs(names[:5], 8) == names[:5]
    assert sampled_configs(names[:3], 1) == ["c0"]
    assert sampled_configs(names, 2) == ["c0", "c125"]


def test_preview_of_a_many_config_spec_is_bounded_and_named_on_the_page(tmp_path: Path) -> None:
    spec = ROOT / "specs" / "mlneedle-pilot.yaml"
    plan = load_plan(spec, tmp_path / "cache")
    grids = grid_of(plan)
    assert len(grids) == 24
    select = preview_select(plan, grids)
    assert select["repeat"] == {"0"}
    names = [c.name for c in plan.configs]
    assert select["config"] == set(sampled_configs(names)) and len(select["config"]) == PREVIEW_CONFIGS
    assert names[0] in select["config"] and names[-1] in select["config"]
    bench = Benchmark(spec, plan, {}, grids, {k: sorted(v) for k, v in select.items()})
    note = preview_note(bench)
    assert f"{PREVIEW_CONFIGS} of 24 configs: `{names[0]}`" in note and "repeat 0" in note
    # in the spec's order, not alphabetical
    assert note.index(f"`{names[0]}`") < note.index(f"`{names[-1]}`")


def test_length_plot_groups_a_large_matrix_by_its_first_axis(tmp_path: Path) -> None:
    plan = load_plan(ROOT / "specs" / "mlneedle-pilot.yaml", tmp_path / "cache")
    grids = grid_of(plan)
    bench = Benchmark(plan.path, plan, {}, grids, None)
    segments = stacks(bench)
    # 24 configs = needle_lang (en, zh, ar) x haystack_lang (4) x mode (2): 3 bars of 8 configs
    assert [label for label, _ in segments] == [
        "needle_lang=en (8 configs)",
        "needle_lang=zh (8 configs)",
        "needle_lang=ar (8 configs)",
    ]
    assert sum(sum(counts.values()) for _, counts in segments) == sum(g.items for g in grids)
