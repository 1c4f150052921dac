"""`--select` through the installed command: every value is checked against the spec's grid.

Expected counts are worked out by hand from the shipped specs' grids (comments give the sums).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPECS

import needlec
from needlec.errors import NeedlecError

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def dry(spec: str, *select: str) -> subprocess.CompletedProcess[str]:
    args = [NEEDLEC, "compile", str(SPECS / spec), "--dry-run"]
    for value in select:
        args += ["--select", value]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def items(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stderr
    found = re.match(r"(\d+) items", result.stdout)
    assert found, result.stdout
    return int(found.group(1))


def test_a_length_not_in_the_grid_lists_the_lengths_and_the_closest() -> None:
    # RULER's lengths are powers of two from 4,096 to 131,072
    result = dry("ruler.yaml", "length=4000")
    assert result.returncode == 2
    assert "4000 is not a length of ruler; lengths: 4096, 8192, 16384, 32768, 65536, 131072" in result.stderr
    assert "(closest: 4096)" in result.stderr
    assert "Traceback" not in result.stderr


def test_k_suffix_names_the_one_grid_length_it_can_mean() -> None:
    # niah `single`: 2 tokenizers x 11 depths = 22 items per length; 4K is 4,000 there, 4,096 in RULER
    assert items(dry("niah.yaml", "config=single", "length=4K")) == 22
    assert items(dry("niah.yaml", "config=single", "length=4000")) == 22
    assert items(dry("ruler.yaml", "length=4K")) == items(dry("ruler.yaml", "length=4096"))
    assert items(dry("ruler.yaml", "length=128k")) == items(dry("ruler.yaml", "length=131072"))
    missing = dry("niah.yaml", "length=3K")
    assert missing.returncode == 2 and "3K is not a length of niah" in missing.stderr


def test_ranges_are_inclusive_and_checked() -> None:
    # niah `single` lengths 1K..128K doubling; 2,000-64,000 holds 2K, 4K, 8K, 16K, 32K, 64K: 6 x 22
    assert items(dry("niah.yaml", "config=single", "length=2000-64000")) == 6 * 22
    # 4K-8K reads as 4,000 to 8,192: 4K and 8K in niah
    assert items(dry("niah.yaml", "config=single", "length=4K-8K")) == 2 * 22
    # depths 0..100 by 10: 0-30 holds 4 of them; 8 lengths x 2 tokenizers x 4
    assert items(dry("niah.yaml", "config=single", "depth=0-30")) == 64
    past = dry("nolima.yaml", "repeat=1-10")  # NoLiMa has one repeat (index 0)
    assert past.returncode == 2 and "repeat indexes: 0" in past.stderr
    backwards = dry("niah.yaml", "depth=50-10")
    assert backwards.returncode == 2 and "50-10 is a range from high to low; give it" in backwards.stderr


def test_depth_written_as_a_float_or_an_integer_matches() -> None:
    # niah `single`: 8 lengths x 2 tokenizers at one depth
    assert items(dry("niah.yaml", "config=single", "depth=50")) == 16
    assert items(dry("niah.yaml", "config=single", "depth=50.0")) == 16
    wrong = dry("niah.yaml", "config=single", "depth=55")
    assert wrong.returncode == 2 and "55 is not a depth of niah" in wrong.stderr


def test_malformed_and_unknown_values_are_errors() -> None:
    for value, expected in (
        ("length=abc", "abc is not a length of niah"),
        ("length=", "names no value"),
        ("repeat=x", "x is not a repeat index of niah; repeat indexes: 0"),
        ("tokenizer=cl100k", "(closest: cl100k_base)"),
        ("config=singel", "no config named singel"),
        ("colour=red", "--select accepts config, tokenizer, length, depth, haystack, repeat"),
        ("lenght=1000", "got lenght; did you mean 'length'?"),
        ("depth=50-0", "50-0 is a range from high to low; give it low to high: 0-50"),
        ("length=8K-1K", "8K-1K is a range from high to low; give it low to high: 1K-8K"),
        ("length" + "9" * 200, "expects KEY=V1,V2"),
    ):
        result = dry("niah.yaml", value)
        assert result.returncode == 2, value
        assert expected in result.stderr, (value, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr) < 1000  # a long value is quoted only in part


def test_an_empty_selection_fails_in_dry_run_too(tmp_path: Path) -> None:
    # depth 50 is in `single`'s grid, and depth 7 only in `kamradt-grid` (rounded percents): together, nothing
    result = dry("niah.yaml", "config=single", "depth=7")
    assert result.returncode == 2
    assert "matches no item" in result.stderr
    assert not (tmp_path / "out").exists()


def test_python_api_takes_the_command_line_string_form(tmp_path: Path) -> None:
    spec = SPECS / "niah.yaml"
    as_string = needlec.compile(spec, None, select={"config": "single,passkey", "length": "1K-2K"}, dry_run=True)
    as_list = needlec.compile(
        spec, None, select={"config": ["single", "passkey"], "length": [1000, 2000]}, dry_run=True
    )
    # 2 configs x 2 lengths x 22
    assert as_string.items == as_list.items == 88
    with pytest.raises(NeedlecError, match="4096 is not a length of niah"):
        needlec.compile(spec, None, select={"length": 4096}, dry_run=True)
