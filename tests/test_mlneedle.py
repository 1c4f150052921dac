"""MLNeedle: the aligned needle set, compiled pilot items checked independently, and its scoring.

The item checks re-derive everything from the item text with their own code: gold answers are
searched after NFKC and case folding (whole word where the script separates words with spaces),
passages are re-split and re-numbered, lengths are re-counted with tiktoken, and languages are
read from the characters' scripts.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.languages import mlneedle
from needlec.scoring.aggregates import Scored, balanced_accuracy, mlneedle_effective
from needlec.scoring.api import score_response

ROOT = Path(__file__).resolve().parent.parent
PILOT = ROOT / "specs" / "mlneedle-pilot.yaml"
DATA = ROOT / "src" / "needlec" / "languages" / "mlneedle"
LANGS = ("en", "ar", "de", "es", "hi", "vi", "zh")

# ---------------------------------------------------------------------------------------------
# script detection, written for this test


def script_of(ch: str) -> str | None:
    cp = ord(ch)
    if 0x0600 <= cp <= 0x06FF:
        return "arabic"
    if 0x0900 <= cp <= 0x097F:
        return "devanagari"
    if 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF:
        return "han"
    if ch.isalpha() and (cp < 0x0250 or 0x1E00 <= cp <= 0x1EFF):
        return "latin"
    return None


def main_script(text: str) -> str:
    counts: dict[str, int] = {}
    for ch in text:
        s = script_of(ch)
        if s:
            counts[s] = counts.get(s, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else "none"


EXPECTED_SCRIPT = {
    "en": "latin",
    "de": "latin",
    "es": "latin",
    "vi": "latin",
    "ar": "arabic",
    "hi": "devanagari",
    "zh": "han",
}
VIETNAMESE = set("ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ")


def language_fits(text: str, lang: str) -> bool:
    """Script first; then a few letters only some Latin-script languages use."""
    if main_script(text) != EXPECTED_SCRIPT[lang]:
        return False
    lower = text.lower()
    if lang == "vi":
        return any(ch in VIETNAMESE for ch in lower)
    if lang == "en":
        return not any(ch in VIETNAMESE or ch in "äöüßñ¿¡" for ch in lower)
    return True


# ---------------------------------------------------------------------------------------------
# answer search, written for this test


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def occurs(alias: str, text: str) -> bool:
    a, t = fold(alias), fold(text)
    if main_script(alias) == "han":
        return a in t
    # Chinese has no spaces: a Han character next to the alias is a word boundary
    t = "".join(" " if script_of(ch) == "han" else ch for ch in t)
    return re.search(r"(?<!\w)" + re.escape(a) + r"(?!\w)", t) is not None


# ---------------------------------------------------------------------------------------------
# the needle set


def test_needle_set_is_aligned_and_pinned() -> None:
    data = (DATA / "needles.json").read_bytes()
    pinned = json.loads((DATA / "manifest.json").read_text())["files"]["needles.json"]
    assert hashlib.sha256(data).hexdigest() == pinned
    raw = json.loads(data)
    assert raw["languages"] == list(LANGS)
    assert len(raw["items"]) >= 50  # the issue asks for at least 50 aligned items
    for item in raw["items"]:
        for part in ("passage", "question", "answers"):
            assert sorted(item[part]) == sorted(LANGS), (item["id"], part)
        for lang in LANGS:
            assert language_fits(item["passage"][lang], lang), (item["id"], lang)
            assert language_fits(item["question"][lang], lang), (item["id"], lang)
            assert any(a in item["passage"][lang] for a in item["answers"][lang]), (item["id"], lang)
        assert item["question"]["ar"].endswith("؟") and item["question"]["zh"].endswith("？")
        # a name is given in the language's own script where that script is not Latin
        for lang in ("ar", "hi", "zh"):
            if not item["answers"]["en"][0].isdigit():
                assert any(main_script(a) == EXPECTED_SCRIPT[lang] for a in item["answers"][lang])
    assert mlneedle.load().items[0].id == raw["items"][0]["id"]


def test_answers_are_unique_to_their_item() -> None:
    """No item's answer occurs in another item's passage, so a wrong needle cannot score."""
    items = mlneedle.load().items
    for item in items:
        for other in items:
            if other.id == item.id:
                continue
            for lang in LANGS:
                for alias in item.all_aliases():
                    assert not occurs(alias, other.passage[lang]), (item.id, other.id, lang, alias)


# ---------------------------------------------------------------------------------------------
# compiled pilot items

SELECTED = ["en-en-exact", "zh-hi-existence", "ar-mul-exact", "en-mul-existence", "zh-none-existence", "ar-none-exact"]


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("mlneedle") / "pilot"
    compile_spec(PILOT, out, CompileOptions(select={"config": set(SELECTED)}, progress=False))
    rows = [json.loads(line) for f in sorted((out / "data").rglob("*.jsonl")) for line in f.open()]
    assert {r["config"] for r in rows} == set(SELECTED)
    return rows


def context(row: dict[str, Any]) -> str:
    span = row["context_span"]
    return str(row["messages"][span["message"]]["content"][span["start"] : span["end"]])


def blocks(text: str) -> list[str]:
    return [b for b in text.split("\n\n") if b.strip()]


ALL_ALIASES = sorted({a for item in mlneedle.load().items for a in item.all_aliases()})
BY_ID = {item.id: item for item in mlneedle.load().items}


def test_lengths_are_exact(pilot: list[dict[str, Any]]) -> None:
    enc = tiktoken.get_encoding("o200k_base")
    for row in pilot:
        assert len(enc.encode(context(row), disallowed_special=())) == row["context_length"] == row["context_tokens"]


def test_passages_are_numbered_and_the_needle_sits_at_its_index(pilot: list[dict[str, Any]]) -> None:
    enc = tiktoken.get_encoding("o200k_base")
    for row in pilot:
        text = context(row)
        parts = blocks(text)
        layout = row["structure"]["passages"]
        if layout["baseline"]:
            continue  # one passage alone, no number and no filler: test_baseline_is_one_passage_alone
        numbered = [p for p in parts if re.match(r"\[\d+\] ", p)]
        filler = [p for p in parts if not re.match(r"\[\d+\] ", p)]
        # numbered 0..n-1 in order, then at most one filler block made of the filler only
        assert [int(re.match(r"\[(\d+)\]", p).group(1)) for p in numbered] == list(range(len(numbered)))  # type: ignore[union-attr]
        assert parts[: len(numbered)] == numbered
        assert len(filler) <= 1 and all(set(f.replace(" .", "").strip()) == set() for f in filler)
        assert layout["count"] == len(numbered)
        if not row["needles"]:
            continue
        (needle,) = row["needles"]
        (index,) = layout["needle_index"]
        assert numbered[index] == f"[{index}] " + needle["text"]
        assert text[needle["char_offset"] :].startswith(needle["text"])
        assert len(enc.encode(text[: needle["char_offset"]], disallowed_special=())) == needle["token_offset"]
        n = len(numbered)
        want = {0.0: 0, 50.0: n // 2, 100.0: n - 1}[row["depth_percent"]]
        assert index == want, (row["id"], index, n)


def test_no_gold_answer_outside_the_needle(pilot: list[dict[str, Any]]) -> None:
    for row in pilot:
        text = context(row)
        for needle in row["needles"]:
            start = needle["char_offset"]
            text = text[:start] + " " * len(needle["text"]) + text[start + len(needle["text"]) :]
        found = [a for a in ALL_ALIASES if occurs(a, text)]
        assert not found, (row["id"], found)


def test_negatives_hold_no_needle_and_no_answer(pilot: list[dict[str, Any]]) -> None:
    negatives = [r for r in pilot if r.get("expected") == "no"]
    positives = [r for r in pilot if r.get("expected") == "yes"]
    assert negatives and positives
    for row in negatives:
        item = BY_ID[row["values"]["needle_id"]]
        text = context(row)
        # nothing placed as the target; the baseline's negatives hold another item's passage instead
        assert [n for n in row["needles"] if n["role"] == "target"] == []
        assert row["structure"]["passages"]["needle_index"] == []
        assert len(row["needles"]) == (1 if row["languages"]["haystack"] == "none" else 0)
        assert not any(item.passage[lang] in text for lang in LANGS)
        assert not any(occurs(a, text) for a in item.all_aliases())
    for row in positives:
        assert len(row["needles"]) == 1
    for row in pilot:
        if row["config"].endswith("exact"):
            assert row.get("expected") is None and len(row["needles"]) == 1


def test_baseline_is_one_passage_alone(pilot: list[dict[str, Any]]) -> None:
    """A baseline context is exactly one passage of the needle set: the needle, or for an existence
    negative the other item's passage nearest in length; no filler, and its length is its own."""
    enc = tiktoken.get_encoding("o200k_base")
    baseline = [r for r in pilot if r["languages"]["haystack"] == "none"]
    assert {r["config"] for r in baseline} == {"zh-none-existence", "ar-none-exact"}
    seen_negative = False
    for row in baseline:
        text = context(row)
        lang = row["languages"]["needle"]
        item = BY_ID[row["values"]["needle_id"]]
        assert " ." not in text and "\n" not in text and not text.startswith("[")
        assert row["length_counted"] == "needles"
        assert row["context_tokens"] == row["context_length"] == len(enc.encode(text, disallowed_special=()))
        assert row["structure"]["passages"]["baseline"] is True
        if row.get("expected") == "no":
            seen_negative = True
            # the other item whose passage length (in characters) is nearest the asked item's
            own = len(item.passage[lang])
            others = sorted(
                (abs(len(o.passage[lang]) - own), i, o.id) for i, o in enumerate(BY_ID.values()) if o.id != item.id
            )
            assert text == BY_ID[others[0][2]].passage[lang]
            assert not any(occurs(a, text) for a in item.all_aliases())
            ratio = len(enc.encode(text)) / len(enc.encode(item.passage[lang]))
            assert 0.67 <= ratio <= 1.5, (row["id"], ratio)
        else:
            assert text == item.passage[lang]
            assert row["needles"][0]["char_offset"] == 0 and row["needles"][0]["token_offset"] == 0
    assert seen_negative


