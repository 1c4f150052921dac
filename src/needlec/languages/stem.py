"""The Porter stemmer, exactly as `rouge-score` applies it, without importing NLTK.

`rouge-score`'s `use_stemmer=True` runs NLTK's `PorterStemmer()` in its default mode (Porter's
1980 algorithm with NLTK's extensions) on every token longer than three characters. Importing
NLTK pulls in scipy and scikit-learn (seconds of start-up for one small function), so the
algorithm is written out here; a test compares it with NLTK on every word of the embedded corpora.

The algorithm, on a lower-cased word (`c` consonant, `v` vowel; `y` is a vowel after a
consonant; the *measure* m of a stem is its number of vowel-consonant transitions):

* irregular forms first (`skies` -> `sky`, `dying` -> `die`, `news`, `proceed`, ...); words of
  one or two characters are left as they are;
* step 1a plurals (`sses`, `ies`; a four-letter `-ies` word keeps `ie`), 1b `-eed`/`-ed`/`-ing`
  (a four-letter `-ied` word keeps `ie`, other `-ied` become `i`) with the tidying of `at`, `bl`,
  `iz`, doubled consonants and short stems, 1c final `y` after a consonant to `i`;
* steps 2-4 suffix tables under measure conditions (`-ational`, `-iveness`, `-ement`, ...), where
  the first listed suffix the word ends with decides: if its condition fails nothing else is tried;
* step 5 a final `e` and a doubled `l`.

Tokens of three characters or fewer, and non-ASCII tokens (it is an English stemmer), are left as
they are by `stem`, as the overlap figures expect.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

__all__ = ["porter", "stem"]

_VOWELS = frozenset("aeiou")

_IRREGULAR = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}

Condition = Callable[[str], bool]


def _consonants(word: str) -> list[bool]:
    """For each letter, whether it is a consonant: not a vowel, and a `y` only after a vowel or first."""
    out: list[bool] = []
    for i, ch in enumerate(word):
        if ch in _VOWELS:
            out.append(False)
        elif ch == "y":
            out.append(i == 0 or not out[i - 1])
        else:
            out.append(True)
    return out


def _measure(word: str) -> int:
    """m: how often a vowel is directly followed by a consonant."""
    flags = _consonants(word)
    return sum(1 for a, b in itertools.pairwise(flags) if not a and b)


def _has_vowel(word: str) -> bool:
    return not all(_consonants(word))


def _double_consonant(word: str) -> bool:
    """*d: the word ends with two equal consonants."""
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _cvc(word: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y; NLTK also counts a two-letter
    vowel-consonant word."""
    if len(word) >= 3:
        flags = _consonants(word)
        if flags[-3] and not flags[-2] and flags[-1] and word[-1] not in "wxy":
            return True
    if len(word) == 2:
        flags = _consonants(word)
        return not flags[0] and flags[1]
    return False


def _m_above(limit: int) -> Condition:
    return lambda s: _measure(s) > limit


Rule = tuple[str, str, Condition | None]
Table = dict[str, list[Rule]]
"""A rule table by the last letter of the rules' suffixes, each letter's rules in the table's order."""


def _table(rules: list[Rule]) -> Table:
    table: Table = {}
    for rule in rules:
        table.setdefault(rule[0][-1], []).append(rule)
    return table


def _first_rule(word: str, table: Table) -> str:
    """Apply the first rule whose suffix ends `word`; when its condition fails, `word` stays. Only the rules
    whose suffix ends in the word's last letter can end it, so only those are tried, in the table's order."""
    for suffix, replacement, condition in table.get(word[-1:], ()):
        if word.endswith(suffix):
            base = word[: len(word) - len(suffix)]
            if condition is None or condition(base):
                return base + replacement
            return word
    return word


