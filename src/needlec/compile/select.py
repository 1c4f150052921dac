"""`--select`: parse the command line's `KEY=V1,V2` form and check every value against the grid.

A selection names values of the plan's axes (config, tokenizer, length, depth, haystack,
repeat). Every value must name something the grid holds, so a typo is an error that lists the
valid values and the closest one, never a silent empty compile. Numeric axes accept more
spellings than the canonical one: `4K` / `128k` where exactly one grid length is meant (4,000 or
4,096), inclusive ranges (`repeat=0-9`, `length=1000-8000`), and depths as numbers (`50` is
`50.0`). `resolve_select` returns the values spelled as `ItemKey.select_values` spells them, so
the rest of the compile compares strings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from needlec.compile.plan import Plan
from needlec.errors import NeedlecError
from needlec.haystacks.builders import haystack_builder
from needlec.registry import did_you_mean

SELECT_KEYS = ("config", "tokenizer", "length", "depth", "haystack", "repeat")
NUMERIC = ("length", "depth", "repeat")
SHOWN = 12  # valid values listed in an error before "..."
MAX_VALUE_CHARS = 60  # a value is quoted in an error at most this long


class SelectError(NeedlecError):
    """A `--select` value that names nothing in the grid, or a selection that leaves no item."""


def parse_select(values: Iterable[str]) -> dict[str, list[str]]:
    """The command line's `--select KEY=V1,V2` arguments (repeatable) as key -> raw values."""
    select: dict[str, list[str]] = {}
    for value in values:
        if "=" not in value:
            raise SelectError(f"--select expects KEY=V1,V2 (e.g. length=1000,2000); got {_quote(value)}")
        key, _, items = value.partition("=")
        parts = [v.strip() for v in items.split(",") if v.strip()]
        if not parts:
            raise SelectError(f"--select {_quote(key.strip())} names no value (e.g. {key.strip()}=1000)")
        select.setdefault(key.strip(), []).extend(parts)
    return select


def split_values(values: str | int | float | Iterable[str | int | float]) -> list[str]:
    """The Python API's values as strings: one value, a comma-separated string, or an iterable."""
    if isinstance(values, str | int | float):
        items: list[str | int | float] = [values]
    elif isinstance(values, Iterable) and not isinstance(values, bytes | Mapping):
        items = list(values)
    else:
        raise SelectError(f"a selection's values are a value, a comma-separated string or a list; got {values!r}")
    out: list[str] = []
    for item in items:
        out.extend(v.strip() for v in str(item).split(",") if v.strip())
    return out


@dataclass(frozen=True)
class Axes:
    """Every value each selectable axis takes in some config of the plan, spelled canonically."""

    name: str
    values: dict[str, list[str]]
    lengths: list[int]
    depths: list[float]
    repeats: int

    @classmethod
    def of(cls, plan: Plan) -> Axes:
        configs: list[str] = []
        tokenizers: list[str] = []
        haystacks: list[str] = []
        lengths: set[int] = set()
        depths: set[float] = set()
        repeats = 0
        for config in plan.configs:
            configs.append(config.name)
            tokenizers.extend(t.label for t in config.spec.tokenizers)
            haystacks.extend(haystack_builder(config.spec.haystack.builder).haystack_ids())
            lengths.update(config.spec.grid.length_points())
            depths.update(config.depth_points())
            repeats = max(repeats, config.spec.grid.repeats)
        values = {
            "config": configs,
            "tokenizer": list(dict.fromkeys(tokenizers)),
            "haystack": list(dict.fromkeys(haystacks)),
            "length": [str(n) for n in sorted(lengths)],
            "depth": [f"{d:g}" for d in sorted(depths)],
            "repeat": [str(r) for r in range(repeats)],
        }
        return cls(plan.spec.name, values, sorted(lengths), sorted(depths), repeats)


