"""Render a kinship graph through a language pack: needle sentences, question, options, few-shot examples.

Multiple choice uses four options (the answer and three distractors chosen by an explicit policy)
shown in four CircularEval rotations: a base order is drawn once and rotation r shows it shifted
left by r, so the answer sits under a different letter in each rotation. The rotations share a group
id and record the permutation. Open-ended items ask for the answer inside `\\boxed{}`.

Distractor policies:
- `chain_neighbors` (the reference): the people next to the answer on the proof path, toward the
  subject (so the subject itself can be an option), padded with other people of the graph.
- `graph_random`: three other people of the graph, never the subject or the answer.
- `absent`: three fresh names that occur nowhere in the item.
For `distance` questions the options are generation counts: neighbouring numbers for
`chain_neighbors`, random numbers up to the graph's depth otherwise.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from needlec.kinds.atc.graph import AtcGraphError, GraphParams, KinGraph, NameSampler, generate
from needlec.languages.kinship.pack import KinshipPack, KinTerm

Order = Literal["shuffled", "ordered"]
OptionPolicy = Literal["chain_neighbors", "graph_random", "absent"]
AnswerFormat = Literal["multiple_choice", "open"]
ShotStyle = Literal["direct", "reasoning"]

LETTERS = "ABCD"
MAX_SHOTS = 4
DEFAULT_SHOT_STEPS: tuple[int, ...] = (1, 2, 3, 4)
_SLOT = re.compile(r"\{(\w+)\}")


def fill(template: str, values: Mapping[str, object]) -> str:
    """Replace `{name}` slots that appear in `values`; other braces (as in `\\boxed{}`) stay as they are."""
    return _SLOT.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


@dataclass(frozen=True)
class Sentence:
    """One needle: the rendering of edge `id` with the template and term used."""

    id: str
    text: str
    template: str
    direction: Literal["ancestor", "descendant"]
    term: str


def _descendant_term(graph: KinGraph, pack: KinshipPack, rng: random.Random, edge_id: str) -> KinTerm:
    edge = graph.edge(edge_id)
    younger = graph.person(edge.younger)
    terms = [
        t
        for t in pack.vocabulary.descendant_terms
        if t.generations == edge.generations and (t.lineage == edge.lineage or "either" in (t.lineage, edge.lineage))
    ]
    if graph.gender_mode == "consistent":
        terms = [t for t in terms if t.gender in ("either", younger.gender)]
    if not terms:
        raise AtcGraphError(f"language pack {pack.language!r} has no descendant term for edge {edge_id}")
    return rng.choice(terms)


def render_sentences(
    graph: KinGraph, pack: KinshipPack, rng: random.Random, order: Order = "shuffled"
) -> tuple[Sentence, ...]:
    """One sentence per edge; `ordered` lists them from the eldest generation down, `shuffled` at random."""
    vocab = pack.vocabulary
    templates = [(t, "ancestor") for t in vocab.ancestor_templates] + [
        (t, "descendant") for t in vocab.descendant_templates
    ]
    out: list[Sentence] = []
    for edge in graph.edges:
        template, direction = rng.choice(templates)
        elder, younger = graph.person(edge.elder).name, graph.person(edge.younger).name
        if direction == "ancestor":
            term = pack.term(edge.term)
            text = fill(template.text, {"elder": elder, "younger": younger, "term": term.text})
        else:
            term = _descendant_term(graph, pack, rng, edge.id)
            text = fill(template.text, {"elder": elder, "younger": younger, "inverse": term.text})
        out.append(
            Sentence(edge.id, text, template.id, "ancestor" if direction == "ancestor" else "descendant", term.id)
        )
    if order == "ordered":
        level = {p.id: p.level for p in graph.people}
        position = {e.id: (level[e.elder], i) for i, e in enumerate(graph.edges)}
        out.sort(key=lambda s: position[s.id])
    else:
        rng.shuffle(out)
    return tuple(out)


def render_question(graph: KinGraph, pack: KinshipPack) -> str:
    """The question text for the graph's question type."""
    q = graph.question
    template = getattr(pack.vocabulary.questions, q.type)
    values: dict[str, object] = {"subject": graph.person(q.subject).name}
    if q.n is not None:
        values["n"] = q.n
    if q.other is not None:
        values["other"] = graph.person(q.other).name
    return fill(template, values)


@dataclass(frozen=True)
class OptionSet:
    """Four distinct option texts; index 0 is the correct one. `ids` are person ids ("" when not a person)."""

    texts: tuple[str, ...]
    ids: tuple[str, ...]
    policy: OptionPolicy


