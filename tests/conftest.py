"""Shared fixtures: offline settings, the embedded haystack, and a small compiled NIAH dataset."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# Entry-point discovery off: an installed plugin must not change what these tests see (the plugin
# tests turn it back on in their own subprocesses).
os.environ["NEEDLEC_PLUGINS"] = "0"

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"


@pytest.fixture(scope="session")
def bible_text() -> str:
    from needlec.haystacks.sources.builtin import _web_bible

    documents, _ = _web_bible()
    return "\n\n".join(d.text for d in documents[:3])


@pytest.fixture(scope="session")
def cl100k():
    from needlec.tokenizer import _tiktoken

    return _tiktoken("cl100k_base")


@pytest.fixture(scope="session")
def o200k():
    from needlec.tokenizer import _tiktoken

    return _tiktoken("o200k_base")


@pytest.fixture(scope="session")
def small_niah(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """specs/niah.yaml compiled on a reduced grid: its three original configs (single, multi, passkey),
    both tokenizers. The other configs (single-fit, single-prefill, kamradt-grid) have their own tests."""
    from needlec.compile.pipeline import CompileOptions, compile_spec

    out = tmp_path_factory.mktemp("niah") / "out"
    compile_spec(
        SPECS / "niah.yaml",
        out,
        CompileOptions(
            select={"length": {"1000", "4000", "16000"}, "config": {"single", "multi", "passkey"}}, progress=False
        ),
    )
    return out
