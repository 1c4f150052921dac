"""The `atc` needle kind compiled by the real pipeline, checked by an independent reading of its items.

For every compiled item the needle sentences are parsed back with regular expressions built here
from the language pack's data files (templates and term lists, read as plain JSON), the family graph
is rebuilt from those parses alone, the question is parsed from its template, and a graph search
written here finds the answer and its path. They must equal what the item records. Rotations,
options, names and the needles-alone length mode are checked on the same items.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
PACKS = ROOT / "src" / "needlec" / "languages" / "kinship"

HEAD = """\
name: atckind
title: ATC kind
family: atc
tokenizers: [cl100k_base]
scoring: {metric: circular}
prompt:
  user: "{% if few_shot %}{{ few_shot }}\\n\\n{% endif %}{{ context }}\\n\\n{{ question }}"
"""

ALONE = """\
haystack: {sources: [{type: builtin, corpus: udhr-en}]}
grid: {lengths: [1], depths: [0], repeats: 2}
length: {counted: needles}
"""


def _compile(tmp_path: Path, body: str) -> list[dict[str, Any]]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEAD + body, encoding="utf-8")
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False, verify=True))
    rows = []
    for path in sorted((out / "data").rglob("*.jsonl")):
        rows += [json.loads(line) for line in path.open(encoding="utf-8")]
    assert rows
    return rows


# ---------------------------------------------------------------------------------------------
# the independent reader


class Reader:
    """Regular expressions for one language, built from the pack's JSON data alone."""

    def __init__(self, language: str) -> None:
        data = json.loads((PACKS / f"{language}.json").read_text(encoding="utf-8"))
        self.up = {t["text"]: t["generations"] for t in data["ancestor_terms"]}
        self.down = {t["text"]: t["generations"] for t in data["descendant_terms"]}
        # (pattern, direction, literal characters): a sentence that fits several templates is read
        # through the most specific one ("Old letters confirm that A's ..." before "A's ...")
        self.sentences = [
            (self._regex(t["text"], terms), direction, len(re.sub(r"\{\w+\}", "", t["text"])))
            for key, direction, terms in (
                ("ancestor_templates", "up", self.up),
                ("descendant_templates", "down", self.down),
            )
            for t in data[key]
        ]
        self.questions = {kind: self._regex(text, {}) for kind, text in data["questions"].items()}

    @staticmethod
    def _regex(template: str, terms: dict[str, int]) -> re.Pattern[str]:
        alternatives = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
        slots = {
            "elder": r"(?P<elder>.+?)",
            "younger": r"(?P<younger>.+?)",
            "term": f"(?P<term>{alternatives})",
            "inverse": f"(?P<term>{alternatives})",
            "subject": r"(?P<subject>.+?)",
            "n": r"(?P<n>\d+)",
            "other": r"(?P<other>.+?)",
        }
        parts = re.split(r"(\{\w+\})", template)
        return re.compile("".join(slots[p[1:-1]] if re.fullmatch(r"\{\w+\}", p) else re.escape(p) for p in parts))

    def fact(self, sentence: str) -> tuple[str, str, int]:
        """(elder, younger, generations) of one sentence; every template that matches must agree."""
        found: dict[int, set[tuple[str, str, int]]] = defaultdict(set)
        for pattern, direction, literal in self.sentences:
            m = pattern.fullmatch(sentence)
            if m:
                terms = self.up if direction == "up" else self.down
                found[literal].add((m["elder"], m["younger"], terms[m["term"]]))
        assert found, f"no template reads {sentence!r}"
        best = found[max(found)]
        assert len(best) == 1, f"{sentence!r} reads as {best}"
        return best.pop()

    def question(self, text: str) -> tuple[str, dict[str, str]]:
        """The question type and its slots, read from the first line that matches a question template."""
        for line in text.splitlines():
            for kind, pattern in self.questions.items():
                m = pattern.fullmatch(line.strip())
                if m:
                    return kind, m.groupdict()
        raise AssertionError(f"no question template matches {text!r}")


