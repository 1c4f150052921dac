"""Write a whole output directory or nothing: build it beside the target, then rename it in.

An interrupted compile (Ctrl-C, SIGTERM, an exception) removes its temporary directory. A
SIGKILL cannot be caught; its leftover is a hidden `.NAME.partial-*` folder that the next run
for the same output removes.
"""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

PARTIAL = ".partial-"


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a fresh temporary directory; on success it replaces `target` in one rename."""
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}{PARTIAL}*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = target.parent / f".{target.name}{PARTIAL}{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: leave signal handling alone
        previous = None
    try:
        yield tmp
        if target.exists():
            old = target.parent / f".{target.name}{PARTIAL}old-{uuid.uuid4().hex[:12]}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so readers see the old file or the whole new one, never a part.

    The bytes go to a hidden sibling first (same folder, so the rename stays on one file system)
    and replace `path` in one `os.replace`; a failed write leaves no partial file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
