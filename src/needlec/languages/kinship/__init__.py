"""Kinship language packs for the Ancestral Trace Challenge: terms, sentence templates, questions and names.

Each language ships two versioned JSON data files (`<lang>.json` for the vocabulary and templates,
`names_<lang>.json` for the gender-tagged name pool) and `manifest.json` records their sha256, so a
dataset can state exactly which pack produced it. Load them with `load_pack`.
"""

from needlec.languages.kinship.pack import (
    KinshipPack,
    KinTerm,
    NamePool,
    PackIntegrityError,
    Template,
    available_languages,
    file_digests,
    load_pack,
)

__all__ = [
    "KinTerm",
    "KinshipPack",
    "NamePool",
    "PackIntegrityError",
    "Template",
    "available_languages",
    "file_digests",
    "load_pack",
]
