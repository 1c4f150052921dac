"""Jinja2 rendering in a sandbox: templates may read variables but cannot reach Python internals.

The sandbox also bounds what a template may cost: multiplying text or lists, powers, and `range`
are checked before they run, loops share one budget of iterations per render, and the output
may not exceed `MAX_OUTPUT` characters. A template over a limit is a clean error, never a hang.
"""

from __future__ import annotations

import contextvars
import functools
import operator
import signal
import threading
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from needlec.errors import NeedlecError

MAX_OUTPUT = 1_000_000
"""Most characters one template may render (or build in one expression)."""
MAX_ITERATIONS = 1_000_000
"""Most loop iterations (and `range` elements) one render may use, nested loops included."""
MAX_EXPONENT = 1_000
MAX_SECONDS = 5.0
"""Wall-clock limit of one render (enforced with a timer signal in the main thread)."""

_BUDGET: contextvars.ContextVar[list[int]] = contextvars.ContextVar("needlec_template_budget")


class _LimitExceeded(Exception):
    """Raised inside a render when a template goes over one of the limits."""


def _spend(count: int) -> None:
    budget = _BUDGET.get(None)
    if budget is None:
        return
    budget[0] -= count
    if budget[0] < 0:
        raise _LimitExceeded(f"the template runs more than {MAX_ITERATIONS:,} loop steps")


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple)) else 0


class _LimitedEnvironment(SandboxedEnvironment):
    """A sandbox that refuses huge values before computing them and counts loop steps."""

    intercepted_binops = frozenset(["*", "**", "+"])

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(times, int) and _sized(seq) * max(0, times) > MAX_OUTPUT:
                    raise _LimitExceeded(f"an expression would build more than {MAX_OUTPUT:,} characters or items")
            return operator.mul(left, right)
        if operator_name == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
                raise _LimitExceeded(f"exponents above {MAX_EXPONENT} are not allowed")
            return operator.pow(left, right)
        if operator_name == "+":
            if _sized(left) + _sized(right) > MAX_OUTPUT:
                raise _LimitExceeded(f"an expression would build more than {MAX_OUTPUT:,} characters or items")
            return operator.add(left, right)
        return super().call_binop(context, operator_name, left, right)


class _Deadline:
    """A SIGALRM timer that raises _LimitExceeded; inactive outside the main thread or under another timer."""

    def __init__(self, seconds: float) -> None:
        self.previous: Any = None
        self.active = False
        if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
            return
        self.previous = signal.signal(signal.SIGALRM, self._expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        self.active = True

    @staticmethod
    def _expire(signum: int, frame: Any) -> None:
        raise _LimitExceeded(f"the template takes longer than {MAX_SECONDS:g} seconds to render")

    def cancel(self) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            self.active = False


def _range(*args: int) -> range:
    values = range(*args)
    if len(values) > MAX_ITERATIONS:
        raise _LimitExceeded(f"range() larger than {MAX_ITERATIONS:,}")
    _spend(len(values))
    return values


_ENV = _LimitedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
_ENV.globals["range"] = _range


def _width_checked(name: str) -> Any:
    original = _ENV.filters[name]

    def checked(value: Any, width: Any = 80, *args: Any, **kwargs: Any) -> Any:
        if isinstance(width, int) and width > MAX_OUTPUT:
            raise _LimitExceeded(f"{name}() width above {MAX_OUTPUT:,}")
        return original(value, width, *args, **kwargs)

    return checked


for _name in ("center", "indent", "wordwrap", "truncate"):
    _ENV.filters[_name] = _width_checked(_name)


class TemplateProblem(NeedlecError):
    """A template failed to parse or render (syntax error, unknown variable, sandbox violation)."""


@functools.lru_cache(maxsize=4096)
def compile_template(source: str) -> Any:
    try:
        return _ENV.from_string(source)
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        where = f" (template line {line})" if line else ""
        raise TemplateProblem(f"template syntax error{where}: {exc.message or exc}") from None


def render(source: str, variables: dict[str, Any]) -> str:
    """Render `source` with `variables`; every referenced variable must exist."""
    template = compile_template(source)
    token = _BUDGET.set([MAX_ITERATIONS])
    timer = _Deadline(MAX_SECONDS)
    try:
        pieces: list[str] = []
        size = 0
        for piece in template.generate(**variables):
            size += len(piece)
            if size > MAX_OUTPUT:
                raise _LimitExceeded(f"the template renders more than {MAX_OUTPUT:,} characters")
            _spend(1)
            pieces.append(piece)
        return "".join(pieces)
    except _LimitExceeded as exc:
        raise TemplateProblem(f"template limit: {exc}") from None
    except TemplateError as exc:
        raise TemplateProblem(f"template error: {exc.message or exc}") from None
    except Exception as exc:  # the sandbox raises SecurityError, filters raise TypeError etc.
        raise TemplateProblem(f"template error: {type(exc).__name__}: {exc}") from None
    finally:
        timer.cancel()
        _BUDGET.reset(token)
