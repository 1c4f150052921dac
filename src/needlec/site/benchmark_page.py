"""The page of one benchmark: what it measures, its grid, needles, prompts, haystack and data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from needlec.dataset.manifest import describe_repetition
from needlec.site.collect import Benchmark
from needlec.site.markdown import cell, code, compact_json, fence, human_bytes, scalar, short_number, table, value_block
from needlec.site.needle_tables import settings_tables
from needlec.site.samples import sample_section


def _lengths(values: tuple[int, ...] | list[int]) -> str:
    return ", ".join(short_number(v) for v in values)


def _depths(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:g}" for v in values)


def preview_note(bench: Benchmark) -> str:
    """Which slice of the grid the page's compile covered, when it was a reduced one."""
    if bench.preview is None:
        return ""
    select = bench.preview
    order = [g.name for g in bench.grids]
    sampled = sorted(select["config"], key=lambda c: order.index(c) if c in order else len(order))
    configs = ", ".join(code(c) for c in sampled)
    lengths = _lengths(sorted(int(n) for n in select["length"]))
    return (
        f"a reduced grid compiled for this page ({len(sampled)} of {len(order)} configs: {configs}; "
        f"lengths {lengths}; {len(select['depth'])} depth{'s' if len(select['depth']) != 1 else ''}"
        + ("; the first haystack" if "haystack" in select else "")
        + ("; repeat " + ", ".join(select["repeat"]) if "repeat" in select else "")
        + ")"
    )


def overview(bench: Benchmark) -> str:
    spec = bench.plan.spec
    tokenizers = sorted({t for g in bench.grids for t in g.tokenizers})
    rows = [
        ("spec", code(spec_file(bench))),
        ("configs", ", ".join(code(g.name) for g in bench.grids)),
        ("tokenizers", ", ".join(code(t) for t in tokenizers)),
        ("context lengths", f"{_lengths(bench.all_lengths)} tokens"),
        ("items (full grid)", f"{bench.total_items:,}"),
        ("context tokens (full grid)", f"{sum(g.tokens for g in bench.grids):,}"),
        ("languages", ", ".join(code(x) for x in spec.languages)),
        ("license", code(spec.license)),
    ]
    return table(["benchmark", code(spec.name)], rows)


def grid_section(bench: Benchmark) -> str:
    """Settings every config shares once, then one row per config with what differs."""
    columns: dict[str, Callable[[Any], str]] = {
        "tokenizers": lambda g: ", ".join(code(t) for t in g.tokenizers),
        "lengths (tokens)": lambda g: _lengths(g.lengths),
        "depths (%)": lambda g: _depths(g.depths),
        "cases × haystacks × repeats": lambda g: f"{g.cases} × {g.haystacks} × {g.repeats}",
    }
    shared = {name: show(bench.grids[0]) for name, show in columns.items() if len({show(g) for g in bench.grids}) == 1}
    varying = [name for name in columns if name not in shared]
    parts = [table(["setting", "every config"], list(shared.items()))] if shared else []
    rows = [
        [
            code(g.name),
            ", ".join(f"{a}={code(v)}" for a, v in g.axes) or "none",
            *(columns[name](g) for name in varying),
            f"{g.items:,}",
        ]
        for g in bench.grids
    ]
    parts.append(table(["config", "variant", *varying, "items"], rows))
    variants = bench.plan.spec.variants
    if variants:
        parts.append("Variant axes, whose combinations make the configs:")
        parts.append(
            table(
                ["axis", "values"],
                [(code(axis), ", ".join(code(v) for v in values)) for axis, values in variants.items()],
            )
        )
    parts.append(
        "Each item is one cell of config × tokenizer × length × depth × case × haystack × "
        "repeat. Lengths are exact token counts of each tokenizer; depths are the targets "
        "needles are snapped from."
    )
    return "\n\n".join(parts)


