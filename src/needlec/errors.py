"""One family of user-facing errors: each prints as a short report, never as a traceback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Location:
    """Where in a spec file a problem sits (1-based line and column)."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        if self.column is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where, which key, what was expected, and a hint."""

    message: str
    location: Location | None = None
    key_path: str = ""
    hint: str = ""

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        key = f"{self.key_path}: " if self.key_path else ""
        text = f"{where}{key}{self.message}"
        if self.hint:
            text += f"\n    {self.hint}"
        return text


class NeedlecError(Exception):
    """Base of every error caused by user input or environment; the CLI prints it and exits 2."""

    exit_code = 2

    def __init__(self, message: str = "", problems: list[Problem] | None = None) -> None:
        self.problems: list[Problem] = list(problems or [])
        super().__init__(message or "\n".join(p.render() for p in self.problems))

    def render(self) -> str:
        head = str(self.args[0]) if self.args and self.args[0] else ""
        if not self.problems:
            return head
        body = "\n".join(p.render() for p in self.problems)
        if head and head != body:
            return f"{head}\n{body}"
        return body

    def __str__(self) -> str:  # the whole report, problems included, wherever the error is shown
        return self.render()

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt as it is (a worker's error reaches the parent process pickled), whatever the subclass's
        constructor takes."""
        return _rebuild, (type(self), self.args[0] if self.args else "", list(self.problems), dict(self.__dict__))


def _rebuild(cls: type[NeedlecError], message: str, problems: list[Problem], state: dict[str, Any]) -> NeedlecError:
    error = Exception.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    error.problems = problems
    return error


class PluginFault(RuntimeError):
    """An exception raised in a plugin's own code in a worker process, carried to the parent with the plugin it
    came from (`origin`) and the worker's traceback (`detail`), which the parent cannot see otherwise."""

    def __init__(self, origin: str, detail: str) -> None:
        super().__init__(f"raised by {origin}:\n{detail}")
        self.origin = origin
        self.detail = detail

    def __reduce__(self) -> tuple[Any, ...]:
        return PluginFault, (self.origin, self.detail)


class SpecError(NeedlecError):
    """A spec file is malformed or invalid; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem], message: str = "") -> None:
        count = len(problems)
        head = message or f"spec is invalid ({count} problem{'s' if count != 1 else ''}):"
        super().__init__(head, problems)


class SourceError(NeedlecError):
    """A haystack source could not be read, downloaded or verified."""


class TokenizerError(NeedlecError):
    """A tokenizer could not be loaded."""


class ContractError(NeedlecError):
    """A compiled item broke the length, depth or overlap contract."""

    exit_code = 3


class OutputError(NeedlecError):
    """A dataset directory is missing, incomplete, or fails verification."""


class PluginError(NeedlecError):
    """A component a spec names is unknown, or the plugin that provides it failed to load."""