def choose_options(graph: KinGraph, rng: random.Random, policy: OptionPolicy, names: NameSampler) -> OptionSet:
    """The answer plus three distractors chosen by `policy` (see the module docstring)."""
    q = graph.question
    if q.type == "distance":
        answer = int(q.answer)
        if policy == "chain_neighbors":
            pool = [answer + d for d in (-1, 1, -2, 2, 3, 4, 5) if answer + d > 0]
        else:
            top = max(p.level for p in graph.people) + 3
            pool = [v for v in range(1, top + 1) if v != answer]
            rng.shuffle(pool)
        numbers = [answer, *pool[:3]]
        return OptionSet(tuple(str(v) for v in numbers), ("",) * 4, policy)
    answer_id = q.answer
    others: list[str] = []
    if policy == "chain_neighbors":
        path_people: list[str] = []
        current = answer_id
        for edge_id in reversed(q.proof):  # from the answer back toward the subject
            edge = graph.edge(edge_id)
            current = edge.younger if edge.elder == current else edge.elder
            path_people.append(current)
        others = path_people[:3]
        if len(others) < 3:
            rest = [p.id for p in graph.people if p.id not in (answer_id, *others)]
            rng.shuffle(rest)
            others += rest[: 3 - len(others)]
    elif policy == "graph_random":
        rest = [p.id for p in graph.people if p.id not in (answer_id, q.subject)]
        rng.shuffle(rest)
        others = rest[:3]
    ids = [answer_id, *others]
    texts = [graph.person(i).name for i in ids]
    while len(texts) < 4:  # `absent`, or a graph too small to supply three distractors
        gender = graph.person(answer_id).gender if graph.gender_mode == "consistent" else rng.choice(("male", "female"))
        texts.append(names.draw(gender))
        ids.append("")
    return OptionSet(tuple(texts), tuple(ids), policy)


@dataclass(frozen=True)
class Rotation:
    """One CircularEval rotation: `permutation[j]` is the option index shown under letter j."""

    group_id: str
    rotation: int
    permutation: tuple[int, ...]
    options: tuple[tuple[str, str], ...]
    answer_letter: str


def circular_rotations(options: OptionSet, group_id: str, rng: random.Random) -> tuple[Rotation, ...]:
    """Four rotations of one base order (ABCD, BCDA, CDAB, DABC), so the answer letter differs in each."""
    base = list(range(len(options.texts)))
    rng.shuffle(base)
    out: list[Rotation] = []
    for r in range(len(base)):
        perm = tuple(base[r:] + base[:r])
        shown = tuple((LETTERS[j], options.texts[i]) for j, i in enumerate(perm))
        out.append(Rotation(group_id, r, perm, shown, LETTERS[perm.index(0)]))
    return tuple(out)


def options_block(pack: KinshipPack, rotation: Rotation) -> str:
    """The option lines followed by the multiple-choice instruction."""
    ins = pack.vocabulary.instructions
    lines = [fill(ins.option_line, {"letter": letter, "text": text}) for letter, text in rotation.options]
    return "\n".join([*lines, ins.multiple_choice])


def reasoning_text(graph: KinGraph, pack: KinshipPack) -> str:
    """The proof path in words: each fact from the subject to the answer with the running generation count."""
    total = 0
    steps: list[str] = []
    for edge_id in graph.question.proof:
        edge = graph.edge(edge_id)
        total += edge.generations
        steps.append(
            fill(
                pack.vocabulary.few_shot.reasoning_step,
                {
                    "elder": graph.person(edge.elder).name,
                    "younger": graph.person(edge.younger).name,
                    "term": pack.term(edge.term).text,
                    "total": total,
                },
            )
        )
    return pack.vocabulary.joiner.join(steps)


@dataclass(frozen=True)
class Shot:
    """A solved few-shot example and the graph it came from."""

    graph: KinGraph
    text: str
    response: str


def _shot_answer(pack: KinshipPack, graph: KinGraph, answer: str, style: ShotStyle) -> str:
    fs = pack.vocabulary.few_shot
    if style == "direct":
        return fill(fs.direct, {"answer": answer})
    return fill(fs.reasoning, {"steps": reasoning_text(graph, pack), "answer": answer})