def _grouped(bench: Benchmark, part: str) -> list[tuple[list[str], dict[str, Any]]]:
    """Configs grouped by identical settings of one part of the spec (needle, prompt, scoring)."""
    groups: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for config in bench.plan.configs:
        dump = getattr(config.spec, part).model_dump(mode="json")
        key = compact_json(dump)
        groups.setdefault(key, ([], dump))[0].append(config.name)
    return list(groups.values())


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _configs_label(names: list[str], total: int) -> str:
    if len(names) == total:
        return "all configs" if total > 1 else f"config {code(names[0])}"
    return ("configs " if len(names) > 1 else "config ") + ", ".join(code(n) for n in names)


def needles_section(bench: Benchmark) -> str:
    """The first group of configs in full; the others as their differences from it."""
    parts = []
    total = len(bench.plan.configs)
    groups = _grouped(bench, "needle")
    first_names, base = groups[0]
    parts.append(f"**{_cap(_configs_label(first_names, total))}**, needle kind {code(base.get('type', ''))}:")
    parts.extend(settings_tables(base))
    for names, dump in groups[1:]:
        changed = {k: v for k, v in dump.items() if base.get(k) != v}
        parts.append(f"**{_cap(_configs_label(names, total))}**: as {_configs_label(first_names, total)}, except:")
        parts.extend(settings_tables(changed, skip=()))
    return "\n\n".join(parts)


def prompts_section(bench: Benchmark) -> str:
    parts = []
    total = len(bench.plan.configs)
    for names, dump in _grouped(bench, "prompt"):
        if total > 1:
            parts.append(f"**{_cap(_configs_label(names, total))}:**")
        if dump.get("system") is not None:
            parts.append(fence(dump["system"], "jinja", "system"))
        parts.append(fence(dump["user"], "jinja", "user"))
        if dump.get("vars"):
            parts.append(value_block(dump["vars"]))
    parts.append(
        "Templates are Jinja2, rendered in a sandbox; `{{ context }}` is the haystack with "
        "the needles inserted, `{{ question }}` the rendered question."
    )
    scoring = [f"{_cap(_configs_label(n, total))}: {code(compact_json(d))}" for n, d in _grouped(bench, "scoring")]
    parts.append("**Scoring.** " + "; ".join(scoring) + ".")
    return "\n\n".join(parts)


def haystack_section(bench: Benchmark) -> str:
    parts = []
    total = len(bench.plan.configs)
    for names, dump in _grouped(bench, "haystack"):
        rows = [
            (str(i), code(s.get("type", "")), code(compact_json({k: v for k, v in s.items() if k != "type"}, 160)))
            for i, s in enumerate(dump.get("sources", []))
        ]
        parts.append(f"Haystack of {_configs_label(names, total)}:")
        parts.append(table(["#", "type", "settings"], rows))
        other = {k: v for k, v in dump.items() if k != "sources"}
        if other:
            parts.append(table(["setting", "value"], [(code(k), code(compact_json(v, 160))) for k, v in other.items()]))
    sources = bench.manifest.get("sources", [])
    if sources:
        parts.append("Source texts read by the compile this page was built from:")
        parts.append(
            table(
                ["name", "origin", "documents", "characters", "sha256"],
                [
                    (
                        code(s.get("name", "")),
                        cell(s.get("origin", "")),
                        scalar(s.get("documents", "")),
                        scalar(s.get("characters", "")),
                        code(s.get("sha256", "")),
                    )
                    for s in sources
                ],
            )
        )
    parts.append("### Repeated text\n\n" + repetition_block(bench))
    parts.append("### Filters\n\n" + filters_block(bench.manifest.get("filters") or [], bench))
    return "\n\n".join(parts)


