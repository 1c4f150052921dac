"""Texts a filter can take from the spec itself, by group: needles, questions, answers and more.

Every case of the spec's needle kind is drawn a few times with different seeds; a text that is
the same in every draw is fixed by the spec and can be filtered on, while one that changes (a
passkey, a character name drawn per item) cannot be known in advance and is left out. Groups:
`needles`, `questions`, `answers`, `distractors` and `forbidden` (the fields of a draw), and one
group per template value that is fixed per case (for NoLiMa-style needles `w_q` and `w_n`, the
question and needle keywords). A needle kind may add groups by defining
`filter_terms() -> dict[str, list[str]]`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from needlec.errors import NeedlecError
from needlec.registry import did_you_mean

if TYPE_CHECKING:
    from needlec.spec.models import Spec

DRAW_FIELDS = ("needles", "questions", "answers", "distractors", "forbidden")
ALIASES = {"needle": "needles", "question": "questions", "answer": "answers", "distractor": "distractors"}
SEEDS = (0, 1, 2)


def available_terms(spec: Spec) -> dict[str, list[str]]:
    """Every group of fixed texts the spec's needle kind gives, each sorted and unique."""
    from needlec.kinds.base import needle_kind

    kind = needle_kind(spec.needle)
    groups: dict[str, set[str]] = {name: set() for name in DRAW_FIELDS}
    for case in kind.cases():
        draws = [kind.draw(case, random.Random(seed)) for seed in SEEDS]
        fields = [
            {
                "needles": list(d.needles),
                "questions": [d.question],
                "answers": [alias for fact in d.answers for alias in fact],
                "distractors": list(getattr(d, "distractors", ())),
                "forbidden": list(getattr(d, "forbidden", ())),
            }
            for d in draws
        ]
        for name in DRAW_FIELDS:
            stable = set(fields[0][name]).intersection(*(f[name] for f in fields[1:]))
            groups[name].update(t for t in stable if t.strip())
        for name, value in draws[0].values.items():
            if value.strip() and all(d.values.get(name) == value for d in draws[1:]):
                groups.setdefault(name, set()).add(value)
    for name, texts in kind.filter_terms().items():
        groups.setdefault(name, set()).update(t for t in texts if t.strip())
    return {name: sorted(texts) for name, texts in sorted(groups.items())}


def spec_terms(spec: Spec, groups: Sequence[str]) -> dict[str, list[str]]:
    """The requested groups; an unknown group name is an error with a suggestion."""
    if not groups:
        return {}
    available = available_terms(spec)
    out = {}
    for group in groups:
        name = ALIASES.get(group, group)
        if name not in available:
            raise NeedlecError(
                f"from_spec: the needle kind {spec.needle.type!r} has no "
                f"group {group!r}{did_you_mean(group, available)} "
                f"(groups: {', '.join(available)})"
            )
        out[name] = available[name]
    return out
