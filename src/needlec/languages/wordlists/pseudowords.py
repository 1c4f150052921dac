"""Pronounceable pseudo-words built from syllable tables, to extend the common-word vocabulary.

RULER's common-word extraction needs about ten thousand distinct words at 128K tokens, more than
the hand-written adjective and noun lists hold. The rest are made-up words such as "belomi": they
are generated once, from the fixed seed and tables below, and frozen in `cwe_words.txt`; the
sha256 of that file is pinned in the manifest and a test re-runs this generator to show that the
frozen file is exactly what it produces. The fixed seed here builds a shipped data file once; it is
never used to draw items.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

ONSETS: tuple[str, ...] = (
    "b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
    "br", "dr", "fl", "gr", "kl", "pr", "st", "tr", "sh", "ch", "th",
)  # fmt: skip
"""Consonant clusters that may open a syllable."""

VOWELS: tuple[str, ...] = ("a", "e", "i", "o", "u", "ai", "ea", "oo", "ou", "ie")
"""Vowel nuclei."""

CODAS: tuple[str, ...] = ("", "", "", "", "n", "l", "r", "s", "m", "t", "k", "nd", "st")
"""Syllable endings; the empty coda is listed several times so open syllables are the most common."""

AVOIDED_PARTS: tuple[str, ...] = (
    "shit", "fuk", "fuck", "cunt", "dick", "cock", "piss", "slut", "nig", "fag", "rape", "porn", "anal",
    "tit", "cum", "sex", "nazi", "kike", "spic", "twat", "whor", "homo", "negr", "paki", "dyke", "butt",
    "poo", "kill", "dead", "hate",
)  # fmt: skip
"""Letter sequences a generated word may not contain, so no made-up word reads as a slur or an insult."""

GENERATION_SEED = 20240611
"""Seed of the one-off generation that produced the frozen list."""


def _pseudoword(rng: random.Random) -> str:
    """One word of two or three syllables."""
    syllables = 2 if rng.random() < 0.6 else 3
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables))


def generate_pseudowords(count: int, exclude: Iterable[str], seed: int = GENERATION_SEED) -> list[str]:
    """Return `count` distinct pseudo-words, none in `exclude`, in generation order.

    Words shorter than 5 or longer than 10 letters are skipped, so that a made-up word is rarely a
    real short word. The loop is bounded: it raises ValueError rather than spin when the tables
    cannot supply enough words.
    """
    rng = random.Random(seed)
    banned = set(exclude)
    seen: set[str] = set()
    words: list[str] = []
    budget = count * 50
    while len(words) < count:
        budget -= 1
        if budget < 0:
            raise ValueError(f"syllable tables yield fewer than {count} distinct pseudo-words")
        word = _pseudoword(rng)
        if not 5 <= len(word) <= 10 or word in banned or word in seen:
            continue
        if any(part in word for part in AVOIDED_PARTS):
            continue
        seen.add(word)
        words.append(word)
    return words
