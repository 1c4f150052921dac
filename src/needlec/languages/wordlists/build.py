"""Rebuild `cwe_words.txt` and `manifest.json` from the hand-written lists (a maintainer's tool).

Run `python -m needlec.languages.wordlists.build` after editing a list on purpose; the manifest's
new sha256 values then show up in the diff for review. Compiles never call this module.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from needlec.languages.wordlists.pseudowords import GENERATION_SEED, generate_pseudowords

HERE = Path(__file__).parent
CWE_VOCABULARY_SIZE = 12_000
"""Entries of the common-word vocabulary: enough distinct words for RULER CWE at 128K tokens."""

HAND_WRITTEN = {
    "adjectives": ("adjectives.txt", "written for needlec"),
    "nouns": ("nouns.txt", "written for needlec"),
    "noise_sentences": ("noise_sentences.txt", "written for needlec"),
}


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line]


def build_cwe_words(adjectives: list[str], nouns: list[str], size: int = CWE_VOCABULARY_SIZE) -> list[str]:
    """The real words (sorted, deduplicated) followed by pseudo-words up to `size` entries."""
    real = sorted(set(adjectives) | set(nouns))
    return real + generate_pseudowords(size - len(real), exclude=real, seed=GENERATION_SEED)


def _entry(path: Path, origin: str, **extra: Any) -> dict[str, Any]:
    raw = path.read_bytes()
    count = len([line for line in raw.decode("utf-8").split("\n") if line])
    return {"file": path.name, "sha256": hashlib.sha256(raw).hexdigest(), "count": count, "origin": origin, **extra}


def main() -> None:
    """Write cwe_words.txt and manifest.json next to this module."""
    adjectives = _lines(HERE / "adjectives.txt")
    nouns = _lines(HERE / "nouns.txt")
    cwe = build_cwe_words(adjectives, nouns)
    (HERE / "cwe_words.txt").write_text("\n".join(cwe) + "\n", encoding="utf-8")
    lists = {name: _entry(HERE / file, origin) for name, (file, origin) in HAND_WRITTEN.items()}
    real = len(set(adjectives) | set(nouns))
    lists["cwe_words"] = _entry(
        HERE / "cwe_words.txt",
        "generated",
        generator={
            "module": "needlec.languages.wordlists.pseudowords",
            "seed": GENERATION_SEED,
            "real_words": real,
            "pseudowords": len(cwe) - real,
        },
    )
    payload = {"version": 1, "lists": dict(sorted(lists.items()))}
    (HERE / "manifest.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
