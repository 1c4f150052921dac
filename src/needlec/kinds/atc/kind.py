"""The `atc` needle kind: Ancestral Trace Challenge kinship facts as needles, in a haystack or alone.

Each item draws a checked family graph (`graph.generate`), renders one needle per kinship fact
(`render.render_items`) and asks one question about it. The kind's cases are one per step count,
times the four CircularEval rotations for multiple choice (`s5-q@0` .. `s5-q@3`); the rotations of
one question share the item seed (`seed_case`), so they share the graph, the haystack window and the
draw, and differ only in the order of the options.

The few-shot examples and the option block reach the prompt through the item's values
(`{{ few_shot }}`, `{{ options }}`, `{{ facts }}`); `{{ question }}` holds the question with its
options and answer instruction.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from needlec.kinds.atc.graph import (
    MAX_STEPS,
    MIN_TOPOLOGY_STEPS,
    GenderMode,
    GraphParams,
    NameSampler,
    QuestionType,
    SubjectMode,
    Topology,
    generate,
)
from needlec.kinds.atc.render import (
    DEFAULT_SHOT_STEPS,
    MAX_SHOTS,
    AnswerFormat,
    OptionPolicy,
    Order,
    ShotStyle,
    fill,
    render_items,
)
from needlec.kinds.base import Draw, NeedleKindBase
from needlec.languages.kinship import load_pack
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel

ROTATIONS = 4


class AtcNeedle(StrictModel):
    """Kinship facts from one checked family graph per item, and one question about them."""

    type: Literal["atc"] = Field(description="Selects Ancestral Trace Challenge needles.")
    language: Literal["en", "zh"] = Field("en", description="Language pack of the facts, question and examples.")
    topology: Topology = Field(
        "chain",
        description="`chain` (one line of descent), `tree` (plus sibling and cousin branches, one of them "
        "off the question's proof path; at least 2 steps) or `dag` (people with two parents, one of them on "
        "the proof path; at least 3 steps).",
    )
    steps: list[int] = Field(
        min_length=1,
        description="Numbers of kinship sentences per item (1 to 512), one case each. A v1 label of N "
        "people on a chain is `steps: N - 1`.",
        examples=[[2, 4, 8, 16], list(range(1, 19))],
    )
    question: QuestionType = Field(
        "eldest_ancestor",
        description="`eldest_ancestor`, `nth_ancestor`, `nth_descendant` or `distance` (generations between "
        "the subject and a named ancestor).",
    )
    subject: SubjectMode = Field(
        "sampled",
        description="`sampled`: the queried person and n are drawn along the graph; `end`: ask about the "
        "ends of the main line, as the reference data does.",
    )
    answer_format: AnswerFormat = Field(
        "multiple_choice",
        description="`multiple_choice` (four options in four CircularEval rotations, one item each) or "
        "`open` (the answer inside `\\boxed{}`, one item).",
    )
    distractors: OptionPolicy = Field(
        "chain_neighbors",
        description="How the three wrong options are chosen: `chain_neighbors` (people next to the answer on "
        "the proof path, as the reference), `graph_random` (other people of the graph) or `absent` (names "
        "that occur nowhere in the item).",
    )
    gender: GenderMode = Field(
        "consistent",
        description="`consistent`: kinship terms fit the gender of the person they name; `random`: terms are "
        "drawn regardless (as the reference data), and the question says so.",
    )
    shots: int = Field(0, ge=0, le=MAX_SHOTS, description="Solved few-shot examples per item (0 to 4).")
    shot_style: ShotStyle = Field(
        "direct",
        description="`direct`: examples give the answer only; `reasoning`: examples walk the proof path first.",
    )
    shot_steps: list[int] = Field(
        default_factory=lambda: list(DEFAULT_SHOT_STEPS),
        min_length=1,
        description="Sentences of the few-shot examples' chains, used in turn.",
    )
    order: Order = Field("shuffled", description="`shuffled` facts, or `ordered` from the eldest generation down.")
    step_label: Literal["steps", "v1_people"] = Field(
        "steps",
        description="The step number recorded for the step-weighted score (`structure.score_step`): `steps` "
        "(sentences) or `v1_people` (sentences + 1, the OpenCompass v1 label of the paper's 2..19 steps).",
    )
    task: str = Field("atc", max_length=64, description="The items' `task` field (at most 64 characters).")

    @field_validator("steps", "shot_steps")
    @classmethod
    def _in_range(cls, value: list[int]) -> list[int]:
        for n in value:
            if not 1 <= n <= MAX_STEPS:
                raise ValueError(f"every step count must be between 1 and {MAX_STEPS}, got {n}")
        return value

    @model_validator(mode="after")
    def _fits_topology(self) -> AtcNeedle:
        least = MIN_TOPOLOGY_STEPS[self.topology]
        small = sorted({n for n in self.steps if n < least})
        if small:
            raise ValueError(
                f"a {self.topology} needs at least {least} kinship sentences per item; steps {small} are too few"
            )
        return self


class AtcKind(NeedleKindBase):
    """Draws one family graph per item and renders its facts, question, options and examples."""

    def __init__(self, config: AtcNeedle) -> None:
        self.config = config

    def _bases(self) -> list[str]:
        return [f"s{n}" for n in dict.fromkeys(self.config.steps)]

    def default_reports(self) -> dict[str, Any] | None:
        """ATC has no depths: accuracy by length (kinship sentences), CircularEval and the step-weighted
        score; it defines no effective length."""
        return {"show": ["by_length", "circular", "atc_weighted"], "effective_length": {"rule": "none"}}

    def cases(self) -> list[str]:
        if self.config.answer_format == "open":
            return self._bases()
        return [f"{base}-q@{r}" for base in self._bases() for r in range(ROTATIONS)]

    def all_case_ids(self) -> list[str]:
        return self.cases()

    def seed_case(self, case: str) -> str:
        return case.split("@")[0]

    def template_vars(self) -> list[str]:
        return ["facts", "few_shot", "options"]

    def draw(self, case: str, rng: random.Random) -> Draw:
        cfg = self.config
        base, _, rot = case.partition("@")
        steps = int(base.split("-")[0][1:])
        pack = load_pack(cfg.language)
        names = NameSampler(pack.names, rng)
        params = GraphParams(
            steps=steps, topology=cfg.topology, question=cfg.question, gender=cfg.gender, subject=cfg.subject
        )
        graph = generate(params, pack, rng, names)
        shot_params = GraphParams(steps=1, question=cfg.question, gender=cfg.gender, subject=cfg.subject)
        rendered = render_items(
            graph,
            pack,
            rng,
            names,
            answer_format=cfg.answer_format,
            policy=cfg.distractors,
            order=cfg.order,
            shots=cfg.shots,
            shot_style=cfg.shot_style,
            shot_params=shot_params,
            shot_steps=tuple(cfg.shot_steps),
        )
        item = rendered[int(rot) if rot else 0]
        joiner = pack.vocabulary.joiner
        structure: dict[str, object] = {
            **item.structure,
            "needle_ids": [s.id for s in item.needles],
            "templates": [s.template for s in item.needles],
            "answer_text": graph.answer_text,
            "score_step": graph.steps + 1 if cfg.step_label == "v1_people" else graph.steps,
            "shots": cfg.shots,
            "shot_style": cfg.shot_style,
            "order": cfg.order,
            "answer_format": cfg.answer_format,
        }
        option_lines = ""
        if item.options is not None:
            structure["permutation"] = list(item.permutation or ())
            structure["option_ids"] = list(item.option_ids or ())
            line = pack.vocabulary.instructions.option_line
            option_lines = "\n".join(fill(line, {"letter": letter, "text": text}) for letter, text in item.options)
        values = {
            "few_shot": item.few_shot,
            "options": option_lines,
            "facts": joiner.join(s.text for s in item.needles),
        }
        answer_aliases = (graph.answer_text,)
        if item.options is None:
            scoring: dict[str, object] = {
                "metric": "final_answer",
                "extract": ["boxed"],
                "then": {"metric": "exact"},
            }
            group = None
        else:
            scoring = {"metric": "circular"}
            group = (base, int(rot), ROTATIONS)
        return Draw(
            case=case,
            needles=tuple(s.text for s in item.needles),
            question=item.question,
            answers=(answer_aliases,),
            values=values,
            languages=tuple(cfg.language for _ in item.needles),
            structure=structure,
            options=item.options or (),
            answer_letter=item.answer_letter,
            group=group,
            scoring=scoring,
            task=cfg.task,
        )


NEEDLES.register("atc", AtcNeedle)(AtcKind)
