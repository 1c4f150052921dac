"""Frozen English word lists shipped with needlec, each pinned by sha256 in `manifest.json`.

The lists are plain text, one entry per line, so a diff shows every change:

- `adjectives.txt` and `nouns.txt`: real English words written for the project, used for
  adjective-noun keys and values (RULER NIAH) and for passkey patterns such as ADJ-NOUN-DDDD.
- `cwe_words.txt`: the common-word extraction vocabulary, the adjectives and nouns plus
  pronounceable pseudo-words from `pseudowords.py` (generated once and frozen).
- `noise_sentences.txt`: the short neutral sentences that the repeat haystack cycles.

`load_wordlist` checks the file against the manifest before returning it, so a changed list can
never change a dataset silently: the compile fails instead.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

from needlec.errors import NeedlecError

MANIFEST_NAME = "manifest.json"
"""File, next to the lists, that records each list's file name, sha256 and entry count."""


class WordListError(NeedlecError):
    """A shipped word list is missing, unknown, or differs from the sha256 pinned in the manifest."""


def _read_bytes(name: str) -> bytes:
    return resources.files(__name__).joinpath(name).read_bytes()


@cache
def manifest() -> dict[str, Any]:
    """The parsed manifest: {"version": 1, "lists": {name: {"file", "sha256", "count", "origin", ...}}}."""
    data: dict[str, Any] = json.loads(_read_bytes(MANIFEST_NAME))
    return data


def list_names() -> list[str]:
    """Names of the shipped lists, e.g. ["adjectives", "cwe_words", "noise_sentences", "nouns"]."""
    return sorted(manifest()["lists"])


def verify_wordlist(raw: bytes, entry: dict[str, Any]) -> tuple[str, ...]:
    """Check `raw` (a list file's bytes) against its manifest entry and return its entries.

    Raises WordListError when the sha256 or the entry count differs from the manifest.
    """
    digest = hashlib.sha256(raw).hexdigest()
    if digest != entry["sha256"]:
        raise WordListError(
            f"word list {entry['file']} has sha256 {digest}, but the manifest pins {entry['sha256']}; "
            "restore the file or rebuild the manifest on purpose"
        )
    words = tuple(line for line in raw.decode("utf-8").split("\n") if line)
    if len(words) != entry["count"]:
        raise WordListError(f"word list {entry['file']} has {len(words)} entries, the manifest says {entry['count']}")
    return words


@cache
def load_wordlist(name: str) -> tuple[str, ...]:
    """Return the entries of list `name`, after checking its sha256 against the manifest."""
    lists = manifest()["lists"]
    if name not in lists:
        raise WordListError(f"unknown word list {name!r}; shipped lists: {', '.join(sorted(lists))}")
    entry = lists[name]
    return verify_wordlist(_read_bytes(entry["file"]), entry)


def adjectives() -> tuple[str, ...]:
    """Lowercase English adjectives (at least 1,000)."""
    return load_wordlist("adjectives")


def nouns() -> tuple[str, ...]:
    """Lowercase English nouns (at least 3,000)."""
    return load_wordlist("nouns")


def cwe_words() -> tuple[str, ...]:
    """Distinct lowercase words for common-word extraction (about 12,000)."""
    return load_wordlist("cwe_words")


def noise_sentences() -> tuple[str, ...]:
    """The five sentences that the repeat ("noise") haystack cycles."""
    return load_wordlist("noise_sentences")
