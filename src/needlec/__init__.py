"""needlec: a declarative spec compiler and dataset publisher for needle-in-a-haystack benchmarks.

The Python API (`load_spec`, `validate`, `compile` and `load_items` in `needlec.api`; `score` and
`score_response` in `needlec.scoring.api`; `write_report`; `export` for runner files) is imported on
first use, so `import needlec` stays cheap (it imports no component, no numpy). `dir(needlec)` and
`__all__` list it, so editors and `help()` can complete the names before anything is imported.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from needlec.version import __version__

_API = {
    "load_spec": ("needlec.api", "load_spec"),
    "validate": ("needlec.api", "validate"),
    "load_items": ("needlec.api", "load_items"),
    "Item": ("needlec.dataset.item", "Item"),
    "score": ("needlec.scoring.api", "score"),
    "score_response": ("needlec.scoring.api", "score_response"),
    "ScoreResult": ("needlec.scoring.api", "ScoreResult"),
    "write_report": ("needlec.scoring.report", "write_report"),
    "export": ("needlec.runners", "export"),
    "NeedlecError": ("needlec.errors", "NeedlecError"),
    "SpecError": ("needlec.errors", "SpecError"),
    "ContractError": ("needlec.errors", "ContractError"),
    "Problem": ("needlec.errors", "Problem"),
}

if TYPE_CHECKING:
    from needlec.api import compile, load_items, load_spec, validate
    from needlec.dataset.item import Item
    from needlec.errors import ContractError, NeedlecError, Problem, SpecError
    from needlec.runners import export
    from needlec.scoring.api import ScoreResult, score, score_response
    from needlec.scoring.report import write_report


def __getattr__(name: str) -> Any:
    """Import an API name on first use (PEP 562)."""
    if name not in _API:
        raise AttributeError(f"module 'needlec' has no attribute {name!r}")
    import importlib

    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names plus the lazily imported API, so completion shows the API (PEP 562)."""
    return sorted({*(name for name in globals() if name.startswith("__")), *__all__})


class _Package(types.ModuleType):
    """The package module, with `compile` always meaning the API function.

    `needlec.compile` is also the name of the compiler subpackage; importing it makes the import
    system bind the subpackage as this module's attribute. The property keeps the public name
    bound to the function (the subpackage stays importable: `from needlec.compile.plan import ...`
    goes through `sys.modules`).
    """

    @property
    def compile(self) -> Any:
        from needlec.api import compile as compile_function

        return compile_function

    @compile.setter
    def compile(self, value: Any) -> None:
        """Ignore the import system's binding of the subpackage (see the class docstring)."""


sys.modules[__name__].__class__ = _Package

__all__ = [
    "ContractError",
    "Item",
    "NeedlecError",
    "Problem",
    "ScoreResult",
    "SpecError",
    "__version__",
    "compile",
    "export",
    "load_items",
    "load_spec",
    "score",
    "score_response",
    "validate",
    "write_report",
]
