"""The `tide_log` haystack source: a made-up harbour log, generated from a seed and a length."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from needlec.haystacks.sources.base import SourceContext, SourceDocument, SourceSpec, SourceText, sha256_of
from needlec.registry import SOURCES

PLACES = ["the north pier", "the breakwater", "the fish market", "the ferry ramp", "the old crane"]
EVENTS = [
    "the water rose past the second painted ring",
    "a gull stole bread from an unattended basket",
    "two rowing boats were hauled up for tarring",
    "the harbour bell was rung for the noon change",
    "fog hid the lighthouse for most of an hour",
    "a crate of lemons was counted twice and signed for",
]


class TideLogSource(SourceSpec):
    """Generated harbour-log entries: one document of `entries` sentences."""

    type: Literal["tide_log"] = Field(description="Selects the generated harbour log.")
    entries: int = Field(400, ge=1, le=100_000, description="Number of log sentences to generate.")
    seed: int = Field(7, description="Seed of the generator; the same seed gives the same text.")

    def preflight(self, context: SourceContext) -> list[str]:
        """Nothing can be missing: the text is generated."""
        return []


@SOURCES.register("tide_log", TideLogSource)
def load_tide_log(config: TideLogSource, context: SourceContext) -> SourceText:
    """Generate the log text."""
    rng = random.Random(config.seed)
    lines = [f"At hour {i % 24} by {rng.choice(PLACES)}, {rng.choice(EVENTS)}." for i in range(config.entries)]
    text = " ".join(lines)
    document = SourceDocument("tide-log", text)
    return SourceText("tide_log", (document,), sha256_of([text.encode()]), f"tide_log(seed={config.seed})")
