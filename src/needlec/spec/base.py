"""Base class of every spec model: strict (unknown keys are errors) and immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A spec mapping: unknown keys are rejected, values are frozen after validation."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=False)
