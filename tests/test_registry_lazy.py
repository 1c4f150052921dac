"""Reading one component imports only its module: the registries' `provides` tables are right, and a
spec that names a few components validates without importing (or building the models of) the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from needlec.registry import ALL, NEEDLES

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NEEDLEC_PLUGINS": "0"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


def test_each_provided_name_is_registered_by_the_module_named_for_it() -> None:
    # every built-in module of every registry is loaded in a fresh interpreter that records which module
    # called `register` for each name: the tables must say the same
    code = """
import json, sys
import needlec.registry as R
seen = {}
original = R.Registry.register
def register(self, name, config):
    seen.setdefault(self.kind, {})[name] = sys._getframe(1).f_globals.get("__name__")
    return original(self, name, config)
R.Registry.register = register
for registry in R.ALL:
    registry.load_all()
print(json.dumps(seen))
"""
    seen = json.loads(_run(code))
    checked = 0
    for registry in ALL:
        provides = registry._provides
        if not provides:
            continue
        registered = seen.get(registry.kind, {})
        assert provides == registered, registry.kind
        checked += len(provides)
    assert checked >= 25


def test_validating_a_template_spec_loads_only_the_components_it_names() -> None:
    code = """
import json, sys
from needlec.api import validate
validate("specs/niah.yaml")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("needlec.kinds.", "needlec.haystacks.filters.")))))
"""
    loaded = json.loads(_run(code))
    assert "needlec.kinds.template" in loaded
    for other in ("atc", "ruler", "needlebench", "mlneedle", "latent_hop"):
        assert not any(m.startswith(f"needlec.kinds.{other}") for m in loaded), other
    for heavy in ("llm", "embedding", "candidates", "names", "literal"):
        assert f"needlec.haystacks.filters.{heavy}" not in loaded


def test_iteration_order_does_not_depend_on_what_was_read_first() -> None:
    # needles read one by one in reverse before the registry is iterated keep the declared order
    code = """
import json
from needlec.registry import NEEDLES
for name in ("template", "ruler", "atc"):
    NEEDLES.get(name)
print(json.dumps([c.name for c in NEEDLES]))
"""
    lazily = json.loads(_run(code))
    plain = "import json\nfrom needlec.registry import NEEDLES\nprint(json.dumps([c.name for c in NEEDLES]))"
    fresh = json.loads(_run(plain))
    assert lazily == fresh
    declared = [NEEDLES._provides[name] for name in fresh]
    assert declared == sorted(declared, key=NEEDLES._modules.index)


def test_an_unknown_kind_is_reported_with_every_kind(tmp_path: Path) -> None:
    from needlec.api import validate

    spec = tmp_path / "spec.yaml"
    spec.write_text(f"extends: {ROOT / 'specs' / 'niah.yaml'}\nneedle: {{type: templat}}\n", encoding="utf-8")
    problems = [problem.render() for problem in validate(spec)]
    assert len(problems) == 1, problems
    assert "unknown type 'templat'" in problems[0] and "Did you mean 'template'?" in problems[0]
    for name in ("atc", "latent_hop", "mlneedle", "needlebench", "ruler", "template"):
        assert f"{name}" in problems[0].split("expected one of:")[1]
