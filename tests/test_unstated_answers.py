"""An answer that no needle states: `validate` and `compile` warn, `--strict` refuses, nothing else changes.

A template needle whose answer names the wrong variable, or a needle edited without its answer, makes items no
model can answer from the context. The check renders each config's template needles for a few draws and looks
for every required fact (any accepted form, casefolded) in the needles' text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import SPECS

from needlec.compile.plan import load_plan
from needlec.compile.warnings import unstated_answers


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _spec(folder: Path, name: str, needle: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"extends: {SPECS / 'niah.yaml'}\nname: {name}\ngrid: {{lengths: [1000], depths: [0, 50], repeats: 1}}\n"
        f"tokenizers: [cl100k_base]\nvariants: null\nneedle:\n{needle}",
        encoding="utf-8",
    )
    return path


VAULT = """  type: template
  needles: ["The code of the harbour vault is secret."]
  question: What is the code of the harbour vault?
  answers: ["{{ code }}"]
  vars: {code: {kind: digits, length: 6}}
"""

STATED = """  type: template
  needles: ["The code of the harbour vault is {{ code }}.", "The vault's keeper is called Ines."]
  question: What is the code of the harbour vault, and who keeps it?
  answers: ["{{ code }}", [INES, Agnes]]
  vars: {code: {kind: digits, length: 6}}
"""


def test_a_fact_no_needle_states_is_named_with_its_template_and_a_drawn_value(tmp_path: Path) -> None:
    [line] = unstated_answers(load_plan(_spec(tmp_path, "vault", VAULT)).configs)
    assert line.startswith("config default: needle.answers[0] '{{ code }}' (drawn as '"), line
    drawn = line.split("drawn as '")[1][:6]
    assert drawn.isdigit() and len(drawn) == 6, line
    assert "occurs in none of the needles" in line


def test_stated_facts_pass_in_any_case_and_by_any_alias(tmp_path: Path) -> None:
    # "Ines" is stated; the fact's first form is upper case and its second is not in the needles at all
    plan = load_plan(_spec(tmp_path, "stated", STATED))
    assert unstated_answers(plan.configs) == []
    assert unstated_answers(load_plan(SPECS / "niah.yaml").configs) == []


def test_validate_and_compile_warn_and_strict_refuses(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "vault", VAULT)
    checked = _cli("validate", str(spec), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert f"warning: {spec}: config default: needle.answers[0] '{{{{ code }}}}'" in checked.stderr, checked.stderr
    built = _cli("compile", str(spec), "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "warning: config default: needle.answers[0]" in built.stderr, built.stderr
    refused = _cli("compile", str(spec), "-o", str(tmp_path / "strict"), "-q", "--strict", cwd=tmp_path)
    assert refused.returncode == 2 and "--strict: the compile has warnings" in refused.stderr, refused.stderr
    assert "needle.answers[0]" in refused.stderr and not (tmp_path / "strict").exists()
