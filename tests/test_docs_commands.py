"""Every `needlec ...` command shown in README.md and site/docs parses with the real CLI parser.

Commands are taken from fenced code blocks (a line that starts with `needlec` or `$ needlec`,
continuation lines joined, each part of a `&&` / `;` / `|` chain) and from inline code spans
that hold a whole command: one naming a file or folder, without `[...]` or `A|B` synopsis
notation (`needlec compile --dry-run` in a sentence names an option, not a command). Placeholders such as
`DATASET` parse like any path; a wrong option, a missing required option (`score` without `-o`)
or an unknown subcommand fails. Hints printed by `needlec export` are checked the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
from conftest import ROOT

from needlec.cli import build_parser
from needlec.cli.export import RUN_HINTS

DOCS = [ROOT / "README.md", *sorted((ROOT / "site" / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`(needlec [^`]+)`")
SYNOPSIS = re.compile(r"\[|\]|\||\.\.\.|…")
WHOLE = re.compile(r"\s\S*(/|\.yaml|\.json)")  # an inline span with a path is a whole command


def _chain(line: str) -> list[str]:
    """The `needlec` commands of one shell line (split at `&&`, `;`, `|`; comments dropped)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    commands, current = [], []
    for word in [*words, "&&"]:
        if word in ("&&", ";", "|", "||"):
            if current and current[0] == "needlec":
                commands.append(shlex.join(current))
            current = []
        else:
            current.append(word)
    return commands


def commands() -> list[tuple[str, str]]:
    """(where, command) for every command shown in the docs."""
    found: list[tuple[str, str]] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        for label, block in FENCE.findall(text):
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                line = line.strip()
                if label.strip() == "text" and not line.startswith("$ "):
                    continue  # a `text` block shows output (help texts); only its `$ ` lines are commands
                line = line.removeprefix("$ ")
                if line.startswith("needlec ") or "&& needlec " in line or "; needlec " in line:
                    found.extend((where, c) for c in _chain(line))
        outside = FENCE.sub("", text)
        for span in INLINE.findall(outside):
            if WHOLE.search(span) and not SYNOPSIS.search(span):
                found.extend((where, c) for c in _chain(span))
    return found


def parses(command: str) -> str | None:
    """None when the real parser accepts the command, else its complaint."""
    parser = build_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(shlex.split(command)[1:])
    except SystemExit as exc:
        return None if exc.code == 0 else err.getvalue().strip().splitlines()[-1]
    except argparse.ArgumentError as exc:
        return str(exc)
    return None


FOUND = commands()


def test_the_docs_show_commands_of_every_main_kind() -> None:
    shown = {shlex.split(c)[1] for _, c in FOUND}
    assert {"compile", "validate", "inspect", "score", "export"} <= shown


@pytest.mark.parametrize(("where", "command"), FOUND, ids=[f"{w}:{c[:60]}" for w, c in FOUND])
def test_a_documented_command_parses(where: str, command: str) -> None:
    problem = parses(command)
    assert problem is None, f"{where}: `{command}`: {problem}"


@pytest.mark.parametrize("runner", sorted(RUN_HINTS))
def test_export_hints_parse(runner: str) -> None:
    hint = RUN_HINTS[runner].format(out="build/x-runner", dataset="build/x", task="needlec_x")
    shown = [c for part in hint.split("then ")[1:] for c in _chain(part)]
    assert shown, hint
    for command in shown:
        assert parses(command) is None, (runner, command)


def test_a_command_without_a_required_option_is_caught() -> None:
    # the check itself: `score` without `-o` was once shown in the docs and must fail here
    assert parses("needlec score build/ruler responses.jsonl") is not None
    assert parses("needlec score build/ruler responses.jsonl -o build/report") is None
    assert Path(ROOT / "README.md").is_file()
