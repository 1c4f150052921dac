"""`needlec export`: each runner's files carry every item id and judge with needlec's scorer."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NEEDLEC, *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def dataset(small_niah: Path) -> Path:
    return small_niah


def ids(dataset: Path, tokenizer: str = "cl100k_base") -> list[str]:
    out = []
    for file in sorted((dataset / "data").rglob(f"{tokenizer}.jsonl")):
        out += [json.loads(x)["id"] for x in file.read_text().splitlines()]
    return out


def test_prompts_and_openai_batch(dataset: Path, tmp_path: Path) -> None:
    done = run("export", str(dataset), "--to", "prompts", "-o", str(tmp_path / "p"), "--tokenizer", "cl100k_base")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in (tmp_path / "p" / "prompts.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(ids(dataset))
    assert all("<document>" in r["prompt"] and r["max_new_tokens"] == 128 for r in rows)
    done = run(
        "export",
        str(dataset),
        "--to",
        "openai-batch",
        "-o",
        str(tmp_path / "b"),
        "--model",
        "m1",
        "--tokenizer",
        "cl100k_base",
        "--max-tokens",
        "40",
    )
    assert done.returncode == 0, done.stderr
    reqs = [json.loads(x) for x in (tmp_path / "b" / "requests.jsonl").read_text().splitlines()]
    assert sorted(r["custom_id"] for r in reqs) == sorted(ids(dataset))
    assert {r["body"]["model"] for r in reqs} == {"m1"} and {r["body"]["max_tokens"] for r in reqs} == {40}


def test_existing_folder_is_refused(dataset: Path, tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    done = run("export", str(dataset), "--to", "prompts", "-o", str(tmp_path / "full"))
    assert done.returncode == 2 and (tmp_path / "full" / "keep.txt").read_text() == "x"


def test_an_earlier_export_is_replaced_unless_it_holds_other_files(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    first = run("export", str(dataset), "--to", "prompts", "-o", str(out), "--tokenizer", "cl100k_base")
    assert first.returncode == 0, first.stderr
    again = run(
        "export", str(dataset), "--to", "openai-batch", "-o", str(out), "--tokenizer", "o200k_base", "--model", "m"
    )
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == [".needlec-export.json", ".needlec-written", "requests.jsonl"]
    requests = [json.loads(x)["custom_id"] for x in (out / "requests.jsonl").read_text().splitlines()]
    assert requests and sorted(requests) == sorted(ids(dataset, "o200k_base"))
    # a file of the user's in it (say, the runner's results) keeps the folder from being replaced
    (out / "results.jsonl").write_text("mine\n")
    kept = run("export", str(dataset), "--to", "prompts", "-o", str(out))
    assert kept.returncode == 2 and "results.jsonl" in kept.stderr
    assert (out / "results.jsonl").read_text() == "mine\n" and (out / "requests.jsonl").is_file()
    # nor a needlec folder of another kind that holds a record of what it wrote (a published catalogue, say)
    other = tmp_path / "other"
    other.mkdir()
    (other / "catalogue.json").write_text('{"datasets": []}\n')
    (other / ".needlec-written").write_text("catalogue.json\n.needlec-written\n")
    refused = run("export", str(dataset), "--to", "prompts", "-o", str(other))
    assert refused.returncode == 2 and (other / "catalogue.json").is_file()
    # nor is the dataset's own folder an export's to replace
    refused = run("export", str(dataset), "--to", "prompts", "-o", str(dataset))
    assert refused.returncode == 2 and (dataset / "manifest.json").is_file()


def test_lm_eval_process_results_uses_needlec_scorer(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "lm"
    assert run("export", str(dataset), "--to", "lm-eval", "-o", str(out), "--config", "single").returncode == 0
    task = (out / "tasks" / "needlec_niah_single.yaml").read_text()
    assert "process_results: !function utils.process_results" in task
    assert "description: system\n" in task and "doc_to_text: user\n" in task
    assert "group: needlec_niah\n" in (out / "needlec_niah.yaml").read_text()
    spec = importlib.util.spec_from_file_location("needlec_lm_utils", out / "tasks" / "utils.py")
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    doc = json.loads((out / "docs" / "needlec_niah_single.jsonl").read_text().splitlines()[0])
    item = json.loads(doc["item"])
    # the system message stays apart from the user text
    assert [m["role"] for m in item["messages"]] == ["system", "user"]
    assert doc["system"] == item["messages"][0]["content"] and doc["user"] == item["messages"][1]["content"]
    assert "yellow tram" not in doc["user"].split("</document>")[1]
    # points, as needlec score reports them
    assert utils.process_results(doc, ["Ride the yellow tram."]) == {"needlec_score": 100.0}
    assert utils.process_results(doc, ["Ride the yellowtram."]) == {"needlec_score": 0.0}


def test_inspect_task_file(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "in"
    assert run("export", str(dataset), "--to", "inspect", "-o", str(out), "--tokenizer", "o200k_base").returncode == 0
    compile(((out / "task.py").read_text()), "task.py", "exec")
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    assert sorted(i["id"] for i in items) == sorted(ids(dataset, "o200k_base"))


@pytest.fixture(scope="module")
def prefilled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NIAH's `single-prefill` (each item's answer starts with a prefill) and `single`, at one length."""
    from conftest import SPECS

    from needlec.compile.pipeline import CompileOptions, compile_spec

    out = tmp_path_factory.mktemp("prefill") / "ds"
    select = {"length": {"1000"}, "config": {"single", "single-prefill"}, "tokenizer": {"cl100k_base"}}
    compile_spec(SPECS / "niah.yaml", out, CompileOptions(select=select, progress=False))
    return out


