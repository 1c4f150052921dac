"""The MLNeedle question-language spec: it validates, and a cheap slice records all three languages.

The spec crosses the question's language with the needle's over one haystack language. The checks
here read the languages back from the text itself (script, and a few letters only some
Latin-script languages use) and compare them with what each item records; the question must be
the packaged question of the drawn needle item in the recorded question language.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.languages import mlneedle

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "mlneedle" / "mlneedle-question-language.yaml"
LANGS = ("en", "ar", "de", "es", "hi", "vi", "zh")
# one config per needle language, each with a different question language, both haystacks
SELECTED = ["en-de-zh", "ar-de-hi", "de-de-ar", "es-none-vi", "hi-de-en", "vi-none-es", "zh-de-de", "zh-none-zh"]


def script(ch: str) -> str | None:
    cp = ord(ch)
    if 0x0600 <= cp <= 0x06FF:
        return "arabic"
    if 0x0900 <= cp <= 0x097F:
        return "devanagari"
    if 0x4E00 <= cp <= 0x9FFF:
        return "han"
    if ch.isalpha() and cp < 0x1F00:
        return "latin"
    return None


def looks_like(text: str, lang: str) -> bool:
    counts: dict[str, int] = {}
    for ch in text:
        s = script(ch)
        if s:
            counts[s] = counts.get(s, 0) + 1
    main = max(counts, key=lambda k: counts[k])
    want = {"ar": "arabic", "hi": "devanagari", "zh": "han"}.get(lang, "latin")
    if main != want:
        return False
    low = text.lower()
    if lang == "vi":
        return any(ch in "ăâđêôơư" or 0x1EA0 <= ord(ch) <= 0x1EF9 for ch in low)
    if lang == "es":
        return "¿" in text or any(ch in "ñáéíóú" for ch in low) or " el " in f" {low} "
    if lang == "de":
        return any(ch in "äöüß" for ch in low) or any(w in low.split() for w in ("der", "die", "das", "und"))
    if lang == "en":
        return not any(ch in "äöüßñ¿ăđơư" for ch in low)
    return True


def test_the_spec_validates_within_the_config_cap() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cli = [sys.executable, "-m", "needlec.cli", "validate", str(SPEC)]
    done = subprocess.run(cli, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    names = [n.strip() for n in done.stdout.split("(", 1)[1].split(":", 1)[1].rstrip(")\n").split(",")]
    assert len(names) == 7 * 7 * 2 <= 256
    assert {n.split("-")[2] for n in names} == set(LANGS)  # every question language
    assert {n.split("-")[0] for n in names} == set(LANGS)  # every needle language


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("mlq") / "out"
    select = {"config": set(SELECTED), "length": {"4000", "512"}, "repeat": {"0"}}
    compile_spec(SPEC, out, CompileOptions(select=select, progress=False))
    found = [json.loads(line) for f in sorted((out / "data").rglob("*.jsonl")) for line in f.open(encoding="utf-8")]
    assert {r["config"] for r in found} == set(SELECTED)
    return found


def test_items_record_the_three_languages_of_their_config(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        needle, haystack, question = row["config"].split("-")
        assert row["languages"] == {"needle": needle, "haystack": haystack, "question": question}
        assert [n["language"] for n in row["needles"]] == [needle]


def test_recorded_languages_match_the_text(rows: list[dict[str, Any]]) -> None:
    items = {item.id: item for item in mlneedle.load().items}
    for row in rows:
        langs = row["languages"]
        item = items[row["structure"]["needle_id"]]
        assert row["question"] == item.question[langs["question"]]
        assert looks_like(row["question"], langs["question"]), row["id"]
        assert row["needles"][0]["text"] == item.passage[langs["needle"]]
        assert looks_like(row["needles"][0]["text"], langs["needle"]), row["id"]
        span = row["context_span"]
        body = row["messages"][span["message"]]["content"][span["start"] : span["end"]]
        rest = body.replace(row["needles"][0]["text"], "")
        if langs["haystack"] == "de":
            assert looks_like(rest, "de"), row["id"]
        # every language's gold alias counts, so a reply in the question's language scores
        assert set(item.answers[langs["question"]]) <= {a for fact in row["answers"] for a in fact}


def test_lengths_are_exact(rows: list[dict[str, Any]]) -> None:
    enc = tiktoken.get_encoding("o200k_base")
    for row in rows:
        span = row["context_span"]
        body = row["messages"][span["message"]]["content"][span["start"] : span["end"]]
        assert len(enc.encode(body)) == row["context_length"]
        if "-none-" in row["config"]:
            # the baseline is the needle passage alone: its length is the passage's own
            item = mlneedle.load().items[[i.id for i in mlneedle.load().items].index(row["values"]["needle_id"])]
            assert body == item.passage[row["languages"]["needle"]]
            assert row["length_counted"] == "needles"
        else:
            assert row["context_length"] == 4000


BARE = """\
name: bare
title: Languages from the needle config
seed: 5
languages: [en]
tokenizers: [o200k_base]
haystack:
  sources: [{type: builtin, corpus: bible-en-kjv, books: [Mark]}]
  builder: {type: passages, count: 1, target_tokens: 3000, tokenizer: o200k_base}
grid: {lengths: [600], depths: [50], repeats: 2}
needle: {type: mlneedle, needle_language: vi, question_language: hi}
placement: {depth_tolerance: 100}
prompt: {user: "{{ context }}\\n\\nQuestion: {{ question }}"}
length: {counted: context, tolerance: 0}
scoring: {metric: contains}
"""


def test_languages_come_from_the_needle_config_without_item_languages(tmp_path: Path) -> None:
    spec = tmp_path / "bare.yaml"
    spec.write_text(BARE, encoding="utf-8")
    compile_spec(spec, tmp_path / "out", CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    found = [json.loads(line) for f in (tmp_path / "out" / "data").rglob("*.jsonl") for line in f.open()]
    assert len(found) == 2
    for row in found:
        # no `item_languages` in the spec: needle and question languages are the needle config's
        assert row["languages"] == {"needle": "vi", "haystack": "en", "question": "hi"}
        assert looks_like(row["question"], "hi") and looks_like(row["needles"][0]["text"], "vi")
