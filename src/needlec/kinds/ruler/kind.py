"""The `ruler` needle kind: one of RULER's synthetic tasks, drawn by the pure generators of this package.

`task:` picks a row of `tasks.TASKS`; the optional fields override that row's parameters. What the
draw puts where:

- NIAH tasks: each value of each queried key is a target needle; the needles of the other keys
  (multi-key) are distractors. All strings are fresh within the item and never occur in the
  haystack (`bind_haystacks` collects the haystack's tokens and excludes them).
- `vt`: each assignment statement is a needle; distractor chains are distractors.
- `cwe`: the context is a word list (haystack builder `ruler_words`, mode `cwe`): every haystack
  word occurs a few times; each of the common words is inserted `common_freq` times as needles,
  so the common words are the most frequent whatever the window. Common words come from a
  reserved part of the vocabulary that the builder never uses.
- `fwe`: the context is coded words and the noise token (builder mode `fwe`); the three answer
  words are inserted with strictly decreasing counts above anything the haystack can hold.

`structure` records what an independent check needs (keys, values, chains, counts).
"""

from __future__ import annotations

import bisect
import random
import re
import string
from typing import Any, Literal

from pydantic import Field, model_validator

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.kinds.ruler.common import DistinctPool, RulerGenerationError
from needlec.kinds.ruler.keyvalue import KeyValueSpec, generate_keyvalue
from needlec.kinds.ruler.tasks import TASKS, task
from needlec.kinds.ruler.variable_tracking import VariableSpec, generate_variable_tracking
from needlec.languages.wordlists import cwe_words
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel

TaskName = Literal[
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
    "vt",
    "cwe",
    "fwe",
    "qa_1",
    "qa_2",
]

RESERVED_EVERY = 10
"""Every RESERVED_EVERY-th word of the CWE vocabulary is kept for common words: the builder never
uses these, so a common word's count in the context is exactly its number of needles."""

TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
"""Word-like tokens of a haystack (hyphenated keys and UUIDs included) that draws must avoid."""


def reserved_cwe_words() -> tuple[str, ...]:
    """The CWE words kept for common words (every RESERVED_EVERY-th of the frozen list)."""
    return cwe_words()[::RESERVED_EVERY]


def haystack_cwe_words() -> tuple[str, ...]:
    """The CWE words the `ruler_words` builder may use (all but the reserved ones)."""
    return tuple(word for index, word in enumerate(cwe_words()) if index % RESERVED_EVERY)


def coded_word(rng: random.Random, length: int = 6) -> str:
    """A random lowercase coded word (FWE)."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def _begins_any(prefix: str, ordered: list[str]) -> bool:
    """Whether `prefix` begins any string of the sorted list `ordered` (itself included)."""
    at = bisect.bisect_left(ordered, prefix)
    return at < len(ordered) and ordered[at].startswith(prefix)


class RulerNeedle(StrictModel):
    """A RULER task; the optional fields override the task's parameters from the RULER table."""

    type: Literal["ruler"] = Field("ruler", description="Selects RULER task needles.")
    task: TaskName = Field(
        description="The RULER task: `niah_single_1..3`, `niah_multikey_1..3`, `niah_multivalue`, "
        "`niah_multiquery`, `vt`, `cwe`, `fwe` (`qa_1`/`qa_2` need a QA corpus and are refused).",
        examples=["niah_multikey_1"],
    )
    num_keys: int | None = Field(None, ge=1, le=64, description="NIAH: keys with needles (queried plus distractor).")
    num_values: int | None = Field(None, ge=1, le=64, description="NIAH: values per key, all required.")
    num_queries: int | None = Field(None, ge=1, le=64, description="NIAH: keys asked about in one question.")
    num_chains: int | None = Field(None, ge=1, le=16, description="VT: chains; all but the first are distractors.")
    num_hops: int | None = Field(None, ge=1, le=64, description="VT: assignments after the first in each chain.")
    num_common: int = Field(10, ge=1, le=50, description="CWE: common words (the answers).")
    common_freq: int = Field(
        30,
        ge=2,
        le=500,
        description="CWE: times each common word is inserted; must exceed the haystack's most frequent word.",
    )
    fwe_counts: list[int] = Field(
        default_factory=lambda: [60, 45, 30],
        min_length=1,
        max_length=10,
        description="FWE: occurrences of the answer words, strictly decreasing; the last must exceed the "
        "haystack's most frequent coded word.",
    )
    max_new_tokens: int | None = Field(
        None, ge=1, description="Generation budget; default: RULER's budget for the task's category."
    )

    @model_validator(mode="after")
    def _check(self) -> RulerNeedle:
        if self.task in ("qa_1", "qa_2"):
            raise ValueError(
                f"task {self.task!r} needs a QA corpus with passages and answers, which needlec does not ship yet"
            )
        if any(a <= b for a, b in zip(self.fwe_counts, self.fwe_counts[1:], strict=False)):
            raise ValueError("`fwe_counts` must be strictly decreasing, so the answer has no ties")
        return self


