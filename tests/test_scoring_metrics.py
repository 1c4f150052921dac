"""Each metric on hand-made responses, including the adversarial cases the old substring test failed."""

from __future__ import annotations

from typing import Any

import pytest

from needlec.registry import METRICS
from needlec.scoring import metrics as _metrics  # noqa: F401
from needlec.scoring.metrics.needlebench import levenshtein
from needlec.scoring.normalize import find_word, normalize, resolve


def judge(config: dict[str, Any], response: str, **item: Any) -> float:
    component = METRICS.get(config["metric"])
    score, _ = component.factory(component.config.model_validate(config), response, item)
    return score


C = {"metric": "contains"}


@pytest.mark.parametrize(
    ("name", "response"),
    [
        ("Esi", "Actually, Noah lives beside the Atomium."),
        ("Noa", "The character is Noah."),
        ("Radu", "The tram climbed gradually up the hill."),
        ("Lars", "She lives near the pillars of the bridge."),
    ],
)
def test_name_inside_another_word_is_not_found(name: str, response: str) -> None:
    assert judge(C, response, answers=[[name]]) == 0.0


@pytest.mark.parametrize("response", ["Esi.", "It is Esi", "esi", "(Esi)", "«Esi»", "The answer: ESI!", "Esi's house"])
def test_name_as_a_word_is_found(response: str) -> None:
    assert judge(C, response, answers=[["Esi"]]) == 1.0


def test_aliases_any_spelling() -> None:
    answers = [["Dong-hyun", "Donghyun", "Dong Hyun"]]
    for response in ("Dong-hyun", "It was donghyun.", "DONG HYUN", "Dong–hyun"):
        assert judge(C, response, answers=answers) == 1.0, response
    assert judge(C, "Dong", answers=answers) == 0.0


def test_cjk_without_spaces_matches_inside_a_sentence() -> None:
    assert judge(C, "答案是小明去过东京两次。", answers=[["东京"]]) == 1.0
    assert judge(C, "答案是京都。", answers=[["东京"]]) == 0.0
    assert judge(C, "คำตอบคือกรุงเทพมหานคร", answers=[["กรุงเทพ"]]) == 1.0


def test_hindi_and_arabic_punctuation_are_boundaries() -> None:
    assert judge(C, "उत्तर राम है।", answers=[["राम"]]) == 1.0
    assert judge(C, "उत्तर रामा है।", answers=[["राम"]]) == 0.0  # a vowel sign continues the word
    assert judge(C, "هل هو سامي؟", answers=[["سامي"]]) == 1.0
    assert judge(C, "هل هو سامية؟", answers=[["سامي"]]) == 0.0


def test_whole_word_can_be_switched_off() -> None:
    assert judge({"metric": "contains", "whole_word": False}, "beside", answers=[["Esi"]]) == 1.0


def test_contains_all_and_all_of() -> None:
    answers = [["roasted chestnuts"], ["smoked paprika"], ["heather honey"]]
    response = "Roasted chestnuts and smoked paprika."
    assert judge({"metric": "contains_all"}, response, answers=answers) == pytest.approx(2 / 3)
    assert judge({"metric": "all_of"}, response, answers=answers) == 0.0
    assert judge({"metric": "all_of"}, response + " Heather honey too.", answers=answers) == 1.0


def test_old_flat_answers_are_one_alias_each() -> None:
    assert judge({"metric": "contains_all"}, "yellow tram", answers=["yellow tram", "cinnamon"]) == 0.5


def test_exact_and_regex() -> None:
    assert judge({"metric": "exact"}, "  Saffron. ", answers=[["saffron"]]) == 1.0
    assert judge({"metric": "exact"}, "It is saffron", answers=[["saffron"]]) == 0.0
    assert judge({"metric": "regex", "pattern": r"^code: \d{4}$"}, "code: 1234", answers=[["x"]]) == 1.0
    assert judge({"metric": "regex", "pattern": r"is {answer}\b"}, "it is A.B", answers=[["A.B"]]) == 1.0
    assert judge({"metric": "regex", "pattern": r"is {answer}\b"}, "it is AxB", answers=[["A.B"]]) == 0.0


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("The code is 7,504,196.", 1.0),
        ("7504196", 1.0),
        ("7 504 196", 1.0),
        ("code 7504195", 0.0),
        ("75041960", 0.0),
        ("7,504,19", 0.0),
    ],
)
def test_numeric_digit_grouping(response: str, expected: float) -> None:
    assert judge({"metric": "numeric"}, response, answers=[["7504196"]]) == expected