def test_recorded_languages_match_the_text(pilot: list[dict[str, Any]]) -> None:
    for row in pilot:
        langs = row["languages"]
        assert language_fits(row["question"], langs["question"])
        for needle in row["needles"]:
            assert needle["language"] == langs["needle"]
            assert language_fits(needle["text"], needle["language"])
        needle_texts = {n["text"] for n in row["needles"]}
        hay = [re.sub(r"^\[\d+\] ", "", p) for p in blocks(context(row)) if p.startswith("[")]
        hay = [p for p in hay if p not in needle_texts]
        if langs["haystack"] == "none":
            assert hay == []
        elif langs["haystack"] == "mul":
            if len(hay) >= 6:
                assert len({main_script(p) for p in hay}) >= 2, row["id"]
        else:
            assert all(main_script(p) == EXPECTED_SCRIPT[langs["haystack"]] for p in hay), row["id"]


# ---------------------------------------------------------------------------------------------
# scoring with synthetic responses, figures computed by hand


def _item(**fields: Any) -> dict[str, Any]:
    base = {
        "id": "x",
        "answers": [["Bumbleroot", "邦布鲁特", "بامبلروت"]],
        "scoring": {"metric": "contains", "version": 2, "normalize": "standard", "whole_word": True},
    }
    return {**base, **fields}


