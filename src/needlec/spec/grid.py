"""The grid of context lengths and needle depths, and how ranges expand into points."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from needlec.spec.base import KeyedValueError, StrictModel

MAX_GRID_POINTS = 10_000
"""Most points one grid axis may have; the compile-size limit bounds the whole product."""


class LengthRange(StrictModel):
    """Context lengths spread between `min` and `max` (both included)."""

    min: int = Field(gt=0, description="Smallest context length in tokens.", examples=[1000])
    max: int = Field(gt=0, description="Largest context length in tokens.", examples=[128000])
    count: int = Field(
        ge=1, le=MAX_GRID_POINTS, description="How many lengths to generate (at most 10,000).", examples=[8]
    )
    spacing: Literal["linear", "log"] = Field(
        "linear",
        description="`linear` spaces lengths evenly; `log` spaces them geometrically "
        "(equal ratios), which suits ranges like 1K..128K.",
    )

    @field_validator("max")
    @classmethod
    def _ordered(cls, value: int, info: ValidationInfo) -> int:  # a field's check: reported with the others
        if value < info.data.get("min", value):
            raise KeyedValueError("`max` must be at least `min`", "max")
        return value

    def expand(self) -> list[int]:
        if self.count == 1:
            return [self.min]
        if self.spacing == "log":
            lo, hi = math.log(self.min), math.log(self.max)
            points = [math.exp(lo + (hi - lo) * i / (self.count - 1)) for i in range(self.count)]
        else:
            points = [self.min + (self.max - self.min) * i / (self.count - 1) for i in range(self.count)]
        return sorted({round(p) for p in points})


class DepthRange(StrictModel):
    """Needle depths (percent of the context) spread from `start` to `stop` (both included)."""

    start: float = Field(0.0, ge=0, le=100, description="First depth, in percent.")
    stop: float = Field(100.0, ge=0, le=100, description="Last depth, in percent.")
    count: int = Field(
        ge=1, le=MAX_GRID_POINTS, description="How many depths to generate (at most 10,000).", examples=[11]
    )
    spacing: Literal["linear", "sigmoid"] = Field(
        "linear",
        description="`linear` spaces depths evenly; `sigmoid` follows a logistic curve, "
        "which puts more points near both ends of the range (where models change most) and keeps "
        "the order increasing from `start` to `stop`.",
    )
    steepness: float = Field(
        10.0,
        gt=0,
        description="Slope of the `sigmoid` curve; larger values "
        "cluster points more tightly at the ends. Ignored for `linear`.",
    )

    @field_validator("stop")
    @classmethod
    def _ordered(cls, value: float, info: ValidationInfo) -> float:  # a field's check: reported with the others
        if value < info.data.get("start", value):
            raise KeyedValueError("`stop` must be at least `start`", "stop")
        return value

    def expand(self) -> list[float]:
        if self.count == 1:
            return [round(self.start, 4)]
        ts = [i / (self.count - 1) for i in range(self.count)]
        if self.spacing == "sigmoid":
            k = self.steepness

            def logistic(t: float) -> float:
                return 1.0 / (1.0 + math.exp(-k * (t - 0.5)))

            lo, hi = logistic(0.0), logistic(1.0)
            ts = [(logistic(t) - lo) / (hi - lo) for t in ts]
        span = self.stop - self.start
        return sorted({round(self.start + span * t, 4) for t in ts})


class Grid(StrictModel):
    """The lengths x depths x repeats grid that every config of the spec is compiled over."""

    lengths: list[int] | LengthRange = Field(
        description="Target context lengths in tokens: a list, or a range with `min`, `max`, `count` and `spacing`.",
        examples=[[1000, 2000, 4000], {"min": 1000, "max": 128000, "count": 8, "spacing": "log"}],
    )
    depths: list[float] | DepthRange = Field(
        default_factory=lambda: [0.0, 25.0, 50.0, 75.0, 100.0],
        description="Target needle depths in percent of the context (0 = first token, 100 = "
        "end): a list, or a range with `start`, `stop`, `count` and `spacing`.",
        examples=[[0, 50, 100], {"start": 0, "stop": 100, "count": 11, "spacing": "sigmoid"}],
    )
    repeats: int = Field(
        1,
        ge=1,
        le=MAX_GRID_POINTS,
        description="Samples per grid cell (at most 10,000). Each repeat draws its own "
        "random values (e.g. a new passkey, a new haystack start).",
    )

    # each axis checked by its own field validator, so that a bad length and a bad depth are reported together;
    # every bad point of an axis in one message, at the first
    @field_validator("lengths")
    @classmethod
    def _check_lengths(cls, lengths: list[int] | LengthRange) -> list[int] | LengthRange:
        if isinstance(lengths, list):
            if not lengths:
                raise KeyedValueError("`lengths` must not be empty", "lengths")
            if len(lengths) > MAX_GRID_POINTS:
                raise KeyedValueError(f"at most {MAX_GRID_POINTS} lengths", "lengths")
            short = [(i, float(v)) for i, v in enumerate(lengths) if v <= 0]
            if short:
                raise KeyedValueError(
                    f"every length must be a positive number of tokens, got {_listed(short, 'lengths')}",
                    "lengths",
                    short[0][0],
                )
        return lengths

    @field_validator("depths")
    @classmethod
    def _check_depths(cls, depths: list[float] | DepthRange) -> list[float] | DepthRange:
        if isinstance(depths, list):
            if not depths:
                raise KeyedValueError("`depths` must not be empty", "depths")
            if len(depths) > MAX_GRID_POINTS:
                raise KeyedValueError(f"at most {MAX_GRID_POINTS} depths", "depths")
            bad = [(i, d) for i, d in enumerate(depths) if not 0 <= d <= 100]
            if bad:
                raise KeyedValueError(
                    f"every depth must be between 0 and 100, got {_listed(bad, 'depths')}", "depths", bad[0][0]
                )
        return depths

    def length_points(self) -> list[int]:
        if isinstance(self.lengths, LengthRange):
            return self.lengths.expand()
        return sorted(set(self.lengths))

    def depth_points(self) -> list[float]:
        if isinstance(self.depths, DepthRange):
            return self.depths.expand()
        return sorted({round(float(d), 4) for d in self.depths})


def _listed(bad: Sequence[tuple[int, float]], key: str) -> str:
    """`150` for one bad point, else `150 (depths[1]) and -5 (depths[2])`: every one, where it is."""
    if len(bad) == 1:
        return f"{bad[0][1]:g}"
    parts = [f"{v:g} ({key}[{i}])" for i, v in bad[:10]]
    if len(bad) > 10:
        return ", ".join(parts) + f" and {len(bad) - 10} more"
    return ", ".join(parts[:-1]) + f" and {parts[-1]}"