class RulerKind(NeedleKindBase):
    """Draws one item of the configured RULER task; see the module docstring for the layout."""

    def __init__(self, config: RulerNeedle) -> None:
        self.config = config
        self.task = task(config.task)
        self.exclude: frozenset[str] = frozenset()
        # before `bind_haystacks` (the spec's preflight draw) every reserved word may serve
        self.common_pool: tuple[str, ...] = reserved_cwe_words() if self.task.category == "cwe" else ()

    def default_reports(self) -> dict[str, Any] | None:
        """RULER's headline: the largest length whose mean reaches the 85.6-point threshold."""
        return {"effective_length": {"rule": "ruler"}}

    def cases(self) -> list[str]:
        return [self.config.task]

    def bind_haystacks(self, texts: list[str]) -> dict[str, object]:
        """Collect the haystacks' tokens (never drawn as keys, values, names or words) and record the
        word lists' sha256 for the manifest."""
        from needlec.languages.wordlists import manifest

        tokens: set[str] = set()
        for text in texts:
            tokens.update(TOKEN.findall(text))
        self.exclude = frozenset(tokens)
        if self.task.category == "cwe":
            ordered = sorted(tokens)
            # a common word must not begin any haystack word: a window cut mid-word could
            # otherwise add an occurrence
            self.common_pool = tuple(word for word in reserved_cwe_words() if not _begins_any(word, ordered))
        lists = manifest()["lists"]
        return {
            "ruler_task": self.config.task,
            "wordlists": {name: lists[name]["sha256"] for name in sorted(lists)},
        }

    def _budget(self) -> int:
        return self.config.max_new_tokens or self.task.max_new_tokens

    def draw(self, case: str, rng: random.Random) -> Draw:
        category = self.task.category
        if category == "niah":
            return self._niah(case, rng)
        if category == "vt":
            return self._vt(case, rng)
        if category == "cwe":
            return self._cwe(case, rng)
        return self._fwe(case, rng)

    def _common(self, case: str, answers: list[str], question: str, prefix: str, instruction: str) -> dict[str, Any]:
        return {
            "case": case,
            "question": question,
            "answers": tuple((a,) for a in answers),
            "values": {"instruction": instruction, "answer_prefix": prefix},
            "task": self.config.task,
            "max_new_tokens": self._budget(),
            "scoring": {"metric": self.task.metric},
        }

    def _niah(self, case: str, rng: random.Random) -> Draw:
        base = self.task.generator
        assert isinstance(base, KeyValueSpec)
        c = self.config
        queries = c.num_queries or base.num_queries
        spec = KeyValueSpec(
            key_kind=base.key_kind,
            value_kind=base.value_kind,
            num_keys=max(c.num_keys or base.num_keys, queries),
            num_values=c.num_values or base.num_values,
            num_queries=queries,
        )
        item = generate_keyvalue(rng, spec, exclude=tuple(self.exclude))
        targets = [n for n in item.needles if n.role == "target"]
        others = [n for n in item.needles if n.role == "distractor"]
        answers = [fact[0] for fact in item.answers]
        return Draw(
            needles=tuple(n.text for n in targets),
            distractors=tuple(n.text for n in others),
            forbidden=tuple(sorted({n.key for n in item.needles} | {n.value for n in item.needles})),
            structure={
                "queries": list(item.queries),
                "needles": [{"key": n.key, "value": n.value} for n in targets],
                "distractors": [{"key": n.key, "value": n.value} for n in others],
                "key_kind": spec.key_kind,
                "value_kind": spec.value_kind,
            },
            **self._common(case, answers, item.question, item.answer_prefix, item.instruction),
        )

    def _vt(self, case: str, rng: random.Random) -> Draw:
        base = self.task.generator
        assert isinstance(base, VariableSpec)
        spec = VariableSpec(
            mode=base.mode,
            num_chains=self.config.num_chains or base.num_chains,
            num_hops=self.config.num_hops or base.num_hops,
            name_length=base.name_length,
            reveal_count=base.reveal_count,
        )
        item = generate_variable_tracking(rng, spec, exclude=tuple(self.exclude))
        targets = [s for s in item.statements if s.chain == 0]
        others = [s for s in item.statements if s.chain != 0]
        answers = [fact[0] for fact in item.answers]
        names = {s.target for s in item.statements}
        return Draw(
            needles=tuple(s.text for s in targets),
            distractors=tuple(s.text for s in others),
            forbidden=tuple(sorted(names | {item.query})),
            structure={
                "mode": spec.mode,
                "query": item.query,
                "chains": [
                    [{"target": s.target, "value": s.value, "source": s.source} for s in chain] for chain in item.chains
                ],
            },
            **self._common(case, answers, item.question, item.answer_prefix, item.instruction),
        )

    def _cwe(self, case: str, rng: random.Random) -> Draw:
        c = self.config
        pool = [w for w in self.common_pool if w not in self.exclude]
        common: list[str] = []
        for word in rng.sample(pool, len(pool)):
            if not any(word in other or other in word for other in common):
                common.append(word)
                if len(common) == c.num_common:
                    break
        if len(common) < c.num_common:
            raise RulerGenerationError(f"only {len(common)} reserved words can serve as common words")
        sequence = [word for word in common for _ in range(c.common_freq)]
        rng.shuffle(sequence)
        count = c.num_common
        return Draw(
            needles=tuple(sequence),
            structure={"common": common, "common_freq": c.common_freq},
            **self._common(
                case,
                common,
                f"Which {count} words occur most often in the list above?",
                f"Answer: the {count} most frequent words in the list are:",
                "Below is a list of words, one per line. A few of them occur far more often than the rest.",
            ),
        )

    def _fwe(self, case: str, rng: random.Random) -> Draw:
        counts = self.config.fwe_counts
        pool = DistinctPool(rng, tuple(self.exclude) + tuple(cwe_words()))
        words = [pool.draw(coded_word, "coded word") for _ in counts]
        sequence = [word for word, n in zip(words, counts, strict=True) for _ in range(n)]
        rng.shuffle(sequence)
        count = len(words)
        return Draw(
            needles=tuple(sequence),
            structure={
                "answer_counts": [{"word": w, "count": n} for w, n in zip(words, counts, strict=True)],
                "noise_token": "...",
            },
            **self._common(
                case,
                words,
                f"Which {count} coded words occur most often in the text above? Ignore the dots.",
                f"Answer: the {count} most frequent coded words are:",
                "Below is a text of coded words, one per line, mixed with lines of dots that are only noise.",
            ),
        )


NEEDLES.register("ruler", RulerNeedle)(RulerKind)

__all__ = ["TASKS", "RulerKind", "RulerNeedle", "coded_word", "haystack_cwe_words", "reserved_cwe_words"]
