"""The CLI help page: the real `--help` text of every command, at a fixed width."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager

from needlec.site.markdown import fence

HELP_WIDTH = 100


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def walk(parser: argparse.ArgumentParser, name: str = "needlec") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(full command name, parser) for the program and every subcommand, depth first."""
    yield name, parser
    for sub_name, sub in subcommands(parser).items():
        yield from walk(sub, f"{name} {sub_name}")


@contextmanager
def _width(columns: int) -> Iterator[None]:
    """argparse wraps help to $COLUMNS; pin it so the page does not depend on the terminal."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def help_texts(parser: argparse.ArgumentParser) -> dict[str, str]:
    with _width(HELP_WIDTH):
        return {name: sub.format_help() for name, sub in walk(parser)}


def render_cli_help(parser: argparse.ArgumentParser) -> str:
    lines = [
        "# Command help",
        "",
        "The output of `--help` for every command, generated from the command-line parser itself. "
        "The [command line reference](../../reference/cli.md) explains each option with defaults "
        "and examples.",
        "",
    ]
    for name, text in help_texts(parser).items():
        lines += [f"## {name}", "", fence(text, "text"), ""]
    return "\n".join(lines)
