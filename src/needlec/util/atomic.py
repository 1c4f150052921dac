"""Write a whole output folder or nothing, and never replace a folder that is not ours.

Rules for a target folder (compile `-o`, `publish --to`, `download`, the site's generated pages):

* it may be replaced only if it is missing, empty, or already a folder this tool wrote (the
  `owned` test: for datasets, a `manifest.json` written by needlec); anything else is refused;
* a folder this tool wrote is replaced only while it holds nothing else: every file in it must be
  one its own record lists (`SHA256SUMS` where it has one, else `.needlec-written`, which the swap
  writes into every folder without `SHA256SUMS`). A file the user added (results, notes, a
  haystack the spec reads) makes it refused, whatever flags are given;
* `/`, the home folder, the current folder and every ancestor of the current folder or of a
  guarded path (the spec) are always refused, as is an existing file;
* a lock beside the target makes a second concurrent writer fail at once instead of mixing output;
* the new folder is built beside the target and swapped in with one atomic exchange
  (`renameat2(RENAME_EXCHANGE)` on Linux), so there is no moment without a complete folder. Where
  the exchange is unavailable, two renames are used; a crash between them leaves the old folder
  as `.NAME.partial-old-*`, and the next run refuses to go on and says how to restore it.

An interrupted write (Ctrl-C, SIGTERM, an exception) removes its temporary folder. A SIGKILL
cannot be caught; its leftover `.NAME.partial-*` folder is removed by the next run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import glob
import json
import os
import re
import shutil
import signal
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO

from needlec.errors import OutputError
from needlec.util.sums import SUMS, file_digest

PARTIAL = ".partial-"
OLD = "old-"
LOCK = ".lock"
MANIFEST = "manifest.json"
WRITTEN = ".needlec-written"
"""The record of the files a written folder holds, where it has no `SHA256SUMS` (one relative path a line)."""
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def is_needlec_dataset(folder: Path) -> bool:
    """True when `folder` holds a manifest written by needlec (a dataset, release or download)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "needlec_version" in manifest


_SUMS_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")
"""A `SHA256SUMS` line, as `needlec verify` reads it."""
PARTIAL_RECORD = ".needlec-partial.json"
"""The record of a copy of some configs only (`download NAME/CONFIG`): which configs it holds."""
DATASET_FILES = ("manifest.json", "README.md", SUMS, "audit/filters.jsonl", "audit/summary.md", PARTIAL_RECORD)
"""What a dataset folder holds besides the data files its manifest lists."""
SYSTEM_JUNK = {".DS_Store", "Thumbs.db", "desktop.ini"}
"""Files a desktop's file browser leaves in any folder it shows: never a reason to keep a folder."""


def written_files(folder: Path) -> set[str] | None:
    """The files this tool wrote into `folder`, by the folder's own records: the paths its `SHA256SUMS` lists
    (else its `.needlec-written`), and for a dataset what its manifest lists (so a missing, damaged or cut
    `SHA256SUMS` neither lets a user's file through nor makes needlec's own look foreign); None where the
    folder keeps no record at all (an older folder of another kind)."""
    listed: set[str] = set()
    found = False
    for record in (SUMS, WRITTEN):
        try:
            text = (folder / record).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if record == SUMS:
            names = [m.group(2) for m in map(_SUMS_LINE.fullmatch, (line.strip() for line in text.splitlines())) if m]
        else:
            names = [line for line in text.splitlines() if line]
        if names:
            listed.update(names, [record])
            found = True
            break
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        manifest = None
    if isinstance(manifest, dict) and "needlec_version" in manifest:
        listed.update(DATASET_FILES)
        configs = manifest.get("configs")
        for info in configs.values() if isinstance(configs, dict) else []:
            for entry in info.get("files", []) if isinstance(info, dict) else []:
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    listed.add(entry["path"])
        found = True
    return listed if found else None


def foreign_files(folder: Path) -> list[str]:
    """Files in `folder` that its record of what this tool wrote does not list (relative POSIX paths)."""
    listed = written_files(folder)
    if listed is None:
        return []
    found = (p for p in folder.rglob("*") if (p.is_file() or p.is_symlink()) and p.name not in SYSTEM_JUNK)
    return sorted(q for q in (p.relative_to(folder).as_posix() for p in found) if q not in listed)


