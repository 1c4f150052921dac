"""A pure kinship-graph generator for the Ancestral Trace Challenge, with a uniqueness check.

Vocabulary. `steps` is the number of kinship *sentences* (graph edges) in an item, 1..512 (items use
2..512; few-shot examples may use 1). The OpenCompass v1 ATC label "N needles" counts *people* on a
chain, so a v1 label N is `steps = N - 1` here, and v1's "steps 2..19" are 1..18 sentences; v2's
"N needles" is N sentences, i.e. `steps = N`. `KinGraph.v1_label` gives the v1 number for a chain.

Every person has a *level* (generations below the root p0, which has level 0) and every edge joins
an elder to a younger person with `generations` = the level difference (1 for a parent term, 2 for
a grandparent term), so every path between two people has the same generation sum.

Topologies:
- `chain`: p0 <- p1 <- ... <- p_steps, one edge per step.
- `tree`: a main chain plus distractor branches (siblings of chain people, their children = cousins),
  each branch edge adding one new child to an existing person. The first branch hangs off a chain
  person above the chain's end, so no tree is a mere path (needs at least 2 steps).
- `dag`: a main chain whose people (below the root's generation) get a partner as second parent of
  the next chain person (half of the extra edges), then children of those couples (two parent edges
  each) and single-parent children; the root p0 stays the only person at level 0 (needs at least 3
  steps: one couple below the root).

Shapes are checked, not assumed: a tree's question walks a proof path that some branch leaves (a
person on the path, other than its lowest, has a child off the path), and a DAG's proof path holds
a person, other than its top, who has two parents (so one parent is off the path). `verify` checks
the whole graph's shape too.

The question (eldest ancestor, n-th ancestor, n-th descendant, relationship distance) is sampled along
the graph: the queried person and `n` are drawn among all choices that have exactly one correct
answer reached by exactly one path (`subject="end"` asks about the chain's ends, as the reference
does). `verify` re-derives the answer by graph search and raises `AtcGraphError` unless exactly one
answer is correct and the recorded proof path is the unique path to it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from needlec.errors import NeedlecError
from needlec.languages.kinship.pack import Gender, KinshipPack, KinTerm, Lineage, NamePool

Topology = Literal["chain", "tree", "dag"]
QuestionType = Literal["eldest_ancestor", "nth_ancestor", "nth_descendant", "distance"]
GenderMode = Literal["consistent", "random"]
SubjectMode = Literal["sampled", "end"]

MIN_STEPS = 1
MAX_STEPS = 512
MIN_TOPOLOGY_STEPS: dict[str, int] = {"chain": 1, "tree": 2, "dag": 3}
"""Fewest sentences that can take each shape: a tree needs a branch, a DAG a couple below the root."""
QUESTION_TYPES: tuple[QuestionType, ...] = ("eldest_ancestor", "nth_ancestor", "nth_descendant", "distance")
TOPOLOGIES: tuple[Topology, ...] = ("chain", "tree", "dag")


class AtcGraphError(NeedlecError):
    """A kinship graph cannot be drawn as asked, or its question does not have exactly one answer."""


@dataclass(frozen=True)
class Person:
    """One person of the family: `level` counts generations below the root."""

    id: str
    name: str
    gender: Gender
    level: int


@dataclass(frozen=True)
class Edge:
    """One kinship fact (one needle sentence): `elder` is `younger`'s `term` (an ancestor term id)."""

    id: str
    elder: str
    younger: str
    term: str
    generations: int
    lineage: Lineage


@dataclass(frozen=True)
class Question:
    """What is asked and the single correct answer.

    `answer` is a person id, except for `distance` where it is the generation count as a string.
    `proof` lists the edge (needle) ids from the subject to the answer (to `other` for `distance`).
    """

    type: QuestionType
    subject: str
    answer: str
    proof: tuple[str, ...]
    n: int | None = None
    other: str | None = None