def test_a_prefill_is_kept_or_refused_never_dropped(prefilled: Path, tmp_path: Path) -> None:
    """Inspect sends an item's answer prefix as the last (assistant) message; the chat completions API cannot
    continue one, so openai-batch refuses such items unless --no-answer-prefix says to send them without it."""
    batch = ["export", str(prefilled), "--to", "openai-batch", "-o", str(tmp_path / "b"), "--model", "m"]
    done = run(*batch)
    assert done.returncode == 2 and "cannot continue" in done.stderr and "--no-answer-prefix" in done.stderr
    assert not (tmp_path / "b").exists()
    done = run(*batch, "--no-answer-prefix")
    assert done.returncode == 0, done.stderr

    assert run("export", str(prefilled), "--to", "inspect", "-o", str(tmp_path / "i")).returncode == 0
    spec = importlib.util.spec_from_file_location("needlec_inspect_task", tmp_path / "i" / "task.py")
    assert spec is not None and spec.loader is not None
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    items = [json.loads(x) for x in (tmp_path / "i" / "items.jsonl").read_text().splitlines()]
    for item in items:
        messages = task.sample(item).input
        prefix = item.get("answer_prefix")
        assert len(messages) == len(item["messages"]) + (1 if prefix else 0)
        if prefix:
            assert messages[-1].role == "assistant" and messages[-1].content == prefix
    assert any(it.get("answer_prefix") for it in items) and not all(it.get("answer_prefix") for it in items)


def test_each_inspect_task_has_its_own_answer_budget(tmp_path: Path) -> None:
    """Inspect takes one generation budget per task: each config's own (the largest of its items), not the
    largest of the whole dataset, which gave short-answer tasks several times their budget."""
    from needlec.runners.files import write_inspect

    items = [
        {"id": "a", "config": "short", "max_new_tokens": 30, "messages": [{"role": "user", "content": "x"}]},
        {"id": "b", "config": "long", "max_new_tokens": 120, "messages": [{"role": "user", "content": "y"}]},
    ]
    write_inspect(items, tmp_path, {})
    code = (tmp_path / "task.py").read_text()
    assert 'needlec_task("short", 30)' in code and 'needlec_task("long", 120)' in code


def test_export_and_score_take_a_config_name_whole(prefilled: Path, tmp_path: Path) -> None:
    """From Python, `config="single-prefill"` is one name (it matched every config whose name holds its
    letters), and a config the dataset lacks is an error even beside one it has."""
    import needlec
    from needlec.errors import NeedlecError

    names = needlec.export(prefilled, "prompts", tmp_path / "p", config="single-prefill")
    rows = [json.loads(x) for x in (tmp_path / "p" / names[0]).read_text().splitlines()]
    assert rows and all("/single-prefill/" in r["id"] for r in rows)
    with pytest.raises(NeedlecError, match="has no config 'nope'"):
        needlec.export(prefilled, "prompts", tmp_path / "q", config=["single", "nope"])
    with pytest.raises(NeedlecError, match="has no config 'nope'"):
        needlec.score(prefilled, [], config=["single", "nope"], allow_missing=True)
    with pytest.raises(NeedlecError, match="unknown export option"):
        needlec.export(prefilled, "openai-batch", tmp_path / "r", options={"modle": "m"})
