"""A real third-party plugin (tests/fixture_plugin) through the CLI and the API.

The plugin adds a haystack source (`tide_log`), a needle kind (`locker_code`), a metric
(`exact_token`) and a builder (`tide_rows`) whose items use the plugin's own layout (`mirror`)
through entry points, plus a source entry point whose import fails
(`broken_pages`), and a kind and a metric that go wrong (`faulty.py`). Registries are process-wide and
the rest of the suite runs with discovery off, so every check here runs in a fresh subprocess with
`NEEDLEC_PLUGINS=1`.

The plugin is installed for those subprocesses only, the way an installer lays out an installed
distribution: a `.dist-info` folder with its metadata and the entry points of its `pyproject.toml`, on
their `PYTHONPATH` beside the plugin's sources. So the user's environment never holds it (its test
components would show in their spec language's suggestions and schema otherwise).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parent / "fixture_plugin"


def _installed(plugin: Path) -> Path:
    """A folder holding the plugin's distribution metadata (`NAME-VERSION.dist-info`), from its pyproject."""
    project = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = Path(tempfile.mkdtemp(prefix="needlec-plugin-site-"))
    atexit.register(shutil.rmtree, site, True)
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
            for group, points in groups.items()
        ),
        encoding="utf-8",
    )
    return site


PLUGIN_PATH = os.pathsep.join([str(_installed(PLUGIN)), str(PLUGIN / "src")])

SPEC = """\
name: plugin-demo
title: Plugin demo
tokenizers: [cl100k_base]
haystack:
  sources:
    - type: {source}
      entries: 300
grid:
  lengths: [300, 600]
  depths: [0, 50, 100]
needle:
  type: locker_code
  lockers: [12, 40]
prompt:
  user: "{{{{ context }}}}\\n\\nQuestion: {{{{ question }}}}"
scoring:
  metric: exact_token
"""


