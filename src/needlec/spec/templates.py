"""Jinja2 rendering in a sandbox: templates may read variables but cannot reach Python internals."""

from __future__ import annotations

import functools
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from needlec.errors import NeedlecError

_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


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
    try:
        return str(template.render(**variables))
    except TemplateError as exc:
        raise TemplateProblem(f"template error: {exc.message or exc}") from None
    except Exception as exc:  # the sandbox raises SecurityError, filters raise TypeError etc.
        raise TemplateProblem(f"template error: {type(exc).__name__}: {exc}") from None
