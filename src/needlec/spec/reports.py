"""The spec's `reports:` mapping: which aggregates `needlec score` reports for a benchmark.

A compiled dataset records the mapping per config in its manifest, so scoring a runner's
responses later needs nothing but the dataset: the headline effective-length rule, its
threshold and the baseline of relative rules travel with the data.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, model_validator

from needlec.spec.base import KeyedValueError, StrictModel

ReportName = Literal[
    "by_length",
    "by_depth",
    "heatmap",
    "position",
    "degradation_slope",
    "effective_length",
    "languages",
    "existence",
    "circular",
    "needlebench_overall",
    "atc_weighted",
]
REPORT_NAMES: tuple[str, ...] = get_args(ReportName)

RULE_DEFAULTS = {"ruler": 85.6, "lesson": 0.85, "nolima": 0.85, "mlneedle": 0.75}


class EffectiveLengthReport(StrictModel):
    """The effective-length rule shown as the headline, and its threshold."""

    rule: Literal["ruler", "lesson", "nolima", "mlneedle", "none"] = Field(
        "ruler",
        description="Headline rule: `ruler` (mean >= an absolute threshold in points), `lesson` (middle-band "
        "mean >= 100 x tau), `nolima` (mean >= ratio x the base score), `mlneedle` (mean >= ratio x the "
        "baseline; needs `baseline`) or `none` (the benchmark defines no effective length: no headline).",
    )
    threshold: float | None = Field(
        None,
        gt=0,
        description="The rule's parameter: points for `ruler` (85.6), tau for `lesson` (0.85), the ratio for "
        "`nolima` (0.85) and `mlneedle` (0.75). Null means the rule's default.",
        examples=[80.0, 0.75],
    )

    @model_validator(mode="after")
    def _ratio(self) -> EffectiveLengthReport:
        if self.rule == "none" and self.threshold is not None:
            raise KeyedValueError("rule `none` takes no threshold", "threshold")
        if self.rule != "ruler" and self.threshold is not None and self.threshold > 1:
            raise KeyedValueError(f"the {self.rule} threshold is a ratio in (0, 1]", "threshold")
        if self.rule == "ruler" and self.threshold is not None and self.threshold > 100:
            raise KeyedValueError("the ruler threshold is in points, at most 100", "threshold")
        return self

    def value(self) -> float:
        """The threshold in effect (the rule's default when none is given; 0 for rule `none`)."""
        if self.threshold is not None:
            return self.threshold
        return RULE_DEFAULTS.get(self.rule, 0.0)


class BaselineReport(StrictModel):
    """Where the baseline of relative rules (MLNeedle's 0.75 x baseline) comes from: a config, a
    length, or the dataset's items compiled without distractors."""

    config: str | None = Field(
        None,
        description="A config of the same dataset (e.g. a no-distractor config): its mean score is the "
        "baseline of every config that names it.",
        examples=["baseline"],
    )
    length: int | None = Field(
        None,
        ge=1,
        description="A grid length of this config: the mean of its items is the baseline, and that length "
        "is left out of the curve the relative rule is applied to.",
        examples=[250],
    )

    items: Literal["no_distractors"] | None = Field(
        None,
        description="`no_distractors`: the items of the same task compiled without distractors (a "
        "`passages` builder with `distractors: false`) whose needle and question languages are this "
        "config's; their mean is the baseline. MLNeedle's default: each language cell gets its own baseline.",
        examples=["no_distractors"],
    )

    @model_validator(mode="after")
    def _one(self) -> BaselineReport:
        if sum(v is not None for v in (self.config, self.length, self.items)) != 1:
            raise KeyedValueError("give exactly one of `config`, `length` and `items`")
        return self


class ReportsSpec(StrictModel):
    """What `needlec score` (and the results pages) show for this benchmark."""

    show: list[ReportName] | None = Field(
        None,
        description="Aggregates to report per config, in any order; the overall mean, its interval and n are "
        "always there. Null means every aggregate that applies to the items.",
        examples=[["heatmap", "by_length", "effective_length"]],
    )
    effective_length: EffectiveLengthReport = Field(
        default_factory=EffectiveLengthReport,  # type: ignore[arg-type]
        description="The headline effective-length rule and its threshold.",
    )
    baseline: BaselineReport | None = Field(
        None,
        description="Baseline for relative rules (`mlneedle`); null: no baseline, the `mlneedle` rule is not computed.",
        examples=[{"config": "baseline"}, {"length": 250}, {"items": "no_distractors"}],
    )

    @model_validator(mode="after")
    def _consistent(self) -> ReportsSpec:
        if self.effective_length.rule == "mlneedle" and self.baseline is None:
            raise KeyedValueError("the mlneedle rule needs a `baseline` (a config, a length or items)", "baseline")
        if self.show is not None and len(set(self.show)) != len(self.show):
            raise KeyedValueError("`show` names an aggregate twice", "show")
        return self

    def shows(self, name: str) -> bool:
        """Whether aggregate `name` is reported."""
        return self.show is None or name in self.show