@dataclass(frozen=True)
class KinGraph:
    """A frozen family graph with its question; `people` and `edges` are in creation order."""

    topology: Topology
    steps: int
    gender_mode: GenderMode
    language: str
    people: tuple[Person, ...]
    edges: tuple[Edge, ...]
    root: str
    chain: tuple[str, ...]
    question: Question
    _index: dict[str, Person] = field(default_factory=dict, compare=False, repr=False)
    _edge_index: dict[str, Edge] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({p.id: p for p in self.people})
        self._edge_index.update({e.id: e for e in self.edges})

    def person(self, person_id: str) -> Person:
        """The person with this id."""
        return self._index[person_id]

    def edge(self, edge_id: str) -> Edge:
        """The edge with this id."""
        return self._edge_index[edge_id]

    @property
    def v1_label(self) -> int:
        """The OpenCompass v1 "needles" label for this many sentences on a chain (people = steps + 1)."""
        return self.steps + 1

    @property
    def answer_text(self) -> str:
        """The answer as it should be written: a full name, or the generation count."""
        q = self.question
        return q.answer if q.type == "distance" else self.person(q.answer).name

    def names(self) -> list[str]:
        """Every person's name."""
        return [p.name for p in self.people]

    def to_structure(self) -> dict[str, Any]:
        """A JSON-ready description for the item's `structure` field."""
        q = self.question
        return {
            "generator": "atc.kinship",
            "topology": self.topology,
            "steps": self.steps,
            "v1_needles": self.v1_label,
            "gender": self.gender_mode,
            "language": self.language,
            "people": [{"id": p.id, "name": p.name, "gender": p.gender, "level": p.level} for p in self.people],
            "edges": [
                {
                    "id": e.id,
                    "elder": e.elder,
                    "younger": e.younger,
                    "term": e.term,
                    "generations": e.generations,
                    "lineage": e.lineage,
                }
                for e in self.edges
            ],
            "root": self.root,
            "chain": list(self.chain),
            "question": {
                "type": q.type,
                "subject": q.subject,
                "n": q.n,
                "other": q.other,
                "answer": q.answer,
                "proof": list(q.proof),
            },
        }


class NameSampler:
    """Draws full names of a given gender without replacement, so names never repeat within an item.

    One sampler is shared by the test graph, its absent-name distractors and its few-shot examples.
    """

    def __init__(self, pool: NamePool, rng: random.Random) -> None:
        self._pool: dict[Gender, tuple[str, ...]] = {g: pool.full_names(g) for g in ("male", "female")}
        self._rng = rng
        self.used: set[str] = set()
        self._taken: dict[Gender, int] = {"male": 0, "female": 0}

    def draw(self, gender: Gender) -> str:
        """A fresh name of `gender`; raises `AtcGraphError` when the pool is exhausted."""
        names = self._pool[gender]
        if self._taken[gender] >= len(names):
            raise AtcGraphError(f"the {gender} name pool is exhausted for this item")
        while True:  # rejection sampling: the pool is at least twice the largest item
            name = names[self._rng.randrange(len(names))]
            if name not in self.used:
                break
        self.used.add(name)
        self._taken[gender] += 1
        return name


@dataclass(frozen=True)
class GraphParams:
    """What to generate: see the module docstring for the meaning of each choice."""

    steps: int
    topology: Topology = "chain"
    question: QuestionType = "eldest_ancestor"
    gender: GenderMode = "consistent"
    subject: SubjectMode = "sampled"
    branch_share: float = 1 / 3
    attempts: int = 30

    def __post_init__(self) -> None:
        if not MIN_STEPS <= self.steps <= MAX_STEPS:
            raise AtcGraphError(f"steps must be between {MIN_STEPS} and {MAX_STEPS}, got {self.steps}")
        least = MIN_TOPOLOGY_STEPS[self.topology]
        if self.steps < least:
            raise AtcGraphError(f"a {self.topology} needs at least {least} steps, got {self.steps}")
        if not 0 < self.branch_share < 1:
            raise AtcGraphError(f"branch_share must lie strictly between 0 and 1, got {self.branch_share}")


# --------------------------------------------------------------------------------------------------
# building