def test_exact_counts_an_answer_in_any_language() -> None:
    item = _item()
    assert score_response(item, "它叫邦布鲁特。")[0] == 1.0
    assert score_response(item, "The ox is BUMBLEROOT.")[0] == 1.0
    assert score_response(item, "اسمه بامبلروت")[0] == 1.0
    assert score_response(item, "I do not know.")[0] == 0.0


def test_existence_balanced_accuracy_by_hand() -> None:
    scoring = {"metric": "existence", "version": 1}
    cases = [("yes", "Yes."), ("yes", "yes, passage 3"), ("yes", "Yes"), ("yes", "No."), ("no", "No"), ("no", "Yes")]
    rows = []
    for expected, response in cases:
        item = _item(expected=expected, scoring=scoring)
        rows.append(Scored(item, score_response(item, response)[0]))
    # yes: 3 of 4 right (75), no: 1 of 2 right (50); balanced = 62.5, plain accuracy 4/6 = 66.7
    got = balanced_accuracy(rows)
    assert got is not None
    assert got["yes_accuracy"] == 75.0 and got["no_accuracy"] == 50.0 and got["balanced_accuracy"] == 62.5


def test_effective_length_against_the_baseline_by_hand() -> None:
    def row(length: int, score: float, baseline: bool, haystack: str = "en") -> Scored:
        item = {
            "task": "mlneedle-exact",
            "context_length": length,
            "languages": {"needle": "zh", "haystack": "none" if baseline else haystack, "question": "en"},
            "structure": {"passages": {"baseline": baseline}},
        }
        return Scored(item, score)

    rows = [row(256, s, True) for s in (1, 1, 1, 0)]  # baseline 75 points, threshold 0.75 x 75 = 56.25
    rows += [row(1000, s, False) for s in (1, 1, 0, 1)]  # 75 >= 56.25
    rows += [row(2000, s, False) for s in (1, 0, 1, 0)]  # 50 < 56.25: fails
    rows += [row(4000, s, False) for s in (1, 1, 1, 1)]  # 100, but after a failure (prefix rule)
    got = mlneedle_effective(rows)
    assert got is not None
    task = got["mlneedle-exact"]
    assert task["baseline"] == 75.0
    assert task["overall"]["threshold"] == 56.25
    assert task["overall"]["effective_length"] == 1000 and task["overall"]["first_failing_length"] == 2000
    (cell,) = task["by_languages"]
    assert (cell["needle"], cell["haystack"], cell["question"], cell["effective_length"]) == ("zh", "en", "en", 1000)
    assert mlneedle_effective([r for r in rows if not r.item["structure"]["passages"]["baseline"]]) is None