def repetition_block(bench: Benchmark) -> str:
    """Haystacks repeated to reach a length, as the manifest of the page's compile records them."""
    if bench.unavailable:
        return f"Not known, as no items were compiled for this page: {bench.unavailable}."
    scope = preview_note(bench) or "the compiled dataset this page was built from"
    found = [
        (name, entry)
        for name, info in bench.manifest.get("configs", {}).items()
        for entry in info.get("repetition") or []
    ]
    if not found:
        return f"No haystack text is repeated in {scope}: every item's context is cut from distinct text."
    lines = [f"In {scope}, some haystacks are shorter than a context length, so their text appears more than once:"]
    lines += [f"- config {code(name)}: {describe_repetition(entry)}" for name, entry in found]
    return "\n\n".join([lines[0], "\n".join(lines[1:])])


def filters_block(filters: list[Any], bench: Benchmark | None = None) -> str:
    """The filters a compile ran (its manifest's record); for a page whose items were not compiled, the filters
    its spec names."""
    if not filters and bench is not None and bench.unavailable:
        named = [
            f"{code(str(getattr(step, 'type', '?')))} (source {i + 1})"
            for i, source in enumerate(bench.plan.spec.haystack.sources)
            for step in getattr(source, "filters", None) or []
        ]
        if named:
            return (
                f"The spec cleans its haystack with {', '.join(named)}. They were not run for this page, as no "
                f"items were compiled: {bench.unavailable}."
            )
    if not filters:
        return "No filters clean this benchmark's haystack: the source text is used as it is."
    parts = []
    for i, entry in enumerate(filters):
        if not isinstance(entry, dict):
            parts.append(value_block(entry))
            continue
        name = entry.get("name") or entry.get("type") or f"filter {i + 1}"
        audit = {k: v for k, v in entry.items() if "audit" in k or "summary" in k}
        settings = {k: v for k, v in entry.items() if k not in audit}
        parts.append(f"**{cell(name)}**")
        parts.append(table(["key", "value"], [(code(k), scalar(v)) for k, v in settings.items()]))
        for key, value in audit.items():
            parts.append(f"Audit ({code(key)}):")
            parts.append(value_block(value))
    return "\n\n".join(parts)


