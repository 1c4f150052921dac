"""A haystack shorter than a context length is repeated: the compile warns, and the warning is kept.

A tiny corpus (a few hundred tokens) compiled at lengths below and above its size: the compile
prints one warning per repeated haystack, the manifest records which haystack, which lengths and
how many times, and `needlec inspect`, the dataset card and the site's benchmark page say so too.
`--strict` refuses the same compile and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPECS

PARAGRAPH = (
    "The river runs past the old mill. Children fish from the bridge at dawn. "
    "In autumn the leaves turn the water red and gold.\n\n"
)
LENGTHS = [200, 1500, 3000]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "needlec.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The compiled tiny-corpus dataset and the compile's process result."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "tiny.txt").write_text(PARAGRAPH * 12, encoding="utf-8")
    (root / "tiny.yaml").write_text(
        f"extends: {SPECS / 'niah.yaml'}\nhaystack:\n  sources: [{{type: files, paths: [tiny.txt]}}]\n"
        f"grid:\n  lengths: {LENGTHS}\n  depths: [0, 50]\nvariants: null\n"
        "tokenizers: [cl100k_base]\n",
        encoding="utf-8",
    )
    result = _cli("compile", "tiny.yaml", "-o", "out", "-q", cwd=root)
    assert result.returncode == 0, result.stderr
    return root, result


def _corpus_tokens() -> int:
    """The corpus's token count, counted here with tiktoken directly (not through needlec)."""
    import tiktoken

    return len(tiktoken.get_encoding("cl100k_base").encode((PARAGRAPH * 12).strip()))


def test_the_manifest_records_haystack_lengths_and_times(tiny: tuple[Path, object]) -> None:
    root, _ = tiny
    manifest = json.loads((root / "out" / "manifest.json").read_text(encoding="utf-8"))
    [entry] = manifest["configs"]["default"]["repetition"]
    corpus = _corpus_tokens()
    assert 300 < corpus < 1500  # the grid straddles the corpus: 200 fits, 1500 and 3000 do not
    assert entry["tokenizer"] == "cl100k_base" and entry["haystack"] == "h0"
    assert abs(entry["haystack_tokens"] - corpus) <= 3  # separators between documents may differ by a token
    assert entry["lengths"] == [1500, 3000]
    assert entry["times"] == round(3000 / entry["haystack_tokens"], 2)
    assert entry["times"] > 2


def test_the_compile_prints_the_warning_once(tiny: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    _, result = tiny
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1, result.stderr
    assert "haystack h0" in lines[0] and "1,500, 3,000 tokens" in lines[0]


def test_inspect_shows_the_warning(tiny: tuple[Path, object]) -> None:
    root, _ = tiny
    result = _cli("inspect", "out", cwd=root)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if "warning:" in line]
    assert "default" in line and "haystack h0" in line and "1,500, 3,000 tokens" in line


def test_the_card_names_the_repeated_haystack(tiny: tuple[Path, object]) -> None:
    root, _ = tiny
    card = (root / "out" / "README.md").read_text(encoding="utf-8")
    assert "## Repeated haystack text" in card
    assert "- config `default`: haystack h0" in card


def test_the_site_page_names_the_repeated_haystack(tiny: tuple[Path, object]) -> None:
    from needlec.site.benchmark_page import render_page
    from needlec.site.collect import collect

    root, _ = tiny
    page = render_page(collect(root / "tiny.yaml", root / "out"), "assets")
    section = page.split("### Repeated text", 1)[1].split("###", 1)[0]
    assert "config `default`: haystack h0" in section and "1,500, 3,000 tokens" in section


def test_a_long_enough_haystack_records_nothing(small_niah: Path) -> None:
    manifest = json.loads((small_niah / "manifest.json").read_text(encoding="utf-8"))
    assert all("repetition" not in info for info in manifest["configs"].values())
    assert "Repeated haystack text" not in (small_niah / "README.md").read_text(encoding="utf-8")


def test_strict_refuses_and_writes_nothing(tiny: tuple[Path, object]) -> None:
    root, _ = tiny
    result = _cli("compile", "tiny.yaml", "-o", "strict-out", "-q", "--strict", cwd=root)
    assert result.returncode == 2, result.stderr
    assert "--strict" in result.stderr and "haystack h0" in result.stderr
    assert not (root / "strict-out").exists()
