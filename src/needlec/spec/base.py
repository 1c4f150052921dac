"""Base class of every spec model: strict (unknown keys are errors) and immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A spec mapping: unknown keys are rejected, values are frozen after validation."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=False, defer_build=True)


class KeyedValueError(ValueError):
    """A validator's error about one key below the model, so the report names that key and its line.

    `key_path` is relative to the model that raised it, e.g. `("depths", 2)` from the grid.
    """

    def __init__(self, message: str, *key_path: str | int) -> None:
        super().__init__(message)
        self.key_path: tuple[str | int, ...] = key_path