def overlap_entries(manifest: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every manifest value whose key mentions overlap, top level or per config."""
    found = [(key, value) for key, value in manifest.items() if "overlap" in key.lower()]
    for name, info in manifest.get("configs", {}).items():
        found += [(f"configs.{name}.{key}", value) for key, value in info.items() if "overlap" in key.lower()]
    return found


def overlap_section(bench: Benchmark) -> str:
    entries = overlap_entries(bench.manifest)
    if not entries and bench.unavailable:
        return f"Not measured, as no items were compiled for this page: {bench.unavailable}."
    if not entries:
        return "None recorded: this benchmark's manifest carries no lexical-overlap statistics."
    parts = ["Lexical overlap between each question and its needle, as recorded in the manifest:"]
    for key, value in entries:
        parts.append(f"#### {code(key)}\n\n{value_block(value)}")
    return "\n\n".join(parts)


def spec_file(bench: Benchmark) -> str:
    """The spec's path as the commands on the page name it: from the `specs` folder on (`specs/atc/atc-v2.yaml`)."""
    parts = bench.spec_path.parts
    if "specs" in parts:
        at = len(parts) - 1 - parts[::-1].index("specs")
        return "/".join(parts[at:])
    path = bench.spec_path.absolute()
    try:  # a spec of the user's own, outside a `specs` folder: its path from the current folder, or whole
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def data_section(bench: Benchmark) -> str:
    name = bench.name
    configs = bench.manifest["configs"]
    first = next(iter(configs)) if configs else bench.grids[0].name
    split = configs[first]["files"][0]["split"] if configs else bench.plan.spec.tokenizers[0].label
    snippet = "\n".join(
        [
            "import os",
            "",
            'os.environ["HF_HUB_OFFLINE"] = "1"  # a local folder needs no network',
            "",
            "from datasets import load_dataset",
            "",
            f'ds = load_dataset("build/{name}", name="{first}", split="{split}")',
            'item = ds[0]  # item["messages"] is the chat to send; item["answers"] the accepted answers',
        ]
    )
    scope = preview_note(bench) or "the compiled dataset this page was built from"
    rows = [
        (code(c), code(f["split"]), code(f["path"]), f"{f['rows']:,}", human_bytes(f["bytes"]), code(f["sha256"]))
        for c, info in configs.items()
        for f in info["files"]
    ]
    return "\n\n".join(
        [
            "Compile the full grid (deterministic: the same spec gives the same bytes anywhere), then load "
            "a config and a tokenizer's split:",
            fence(f"needlec compile {spec_file(bench)} -o build/{name}", "console"),
            fence(snippet, "python"),
            f"A published copy on the Hugging Face Hub loads the same way with its repository id in place of "
            f"the folder; fetch and check one with `needlec download ORG/NAME build/{name}`, or by its name in "
            f"a catalogue (`needlec release`) with `needlec download {name} build/{name} --catalogue DIR`, and "
            f"check any copy with `needlec verify build/{name}`.",
        ]
        + (
            [
                f"Files of {scope} (content hash {code(bench.manifest.get('content_hash', ''))}):",
                table(["config", "split", "file", "rows", "size", "sha256"], rows),
            ]
            if rows
            else []
        )
    )


def samples_intro(bench: Benchmark) -> str:
    """What the sample items are: which configs they come from, honestly when only some were compiled."""
    if bench.unavailable:
        return (
            f"No items were compiled for this page: {bench.unavailable}. Compile a slice yourself to see "
            f"some, e.g. `needlec compile {spec_file(bench)} --select repeat=0 -o build/{bench.name}`."
        )
    names = ", ".join(code(str(item.get("config", "?"))) for item in bench.samples)
    scope = (
        f"They come from {preview_note(bench)}; every config is listed under Grid."
        if bench.preview is not None
        else "They come from the compiled dataset this page was built from."
    )
    return (
        f"One item for each of the first {len(bench.samples)} compiled configs ({names}), at the smallest "
        f"length and the middle depth. {scope} Open a sample to read the whole prompt; the needle is highlighted."
    )


def render_page(bench: Benchmark, assets: str) -> str:
    """The Markdown of a benchmark page; `assets` is the folder of its plots, relative to the page."""
    spec = bench.plan.spec
    preview = f" Achieved depths come from {preview_note(bench)}." if bench.preview else ""
    pairs = [pair for values in bench.lengths_achieved.values() for pair in values]
    worst = max((abs(a - t) for t, a in pairs), default=0)
    exact = sum(1 for t, a in pairs if t == a)
    contract = (
        f" Length contract: {exact:,} of {len(pairs):,} compiled items have exactly their target "
        f"length" + (f" (largest difference {worst} tokens)" if worst else "") + "."
        if pairs
        else ""
    )
    sections = [
        f"# {spec.title}",
        f"{code(spec.name)} · {len(bench.grids)} config{'s' if len(bench.grids) != 1 else ''} · "
        f"{bench.total_items:,} items · languages: {', '.join(spec.languages)}",
        spec.description.strip() or "No description.",
        overview(bench),
    ]
    if spec.citation.strip():
        sections.append("## Citation\n\n" + fence(spec.citation.strip(), "bibtex"))
    sections += [
        "## Grid\n\n" + grid_section(bench),
        "## Distributions\n\n"
        f"![Items per target context length, by config]({assets}/lengths.svg){{ .needlec-plot }}\n\n"
        f"![Achieved needle depths and achieved against target depth]({assets}/depths.svg){{ .needlec-plot }}\n\n"
        f"The first plot counts the items of the full grid per target length.{preview}{contract}",
        "## Needles and questions\n\n" + needles_section(bench),
        "## Prompt templates\n\n" + prompts_section(bench),
        "## Haystack\n\n" + haystack_section(bench),
        "## Lexical overlap\n\n" + overlap_section(bench),
        "## Sample items\n\n"
        + samples_intro(bench)
        + "\n\n"
        + "\n\n".join(sample_section(item) for item in bench.samples),
        "## Get the data\n\n" + data_section(bench),
    ]
    return "\n\n".join(sections) + "\n"
