"""Independent checks of the RULER generators and the frozen word lists.

Answers are recomputed here from the rendered text with parsers written in this file (regular
expressions and counting), never with the generators' own helpers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.errors import NeedlecError
from needlec.kinds.ruler.common import (
    DistinctPool,
    RulerGenerationError,
    random_letters,
    shuffled,
    shuffled_small,
    spaced_depths,
)
from needlec.kinds.ruler.keyvalue import KeyValueSpec, generate_keyvalue
from needlec.kinds.ruler.passkey import PasskeySpec, generate_passkey
from needlec.kinds.ruler.qa_corpus import draw_qa
from needlec.kinds.ruler.tasks import TASKS, cwe_spec_for_length, task
from needlec.kinds.ruler.variable_tracking import VariableSpec, generate_variable_tracking
from needlec.kinds.ruler.words import (
    CommonWordsSpec,
    FrequentWordsSpec,
    generate_common_words,
    generate_frequent_words,
    zeta,
    zipf_counts,
)
from needlec.languages import wordlists
from needlec.languages.wordlists.build import build_cwe_words

WORDLIST_DIR = Path(wordlists.__file__).parent

# Pinned by hand: changing a list must change these lines too, in review.
PINNED_SHA256 = {
    "adjectives.txt": "c264500650fc4960c93ad324d7e7bee2d657e0b974b45da019cd503f0699c344",
    "nouns.txt": "64922f4ed00fd331c0639ed6a97b0998a2660984f9fe4da89a71cb4e61bc6091",
    "noise_sentences.txt": "ffeb524dd8da75a7e86d589049f65e0a992fed43b3b86d0b2d865ae858a97cd4",
}

NEEDLE_RE = re.compile(r"^A secret (?:number|word|code) filed under (\S+) is (\S+)\.$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _file_lines(name: str) -> list[str]:
    return (WORDLIST_DIR / name).read_text(encoding="utf-8").splitlines()


# --- word lists -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000, 30_000])
def test_shuffled_sorts_by_little_endian_64_bit_keys_ties_first_come(size: int) -> None:
    """The documented order, worked out here without numpy: one `randbytes` call, 8 bytes per item read
    as a little-endian unsigned number, items by key, equal keys in their first order. Items repeat, as
    FWE's word stream does."""
    for seed in range(3):
        raw = random.Random(seed).randbytes(8 * size)
        keys = [int.from_bytes(raw[8 * i : 8 * i + 8], "little") for i in range(size)]
        items = [f"w{i % 50}" for i in range(size)]
        expected = [items[i] for i in sorted(range(size), key=lambda i: (keys[i], i))]
        assert shuffled(random.Random(seed), items) == expected


@pytest.mark.parametrize("size", [1, 2, 7, 1000, 30_000])
def test_small_values_are_shuffled_by_the_documented_keys(size: int) -> None:
    """`shuffled_small`, worked out here without numpy's sort: the raw 64-bit outputs of a PCG64 bit generator
    seeded from `getrandbits(128)`, each with its value in the low bits, in key order; the rng is left as that
    one call leaves it. Values repeat (an FWE stream's ranks); the result is a permutation of them."""
    import numpy as np

    values = np.array([(7 * i) % 161 for i in range(size)], dtype=np.int64)
    bits = int(values.max()).bit_length() or 1
    for seed in range(3):
        rng, twin = random.Random(seed), random.Random(seed)
        raw = np.random.PCG64(twin.getrandbits(128)).random_raw(size).tolist()
        keys = sorted((key >> bits << bits) | int(v) for key, v in zip(raw, values.tolist(), strict=True))
        got = shuffled_small(rng, values)
        assert got.tolist() == [key & ((1 << bits) - 1) for key in keys]
        assert sorted(got.tolist()) == sorted(values.tolist())
        assert rng.random() == twin.random()
    # wide values take separate keys: still a permutation, the same for the same seed
    wide = np.array([1 << 30, 5, 1 << 30, 7], dtype=np.int64)
    once = shuffled_small(random.Random(1), wide)
    assert sorted(once.tolist()) == sorted(wide.tolist()) and (shuffled_small(random.Random(1), wide) == once).all()


