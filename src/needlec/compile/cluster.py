"""`--executor ray`: the slices of a sharded compile as Ray tasks, then one merge.

Each task runs `compile --shard I/N` into a slice folder beside the output (`.OUT.ray/slice-I`), and the
driver merges the N slices into the dataset, so the bytes are those of a single-machine compile by the
same argument as `needlec merge`'s. A slice resumes from its own shard store, so rerunning after a lost
worker or a failed cell builds only what is missing. On a cluster the spec, the output's parent folder
and the cache must be on a file system every node shares, at the same paths.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from needlec.compile.existing import check_replace
from needlec.compile.pipeline import CompileOptions, CompileResult, compile_spec, default_cache_dir, merge_slices
from needlec.compile.plan import load_plan
from needlec.compile.select import check_not_empty, resolve_select
from needlec.compile.size import check_size, plan_size
from needlec.errors import NeedlecError, PluginFault
from needlec.registry import plugin_origin
from needlec.util.atomic import check_target, is_needlec_dataset


def ray_folder(out_dir: Path) -> Path:
    """Where the slices of a Ray compile into `out_dir` are written (kept after the merge, for resuming)."""
    return out_dir.parent / f".{out_dir.name}.ray"


def _build_slice(spec: str, folder: str, shard: tuple[int, int], options: CompileOptions) -> tuple[int, int]:
    """One Ray task: the I-th of N slices (items, shards built)."""
    try:
        result = compile_spec(spec, folder, replace(options, shard=shard, progress=False, jobs=1, announce=None))
    except NeedlecError:
        raise
    except Exception as exc:  # a plugin's fault is named here, where its frames are
        origin = plugin_origin(exc.__traceback__)
        if origin is None:
            raise
        raise PluginFault(origin, "".join(traceback.format_exception(exc))) from exc
    return result.items, result.built


def compile_on_ray(
    spec: str | Path,
    out_dir: str | Path,
    options: CompileOptions,
    address: str | None = None,
    slices: int | None = None,
) -> CompileResult:
    """Compile `spec` into `out_dir` with its slices built by Ray tasks (one CPU each).

    `address` is a running cluster's (`ray://HOST:10001` or `auto`); without it a local Ray instance is
    started with the `options.jobs` CPUs. `slices` defaults to the cluster's CPUs.
    """
    try:
        import ray
    except ImportError as exc:
        raise NeedlecError("--executor ray needs Ray: pip install 'needlec[ray]'") from exc
    out = Path(out_dir)
    # what a local compile refuses is refused here, before any task starts: the spec, the selection,
    # the size and disk, the output folder and what it would replace
    cache_dir = options.cache_dir or default_cache_dir()
    plan = load_plan(spec, cache_dir, options.tokenizers or None)
    select = resolve_select(plan, options.select)
    size = plan_size(plan, select)
    check_not_empty(size.items)
    target = check_target(out, is_needlec_dataset, guard=(Path(spec),), what="a needlec dataset")
    check_size(size, options.max_items, options.max_bytes, target)
    check_replace(target, plan, select, options.force)
    if options.announce is not None:
        options.announce(size)
    started = not ray.is_initialized()
    if started:
        settings: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address:
            try:
                ray.init(address=address, **settings)
            except (ConnectionError, ValueError, RuntimeError, ImportError) as exc:
                client = (
                    " (a ray:// address needs the Ray Client: pip install 'ray[client]')"
                    if "client" in str(exc).lower()
                    else ""
                )
                raise NeedlecError(
                    f"--ray-address {address}: no Ray cluster could be joined ({type(exc).__name__}: {exc}){client}. "
                    "Start one first (`ray start --head` on its head node), or leave out --ray-address to run a "
                    "local Ray instance with --jobs CPUs."
                ) from None
        else:
            ray.init(num_cpus=max(1, options.jobs), **settings)
    try:
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        count = slices or max(1, int(cpus))
        folder = ray_folder(out)
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / f"slice-{i}" for i in range(1, count + 1)]
        task = ray.remote(num_cpus=1)(_build_slice)
        sendable = replace(options, announce=None)  # what travels to the workers is pickled
        pending = {
            task.remote(str(Path(spec).resolve()), str(path), (i, count), sendable): i
            for i, path in enumerate(paths, start=1)
        }
        done = 0
        built = 0
        failures: list[str] = []
        fault: PluginFault | None = None  # a plugin's, raised in a task: reported as the plugin's once all end
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(ready[0])
            try:
                built += ray.get(ready[0])[1]
            except Exception as exc:  # a task's error comes back wrapped; the other slices are kept
                cause = getattr(exc, "cause", None) or exc
                if isinstance(cause, PluginFault):
                    fault = fault or cause
                failures.append(f"slice {index}/{count}: {cause}")
            done += 1
            if options.progress:
                print(f"ray: {done}/{count} slice(s) done", file=sys.stderr, flush=True)
        if fault is not None:
            raise fault
        if failures:
            raise NeedlecError(
                f"{len(failures)} of {count} slice(s) failed:\n  "
                + "\n  ".join(failures)
                + f"\nThe finished slices are kept in {folder}; run the same command again to build only what "
                "is missing."
            )
    finally:
        if started:
            ray.shutdown()
    merged = merge_slices(paths, out, spec, replace(options, shard=None, slices=()))
    # the merge takes every shard from the slices: what this run built is what the tasks built
    return replace(merged, built=built, reused=merged.built + merged.reused - built)
