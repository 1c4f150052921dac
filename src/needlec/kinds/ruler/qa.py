"""The QA tasks' entry in the RULER task table (qa_1 / qa_2 and the RAG-chunk variant).

The documents and questions come from `qa_corpus.py` (fictional, generated from the frozen
pseudo-words) and are laid out by `needlec.compile.documents`: numbered whole documents with the
gold one at the slot of the grid depth, recorded on the item. Unlike RULER, whose fixed-seed
shuffle puts the gold document in the same slot in every item with the same document count, the
slot follows the grid.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QASpec:
    """Marks a task as passage QA in the task table; its layout is fixed by the kind and the
    `ruler_documents` builder, so it carries no parameters."""


__all__ = ["QASpec"]