def few_shots(
    params: GraphParams,
    pack: KinshipPack,
    rng: random.Random,
    names: NameSampler,
    *,
    count: int,
    style: ShotStyle,
    answer_format: AnswerFormat,
    policy: OptionPolicy = "chain_neighbors",
    steps: tuple[int, ...] = DEFAULT_SHOT_STEPS,
    order: Order = "shuffled",
) -> tuple[Shot, ...]:
    """`count` (0-4) solved examples on chains of `steps` sentences, with names drawn from the item's sampler.

    Because `names` is the same sampler as the test item's, example names never meet the item's names.
    """
    if not 0 <= count <= MAX_SHOTS:
        raise AtcGraphError(f"few-shot count must be 0..{MAX_SHOTS}, got {count}")
    vocab = pack.vocabulary
    out: list[Shot] = []
    for index in range(count):
        shot_params = GraphParams(
            steps=steps[index % len(steps)],
            topology="chain",
            question=params.question,
            gender=params.gender,
            subject=params.subject,
        )
        graph = generate(shot_params, pack, rng, names)
        sentences = render_sentences(graph, pack, rng, order)
        parts = [fill(vocab.few_shot.example, {"index": index + 1})]
        parts.append(vocab.joiner.join(s.text for s in sentences))
        parts.append(render_question(graph, pack))
        if answer_format == "multiple_choice":
            options = choose_options(graph, rng, policy, names)
            rotation = circular_rotations(options, "", rng)[0]
            parts.append(options_block(pack, rotation))
            answer = rotation.answer_letter
        else:
            parts.append(vocab.instructions.open)
            answer = "\\boxed{" + graph.answer_text + "}"
        response = _shot_answer(pack, graph, answer, style)
        parts.append(response)
        out.append(Shot(graph, "\n".join(parts), response))
    return tuple(out)


@dataclass(frozen=True)
class RenderedItem:
    """Everything one compiled item needs from ATC: needles, prompt pieces, answers and bookkeeping."""

    needles: tuple[Sentence, ...]
    question: str
    answers: tuple[tuple[str, ...], ...]
    few_shot: str
    group: dict[str, object] | None
    options: tuple[tuple[str, str], ...] | None
    answer_letter: str | None
    permutation: tuple[int, ...] | None
    option_ids: tuple[str, ...] | None
    structure: dict[str, object]


def group_id(graph: KinGraph, sentences: tuple[Sentence, ...]) -> str:
    """A stable id for the rotations of one question, from its facts and question."""
    h = hashlib.sha256()
    for s in sentences:
        h.update(s.text.encode("utf-8") + b"\n")
    q = graph.question
    h.update(f"{q.type}|{q.subject}|{q.n}|{q.other}|{q.answer}".encode())
    return "atc-" + h.hexdigest()[:16]


def render_items(
    graph: KinGraph,
    pack: KinshipPack,
    rng: random.Random,
    names: NameSampler,
    *,
    answer_format: AnswerFormat = "multiple_choice",
    policy: OptionPolicy = "chain_neighbors",
    order: Order = "shuffled",
    shots: int = 0,
    shot_style: ShotStyle = "direct",
    shot_params: GraphParams | None = None,
    shot_steps: tuple[int, ...] = DEFAULT_SHOT_STEPS,
) -> tuple[RenderedItem, ...]:
    """The items for one question: four CircularEval rotations (multiple choice) or one open-ended item."""
    vocab = pack.vocabulary
    sentences = render_sentences(graph, pack, rng, order)
    question = render_question(graph, pack)
    if graph.gender_mode == "random":
        question = vocab.instructions.gender_note + "\n" + question
    examples = few_shots(
        shot_params or GraphParams(steps=2, question=graph.question.type, gender=graph.gender_mode),
        pack,
        rng,
        names,
        count=shots,
        style=shot_style,
        answer_format=answer_format,
        policy=policy,
        steps=shot_steps,
    )
    few_shot = ""
    if examples:
        few_shot = "\n\n".join([vocab.few_shot.header, *(s.text for s in examples), vocab.few_shot.test_intro])
    structure: dict[str, object] = dict(graph.to_structure())
    structure["few_shot_names"] = sorted(n for s in examples for n in s.graph.names())
    if answer_format == "open":
        return (
            RenderedItem(
                needles=sentences,
                question=question + "\n" + vocab.instructions.open,
                answers=((graph.answer_text,),),
                few_shot=few_shot,
                group=None,
                options=None,
                answer_letter=None,
                permutation=None,
                option_ids=None,
                structure=structure,
            ),
        )
    options = choose_options(graph, rng, policy, names)
    gid = group_id(graph, sentences)
    rotations = circular_rotations(options, gid, rng)
    return tuple(
        RenderedItem(
            needles=sentences,
            question=question + "\n" + options_block(pack, rot),
            answers=((rot.answer_letter,),),
            few_shot=few_shot,
            group={"id": gid, "rotation": rot.rotation, "size": len(rotations)},
            options=rot.options,
            answer_letter=rot.answer_letter,
            permutation=rot.permutation,
            option_ids=options.ids,
            structure={**structure, "option_policy": policy, "option_texts": list(options.texts)},
        )
        for rot in rotations
    )
