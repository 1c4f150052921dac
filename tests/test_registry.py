"""The Registry: lazy built-in modules, did-you-mean, freezing, and the spec unions built from it."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from needlec.errors import PluginError
from needlec.registry import ALL, BUILDERS, METRICS, NEEDLES, REPORTS, SOURCES, TOKENIZERS, Registry


class Alpha(BaseModel):
    type: Literal["alpha"]


class Beta(BaseModel):
    type: Literal["beta"]


def test_builtin_modules_are_imported_on_first_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry: Registry[object] = Registry("widgets", modules=("needlec_test_widgets",))
    holder = types.ModuleType("needlec_test_holder")
    holder.REGISTRY = registry  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "needlec_test_holder", holder)
    (tmp_path / "needlec_test_widgets.py").write_text(
        "from typing import Literal\n"
        "from pydantic import BaseModel\n"
        "from needlec_test_holder import REGISTRY\n"
        "class Gamma(BaseModel):\n"
        "    type: Literal['gamma']\n"
        "REGISTRY.register('gamma', Gamma)(str)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "needlec_test_widgets", raising=False)
    assert "needlec_test_widgets" not in sys.modules  # constructing a registry imports nothing
    assert registry.get("gamma").factory is str
    assert "needlec_test_widgets" in sys.modules
    assert registry.names() == ["gamma"]
    monkeypatch.delitem(sys.modules, "needlec_test_widgets")


def test_unknown_names_suggest_the_closest() -> None:
    registry: Registry[object] = Registry("widgets")
    registry.register("alpha", Alpha)(str)
    registry.register("beta", Beta)(str)
    with pytest.raises(PluginError) as info:
        registry.get("alpah")
    assert str(info.value) == "unknown widget 'alpah'; did you mean 'alpha'?"
    with pytest.raises(PluginError, match=r"^unknown widget 'zzz'$"):
        registry.get("zzz")
    assert "alpha" in registry and "zzz" not in registry and 3 not in registry


def test_registry_is_frozen_after_loading_and_rejects_duplicates() -> None:
    registry: Registry[object] = Registry("widgets")
    registry.register("alpha", Alpha)(str)
    with pytest.raises(RuntimeError, match="registered twice"):
        registry.register("alpha", Beta)(str)
    assert [c.name for c in registry] == ["alpha"]  # iterating loads everything and freezes
    with pytest.raises(RuntimeError, match="frozen"):
        registry.register("beta", Beta)(str)


def test_iteration_keeps_registration_order_and_names_are_sorted() -> None:
    registry: Registry[object] = Registry("widgets")
    registry.register("beta", Beta)(str)
    registry.register("alpha", Alpha)(str)
    assert [c.name for c in registry] == ["beta", "alpha"]
    assert registry.names() == ["alpha", "beta"]
    assert registry.get("beta").config is Beta


def test_every_component_kind_has_a_registry_and_entry_point_group() -> None:
    groups = {r.group for r in ALL}
    assert groups == {
        f"needlec.{kind}"
        for kind in (
            "sources",
            "filters",
            "builders",
            "needles",
            "tokenizers",
            "metrics",
            "layouts",
            "reports",
            "exporters",
            "languages",
        )
    }


def test_builtin_kinds_are_registered() -> None:
    assert SOURCES.names() == ["builtin", "files", "url"]
    assert NEEDLES.names() == ["atc", "latent_hop", "mlneedle", "needlebench", "ruler", "template"]
    assert BUILDERS.names() == [
        "concat",
        "needle_filler",
        "passages",
        "repeat",
        "ruler_documents",
        "ruler_words",
        "snippets",
    ]

    assert TOKENIZERS.names() == ["hf", "tiktoken"]
    assert {"contains", "contains_all"} <= set(METRICS.names())
    assert REPORTS.names() == ["atc", "mlneedle", "needlebench", "nolima", "ruler"]


def test_plugins_are_off_in_the_test_session() -> None:
    # conftest turns entry-point discovery off, so an installed plugin changes nothing here
    assert "tide_log" not in SOURCES
    assert SOURCES.failures() == []


def test_plugin_guide_matches_the_fixture_plugin() -> None:
    root = Path(__file__).resolve().parents[1]
    guide = (root / "site" / "docs" / "guides" / "plugins.md").read_text(encoding="utf-8")
    plugin = root / "tests" / "fixture_plugin"
    sources = {p.name: p.read_text(encoding="utf-8") for p in (plugin / "src" / "needlec_fixture_plugin").glob("*.py")}
    for line in (
        "class TideLogSource(SourceSpec):",
        '@SOURCES.register("tide_log", TideLogSource)',
        "class LockerCodeKind(NeedleKindBase):",
        'NEEDLES.register("locker_code", LockerCodeNeedle)(LockerCodeKind)',
        '@METRICS.register("exact_token", ExactTokenMetric)',
        'lockers: list[int] = Field(min_length=1, description="Locker numbers; each is a case of the grid.")',
    ):
        assert line in guide, line
        assert any(line in text for text in sources.values()), line
    pyproject = (plugin / "pyproject.toml").read_text(encoding="utf-8")
    for entry in (
        'tide_log = "needlec_fixture_plugin.source"',
        'locker_code = "needlec_fixture_plugin.needle"',
        'exact_token = "needlec_fixture_plugin.metric"',
    ):
        assert entry in guide and entry in pyproject, entry
