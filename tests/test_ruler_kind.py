"""The `ruler` needle kind compiled end to end from the shipped spec, checked by reading the context.

One small grid of `specs/ruler.yaml` (two short lengths, four repeats) is compiled once with the
real pipeline and a real tokenizer. Every check below parses the rendered context on its own terms
(needle sentences, assignment statements, word lines) and recomputes the answer, instead of
trusting what the kind recorded.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import re
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import yaml

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.scoring.api import score
from needlec.scoring.responses import Response

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = [1500, 3000]
REPEATS = 4
NIAH = [
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
]
NEEDLE_SENTENCE = re.compile(r"A secret (?:number|code)s? filed under (\S+) is (\S+?)\.(?=\s|$)")
ASSIGN_VALUE = re.compile(r"VAR ([A-Z]+) = (\d+)\.")
ASSIGN_VARIABLE = re.compile(r"VAR ([A-Z]+) = VAR ([A-Z]+)\.")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped RULER spec on a small grid, compiled once."""
    spec = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    spec["grid"]["lengths"] = LENGTHS
    spec["grid"]["repeats"] = REPEATS
    # QA, RAG-chunk and passkey have their own module (tests/test_ruler_qa.py)
    keep = [*NIAH, "vt", "cwe", "fwe"]
    spec["variants"]["task"] = {k: v for k, v in spec["variants"]["task"].items() if k in keep}
    folder = tmp_path_factory.mktemp("ruler")
    path = folder / "ruler.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    out = folder / "out"
    compile_spec(path, out, CompileOptions(progress=False))
    return out


