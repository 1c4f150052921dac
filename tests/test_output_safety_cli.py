"""`needlec compile -o` through the real command line, pointed at folders a careless user might name.

Each case builds a small working tree of real user files in `tmp_path`, takes the sha256 of every
file (and the list of every folder), runs `needlec compile` in a fresh process and then checks: exit
code 2, a short message with no traceback, and a tree that is byte-for-byte what it was before: no
file changed, none removed, none added (no lock file or half-written folder left behind either).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPECS

SCREEN_LINES = 24  # "one screen": the whole message fits in a default terminal


def _snapshot(root: Path) -> dict[str, str]:
    """Relative path -> sha256 for every file, and -> "dir" for every folder, under `root`."""
    tree: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            tree[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            tree[rel] = "dir"
        else:
            tree[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return tree


def _user_tree(root: Path) -> Path:
    """A home folder with a project: the spec beside notes, data and a sub-folder of results.

    Returns the project folder (`home/user/bench`), which holds the spec `niah.yaml`.
    """
    bench = root / "home" / "user" / "bench"
    (bench / "results").mkdir(parents=True)
    shutil.copy(SPECS / "niah.yaml", bench / "niah.yaml")
    (bench / "notes.md").write_text("# Notes\nthree weeks of runs, not backed up\n", encoding="utf-8")
    (bench / "data.bin").write_bytes(bytes(range(256)) * 64)
    (bench / "results" / "run1.jsonl").write_text('{"id": 1, "score": 0.5}\n', encoding="utf-8")
    (root / "home" / "user" / "paper.tex").write_text("\\section{Results}\n", encoding="utf-8")
    (root / "home" / ".profile").write_text("export EDITOR=vi\n", encoding="utf-8")
    specs = root / "home" / "user" / "specs"
    specs.mkdir()
    (specs / "mine.yaml").write_text("name: mine\n", encoding="utf-8")
    (specs / "README.txt").write_text("specs I am still writing\n", encoding="utf-8")
    return bench


def _compile_args(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`needlec compile ARGS -q` in a fresh process, run from `cwd` with `home` as the home folder."""
    env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", "compile", *args, "-q"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _compile(spec: str, out: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return _compile_args([spec, "-o", out], cwd, home)


