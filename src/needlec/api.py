"""The public Python API: load, validate and compile a spec without the command line.

Everything here is re-exported from the package, so `import needlec` is all a caller needs
(`needlec.load_spec`, `needlec.validate`, `needlec.compile`); the package imports this module on
first use, which keeps `import needlec` light. User errors (an invalid spec, a missing source, a
broken contract) raise `needlec.NeedlecError` subclasses, except in `validate`, which returns them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from needlec.errors import NeedlecError, Problem

if TYPE_CHECKING:
    from needlec.compile.pipeline import CompileResult
    from needlec.compile.plan import Plan


def load_spec(path: str | Path, *, cache_dir: str | Path | None = None) -> Plan:
    """Load, validate and resolve a spec file into a plan.

    Args:
        path: the spec file (YAML or JSON); `extends:` and relative paths resolve against its folder.
        cache_dir: where sources may look for cached downloads during the checks (default: the
            current folder, as `needlec validate` does).

    Returns:
        The `Plan`: the validated `Spec` (`plan.spec`), its configs with the `variants` matrix
        expanded (`plan.configs`) and the sha256 of the spec's bytes (`plan.spec_sha256`).

    Raises:
        SpecError: the spec is invalid; `exc.problems` lists every problem with its file
            location and key path.
    """
    from needlec.compile.plan import load_plan

    return load_plan(path, Path(cache_dir) if cache_dir is not None else None)


def validate(path: str | Path, *, cache_dir: str | Path | None = None) -> list[Problem]:
    """Check a spec file the way `needlec validate` does, without raising for user errors.

    Args:
        path: the spec file.
        cache_dir: as for `load_spec`.

    Returns:
        Every problem found (empty when the spec is valid). Each `Problem` has a `message`, a
        `location` (file, line, column), a `key_path` and a `hint`; `problem.render()` formats it.
    """
    try:
        load_spec(path, cache_dir=cache_dir)
    except NeedlecError as exc:
        return list(exc.problems) or [Problem(str(exc))]
    return []


def compile(
    spec: str | Path,
    out_dir: str | Path | None,
    *,
    jobs: int = 1,
    select: Mapping[str, str | int | float | Iterable[str | int | float]] | None = None,
    dry_run: bool = False,
    verify: bool = False,
    cache_dir: str | Path | None = None,
    progress: bool = False,
    force: bool = False,
) -> CompileResult:
    """Compile a spec into a dataset folder, exactly as `needlec compile` does.

    Args:
        spec: the spec file.
        out_dir: the dataset folder to create (written atomically; never over an unrelated
            folder). May be None with `dry_run`.
        jobs: worker processes building items; the output bytes do not depend on it.
        select: restrict the grid, like `--select`: a mapping from a key (`config`, `length`,
            `depth`, `tokenizer`, ...) to the accepted value or values, e.g. `{"length": [1000, 4000]}`,
            or to the command line's string form, e.g. `{"repeat": "0-9", "length": "4K,8K"}`. Values
            are checked against the grid as `--select` checks them.
        dry_run: only size the compile up (items, tokens, bytes); write nothing.
        verify: re-encode every assembled context in full to double-check its token count.
        cache_dir: the cache of downloads and filter runs (default: the user cache folder).
        progress: show progress bars on stderr.
        force: replace a dataset in `out_dir` that was compiled from another spec, or that holds
            items this selection leaves out (refused without it, like `--force`).

    Returns:
        A `CompileResult`: `out_dir`, `items`, `tokens`, `estimated_bytes` and the written
        `manifest` (None for a dry run).

    Raises:
        NeedlecError: the spec is invalid, a source cannot be read, or an item broke its
            length, depth or overlap contract (`ContractError`).
    """
    from needlec.compile.pipeline import CompileOptions, compile_spec
    from needlec.compile.select import split_values

    chosen = {key: set(split_values(values)) for key, values in (select or {}).items()}
    options = CompileOptions(
        jobs=jobs,
        select=chosen,
        dry_run=dry_run,
        progress=progress,
        verify=verify,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        force=force,
    )
    return compile_spec(spec, out_dir, options)


__all__ = ["compile", "load_spec", "validate"]
