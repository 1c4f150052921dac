"""`--executor ray`: slices built as tasks on a local Ray instance, merged into a local compile's bytes.

Ray runs here for real (a local instance with two CPUs, as `ray.init` starts one on a laptop); only a
multi-node cluster cannot be started in the suite, and the executor treats a cluster address the same
way (`ray.init(address=...)`).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.errors import NeedlecError

ray = pytest.importorskip("ray")

from needlec.compile.cluster import compile_on_ray, ray_folder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "niah.yaml"
SELECT = {"length": {"1000", "2000"}, "depth": {"0", "50", "100"}}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_ray_compile_is_byte_identical_and_resumes(local_ray: None, tmp_path: Path) -> None:
    options = CompileOptions(select=SELECT, progress=False, cache_dir=tmp_path / "cache")
    local = compile_spec(SPEC, tmp_path / "local", options)
    first = compile_on_ray(SPEC, tmp_path / "ray", options, slices=3)
    assert first.items == local.items > 0
    assert first.built == first.shards > 0 and first.reused == 0  # a fresh run built every shard it merged
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")  # data files, manifest, card, SHA256SUMS
    assert sorted(p.name for p in ray_folder(tmp_path / "ray").iterdir()) == ["slice-1", "slice-2", "slice-3"]
    # a second run finds every slice's shards already built and only merges again
    again = compile_on_ray(SPEC, tmp_path / "ray", CompileOptions(**{**options.__dict__, "force": True}), slices=3)
    assert again.built == 0 and again.reused > 0
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")
    # a narrower selection replaces the dataset only with --force, which reaches the merge
    narrow = CompileOptions(**{**options.__dict__, "select": {"length": {"1000"}, "depth": {"0"}}})
    with pytest.raises(NeedlecError, match="--force"):
        compile_on_ray(SPEC, tmp_path / "ray", narrow, slices=2)
    forced = compile_on_ray(SPEC, tmp_path / "ray", CompileOptions(**{**narrow.__dict__, "force": True}), slices=2)
    assert 0 < forced.items < local.items


def test_a_bad_output_is_refused_before_any_task(local_ray: None, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me", encoding="utf-8")
    options = CompileOptions(select=SELECT, progress=False, cache_dir=tmp_path / "cache")
    with pytest.raises(NeedlecError):
        compile_on_ray(SPEC, tmp_path / "notes", options, slices=2)
    assert (tmp_path / "notes" / "mine.txt").read_text(encoding="utf-8") == "keep me"
    assert not ray_folder(tmp_path / "notes").exists()


def test_cli_flags_that_do_not_go_together() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "needlec", "compile", str(SPEC), "--ray-address", "auto", "-o", "/tmp/never"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2 and "--ray-address needs --executor ray" in run.stderr