def _assert_refused(result: subprocess.CompletedProcess[str], words: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output, output
    assert len(output.splitlines()) <= SCREEN_LINES, output
    assert output.startswith("error: refusing to "), output
    assert words in output, output


# (where the command runs, relative to tmp_path; the spec argument; the -o argument; words the message must hold)
CASES = {
    "dot in the spec's folder": ("home/user/bench", "niah.yaml", ".", "it is the current folder"),
    "dot slash": ("home/user/bench", "niah.yaml", "./", "it is the current folder"),
    "the spec's folder by name": ("home/user", "bench/niah.yaml", "bench", "contains niah.yaml"),
    "a folder of other specs": ("home/user/bench", "niah.yaml", "../specs", "not empty and not a needlec dataset"),
    "a results folder": ("home/user/bench", "niah.yaml", "results", "not empty and not a needlec dataset"),
    "an existing file": ("home/user/bench", "niah.yaml", "notes.md", "existing file"),
    "an existing binary file": ("home/user/bench", "niah.yaml", "data.bin", "existing file"),
    "a folder under a file": ("home/user/bench", "niah.yaml", "notes.md/out", "notes.md is an existing file"),
    "a tilde": ("home/user/bench", "niah.yaml", "~", "home folder"),
    "the parent": ("home/user/bench", "niah.yaml", "..", "ancestor"),
    "the grandparent": ("home/user/bench", "niah.yaml", "../..", "home folder"),
    "the root": ("home/user/bench", "niah.yaml", "/", "file system root"),
    "an ancestor of the spec seen from elsewhere": ("home/user/specs", "../bench/niah.yaml", "..", "ancestor"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_compile_refuses_and_leaves_every_user_file_alone(case: str, tmp_path: Path) -> None:
    where, spec, out, words = CASES[case]
    _user_tree(tmp_path)
    before = _snapshot(tmp_path)
    result = _compile(spec, out, tmp_path / where, tmp_path / "home")
    _assert_refused(result, words)
    assert _snapshot(tmp_path) == before


def test_absolute_ancestors_of_the_spec_are_refused(tmp_path: Path) -> None:
    """What a shell makes of `-o ~` or `-o ~/user`: absolute folders that hold the spec, run from elsewhere."""
    bench = _user_tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = _snapshot(tmp_path)
    for out in (tmp_path / "home", tmp_path / "home" / "user", bench):
        result = _compile(str(bench / "niah.yaml"), str(out), elsewhere, tmp_path / "home")
        output = result.stdout + result.stderr
        assert result.returncode == 2, output
        assert "Traceback" not in output and len(output.splitlines()) <= SCREEN_LINES, output
        assert str(out) in output, output
    assert _snapshot(tmp_path) == before


def _small_spec(bench: Path, haystack: str) -> Path:
    """A one-cell spec of our own over local haystack files (`haystack`: a glob relative to `bench`)."""
    (bench / "hay").mkdir(exist_ok=True)
    (bench / "hay" / "essay.txt").write_text(
        " ".join(f"Sentence {i} of an essay that the user wrote by hand and keeps nowhere else." for i in range(300)),
        encoding="utf-8",
    )
    spec = bench / "small.yaml"
    spec.write_text(
        "name: small\ntitle: Small\ndescription: One needle.\nlicense: CC-BY-4.0\nlanguages: [en]\nseed: 3\n"
        "tokenizers: [cl100k_base]\n"
        f"haystack:\n  sources: [{{type: files, paths: ['{haystack}']}}]\n"
        "needle:\n  type: template\n  needles: [The spare key hangs behind the blue clock.]\n"
        "  question: Where does the spare key hang?\n  answers: [blue clock]\n"
        'grid: {lengths: [500], depths: [50]}\nprompt: {user: "{{ context }}\\n\\n{{ question }}"}\n'
        "scoring: {metric: contains}\n",
        encoding="utf-8",
    )
    return spec


def test_a_dataset_folder_holding_the_users_files_is_not_replaced(tmp_path: Path) -> None:
    """A compiled dataset folder is replaced by a recompile only while it holds what needlec wrote there: results
    the user saved into it, or a haystack the spec reads from it, make it refused, `--force` or not."""
    bench = _user_tree(tmp_path)
    home = tmp_path / "home"
    spec = _small_spec(bench, "hay/*.txt")
    assert _compile_args([str(spec), "-o", "build"], bench, home).returncode == 0
    assert _compile_args([str(spec), "-o", "build"], bench, home).returncode == 0  # only its own files: replaced

    (bench / "build" / "results").mkdir()
    (bench / "build" / "results" / "run1.jsonl").write_text('{"id": "x", "response": "blue clock"}\n')
    before = _snapshot(tmp_path)
    for force in ([], ["--force"]):
        result = _compile_args([str(spec), "-o", "build", *force], bench, home)
        _assert_refused(result, "1 other file(s) (results/run1.jsonl)")
        assert _snapshot(tmp_path) == before

    # a spec whose haystack now lives inside the dataset folder it compiles into (then changed, so that
    # only --force would replace the folder): its input is never deleted
    (bench / "build" / "results" / "run1.jsonl").unlink()
    (bench / "build" / "results").rmdir()
    (bench / "build" / "hay").mkdir()
    shutil.copy(bench / "hay" / "essay.txt", bench / "build" / "hay" / "essay.txt")
    inside = _small_spec(bench, "build/hay/*.txt")
    before = _snapshot(tmp_path)
    result = _compile_args([str(inside), "-o", "build", "--force"], bench, home)
    _assert_refused(result, "(hay/essay.txt)")
    assert _snapshot(tmp_path) == before
