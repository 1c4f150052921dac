"""Progress on standard error: whole lines, no carriage returns, where it goes to a file or a pipe (a log)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPECS

from needlec.util.progress import LineBar, SilentBar, bar, interactive

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def test_a_log_gets_a_line_at_the_start_while_counting_and_at_the_end() -> None:
    out = io.StringIO()
    with LineBar(40, "compile demo", stream=out, every=0.0) as counting:  # every update prints a line
        for _ in range(4):
            counting.update(10)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0] == "compile demo: 0/40 items (0%)"
    assert [line.split(": ", 1)[1].split(",")[0] for line in lines[1:5]] == [
        "10/40 items (25%)",
        "20/40 items (50%)",
        "30/40 items (75%)",
        "40/40 items (100%)",
    ]
    assert "s left" in lines[1] and "items/s" in lines[1]
    assert lines[-1].startswith("compile demo: 40/40 items (100%), ") and " in " in lines[-1]
    assert len(lines) == 6  # the start, one line per update and the end line when the context closes it


def test_a_resumed_count_starts_where_it_was_and_lines_wait_between() -> None:
    out = io.StringIO()
    counting = LineBar(10, "compile demo", unit="shard", initial=4, stream=out, every=3600.0)
    for _ in range(6):
        counting.update(1)  # within the hour: no line
    counting.close()
    counting.close()
    assert out.getvalue().splitlines()[0] == "compile demo: 4/10 shards (40%)"
    assert out.getvalue().splitlines()[1].startswith("compile demo: 10/10 shards (100%), ")
    assert len(out.getvalue().splitlines()) == 2


def test_rates_and_times_read_without_exponents() -> None:
    from needlec.util.progress import _duration, _rate

    assert [_rate(r) for r in (1234.4, 100.0, 97.14, 2.875, 0.25)] == ["1234", "100", "97.1", "2.88", "0.25"]
    assert [_duration(s) for s in (0.44, 9.96, 39.4, 60, 725, 7385)] == [
        "0.4 s",
        "10.0 s",
        "39 s",
        "1 min 0 s",
        "12 min 5 s",
        "2 h 3 min",
    ]


def test_bar_in_a_log_is_lines_and_off_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)  # standard error to a file, as `2> compile.log` makes it
    assert not interactive()
    assert isinstance(bar(3, "x", enabled=False), SilentBar)
    with bar(3, "x") as counting:
        assert isinstance(counting, LineBar)
        counting.update(3)
    assert log.getvalue().splitlines()[-1].startswith("x: 3/3 items (100%), ")


def test_a_compile_whose_stderr_is_a_pipe_logs_lines(tmp_path: Path) -> None:
    selected = ["--select", "length=1000", "--select", "config=single"]
    done = subprocess.run(
        [NEEDLEC, "compile", str(SPECS / "niah.yaml"), "-o", str(tmp_path / "out"), *selected],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith("compile niah: 0/") for line in lines), lines  # the bar's first line
    assert re.search(r"^compile niah: (\d+)/\1 items \(100%\), [\d.]+ items/s, in [\d.]+ s$", done.stderr, re.M), lines