def run(args: list[str], cwd: Path, plugins: bool = True) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(p for p in (PLUGIN_PATH, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "NEEDLEC_PLUGINS": "1" if plugins else "0", "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600)


def write_spec(folder: Path, source: str = "tide_log", name: str = "plugin.yaml") -> Path:
    path = folder / name
    path.write_text(SPEC.format(source=source), encoding="utf-8")
    return path


def read_items(out: Path) -> list[dict[str, object]]:
    lines = (out / "data" / "default" / "cl100k_base.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_cli_compiles_a_spec_using_the_plugin_source_needle_and_metric(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    result = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "out"), "-q"], tmp_path)
    assert result.returncode == 0, result.stderr
    items = read_items(tmp_path / "out")
    assert len(items) == 2 * 3 * 2  # lengths x depths x lockers
    for item in items:
        needle = item["needles"][0]["text"]  # type: ignore[index]
        match = re.fullmatch(r"The code of locker (12|40) is ([A-Z]{4})\.", needle)
        assert match, needle
        assert item["question"] == f"What is the code of locker {match.group(1)}?"
        assert item["answers"] == [[match.group(2)]]
        assert item["scoring"] == {"metric": "exact_token", "case_sensitive": True, "version": 1}
        assert item["context_tokens"] == item["context_length"]
        context = item["messages"][0]["content"]  # type: ignore[index]
        assert needle in context and "At hour " in context  # the generated harbour log is the haystack


def test_python_api_compiles_the_same_dataset(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    cli = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "cli"), "-q"], tmp_path)
    assert cli.returncode == 0, cli.stderr
    script = (
        "import needlec, sys\n"
        "plan = needlec.load_spec(sys.argv[1])\n"
        "print(plan.spec.haystack.sources[0].type, plan.spec.needle.type, plan.spec.scoring.metric)\n"
        "print(needlec.validate(sys.argv[1]))\n"
        "result = needlec.compile(sys.argv[1], sys.argv[2])\n"
        "print(result.items)\n"
    )
    api = run([sys.executable, "-c", script, str(spec), str(tmp_path / "api")], tmp_path)
    assert api.returncode == 0, api.stderr
    assert api.stdout.splitlines() == ["tide_log locker_code exact_token", "[]", "12"]
    for name in ("data/default/cl100k_base.jsonl", "manifest.json"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name


def test_a_broken_plugin_fails_cleanly_only_for_the_spec_that_uses_it(tmp_path: Path) -> None:
    broken = write_spec(tmp_path, source="broken_pages", name="broken.yaml")
    result = run([sys.executable, "-m", "needlec", "validate", str(broken)], tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{broken}:6:7: haystack.sources[0]:" in result.stderr
    assert "'needlec-fixture-plugin'" in result.stderr
    assert "needlec.sources:broken_pages = needlec_fixture_plugin.broken" in result.stderr
    assert "ModuleNotFoundError" in result.stderr and "needlec_fixture_plugin_missing_dependency" in result.stderr
    # the same installation validates a spec that does not use the broken entry point, and --version works
    good = run([sys.executable, "-m", "needlec", "validate", str(write_spec(tmp_path))], tmp_path)
    assert good.returncode == 0, good.stderr
    version = run([sys.executable, "-m", "needlec", "--version"], tmp_path)
    assert version.returncode == 0 and "Traceback" not in version.stderr


def test_entry_points_load_lazily_per_name(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from needlec.registry import SOURCES\n"
        "SOURCES.get('tide_log')\n"
        "print(sorted(m for m in sys.modules if m.startswith('needlec_fixture_plugin')))\n"
        "print(SOURCES.failure('broken_pages').distribution)\n"
    )
    result = run([sys.executable, "-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['needlec_fixture_plugin', 'needlec_fixture_plugin.source']",
        "needlec-fixture-plugin",
    ]


def test_validate_names_entry_points_no_spec_can_reach(tmp_path: Path) -> None:
    """A second installed distribution (metadata only, as an installer writes it) whose entry points take a
    built-in's name and another plugin's: neither can ever load, and `validate` says so, naming it."""
    site = tmp_path / "site"
    info = site / "needlec_other_plugin-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: needlec-other-plugin\nVersion: 0.2.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[needlec.sources]\nfiles = needlec_other_plugin.files\ntide_log = needlec_other_plugin.tide\n",
        encoding="utf-8",
    )
    spec = str(write_spec(tmp_path))

    def validate(plugins: str) -> subprocess.CompletedProcess[str]:
        path = os.pathsep.join([PLUGIN_PATH, str(site)])  # the fixture plugin is found first
        env = {**os.environ, "NEEDLEC_PLUGINS": plugins, "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}
        args = [sys.executable, "-m", "needlec", "validate", spec]
        return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=600)

    result = validate("1")
    assert result.returncode == 0, result.stderr  # warnings only: the spec itself is fine
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    other = "the plugin distribution 'needlec-other-plugin' (entry point needlec.sources:"
    shadowed = [w for w in warnings if f"{other}files = needlec_other_plugin.files) is never loaded" in w]
    assert len(shadowed) == 1 and "needlec's own source" in shadowed[0], result.stderr
    twice = [w for w in warnings if f"{other}tide_log = needlec_other_plugin.tide) is never loaded" in w]
    assert len(twice) == 1 and "'needlec-fixture-plugin'" in twice[0], result.stderr
    assert len(warnings) == 2, result.stderr  # the fixture plugin's own entry points reach their components
    # with discovery off, the same distributions installed give no warning (the spec's plugin types are unknown)
    quiet = validate("0")
    assert quiet.returncode == 2 and "unknown type 'tide_log'" in quiet.stderr, quiet.stderr
    assert "warning" not in quiet.stderr, quiet.stderr


def test_plugin_metric_is_registered_and_validates_in_scoring(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        SPEC.format(source="tide_log").replace("metric: exact_token", "metric: exact_token\n  case_sensitive: maybe")
    )
    result = run([sys.executable, "-m", "needlec", "validate", str(bad)], tmp_path)
    assert result.returncode == 2 and "scoring.case_sensitive" in result.stderr, result.stderr
    script = (
        "from needlec.registry import METRICS\n"
        "metric = METRICS.get('exact_token')\n"
        "config = metric.config(metric='exact_token')\n"
        "item = {'answers': [['ABCD']]}\n"
        "print(metric.factory(config, 'the code is ABCD.', item)[0], metric.factory(config, 'ABCDE', item)[0])\n"
    )
    scored = run([sys.executable, "-c", script], tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert scored.stdout.split() == ["1.0", "0.0"]


def test_discovery_can_be_turned_off(tmp_path: Path) -> None:
    result = run([sys.executable, "-m", "needlec", "validate", str(write_spec(tmp_path))], tmp_path, plugins=False)
    assert result.returncode == 2
    assert "unknown type 'tide_log'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_plugin_layout_is_chosen_by_its_builder(tmp_path: Path) -> None:
    """`tide_rows` names the plugin's `mirror` layout, which puts each needle at 100 minus its depth."""
    spec = write_spec(tmp_path)
    spec.write_text(
        spec.read_text(encoding="utf-8").replace(
            "      entries: 300\n", "      entries: 300\n  builder: {type: tide_rows}\n"
        ),
        encoding="utf-8",
    )
    result = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "out"), "-q"], tmp_path)
    assert result.returncode == 0, result.stderr
    items = read_items(tmp_path / "out")
    assert len(items) == 2 * 3 * 2
    for item in items:
        grid = float(item["depth_percent"])  # type: ignore[arg-type]
        needle = item["needles"][0]  # type: ignore[index]
        assert item["structure"] == {"mirror": {"depths": [100.0 - grid]}}
        assert needle["target_depth_percent"] == 100.0 - grid
        assert abs(needle["depth_percent"] - (100.0 - grid)) <= 5.0  # the spec's default tolerance
        assert item["context_tokens"] == item["context_length"]


FAULTY = "the plugin distribution 'needlec-fixture-plugin' (entry point needlec.{group}:{name} = {module})".replace(
    "{module}", "needlec_fixture_plugin.faulty"
)


def faulty_spec(folder: Path, fault: str) -> Path:
    path = folder / f"faulty-{fault}.yaml"
    text = SPEC.format(source="tide_log").replace(
        "type: locker_code\n  lockers: [12, 40]", f"type: faulty_locker\n  fault: {fault}"
    )
    path.write_text(text, encoding="utf-8")
    return path


def test_a_plugin_that_raises_is_named_as_the_one_to_tell(tmp_path: Path) -> None:
    spec = faulty_spec(tmp_path, "raise")
    result = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "out"), "-q"], tmp_path)
    assert result.returncode == 70  # a software error, with its traceback, but the plugin's, not needlec's
    assert "ValueError: the locker register is empty" in result.stderr
    assert "raised by the plugin distribution 'needlec-fixture-plugin' (its module needlec_fixture_plugin.faulty)" in (
        result.stderr
    )
    assert "bug in needlec" not in result.stderr
    assert not (tmp_path / "out").exists()
    # `needlec.validate` returns it as a problem, as it does every problem of a spec
    script = "import needlec, sys\nfor p in needlec.validate(sys.argv[1]): print(p.message)\n"
    checked = run([sys.executable, "-c", script, str(spec)], tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "ValueError: the locker register is empty" in checked.stdout
    assert (
        "the plugin distribution 'needlec-fixture-plugin' (its module needlec_fixture_plugin.faulty)" in checked.stdout
    )


def test_a_plugin_that_raises_in_a_worker_process_is_named_too(tmp_path: Path) -> None:
    # the draw raises only when an item is built in a worker process of `--jobs 2`, whose traceback does not
    # reach the parent by itself (the parent builds one item of each config first, which must not raise)
    spec = faulty_spec(tmp_path, "items")
    args = [sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "out"), "-q", "-j", "2"]
    result = run(args, tmp_path)
    assert result.returncode == 70
    assert "ValueError: the locker register has no page for" in result.stderr  # the worker's traceback
    assert "raised by the plugin distribution 'needlec-fixture-plugin' (its module needlec_fixture_plugin.faulty)" in (
        result.stderr
    )
    assert "bug in needlec" not in result.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("dict", "returned dict from draw(); expected a needlec.kinds.base.Draw"),
        ("flat_answers", "`answers` must be a tuple of facts, each a tuple of accepted strings"),
    ],
)
def test_what_a_plugin_kind_returns_is_checked(tmp_path: Path, fault: str, message: str) -> None:
    # a flat `answers=("KLMN",)` would otherwise be written as the facts "K", "L", "M" and "N", exit 0
    spec = faulty_spec(tmp_path, fault)
    result = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(tmp_path / "out"), "-q"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert FAULTY.format(group="needles", name="faulty_locker") in result.stderr and message in result.stderr
    assert not (tmp_path / "out").exists()


