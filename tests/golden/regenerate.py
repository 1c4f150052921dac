"""Compile every shipped spec on a small grid and pin the sha256 of what comes out.

    python tests/golden/regenerate.py          # rewrite tests/golden/*.json
    python tests/golden/regenerate.py --check  # compare only; exit 1 on any difference

`tests/test_golden.py` runs the same compile and compares. Regenerate only for an intended output
change (seeding, serialisation, item schema), and say so in CHANGELOG.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent

# A small grid per shipped spec: every config that has the selected length, one or a few depths.
SELECTIONS: dict[str, dict[str, list[str]]] = {
    "mlneedle": {
        "config": ["en-zh-en-exact", "zh-mul-en-existence", "ar-none-en-exact"],
        "length": ["512", "4000"],
        "depth": ["0", "50"],
        "haystack": ["h0"],
    },
    "mlneedle-pilot": {
        "config": ["en-en-exact", "zh-mul-existence", "ar-none-exact"],
        "length": ["256", "1000"],
        "depth": ["0", "100"],
    },
    "niah": {"length": ["1000"], "depth": ["0", "50", "100"]},
    "nolima": {"config": ["main", "onehop", "distractor"], "length": ["1000"], "depth": ["0"], "haystack": ["h0"]},
    "ruler": {"length": ["4096"], "repeat": ["0"]},
    # sub-folders: one repeat of one tokenizer at the shortest length
    "atc/atc-dag-mc": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-dag-open": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-tree-mc": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-tree-open": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-v1-mc": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-v1-mc-haystack": {"length": ["4000"], "repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "atc/atc-v2": {"repeat": ["0"], "tokenizer": ["cl100k_base"]},
    "mlneedle/mlneedle-question-language": {"length": ["512", "4000"], "repeat": ["0"], "depth": ["0", "50"]},
    "mlneedle/mlneedle-random": {
        "config": ["en-zh-en-exact", "zh-mul-en-existence"],
        "length": ["4000"],
        "depth": ["0"],
        "haystack": ["h0"],
    },
    "needlebench/base": {},
    **{
        f"needlebench/needlebench-{size}": {
            "length": [shortest],
            "depth": ["0", "100"],
            "repeat": ["0"],
            "tokenizer": ["cl100k_base"],
        }
        for size, shortest in [
            ("4k", "1000"),
            ("8k", "5000"),
            ("32k", "9000"),
            ("128k", "16000"),
            ("200k", "16000"),
            ("256k", "32000"),
            ("1000k", "20000"),
        ]
    },
}

NOT_PINNED = {
    "mlneedle/mlneedle-online": "an example that downloads its haystacks and pins placeholder hashes to be filled in",
}
"""Shipped specs without a golden record, and why."""


def shipped_specs() -> list[str]:
    """Every spec under specs/ (sub-folders included) as its path without `.yaml`, e.g. `atc/atc-v2`."""
    return sorted(p.relative_to(ROOT / "specs").with_suffix("").as_posix() for p in (ROOT / "specs").rglob("*.yaml"))


def compile_golden(spec: str, folder: Path) -> dict[str, Any]:
    """Compile `specs/<spec>.yaml` on its small grid into `folder`; the record to pin."""
    from needlec.compile.pipeline import CompileOptions, compile_spec

    select = SELECTIONS[spec]
    out = folder / spec.replace("/", "--")
    options = CompileOptions(select={k: set(v) for k, v in select.items()}, progress=False, cache_dir=folder / "cache")
    result = compile_spec(ROOT / "specs" / f"{spec}.yaml", out, options)
    assert result.manifest is not None
    files = {
        entry["path"]: {"sha256": entry["sha256"], "rows": entry["rows"]}
        for config in result.manifest["configs"].values()
        for entry in config["files"]
    }
    return {
        "spec": f"specs/{spec}.yaml",
        "select": select,
        "item_schema_version": result.manifest["item_schema_version"],
        "files": dict(sorted(files.items())),
        "content_hash": result.manifest["content_hash"],
    }


def golden_path(spec: str) -> Path:
    """Where the pinned record of a spec lives."""
    return GOLDEN / f"{spec}.json"  # a spec in a sub-folder has its record in the same sub-folder here


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the pinned records, write nothing")
    args = parser.parse_args()
    shipped = [name for name in shipped_specs() if name not in NOT_PINNED]
    missing = sorted(set(shipped) - set(SELECTIONS))
    if missing:
        print(f"no golden selection for {', '.join(missing)}: add one to SELECTIONS", file=sys.stderr)
        return 1
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in shipped:
            record = compile_golden(spec, Path(tmp))
            text = json.dumps(record, indent=2, sort_keys=True) + "\n"
            path = golden_path(spec)
            if args.check:
                same = path.is_file() and json.loads(path.read_text(encoding="utf-8")) == record
                differ += not same
                print(f"{spec}: {'same' if same else 'DIFFERENT'}")
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path.relative_to(ROOT)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
