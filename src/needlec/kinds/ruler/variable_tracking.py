"""Variable tracking (RULER VT): chains of assignments hidden in a haystack, with distractor chains.

Two modes:

- `alias_chain` (RULER): "VAR QKZTB = 48213", then "VAR MWPAX = VAR QKZTB", ... ; the question asks
  for every variable that holds the queried value, so the answer is every name of the first chain.
- `final_value`: one variable is reassigned fresh values ("VAR QKZTB = 48213", later
  "VAR QKZTB = 70562"); the question asks for its value after the last assignment.

Names (uppercase letters) and values (5-digit numbers) are distinct within an item, so a
distractor chain can never hold the queried value. Statements of different chains interleave at
random but keep their order within a chain. Every assignment is recorded as data, and the answer
follows from those records alone.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from needlec.kinds.ruler.common import DistinctPool, Exclusion, RulerGenerationError

VariableMode = Literal["alias_chain", "final_value"]


@dataclass(frozen=True)
class VariableWording:
    """Templates of a variable-tracking item; fields: {name}, {source}, {value}, {count}."""

    assign_value: str = "VAR {name} = {value}."
    assign_variable: str = "VAR {name} = VAR {source}."
    instruction: str = "Keep track of the variable assignments hidden in the text below."
    question_alias: str = "Which variables are assigned the value {value}? Name all of them."
    answer_prefix_alias_counted: str = "Answer: the {count} variables assigned the value {value} are:"
    answer_prefix_alias: str = "Answer: the variables assigned the value {value} are:"
    question_final: str = "What is the value of VAR {name} after its last assignment?"
    answer_prefix_final: str = "Answer: after its last assignment, VAR {name} holds"


@dataclass(frozen=True)
class VariableSpec:
    """Parameters of a variable-tracking task (RULER: 1 chain, 4 hops, 5-letter names)."""

    mode: VariableMode = "alias_chain"
    num_chains: int = 1
    """Chains in the item; chain 0 is queried, the others are distractor chains."""
    num_hops: int = 4
    """Alias mode: assignments after the first (so hops + 1 variables); final-value mode: reassignments."""
    name_length: int = 5
    reveal_count: bool = True
    """Alias mode: state the number of variables in the answer prefix, as RULER does."""
    wording: VariableWording = field(default_factory=VariableWording)


@dataclass(frozen=True)
class Assignment:
    """One statement: `target` gets a literal value, or the value of the variable `source`."""

    chain: int
    target: str
    value: str | None
    source: str | None
    text: str


@dataclass(frozen=True)
class VariableItem:
    """A drawn variable-tracking item; `statements` are in insertion order (chains interleaved)."""

    mode: VariableMode
    statements: tuple[Assignment, ...]
    chains: tuple[tuple[Assignment, ...], ...]
    query: str
    """The queried value (alias mode) or the queried variable name (final-value mode)."""
    answers: tuple[tuple[str, ...], ...]
    instruction: str
    question: str
    answer_prefix: str


def _name_maker(length: int) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        return "".join(rng.choice(string.ascii_uppercase) for _ in range(length))

    return make


def _value(rng: random.Random) -> str:
    return str(rng.randint(10_000, 99_999))


def interleave(rng: random.Random, chains: Sequence[Sequence[Assignment]]) -> list[Assignment]:
    """Merge chains into one random order that keeps each chain's own order.

    Each step takes the next statement of a chain chosen with probability proportional to its
    remaining statements, which makes every order-preserving merge equally likely.
    """
    positions = [0] * len(chains)
    merged: list[Assignment] = []
    remaining = sum(len(chain) for chain in chains)
    while remaining:
        pick = rng.randrange(remaining)
        for index, chain in enumerate(chains):
            left = len(chain) - positions[index]
            if pick < left:
                merged.append(chain[positions[index]])
                positions[index] += 1
                break
            pick -= left
        remaining -= 1
    return merged


def generate_variable_tracking(
    rng: random.Random, spec: VariableSpec, exclude: Sequence[str] | Exclusion = ()
) -> VariableItem:
    """Draw one variable-tracking item; `exclude` lists names and values that must not be used
    (words of the haystack, the few-shot example's names and values)."""
    if spec.num_chains < 1 or spec.num_hops < 1 or spec.name_length < 2:
        raise RulerGenerationError("variable tracking needs >= 1 chain, >= 1 hop and names of >= 2 letters")
    pool = DistinctPool(rng, exclude)
    make_name = _name_maker(spec.name_length)
    wording = spec.wording
    chains: list[tuple[Assignment, ...]] = []
    for chain in range(spec.num_chains):
        statements: list[Assignment] = []
        if spec.mode == "alias_chain":
            names = [pool.draw(make_name, "variable name") for _ in range(spec.num_hops + 1)]
            value = pool.draw(_value, "value")
            statements.append(
                Assignment(chain, names[0], value, None, wording.assign_value.format(name=names[0], value=value))
            )
            for previous, name in itertools.pairwise(names):
                text = wording.assign_variable.format(name=name, source=previous)
                statements.append(Assignment(chain, name, None, previous, text))
        elif spec.mode == "final_value":
            name = pool.draw(make_name, "variable name")
            for _ in range(spec.num_hops + 1):
                value = pool.draw(_value, "value")
                statements.append(
                    Assignment(chain, name, value, None, wording.assign_value.format(name=name, value=value))
                )
        else:
            raise RulerGenerationError(f"unknown variable-tracking mode {spec.mode!r}")
        chains.append(tuple(statements))
    merged = interleave(rng, chains)
    first = chains[0]
    if spec.mode == "alias_chain":
        query = first[0].value or ""
        answers = tuple((statement.target,) for statement in first)
        question = wording.question_alias.format(value=query)
        prefix_template = wording.answer_prefix_alias_counted if spec.reveal_count else wording.answer_prefix_alias
        prefix = prefix_template.format(value=query, count=len(answers))
    else:
        query = first[0].target
        answers = ((first[-1].value or "",),)
        question = wording.question_final.format(name=query)
        prefix = wording.answer_prefix_final.format(name=query)
    return VariableItem(
        mode=spec.mode,
        statements=tuple(merged),
        chains=tuple(chains),
        query=query,
        answers=answers,
        instruction=wording.instruction,
        question=question,
        answer_prefix=prefix,
    )


def used_strings(item: VariableItem) -> list[str]:
    """Every name and value of an item, to exclude from its few-shot example (or the reverse)."""
    out: list[str] = []
    for statement in item.statements:
        out.append(statement.target)
        if statement.value is not None:
            out.append(statement.value)
    return out
