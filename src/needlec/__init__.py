"""needlec: a declarative spec compiler and dataset publisher for needle-in-a-haystack benchmarks.

The Python API (`load_spec`, `validate`, `compile` in `needlec.api`; `score` and `score_response` in
`needlec.scoring.api`) is imported on first use, so `import needlec` stays cheap (it imports no
component, no numpy).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from needlec.version import __version__

_API = {
    "load_spec": ("needlec.api", "load_spec"),
    "validate": ("needlec.api", "validate"),
    "score": ("needlec.scoring.api", "score"),
    "score_response": ("needlec.scoring.api", "score_response"),
    "NeedlecError": ("needlec.errors", "NeedlecError"),
    "Problem": ("needlec.errors", "Problem"),
}

if TYPE_CHECKING:
    from needlec.api import compile, load_spec, validate
    from needlec.errors import NeedlecError, Problem
    from needlec.scoring.api import score, score_response


def __getattr__(name: str) -> Any:
    """Import an API name on first use (PEP 562)."""
    if name not in _API:
        raise AttributeError(f"module 'needlec' has no attribute {name!r}")
    import importlib

    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


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

__all__ = ["NeedlecError", "Problem", "__version__", "compile", "load_spec", "score", "score_response", "validate"]