def resolve_select(plan: Plan, select: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Check a selection against the plan's grid; return it with canonical values.

    Raises SelectError for an unknown key, a value the grid does not hold (listing the valid
    values and the closest match), a range that holds no grid value, or a 4K-style length that
    names none or several grid lengths.
    """
    unknown = [k for k in select if k not in SELECT_KEYS]
    if unknown:
        hint = did_you_mean(unknown[0], SELECT_KEYS)
        raise SelectError(
            f"--select accepts {', '.join(SELECT_KEYS)}; got {', '.join(_quote(k) for k in unknown)}{hint}"
        )
    axes = Axes.of(plan)
    out: dict[str, set[str]] = {}
    for key, raw in select.items():
        chosen: set[str] = set()
        for value in raw:
            chosen.update(_resolve(axes, key, str(value).strip()))
        if not chosen:
            raise SelectError(f"--select {key} names no value")
        out[key] = chosen
    return out


def _resolve(axes: Axes, key: str, value: str) -> list[str]:
    if key == "config" and value not in axes.values["config"]:
        # kept in this wording: scripts and tests look for "no config named"
        raise SelectError(
            f"--select config: no config named {_quote(value)} (configs: {', '.join(axes.values['config'])})"
            + _closest(value, axes.values["config"])
        )
    if key not in NUMERIC:
        if value in axes.values[key]:
            return [value]
        raise _not_in(axes, key, value)
    low, high = _range(value, key)
    if high is not None:
        if low is None:
            ends = value.partition("-")
            first, last = _number(ends[0], key), _number(ends[2], key)
            if first is not None and last is not None and first > last:
                raise SelectError(
                    f"{_quote(value)} is a range from high to low; give it low to high: {ends[2]}-{ends[0]}"
                )
            raise _not_in(axes, key, value)
        if key == "repeat" and high > axes.repeats - 1:  # the indexes are exactly 0..repeats-1
            raise SelectError(
                f"{_quote(value)} reaches past the last repeat index of {axes.name}; "
                f"repeat indexes: {_listing(axes.values['repeat'])}"
            )
        matched = [v for v, n in _numbers(axes, key) if low - 1e-9 <= n <= high + 1e-9]
        if not matched:
            raise SelectError(
                f"{_quote(value)} holds no {_noun(key)} of {axes.name}; {_plural(key)}: {_listing(axes.values[key])}"
            )
        return matched
    number = _number(value, key)
    if number is None:
        raise _not_in(axes, key, value)
    if key == "length" and value[-1:] in "kK":
        thousands = {round(number), round(number / 1000 * 1024)}
        found = [str(n) for n in axes.lengths if n in thousands]
        if len(found) == 1:
            return found
        if len(found) > 1:
            raise SelectError(
                f"{_quote(value)} names {' and '.join(found)}, both lengths of {axes.name}; give the exact length"
            )
        raise _not_in(axes, key, value)
    matched = [v for v, n in _numbers(axes, key) if math.isclose(n, number, abs_tol=1e-9)]
    if matched:
        return matched
    raise _not_in(axes, key, value)


def _numbers(axes: Axes, key: str) -> list[tuple[str, float]]:
    if key == "length":
        return [(str(n), float(n)) for n in axes.lengths]
    if key == "depth":
        return [(f"{d:g}", d) for d in axes.depths]
    return [(str(r), float(r)) for r in range(axes.repeats)]


def _number(text: str, key: str) -> float | None:
    """A value as a number: `4096`, `50.0`, `4K` (lengths only); None when it is not one."""
    scale = 1.0
    if key == "length" and text[-1:] in ("k", "K"):
        text, scale = text[:-1], 1000.0
    if not text or len(text) > 30:
        return None
    try:
        number = float(text) * scale
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _range(value: str, key: str) -> tuple[float | None, float | None]:
    """(low, high) of an inclusive range `A-B`; (None, None) when the value is not a range.

    A length range may use K on either end; it then covers both readings (`4K-8K` is 4,000 to 8,192).
    """
    low, sep, high = value.partition("-")
    if not sep or not low:
        return None, None
    a, b = _number(low, key), _number(high, key)
    if b is not None and high[-1:] in ("k", "K"):
        b = b / 1000 * 1024
    if a is None or b is None or a > b:
        return None, 0.0  # looks like a range but is not a valid one
    return a, b


def _not_in(axes: Axes, key: str, value: str) -> SelectError:
    valid = axes.values[key]
    return SelectError(
        f"{_quote(value)} is not a {_noun(key)} of {axes.name}; {_plural(key)}: {_listing(valid)}"
        + _closest(value, valid, numeric=key in NUMERIC)
    )


def _closest(value: str, valid: list[str], numeric: bool = False) -> str:
    if not valid:
        return ""
    if numeric:
        number = _number(value, "length")
        if number is None:
            return ""
        best = min(valid, key=lambda v: abs(float(v) - number))
        return f" (closest: {best})"
    import difflib

    match = difflib.get_close_matches(value[:MAX_VALUE_CHARS], valid, n=1, cutoff=0.5)
    return f" (closest: {match[0]})" if match else ""


def _noun(key: str) -> str:
    return "repeat index" if key == "repeat" else key


def _plural(key: str) -> str:
    return "repeat indexes" if key == "repeat" else f"{key}s"


def _listing(values: list[str]) -> str:
    if not values:
        return "(none)"
    shown = ", ".join(values[:SHOWN])
    return shown + (f", ... ({len(values)} in all)" if len(values) > SHOWN else "")


def _quote(value: str) -> str:
    """A value for an error message, cut short so a pathological one is never printed whole."""
    if len(value) > MAX_VALUE_CHARS:
        return repr(value[:MAX_VALUE_CHARS]) + f"... ({len(value):,} characters)"
    return value


def check_not_empty(items: int) -> None:
    """A selection that leaves no item is an error, in `--dry-run` too."""
    if items == 0:
        raise SelectError(
            "--select matches no item: each value is in the grid, but no config has them all together "
            "(see `needlec inspect SPEC` for each config's grid)"
        )


__all__ = ["SELECT_KEYS", "SelectError", "check_not_empty", "parse_select", "resolve_select", "split_values"]
