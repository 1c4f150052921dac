"""Work shared across the configs of one compile never changes an item's bytes.

A compile reuses sources, filter runs, haystacks and token indexes between configs that have the
same inputs. These tests compile a spec whose configs share (and do not share) a filtered
haystack, once together, once config by config (nothing to share), and once with the configs
listed in the opposite order, and compare the data files byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from filter_helpers import KEY_QUESTION, NEEDLE, PLANT_KEY, PLANT_TRAM, QUESTION, plant, prose, write_spec

from needlec.compile.pipeline import CompileOptions, Prepared, compile_spec
from needlec.compile.plan import load_plan

KEY_NEEDLE = "The spare key is hidden under the blue flowerpot beside the garden gate."
# Three configs: `tram` and `tram-asked-again` differ only in the question's wording (same answers,
# so the literal filter removes the same sentence and their haystacks are one); `key` has other
# answers, so its filter removes another sentence and its haystack is its own.
VARIANTS: dict[str, dict[str, Any]] = {
    "tram": {},
    "tram-asked-again": {"needle": {"question": "On a wet afternoon in Lisbon, what is the best thing to do?"}},
    "key": {"needle": {"needles": [KEY_NEEDLE], "question": KEY_QUESTION, "answers": ["blue flowerpot"]}},
}
CONFIGS = list(VARIANTS)


def _spec(folder: Path, order: list[str]) -> Path:
    text = plant(prose("Ruth"), [PLANT_TRAM, PLANT_KEY])
    literal = [{"type": "literal_terms", "from_spec": ["answers"]}]
    return write_spec(folder, text, literal, variants={"ask": {name: VARIANTS[name] for name in order}})


def _data(out: Path) -> dict[str, bytes]:
    return {name: (out / "data" / name / "cl100k_base.jsonl").read_bytes() for name in CONFIGS}


def _haystack_records(out: Path) -> dict[str, Any]:
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    return {name: info["haystacks"] for name, info in manifest["configs"].items()}


def test_configs_with_equal_inputs_share_one_haystack(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "spec", CONFIGS)
    cache = tmp_path / "cache"
    plan = load_plan(spec, cache)
    prepared = Prepared(plan, cache)
    by_name = {c.name: c.spec for c in plan.configs}
    tram, again, key = (prepared.haystacks(by_name[n]) for n in CONFIGS)
    assert NEEDLE not in tram[0].text and QUESTION not in tram[0].text
    # the filter took out the sentence naming each config's own answer, and only that one
    assert "yellow tram" not in tram[0].text and "blue flowerpot" in tram[0].text
    assert "blue flowerpot" not in key[0].text and "yellow tram" in key[0].text
    assert again is tram  # built once, for both configs
    assert key[0].sha256 != tram[0].sha256
    label = plan.spec.tokenizers[0].label
    view = prepared.view(by_name["tram"], tram[0], label, 600)
    assert prepared.view(by_name["tram-asked-again"], again[0], label, 600) is view


def test_shared_compile_gives_the_bytes_of_each_config_alone(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "spec", CONFIGS)
    cache = tmp_path / "cache"
    together = tmp_path / "together"
    compile_spec(spec, together, CompileOptions(progress=False, cache_dir=cache))
    shared = _data(together)
    records = _haystack_records(together)
    assert records["tram"] == records["tram-asked-again"] != records["key"]
    for name in CONFIGS:
        alone = tmp_path / f"alone-{name}"
        compile_spec(spec, alone, CompileOptions(progress=False, cache_dir=cache, select={"config": {name}}))
        assert (alone / "data" / name / "cl100k_base.jsonl").read_bytes() == shared[name], name
        assert _haystack_records(alone)[name] == records[name]
        assert not (alone / "data" / CONFIGS[(CONFIGS.index(name) + 1) % 3]).exists()
    # every config has its items: 2 lengths x 3 depths
    assert all(len(rows.splitlines()) == 6 for rows in shared.values())


def test_config_order_does_not_change_any_config(tmp_path: Path) -> None:
    forward = _spec(tmp_path / "forward", CONFIGS)
    backward = _spec(tmp_path / "backward", CONFIGS[::-1])
    cache = tmp_path / "cache"
    compile_spec(forward, tmp_path / "one", CompileOptions(progress=False, cache_dir=cache))
    compile_spec(backward, tmp_path / "two", CompileOptions(progress=False, cache_dir=cache))
    assert _data(tmp_path / "one") == _data(tmp_path / "two")
    assert _haystack_records(tmp_path / "one") == _haystack_records(tmp_path / "two")
