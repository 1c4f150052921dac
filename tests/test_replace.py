"""Nothing lost: compiling into a folder that holds a dataset never quietly shrinks or swaps it.

Through the installed command on small slices of the shipped NIAH spec (`single` at 1,000
tokens: 2 tokenizers x 11 depths = 22 items).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import SPECS

NEEDLEC = str(Path(sys.executable).parent / "needlec")
SLICE = ("--select", "config=single", "--select", "length=1000")


def compile_(spec: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NEEDLEC, "compile", str(spec), "-o", str(out), "-q", *args], capture_output=True, text=True, timeout=600
    )


def digest(folder: Path) -> str:
    """sha256 over every file's relative path and bytes: any change to the folder changes it."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_same_spec_and_selection_rebuilds_and_a_narrower_one_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "niah"
    first = compile_(SPECS / "niah.yaml", out, *SLICE)
    assert first.returncode == 0, first.stderr
    before = digest(out)

    again = compile_(SPECS / "niah.yaml", out, *SLICE)  # a plain rebuild: same bytes
    assert again.returncode == 0, again.stderr
    assert digest(out) == before

    narrower = compile_(SPECS / "niah.yaml", out, *SLICE, "--select", "depth=50")
    assert narrower.returncode == 2
    # 22 items there; depth 50 keeps 2 (one per tokenizer), so 20 would be left out
    assert "holds 22 items" in narrower.stderr and "leave out 20 of them" in narrower.stderr
    assert "--force" in narrower.stderr and "Traceback" not in narrower.stderr
    assert digest(out) == before  # untouched

    one_tokenizer = compile_(SPECS / "niah.yaml", out, *SLICE, "--select", "tokenizer=o200k_base")
    assert one_tokenizer.returncode == 2 and "leave out 11 of them" in one_tokenizer.stderr

    forced = compile_(SPECS / "niah.yaml", out, *SLICE, "--select", "depth=50", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "wrote 2 items" in forced.stdout


def test_a_wider_selection_goes_ahead(tmp_path: Path) -> None:
    out = tmp_path / "niah"
    assert compile_(SPECS / "niah.yaml", out, *SLICE, "--select", "depth=0,50").returncode == 0
    wider = compile_(SPECS / "niah.yaml", out, *SLICE)  # every item there is rebuilt, 18 added
    assert wider.returncode == 0, wider.stderr
    assert "wrote 22 items" in wider.stdout


def test_another_spec_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert compile_(SPECS / "niah.yaml", out, *SLICE).returncode == 0
    before = digest(out)
    other = tmp_path / "specs" / "niah.yaml"
    other.parent.mkdir()
    shutil.copy(SPECS / "niah.yaml", other)
    with other.open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit: another version of the spec\n")
    refused = compile_(other, out, *SLICE)
    assert refused.returncode == 2
    assert "compiled from a spec of the same name ('" in refused.stderr
    assert "whose text differs: an earlier version, or another file" in refused.stderr
    assert "holds 22 items" in refused.stderr
    assert digest(out) == before
    assert compile_(other, out, *SLICE, "--force").returncode == 0
