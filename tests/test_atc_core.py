"""ATC kinship generator and renderer, checked by a parser written here from the language packs' data.

The parser reads the JSON data files directly (not through the renderer), turns every sentence
template into a regular expression, rebuilds the family graph from the rendered sentences and answers
the question by its own graph search.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import random
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import pytest

from needlec.kinds.atc.graph import (
    QUESTION_TYPES,
    TOPOLOGIES,
    AtcGraphError,
    Edge,
    GraphParams,
    KinGraph,
    NameSampler,
    Person,
    Question,
    generate,
    verify,
)
from needlec.kinds.atc.render import RenderedItem, render_items
from needlec.languages.kinship import PackIntegrityError, load_pack

DATA = resources.files("needlec.languages.kinship")
LANGS = ("en", "zh")


def _json(name: str) -> Any:
    return json.loads(DATA.joinpath(name).read_text(encoding="utf-8"))


@dataclass
class Lexicon:
    """What the independent parser knows, read straight from the data files."""

    joiner: str
    sentence_re: list[tuple[re.Pattern[str], str]]
    question_re: dict[str, re.Pattern[str]]
    term_generations: dict[str, int]
    term_gender: dict[str, str]
    name_gender: dict[str, str]


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _pattern(template: str, groups: dict[str, str]) -> re.Pattern[str]:
    out, seen = "", set()
    for part in re.split(r"(\{\w+\})", template):
        m = re.fullmatch(r"\{(\w+)\}", part)
        if m is None:
            out += re.escape(part)
        elif m.group(1) in seen:
            out += f"(?P={m.group(1)})"
        else:
            seen.add(m.group(1))
            out += f"(?P<{m.group(1)}>{groups[m.group(1)]})"
    return re.compile(out)


def lexicon(lang: str) -> Lexicon:
    vocab = _json(f"{lang}.json")
    pool = _json(f"names_{lang}.json")
    name_gender: dict[str, str] = {}
    for gender in ("male", "female"):
        for given in pool["given"][gender]:
            for family in pool["family"]:
                name_gender[pool["format"].replace("{given}", given).replace("{family}", family)] = gender
    given = _alt(pool["given"]["male"] + pool["given"]["female"])
    family = _alt(pool["family"])
    names = "".join(
        f"(?:{given})" if part == "{given}" else f"(?:{family})" if part == "{family}" else re.escape(part)
        for part in re.split(r"(\{\w+\})", pool["format"])
        if part
    )
    anc = _alt([t["text"] for t in vocab["ancestor_terms"]])
    desc = _alt([t["text"] for t in vocab["descendant_terms"]])
    groups = {"elder": names, "younger": names, "term": anc, "inverse": desc, "subject": names, "other": names}
    groups["n"] = r"\d+"
    sentence_re = [(_pattern(t["text"], groups), "up") for t in vocab["ancestor_templates"]]
    sentence_re += [(_pattern(t["text"], groups), "down") for t in vocab["descendant_templates"]]
    terms = vocab["ancestor_terms"] + vocab["descendant_terms"]
    return Lexicon(
        joiner=vocab["joiner"],
        sentence_re=sentence_re,
        question_re={k: _pattern(v, groups) for k, v in vocab["questions"].items()},
        term_generations={t["text"]: t["generations"] for t in terms},
        term_gender={t["text"]: t["gender"] for t in terms},
        name_gender=name_gender,
    )


LEX = {lang: lexicon(lang) for lang in LANGS}


@dataclass(frozen=True)
class Fact:
    index: int
    elder: str
    younger: str
    generations: int
    gender_ok: bool


def split_sentences(text: str, lang: str) -> list[str]:
    end = "." if lang == "en" else "。"
    parts = re.findall(rf"[^{re.escape(end)}]*{re.escape(end)}", text)
    return [p.strip() for p in parts]


def parse_facts(text: str, lang: str) -> list[Fact]:
    lex = LEX[lang]
    facts = []
    for i, sentence in enumerate(split_sentences(text, lang)):
        hits = [(m, d) for pat, d in lex.sentence_re if (m := pat.fullmatch(sentence))]
        assert len(hits) == 1, f"{sentence!r} matches {len(hits)} templates"
        m, direction = hits[0]
        term = m.group("term") if direction == "up" else m.group("inverse")
        described = m.group("elder") if direction == "up" else m.group("younger")
        gender = lex.term_gender[term]
        ok = gender in ("either", lex.name_gender[described])
        facts.append(Fact(i, m.group("elder"), m.group("younger"), lex.term_generations[term], ok))
    return facts


def search(facts: list[Fact], start: str, upward: bool) -> dict[str, list[tuple[int, tuple[int, ...]]]]:
    """Every person reachable from `start`, with (generation sum, sentence indexes) per path."""
    out: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    stack: list[tuple[str, int, tuple[int, ...]]] = [(start, 0, ())]
    while stack:
        node, dist, path = stack.pop()
        for f in facts:
            if (f.younger if upward else f.elder) == node:
                nxt = f.elder if upward else f.younger
                item = (dist + f.generations, (*path, f.index))
                out.setdefault(nxt, []).append(item)
                stack.append((nxt, *item))
    return out


def solve(question: str, facts: list[Fact], lang: str) -> tuple[str, tuple[int, ...]]:
    """The unique answer text and the sentence indexes of its proof, found from the text alone."""
    hits = [(k, m) for k, pat in LEX[lang].question_re.items() if (m := pat.search(question))]
    assert len(hits) == 1
    kind, m = hits[0]
    subject = m.group("subject")
    found = search(facts, subject, kind != "nth_descendant")
    for person, paths in found.items():
        assert len({d for d, _ in paths}) == 1, f"{person} at several distances"
    dist = {p: paths[0][0] for p, paths in found.items()}
    if kind == "eldest_ancestor":
        answers = [p for p, d in dist.items() if d == max(dist.values())]
    elif kind == "distance":
        other = m.group("other")
        assert len(found[other]) == 1
        return str(dist[other]), found[other][0][1]
    else:
        answers = [p for p, d in dist.items() if d == int(m.group("n"))]
    assert len(answers) == 1, f"{len(answers)} correct answers"
    assert len(found[answers[0]]) == 1, "several proof paths"
    return answers[0], found[answers[0]][0][1]


def make(
    lang: str,
    seed: int,
    steps: int,
    topology: str = "chain",
    question: str = "eldest_ancestor",
    **render: Any,
) -> tuple[KinGraph, tuple[RenderedItem, ...]]:
    pack = load_pack(lang)
    rng = random.Random(seed)
    names = NameSampler(pack.names, rng)
    params = GraphParams(steps=steps, topology=topology, question=question)  # type: ignore[arg-type]
    graph = generate(params, pack, rng, names)
    return graph, render_items(graph, pack, rng, names, **render)


def context(item: RenderedItem, lang: str) -> str:
    return LEX[lang].joiner.join(s.text for s in item.needles)


# ------------------------------------------------------------------------------------------ packs


def test_manifest_matches_every_data_file() -> None:
    manifest = _json("manifest.json")["files"]
    shipped = sorted(p.name for p in DATA.iterdir() if p.name.endswith(".json") and p.name != "manifest.json")
    assert sorted(manifest) == shipped
    for name, digest in manifest.items():
        assert hashlib.sha256(DATA.joinpath(name).read_bytes()).hexdigest() == digest
    assert load_pack("en").digests["en.json"] == manifest["en.json"]


@pytest.mark.parametrize("lang", LANGS)
def test_pack_contents(lang: str) -> None:
    vocab = _json(f"{lang}.json")
    assert len(vocab["ancestor_templates"]) >= 8
    assert len(vocab["descendant_templates"]) >= 2
    assert set(vocab["questions"]) == {"eldest_ancestor", "nth_ancestor", "nth_descendant", "distance"}
    assert {t["generations"] for t in vocab["ancestor_terms"]} == {1, 2}
    names = LEX[lang].name_gender
    assert len(names) >= 1100
    for gender in ("male", "female"):  # 512 steps need 513 people, plus options and few-shot names
        assert sum(1 for g in names.values() if g == gender) >= 600
    for name in names:
        assert "'" not in name and "." not in name
        assert not re.search(r"\b(Mr|Mrs|Ms|Dr|Jr|Sr|DDS|MD|PhD)\b", name)


# --------------------------------------------------------------------------- independent parse


CASES = [(lang, top, q) for lang in LANGS for top in TOPOLOGIES for q in QUESTION_TYPES]
# The fewest sentences of each shape: a tree needs one branch beside its line, a DAG one couple
# below the root (two chain sentences and the partner's).
LEAST_STEPS = {"chain": 1, "tree": 2, "dag": 3}


@pytest.mark.parametrize(("lang", "topology", "question"), CASES)
def test_independent_parse_finds_answer_and_proof(lang: str, topology: str, question: str) -> None:
    for seed in range(8):
        steps = random.Random(seed).choice([2, 3, 5, 8, 13, 19, 33, 64])
        steps = max(steps, LEAST_STEPS[topology])
        order = "ordered" if seed % 2 else "shuffled"
        fmt = "open" if seed % 3 == 0 else "multiple_choice"
        graph, items = make(lang, seed, steps, topology, question, order=order, answer_format=fmt)
        item = items[0]
        facts = parse_facts(context(item, lang), lang)
        assert len(facts) == steps
        answer, proof = solve(item.question, facts, lang)
        assert answer == graph.answer_text
        assert tuple(item.needles[i].id for i in proof) == graph.question.proof
        if fmt == "open":
            assert item.answers == ((answer,),)
        else:
            assert dict(item.options or ())[item.answers[0][0]] == answer
        people = {f.elder for f in facts} | {f.younger for f in facts}
        assert len(people) == len(graph.people)  # every person is a distinct name
        assert all(f.gender_ok for f in facts)  # consistent gender is the default


def test_ordered_sentences_run_from_the_eldest_generation() -> None:
    graph, items = make("en", 4, 12, order="ordered", answer_format="open")
    facts = parse_facts(context(items[0], "en"), "en")
    chain = [graph.person(p).name for p in graph.chain]
    assert [(f.elder, f.younger) for f in facts] == list(itertools.pairwise(chain))


def test_random_gender_reproduces_mismatches() -> None:
    pack = load_pack("en")
    mismatched = 0
    for seed in range(5):
        rng = random.Random(seed)
        names = NameSampler(pack.names, rng)
        graph = generate(GraphParams(steps=30, gender="random"), pack, rng, names)
        item = render_items(graph, pack, rng, names, answer_format="open")[0]
        mismatched += sum(not f.gender_ok for f in parse_facts(context(item, "en"), "en"))
        assert "does not necessarily match" in item.question
    assert mismatched > 0


def test_questions_are_sampled_along_the_graph() -> None:
    subjects, ns = set(), set()
    for seed in range(20):
        graph, _ = make("en", seed, 20, "chain", "nth_ancestor", answer_format="open")
        subjects.add(graph.question.subject)
        ns.add(graph.question.n == graph.person(graph.question.subject).level)
    assert len(subjects) > 5
    assert ns == {True, False}  # sometimes the eldest, usually an inner ancestor


def test_end_subject_reproduces_the_reference_question() -> None:
    pack = load_pack("zh")
    rng = random.Random(1)
    names = NameSampler(pack.names, rng)
    graph = generate(GraphParams(steps=9, question="nth_ancestor", subject="end"), pack, rng, names)
    assert graph.question.subject == graph.chain[-1] and graph.question.answer == graph.chain[0]


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_every_step_count_generates(topology: str) -> None:
    pack = load_pack("en")
    counts = (
        range(2, 513)
        if topology == "chain"
        else [*range(LEAST_STEPS[topology], 40), 63, 64, 127, 128, 255, 256, 511, 512]
    )
    for steps in counts:
        rng = random.Random(steps)
        graph = generate(GraphParams(steps=steps, topology=topology), pack, rng, NameSampler(pack.names, rng))  # type: ignore[arg-type]
        assert len(graph.edges) == steps
        assert len(set(graph.names())) == len(graph.people)
        if topology == "chain":
            assert len(graph.people) == steps + 1 == graph.v1_label
        # the declared shape, counted from the edges: no tree is a mere path, every DAG has a couple
        children = collections.Counter(e.elder for e in graph.edges)
        parents = collections.Counter(e.younger for e in graph.edges)
        if topology == "tree":
            assert max(parents.values()) == 1 and max(children.values()) >= 2, steps
        if topology == "dag":
            assert max(parents.values()) == 2, steps


def test_steps_out_of_range_are_rejected() -> None:
    for steps in (0, 513):
        with pytest.raises(AtcGraphError):
            GraphParams(steps=steps)
    with pytest.raises(AtcGraphError, match="tree needs at least 2"):
        GraphParams(steps=1, topology="tree")
    with pytest.raises(AtcGraphError, match="dag needs at least 3"):
        GraphParams(steps=2, topology="dag")


def test_verify_rejects_two_correct_answers() -> None:
    pack = load_pack("en")
    people = (
        Person("p0", "Aaron Abbott", "male", 0),
        Person("p1", "Adela Abbott", "female", 1),
        Person("p2", "Adrian Abbott", "male", 1),
    )
    edges = (Edge("e0", "p0", "p1", "father", 1, "paternal"), Edge("e1", "p0", "p2", "father", 1, "paternal"))
    question = Question("nth_descendant", subject="p0", answer="p1", proof=("e0",), n=1)
    graph = KinGraph("tree", 2, "consistent", "en", people, edges, "p0", ("p0", "p1"), question)
    with pytest.raises(AtcGraphError, match="2 correct answers"):
        verify(graph, pack)
    wrong_proof = Question("eldest_ancestor", subject="p1", answer="p0", proof=("e1",))
    with pytest.raises(AtcGraphError, match="proof path"):
        verify(KinGraph("tree", 2, "consistent", "en", people, edges, "p0", ("p0", "p1"), wrong_proof), pack)


# ------------------------------------------------------------------------------ options, rotations


@pytest.mark.parametrize("lang", LANGS)
def test_rotations_form_complete_groups(lang: str) -> None:
    for seed in range(10):
        graph, items = make(lang, seed, 6 + seed, "tree", QUESTION_TYPES[seed % 4])
        assert len(items) == 4
        assert len({it.group["id"] for it in items if it.group}) == 1
        assert sorted(it.group["rotation"] for it in items if it.group) == [0, 1, 2, 3]
        assert sorted(it.answer_letter or "" for it in items) == ["A", "B", "C", "D"]
        texts = items[0].structure["option_texts"]
        assert isinstance(texts, list) and len(set(texts)) == 4 and texts[0] == graph.answer_text
        for it in items:
            assert it.options is not None and it.permutation is not None
            assert [t for _, t in it.options] == [texts[i] for i in it.permutation]
            assert dict(it.options)[it.answer_letter or ""] == graph.answer_text
            for letter, text in it.options:
                assert f"{letter}. {text}" in it.question


def _path_people(facts: list[Fact], proof: tuple[int, ...], answer: str) -> list[str]:
    out, current = [], answer
    for i in reversed(proof):
        f = facts[i]
        current = f.younger if f.elder == current else f.elder
        out.append(current)
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_option_policies(lang: str) -> None:
    for seed in range(8):
        for policy in ("chain_neighbors", "graph_random", "absent"):
            graph, items = make(lang, seed, 12, "tree", "eldest_ancestor", policy=policy, shots=2)
            text = context(items[0], lang)
            facts = parse_facts(text, lang)
            answer, proof = solve(items[0].question, facts, lang)
            present = {f.elder for f in facts} | {f.younger for f in facts}
            distractors = [t for t in items[0].structure["option_texts"][1:]]  # type: ignore[index]
            assert len(set(distractors)) == 3 and answer not in distractors
            subject = graph.person(graph.question.subject).name
            if policy == "chain_neighbors":
                neighbours = _path_people(facts, proof, answer)
                assert distractors[: min(3, len(neighbours))] == neighbours[:3]
                assert all(d in present for d in distractors)
            elif policy == "graph_random":
                assert all(d in present for d in distractors) and subject not in distractors
            else:
                assert not any(d in text or d in items[0].few_shot for d in distractors)


def test_distance_options_are_distinct_numbers() -> None:
    for seed in range(6):
        graph, items = make("en", seed, 10, "dag", "distance", policy="graph_random" if seed % 2 else "chain_neighbors")
        texts = items[0].structure["option_texts"]
        assert isinstance(texts, list) and texts[0] == graph.question.answer
        assert len(set(texts)) == 4 and all(str(t).isdigit() and int(t) > 0 for t in texts)


# ------------------------------------------------------------------------------------- few-shot


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("shots", [0, 1, 4])
def test_few_shot_names_are_disjoint(lang: str, shots: int) -> None:
    graph, items = make(lang, shots + 7, 15, "dag", "nth_descendant", shots=shots, shot_style="reasoning")
    shot_names = set(items[0].structure["few_shot_names"])  # type: ignore[arg-type]
    assert len(shot_names) >= 2 * shots
    assert not shot_names & set(graph.names())
    assert not shot_names & set(items[0].structure["option_texts"])  # type: ignore[arg-type]
    if shots == 0:
        assert items[0].few_shot == ""
    else:
        assert items[0].few_shot.count("\n\n") == shots + 1


@pytest.mark.parametrize("lang", LANGS)
def test_reasoning_shot_walks_the_proof_path(lang: str) -> None:
    pack = load_pack(lang)
    rng = random.Random(11)
    names = NameSampler(pack.names, rng)
    graph = generate(GraphParams(steps=8), pack, rng, names)
    items = render_items(graph, pack, rng, names, shots=4, shot_style="reasoning", answer_format="open")
    examples = items[0].few_shot.split("\n\n")[1:-1]
    assert len(examples) == 4
    for example in examples:
        lines = example.split("\n")
        facts = parse_facts(lines[1], lang)
        answer, proof = solve(lines[2], facts, lang)
        reasoning = "\n".join(lines[-2:])  # the walk, then the answer line a scorer can extract
        assert lines[-1] in ("Answer: \\boxed{" + answer + "}", "答案：\\boxed{" + answer + "}")
        positions = [reasoning.index(facts[i].elder) for i in proof]
        assert positions == sorted(positions)  # the steps follow the proof from subject to answer
    direct = render_items(graph, pack, rng, names, shots=1, shot_style="direct")[0].few_shot
    assert re.search(r"(Answer: |答案：)[ABCD]$", direct.split("\n\n")[1])


def test_same_seed_same_item() -> None:
    a = make("zh", 5, 17, "dag", "distance", shots=2)
    b = make("zh", 5, 17, "dag", "distance", shots=2)
    assert a[0].to_structure() == b[0].to_structure()
    assert [(it.question, it.needles, it.few_shot) for it in a[1]] == [
        (it.question, it.needles, it.few_shot) for it in b[1]
    ]


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(PackIntegrityError, match="available: en, zh"):
        load_pack("xx")


@pytest.mark.parametrize("lang", LANGS)
def test_topology_shapes_and_parents(lang: str) -> None:
    for seed in range(6):
        for topology in TOPOLOGIES:
            _, items = make(lang, seed, 24, topology, "eldest_ancestor", answer_format="open")
            facts = parse_facts(context(items[0], lang), lang)
            parents: dict[str, list[Fact]] = {}
            children: dict[str, int] = {}
            for f in facts:
                parents.setdefault(f.younger, []).append(f)
                children[f.elder] = children.get(f.elder, 0) + 1
            most_parents = max(len(v) for v in parents.values())
            assert most_parents == {"chain": 1, "tree": 1, "dag": 2}[topology]
            assert (max(children.values()) > 1) == (topology != "chain")
            for younger, ups in parents.items():
                # a father and a mother, never two fathers (consistent gender is the default)
                genders = [LEX[lang].name_gender[f.elder] for f in ups if f.generations == 1]
                assert len(genders) == len(set(genders)), younger
