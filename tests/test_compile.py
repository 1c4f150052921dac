"""End-to-end compiles of the shipped NIAH spec: contracts, determinism, loading, atomicity."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import SPECS

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.errors import ContractError
from needlec.exporters.manifest import content_hash
from needlec.tokenizer import _tiktoken


def items(folder: Path):
    for path in sorted((folder / "data").rglob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                yield path, json.loads(line)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def context_of(item: dict) -> str:
    span = item["context_span"]
    return item["messages"][span["message"]]["content"][span["start"] : span["end"]]


def assert_contracts(item: dict) -> None:
    tokenizer = _tiktoken(item["tokenizer"])
    context = context_of(item)
    if item["length_counted"] == "prompt":  # the whole prompt is the length (niah's `single-fit`)
        prompt = sum(tokenizer.count(m["content"]) for m in item["messages"])
        assert prompt == item["prompt_tokens"] == item["context_length"]
        assert tokenizer.count(context) == item["context_tokens"] < item["context_length"]
    else:
        assert tokenizer.count(context) == item["context_tokens"] == item["context_length"]
    for needle in item["needles"]:
        offset = needle["char_offset"]
        assert context[offset : offset + len(needle["text"])] == needle["text"]
        assert tokenizer.count(context[:offset]) == needle["token_offset"]
        assert needle["depth_percent"] == round(100 * needle["token_offset"] / item["context_tokens"], 4)
        # a needle cannot start later than the tokens of itself and the needles after it allow
        tail = sum(tokenizer.count(n["text"]) for n in item["needles"] if n["char_offset"] >= offset)
        target = min(needle["target_depth_percent"], 100 * (item["context_tokens"] - tail) / item["context_tokens"])
        assert abs(needle["depth_percent"] - target) <= 6
        before = context[:offset].rstrip()
        assert before == "" or before[-1] in ".!?\"'”’)]", "needle must follow a sentence end"


def test_small_grid_contracts(small_niah: Path) -> None:
    seen = 0
    for _, item in items(small_niah):
        assert_contracts(item)
        assert item["answers"] and item["question"]
        assert item["messages"][-1]["role"] == "user"
        seen += 1
    assert seen == 3 * 2 * 3 * 11


@pytest.mark.slow
def test_default_grid_contracts(tmp_path: Path) -> None:
    """Every item of the shipped default grid, both tokenizers, re-encoded in full.

    `single-prefill` differs from `single` only in its answer prefix and `kamradt-grid` only in
    its grid, so they are left out to keep the run short; `single-fit` (the whole prompt counted)
    is kept for its exact prompt lengths up to 128K.
    """
    out = tmp_path / "niah"
    select = {"config": {"single", "multi", "passkey", "single-fit"}}
    result = compile_spec(SPECS / "niah.yaml", out, CompileOptions(progress=False, jobs=2, select=select))
    assert result.items == 4 * 2 * 8 * 11
    lengths = set()
    for _, item in items(out):
        assert_contracts(item)
        lengths.add(item["context_length"])
    assert min(lengths) == 1000 and max(lengths) == 128000


def test_manifest_matches_files(small_niah: Path) -> None:
    manifest = json.loads((small_niah / "manifest.json").read_text())
    assert manifest["content_hash"] == content_hash(manifest)
    listed = set()
    for config in manifest["configs"].values():
        for entry in config["files"]:
            data = (small_niah / entry["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"]
            assert len(data) == entry["bytes"]
            assert data.count(b"\n") == entry["rows"]
            listed.add(entry["path"])
    on_disk = {p.relative_to(small_niah).as_posix() for p in (small_niah / "data").rglob("*.jsonl")}
    assert listed == on_disk
    assert manifest["sources"][0]["sha256"]
    assert {t["name"] for t in manifest["tokenizers"]} == {"cl100k_base", "o200k_base"}


def test_compile_item_gives_the_line_a_compile_writes(small_niah: Path) -> None:
    """`compile_item`, what a compile's worker does with each item (and what benchmarks/families.py times),
    called on its own gives the very line the compile wrote for the item, its context's tokens, its needle
    overlap figures (the item's own and the stemmed ones) and a context entry where the item is sampled, with
    no problem found: for items of every config and two lengths of the grid. (That the lines are the ones the
    code before `compile_item` wrote is what the golden records show.)"""
    from needlec.compile.pipeline import Prepared, compile_item, default_cache_dir, prepare_work
    from needlec.compile.plan import load_plan

    written = {item["id"]: item for _, item in items(small_niah)}
    lines = {
        json.loads(line)["id"]: line
        for path in sorted((small_niah / "data").rglob("*.jsonl"))
        for line in path.read_bytes().splitlines(keepends=True)
    }
    plan = load_plan(SPECS / "niah.yaml", default_cache_dir())
    prepared = Prepared(plan, default_cache_dir())
    checked = 0
    for name in ("single", "multi", "passkey"):
        config = plan.config(name)
        ids = [h.id for h in prepared.haystacks(config.spec)]
        keys = [k for k in plan.keys(config, ids) if k.length in (1000, 16000) and k.id(plan.spec.name) in lines]
        for _, key, view, kind, sample in prepare_work(prepared, [(config, keys[:: max(1, len(keys) // 3)])]):
            got = compile_item(plan.spec.name, config, key, view, kind, False, sample)
            item_id = key.id(plan.spec.name)
            assert got.line == lines[item_id]
            assert got.tokens == written[item_id]["context_tokens"]
            assert got.problems == []
            (config_name, against, scores), *context = got.overlap
            assert (config_name, against) == (name, "needle")
            assert {k: v for k, v in scores.items() if not k.endswith("_stemmed")} == written[item_id]["overlap"]
            assert {k.removesuffix("_stemmed") for k in scores} == set(written[item_id]["overlap"])
            assert [(c, a) for c, a, _ in context] == ([(name, "context")] if sample else [])
            checked += 1
    assert checked >= 9


def test_load_dataset_every_config_offline(small_niah: Path, tmp_path: Path) -> None:
    import datasets

    manifest = json.loads((small_niah / "manifest.json").read_text())
    for name, config in manifest["configs"].items():
        for entry in config["files"]:
            # a fresh cache: `datasets` keys local folders by path, not content
            ds = datasets.load_dataset(
                str(small_niah), name=name, split=entry["split"], cache_dir=str(tmp_path / "hf-cache")
            )
            assert len(ds) == entry["rows"]
            row = ds[0]
            assert row["config"] == name and row["tokenizer"] == entry["split"]
            assert context_of(row) and row["needles"][0]["text"]
            first = json.loads((small_niah / entry["path"]).open(encoding="utf-8").readline())
            assert row["seed"] == first["seed"] and row["needles"] == first["needles"]


def test_byte_identical_across_runs_and_jobs(tmp_path: Path) -> None:
    select = {"length": {"1000", "8000"}, "depth": {"0", "50", "100"}}
    one = compile_spec(SPECS / "niah.yaml", tmp_path / "a", CompileOptions(select=select, progress=False, jobs=1))
    two = compile_spec(SPECS / "niah.yaml", tmp_path / "b", CompileOptions(select=select, progress=False, jobs=2))
    again = compile_spec(SPECS / "niah.yaml", tmp_path / "a", CompileOptions(select=select, progress=False, jobs=1))
    # three workers cut the work into other chunks (and shard files) than two
    compile_spec(SPECS / "niah.yaml", tmp_path / "c", CompileOptions(select=select, progress=False, jobs=3))
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b") == tree_bytes(tmp_path / "c")
    assert one.manifest["content_hash"] == two.manifest["content_hash"] == again.manifest["content_hash"]


def test_adding_a_length_leaves_other_items_identical(tmp_path: Path) -> None:
    def spec(lengths: list[int]) -> Path:
        path = tmp_path / f"niah-{len(lengths)}.yaml"
        path.write_text(
            f"extends: {SPECS / 'niah.yaml'}\ngrid:\n  lengths: {lengths}\n  depths: [0, 35, 100]\n", encoding="utf-8"
        )
        return path

    compile_spec(spec([1000, 3000]), tmp_path / "small", CompileOptions(progress=False))
    compile_spec(spec([1000, 2000, 3000, 20000]), tmp_path / "big", CompileOptions(progress=False))
    small = {item["id"]: item for _, item in items(tmp_path / "small")}
    big = {item["id"]: item for _, item in items(tmp_path / "big")}
    assert small and set(small) < set(big)
    for item_id, item in small.items():
        assert item == big[item_id]


def test_repeated_haystack_is_marked(tmp_path: Path) -> None:
    corpus = tmp_path / "tiny.txt"
    corpus.write_text(
        "The river runs past the old mill. Children fish from the bridge at dawn. "
        "In autumn the leaves turn the water red and gold.\n\n" * 12,
        encoding="utf-8",
    )
    spec = tmp_path / "tiny.yaml"
    spec.write_text(
        f"extends: {SPECS / 'niah.yaml'}\nhaystack:\n  sources: [{{type: files, paths: [tiny.txt]}}]\n"
        "grid:\n  lengths: [300, 2000]\n  depths: [0, 50, 100]\nvariants: null\n"
        "tokenizers: [cl100k_base]\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False))
    repeated = {item["context_length"]: item["haystack"]["repeated"] for _, item in items(out)}
    assert repeated == {300: False, 2000: True}
    for _, item in items(out):
        assert_contracts(item)


def test_interrupted_compile_leaves_no_output_and_keeps_finished_shards(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    store = tmp_path / ".killed.shards"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "needlec.cli", "compile", str(SPECS / "niah.yaml"), "-o", str(out), "--verify", "-q"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(store.glob("*.json"))) < 3:
        time.sleep(0.05)
    assert list(tmp_path.glob(".killed.partial-*")), "compile never started writing"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert b"Traceback" not in stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".killed.partial-*"))
    # the finished shards stay for the next run (tests/test_shards.py resumes from them)
    assert len(list(store.glob("*.json"))) >= 3


def compile_with_tokenizer(
    tmp_path: Path, tok: Any, base: str, select: dict[str, set[str]], extra: str = ""
) -> list[dict[str, Any]]:
    """Save `tok` (a `tokenizers.Tokenizer` trained in a test), compile the shipped spec `base` with it alone
    (`extra`: more YAML for the spec) and return the items, each checked exact by encoding it again: its
    context's tokens, and every needle's token offset."""
    tok.save(str(tmp_path / "tok.json"))
    spec = tmp_path / f"{base}-hf.yaml"
    spec.write_text(
        f"extends: {SPECS / (base + '.yaml')}\ntokenizers: [{{type: hf, path: tok.json, name: own}}]\n{extra}",
        encoding="utf-8",
    )
    out = tmp_path / f"{base}-out"
    compile_spec(spec, out, CompileOptions(progress=False, select=select))
    rows = [item for _, item in items(out)]
    for item in rows:
        context = context_of(item)
        assert len(tok.encode(context, add_special_tokens=False).ids) == item["context_tokens"]
        for needle in item["needles"]:
            before = context[: needle["char_offset"]]
            assert len(tok.encode(before, add_special_tokens=False).ids) == needle["token_offset"]
    return rows


@pytest.mark.parametrize("splitting", ["none", "byte_level_without_regex"])
def test_hf_tokenizer_whose_merges_cross_every_point(tmp_path: Path, bible_text: str, splitting: str) -> None:
    """A BPE with no pre-tokenizer (or a byte-level one that does not split) can merge across any point:
    ". The " is one token in one sentence and two in the next, so a point that was a token boundary
    wherever the haystack showed it is no safe cut elsewhere. Lengths and offsets stay exact (each item
    re-encoded here); such a tokenizer is counted by encoding whole texts."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    if splitting == "byte_level_without_regex":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    chunks = [bible_text[i : i + 2000] for i in range(0, 400_000, 2000)]
    tok.train_from_iterator(chunks, trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    grid = "grid:\n  lengths: [1000, 2000]\n  depths: {count: 11}\n"
    rows = compile_with_tokenizer(tmp_path, tok, "niah", {"config": {"multi"}}, grid)
    assert len(rows) == 22 and all(item["context_tokens"] == item["context_length"] for item in rows)


def test_a_sentencepiece_model_whose_spaces_only_begin_tokens_keeps_its_cuts(tmp_path: Path, bible_text: str) -> None:
    """A SentencePiece model trained on words and run as one piece (as Llama 2's and Mistral's files are) has no
    splitting pre-tokenizer either, but no token of it holds a space ("▁") after its first character: a space
    begins a token in any text, so the points before spaces stay cuts (counting stays local, not whole-text)
    and items are exact. Runs of spaces as tokens of their own ("▁▁") do not change that."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from needlec.tokenizer import HFTokenizer

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(split=True)  # trained on words, then run as one piece
    tok.train_from_iterator([bible_text[:300_000]], trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(split=False)
    tok.add_tokens(["▁▁", "▁▁▁▁"])  # runs of spaces of their own, as Llama 2's vocabulary has
    tok.save(str(tmp_path / "sp.json"))
    text = "In the beginning God created the heavens"
    assert list(HFTokenizer(tmp_path / "sp.json", "sp").pretoken_starts(text)) == [0, 2, 6, 16, 20, 28, 32]
    grid = "grid:\n  lengths: [1000, 4000]\n  depths: {count: 11}\n"
    rows = compile_with_tokenizer(tmp_path, tok, "niah", {"config": {"multi"}}, grid)
    assert len(rows) == 22 and all(item["context_tokens"] == item["context_length"] for item in rows)


def test_a_filler_of_two_tokens_pads_documents_and_passages_exactly(tmp_path: Path, bible_text: str) -> None:
    """RULER QA's and MLNeedle's pads repeat " ." after a blank line. To a byte-level BPE trained on prose that is
    two tokens ("Ġ" and "."), so the repeats reach only every other count: the pad then leaves out its first
    space, and items stay exact instead of failing ("could not pad") or losing depth to documents dropped."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator([bible_text[:300_000]], trainers.BpeTrainer(vocab_size=800, show_progress=False))
    assert len(tok.encode(" .", add_special_tokens=False).ids) == 2
    for name, select in (
        ("ruler", {"config": {"qa_1", "qa_2"}, "length": {"4096"}, "repeat": {"0-3"}}),
        ("mlneedle-pilot", {"length": {"1000"}, "repeat": {"0"}}),
    ):
        rows = compile_with_tokenizer(tmp_path, tok, name, select)
        assert rows
        # the pads that reach an odd count leave out their first space
        assert any("\n\n. ." in context_of(item) for item in rows), name


def test_pads_the_steps_keep_missing_are_bisected_without_trying_every_count(bible_text: str) -> None:
    """`steps_first` tries a layout with pads found by `pad_to`'s steps alone, then again with bisection. A filler of
    two tokens (" ." to a byte-level BPE that never saw it) is missed by the steps at every count; after
    `STEPS_GIVE_UP` misses in a row the first try gives up (it used to try every count of documents, each with a
    longer pad: seconds an item), and the bisection finds each pad exactly. A pad the steps find starts the count
    again, so misses that are not in a row never give up."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from needlec.placement.layouts import passages

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator([bible_text[:300_000]], trainers.BpeTrainer(vocab_size=800, show_progress=False))
    assert len(tok.encode(" .", add_special_tokens=False).ids) == 2 == 2 * len(tok.encode(" the").ids)
    body = bible_text[1000:1600]

    def measure(pad: str) -> int:
        return len(tok.encode(body + pad, add_special_tokens=False).ids)

    base = measure("")
    tries: list[bool] = []

    def build(fillers: list[str]) -> list[str | None]:
        tries.append(passages._BISECT.get())
        return [passages.pad_to(True, filler, base + 7 + i, measure) for i, filler in enumerate(fillers)]

    pads = passages.steps_first(lambda: build([" ."] * 12))
    assert tries == [False, True]  # the first try gave up, at its STEPS_GIVE_UP-th miss
    assert all(pad is not None and measure(pad) == base + 7 + i for i, pad in enumerate(pads))
    tries.clear()
    fillers = [" ."] * (passages.STEPS_GIVE_UP - 1) + [" the"] + [" ."] * (passages.STEPS_GIVE_UP - 1)
    pads = passages.steps_first(lambda: build(fillers))
    assert tries == [False]  # misses, a pad found, misses: never that many in a row
    found = pads[passages.STEPS_GIVE_UP - 1]
    assert found is not None and measure(found) == base + 7 + passages.STEPS_GIVE_UP - 1
    assert pads.count(None) == len(fillers) - 1
    # the second try draws what the first drew, from the item's RNG as it was before the first
    rng = random.Random(5)
    drawn: list[float] = []

    def fails_first() -> float:
        drawn.append(rng.random())
        if not passages._BISECT.get():
            raise ContractError("no pad by steps alone")
        return drawn[-1]

    assert passages.steps_first(fails_first, rng) == drawn[0] == drawn[1]


def test_needles_that_count_otherwise_after_text_still_fit(tmp_path: Path, bible_text: str) -> None:
    """To a Unigram with Metaspace, a CWE word alone begins with its own "▁" and counts one token more or less than
    after a line of the list; over 300 needles the window was sized dozens of tokens wrong and some items
    failed ("needles did not fit"). The search then sizes the needles as they count after haystack text."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=2000, show_progress=False, unk_token="<unk>", special_tokens=["<unk>"])
    tok.train_from_iterator([bible_text[:300_000]], trainer)
    rows = compile_with_tokenizer(tmp_path, tok, "ruler", {"config": {"cwe"}, "length": {"4096"}, "repeat": {"0-7"}})
    assert len(rows) == 8 and all(len(item["needles"]) == 300 for item in rows)


def test_fwe_sizes_its_stream_by_the_items_tokenizer(tmp_path: Path, bible_text: str) -> None:
    """FWE sizes its Zipf stream by `fwe_line_tokens` (2.4 tokens a line, cl100k_base's). A tokenizer that spends
    more on a coded word made the stream longer than the context and every item failed; the stream is then
    drawn again, sized by the rate the tokenizer showed (recorded as `zipf.line_tokens`), as RULER sizes it by
    the model's tokenizer. The answers stay the stream's most frequent words."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator([bible_text[:300_000]], trainers.BpeTrainer(vocab_size=800, show_progress=False))
    rows = compile_with_tokenizer(tmp_path, tok, "ruler", {"config": {"fwe"}, "length": {"4096"}, "repeat": {"0-2"}})
    assert len(rows) == 3
    for item in rows:
        assert item["structure"]["zipf"]["line_tokens"] > 2.4
        noise = str(item["structure"]["noise_token"])
        lines = collections.Counter(line for line in context_of(item).split("\n") if line and line != noise)
        assert [[word] for word, _ in lines.most_common(3)] == item["answers"]


def test_hf_tokenizer_file(tmp_path: Path, bible_text: str) -> None:
    """A Hugging Face tokenizer trained here on the haystack text, loaded from its tokenizer.json."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator([bible_text[:300_000]], trainers.BpeTrainer(vocab_size=800, show_progress=False))
    tok.save(str(tmp_path / "tok.json"))
    spec = tmp_path / "hf.yaml"
    spec.write_text(
        f"extends: {SPECS / 'niah.yaml'}\ntokenizers: [{{type: hf, path: tok.json, name: tiny}}]\n"
        "grid:\n  lengths: [1500, 6000]\n  depths: [0, 50, 100]\nvariants: null\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    compile_spec(spec, out, CompileOptions(progress=False))
    rows = list(items(out))
    assert len(rows) == 6
    for _, item in rows:
        context = context_of(item)
        count = len(tok.encode(context, add_special_tokens=False).ids)
        assert count == item["context_length"] == item["context_tokens"]
        for needle in item["needles"]:
            before = context[: needle["char_offset"]]
            assert len(tok.encode(before, add_special_tokens=False).ids) == needle["token_offset"]
