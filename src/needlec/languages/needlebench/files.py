"""Read the packaged NeedleBench data files, refusing any whose sha256 differs from `manifest.json`."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources

from needlec.languages.needlebench.models import Manifest, NeedleDataError

PACKAGE = "needlec.languages.needlebench"


def _read(name: str) -> bytes:
    try:
        return resources.files(PACKAGE).joinpath(name).read_bytes()
    except (FileNotFoundError, OSError) as exc:
        raise NeedleDataError(f"NeedleBench data file {name!r} is missing from the installed package") from exc


@cache
def manifest() -> Manifest:
    """The pinned digests of the data files."""
    return Manifest.model_validate_json(_read("manifest.json"))


def read_verified(name: str) -> object:
    """Parse one data file after checking its sha256 against the manifest."""
    expected = manifest().files.get(name)
    if expected is None:
        raise NeedleDataError(f"NeedleBench data file {name!r} is not listed in manifest.json")
    data = _read(name)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise NeedleDataError(
            f"NeedleBench data file {name!r} has sha256 {actual}, the manifest pins {expected}; "
            "reinstall needlec or rebuild the data with scripts/build_needlebench_data.py"
        )
    parsed: object = json.loads(data.decode("utf-8"))
    return parsed
