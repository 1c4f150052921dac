"""Shards: the units of work of a compile, named by their content, kept until the compile is done.

A compile's items, in key order, fall into *cells* (config x tokenizer x length: one data file
holds the cells of one config and tokenizer, one after the other). A cell is cut into *blocks* of
at most `BLOCK` consecutive items; a block is what one worker builds in one go, and its items go
to one shard file. The cut depends only on the selected item keys, never on `--jobs`, so a shard
built by any number of workers, by another `--shard I/N` slice or by an earlier, killed run has
the same name and the same bytes.

A block's name is the sha256 of everything its bytes depend on: the code (needlec's version and
the sha256 of its package files), the spec's name, the config (name, variant values and its
resolved spec), the sha256 of the config's haystacks, the tokenizer's description and the item
keys; `verify` is in it too, because it adds checks (and so possibly problems) to the summary.
A finished shard is two files in a *store*: `NAME.jsonl` (the items, one line each, exactly as
they go into the data file) and `NAME.json` (its summary: items, tokens, contract problems, overlap
figures, and the size and sha256 of `NAME.jsonl`), written last and atomically. A shard is reused
only when its lines file still has that size and sha256: one edited, cut short or half copied is
built again (in a compile's own store) or refused (in a slice that `merge` reads).

A compile keeps its store beside the output (`.DIR.shards/`) until the dataset is in place, so a
rerun after a crash, a kill or a failed cell builds only the shards that are missing; a slice
(`--shard I/N`) carries its shards in its own `shards/` folder, which `merge` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from needlec.errors import NeedlecError, OutputError
from needlec.util import canonical
from needlec.util.atomic import write_file_atomic
from needlec.util.canonical import sha256_json
from needlec.util.sums import file_digest
from needlec.version import __version__

BLOCK = 16  # items per shard: small enough to spread 200 items over 16 cores, large enough to stay cheap
STORE_SUFFIX = ".shards"
STORE_MARK = "store.json"
SLICE_FILE = "slice.json"
SLICE_SHARDS = "shards"


@dataclass(frozen=True)
class Block:
    """One shard's worth of work: `work[start:end]`, all of one cell."""

    index: int  # position among all blocks of the compile, in key order
    start: int
    end: int
    cell: str  # "config/tokenizer/length", as messages name it
    slot: tuple[str, str]  # (config, tokenizer): the data file it belongs to
    name: str  # content address

    @property
    def count(self) -> int:
        return self.end - self.start


@dataclass
class Summary:
    """What a shard holds besides its lines: enough to write the manifest without reading it."""

    count: int
    tokens: int
    problems: list[str] = field(default_factory=list)
    overlap: list[tuple[str, str, dict[str, float]]] = field(default_factory=list)  # (config, against, scores)
    error: str | None = None  # a failed block: what went wrong (its shard is not kept)
    size: int = 0  # bytes of the shard's lines file
    sha256: str = ""  # of the shard's lines file

    def to_json(self) -> bytes:
        return canonical.dumps(
            {
                "count": self.count,
                "tokens": self.tokens,
                "problems": self.problems,
                "overlap": [[c, a, s] for c, a, s in self.overlap],
                "size": self.size,
                "sha256": self.sha256,
            }
        )

    @classmethod
    def from_json(cls, data: bytes) -> Summary:
        raw = json.loads(data)
        return cls(
            int(raw["count"]),
            int(raw["tokens"]),
            [str(p) for p in raw["problems"]],
            [(str(c), str(a), {str(k): float(v) for k, v in s.items()}) for c, a, s in raw["overlap"]],
            size=int(raw["size"]),
            sha256=str(raw["sha256"]),
        )

    def matches(self, lines: Path) -> bool:
        """Whether `lines` is the file this summary was written for: its size, then its sha256."""
        try:
            if lines.stat().st_size != self.size:
                return False
            return file_digest(lines)[0] == self.sha256
        except OSError:
            return False


@lru_cache(maxsize=1)
def code_version() -> str:
    """needlec's version and the sha256 of every file of its package (code and data).

    A shard built by other code is never reused, even when the version string did not change
    (an edited checkout, a development build).
    """
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{__version__}+{digest.hexdigest()[:16]}"


def plan_blocks(
    cells: Sequence[tuple[str, str, int]],
    keys: Sequence[Any],
    fingerprint: Callable[[str, str], dict[str, Any]],
    verify: bool,
) -> list[Block]:
    """Cut the work (one cell and one key per item, in key order) into blocks and name them.

    `fingerprint(config, tokenizer)` is what the items of that config and tokenizer depend on
    besides their keys (spec, haystacks, tokenizer).
    """
    code = code_version()
    prints: dict[tuple[str, str], str] = {}
    blocks: list[Block] = []
    start = 0
    while start < len(cells):
        cell = cells[start]
        end = start + 1
        while end < len(cells) and end - start < BLOCK and cells[end] == cell:
            end += 1
        slot = (cell[0], cell[1])
        if slot not in prints:
            prints[slot] = sha256_json(fingerprint(*slot))
        name = sha256_json(
            {
                "code": code,
                "slot": prints[slot],
                "verify": verify,
                "keys": [_key_json(k) for k in keys[start:end]],
            }
        )
        blocks.append(Block(len(blocks), start, end, f"{cell[0]}/{cell[1]}/{cell[2]}", slot, name))
        start = end
    return blocks