def edited_files(folder: Path) -> list[str]:
    """Files of `folder` that its `SHA256SUMS` lists but whose bytes are no longer the ones listed: edited since
    needlec wrote them (a note added to the card, say). Data files (under a `data` folder) are left out: they
    can be gigabytes, and they are needlec's output alone."""
    try:
        text = (folder / SUMS).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    edited = []
    for match in map(_SUMS_LINE.fullmatch, (line.strip() for line in text.splitlines())):
        if match is None or "data" in Path(match.group(2)).parts[:-1]:
            continue
        path = folder / match.group(2)
        if path.is_file() and not path.is_symlink() and file_digest(path)[0] != match.group(1):
            edited.append(match.group(2))
    return sorted(edited)


def _record_written(folder: Path) -> None:
    """Write `.needlec-written` into a finished folder that has no `SHA256SUMS` to say what it holds."""
    if (folder / SUMS).is_file():
        return
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    (folder / WRITTEN).write_text("".join(f"{f}\n" for f in [*files, WRITTEN]), encoding="utf-8")


def check_target(
    target: Path,
    owned: Callable[[Path], bool] = is_needlec_dataset,
    guard: Iterable[Path] = (),
    what: str = "a needlec dataset",
) -> Path:
    """Resolve `target` and refuse (OutputError, exit 2) any folder that must not be replaced."""
    resolved = Path(os.path.abspath(os.path.expanduser(target)))
    resolved = resolved.parent.resolve() / resolved.name if resolved.name else resolved.resolve()
    if resolved.is_symlink():
        resolved = resolved.resolve()
    cwd = Path.cwd().resolve()
    home = Path.home().resolve()
    protected: dict[Path, str] = {Path(resolved.anchor): "the file system root", home: "your home folder"}
    protected[cwd] = "the current folder"
    for parent in cwd.parents:
        protected.setdefault(parent, "an ancestor of the current folder")
    for path in guard:
        path = Path(path).resolve()
        protected.setdefault(path, "an input of this command")
        for parent in path.parents:
            protected.setdefault(parent, f"a folder that contains {path.name}")
    if resolved in protected:
        raise OutputError(
            f"refusing to write to {target}: it is {protected[resolved]}, and writing replaces the whole folder. "
            "Name a new or empty folder instead, e.g. build/NAME."
        )
    if resolved.exists() and not resolved.is_dir():
        raise OutputError(f"refusing to write to {target}: it is an existing file, not a folder; nothing was changed")
    blocking = next((p for p in resolved.parents if p.exists()), None)  # the nearest folder there is, it should be
    if blocking is not None and not blocking.is_dir():
        raise OutputError(
            f"refusing to write to {target}: {blocking} is an existing file, so no folder can be made inside it; "
            "nothing was changed"
        )
    if resolved.is_dir() and any(resolved.iterdir()) and not owned(resolved):
        if (resolved / "slice.json").is_file() and "slice" not in what:  # `compile --shard`'s (compile/shards.py)
            raise OutputError(
                f"refusing to replace {target}: it holds a slice of a sharded compile (`compile --shard I/N`), not "
                f"{what}; join the slices with `needlec merge -o DIR SLICE...`, or write elsewhere"
            )
        raise OutputError(
            f"refusing to replace {target}: it is not empty and not {what}. "
            "Only a missing folder, an empty folder or one this tool wrote is replaced; "
            "choose another folder or empty this one yourself."
        )
    foreign = foreign_files(resolved) if resolved.is_dir() else []
    edited = edited_files(resolved) if resolved.is_dir() and not foreign else []
    if edited:
        raise OutputError(
            f"refusing to replace {target}: {_some(edited)} changed since needlec wrote "
            f"{'it' if len(edited) == 1 else 'them'} "
            f"(the folder's {SUMS} records what was written), and replacing the folder would lose the changes. "
            "Copy them elsewhere or restore the files, or choose another folder; nothing was changed."
        )
    if foreign:
        raise OutputError(
            f"refusing to replace {target}: besides what needlec wrote there it holds {len(foreign)} other "
            f"file(s) ({_some(foreign)}), which replacing the folder would delete. Move them elsewhere or choose "
            "another folder; nothing was changed."
        )
    return resolved


