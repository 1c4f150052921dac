"""The shipped ATC specs compile to graphs of the declared shape, checked by code written here.

Each item's `structure` lists its people and kinship edges; the checks below rebuild the graph
from those lists alone (no needlec graph code) and test: the needle sentences name the people of
their edges; the graph is acyclic and connected; a chain is one line, a tree has one parent per
person and a branch that leaves the question's proof path, a DAG has a person on the proof path
with two parents; the proof path walks from the subject to the answer, and the answer is the only
one a graph search finds. For `atc-v2.yaml`, whose questions are about the chain's ends, the proof
spans every one of the N facts at every N.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.compile.plan import load_plan
from needlec.kinds.atc.graph import GraphParams, NameSampler, generate
from needlec.languages.kinship import load_pack
from needlec.scoring.dataset import iter_items

ROOT = Path(__file__).resolve().parents[1]
ATC = ROOT / "specs" / "atc"
QUESTIONS = ("eldest_ancestor", "nth_ancestor", "nth_descendant", "distance")


def compiled(tmp: Path, spec: str, configs: set[str]) -> list[dict[str, Any]]:
    out = tmp / spec
    compile_spec(ATC / f"{spec}.yaml", out, CompileOptions(progress=False, select={"config": configs}))
    items = list(iter_items(out))
    assert {i["config"] for i in items} == configs
    return items


class Family:
    """A graph rebuilt from an item's `structure`: parents and children with generation gaps."""

    def __init__(self, s: dict[str, Any]) -> None:
        self.name = {p["id"]: p["name"] for p in s["people"]}
        self.edges = {e["id"]: (e["elder"], e["younger"], e["generations"]) for e in s["edges"]}
        self.parents: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self.children: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for elder, younger, gens in self.edges.values():
            self.parents[younger].append((elder, gens))
            self.children[elder].append((younger, gens))

    def acyclic(self) -> bool:
        indegree = {p: len(self.parents[p]) for p in self.name}
        ready = [p for p, d in indegree.items() if d == 0]
        seen = 0
        while ready:
            person = ready.pop()
            seen += 1
            for child, _ in self.children[person]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    ready.append(child)
        return seen == len(self.name)

    def connected(self) -> bool:
        start = next(iter(self.name))
        seen, todo = {start}, [start]
        while todo:
            person = todo.pop()
            for other, _ in [*self.parents[person], *self.children[person]]:
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        return seen == set(self.name)

    def walks(self, start: str, upward: bool) -> Iterator[tuple[str, int, tuple[str, ...]]]:
        """Every (person, generations, people passed) reachable from `start` in one direction."""
        stack: list[tuple[str, int, tuple[str, ...]]] = [(start, 0, (start,))]
        while stack:
            person, gens, trail = stack.pop()
            for other, step in self.parents[person] if upward else self.children[person]:
                yield other, gens + step, (*trail, other)
                stack.append((other, gens + step, (*trail, other)))


def proof_people(family: Family, s: dict[str, Any]) -> list[str]:
    """The people the proof path passes, from the subject on; asserts each edge continues the walk."""
    q = s["question"]
    upward = q["type"] != "nth_descendant"
    current, passed = q["subject"], [q["subject"]]
    for edge_id in q["proof"]:
        elder, younger, _ = family.edges[edge_id]
        assert (younger if upward else elder) == current, edge_id
        current = elder if upward else younger
        passed.append(current)
    return passed


def check_question(family: Family, s: dict[str, Any]) -> list[str]:
    """Solve the question by search over the rebuilt graph; return the proof's people."""
    q = s["question"]
    passed = proof_people(family, s)
    reached = list(family.walks(q["subject"], q["type"] != "nth_descendant"))
    if q["type"] == "eldest_ancestor":
        top = max(g for _, g, _ in reached)
        assert {p for p, g, _ in reached if g == top} == {q["answer"]} == {passed[-1]}
    elif q["type"] in ("nth_ancestor", "nth_descendant"):
        assert {p for p, g, _ in reached if g == q["n"]} == {q["answer"]} == {passed[-1]}
    else:
        assert {g for p, g, _ in reached if p == q["other"]} == {int(q["answer"])}
        assert passed[-1] == q["other"]
    target = passed[-1]
    assert [t for p, _, t in reached if p == target] == [tuple(passed)]  # one path only: the proof
    return passed