def solve(facts: list[tuple[str, str, int]], kind: str, slots: dict[str, str]) -> tuple[str, list[int]]:
    """The answer and the path (sentence indexes from the subject on) by depth-first search."""
    up: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    down: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for i, (elder, younger, gens) in enumerate(facts):
        up[younger].append((i, elder, gens))
        down[elder].append((i, younger, gens))
    step = down if kind == "nth_descendant" else up
    routes: dict[str, list[tuple[int, list[int]]]] = defaultdict(list)  # person -> (distance, path) per route
    stack: list[tuple[str, int, list[int]]] = [(slots["subject"], 0, [])]
    while stack:
        person, dist, path = stack.pop()
        for i, nxt, gens in step[person]:
            routes[nxt].append((dist + gens, [*path, i]))
            stack.append((nxt, dist + gens, [*path, i]))
    if kind == "eldest_ancestor":
        top = max(d for r in routes.values() for d, _ in r)
        winners = [p for p, r in routes.items() if any(d == top for d, _ in r)]
    elif kind in ("nth_ancestor", "nth_descendant"):
        winners = [p for p, r in routes.items() if any(d == int(slots["n"]) for d, _ in r)]
    else:
        (only,) = routes[slots["other"]]
        return str(only[0]), only[1]
    assert len(winners) == 1, f"{len(winners)} people answer the question"
    (route,) = routes[winners[0]]  # one path only
    return winners[0], route[1]


def check_item(row: dict[str, Any], reader: Reader) -> None:
    texts = [n["text"] for n in row["needles"] if n["role"] == "target"]
    facts = [reader.fact(t) for t in texts]
    structure = row["structure"]
    # the rebuilt graph has the recorded people, and no name repeats among them
    names = {name for elder, younger, _ in facts for name in (elder, younger)}
    people = [p["name"] for p in structure["people"]]
    assert len(set(people)) == len(people) == len(names)
    assert names == set(people)
    assert not names & set(structure["few_shot_names"])
    kind, slots = reader.question(row["question"])
    assert kind == structure["question"]["type"]
    answer, path = solve(facts, kind, slots)
    assert answer == structure["answer_text"]
    # the recorded proof (edge ids) names the same sentences, in the same order
    position = {edge_id: i for i, edge_id in enumerate(structure["needle_ids"])}
    assert [position[e] for e in structure["question"]["proof"]] == path
    span = row["context_span"]
    context = row["messages"][span["message"]]["content"][span["start"] : span["end"]]
    assert all(t in context for t in texts)
    if row.get("options"):
        shown = {o["letter"]: o["text"] for o in row["options"]}
        assert shown[row["answer_letter"]] == answer
        assert len(set(shown.values())) == 4
        distractors = set(shown.values()) - {answer}
        policy = structure["option_policy"]
        if policy == "absent":
            assert not distractors & names
            assert not any(d in context for d in distractors)
        elif kind != "distance":
            # people of the graph while there are enough of them, then names found nowhere in the item
            others = len(names) - (2 if policy == "graph_random" else 1)
            assert len(distractors & names) == min(3, others)
            assert not any(d in context for d in distractors - names)
            if policy == "graph_random":
                assert slots["subject"] not in distractors
    else:
        assert row["answers"] == [[answer]]
        assert "\\boxed{}" in row["question"]