@dataclass
class _Draft:
    genders: list[Gender] = field(default_factory=list)
    levels: list[int] = field(default_factory=list)
    edges: list[tuple[int, int, KinTerm]] = field(default_factory=list)  # elder, younger, term
    chain: list[int] = field(default_factory=list)

    def add_person(self, level: int, gender: Gender) -> int:
        self.genders.append(gender)
        self.levels.append(level)
        return len(self.genders) - 1

    def parent_terms(self, younger: int) -> list[KinTerm]:
        return [t for (_, y, t) in self.edges if y == younger]


def _other(gender: Gender) -> Gender:
    return "female" if gender == "male" else "male"


def _compatible(term: KinTerm, existing: Sequence[KinTerm]) -> bool:
    """No person gets two fathers, or two paternal grandmothers: the facts must not contradict."""
    for t in existing:
        if t.generations != term.generations:
            continue
        if term.generations == 1 and t.gender == term.gender:
            return False
        if term.generations == 2 and t.gender == term.gender and t.lineage == term.lineage != "either":
            return False
    return True


def _pick_term(
    draft: _Draft,
    pack: KinshipPack,
    rng: random.Random,
    mode: GenderMode,
    elder: int,
    younger: int,
    generations: int | None = None,
    prefer_lineage: Lineage | None = None,
) -> KinTerm:
    terms = [t for t in pack.vocabulary.ancestor_terms if generations is None or t.generations == generations]
    if mode == "consistent":
        terms = [t for t in terms if t.gender in (draft.genders[elder], "either")]
    existing = draft.parent_terms(younger)
    terms = [t for t in terms if _compatible(t, existing)]
    if prefer_lineage is not None and prefer_lineage != "either":
        preferred = [t for t in terms if t.lineage in (prefer_lineage, "either")]
        terms = preferred or terms
    if not terms:
        raise AtcGraphError(f"language pack {pack.language!r} has no usable ancestor term for this edge")
    return rng.choice(terms)


def _add_edge(draft: _Draft, elder: int, younger: int, term: KinTerm) -> None:
    draft.edges.append((elder, younger, term))


def _random_gender(rng: random.Random) -> Gender:
    return "male" if rng.random() < 0.5 else "female"


def _child(
    draft: _Draft, pack: KinshipPack, rng: random.Random, mode: GenderMode, parent: int, gender: Gender | None = None
) -> tuple[int, KinTerm]:
    """Add a new child below `parent` with one edge whose term fixes the generation gap."""
    terms = list(pack.vocabulary.ancestor_terms)
    if mode == "consistent":
        terms = [t for t in terms if t.gender in (draft.genders[parent], "either")]
    if not terms:
        raise AtcGraphError(f"language pack {pack.language!r} has no ancestor term for this edge")
    term = rng.choice(terms)
    child = draft.add_person(draft.levels[parent] + term.generations, _random_gender(rng) if gender is None else gender)
    _add_edge(draft, parent, child, term)
    return child, term


def _chain(draft: _Draft, pack: KinshipPack, rng: random.Random, mode: GenderMode, length: int) -> None:
    root = draft.add_person(0, _random_gender(rng))
    draft.chain.append(root)
    for _ in range(length):
        child, _term = _child(draft, pack, rng, mode, draft.chain[-1])
        draft.chain.append(child)


def _split(steps: int, share: float) -> tuple[int, int]:
    extra = max(1, round(steps * share)) if steps >= 2 else 0
    return steps - extra, extra