def check_item(item: dict[str, Any], topology: str) -> None:
    s = item["structure"]
    family = Family(s)
    assert len(family.edges) == len(item["needles"]) == s["steps"]
    for needle, edge_id in zip(item["needles"], s["needle_ids"], strict=True):
        elder, younger, _ = family.edges[edge_id]
        assert family.name[elder] in needle["text"] and family.name[younger] in needle["text"]
    assert item["answers"] == [[s["answer_text"]]]
    check_graph(s, topology, item["id"])


def check_graph(s: dict[str, Any], topology: str, where: str) -> None:
    """The graph of one structure has the declared shape, on the whole and on the proof path."""
    family = Family(s)
    assert s["topology"] == topology
    assert family.acyclic() and family.connected()
    passed = check_question(family, s)
    on_path = set(passed)
    q = s["question"]
    upward = q["type"] != "nth_descendant"
    top, lowest = (passed[-1], passed[0]) if upward else (passed[0], passed[-1])
    most_parents = max(len(v) for v in family.parents.values())
    if topology == "chain":
        assert most_parents == 1 and max(len(v) for v in family.children.values()) == 1
    elif topology == "tree":
        assert most_parents == 1
        assert len(family.name) == len(family.edges) + 1
        # a branch leaves the path: someone on it, above its lowest person, has a child off it
        assert any(child not in on_path for p in on_path if p != lowest for child, _ in family.children[p]), where
    else:
        # someone on the path, below its top, has a second parent off the path
        assert any(len(family.parents[p]) == 2 for p in on_path if p != top), where


# ------------------------------------------------------------------------------------------- atc-v2


@pytest.fixture(scope="module")
def v2_items(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return compiled(tmp_path_factory.mktemp("v2"), "atc-v2", {f"{q}-end" for q in QUESTIONS})


def test_v2_questions_need_every_fact(v2_items: list[dict[str, Any]]) -> None:
    steps = set()
    for item in v2_items:
        s = item["structure"]
        n = len(item["needles"])
        steps.add(n)
        proof = s["question"]["proof"]
        assert len(proof) == n == s["steps"], item["id"]
        assert sorted(proof) == sorted(s["needle_ids"])
        check_item(item, "chain")
    assert steps == {2, 4, 8, 16, 32, 64, 128, 256, 512}
    assert len(v2_items) == 4 * 9 * 10


def test_v2_keeps_the_sampled_subject_as_a_named_variant() -> None:
    plan = load_plan(ATC / "atc-v2.yaml")
    subjects = {c.name: c.spec.needle.subject for c in plan.configs}  # type: ignore[union-attr]
    assert subjects == {f"{q}-{s}": s for q in QUESTIONS for s in ("end", "sampled")}


# ------------------------------------------------------------------------------------------- trees and DAGs


@pytest.mark.parametrize("topology", ["tree", "dag"])
def test_multiple_choice_graphs_have_their_shape(tmp_path: Path, topology: str) -> None:
    items = compiled(tmp_path, f"atc-{topology}-mc", {"direct-en", "reasoning-zh"})
    assert len(items) == 2 * 16 * 10 * 4
    assert {i["structure"]["steps"] for i in items} == set(range(3, 19))
    for item in items:
        check_item(item, topology)
        s = item["structure"]
        # the question is about the main line's ends, as in atc-v1-mc
        assert s["question"]["subject"] == s["chain"][-1] and s["question"]["answer"] == s["chain"][0]
        assert item["answer_letter"] in "ABCD" and s["score_step"] == s["steps"]


@pytest.mark.parametrize("topology", ["tree", "dag"])
def test_open_graphs_have_their_shape(tmp_path: Path, topology: str) -> None:
    items = compiled(tmp_path, f"atc-{topology}-open", set(QUESTIONS))
    assert len(items) == 4 * 8 * 10
    for item in items:
        check_item(item, topology)
        s = item["structure"]
        assert s["question"]["subject"] == (s["chain"][0] if item["config"] == "nth_descendant" else s["chain"][-1])
        assert len(s["question"]["proof"]) == len(s["chain"]) - 1


@pytest.mark.parametrize("topology", ["tree", "dag"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_sampled_questions_walk_the_shape(topology: str, question: str) -> None:
    # with the subject drawn anywhere in the graph, the proof path still shows the shape
    pack = load_pack("en")
    for seed in range(40):
        rng = random.Random(seed)
        steps = rng.choice([3, 4, 5, 6, 9, 14, 30, 70])
        params = GraphParams(steps=steps, topology=topology, question=question, subject="sampled")  # type: ignore[arg-type]
        graph = generate(params, pack, rng, NameSampler(pack.names, rng))
        check_graph(graph.to_structure(), topology, f"seed {seed}")
