"""The `needlec` command line: a thin layer that parses arguments, calls the library and prints."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from needlec import __version__
from needlec.cli.corpora import add_corpora_command
from needlec.cli.export import add_export_command
from needlec.cli.filter import add_filter_command
from needlec.cli.publish import add_publish_commands
from needlec.cli.score import add_score_command
from needlec.cli.site import add_site_command
from needlec.errors import NeedlecError, OutputError
from needlec.util.redact import redact

DESCRIPTION = """\
needlec compiles declarative needle-in-a-haystack benchmark specs (YAML or JSON) into frozen,
token-exact datasets: JSONL files in a Hugging Face dataset folder with its card and a manifest
of hashes. It never runs a model to answer items; any runner can consume the output.
"""

EPILOG = (
    "Run `needlec COMMAND --help` for a command's options. "
    "Exit codes: 0 ok, 2 invalid input (printed as file:line:col and key path, never a traceback), "
    "3 contract broken, 70 a bug in needlec (traceback printed; please report it), 130 interrupted."
)


MAX_LINE = 400  # an error line longer than this is shown in part (a value of the spec may be huge)


def clip(text: str) -> str:
    """`text` with every over-long line cut to its start and end, saying how much was left out.

    Errors quote the spec's values; a 200,000-character value must not be printed back whole.
    """
    lines = []
    for line in text.splitlines():
        if len(line) > MAX_LINE:
            keep = MAX_LINE // 2 - 20
            line = f"{line[:keep]} ... ({len(line) - 2 * keep:,} characters left out) ... {line[-keep:]}"
        lines.append(line)
    return "\n".join(lines)


INSPECT_KEYS = 100_000  # `inspect` picks its sample among at most this many items of a config


def cmd_compile(args: argparse.Namespace) -> int:
    from needlec.compile.pipeline import CompileOptions, available_cores, compile_spec
    from needlec.compile.select import parse_select
    from needlec.compile.shards import BLOCK, parse_shard
    from needlec.compile.size import human_bytes
    from needlec.tokenizer import tokenizer_argument

    clock = _Clock()
    select = {key: set(values) for key, values in parse_select(args.select).items()}
    options = CompileOptions(
        jobs=args.jobs if args.jobs is not None else available_cores(),
        select=select,
        dry_run=args.dry_run,
        progress=not args.quiet,
        verify=args.verify,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        max_items=args.max_items,
        max_bytes=args.max_bytes,
        strict=args.strict,
        tokenizers=[tokenizer_argument(t) for t in args.tokenizer],
        force=args.force,
        shard=parse_shard(args.shard) if args.shard else None,
    )
    if options.jobs < 1:
        raise NeedlecError(f"--jobs must be at least 1; got {options.jobs}")
    slice_name = f"{options.shard[0]}/{options.shard[1]}" if options.shard else ""  # as parsed: `01/03` is 1/3
    default = Path(args.spec).stem + (f"-slice-{options.shard[0]}-of-{options.shard[1]}" if options.shard else "")
    out = args.output or (None if args.dry_run else str(Path("build") / default))  # a slice is no dataset
    if not args.dry_run:
        share = f"slice {slice_name} (one shard in {options.shard[1]}) of " if options.shard else ""
        options.announce = lambda size: print(
            f"compiling {share}{size.items:,} items ({size.tokens:,} context tokens, about "
            f"{human_bytes(size.bytes)}) into {out}",
            flush=True,
        )
    if args.executor == "ray" and not args.dry_run:
        from needlec.compile.cluster import compile_on_ray

        if options.shard is not None:
            raise NeedlecError("--executor ray makes its own slices; leave out --shard")
        assert out is not None
        result = compile_on_ray(args.spec, out, options, address=args.ray_address)
    elif args.ray_address:
        raise NeedlecError("--ray-address needs --executor ray")
    else:
        result = compile_spec(args.spec, out, options)
    if args.dry_run:
        print(
            f"{result.items} items, {result.tokens:,} context tokens, "
            f"about {result.estimated_bytes / 1e6:,.1f} MB of output (nothing written)"
        )
        if options.shard is not None:  # slices are dealt by shard once the haystacks are read, which a dry run does not
            print(
                f"(sized for the whole compile: slice {slice_name} builds one shard in {options.shard[1]} of it, "
                f"about 1/{options.shard[1]})"
            )
        return 0
    if result.manifest is None:  # a slice
        print(f"wrote slice {slice_name}: {result.shards} shard(s) to {result.out_dir}")
        if not result.shards:
            print(
                f"note: slice {slice_name} is empty: the compile has fewer than {slice_name.partition('/')[0]} "
                f"shards (a shard is up to {BLOCK} items of one cell). `needlec merge` takes it with the others"
            )
        print(_final_line(result.items, result.tokens, _folder_bytes(result.out_dir), result, clock))
        return 0
    print(f"wrote {result.items} items ({result.tokens:,} context tokens) to {result.out_dir}")
    for name, info in result.manifest["configs"].items():
        excluded = info.get("needle_kind", {}).get("excluded")
        if excluded:
            print(f"{name}: excluded {len(excluded)} character name(s) found in the haystacks: {', '.join(excluded)}")
    print(f"content hash {result.manifest['content_hash']}")
    print(_final_line(result.items, result.tokens, _folder_bytes(result.out_dir), result, clock))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from needlec.compile.pipeline import CompileOptions, merge_slices

    clock = _Clock()
    options = CompileOptions(
        progress=not args.quiet, cache_dir=Path(args.cache_dir) if args.cache_dir else None, force=args.force
    )
    result = merge_slices([Path(s) for s in args.slices], args.output, args.spec, options)
    assert result.manifest is not None
    print(
        f"merged {len(args.slices)} slice(s): {result.items} items ({result.tokens:,} context tokens) "
        f"to {result.out_dir}"
    )
    print(f"content hash {result.manifest['content_hash']}")
    print(_final_line(result.items, result.tokens, _folder_bytes(result.out_dir), None, clock))  # (nothing built)
    return 0


class _Clock:
    """Wall time and CPU time (this process and its finished workers) since it was made."""

    def __init__(self) -> None:
        import time

        self.wall = time.perf_counter()
        self.cpu = self._cpu()

    @staticmethod
    def _cpu() -> float:
        import resource

        own = resource.getrusage(resource.RUSAGE_SELF)
        workers = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime

    def elapsed(self) -> tuple[float, float]:
        import time

        return time.perf_counter() - self.wall, self._cpu() - self.cpu


def _folder_bytes(folder: Path | None) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder else 0


def _final_line(items: int, tokens: int, size: int, result: object, clock: _Clock) -> str:
    wall, cpu = clock.elapsed()
    built, reused = getattr(result, "built", 0), getattr(result, "reused", 0)
    resumed = f", {reused} of {built + reused} shards reused" if reused else ""
    return (
        f"done: {items:,} items, {tokens:,} tokens, {size / 1e6:,.1f} MB, wall {wall:,.1f} s, CPU {cpu:,.1f} s{resumed}"
    )


def cmd_validate(args: argparse.Namespace) -> int:
    from needlec.compile.plan import load_plan
    from needlec.compile.warnings import unstated_answers
    from needlec.registry import plugin_clashes

    failed = 0
    for spec in args.specs:
        found: list[str] = []
        try:
            plan = load_plan(spec, Path(args.cache_dir) if args.cache_dir else None)
            if args.deep:
                from needlec.compile.deep import deep_check

                found = deep_check(plan, Path(args.cache_dir) if args.cache_dir else None)
        except NeedlecError as exc:
            failed += 1
            print(clip(redact(exc.render())), file=sys.stderr)
            continue
        configs = ", ".join(c.name for c in plan.configs)
        deep = "; sources read and checked" if args.deep else ""
        print(f"{spec}: ok ({len(plan.configs)} config(s): {configs}){deep}")
        for warning in [*found, *unstated_answers(plan.configs)]:
            print(f"warning: {spec}: {warning}", file=sys.stderr)
    for clash in plugin_clashes():  # installed components that no spec reaches (once, not per spec)
        print(f"warning: {clash}", file=sys.stderr)
    return 2 if failed else 0


SCHEMA_ID_PREFIX = "https://needlec.dev/schema/"
"""The start of the `$id` of every schema `needlec schema` writes (spec, item, manifest)."""


def _check_schema_target(out: Path) -> None:
    """`schema -o` replaces only a JSON Schema it wrote before (its `$id` is needlec's); a folder or any other
    file, a hand-written schema included, is refused."""
    if out.is_dir():
        raise OutputError(f"refusing to write {out}: it is a folder; name a file, e.g. {out / 'spec.schema.json'}")
    if not out.exists():
        return
    try:
        old = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        old = None
    ours = isinstance(old, dict) and "$schema" in old and str(old.get("$id", "")).startswith(SCHEMA_ID_PREFIX)
    if not ours:
        what = "a JSON Schema needlec wrote" if isinstance(old, dict) and "$schema" in old else "a JSON Schema"
        raise OutputError(f"refusing to overwrite {out}: it is not {what}; name a new file. Nothing was changed.")


def cmd_schema(args: argparse.Namespace) -> int:
    if args.item:
        from needlec.dataset.item import item_json_schema as json_schema
    elif args.manifest:
        from needlec.dataset.manifest import manifest_json_schema as json_schema
    else:
        from needlec.spec.models import json_schema

    text = json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.output:
        from needlec.util.atomic import write_file_atomic

        out = Path(args.output).resolve()  # (a link to a schema: the schema it names is the one replaced)
        _check_schema_target(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(out, text.encode("utf-8"))
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from needlec.compile.inspect import render_item, summarize_dataset, summarize_plan

    target = Path(args.target)
    if target.is_dir():
        summary, sample = summarize_dataset(target)
        print(summary)
    else:
        from needlec.compile.pipeline import build_one
        from needlec.compile.plan import load_plan
        from needlec.compile.size import haystack_ids

        plan = load_plan(target)
        print(summarize_plan(plan))
        config = plan.configs[0]
        keys = list(itertools.islice(plan.keys(config, haystack_ids(config.spec)), INSPECT_KEYS))
        key = min(keys, key=lambda k: (k.length, k.depth))
        if args.middle:  # the middle length, and of its items the middle depth
            lengths = sorted({k.length for k in keys})
            at_length = [k for k in keys if k.length == lengths[len(lengths) // 2]]
            depths = sorted({k.depth for k in at_length})
            key = next(k for k in at_length if k.depth == depths[len(depths) // 2])
        if args.sample_seed is not None:
            key = random.Random(args.sample_seed).choice(keys)
        sample = build_one(plan, config, key)
    if sample is not None and not args.no_sample:
        print("\nsample item:")
        print(render_item(sample))
    return 0


def cmd_overlap(args: argparse.Namespace) -> int:
    from needlec.compile.overlap_report import measure_plan, read_dataset, render_table

    target = Path(args.target)
    if target.is_dir():
        report = read_dataset(target)
    else:
        from needlec.compile.plan import load_plan

        report = measure_plan(load_plan(target, budgets=False))  # (a spec that breaks its budgets is measured too)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(render_table(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="needlec", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"needlec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "compile",
        help="compile a spec into a dataset folder",
        description="Validate SPEC, build every item with exact token lengths and "
        "depths, and write JSONL files, a dataset card and manifest.json to DIR. The "
        "folder appears only when the compile succeeds; rerunning gives identical bytes.",
    )
    p.add_argument("spec", metavar="SPEC", help="path of the spec file (.yaml, .yml or .json)")
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="output folder (default: build/<spec file name without extension>, and with --shard I/N "
        "build/<name>-slice-I-of-N). It is replaced atomically, "
        "and only if it is missing, empty or a needlec dataset; any other folder, a file, '.', '/', '~' and "
        "the folders that hold the spec or the current folder are refused",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: every core this process may use); the output is identical for any N",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="build only the I-th of N shares of the work (e.g. 2/8) into a slice folder -o SLICE, on any machine "
        "or scheduler; `needlec merge` joins the N slices into the dataset a single compile writes",
    )
    p.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="`local` (default): worker processes on this machine (--jobs); `ray`: the compile's slices as Ray "
        "tasks (a local Ray instance with --jobs CPUs, or the cluster at --ray-address), merged into the dataset "
        "a local compile writes; needs `pip install 'needlec[ray]'` and, on a cluster, a file system every node "
        "shares for the spec, the output's parent folder and the cache",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --executor ray: a running Ray cluster to use (e.g. auto or ray://HOST:10001) instead of a local "
        "instance",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the item count, total tokens and estimated output size; write nothing",
    )
    p.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="compile only items whose config, tokenizer, length, depth, haystack or repeat is listed "
        "(repeatable, e.g. --select length=1000 --select config=single). Every value must be in the grid; "
        "lengths may be written 4K or 128k where that names one grid length, and length, depth and repeat "
        "take inclusive ranges (repeat=0-9). A selection that matches no item is an error",
    )
    p.add_argument(
        "--tokenizer",
        action="append",
        default=[],
        metavar="NAME|PATH|HUB_ID",
        help="compile for this tokenizer instead of the spec's (repeatable): a tiktoken encoding "
        "(cl100k_base, o200k_base), a tokenizer.json file or a model folder holding one (its chat template, if "
        "any, is counted under `length.counted: prompt`), or a Hugging Face Hub id already in the local "
        "Hugging Face cache; the split is named after the encoding, file, folder or id",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="also re-encode every item in full and check its counts (slow; the default "
        "checks use exact seam arithmetic)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="download and filter cache (default: "
        "$NEEDLEC_CACHE_DIR, else $XDG_CACHE_HOME/needlec, else ~/.cache/needlec)",
    )
    p.add_argument(
        "--max-items",
        type=int,
        metavar="N",
        help="refuse the compile if it would write more than N items (default: no ceiling); the size is "
        "computed from the spec before anything is built",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="refuse the compile if its estimated output exceeds N bytes (default: no ceiling but the free disk "
        "space, which must hold 1.25 x the estimate plus 200 MB)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (e.g. a haystack repeated to reach a length) as errors",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing dataset folder even when it was compiled from another spec or holds items "
        "this compile leaves out (without it such a compile is refused, saying what would be replaced)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser(
        "merge",
        help="join the slices of a sharded compile into one dataset",
        description="Join the slices written by `needlec compile SPEC --shard I/N -o SLICE` (all N of them) "
        "into one dataset folder, byte-identical to compiling SPEC on one machine: same data files, "
        "manifest, card and SHA256SUMS. The spec is read again (for the manifest); no item is rebuilt.",
    )
    p.add_argument("slices", nargs="+", metavar="SLICE", help="slice folders, one per --shard I/N")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output dataset folder (as for compile)")
    p.add_argument("--spec", metavar="SPEC", help="the spec file, when it is not at the path the slices recorded")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a dataset in DIR compiled from another spec or holding items the slices leave out "
        "(as for compile)",
    )
    p.add_argument("--cache-dir", metavar="DIR", help="download and filter cache (default: as compile)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser(
        "validate",
        help="check specs without compiling",
        description="Validate each SPEC (schema, templates, sources that can be "
        "checked without downloading) and print every problem with file:line:col. Warnings (an answer no needle "
        "states; with --deep, a haystack repeated to reach a length) and installed plugin components that no spec "
        "can reach (named like a built-in or like another plugin's) are printed too; they do not fail it.",
    )
    p.add_argument("specs", nargs="+", metavar="SPEC", help="spec files to check")
    p.add_argument(
        "--deep",
        action="store_true",
        help="also read the haystack sources (and run their filters) to check what needs them: "
        "builder feasibility, the name pool left after names found in the haystacks, and haystacks too short "
        "for a length (tokenized for each tokenizer, as a compile's start does)",
    )
    p.add_argument("--cache-dir", metavar="DIR", help="download and filter cache for --deep (default: as compile)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "schema",
        help="print or write the spec language's JSON Schema",
        description="Print the JSON Schema of the spec language (for editor "
        "validation and completion), or write it to a file.",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--item", action="store_true", help="the schema of one compiled item (a JSONL row) instead of the spec's"
    )
    which.add_argument("--manifest", action="store_true", help="the schema of a dataset's manifest.json instead")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser(
        "inspect",
        help="summarize a spec or a compiled dataset",
        description="For a SPEC: the grid of every config, item counts, token "
        "totals and one sample item built in memory. For a dataset DIR: files, "
        "rows, token totals and its first item, with the context cut down around "
        "the needles (marked >>> <<<).",
    )
    p.add_argument("target", metavar="DIR|SPEC", help="a compiled dataset folder or a spec file")
    p.add_argument("--middle", action="store_true", help="for a SPEC, show a mid-grid item instead of the smallest")
    p.add_argument("--sample-seed", type=int, metavar="N", help="for a SPEC, show a random item chosen with this seed")
    p.add_argument("--no-sample", action="store_true", help="print only the summary")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "overlap",
        help="lexical overlap of questions with needles and contexts",
        description="Print the mean ROUGE-1, ROUGE-2 and ROUGE-L precision of each "
        "config's questions against their needles and against the whole context, each "
        "without and with Porter stemming (columns marked ~s). "
        "For a dataset DIR the figures come from its manifest; for a SPEC, items are "
        "built in memory at each config's smallest length and measured.",
    )
    p.add_argument("target", metavar="DIR|SPEC", help="a compiled dataset folder or a spec file")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=cmd_overlap)
    add_filter_command(sub)
    add_publish_commands(sub)
    add_site_command(sub)
    add_corpora_command(sub)
    add_score_command(sub)
    add_export_command(sub)
    return parser


BUG_EXIT = 70
REPORT_LINE = (
    "This is a bug in needlec, not a problem with your input. Please report it with the "
    "traceback above and the command you ran."
)


def process_defaults() -> None:
    """Two settings of libraries the command line starts with, each unless the user set it already.

    - numpy's OpenBLAS on one thread (`OPENBLAS_NUM_THREADS=1`): importing numpy starts one thread
      per core, which costs about 0.15 CPU s per process (each `--jobs` worker included), and
      needlec's matrix work (ranking passages by cosine) is small enough for one thread.
    - no pydantic plugins (`PYDANTIC_DISABLE_PLUGINS=__all__`): pydantic looks for plugins in every
      installed package's entry points when it builds its first model, about 0.03 CPU s on each
      start, and needlec's models use none. Set the variable to an empty value to load them.

    Both must be set before the library reads them, so the command line does it first thing.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. User errors print one clean report (exit 2 or 3); bugs print a traceback."""
    from needlec.util.redact import redact

    process_defaults()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        args.root_parser = parser  # for commands that describe the whole CLI (`site build`'s help page)
        return int(args.func(args))
    except NeedlecError as exc:
        print(clip(redact(f"error: {exc.render()}")), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "interrupted; nothing was replaced (an interrupted compile keeps its finished shards: the same command "
            "goes on from them and clears any half-written temporary folder)",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            return _bug()  # another pipe (a worker's, a server's) broke: that is no reader leaving
        # the reader of standard output stopped reading (`needlec corpora | head -1`): end quietly, as tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit does not fail again
        return 141
    except RecursionError:
        print("error: the input is nested too deeply to process", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory; lower the spec's limits or select fewer items", file=sys.stderr)
        return 2
    except Exception:  # a real bug: show everything needed to fix it, with secrets masked
        return _bug()


def _bug() -> int:
    """Print the exception being handled as a bug report (secrets masked); the bug exit code."""
    import traceback

    from needlec.errors import PluginFault
    from needlec.registry import PLUGINS_ENV, plugin_origin
    from needlec.util.redact import redact

    error = sys.exc_info()[1]
    if isinstance(error, PluginFault):  # raised in a plugin's code in a worker process: the worker's traceback
        print(redact(error.detail).rstrip(), file=sys.stderr)
        origin: str | None = error.origin
    else:
        print(redact(traceback.format_exc()).rstrip(), file=sys.stderr)
        origin = plugin_origin(sys.exc_info()[2])
    if origin is not None:  # raised in a plugin's own code: its author is the one to tell
        print(
            f"This error was raised by {origin}, not by needlec: report it to that plugin's author, or leave "
            f"the plugin out ({PLUGINS_ENV}=0 turns every plugin off).",
            file=sys.stderr,
        )
        return BUG_EXIT
    print(REPORT_LINE, file=sys.stderr)
    return BUG_EXIT


def _stdout_closed() -> bool:
    """Whether standard output's reader has gone: writing what is buffered there fails with a broken pipe."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False
    try:  # nothing buffered: a pipe whose reader has gone reports an error condition to poll
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False