def check_same_dataset(target: Path, content_hash: str, force: bool, what: str = "this one") -> None:
    """Refuse (OutputError) to replace a dataset folder that holds another dataset (a manifest with another
    content hash) unless `force`: a publish or download of the same dataset replaces its earlier copy, a
    different one is refused as a compile into a folder of another spec is."""
    path = Path(target) / "manifest.json"
    if force or not path.is_file():
        return
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # not a manifest of ours: `check_target` has judged the folder already
    old = held.get("content_hash") if isinstance(held, dict) else None
    if not isinstance(old, str) or old == content_hash:
        return
    spec = held.get("spec") if isinstance(held.get("spec"), dict) else {}
    name = f" of spec {spec['name']!r}" if isinstance(spec.get("name"), str) else ""
    raise OutputError(
        f"refusing to replace {target}: it holds another dataset{name} (content hash {old[:12]}), not {what} "
        f"({content_hash[:12]}). Pass --force (force=True from Python) to replace it, or choose another folder; "
        "nothing was changed."
    )


def _some(names: list[str]) -> str:
    """The first five names, and how many more."""
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def inside(root: Path, relative: str) -> Path:
    """`root / relative`, refusing any path that would land outside `root` (`..`, absolute, links)."""
    base = root.resolve()
    path = (base / relative).resolve()
    if path != base and base not in path.parents:
        raise OutputError(f"refusing to write {relative!r}: it would land outside the output folder")
    return path


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False when the system cannot."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    function = getattr(libc, "renameat2", None)
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _lock(target: Path) -> IO[bytes]:
    import fcntl

    path = target.parent / f".{target.name}{LOCK}"
    handle = path.open("ab")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise OutputError(
            f"another needlec command is writing {target} right now; wait for it to finish (lock: {path})"
        ) from None
    return handle


def _unlock(target: Path, handle: IO[bytes]) -> None:
    path = target.parent / f".{target.name}{LOCK}"
    with suppress(OSError):
        path.unlink()
    handle.close()


def _leftovers(target: Path, old: bool) -> list[Path]:
    """This target's own temporary folders (`.NAME.partial-<hex>`, or with `old` the saved previous folders
    `.NAME.partial-old-<hex>`), by exact name: never another target's, whatever characters NAME holds."""
    head = f".{target.name}{PARTIAL}{OLD if old else ''}"
    return sorted(
        p
        for p in target.parent.glob(glob.escape(head) + "*")
        if re.fullmatch(r"[0-9a-f]+", p.name[len(head) :]) is not None
    )


def _clean_leftovers(target: Path) -> None:
    olds = _leftovers(target, old=True)
    if olds and not target.exists():
        raise OutputError(
            f"an earlier run was interrupted while replacing {target}; the previous folder is safe at "
            f"{olds[0]}. Restore it with `mv {olds[0]} {target}` (or delete it), then run again."
        )
    for stale in _leftovers(target, old=False) + olds:
        shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def atomic_directory(
    target: Path,
    owned: Callable[[Path], bool] = is_needlec_dataset,
    guard: Iterable[Path] = (),
    what: str = "a needlec dataset",
) -> Iterator[Path]:
    """Yield a fresh temporary folder; on success it replaces `target` in one atomic swap.

    `target` is checked first (see the module rules); `owned` says which existing folders may be
    replaced and `guard` lists inputs whose folders must never be replaced.
    """
    target = check_target(Path(target), owned, guard, what)
    created: list[Path] = []  # the folders above the target that this call makes, the innermost first
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        created.append(folder)
        folder = folder.parent
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield from _locked(target, owned, guard, what)
    finally:
        if not target.exists():  # nothing written: the folders made for it go too, where they are still empty
            for folder in created:
                try:
                    folder.rmdir()
                except OSError:  # not empty (e.g. a compile's kept shards): it stays, and so do those above
                    break


def _locked(target: Path, owned: Callable[[Path], bool], guard: Iterable[Path], what: str) -> Iterator[Path]:
    """`atomic_directory` once the target's folder exists: the lock, the temporary folder and the swap."""
    lock = _lock(target)
    try:
        # checked again under the lock: another writer may have finished in between
        target = check_target(target, owned, guard, what)
        _clean_leftovers(target)
        tmp = target.parent / f".{target.name}{PARTIAL}{uuid.uuid4().hex[:12]}"
        tmp.mkdir()
        previous = None
        try:
            previous = signal.signal(signal.SIGTERM, _terminate)
        except ValueError:  # not the main thread: leave signal handling alone
            previous = None
        try:
            yield tmp
            _record_written(tmp)
            _swap(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    finally:
        _unlock(target, lock)


def _swap(tmp: Path, target: Path) -> None:
    if not target.exists():
        os.replace(tmp, target)
        return
    if _exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # `tmp` now holds the old folder
        return
    old = target.parent / f".{target.name}{PARTIAL}{OLD}{uuid.uuid4().hex[:12]}"
    os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


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