def _build(params: GraphParams, pack: KinshipPack, rng: random.Random) -> _Draft:
    draft = _Draft()
    mode = params.gender
    if params.topology == "chain":
        _chain(draft, pack, rng, mode, params.steps)
        return draft
    length, extra = _split(params.steps, params.branch_share)
    _chain(draft, pack, rng, mode, length)
    if params.topology == "tree":
        # the first branch leaves the main line above its end (else it would only lengthen the line)
        _child(draft, pack, rng, mode, draft.chain[rng.randrange(len(draft.chain) - 1)])
        for _ in range(extra - 1):
            _child(draft, pack, rng, mode, rng.randrange(len(draft.genders)))
        return draft
    # dag: partners become second parents of the next chain person, then couples get children
    couples: list[tuple[int, int, int]] = []  # parent, partner, generations of their children
    slots = list(range(1, len(draft.chain) - 1))  # chain people below level 0 that have a chain child
    rng.shuffle(slots)
    partners = (extra + 1) // 2  # half the extra sentences make couples, the rest give them children
    for i in slots:
        if partners <= 0:
            break
        partners -= 1
        elder, younger = draft.chain[i], draft.chain[i + 1]
        first = next(t for (e, y, t) in draft.edges if e == elder and y == younger)
        partner_gender = _other(draft.genders[elder]) if mode == "consistent" else _random_gender(rng)
        partner = draft.add_person(draft.levels[elder], partner_gender)
        term = _pick_term(draft, pack, rng, mode, partner, younger, first.generations, first.lineage)
        _add_edge(draft, partner, younger, term)
        couples.append((elder, partner, first.generations))
        extra -= 1
    while extra > 0:
        if couples and extra >= 2 and rng.random() < 0.7:
            a, b, _gen = rng.choice(couples)
            child, term = _child(draft, pack, rng, mode, a)
            second = _pick_term(draft, pack, rng, mode, b, child, term.generations, term.lineage)
            _add_edge(draft, b, child, second)
            extra -= 2
        else:
            _child(draft, pack, rng, mode, rng.randrange(len(draft.genders)))
            extra -= 1
    return draft


# --------------------------------------------------------------------------------------------------
# graph search (shared by question sampling and `verify`)


