"""The Hugging Face dataset card: YAML metadata whose configs match the data files, plus prose."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from needlec.dataset.manifest import describe_repetition
from needlec.spec.reports import RULE_DEFAULTS

if TYPE_CHECKING:
    from needlec.compile.plan import Plan

SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
]


def size_category(rows: int) -> str:
    for limit, label in SIZE_CATEGORIES:
        if rows < limit:
            return label
    return "n>10M"


def config_entries(configs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's `configs` list: one entry per config, its data files by split, the first default."""
    entries = []
    for i, (name, info) in enumerate(configs.items()):
        entry: dict[str, Any] = {
            "config_name": name,
            "data_files": [{"split": f["split"], "path": f["path"]} for f in info["files"]],
        }
        if i == 0:
            entry["default"] = True
        entries.append(entry)
    return entries


def card_metadata(plan: Plan, configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    total = sum(f["rows"] for c in configs.values() for f in c["files"])
    entries = config_entries(configs)
    return {
        "license": plan.spec.license.lower(),
        "language": list(plan.spec.languages),
        "pretty_name": plan.spec.title,
        "task_categories": ["question-answering"],
        "tags": ["long-context", "needle-in-a-haystack", "needlec"],
        "size_categories": [size_category(total)],
        "configs": entries,
    }


def filter_section(filters: list[dict[str, Any]]) -> list[str]:
    """Card lines naming each haystack filter run and linking the audit written beside the data."""
    if not filters:
        return []
    lines = [
        "",
        "## Haystack filters",
        "",
        "The haystack sources were cleaned before any item was built. "
        "[audit/summary.md](audit/summary.md) explains every removal and "
        "[audit/filters.jsonl](audit/filters.jsonl) lists each one with its offsets and reason.",
        "",
        "| filter | source | how it ran | sentences removed | characters removed | other counts | cache key |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in filters:
        counts = run.get("counts", {})
        others = ", ".join(f"{k} {v}" for k, v in counts.items() if k not in _SHOWN_COUNTS)
        lines.append(
            f"| `{run['name']}` | `{run['source']}` | {_how(run.get('params', {}))} | {counts.get('sentences', 0)} | "
            f"{counts.get('characters_removed', 0)} | {others or '-'} | `{run['cache_key'][:16]}` |"
        )
    return lines


_SHOWN_COUNTS = frozenset({"edits", "sentences", "characters_removed"})


def _how(params: dict[str, Any]) -> str:
    """How a filter run decided, for a reader of the card: a committed review, a model, or rules."""
    decisions = f" (`{params['decisions']}`)" if params.get("decisions") else ""
    if params.get("rank") is False:
        return f"reviewed decisions applied{decisions}; no model ran in this compile"
    if params.get("model") or params.get("model_env"):
        return f"model `{params.get('model') or params.get('model_env')}`{decisions}"
    return f"rules{decisions}"


def reports_section(configs: dict[str, dict[str, Any]]) -> list[str]:
    """What `needlec score` reports per config, from the spec's `reports:` (nothing when no config has it)."""
    chosen = {name: info["reports"] for name, info in configs.items() if info.get("reports")}
    if not chosen:
        return []
    lines = [
        "",
        "## Reports",
        "",
        "`needlec score DATASET RESPONSES -o REPORT` reports, per config (all applicable aggregates where "
        "a config is not listed):",
        "",
        "| config | aggregates | headline effective length | baseline |",
        "|---|---|---|---|",
    ]
    for name, rep in chosen.items():
        show = ", ".join(rep.get("show") or []) if rep.get("show") is not None else "all that apply"
        rule = rep.get("effective_length") or {}
        threshold = rule.get("threshold")
        headline = f"{rule.get('rule', 'ruler')}" + ("" if threshold is None else f" (threshold {threshold:g})")
        if rule.get("rule") == "none":
            headline = "none (the benchmark defines no effective length)"
        elif rule.get("rule") == "mlneedle":
            ratio = threshold if threshold is not None else RULE_DEFAULTS["mlneedle"]
            headline = f"mlneedle: score >= {ratio:g} x baseline"
        elif rule.get("rule") == "nolima":
            ratio = threshold if threshold is not None else RULE_DEFAULTS["nolima"]
            headline = f"nolima: score >= {ratio:g} x base score"
        elif rule.get("rule", "ruler") == "ruler":
            points = threshold if threshold is not None else RULE_DEFAULTS["ruler"]
            headline = f"ruler: score >= {points:g} points"
        base = rep.get("baseline") or {}
        baseline = (
            f"config {base['config']}"
            if base.get("config")
            else f"length {base['length']}"
            if base.get("length")
            else "items without distractors, same needle and question languages"
            if base.get("items") == "no_distractors"
            else "none"
        )
        lines.append(f"| {name} | {show} | {headline} | {baseline} |")
    return lines


def repetition_section(configs: dict[str, dict[str, Any]]) -> list[str]:
    """Card lines naming every haystack whose text is repeated to reach a length (none when nothing is)."""
    found = [(name, entry) for name, info in configs.items() for entry in info.get("repetition") or []]
    if not found:
        return []
    lines = [
        "",
        "## Repeated haystack text",
        "",
        "Some haystacks are shorter than some context lengths, so their text appears more than once "
        "in those items (each item marks it in `haystack.repeated`):",
        "",
    ]
    lines += [f"- config `{name}`: {describe_repetition(entry)}" for name, entry in found]
    return lines


def render_card(plan: Plan, manifest: dict[str, Any]) -> str:
    configs = manifest["configs"]
    meta = yaml.safe_dump(card_metadata(plan, configs), sort_keys=False, allow_unicode=True)
    spec = plan.spec
    lines = [
        f"---\n{meta}---",
        "",
        f"# {spec.title}",
        "",
        spec.description.strip(),
        "",
        "Compiled by needlec from a declarative spec; every item has an exact token length "
        "per tokenizer and records where its needles sit.",
        "",
        "## Configs",
        "",
        "| config | split (tokenizer) | rows | bytes |",
        "|---|---|---|---|",
    ]
    for name, info in configs.items():
        for f in info["files"]:
            lines.append(f"| {name} | {f['split']} | {f['rows']} | {f['bytes']} |")
    first = next(iter(configs))
    split = configs[first]["files"][0]["split"]
    lines += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("PATH_OR_REPO", name="{first}", split="{split}")',
        "```",
        "",
        "Each row holds `messages` (the chat to send), `context_span` (where the context sits "
        "in `messages[context_span.message].content`), `needles` with their achieved depths "
        "and offsets, `answers` and `scoring`.",
        "",
        "## Provenance",
        "",
        f"- spec sha256: `{manifest['spec']['sha256']}`",
        f"- content hash: `{manifest['content_hash']}`",
        f"- needlec version: `{manifest['needlec_version']}`",
    ]
    for source in manifest["sources"]:
        lines.append(f"- source `{source['name']}` sha256 `{source['sha256']}`")
        for corpus in source.get("corpora", []):
            lines.append(f"  - corpus `{corpus['name']}`, licence {corpus['licence']}, sha256 `{corpus['sha256']}`")
    lines += filter_section(manifest.get("filters") or [])
    lines += reports_section(configs)
    lines += repetition_section(configs)
    if spec.citation.strip():
        lines += ["", "## Citation", "", "```bibtex", spec.citation.strip(), "```"]
    return "\n".join(lines) + "\n"