def test_shuffled_small_spreads_every_value_over_every_place() -> None:
    # 6,000 shuffles of four distinct values: each value lands in each place about a quarter of the time
    import numpy as np

    rng = random.Random(11)
    seen = np.zeros((4, 4), dtype=np.int64)
    for _ in range(6000):
        seen[np.arange(4), shuffled_small(rng, np.arange(4, dtype=np.int64))] += 1
    assert seen.min() > 1300 and seen.max() < 1700


def test_shuffled_keeps_items_with_equal_keys_in_their_first_order() -> None:
    """Equal keys, which a real generator gives about once in 2^64 pairs and so never here, keep their items'
    first order. A generator whose `randbytes` hands out a few keys over and over stands in for that case
    (a test double: no real seed yields it); tuples, which numpy would unpack, come back as they were."""

    class FewKeys(random.Random):
        def randbytes(self, n: int) -> bytes:
            return b"".join((k % 3).to_bytes(8, "little") for k in range(n // 8))

    items = [("item", i) for i in range(10)]
    keys = [k % 3 for k in range(10)]
    assert shuffled(FewKeys(0), items) == [items[i] for i in sorted(range(10), key=lambda i: (keys[i], i))]


@pytest.mark.parametrize("count", [0, 1, 6, 600, 15_726])
def test_random_letters_are_the_letters_choices_draws(count: int) -> None:
    """`random_letters` against the standard library itself: the same letters as `choices`, and the rng
    left where `choices` leaves it (its next draws agree)."""
    for seed in range(4):
        mine, theirs = random.Random(seed), random.Random(seed)
        for letters in ("abcdefghijklmnopqrstuvwxyz", "xyz", "0123456789abcdef", "αβγ字"):
            assert random_letters(mine, count, letters) == "".join(theirs.choices(letters, k=count))
        assert [mine.random() for _ in range(3)] == [theirs.random() for _ in range(3)]


def test_draw_all_draws_what_draw_draws_one_at_a_time() -> None:
    """Batches of candidates, rejected ones included (a tiny alphabet repeats words) or none rejected (a batch
    kept whole), give the strings and the rng state of one `draw` per string."""
    for letters, size in (("ab", 3), ("abcdefghijklmnop", 6)):
        for seed in range(6):
            one, batch = random.Random(seed), random.Random(seed)
            single = DistinctPool(one, ["aaa"])
            expected = [
                single.draw(lambda r, letters=letters, size=size: "".join(r.choices(letters, k=size)), "word")
                for _ in range(6)
            ]

            def words(n: int, rng: random.Random = batch, letters: str = letters, size: int = size) -> list[str]:
                drawn = random_letters(rng, size * n, letters)
                return [drawn[i : i + size] for i in range(0, size * n, size)]

            pool = DistinctPool(batch, ["aaa"])
            got = pool.draw_all(words, 6, "word")
            assert got == expected and pool.drawn == set(expected)
            assert one.random() == batch.random()
    with pytest.raises(RulerGenerationError, match="could not draw a fresh word"):
        DistinctPool(random.Random(0), ["a", "b"]).draw_all(lambda n: ["a"] * n, 1, "word")


def test_wordlist_files_match_pinned_and_manifest_sha256() -> None:
    manifest = json.loads((WORDLIST_DIR / "manifest.json").read_text(encoding="utf-8"))
    files = {entry["file"]: entry for entry in manifest["lists"].values()}
    assert set(files) == {"adjectives.txt", "nouns.txt", "noise_sentences.txt", "cwe_words.txt"}
    for name, entry in files.items():
        digest = hashlib.sha256((WORDLIST_DIR / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], name
        assert len(_file_lines(name)) == entry["count"], name
    for name, digest in PINNED_SHA256.items():
        assert files[name]["sha256"] == digest, name


def test_wordlists_sizes_and_shape() -> None:
    adjectives, nouns, cwe = _file_lines("adjectives.txt"), _file_lines("nouns.txt"), _file_lines("cwe_words.txt")
    assert len(set(adjectives)) == len(adjectives) >= 1000
    assert len(set(nouns)) == len(nouns) >= 3000
    assert len(set(cwe)) == len(cwe) >= 11000
    for word in [*adjectives, *nouns, *cwe]:
        assert re.fullmatch(r"[a-z]+", word), word
    # The loader returns exactly the file's lines.
    assert list(wordlists.adjectives()) == adjectives
    assert list(wordlists.cwe_words()) == cwe
    noise = wordlists.noise_sentences()
    assert len(noise) == 5
    assert all(sentence.endswith(".") and len(sentence.split()) <= 6 for sentence in noise)


def test_cwe_vocabulary_is_reproducible_from_its_generator() -> None:
    rebuilt = build_cwe_words(
        _file_lines("adjectives.txt"), _file_lines("nouns.txt"), len(_file_lines("cwe_words.txt"))
    )
    assert rebuilt == _file_lines("cwe_words.txt")


def test_unknown_wordlist_is_a_needlec_error() -> None:
    with pytest.raises(NeedlecError, match="unknown word list"):
        wordlists.load_wordlist("verbs")


# --- key-value needles ----------------------------------------------------------------------------


def _parse_needles(texts: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for text in texts:
        match = NEEDLE_RE.match(text)
        assert match, text
        pairs.append((match.group(1), match.group(2)))
    return pairs


KV_CASES = [
    KeyValueSpec("words", "numbers"),
    KeyValueSpec("words", "uuids"),
    KeyValueSpec("words", "numbers", num_keys=4),
    KeyValueSpec("uuids", "uuids"),
    KeyValueSpec("words", "numbers", num_values=4),
    KeyValueSpec("words", "numbers", num_keys=4, num_queries=4),
    KeyValueSpec("numbers", "words", num_keys=3, num_values=2, num_queries=2),
]


@pytest.mark.parametrize(
    "spec", KV_CASES, ids=lambda s: f"{s.key_kind}-{s.value_kind}-k{s.num_keys}v{s.num_values}q{s.num_queries}"
)
def test_keyvalue_queried_values_once_never_in_distractors(spec: KeyValueSpec) -> None:
    adjectives, nouns = set(_file_lines("adjectives.txt")), set(_file_lines("nouns.txt"))
    for seed in range(40):
        item = generate_keyvalue(random.Random(seed), spec, num_filler=60)
        targets = _parse_needles([n.text for n in item.needles if n.role == "target"])
        others = _parse_needles(
            [n.text for n in item.needles if n.role == "distractor"] + [n.text for n in item.filler]
        )
        assert len(targets) == spec.num_queries * spec.num_values
        assert len(others) == (spec.num_keys - spec.num_queries) * spec.num_values + 60
        queried = set(item.queries)
        assert len(queried) == spec.num_queries
        # Distractor keys never equal a queried key.
        assert not queried & {key for key, _ in others}
        # Each required value occurs exactly once among all needle texts, in a target needle of a queried key.
        all_values = [value for _, value in targets + others]
        expected = sorted(value for key, value in targets if key in queried)
        assert sorted(fact[0] for fact in item.answers) == expected
        for value in expected:
            assert all_values.count(value) == 1
            assert sum(value in text for text in [n.text for n in item.filler]) == 0
        # No required value hides inside another string of the item.
        strings = [s for pair in targets + others for s in pair]
        for value in expected:
            assert sum(value in s for s in strings) == 1
        # Values never repeat, and no value equals a key.
        assert len(set(all_values)) == len(all_values)
        assert not set(all_values) & {key for key, _ in targets + others}
        for key, value in targets + others:
            for token, kind in ((key, spec.key_kind), (value, spec.value_kind)):
                if kind == "numbers":
                    assert re.fullmatch(r"[1-9]\d{6}", token)
                elif kind == "uuids":
                    assert UUID_RE.match(token)
                else:
                    adjective, noun = token.split("-")
                    assert adjective in adjectives and noun in nouns


def test_keyvalue_wording_singular_and_plural() -> None:
    single = generate_keyvalue(random.Random(3), KeyValueSpec("words", "numbers"))
    assert single.question == f"What is the secret number filed under {single.queries[0]}?"
    assert single.answer_prefix == f"The secret number filed under {single.queries[0]} is"
    multi = generate_keyvalue(random.Random(3), KeyValueSpec("words", "numbers", num_keys=2, num_queries=2))
    a, b = multi.queries
    assert multi.question == f"What are all the secret numbers filed under {a} and {b}?"
    assert multi.answer_prefix.endswith(" are")
    values = generate_keyvalue(random.Random(3), KeyValueSpec("words", "uuids", num_values=3))
    assert values.question.startswith("What are all the secret codes")


def test_keyvalue_needle_order_varies_per_item() -> None:
    spec = KeyValueSpec("words", "numbers", num_values=4)
    firsts = set()
    for seed in range(40):
        item = generate_keyvalue(random.Random(seed), spec)
        firsts.add(item.answers.index((item.needles[0].value,)))
    assert len(firsts) == 4


def test_keyvalue_filler_prefix_keeps_guarantees_and_exclude_is_honoured() -> None:
    item = generate_keyvalue(random.Random(9), KeyValueSpec("numbers", "numbers"), num_filler=500)
    again = generate_keyvalue(random.Random(9), KeyValueSpec("numbers", "numbers"), num_filler=500)
    assert item == again
    banned = [item.queries[0]]
    other = generate_keyvalue(random.Random(9), KeyValueSpec("numbers", "numbers"), exclude=banned)
    assert other.queries[0] != banned[0]


# --- variable tracking ----------------------------------------------------------------------------

ASSIGN_RE = re.compile(r"^VAR ([A-Z]+) = (VAR ([A-Z]+)|(\d+))\.$")


def _simulate(texts: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for text in texts:
        match = ASSIGN_RE.match(text)
        assert match, text
        env[match.group(1)] = env[match.group(3)] if match.group(3) else match.group(4)
    return env


@pytest.mark.parametrize("chains", [1, 3])
def test_variable_tracking_alias_answers_recomputed_from_text(chains: int) -> None:
    spec = VariableSpec(mode="alias_chain", num_chains=chains, num_hops=4)
    for seed in range(60):
        item = generate_variable_tracking(random.Random(seed), spec)
        texts = [s.text for s in item.statements]
        assert len(texts) == chains * 5
        env = _simulate(texts)
        holders = sorted(name for name, value in env.items() if value == item.query)
        assert holders == sorted(fact[0] for fact in item.answers)
        assert len(holders) == 5
        names = [m.group(1) for t in texts if (m := ASSIGN_RE.match(t))]
        assert len(names) == len(texts)
        assert len(set(names)) == len(names) and all(len(n) == 5 for n in names)
        literal_values = [m.group(4) for t in texts if (m := ASSIGN_RE.match(t)) and m.group(4)]
        assert len(set(literal_values)) == len(literal_values) == chains
        assert str(len(holders)) in item.answer_prefix


def test_variable_tracking_interleaving_keeps_chain_order_and_varies() -> None:
    spec = VariableSpec(num_chains=3, num_hops=3)
    orders = set()
    for seed in range(30):
        item = generate_variable_tracking(random.Random(seed), spec)
        for chain in item.chains:
            positions = [item.statements.index(statement) for statement in chain]
            assert positions == sorted(positions)
        orders.add(tuple(statement.chain for statement in item.statements))
    assert len(orders) > 20


def test_variable_tracking_final_value_recomputed_from_text() -> None:
    spec = VariableSpec(mode="final_value", num_chains=3, num_hops=3)
    for seed in range(60):
        item = generate_variable_tracking(random.Random(seed), spec)
        env = _simulate([s.text for s in item.statements])
        assert item.answers == ((env[item.query],),)
        assert item.query in item.question


def test_variable_tracking_example_disjoint_via_exclude() -> None:
    item = generate_variable_tracking(random.Random(1), VariableSpec())
    used = {s.target for s in item.statements} | {s.value for s in item.statements if s.value}
    example = generate_variable_tracking(random.Random(1), VariableSpec(name_length=3), exclude=sorted(used))
    example_used = {s.target for s in example.statements} | {s.value for s in example.statements if s.value}
    assert not used & example_used


# --- word extraction ------------------------------------------------------------------------------


def _numbered_words(text: str) -> list[str]:
    entries = re.findall(r"(\d+)\. (\S+)", text)
    assert [int(number) for number, _ in entries] == list(range(1, len(entries) + 1))
    return [word for _, word in entries]


@pytest.mark.parametrize(("length", "common", "uncommon"), [(8192, 30, 3), (2048, 6, 1)])
def test_cwe_answers_recomputed_by_counting(length: int, common: int, uncommon: int) -> None:
    spec = cwe_spec_for_length(length)
    assert (spec.common_freq, spec.uncommon_freq) == (common, uncommon)
    for seed in range(15):
        item = generate_common_words(random.Random(seed), spec, num_uncommon=300)
        counts = Counter(_numbered_words(item.text))
        assert len(counts) == 310
        ranked = counts.most_common()
        top = {word for word, _ in ranked[:10]}
        assert ranked[9][1] > ranked[10][1]
        assert top == {fact[0] for fact in item.answers}
        assert {count for _, count in ranked[:10]} == {common}
        for word in top:
            assert not any(word in other for other in counts if other != word)
            assert not any(other in word for other in counts if other != word)


def test_cwe_example_is_disjoint_from_the_item() -> None:
    item = generate_common_words(random.Random(4), CommonWordsSpec(), num_uncommon=100)
    example = generate_common_words(
        random.Random(4), CommonWordsSpec(common_freq=10), num_uncommon=30, exclude=sorted(set(item.sequence))
    )
    assert not set(item.sequence) & set(example.sequence)


def test_cwe_fails_fast_when_the_vocabulary_is_too_small() -> None:
    with pytest.raises(RulerGenerationError, match="cannot supply"):
        generate_common_words(random.Random(0), CommonWordsSpec(), num_uncommon=50, vocabulary=["aa", "bb", "cc"] * 1)


def test_fwe_answers_recomputed_by_counting() -> None:
    real_words = set(_file_lines("cwe_words.txt"))
    for seed in range(10):
        item = generate_frequent_words(random.Random(seed), FrequentWordsSpec(), num_words=3000, vocab_size=160)
        counts = Counter(item.text.split())
        noise = counts.pop("...")
        ranked = counts.most_common()
        assert noise > ranked[0][1]
        assert ranked[0][1] > ranked[1][1] > ranked[2][1] > ranked[3][1]
        assert tuple((word,) for word, _ in ranked[:3]) == item.answers
        # Zipf counts by hand for alpha = 2: zeta(2) = pi^2 / 6.
        assert noise == int(3000 * 6 / 3.141592653589793**2)
        assert ranked[0][1] == int(3000 / 4 * 6 / 3.141592653589793**2)
        for word in counts:
            assert re.fullmatch(r"[a-z]{6}", word) and word not in real_words


@settings(max_examples=60, deadline=None)
@given(
    num_words=st.integers(1, 10**7),
    vocab_size=st.integers(1, 6000),
    alpha=st.sampled_from([1.1, 1.5, 2.0, 2.5, 3.0]),
)
def test_zipf_counts_are_the_formula_term_by_term(num_words: int, vocab_size: int, alpha: float) -> None:
    """RULER's counts floor(N * k^-alpha / zeta(alpha)), each worked out in Python's float arithmetic in that order,
    for any N (a stream sized by a tokenizer's own line cost has a length of its own)."""
    norm = zeta(alpha)
    expected = tuple(int(num_words * math.pow(k, -alpha) / norm) for k in range(1, vocab_size + 1))
    assert zipf_counts(num_words, vocab_size, alpha) == expected


def test_fwe_refuses_ties() -> None:
    with pytest.raises(RulerGenerationError, match="strictly decreasing"):
        generate_frequent_words(random.Random(0), FrequentWordsSpec(), num_words=20, vocab_size=50)


# --- passkey --------------------------------------------------------------------------------------


def test_passkey_number_range_and_pattern() -> None:
    adjectives, nouns = set(_file_lines("adjectives.txt")), set(_file_lines("nouns.txt"))
    seen = set()
    for seed in range(200):
        item = generate_passkey(random.Random(seed), PasskeySpec(low=10, high=20))
        assert 10 <= int(item.key) <= 20 and item.needle.count(item.key) == 2
        seen.add(item.key)
    assert len(seen) == 11
    for seed in range(50):
        item = generate_passkey(random.Random(seed), PasskeySpec(kind="pattern", abstain=True))
        adjective, noun, digits = item.key.split("-")
        assert adjective.lower() in adjectives and noun.lower() in nouns and re.fullmatch(r"\d{4}", digits)
        assert adjective.isupper() and "Not found" in item.instruction and item.abstain_phrases == ("not found",)
    plain = generate_passkey(random.Random(0), PasskeySpec())
    assert "Not found" not in plain.instruction and plain.abstain_phrases == ()


def test_passkey_empty_range_is_a_needlec_error() -> None:
    with pytest.raises(NeedlecError, match="range is empty"):
        generate_passkey(random.Random(0), PasskeySpec(low=5, high=4))


# --- placement helper and task table --------------------------------------------------------------


def test_spaced_depths_keep_the_minimum_gap() -> None:
    for seed in range(200):
        depths = spaced_depths(random.Random(seed), 5, 12.5)
        assert len(depths) == 5 and depths[0] >= 0 and depths[-1] <= 100
        assert all(b - a >= 12.5 - 1e-9 for a, b in itertools.pairwise(depths))
    with pytest.raises(RulerGenerationError, match="do not fit"):
        spaced_depths(random.Random(0), 5, 30)


def test_task_table() -> None:
    assert len(TASKS) == 13
    assert len({t.name for t in TASKS}) == 13
    budgets = {t.category: t.max_new_tokens for t in TASKS}
    assert budgets == {"niah": 128, "vt": 30, "cwe": 120, "fwe": 50, "qa": 32}
    mq = task("niah_multiquery").generator
    assert isinstance(mq, KeyValueSpec) and (mq.num_keys, mq.num_queries) == (4, 4)
    assert {t.metric for t in TASKS if t.category == "qa"} == {"string_match_part"}


# --- determinism ----------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[random.Random], object]] = {
    "keyvalue": lambda rng: generate_keyvalue(rng, KeyValueSpec("words", "numbers", num_keys=4), num_filler=20),
    "vt": lambda rng: generate_variable_tracking(rng, VariableSpec(num_chains=2)),
    "cwe": lambda rng: generate_common_words(rng, CommonWordsSpec(), num_uncommon=50),
    "fwe": lambda rng: generate_frequent_words(rng, FrequentWordsSpec(), num_words=2000, vocab_size=80),
    "qa_1": lambda rng: draw_qa(rng, "qa_1"),
    "qa_2": lambda rng: draw_qa(rng, "qa_2"),
    "passkey": lambda rng: generate_passkey(rng, PasskeySpec(kind="pattern")),
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_output_different_seed_differs(name: str) -> None:
    make = GENERATORS[name]
    state = random.getstate()
    assert make(random.Random(42)) == make(random.Random(42))
    assert make(random.Random(42)) != make(random.Random(43))
    assert random.getstate() == state  # global random state untouched


def test_an_edited_wordlist_is_refused(tmp_path: Path) -> None:
    entry = json.loads((WORDLIST_DIR / "manifest.json").read_text(encoding="utf-8"))["lists"]["nouns"]
    original = (WORDLIST_DIR / "nouns.txt").read_bytes()
    assert len(wordlists.verify_wordlist(original, entry)) == entry["count"]
    edited = tmp_path / "nouns.txt"
    edited.write_bytes(original.replace(b"\nzebra\n", b"\nzebu\n"))
    assert edited.read_bytes() != original
    with pytest.raises(NeedlecError, match="sha256"):
        wordlists.verify_wordlist(edited.read_bytes(), entry)
