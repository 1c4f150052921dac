"""`choice` and `circular` on ATC-style options: a response that names one option is judged on that
option; a response that names two or more (a hedge) is wrong even when one of them is right.

The hand-written responses carry hand-written expected scores. The property tests build responses
from frames and connectors whose meaning is known by construction (one letter said, or several),
so the expected score follows from the construction, not from the metric.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.registry import METRICS
from needlec.scoring import metrics as _metrics  # noqa: F401

EN_NAMES = ("Jasmine Lane", "Omar Haddad", "Priya Nair", "Tomasz Wolski")
ZH_NAMES = ("周雨桐", "陈建国", "林晓梅", "赵志强")
LETTERS = "ABCD"


def item(names: tuple[str, ...], right: str) -> dict[str, Any]:
    """An item as a compiled ATC multiple-choice item carries it: options, right letter, answer."""
    return {
        "options": [{"letter": letter, "text": text} for letter, text in zip(LETTERS, names, strict=True)],
        "answer_letter": right,
        "answers": [[names[LETTERS.index(right)]]],
        "group": {"id": "s3-q", "rotation": 0, "size": 4},
    }


def score(metric: str, response: str, it: dict[str, Any]) -> float:
    component = METRICS.get(metric)
    result: float = component.factory(component.config.model_validate({"metric": metric}), response, it)[0]
    return result


# ------------------------------------------------------------------------------------------- by hand

# right option C (Priya Nair)
EN_C = [
    ("C", 1.0),
    ("Answer: C", 1.0),
    ("The answer is (C).", 1.0),
    ("**C**", 1.0),
    ("C. Priya Nair", 1.0),
    ("(C) Priya Nair", 1.0),
    ("Priya Nair", 1.0),
    ("I think it is C.", 1.0),
    ("A careful reading of the facts gives C.", 1.0),
    ("C is the eldest ancestor.", 1.0),
    ("Answer: Ｃ", 1.0),
    ("The answer is: C", 1.0),
    ("B or C", 0.0),
    ("C or D", 0.0),
    ("B/C", 0.0),
    ("either A or C", 0.0),
    ("A or C", 0.0),
    ("A and C", 0.0),
    ("(B) or (C)", 0.0),
    ("C, or possibly D", 0.0),
    ("Answer: B or C", 0.0),
    ("C and D are both possible.", 0.0),
    ("Omar Haddad or Priya Nair", 0.0),
    ("C. Priya Nair, unless it is Tomasz Wolski", 0.0),
    ("A, B, C or D", 0.0),
    ("B", 0.0),
    ("A is the answer.", 0.0),
    ("Answer: D", 0.0),
    ("", 0.0),
    ("I do not know.", 0.0),
]
# right option A (Jasmine Lane): the letter that is also an English word
EN_A = [
    ("A", 1.0),
    ("Answer: A", 1.0),
    ("A is right.", 1.0),
    ("A. Jasmine Lane", 1.0),
    ("A good look at the chain gives A.", 1.0),
    ("A or D", 0.0),
    ("either A or D", 0.0),
    ("A and B", 0.0),
    ("A nor B", 0.0),
    ("A good look at the chain gives B.", 0.0),
]
# right option B (陈建国)
ZH_B = [
    ("答案是B", 1.0),
    ("答案：B", 1.0),
    ("答案是（B）。", 1.0),
    ("答案是Ｂ", 1.0),
    ("B. 陈建国", 1.0),
    ("**B**", 1.0),
    ("我选B。", 1.0),
    ("陈建国", 1.0),
    ("最年长的长辈是陈建国。", 1.0),
    ("B 或 C", 0.0),
    ("B或C", 0.0),
    ("B、C", 0.0),
    ("B和C", 0.0),
    ("答案是B或者C", 0.0),
    ("可能是A，也可能是B。", 0.0),
    ("B/C", 0.0),
    ("陈建国或林晓梅", 0.0),
    ("答案是C", 0.0),
    ("不知道", 0.0),
]


@pytest.mark.parametrize("metric", ["choice", "circular"])
@pytest.mark.parametrize(("response", "expected"), EN_C)
def test_english_responses_right_c(metric: str, response: str, expected: float) -> None:
    assert score(metric, response, item(EN_NAMES, "C")) == expected


@pytest.mark.parametrize("metric", ["choice", "circular"])
@pytest.mark.parametrize(("response", "expected"), EN_A)
def test_english_responses_right_a(metric: str, response: str, expected: float) -> None:
    assert score(metric, response, item(EN_NAMES, "A")) == expected


@pytest.mark.parametrize("metric", ["choice", "circular"])
@pytest.mark.parametrize(("response", "expected"), ZH_B)
def test_chinese_responses_right_b(metric: str, response: str, expected: float) -> None:
    assert score(metric, response, item(ZH_NAMES, "B")) == expected


# The scoring of the shipped ATC multiple-choice specs: the answer line (else the last line) is judged,
# so reasoning that names several people before it does not count as a hedge.
SHIPPED = {"metric": "circular", "extract": ["answer_line", "last_line"]}
SHIPPED_CASES = [
    ("Omar Haddad is Tomasz Wolski's father, and Priya Nair is Omar Haddad's mother.\nAnswer: C", "en", 1.0),
    ("Omar Haddad is Tomasz Wolski's father, and Priya Nair is Omar Haddad's mother.\nAnswer: B or C", "en", 0.0),
    ("The chain goes up to Priya Nair.\nThe answer is: (C)", "en", 1.0),
    ("The chain goes up to Priya Nair.\nThe answer is: C/D", "en", 0.0),
    ("Answer: either A or C", "en", 0.0),
    ("推理：陈建国是赵志强的父亲，林晓梅是陈建国的母亲。\n答案：C", "zh", 1.0),
    ("推理：陈建国是赵志强的父亲，林晓梅是陈建国的母亲。\n答案：B 或 C", "zh", 0.0),
    ("推理：一直往上找。\n答案：C、D", "zh", 0.0),
]


@pytest.mark.parametrize(("response", "lang", "expected"), SHIPPED_CASES)
def test_shipped_atc_scoring(response: str, lang: str, expected: float) -> None:
    names = EN_NAMES if lang == "en" else ZH_NAMES
    component = METRICS.get("circular")
    got, _ = component.factory(component.config.model_validate(SHIPPED), response, item(names, "C"))
    assert got == expected


def test_the_metric_version_is_bumped() -> None:
    # version 1 credited "B or C"; items compiled with it must not be scored by the new rule silently
    for name in ("choice", "circular"):
        component = METRICS.get(name)
        assert component.config.model_validate({"metric": name}).model_dump()["version"] == 2


# ------------------------------------------------------------------------------------------- by property

# Frames that name exactly the option put in `{x}` and no other capital letter standing alone.
EN_FRAMES = (
    "{x}",
    "Answer: {x}",
    "The answer is ({x}).",
    "The answer is: {x}",
    "**{x}**",
    "I would say {x}.",
    "My choice: {x}",
    "Reasoning: the facts lead up the line.\nAnswer: {x}",
)
ZH_FRAMES = ("{x}", "答案是{x}", "答案：{x}", "答案是（{x}）。", "我选{x}。", "推理：沿着事实往上找。\n答案：{x}")
EN_JOINERS = (" or ", "/", " and ", ", ", " or maybe ", ", or ", " nor ", " vs ")
ZH_JOINERS = (" 或 ", "或", "、", "和", "或者", "，也可能是")
# How one option is said: its letter, the letter in brackets, the letter then the option's text, or the text.
FORMS = st.sampled_from(["letter", "bracket", "letter_text", "text"])


def say(form: str, letter: str, names: tuple[str, ...]) -> str:
    text = names[LETTERS.index(letter)]
    return {"letter": letter, "bracket": f"({letter})", "letter_text": f"{letter}. {text}", "text": text}[form]


@settings(max_examples=300, deadline=None)
@given(
    lang=st.sampled_from(["en", "zh"]),
    right=st.sampled_from(LETTERS),
    said=st.sampled_from(LETTERS),
    form=FORMS,
    frame=st.integers(0, 100),
    metric=st.sampled_from(["choice", "circular"]),
)
def test_one_option_scores_by_whether_it_is_right(
    lang: str, right: str, said: str, form: str, frame: int, metric: str
) -> None:
    names, frames = (EN_NAMES, EN_FRAMES) if lang == "en" else (ZH_NAMES, ZH_FRAMES)
    response = frames[frame % len(frames)].replace("{x}", say(form, said, names))
    assert score(metric, response, item(names, right)) == (1.0 if said == right else 0.0)


@settings(max_examples=300, deadline=None)
@given(
    lang=st.sampled_from(["en", "zh"]),
    right=st.sampled_from(LETTERS),
    others=st.lists(st.sampled_from(LETTERS), min_size=1, max_size=3, unique=True),
    forms=st.lists(FORMS, min_size=4, max_size=4),
    joiner=st.integers(0, 100),
    frame=st.integers(0, 100),
    either=st.booleans(),
    right_first=st.booleans(),
    metric=st.sampled_from(["choice", "circular"]),
)
def test_a_hedge_is_wrong_even_when_it_holds_the_right_option(
    lang: str,
    right: str,
    others: list[str],
    forms: list[str],
    joiner: int,
    frame: int,
    either: bool,
    right_first: bool,
    metric: str,
) -> None:
    wrong = [letter for letter in others if letter != right]
    if not wrong:
        wrong = [LETTERS[(LETTERS.index(right) + 1) % 4]]
    said = [right, *wrong] if right_first else [*wrong, right]
    names, frames, joiners = (EN_NAMES, EN_FRAMES, EN_JOINERS) if lang == "en" else (ZH_NAMES, ZH_FRAMES, ZH_JOINERS)
    glue = joiners[joiner % len(joiners)]
    hedge = glue.join(say(form, letter, names) for form, letter in zip(forms, said, strict=False))
    if either and lang == "en":
        hedge = f"either {hedge}"
    response = frames[frame % len(frames)].replace("{x}", hedge)
    assert score(metric, response, item(names, right)) == 0.0
