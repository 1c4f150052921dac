#!/usr/bin/env python3
"""Compute the vectors that ranked `passages` specs need and ship them with `needlec-corpora`.

A spec whose `passages` builder has `rank` embeds every passage of its haystacks and every question
its items ask. For the shipped specs those texts come from the embedded corpora, so their vectors
are computed once here and written to `corpora/needlec-corpora/src/needlec_corpora/vectors/`, one
`.npz` per model (named like the embedding cache's folder for it), with the cache's keys
(sha256 of model id and text, as 32 raw bytes) and float16 rows. `needlec` reads them as part of its embedding cache,
and they win over locally computed vectors, so every machine ranks with the same ones.

    python scripts/embed_corpora.py                  # every shipped spec that ranks passages
    python scripts/embed_corpora.py specs/mlneedle.yaml --out DIR

It runs the compile's own preparation (sources, filters, haystacks, rankings of every item's
question) into a fresh cache, with a progress bar while encoding, and merges what that cache holds
with the vectors already shipped. Rerunning it after a spec or corpus change adds the new texts.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "corpora" / "needlec-corpora" / "src" / "needlec_corpora" / "vectors"


def ranked_specs() -> list[Path]:
    """Shipped specs with a ranked `passages` builder in some config and no downloaded source."""
    from needlec.compile.plan import load_plan

    found = []
    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        if "type: url" in path.read_text(encoding="utf-8"):
            continue
        plan = load_plan(path)
        if any(getattr(c.spec.haystack.builder, "rank", None) is not None for c in plan.configs):
            found.append(path)
    return found


def prepare(spec: Path, cache: Path) -> None:
    from needlec.compile.pipeline import Prepared, _units, prepare_work
    from needlec.compile.plan import load_plan
    from needlec.compile.progress import Progress

    plan = load_plan(spec, cache_dir=cache)
    prepared = Prepared(plan, cache)
    prepare_work(prepared, _units(plan, prepared, {}), Progress(True))


def merge(cache: Path, out: Path) -> list[Path]:
    """Write one .npz per model folder of `cache`, merged with what `out` already holds."""
    from needlec.util.atomic import write_file_atomic

    written = []
    for folder in sorted((cache / "filters" / "embeddings").iterdir()):
        rows: dict[str, np.ndarray] = {}
        target = out / f"{folder.name}.npz"
        if target.is_file():
            with np.load(target) as data:
                rows.update(zip((bytes(k).hex() for k in data["keys"]), data["vectors"], strict=True))
        for shard in sorted(folder.glob("*.npz")):
            with np.load(shard) as data:
                for key, row in zip(data["keys"], data["vectors"], strict=True):
                    rows.setdefault(str(key), row)
        keys = sorted(rows)
        buffer = io.BytesIO()
        # keys as rows of their 32 raw bytes (not numpy's "S32", which drops trailing zero bytes), rows as
        # float16: half the size, and the same on every machine
        np.savez_compressed(
            buffer,
            keys=np.frombuffer(b"".join(bytes.fromhex(k) for k in keys), dtype=np.uint8).reshape(len(keys), 32),
            vectors=np.stack([rows[k] for k in keys]).astype(np.float16),
        )
        out.mkdir(parents=True, exist_ok=True)
        write_file_atomic(target, buffer.getvalue())
        written.append(target)
        print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: {len(keys)} vectors")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="*", type=Path, help="specs to prepare (default: the shipped ranked ones)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the shipped vectors")
    args = parser.parse_args(argv)
    specs = args.specs or ranked_specs()
    with tempfile.TemporaryDirectory(prefix="needlec-embed-") as scratch:
        cache = Path(scratch)
        for spec in specs:
            print(f"preparing {spec}", file=sys.stderr)
            yaml.safe_load(spec.read_text(encoding="utf-8"))  # a clear error for a broken file first
            prepare(spec, cache)
        merge(cache, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
