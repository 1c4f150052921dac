"""Data-only companion of needlec: compressed haystack corpora and their catalog.

Nothing here imports needlec. `needlec.haystacks.sources.corpora` reads `catalog.json` and the
`data/<name>.jsonl.xz` files through `importlib.resources`; `scripts/extract_corpora.py` in the
needlec repository writes them.
"""

from __future__ import annotations

import importlib.resources
from importlib.resources.abc import Traversable

__all__ = ["root"]


def root() -> Traversable:
    """The package folder that holds `catalog.json`, `data/` and `licenses/`."""
    return importlib.resources.files(__name__)