class _Search:
    """Reachability with generation sums and path counts over the edge list (not the stored levels)."""

    def __init__(self, edges: Sequence[Edge]) -> None:
        self.up: dict[str, list[Edge]] = {}
        self.down: dict[str, list[Edge]] = {}
        for e in edges:
            self.up.setdefault(e.younger, []).append(e)
            self.down.setdefault(e.elder, []).append(e)

    def reach(self, start: str, upward: bool) -> dict[str, set[int]]:
        """Everyone reachable from `start` going up (ancestors) or down, with every generation sum seen."""
        step = self.up if upward else self.down
        found: dict[str, set[int]] = {}
        stack: list[tuple[str, int]] = [(start, 0)]
        seen: set[tuple[str, int]] = set()
        while stack:
            node, dist = stack.pop()
            for e in step.get(node, []):
                nxt = e.elder if upward else e.younger
                key = (nxt, dist + e.generations)
                if key in seen:
                    continue
                seen.add(key)
                found.setdefault(nxt, set()).add(dist + e.generations)
                stack.append(key)
        return found

    def paths(self, start: str, goal: str, upward: bool, limit: int = 2) -> list[tuple[str, ...]]:
        """Up to `limit` distinct edge paths from `start` to `goal`."""
        step = self.up if upward else self.down
        out: list[tuple[str, ...]] = []

        def walk(node: str, trail: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
            if node == goal:
                yield trail
                return
            for e in step.get(node, []):
                yield from walk(e.elder if upward else e.younger, (*trail, e.id))

        for p in walk(start, ()):
            out.append(p)
            if len(out) >= limit:
                break
        return out


def _path_people(edges: Sequence[Edge], proof: Sequence[str]) -> tuple[set[str], str, str]:
    """The people on a proof path, its top (the eldest) and its lowest person."""
    index = {e.id: e for e in edges}
    used = [index[i] for i in proof]
    elders = {e.elder for e in used}
    youngers = {e.younger for e in used}
    top = next(iter(elders - youngers))
    lowest = next(iter(youngers - elders))
    return elders | youngers, top, lowest


def shape_on_path(topology: Topology, edges: Sequence[Edge], proof: Sequence[str]) -> bool:
    """Whether the question's proof path shows the declared shape.

    `tree`: a person on the path, other than its lowest, has a child off the path (a branch leaves
    the path). `dag`: a person on the path, other than its top, has two parents (one is off the path).
    A chain always qualifies.
    """
    if topology == "chain" or not proof:
        return topology == "chain"
    on_path, top, lowest = _path_people(edges, proof)
    if topology == "tree":
        return any(e.elder in on_path and e.elder != lowest and e.younger not in on_path for e in edges)
    parents: dict[str, int] = {}
    for e in edges:
        parents[e.younger] = parents.get(e.younger, 0) + 1
    return any(parents.get(p, 0) >= 2 for p in on_path if p != top)


def _only(found: dict[str, set[int]], distance: int) -> list[str]:
    return sorted(p for p, d in found.items() if distance in d)


def _candidates(
    qtype: QuestionType,
    subject: str,
    search: _Search,
    rng: random.Random,
    end: tuple[str, str, int] | None,
    accept: Callable[[tuple[str, ...]], bool],
) -> Question | None:
    """A question about `subject` with exactly one answer reached by one path that `accept`s, or None."""
    upward = qtype != "nth_descendant"
    found = search.reach(subject, upward)
    if not found or any(len(d) != 1 for d in found.values()):
        return None
    dist = {p: next(iter(d)) for p, d in found.items()}
    if qtype == "eldest_ancestor":
        top = max(dist.values())
        options = [p for p, d in dist.items() if d == top]
        choices: list[tuple[str, int | None, str | None]] = [(options[0], None, None)] if len(options) == 1 else []
    elif qtype in ("nth_ancestor", "nth_descendant"):
        levels = sorted(set(dist.values()))
        if end is not None:
            levels = [end[2]] if end[2] in levels else []
        choices = [(_only(found, n)[0], n, None) for n in levels if len(_only(found, n)) == 1]
    else:
        targets = sorted(dist) if end is None else [p for p in dist if p == end[1]]
        choices = [(p, None, p) for p in targets]
    rng.shuffle(choices)
    for answer, n, other in choices:
        paths = search.paths(subject, answer, upward)
        if len(paths) != 1 or not accept(paths[0]):
            continue
        if qtype == "distance":
            return Question(type=qtype, subject=subject, answer=str(dist[answer]), proof=paths[0], other=other)
        return Question(type=qtype, subject=subject, answer=answer, proof=paths[0], n=n)
    return None


def _ask(
    params: GraphParams, people: Sequence[Person], chain: Sequence[str], edges: Sequence[Edge], rng: random.Random
) -> Question | None:
    search = _Search(edges)
    root, last = chain[0], chain[-1]
    levels = {p.id: p.level for p in people}

    def accept(proof: tuple[str, ...]) -> bool:
        return shape_on_path(params.topology, edges, proof)

    if params.subject == "end":
        if params.question == "nth_descendant":
            return _candidates(params.question, root, search, rng, (root, last, levels[last]), accept)
        return _candidates(params.question, last, search, rng, (last, root, levels[last]), accept)
    subjects = [p.id for p in people if p.id != root] if params.question != "nth_descendant" else [p.id for p in people]
    rng.shuffle(subjects)
    for subject in subjects:
        q = _candidates(params.question, subject, search, rng, None, accept)
        if q is not None:
            return q
    return None


def generate(params: GraphParams, pack: KinshipPack, rng: random.Random, names: NameSampler) -> KinGraph:
    """Draw a family graph and a question with exactly one correct answer, then `verify` it.

    Names are drawn from `names` only once a valid graph is found, so retries waste no names.
    """
    for _attempt in range(params.attempts):
        draft = _build(params, pack, rng)
        ids = [f"p{i}" for i in range(len(draft.genders))]
        provisional = [Person(ids[i], ids[i], g, draft.levels[i]) for i, g in enumerate(draft.genders)]
        edges = [
            Edge(f"e{k}", ids[e], ids[y], t.id, t.generations, t.lineage) for k, (e, y, t) in enumerate(draft.edges)
        ]
        chain = [ids[i] for i in draft.chain]
        question = _ask(params, provisional, chain, edges, rng)
        if question is None:
            continue
        people = tuple(Person(p.id, names.draw(p.gender), p.gender, p.level) for p in provisional)
        graph = KinGraph(
            topology=params.topology,
            steps=params.steps,
            gender_mode=params.gender,
            language=pack.language,
            people=people,
            edges=tuple(edges),
            root=chain[0],
            chain=tuple(chain),
            question=question,
        )
        verify(graph, pack)
        return graph
    raise AtcGraphError(
        f"no {params.question} question with exactly one answer was found for a {params.topology} of "
        f"{params.steps} steps (subject={params.subject}) in {params.attempts} attempts"
    )


def verify(graph: KinGraph, pack: KinshipPack) -> None:
    """Check by graph search that the question has exactly one correct answer and the proof is its path.

    Also checks unique names, consistent generation counts, and (in `consistent` mode) that every
    ancestor term matches the elder's gender. Raises `AtcGraphError` with the reason otherwise.
    """
    names = graph.names()
    if len(set(names)) != len(names):
        raise AtcGraphError("a name repeats among the people of one item")
    if len(graph.edges) != graph.steps:
        raise AtcGraphError(f"{len(graph.edges)} edges for {graph.steps} steps")
    for e in graph.edges:
        term = pack.term(e.term)
        if term.generations != e.generations:
            raise AtcGraphError(f"edge {e.id}: term {e.term} spans {term.generations} generations, not {e.generations}")
        if graph.gender_mode == "consistent" and term.gender not in ("either", graph.person(e.elder).gender):
            raise AtcGraphError(f"edge {e.id}: term {e.term} does not fit {graph.person(e.elder).name}'s gender")
    _verify_shape(graph)
    q = graph.question
    search = _Search(graph.edges)
    upward = q.type != "nth_descendant"
    found = search.reach(q.subject, upward)
    for person, dists in found.items():
        if len(dists) != 1:
            raise AtcGraphError(f"{person} is reachable at several generation distances {sorted(dists)}")
    dist = {p: next(iter(d)) for p, d in found.items()}
    if q.type == "eldest_ancestor":
        top = max(dist.values(), default=0)
        correct = [p for p, d in dist.items() if d == top]
        target = q.answer
    elif q.type in ("nth_ancestor", "nth_descendant"):
        correct = [p for p, d in dist.items() if d == q.n]
        target = q.answer
    else:
        if q.other is None or q.other not in dist:
            raise AtcGraphError("the distance question's other person is not an ancestor of the subject")
        correct = [str(dist[q.other])]
        target = q.other
    if correct != [q.answer]:
        raise AtcGraphError(f"{len(correct)} correct answers {correct} for a {q.type} question, recorded {q.answer!r}")
    paths = search.paths(q.subject, target, upward)
    if len(paths) != 1 or paths[0] != q.proof:
        raise AtcGraphError(f"the proof path {list(q.proof)} is not the unique path from the subject to the answer")
    if not shape_on_path(graph.topology, graph.edges, q.proof):
        raise AtcGraphError(f"the proof path of this {graph.topology} does not show its shape")


def _verify_shape(graph: KinGraph) -> None:
    """The whole graph has its declared shape: a chain is one line, a tree branches, a DAG has a couple."""
    parents: dict[str, int] = {}
    children: dict[str, int] = {}
    for e in graph.edges:
        parents[e.younger] = parents.get(e.younger, 0) + 1
        children[e.elder] = children.get(e.elder, 0) + 1
    most_parents = max(parents.values(), default=0)
    most_children = max(children.values(), default=0)
    roots = [p.id for p in graph.people if p.id not in parents]
    if graph.root not in roots or (graph.topology != "dag" and roots != [graph.root]):
        # a DAG's partners have no recorded parents; a chain or tree has one root only
        raise AtcGraphError(f"the {graph.topology} has roots {roots}, which does not fit its root {graph.root}")
    if graph.topology == "chain" and (most_parents > 1 or most_children > 1):
        raise AtcGraphError("the chain is not a single line of descent")
    if graph.topology == "tree" and (most_parents > 1 or most_children < 2):
        raise AtcGraphError("the tree has a person with two parents, or no branch")
    if graph.topology == "dag" and most_parents < 2:
        raise AtcGraphError("the DAG has no person with two parents")
