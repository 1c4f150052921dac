"""The public Python API: load, validate and compile a spec without the command line.

Everything here is re-exported from the package, so `import needlec` is all a caller needs
(`needlec.load_spec`, `needlec.validate`, `needlec.compile`); the package imports this module on
first use, which keeps `import needlec` light. User errors (an invalid spec, a missing source, a
broken contract) raise `needlec.NeedlecError` subclasses, except in `validate`, which returns them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from needlec.errors import NeedlecError, Problem

if TYPE_CHECKING:
    from needlec.compile.pipeline import CompileResult
    from needlec.compile.plan import Plan
    from needlec.dataset.item import Item


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
    from needlec.registry import plugin_origin

    try:
        load_spec(path, cache_dir=cache_dir)
    except NeedlecError as exc:
        return list(exc.problems) or [Problem(str(exc))]
    except Exception as exc:  # raised in a plugin's own code (its kind's draw, say): a problem of the spec's plugin
        origin = plugin_origin(exc.__traceback__)
        if origin is None:
            raise
        return [Problem(f"{origin} raised {type(exc).__name__}: {exc}")]
    return []


def compile(
    spec: str | Path,
    out_dir: str | Path | None,
    *,
    jobs: int = 1,
    select: Mapping[str, str | int | float | Iterable[str | int | float]] | str | Iterable[str] | None = None,
    dry_run: bool = False,
    verify: bool = False,
    cache_dir: str | Path | None = None,
    progress: bool = False,
    tokenizers: Iterable[str] | str | None = None,
    force: bool = False,
    max_items: int | None = None,
    max_bytes: int | None = None,
    strict: bool = False,
    shard: str | tuple[int, int] | None = None,
) -> CompileResult:
    """Compile a spec into a dataset folder, exactly as `needlec compile` does.

    Args:
        spec: the spec file.
        out_dir: the dataset folder to create (written atomically; never over an unrelated
            folder). May be None with `dry_run`.
        jobs: worker processes building items; the output bytes do not depend on it.
        select: restrict the grid, like `--select`: a mapping from a key (`config`, `length`,
            `depth`, `tokenizer`, ...) to the accepted value or values, e.g. `{"length": [1000, 4000]}`,
            or to the command line's string form, e.g. `{"repeat": "0-9", "length": "4K,8K"}`; or the
            `--select` arguments themselves, one `"KEY=V1,V2"` string or a list of them. Values are
            checked against the grid as `--select` checks them.
        dry_run: only size the compile up (items, tokens, bytes); write nothing.
        verify: re-encode every assembled context in full to double-check its token count.
        cache_dir: the cache of downloads and filter runs (default: the user cache folder).
        progress: show progress bars on stderr.
        tokenizers: compile for these tokenizers instead of the spec's, like `--tokenizer`: tiktoken
            encoding names, `tokenizer.json` files or model folders (relative paths against the
            current folder), or Hugging Face Hub ids found in the local Hugging Face cache.
        force: replace a dataset in `out_dir` that was compiled from another spec, or that holds
            items this selection leaves out (refused without it, like `--force`).
        max_items: refuse a compile that would write more items than this (`--max-items`).
        max_bytes: refuse a compile that would write more bytes than this (`--max-bytes`); the free
            disk space is always a ceiling.
        strict: turn the compile's warnings (e.g. a haystack repeated to reach a length) into errors.
        shard: build only slice I of N, `"I/N"` or `(I, N)` (`--shard`): `out_dir` becomes a slice
            that `needlec merge` joins with the others into the dataset; the result's `manifest` is None.

    Returns:
        A `CompileResult`: `out_dir`, `items`, `tokens`, `estimated_bytes` and the written
        `manifest` (None for a dry run).

    Raises:
        NeedlecError: the spec is invalid, a source cannot be read, or an item broke its
            length, depth or overlap contract (`ContractError`).
    """
    from needlec.compile.pipeline import CompileOptions, compile_spec
    from needlec.compile.select import parse_select, split_values
    from needlec.compile.shards import parse_shard
    from needlec.tokenizer import tokenizer_argument

    if select is None or isinstance(select, Mapping):
        chosen = {key: set(split_values(values)) for key, values in (select or {}).items()}
    else:  # the command line's form: "KEY=V1,V2", one or several
        given = [select] if isinstance(select, str) else list(select)
        chosen = {key: set(values) for key, values in parse_select(given).items()}
    if isinstance(shard, str):
        shard = parse_shard(shard)
    elif shard is not None:
        shard = parse_shard("/".join(map(str, shard)))
    options = CompileOptions(
        jobs=jobs,
        select=chosen,
        dry_run=dry_run,
        progress=progress,
        verify=verify,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        tokenizers=[tokenizer_argument(t) for t in ([tokenizers] if isinstance(tokenizers, str) else tokenizers or [])],
        force=force,
        max_items=max_items,
        max_bytes=max_bytes,
        strict=strict,
        shard=shard,
    )
    return compile_spec(spec, out_dir, options)


def _data_files(folder: Path, config: str | None, split: str | None) -> list[Path]:
    """The data files of a dataset folder holding `config`'s `split` items (every one when None).

    The manifest names each config's files and their split; a folder without one (e.g. a bare
    `data/` tree) is read file by file, its configs and splits taken from the paths
    `data/CONFIG/SPLIT.jsonl`.
    """
    from needlec.dataset.manifest import MANIFEST, read_manifest
    from needlec.publish.verify import held_configs

    if (folder / MANIFEST).is_file():
        manifest = read_manifest(folder)
        configs: dict[str, Any] = manifest.get("configs") or {}
        if config is not None and config not in configs:
            raise NeedlecError(f"{folder}: no config {config!r} (configs: {', '.join(sorted(configs))})")
        held = held_configs(folder, manifest)
        if held is not None:  # a partial download (NAME/CONFIG): the configs it holds
            if config is not None and config not in held:
                raise NeedlecError(
                    f"{folder}: a partial copy that holds only config(s) {', '.join(held)}; "
                    f"download {config!r} too (NAME/{config}) or the whole dataset"
                )
            configs = {name: info for name, info in configs.items() if name in held}
        entries = [
            (name, entry)
            for name, info in configs.items()
            if config is None or name == config
            for entry in info.get("files") or []
        ]
        splits = sorted({str(entry["split"]) for _, entry in entries})
        if split is not None and split not in splits:
            raise NeedlecError(f"{folder}: no split {split!r} (splits: {', '.join(splits)})")
        return [folder / str(entry["path"]) for _, entry in entries if split is None or entry["split"] == split]
    root = folder / "data"
    if not root.is_dir():
        raise NeedlecError(f"{folder}: not a dataset folder (no manifest.json and no data/)")
    found = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".parquet"))
    return [
        p
        for p in found
        if (config is None or p.parent.name == config) and (split is None or p.name.split(".")[0] == split)
    ]


def _rows(file: Path) -> Iterator[dict[str, Any]]:
    """The rows of one data file, JSONL or parquet (pyarrow, which the parquet files need anyway)."""
    import orjson

    if not file.is_file():
        raise NeedlecError(f"{file}: a data file the manifest lists is missing")
    if file.suffix == ".parquet":
        import pyarrow.parquet as pq

        yield from pq.read_table(file).to_pylist()
        return
    with file.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise NeedlecError(f"{file}:{lineno}: not a JSON object ({exc})") from None
            if not isinstance(row, dict):
                raise NeedlecError(f"{file}:{lineno}: not a JSON object")
            yield row


@overload
def load_items(
    dataset: str | Path, config: str | None = None, split: str | None = None, *, as_dict: Literal[False] = False
) -> Iterator[Item]: ...


@overload
def load_items(
    dataset: str | Path, config: str | None = None, split: str | None = None, *, as_dict: Literal[True]
) -> Iterator[dict[str, Any]]: ...


def load_items(
    dataset: str | Path, config: str | None = None, split: str | None = None, *, as_dict: bool = False
) -> Iterator[Item] | Iterator[dict[str, Any]]:
    """Yield the items of a compiled dataset folder, without the `datasets` library.

    Args:
        dataset: the dataset folder `needlec compile` wrote (its `manifest.json` lists the files), or one
            of its data files (`.jsonl` or `.parquet`), whose rows `config` and `split` narrow.
        config: only this config's items (default: every config, in manifest order; in a copy of some
            configs only, as `needlec download NAME/CONFIG` makes, every config it holds).
        split: only this split's items; a split is a tokenizer label, e.g. `cl100k_base`.
        as_dict: yield each row as a plain dict (exactly the stored fields) instead of a typed
            `needlec.dataset.item.Item` (which offers `item.context()` and `item.targets()`).

    Raises:
        NeedlecError: the folder is not a dataset, the config or split does not exist, or a row
            is not a valid item (named by file and line).
    """
    for name, value in (("config", config), ("split", split)):
        if value is not None and not isinstance(value, str):
            raise NeedlecError(f"load_items takes one {name} name (a string), or None for every one; got {value!r}")
    folder = Path(dataset)
    if folder.is_file() and folder.suffix in (".jsonl", ".parquet"):  # one data file, as `score` takes it
        files = [folder]
        keep = (config, split)
        if keep != (None, None):  # its rows narrowed by their own config and tokenizer fields
            rows = (
                r
                for r in _rows(folder)
                if (config is None or r.get("config") == config) and (split is None or r.get("tokenizer") == split)
            )
            return rows if as_dict else _typed_rows(folder, rows)
    elif folder.is_dir():
        files = _data_files(folder, config, split)
    else:
        what = "not a folder or a .jsonl/.parquet data file" if folder.exists() else "no such dataset folder"
        raise NeedlecError(f"{folder}: {what}")
    if as_dict:
        return (row for file in files for row in _rows(file))
    return _typed(files)


def _typed(files: list[Path]) -> Iterator[Item]:
    for file in files:
        yield from _typed_rows(file, _rows(file))


def _typed_rows(file: Path, rows: Iterable[dict[str, Any]]) -> Iterator[Item]:
    from pydantic import ValidationError

    from needlec.dataset.item import Item

    for n, row in enumerate(rows, 1):
        try:
            yield Item.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise NeedlecError(f"{file}: row {n} is not a needlec item ({where}: {first['msg']})") from None


__all__ = ["compile", "load_items", "load_spec", "validate"]
