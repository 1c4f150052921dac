"""One site build shared by the site test modules: the shipped specs, in a copy of the mkdocs project.

The copy keeps the working tree untouched; the build runs once per test session.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from needlec.cli import build_parser
from needlec.site.build import GENERATED, SiteOptions, SiteResult, build_site

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
SPECS = sorted(p for p in (ROOT / "specs").rglob("*") if p.suffix in (".yaml", ".yml", ".json"))

_BUILT: dict[str, tuple[Path, SiteResult]] = {}


def copy_project(target: Path) -> Path:
    """The mkdocs project without generated pages or built HTML, with the shipped specs beside it
    (and the reviewed filter decisions they point to, `../reviews/`)."""
    shutil.copytree(SITE, target, ignore=shutil.ignore_patterns(GENERATED, "site", "__pycache__"))
    shutil.copytree(ROOT / "specs", target.parent / "specs")
    shutil.copytree(ROOT / "reviews", target.parent / "reviews")
    return target


def built_site(factory: pytest.TempPathFactory) -> tuple[Path, SiteResult]:
    """(project folder, result) of `build_site` over every shipped spec, built on first use."""
    if "site" not in _BUILT:
        project = copy_project(factory.mktemp("site-build") / "site")
        options = SiteOptions(project=project, cli_parser=build_parser())
        result = build_site(None, options)  # finds the specs beside the project
        _BUILT["site"] = (project, result)
    return _BUILT["site"]