_STEP1A = _table([("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)])


def _step1a(word: str) -> str:
    if len(word) == 4 and word.endswith("ies"):
        return word[:-3] + "ie"
    return _first_rule(word, _STEP1A)


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        return word[:-3] + "ee" if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            base = word[: -len(suffix)]
            break
    else:
        return word
    for ending in ("at", "bl", "iz"):
        if base.endswith(ending):
            return base + "e"
    if _double_consonant(base):
        return base if base[-1] in "lsz" else base[:-1]
    if _measure(base) == 1 and _cvc(base):
        return base + "e"
    return base


def _step1c(word: str) -> str:
    if word.endswith("y"):
        base = word[:-1]
        if len(base) > 1 and _consonants(base)[-1]:
            return base + "i"
    return word


_POSITIVE = _m_above(0)
_STEP2: list[Rule] = [
    ("ational", "ate", _POSITIVE),
    ("tional", "tion", _POSITIVE),
    ("enci", "ence", _POSITIVE),
    ("anci", "ance", _POSITIVE),
    ("izer", "ize", _POSITIVE),
    ("bli", "ble", _POSITIVE),
    ("alli", "al", _POSITIVE),
    ("entli", "ent", _POSITIVE),
    ("eli", "e", _POSITIVE),
    ("ousli", "ous", _POSITIVE),
    ("ization", "ize", _POSITIVE),
    ("ation", "ate", _POSITIVE),
    ("ator", "ate", _POSITIVE),
    ("alism", "al", _POSITIVE),
    ("iveness", "ive", _POSITIVE),
    ("fulness", "ful", _POSITIVE),
    ("ousness", "ous", _POSITIVE),
    ("aliti", "al", _POSITIVE),
    ("iviti", "ive", _POSITIVE),
    ("biliti", "ble", _POSITIVE),
    ("fulli", "ful", _POSITIVE),
    # the stem keeps the `l` of `-logi` when measured, so `geologi` -> `geolog` like `archaeologi`
    ("logi", "log", lambda base: _measure(base + "l") > 0),
]


def _step2(word: str) -> str:
    # `-alli` is tried before the table (and the result goes through it again)
    if word.endswith("alli") and _measure(word[:-4]) > 0:
        return _step2(word[:-4] + "al")
    return _first_rule(word, _STEP2_TABLE)


_STEP3: list[Rule] = [
    ("icate", "ic", _POSITIVE),
    ("ative", "", _POSITIVE),
    ("alize", "al", _POSITIVE),
    ("iciti", "ic", _POSITIVE),
    ("ical", "ic", _POSITIVE),
    ("ful", "", _POSITIVE),
    ("ness", "", _POSITIVE),
]

_ABOVE_ONE = _m_above(1)
_STEP4: list[Rule] = [
    (suffix, "", _ABOVE_ONE)
    for suffix in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent")
]
_STEP4.append(("ion", "", lambda base: _measure(base) > 1 and base[-1:] in ("s", "t")))
_STEP4.extend((suffix, "", _ABOVE_ONE) for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize"))
_STEP2_TABLE, _STEP3_TABLE, _STEP4_TABLE = _table(_STEP2), _table(_STEP3), _table(_STEP4)


def _step5(word: str) -> str:
    if word.endswith("e"):
        base = word[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            word = base
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word


def porter(word: str) -> str:
    """The Porter stem of `word` (lower-cased first), with NLTK's extensions, as NLTK's default mode."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if len(word) <= 2:
        return lowered
    out = _step1a(lowered)
    out = _step1b(out)
    out = _step1c(out)
    out = _step2(out)
    out = _first_rule(out, _STEP3_TABLE)
    out = _first_rule(out, _STEP4_TABLE)
    return _step5(out)


_STEMS: dict[str, str] = {}  # token -> stem; a pure function's memo, so no state leaks


def stem(token: str) -> str:
    """`token`'s Porter stem as `rouge-score` computes it (tokens of 3 characters or fewer, and
    non-ASCII tokens, are left as they are)."""
    if len(token) <= 3 or not token.isascii():
        return token
    found = _STEMS.get(token)
    if found is None:
        found = porter(token)
        if len(_STEMS) < 1_000_000:
            _STEMS[token] = found
    return found