def test_numeric_tolerance_and_pick() -> None:
    assert judge({"metric": "numeric", "abs_tol": 0.5}, "about 3.4", answers=[["3"]]) == 1.0
    assert judge({"metric": "numeric", "rel_tol": 0.01}, "1009", answers=[["1000"]]) == 1.0
    assert judge({"metric": "numeric", "rel_tol": 0.01}, "1011", answers=[["1000"]]) == 0.0
    assert judge({"metric": "numeric", "pick": "only"}, "12 or 13", answers=[["12"]]) == 0.0
    assert judge({"metric": "numeric", "pick": "last"}, "not 12 but 13", answers=[["13"]]) == 1.0


FA = {"metric": "final_answer", "then": {"metric": "contains"}}


def test_final_answer_ignores_names_in_the_reasoning() -> None:
    reasoning = "The Atomium is in Brussels. Yuki lives beside it, and Mateo lives in Kyoto.\nAnswer: Mateo"
    assert judge(FA, reasoning, answers=[["Yuki"]]) == 0.0
    assert judge(C, reasoning, answers=[["Yuki"]]) == 1.0  # why whole-response scoring is wrong here
    assert judge(FA, reasoning.replace("Answer: Mateo", "Answer: Yuki"), answers=[["Yuki"]]) == 1.0


def test_final_answer_extractors() -> None:
    assert judge(FA, r"so it is $\boxed{\text{Yuki}}$ here", answers=[["Yuki"]]) == 1.0
    assert judge(FA, "Yuki? no.\nThe answer is: Mateo", answers=[["Yuki"]]) == 0.0
    assert judge(FA, "Thinking about Yuki...\n\nMateo", answers=[["Mateo"]]) == 1.0
    assert judge(FA, "", answers=[["Mateo"]]) == 0.0


OPTIONS = [{"letter": "A", "text": "Yuki"}, {"letter": "B", "text": "Mateo"}, {"letter": "C", "text": "Ines"}]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("B", 1.0),
        ("(B) Mateo", 1.0),
        ("The answer is B.", 1.0),
        ("Mateo", 1.0),
        ("A, B or C", 0.0),
        ("Yuki, Mateo and Ines are all mentioned", 0.0),
        ("A", 0.0),
        ("A good guess is B", 1.0),
        ("", 0.0),
    ],
)
def test_choice_single_option_only(response: str, expected: float) -> None:
    item = {"options": OPTIONS, "answer_letter": "B", "answers": [["Mateo"]]}
    assert judge({"metric": "choice"}, response, **item) == expected


def test_choice_texts_only_for_name_options() -> None:
    item = {"options": OPTIONS, "answers": [["Mateo"]]}
    assert judge({"metric": "choice", "letters": False}, "I think Mateo.", **item) == 1.0
    assert judge({"metric": "choice", "letters": False}, "Mateo or Yuki", **item) == 0.0


def test_needlebench_keyword_and_levenshtein() -> None:
    item = {"answers": [["Saffron"]], "needles": [{"role": "target", "text": "ab cd"}]}
    cfg = {"metric": "needlebench"}
    assert judge(cfg, "it is Saffron", **item) == 1.0
    assert judge(cfg, "it is saffron", **item) == pytest.approx(0.2 * (1 - levenshtein("itissaffron", "abcd") / 11))
    # "abce" vs "abcd" (whitespace removed): distance 1 over length 4.
    assert judge(cfg, "ab ce", **item) == pytest.approx(0.2 * 0.75)
    assert judge({"metric": "needlebench", "alpha": 0}, "ab ce", **item) == 0.0
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3


def test_existence_yes_no() -> None:
    cfg = {"metric": "existence"}
    assert judge(cfg, "Yes, it does.", expected="yes") == 1.0
    assert judge(cfg, "No. Nothing like that.", expected="no") == 1.0
    assert judge(cfg, "Nobody knows", expected="no") == 0.0
    assert judge(cfg, "没有。", expected="no") == 1.0
    assert judge(cfg, "有", expected="yes") == 1.0


def test_ruler_string_match_is_plain_lowercase_substring() -> None:
    item = {"answers": [["1234"], ["Esi"]]}
    assert judge({"metric": "string_match_all"}, "beside 1234", **item) == 1.0  # substring, as RULER does
    assert judge({"metric": "string_match_part"}, "nothing", **item) == 0.0
    assert judge({"metric": "string_match_part"}, "x\x01ESI", **item) == 1.0


def test_normalisation_steps() -> None:
    assert normalize("  Ｆｕｌｌ-width\tTEXT!! ", resolve("standard")) == "full width text"
    assert normalize("  Ｆｕｌｌ-width\tTEXT!! ", resolve("ruler")) == "  ｆｕｌｌ-width\ttext!! "
    assert find_word("the pillars", "lars") == -1
    assert find_word("lars, pillars", "lars") == 0


def test_version_is_recorded() -> None:
    cfg = METRICS.get("contains").config.model_validate({"metric": "contains"})
    assert cfg.model_dump()["version"] == 2