def test_what_a_plugin_metric_returns_is_checked(tmp_path: Path) -> None:
    spec = tmp_path / "metric.yaml"
    spec.write_text(SPEC.format(source="tide_log").replace("metric: exact_token", "metric: faulty_metric"))
    out = tmp_path / "out"
    built = run([sys.executable, "-m", "needlec", "compile", str(spec), "-o", str(out), "-q"], tmp_path)
    assert built.returncode == 0, built.stderr
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"id": i["id"], "response": "KLMN"}) + "\n" for i in read_items(out)))
    scored = run(
        [sys.executable, "-m", "needlec", "score", str(out), str(responses), "-o", str(tmp_path / "r")], tmp_path
    )
    assert scored.returncode == 2 and "Traceback" not in scored.stderr
    assert FAULTY.format(group="metrics", name="faulty_metric") in scored.stderr
    assert "returned 'yes'" in scored.stderr and "(score, details)" in scored.stderr
    # without plugins the metric is unknown, and the error says where metrics come from
    off = run(
        [sys.executable, "-m", "needlec", "score", str(out), str(responses), "-o", str(tmp_path / "r")],
        tmp_path,
        plugins=False,
    )
    assert off.returncode == 2 and "unknown metric 'faulty_metric'" in off.stderr and "NEEDLEC_PLUGINS" in off.stderr