def _items(dataset: Path, config: str) -> list[dict[str, Any]]:
    lines = (dataset / "data" / config / "cl100k_base.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _context(item: dict[str, Any]) -> str:
    span = item["context_span"]
    return str(item["messages"][span["message"]]["content"][span["start"] : span["end"]])


def test_every_task_compiles_with_exact_lengths(dataset: Path) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    configs = sorted(p.name for p in (dataset / "data").iterdir())
    assert configs == sorted([*NIAH, "vt", "cwe", "fwe"])
    for config in configs:
        items = _items(dataset, config)
        assert len(items) == len(LENGTHS) * REPEATS
        assert {item["task"] for item in items} == {config}
        for item in items:
            # RULER's rule: the prompt (the user message and the answer prefix) plus the reply's budget
            prompt = len(encoding.encode(item["messages"][-1]["content"])) + len(encoding.encode(item["answer_prefix"]))
            assert prompt + item["max_new_tokens"] == item["context_length"], item["id"]
            assert len(item["messages"]) == 1 and item["length_reserve"] == "max_new_tokens"
            assert item["answer_prefix"] and item["answer_prefix"].startswith(("The secret", "Answer:"))


def test_queried_values_are_needles_exactly_once_and_never_distractors(dataset: Path) -> None:
    for config in NIAH:
        for item in _items(dataset, config):
            context = _context(item)
            found = NEEDLE_SENTENCE.findall(context)
            assert found, config
            keys = item["structure"]["queries"]
            # the question names every queried key (as written, not read back from the structure only)
            assert all(key in item["question"] for key in keys)
            values_of: dict[str, list[str]] = {}
            for key, value in found:
                values_of.setdefault(key, []).append(value)
            expected = sorted(value for key in keys for value in values_of[key])
            assert expected == sorted(fact[0] for fact in item["answers"]), config
            targets = {n["text"] for n in item["needles"] if n["role"] == "target"}
            distractors = [n["text"] for n in item["needles"] if n["role"] == "distractor"]
            for value in expected:
                assert context.count(value) == 1, (config, value)
                assert not any(value in text for text in distractors)
                assert any(value in text for text in targets)
            for key in keys:
                # a queried key occurs only in its own needles: the haystack and distractors never hold it
                assert context.count(key) == len(values_of[key]), (config, key)
                assert not any(key in text for text in distractors)


def test_multikey_and_filler_tasks_do_have_other_keys(dataset: Path) -> None:
    # multikey_1: three distractor-key needles; multikey_2/3: a haystack of other key-value sentences
    for item in _items(dataset, "niah_multikey_1"):
        assert sum(n["role"] == "distractor" for n in item["needles"]) == 3
    for config in ("niah_multikey_2", "niah_multikey_3"):
        for item in _items(dataset, config):
            assert len(NEEDLE_SENTENCE.findall(_context(item))) > 10


def _resolve(name: str, value_of: dict[str, str], source_of: dict[str, str]) -> str:
    """The literal value a variable holds, following `VAR a = VAR b` back to a number."""
    while name in source_of:
        name = source_of[name]
    return value_of[name]


def test_vt_answers_recomputed_from_the_assignment_text(dataset: Path) -> None:
    for item in _items(dataset, "vt"):
        context = _context(item)
        value_of = dict(ASSIGN_VALUE.findall(context))
        source_of = dict(ASSIGN_VARIABLE.findall(context))
        queried = re.search(r"assigned the value (\d+)", item["question"])
        assert queried is not None

        bound = sorted(
            name for name in set(value_of) | set(source_of) if _resolve(name, value_of, source_of) == queried.group(1)
        )
        assert len(bound) == 5  # one chain of four hops
        assert bound == sorted(fact[0] for fact in item["answers"])


def test_cwe_answers_recomputed_by_counting_words(dataset: Path) -> None:
    for item in _items(dataset, "cwe"):
        counts = Counter(line.strip() for line in _context(item).split("\n") if line.strip())
        ranked = counts.most_common()
        top = {word for word, _ in ranked[:10]}
        assert top == {fact[0] for fact in item["answers"]}
        assert ranked[9][1] == 30 and ranked[10][1] < 30  # no tie at the cut


def test_fwe_answers_recomputed_by_counting_words(dataset: Path) -> None:
    for item in _items(dataset, "fwe"):
        counts = Counter(line.strip() for line in _context(item).split("\n") if line.strip())
        ranked = counts.most_common()
        assert ranked[0][0] == "..."  # the noise token is the most frequent, as in RULER
        words = ranked[1:]
        assert [word for word, _ in words[:3]] == [fact[0] for fact in item["answers"]]
        assert words[0][1] > words[1][1] > words[2][1] > words[3][1]


def _statements(text: str) -> list[tuple[str, str | None, str | None]]:
    """Every assignment in `text`, in reading order: (name, literal value or None, source variable or None)."""
    found = []
    for match in re.finditer(r"VAR ([A-Z]+) = (?:(\d+)|VAR ([A-Z]+))\.", text):
        found.append((match.group(1), match.group(2), match.group(3)))
    return found


def _in_chain_order(statements: list[tuple[str, str | None, str | None]]) -> bool:
    """Whether one chain reads in order: a literal first, then each statement copies the one before."""
    if not statements or statements[0][1] is None:
        return False
    return all(source == before[0] for before, (_, _, source) in itertools.pairwise(statements))


def test_vt_statements_appear_in_chain_order(dataset: Path) -> None:
    for item in _items(dataset, "vt"):
        statements = _statements(_context(item))
        assert len(statements) == 5  # one chain of four hops, nothing else assigns
        assert _in_chain_order(statements), statements
        queried = re.search(r"assigned the value (\d+)", item["question"])
        assert queried is not None and statements[0][1] == queried.group(1)
        # the answer set is exactly the chain's names, read from the text
        assert sorted(name for name, _, _ in statements) == sorted(fact[0] for fact in item["answers"])
        # the recorded depths agree: the needles, in chain order, sit deeper and deeper
        depths = [n["depth_percent"] for n in item["needles"]]
        assert depths == sorted(depths)


def test_vt_prompt_has_one_worked_example_with_its_own_names(dataset: Path) -> None:
    for item in _items(dataset, "vt"):
        span = item["context_span"]
        content = item["messages"][span["message"]]["content"]
        before, after = content[: span["start"]], content[span["end"] :]
        example = _statements(before)
        assert not _statements(after)
        # exactly one example chain: one literal assignment, then its hops in order
        assert [value is not None for _, value, _ in example] == [True, False, False, False, False]
        assert _in_chain_order(example)
        names = {name for name, _, _ in example}
        item_names = {name for name, _, _ in _statements(_context(item))}
        assert len(names) == 5 and not names & item_names
        assert all(len(name) == 3 for name in names)  # RULER's example uses three-letter names
        value = example[0][1]
        assert value is not None and value not in _context(item) and value not in item["question"]
        # the example is answered: its question, then the answer naming every example variable
        asked = before.index(f"assigned the value {value}?")
        answer_line = before[asked:].split("\n")[1]
        assert all(name in answer_line for name in names)


def test_vt_distractor_chains_keep_their_order_too() -> None:
    from needlec.kinds.ruler.kind import RulerKind, RulerNeedle

    kind = RulerKind(RulerNeedle(type="ruler", task="vt", num_chains=3))
    for seed in range(20):
        draw = kind.draw_at("vt", random.Random(seed), 4096)
        texts = list(draw.needles) + list(draw.distractors)
        assert sorted(draw.depth_order) == list(range(len(texts)))
        read = _statements(" ".join(texts[i] for i in draw.depth_order))
        chains: dict[str, list[tuple[str, str | None, str | None]]] = {}
        head_of: dict[str, str] = {}
        for name, value, source in read:
            head = name if value is not None else head_of[source or ""]  # KeyError: a copy before its source
            head_of[name] = head
            chains.setdefault(head, []).append((name, value, source))
        assert len(chains) == 3
        assert all(_in_chain_order(chain) for chain in chains.values())


ZETA_2 = math.pi**2 / 6
"""zeta(2), the normaliser of RULER's Zipf counts with alpha = 2."""


def _line_counts(item: dict[str, Any]) -> Counter[str]:
    return Counter(line for line in _context(item).split("\n") if line)


def test_fwe_counts_follow_rulers_zipf_draw_recounted_from_the_text(dataset: Path) -> None:
    real_words = set(
        (resources.files("needlec.languages.wordlists") / "cwe_words.txt").read_text(encoding="utf-8").split()
    )
    top_counts: dict[int, list[int]] = {}
    for item in _items(dataset, "fwe"):
        length = item["context_length"]
        words_n = item["structure"]["zipf"]["words"]
        # the stream is sized to fill 80% of the context at 2.4 tokens a line (the spec's defaults)
        assert abs(words_n - length * 0.8 / 2.4) < 1
        assert item["structure"]["zipf"]["vocabulary"] == length // 50
        expected = [math.floor(words_n / (k * k * ZETA_2)) for k in (2, 3, 4, 5)]
        counts = _line_counts(item)
        ranked = counts.most_common()
        assert ranked[0][0] == "..."
        coded = ranked[1:]
        assert [word for word, _ in coded[:3]] == [fact[0] for fact in item["answers"]]
        assert [n for _, n in coded[:4]] == expected  # ranks 2-5 of the Zipf draw, exactly
        assert expected[0] > expected[1] > expected[2] > expected[3]
        # every line is a coded word or the noise token, and no coded word is a real word (the last
        # line may be cut short by the window's exact-length cut, which never makes a whole word)
        lines = _context(item).split("\n")
        assert all(re.fullmatch(r"[a-z]{6}|\.\.\.", line) for line in lines[:-1]), item["id"]
        assert re.fullmatch(r"[a-z]{0,6}|\.{0,3}", lines[-1])
        assert not set(counts) & real_words
        top_counts.setdefault(length, []).append(expected[0])
    # the counts grow with the context length (RULER's draw; the old fixed form was 60 at every length)
    assert min(top_counts[LENGTHS[1]]) > max(top_counts[LENGTHS[0]])


def test_needles_sit_at_spread_random_depths(dataset: Path) -> None:
    depths = [n["depth_percent"] for item in _items(dataset, "niah_multivalue") for n in item["needles"]]
    assert len(set(depths)) == len(depths)
    assert min(depths) < 30 and max(depths) > 70
    for item in _items(dataset, "niah_multivalue"):
        ordered = sorted(n["target_depth_percent"] for n in item["needles"])
        assert all(b - a >= 2 - 1e-9 for a, b in itertools.pairwise(ordered))


def test_budgets_and_metrics_per_task(dataset: Path) -> None:
    budgets = {"niah_single_1": 128, "vt": 30, "cwe": 120, "fwe": 50}
    for config, budget in budgets.items():
        for item in _items(dataset, config):
            assert item["max_new_tokens"] == budget
            assert item["scoring"]["metric"] == "string_match_all"


def test_manifest_pins_the_word_lists(dataset: Path) -> None:
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    folder = resources.files("needlec.languages.wordlists")
    files = {"adjectives": "adjectives.txt", "nouns": "nouns.txt", "cwe_words": "cwe_words.txt"}
    for config in ("niah_single_1", "cwe"):
        recorded = manifest["configs"][config]["needle_kind"]["wordlists"]
        for name, file in files.items():
            assert recorded[name] == hashlib.sha256(folder.joinpath(file).read_bytes()).hexdigest()


def test_synthetic_responses_give_hand_computed_scores_and_effective_length(dataset: Path) -> None:
    single = sorted(_items(dataset, "niah_single_1"), key=lambda it: (it["context_length"], it["repeat"]))
    multi = sorted(_items(dataset, "niah_multivalue"), key=lambda it: (it["context_length"], it["repeat"]))
    responses = []
    # niah_single_1: 4/4 right at 1500 (100), 2/4 at 3000 (50)
    for item in single:
        right = item["context_length"] == 1500 or item["repeat"] < 2
        responses.append(Response(item["id"], item["answers"][0][0] if right else "I could not find it.", "test"))
    # niah_multivalue: at 1500 three items name all four values and one names three (93.75); at 3000 all (100)
    for index, item in enumerate(multi):
        values = [fact[0] for fact in item["answers"]]
        if index == 0:
            values = values[:3]
        responses.append(Response(item["id"], ", ".join(values), "test"))
    result = score(dataset, responses, config=["niah_single_1", "niah_multivalue"])
    configs = result.summary["configs"]
    assert configs["niah_single_1"]["effective_length"]["ruler"]["effective_length"] == 1500
    assert configs["niah_multivalue"]["effective_length"]["ruler"]["effective_length"] == 3000
    ruler = result.summary["families"]["ruler"]
    assert ruler["tasks"]["niah_single_1"] == {"1500": 100.0, "3000": 50.0}
    assert ruler["tasks"]["niah_multivalue"] == {"1500": 93.75, "3000": 100.0}
    # averages over tasks: (100 + 93.75) / 2 = 96.875 passes 85.6; (50 + 100) / 2 = 75 fails
    assert ruler["average"] == {"1500": 96.875, "3000": 75.0}
    assert ruler["effective_length"] == {"threshold": 85.6, "effective_length": 1500, "first_failing_length": 3000}


def test_select_repeat_compiles_a_slice_of_the_repeats(tmp_path: Path) -> None:
    import needlec

    result = needlec.compile(
        ROOT / "specs" / "ruler.yaml", tmp_path / "out", select={"length": "4096", "repeat": ["0", "7"]}, dry_run=True
    )
    # 12 single-depth tasks (11 of RULER's and passkey) x 1 length x 2 of the 500 repeats, plus
    # 3 document tasks (qa_1, qa_2, rag_chunk) x 5 depths x 2 of their 100 repeats: 24 + 30 items
    assert (result.items, result.tokens) == (54, 54 * 4096)


def test_fwe_draw_scales_with_length_and_keeps_the_fixed_form() -> None:
    from needlec.kinds.ruler.kind import RulerKind, RulerNeedle

    kind = RulerKind(RulerNeedle(type="ruler", task="fwe"))
    # worked by hand: N = floor(0.8 L / 2.4) = 1365 at 4096 and 43690 at 131072; the count of rank k is
    # floor(N / (k^2 pi^2 / 6)): 1365 / 6.580 = 207.5, / 14.804 = 92.2, / 26.319 = 51.9;
    # 43690 / 6.580 = 6640.1, / 14.804 = 2951.2, / 26.319 = 1660.02
    for length, expected in ((4096, [207, 92, 51]), (131072, [6640, 2951, 1660])):
        draw = kind.draw_at("fwe", random.Random(5), length)
        lines = Counter("\n".join(draw.needles).split("\n"))
        assert [lines[fact[0]] for fact in draw.answers] == expected
        assert len(draw.needles) <= 100  # the stream goes in as blocks of lines, not one needle a word
    fixed = RulerKind(RulerNeedle(type="ruler", task="fwe", fwe_counts=[60, 45, 30]))
    for length in (4096, 131072):
        draw = fixed.draw_at("fwe", random.Random(5), length)
        assert [draw.needles.count(fact[0]) for fact in draw.answers] == [60, 45, 30]


def test_fwe_refuses_counts_the_haystack_could_tie() -> None:
    from needlec.kinds.ruler.common import RulerGenerationError
    from needlec.kinds.ruler.kind import RulerKind, RulerNeedle

    kind = RulerKind(RulerNeedle(type="ruler", task="fwe"))
    with pytest.raises(RulerGenerationError, match="FWE at 200 tokens"):
        kind.draw_at("fwe", random.Random(1), 200)  # a vocabulary of 4 words has no rank 5
    # a haystack whose coded word occurs 60 times: the 4096-token answer counts (207, 92, 51) do not clear it
    kind.bind_haystacks(["qwerty\n...\n" * 60])
    with pytest.raises(RulerGenerationError, match="not more than the 60"):
        kind.draw_at("fwe", random.Random(1), 4096)
    assert kind.draw_at("fwe", random.Random(1), 16384).answers  # 16K: 207 occurrences of rank 4 clear it
