"""Read the packaged NeedleBench data files, refusing any whose sha256 differs from `manifest.json`."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from needlec.languages.needlebench.models import Manifest, NeedleDataError

PACKAGE = "needlec.languages.needlebench"


def data_root() -> Traversable:
    """The folder of the installed data files."""
    return resources.files(PACKAGE)


def _read(root: Traversable | Path, name: str) -> bytes:
    try:
        return root.joinpath(name).read_bytes()
    except OSError as exc:
        raise NeedleDataError(f"NeedleBench data file {name!r} is missing from {root}") from exc


@cache
def _packaged_manifest() -> Manifest:
    return Manifest.model_validate_json(_read(data_root(), "manifest.json"))


def manifest(root: Traversable | Path | None = None) -> Manifest:
    """The pinned digests of the data files (of the installed package, or of a copy at `root`)."""
    if root is None:
        return _packaged_manifest()
    return Manifest.model_validate_json(_read(root, "manifest.json"))


def read_verified(name: str, root: Traversable | Path | None = None) -> object:
    """Parse one data file after checking its sha256 against the manifest beside it.

    `root` defaults to the installed package; a copied or extended data folder can be read the same way.
    """
    folder = data_root() if root is None else root
    expected = manifest(root).files.get(name)
    if expected is None:
        raise NeedleDataError(f"NeedleBench data file {name!r} is not listed in manifest.json")
    data = _read(folder, name)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise NeedleDataError(
            f"NeedleBench data file {name!r} has sha256 {actual}, but manifest.json pins {expected}; "
            "reinstall needlec or rebuild the data with scripts/build_needlebench_data.py"
        )
    parsed: object = json.loads(data.decode("utf-8"))
    return parsed