def check_groups(rows: list[dict[str, Any]]) -> int:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["group"]["id"]].append(row)
    for members in groups.values():
        assert sorted(m["group"]["rotation"] for m in members) == [0, 1, 2, 3]
        assert {m["group"]["size"] for m in members} == {4}
        assert len({m["answer_letter"] for m in members}) == 4
        assert len({tuple(n["text"] for n in m["needles"]) for m in members}) == 1  # one graph, one draw
        assert len({json.dumps(m["structure"]["people"]) for m in members}) == 1
        # each rotation shifts the options of the one before by one place
        first = [o["text"] for o in members[0]["options"]]
        for m in members:
            r = m["group"]["rotation"]
            assert [o["text"] for o in m["options"]] == first[r:] + first[:r]
    return len(groups)


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "zh"])
def test_multiple_choice_alone_rebuilds_every_answer(tmp_path: Path, language: str) -> None:
    joiner = '" "' if language == "en" else '""'
    rows = _compile(
        tmp_path,
        ALONE
        + f"""\
needle: {{type: atc, language: {language}, steps: [1, 3, 7], shots: 2, shot_style: reasoning,
         subject: end, step_label: v1_people}}
placement: {{joiner: {joiner}}}
""",
    )
    reader = Reader(language)
    assert len(rows) == 3 * 4 * 2
    for row in rows:
        check_item(row, reader)
        s = row["structure"]
        assert s["score_step"] == s["steps"] + 1 == len(row["needles"]) + 1
        assert row["scoring"]["metric"] == "circular"
        assert row["task"] == "atc"
        # needles alone: the context is exactly the joined facts, and its length is what they measure
        joined = ("" if language == "zh" else " ").join(n["text"] for n in row["needles"])
        span = row["context_span"]
        assert row["messages"][span["message"]]["content"][span["start"] : span["end"]] == joined
        assert row["length_counted"] == "needles"
        assert row["context_length"] == row["context_tokens"]
        assert row["haystack"]["start_char"] == row["haystack"]["end_char"] == 0
        # the two solved examples come before the facts
        assert row["messages"][0]["content"].index(row["values"]["few_shot"]) < span["start"]
    assert check_groups(rows) == 3 * 2


@pytest.mark.parametrize(
    ("topology", "question"),
    [("tree", "nth_ancestor"), ("dag", "nth_descendant"), ("dag", "distance"), ("tree", "eldest_ancestor")],
)
def test_open_questions_on_trees_and_dags(tmp_path: Path, topology: str, question: str) -> None:
    rows = _compile(
        tmp_path,
        ALONE
        + f"""\
needle: {{type: atc, topology: {topology}, question: {question}, answer_format: open, steps: [6, 12, 30],
         order: ordered}}
""",
    )
    reader = Reader("en")
    assert len(rows) == 3 * 2
    for row in rows:
        check_item(row, reader)
        assert row.get("group") is None
        assert row["scoring"]["metric"] == "final_answer"
        assert row["scoring"]["extract"] == ["boxed"]


def test_in_a_haystack_with_random_depths_and_absent_distractors(tmp_path: Path) -> None:
    rows = _compile(
        tmp_path,
        """\
haystack: {sources: [{type: builtin, corpus: web-bible}]}
grid: {lengths: [1500, 3000], depths: [0], repeats: 1}
needle: {type: atc, steps: [4, 9], distractors: absent}
placement:
  multi: {random: {low: 0, high: 100, min_gap: 2}}
  depth_tolerance: 100
""",
    )
    reader = Reader("en")
    assert len(rows) == 2 * 2 * 4
    for row in rows:
        check_item(row, reader)
        assert row["length_counted"] == "context"
        assert row["context_tokens"] == row["context_length"] in (1500, 3000)
    assert check_groups(rows) == 4


def test_graph_random_options_never_show_the_subject(tmp_path: Path) -> None:
    rows = _compile(
        tmp_path, ALONE + "needle: {type: atc, topology: tree, steps: [10, 20], distractors: graph_random}\n"
    )
    reader = Reader("en")
    for row in rows:
        check_item(row, reader)
    assert check_groups(rows) == 4


def test_needles_alone_needs_a_single_length_label(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        HEAD
        + """\
haystack: {sources: [{type: builtin, corpus: udhr-en}]}
grid: {lengths: [1, 2], depths: [0]}
length: {counted: needles}
needle: {type: atc, steps: [2]}
""",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as caught:
        compile_spec(spec, tmp_path / "out", CompileOptions(progress=False))
    text = caught.value.render()
    assert "exactly one value" in text and "grid.lengths" in text and "spec.yaml:" in text
