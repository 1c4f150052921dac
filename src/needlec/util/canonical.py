"""Canonical JSON: sorted keys, UTF-8, no NaN or infinity, so equal data gives equal bytes."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import orjson


def _check_finite(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("canonical JSON cannot hold NaN or infinity")
    if isinstance(value, dict):
        for v in value.values():
            _check_finite(v)
    elif isinstance(value, list):
        for v in value:
            _check_finite(v)


def dumps(value: Any, *, indent: bool = False, check: bool = True) -> bytes:
    if check:
        _check_finite(value)
    option = orjson.OPT_SORT_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(value, option=option)


def line(value: Any) -> bytes:
    """One JSONL line. Items are built from finite numbers only, so the NaN walk is skipped."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def sha256_json(value: Any) -> str:
    return hashlib.sha256(dumps(value)).hexdigest()