def _key_json(key: Any) -> list[Any]:
    return [key.config, key.tokenizer, key.length, repr(key.depth), key.case, key.haystack, key.repeat, key.redraw]


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` (1 <= I <= N) as given to `--shard`."""
    head, _, tail = text.partition("/")
    try:
        index, count = int(head), int(tail)
    except ValueError:
        raise NeedlecError(f"--shard expects I/N with whole numbers, e.g. 1/4; got {text!r}") from None
    if not 1 <= index <= count:
        raise NeedlecError(f"--shard I/N needs 1 <= I <= N; got {text!r}")
    return index, count


def in_shard(block: Block, shard: tuple[int, int] | None) -> bool:
    """Blocks are dealt round-robin to the N slices, so every slice gets a share of every cell size."""
    return shard is None or block.index % shard[1] == shard[0] - 1


def store_dir(target: Path) -> Path:
    """The store of finished shards that a compile into `target` keeps until it succeeds."""
    return target.parent / f".{target.name}{STORE_SUFFIX}"


class DamagedShard(NeedlecError):
    """A slice's shard whose lines no longer match its summary."""


class ShardStore:
    """Finished shards: one folder that this compile writes, plus read-only folders (slices)."""

    def __init__(self, root: Path, extra: Iterable[Path] = (), previous: Path | None = None) -> None:
        self.root = root
        self.extra = list(extra)
        self.previous = previous  # the shards of the slice this compile replaces (its own, from an earlier run)
        self.damaged: list[str] = []  # shards of this store found damaged, to be built again

    def open(self) -> None:
        """Create the store, or check that an existing folder of that name is one."""
        if self.root.exists():
            if not (self.root / STORE_MARK).is_file():
                raise OutputError(
                    f"refusing to use {self.root} for finished shards: it exists and is not a needlec shard store; "
                    "move it away and run again"
                )
            return
        self.root.mkdir(parents=True)
        write_file_atomic(self.root / STORE_MARK, canonical.dumps({"needlec_shard_store": 1}) + b"\n")

    def find(self, name: str) -> Path | None:
        """The folder that holds the finished shard `name`, if any."""
        for folder in [self.root, *self.extra, *([self.previous] if self.previous is not None else [])]:
            if (folder / f"{name}.json").is_file() and (folder / f"{name}.jsonl").is_file():
                return folder
        return None

    def summary(self, name: str) -> Summary | None:
        """The summary of the finished shard `name`, checked against its lines file; None where there is no such
        shard, or (in this compile's own store) where it is damaged: it is built again. A damaged shard in a
        slice is refused (DamagedShard), since a merge builds nothing."""
        folder = self.find(name)
        if folder is None:
            return None
        try:
            summary = Summary.from_json((folder / f"{name}.json").read_bytes())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            summary = None
        if summary is not None and summary.matches(folder / f"{name}.jsonl"):
            return summary
        if folder != self.root and folder != self.previous:
            raise DamagedShard(
                f"shard {name} in {folder} is damaged: its lines file does not match the size and sha256 its "
                f"summary records (or the summary does not read). Compile that slice again (the same "
                "`needlec compile ... --shard I/N`), then merge."
            )
        self.damaged.append(name)
        return None

    def lines(self, name: str) -> Path:
        folder = self.find(name)
        if folder is None:
            raise NeedlecError(f"shard {name} is missing from {self.root}")
        return folder / f"{name}.jsonl"

    def temporary(self, name: str) -> Path:
        """Where a worker writes a shard's lines before `finish` puts them in place."""
        return self.root / f".{name}.{uuid.uuid4().hex[:8]}.part"

    def finish(self, name: str, part: Path, summary: Summary) -> None:
        os.replace(part, self.root / f"{name}.jsonl")
        write_file_atomic(self.root / f"{name}.json", summary.to_json())


def is_slice(folder: Path) -> bool:
    """True when `folder` is a slice written by `needlec compile --shard I/N`."""
    try:
        data = json.loads((folder / SLICE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "needlec_slice" in data


def read_slice(folder: Path) -> dict[str, Any]:
    if not is_slice(folder):
        raise NeedlecError(f"{folder} is not a slice written by `needlec compile --shard I/N` (no {SLICE_FILE})")
    data: dict[str, Any] = json.loads((folder / SLICE_FILE).read_text(encoding="utf-8"))
    return data
