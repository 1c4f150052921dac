"""Install size of the embedded corpora and the time to load each one, cold, through the builtin source.

For every corpus: compressed bytes on disk, characters, and the wall time of a cold load
(catalog cached, passage cache cleared): xz decompression, sha256 check, JSON parsing and the
rebuild of documents. Also the time to read the catalog and the whole package's size on disk.
Nothing is asserted.

    python benchmarks/corpora_load.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="cold loads per corpus; the best is shown")
    args = parser.parse_args()

    from pathlib import Path as _P

    from needlec.haystacks.sources import corpora
    from needlec.haystacks.sources.base import SourceContext
    from needlec.haystacks.sources.builtin import BuiltinSource, _web_bible, load_builtin

    start = time.perf_counter()
    entries = corpora.catalog()
    catalog_s = time.perf_counter() - start
    root = Path(str(corpora._package_root()))
    print(
        f"package folder {root}: {folder_bytes(root) / 1e6:.2f} MB on disk "
        f"(data {folder_bytes(root / 'data') / 1e6:.2f} MB); catalog read in {catalog_s * 1e3:.1f} ms"
    )
    ctx = SourceContext(spec_dir=_P("."), cache_dir=_P("."))
    print(f"{'corpus':30} {'xz bytes':>10} {'characters':>11} {'load s':>8} {'MB/s':>7}")
    total = 0.0
    for info in entries:
        best = float("inf")
        for _ in range(args.repeat):
            corpora.passages.cache_clear()
            _web_bible.cache_clear()
            t0 = time.perf_counter()
            source = load_builtin(BuiltinSource(type="builtin", corpus=info.name), ctx)
            best = min(best, time.perf_counter() - t0)
        chars = sum(len(d.text) for d in source.documents)
        size = (root / info.file).stat().st_size if info.file else 0
        total += best
        print(f"{info.name:30} {size:>10,} {chars:>11,} {best:>8.3f} {chars / best / 1e6:>7.1f}")
    print(f"all {len(entries)} corpora, cold, one after another: {total:.2f} s")


if __name__ == "__main__":
    main()
