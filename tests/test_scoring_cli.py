"""`needlec score` through the installed console script, on datasets compiled from the shipped specs.

Responses are synthetic: built from each item's answers by a rule chosen here, so the expected
aggregates follow from the rule by hand, not from the scorer. Items may be in the schema 2 shape
or the older one (flat answers); `answers_of` reads both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SPECS

import needlec
from needlec.errors import NeedlecError

NEEDLEC = str(Path(sys.executable).parent / "needlec")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NEEDLEC, *args], capture_output=True, text=True, timeout=600)


def items(dataset: Path) -> Iterator[dict[str, Any]]:
    for file in sorted((dataset / "data").rglob("*.jsonl")):
        with file.open(encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)


def answers_of(item: dict[str, Any]) -> list[str]:
    """The first alias of each required fact, from either item shape."""
    return [a if isinstance(a, str) else a[0] for a in item["answers"]]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def niah(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("score-niah") / "ds"
    done = run(
        "compile",
        str(SPECS / "niah.yaml"),
        "-o",
        str(out),
        "-q",
        "--select",
        "length=1000",
        "--select",
        "depth=0,50",
        "--select",
        "tokenizer=cl100k_base",
        "--select",
        "config=single,multi,passkey",
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def nolima(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("score-nolima") / "ds"
    done = run(
        "compile",
        str(SPECS / "nolima.yaml"),
        "-o",
        str(out),
        "-q",
        "--select",
        "config=main,cot",
        "--select",
        "length=250,4000",
        "--select",
        "depth=0",
    )
    assert done.returncode == 0, done.stderr
    return out


def niah_responses(dataset: Path) -> list[dict[str, Any]]:
    """Depth 0: single right, multi two of three facts, passkey right with digit grouping.
    Depth 50: single wrong (a word near the answer), multi all three, passkey off by one."""
    rows = []
    for item in items(dataset):
        facts = answers_of(item)
        top = item["depth_percent"] == 0
        if item["config"] == "single":
            text = f"The {facts[0]}." if top else "A tram, yellowish, maybe."
        elif item["config"] == "multi":
            text = " and ".join(facts[:2] if top else facts)
        else:
            code = int(facts[0]) + (0 if top else 1)
            text = f"The code is {code:,}."
        rows.append({"id": item["id"], "response": text, "model": "synthetic"})
    return rows


def test_niah_scores_match_hand_computed_values(niah: Path, tmp_path: Path) -> None:
    responses = write_jsonl(tmp_path / "r.jsonl", niah_responses(niah))
    report = tmp_path / "report"
    done = run("score", str(niah), str(responses), "-o", str(report))
    assert done.returncode == 0, done.stderr
    summary = json.loads((report / "summary.json").read_text())
    configs = summary["configs"]
    assert configs["single"]["mean"] == 50.0
    assert [d["mean"] for d in configs["single"]["by_depth"]] == [100.0, 0.0]
    assert configs["multi"]["mean"] == pytest.approx(100 * (2 / 3 + 1) / 2, abs=1e-4)
    assert configs["passkey"]["mean"] == 50.0
    assert summary["overall"]["mean"] == pytest.approx(100 * (1 + 0 + 2 / 3 + 1 + 1 + 0) / 6, abs=1e-4)
    assert configs["single"]["heatmap"]["cells"] == [[100.0], [0.0]]
    lines = (report / "scores.jsonl").read_text().splitlines()
    assert len(lines) == 6 and {json.loads(x)["metric"] for x in lines} == {"contains", "contains_all", "numeric"}
    for stem in ("single-heatmap", "multi-by-length"):
        assert (report / "plots" / f"{stem}.svg").read_text().startswith("<?xml")
        assert (report / "plots" / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_is_byte_identical_on_rerun(niah: Path, tmp_path: Path) -> None:
    responses = write_jsonl(tmp_path / "r.jsonl", niah_responses(niah))
    outs = []
    for name in ("a", "b"):
        assert run("score", str(niah), str(responses), "-o", str(tmp_path / name)).returncode == 0
        outs.append(
            {p.relative_to(tmp_path / name): p.read_bytes() for p in (tmp_path / name).rglob("*") if p.is_file()}
        )
    assert outs[0] == outs[1]
    assert len(outs[0]) == 2 + 3 * 4 + 1  # scores, summary, a plot in two formats per config, `.needlec-written`


def test_native_runner_outputs_give_the_same_scores(niah: Path, tmp_path: Path) -> None:
    plain = niah_responses(niah)
    write_jsonl(tmp_path / "plain.jsonl", plain)
    write_jsonl(
        tmp_path / "batch.jsonl",
        [
            {
                "id": f"batch_{i}",
                "custom_id": r["id"],
                "response": {
                    "status_code": 200,
                    "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": r["response"]}}]},
                },
                "error": None,
            }
            for i, r in enumerate(plain)
        ],
    )
    write_jsonl(
        tmp_path / "samples_niah.jsonl",
        [
            {"doc_id": i, "doc": {"id": r["id"]}, "resps": [[r["response"]]], "filtered_resps": [r["response"]]}
            for i, r in enumerate(plain)
        ],
    )
    samples = [{"id": r["id"], "epoch": 1, "output": {"completion": r["response"]}} for r in plain]
    (tmp_path / "log.json").write_text(json.dumps({"eval": {"task": "niah"}, "samples": samples}, indent=2))
    with zipfile.ZipFile(tmp_path / "log.eval", "w") as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "niah"}}))
        for i, s in enumerate(samples):
            zf.writestr(f"samples/{i}_epoch_1.json", json.dumps(s))
    scores = {}
    for name in ("plain.jsonl", "batch.jsonl", "samples_niah.jsonl", "log.json", "log.eval"):
        out = tmp_path / f"rep-{name}"
        done = run("score", str(niah), str(tmp_path / name), "-o", str(out), "--no-plots")
        assert done.returncode == 0, (name, done.stderr)
        scores[name] = (out / "scores.jsonl").read_bytes()
    assert len(set(scores.values())) == 1


def test_zstd_compressed_inspect_log(niah: Path, tmp_path: Path) -> None:
    """Recent Inspect versions write `.eval` members with zstd; the scorer must read them like stored ones."""
    zipfile_zstd = pytest.importorskip("zipfile_zstd", reason="zipfile-zstd (installed with inspect_ai) is missing")
    plain = [{"id": it["id"], "response": f"It is {answers_of(it)[0]}."} for it in items(niah)]
    write_jsonl(tmp_path / "plain.jsonl", plain)
    with zipfile.ZipFile(tmp_path / "log.eval", "w", compression=zipfile_zstd.ZIP_ZSTANDARD) as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "niah"}}))
        for i, r in enumerate(plain):
            sample = {"id": r["id"], "epoch": 1, "output": {"completion": r["response"]}}
            zf.writestr(f"samples/{i}_epoch_1.json", json.dumps(sample))
    with zipfile.ZipFile(tmp_path / "log.eval") as zf:  # the members really are zstd-compressed
        assert {info.compress_type for info in zf.infolist()} == {zipfile_zstd.ZIP_ZSTANDARD}
    reports = []
    for name in ("plain.jsonl", "log.eval"):
        done = run("score", str(niah), str(tmp_path / name), "-o", str(tmp_path / f"rep-{name}"), "--no-plots")
        assert done.returncode == 0, (name, done.stderr)
        reports.append((tmp_path / f"rep-{name}" / "scores.jsonl").read_bytes())
    assert reports[0] == reports[1]


def test_missing_unknown_and_repeated_ids(niah: Path, tmp_path: Path) -> None:
    plain = niah_responses(niah)
    partial = write_jsonl(tmp_path / "partial.jsonl", plain[1:])
    done = run("score", str(niah), str(partial), "-o", str(tmp_path / "x"))
    assert done.returncode == 2 and "1 item(s) have no response" in done.stderr and plain[0]["id"] in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x").exists()
    done = run("score", str(niah), str(partial), "-o", str(tmp_path / "y"), "--allow-missing")
    assert done.returncode == 0
    assert json.loads((tmp_path / "y" / "summary.json").read_text())["responses"]["missing"] == 1
    stray = write_jsonl(tmp_path / "stray.jsonl", [*plain, {"id": "no-such-item", "response": "x"}])
    done = run("score", str(niah), str(stray), "-o", str(tmp_path / "z"))
    assert done.returncode == 2 and "no-such-item" in done.stderr
    # Two responses for one item are averaged: right once and wrong once gives 0.5.
    right = next(i["id"] for i in items(niah) if i["config"] == "single" and i["depth_percent"] == 0)
    twice = write_jsonl(tmp_path / "twice.jsonl", [*plain, {"id": right, "response": "nothing"}])
    assert run("score", str(niah), str(twice), "-o", str(tmp_path / "w"), "--no-plots").returncode == 0
    scored = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "w" / "scores.jsonl").read_text().splitlines()}
    assert scored[right]["score"] == 0.5
    assert json.loads((tmp_path / "w" / "summary.json").read_text())["responses"]["several_responses"] == 1
    # but one file given twice would count every response double: refused, by its path however it is written
    again = str(tmp_path / "." / "twice.jsonl")
    done = run("score", str(niah), str(twice), again, "-o", str(tmp_path / "v"))
    assert done.returncode == 2 and f"the responses {again} are given twice (also as {twice})" in done.stderr
    assert not (tmp_path / "v").exists()
    with pytest.raises(NeedlecError, match="given twice"):
        needlec.score(niah, [str(twice), str(twice)])


def test_requests_the_runner_records_as_failed_are_missing_not_wrong(niah: Path, tmp_path: Path) -> None:
    """A sample Inspect ended in an error, or a Batch line with an `error`, has no answer: scoring its empty text
    as a wrong answer would lower the score for a runner failure. It counts as missing, with the runner's reason."""
    plain = niah_responses(niah)
    failed_id = plain[0]["id"]
    samples = [{"id": r["id"], "epoch": 1, "output": {"completion": r["response"]}} for r in plain[1:]]
    samples.append({"id": failed_id, "epoch": 1, "output": {"choices": []}, "error": {"message": "Error code: 404"}})
    (tmp_path / "log.json").write_text(json.dumps({"eval": {"task": "niah"}, "samples": samples}))
    batch = [
        {
            "custom_id": r["id"],
            "response": {"status_code": 200, "body": {"choices": [{"message": {"content": r["response"]}}]}},
        }
        for r in plain[1:]
    ]
    batch.append(
        {"custom_id": failed_id, "response": None, "error": {"code": "timeout", "message": "request timed out"}}
    )
    write_jsonl(tmp_path / "batch.jsonl", batch)
    for name, reason in (("log.json", "Error code: 404"), ("batch.jsonl", "request timed out")):
        done = run("score", str(niah), str(tmp_path / name), "-o", str(tmp_path / f"no-{name}"))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "1 item(s) have no response (1 of them failed in the runner" in done.stderr and reason in done.stderr
        assert failed_id in done.stderr and not (tmp_path / f"no-{name}").exists()
        done = run("score", str(niah), str(tmp_path / name), "-o", str(tmp_path / f"ok-{name}"), "--allow-missing")
        assert done.returncode == 0, done.stderr
        rows = [json.loads(x) for x in (tmp_path / f"ok-{name}" / "scores.jsonl").read_text().splitlines()]
        assert failed_id not in {r["id"] for r in rows} and len(rows) == len(plain) - 1
        assert json.loads((tmp_path / f"ok-{name}" / "summary.json").read_text())["responses"]["missing"] == 1


def test_bad_response_files_and_selections_are_clean_errors(niah: Path, tmp_path: Path) -> None:
    """What a runner's hand-written file may hold: a stray byte, a response that is not text, an id that is no
    item, a --config or --tokenizer the dataset does not have, or nothing. Each is exit 2 with the place."""
    plain = niah_responses(niah)
    first = plain[0]["id"]
    good = write_jsonl(tmp_path / "good.jsonl", plain)
    stray = json.dumps({"id": first, "response": "yellow tram "}).encode().replace(b' "}', b' \xff"}')
    cases = {
        "bytes.jsonl": stray + b"\n",
        "object.jsonl": json.dumps({"id": first, "response": {"text": "x"}}).encode() + b"\n",
        "list.jsonl": json.dumps({"id": first, "response": ["x", "y"]}).encode() + b"\n",
        "number.jsonl": json.dumps({"id": first, "response": 7}).encode() + b"\n",
        "unknown.jsonl": "".join(json.dumps(r) + "\n" for r in [*plain, {"id": 5, "response": "x"}]).encode(),
        "empty.jsonl": b"",
    }
    expected = {
        "bytes.jsonl": "bytes.jsonl:1: not valid UTF-8 at byte",
        "object.jsonl": "object.jsonl:1: `response` must be the model's text as a string, not a JSON object",
        "list.jsonl": "list.jsonl:1: `response` must be the model's text as a string, not a JSON array",
        "number.jsonl": "number.jsonl:1: `response` must be the model's text as a string, not a JSON number",
        "unknown.jsonl": f"unknown.jsonl:{len(plain) + 1}: '5'",
        "empty.jsonl": "no response to score",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        done = run("score", str(niah), str(tmp_path / name), "-o", str(tmp_path / f"r-{name}"), "--allow-missing")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert expected[name] in done.stderr, done.stderr
        assert not (tmp_path / f"r-{name}").exists()
    # only ids of another dataset, each allowed away: still nothing scored, so no report of a mean of nothing
    write_jsonl(tmp_path / "other.jsonl", [{"id": "other/item", "response": "x"}])
    done = run(
        "score",
        str(niah),
        str(tmp_path / "other.jsonl"),
        "-o",
        str(tmp_path / "r-other"),
        "--allow-missing",
        "--allow-unknown",
    )
    assert done.returncode == 2 and "no response to score" in done.stderr, done.stderr
    # null: the runner got no answer; the item counts as missing
    write_jsonl(tmp_path / "null.jsonl", [{"id": first, "response": None}, *plain[1:]])
    done = run("score", str(niah), str(tmp_path / "null.jsonl"), "-o", str(tmp_path / "r-null"))
    assert done.returncode == 2 and "1 of them failed in the runner" in done.stderr, done.stderr
    assert "the response is null" in done.stderr
    for option, words in (
        (["--config", "nosuch"], "has no config 'nosuch' (it has multi, passkey, single)"),
        (["--tokenizer", "o200k_base"], "has no tokenizer 'o200k_base' (it has cl100k_base)"),
    ):
        done = run("score", str(niah), str(good), "-o", str(tmp_path / "r-sel"), *option)
        assert done.returncode == 2 and words in done.stderr, done.stderr


def test_report_folder_never_replaces_user_files(niah: Path, tmp_path: Path) -> None:
    responses = write_jsonl(tmp_path / "r.jsonl", niah_responses(niah))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    done = run("score", str(niah), str(responses), "-o", str(mine))
    assert done.returncode == 2 and (mine / "notes.txt").read_text() == "keep me"


def test_nolima_whole_word_and_final_answer(nolima: Path, tmp_path: Path) -> None:
    """main: every other item answers with the name glued inside a longer word (wrong), the rest
    with the name (right). cot: every item names the right character while reasoning; every other
    item ends with a wrong final answer."""
    rows, expected = [], {"main": [], "cot": []}
    for i, item in enumerate(items(nolima)):
        name = answers_of(item)[0]
        right = i % 2 == 0
        if item["config"] == "main":
            text = name if right else f"Mc{name.lower()}son"
        else:
            final = name if right else "Nobody"
            text = f"{name} is mentioned near the landmark, so let me check.\nAnswer: {final}"
        rows.append({"id": item["id"], "response": text})
        expected[item["config"]].append(1.0 if right else 0.0)
    responses = write_jsonl(tmp_path / "r.jsonl", rows)
    report = tmp_path / "report"
    done = run("score", str(nolima), str(responses), "-o", str(report), "--no-plots")
    assert done.returncode == 0, done.stderr
    summary = json.loads((report / "summary.json").read_text())
    for config, scores in expected.items():
        assert summary["configs"][config]["mean"] == pytest.approx(100 * sum(scores) / len(scores), abs=1e-4)
    main = summary["configs"]["main"]
    # NoLiMa's base score is the mean over lengths <= 1000: here the 250-token items only.
    main_250 = [
        e
        for e, item in zip(expected["main"], [i for i in items(nolima) if i["config"] == "main"], strict=True)
        if item["context_length"] == 250
    ]
    assert main["effective_length"]["nolima"]["base_score"] == pytest.approx(
        100 * sum(main_250) / len(main_250), abs=1e-4
    )


def test_family_default_reports_give_nolima_its_headline_rule(nolima: Path, tmp_path: Path) -> None:
    """specs/nolima.yaml has no `reports:`; the latent-hop kind's family default makes NoLiMa's 85% rule the headline.
    Responses: right at 250 tokens, wrong at 4000, so the base score is 100 and the effective length 250."""
    configs = json.loads((nolima / "manifest.json").read_text(encoding="utf-8"))["configs"]
    assert configs["main"]["reports"] == {
        "show": None,
        "effective_length": {"rule": "nolima", "threshold": None},
        "baseline": None,
    }
    rows = [
        {"id": it["id"], "response": answers_of(it)[0] if it["context_length"] == 250 else "Nobody."}
        for it in items(nolima)
    ]
    report = tmp_path / "report"
    done = run("score", str(nolima), str(write_jsonl(tmp_path / "r.jsonl", rows)), "-o", str(report), "--no-plots")
    assert done.returncode == 0, done.stderr
    headline = json.loads((report / "summary.json").read_text())["configs"]["main"]["effective_length"]["headline"]
    assert headline == {"rule": "nolima", "threshold": 0.85, "effective_length": 250, "first_failing_length": 4000}


def test_a_damaged_dataset_or_a_spec_in_its_place_is_a_clean_error(niah: Path, tmp_path: Path) -> None:
    """A dataset line that is no item (an object without the item fields, a JSON array, an item without its
    scoring), and a spec passed where the compiled dataset belongs: score and export stop with exit 2 at the
    file and line, never a traceback."""
    import shutil

    responses = write_jsonl(tmp_path / "r.jsonl", niah_responses(niah))
    file = next((niah / "data").rglob("*.jsonl"))
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    item = json.loads(lines[0])
    del item["scoring"]
    for name, extra, words in (
        ("object", '{"x": 1}\n', "not an item (it has no 'id', 'config', 'context_length'"),
        ("array", "[1, 2]\n", "not an item (a JSON list, not an object)"),
        ("unscored", json.dumps(item) + "\n", "not an item (it has no 'scoring')"),
    ):
        damaged = tmp_path / name
        shutil.copytree(niah, damaged)
        copy = damaged / file.relative_to(niah)
        with copy.open("a", encoding="utf-8") as fh:
            fh.write(extra)
        where = f"{copy}:{len(lines) + 1}: {words}"
        for args in (
            ["score", str(damaged), str(responses), "-o", str(tmp_path / f"report-{name}")],
            ["export", str(damaged), "--to", "prompts", "-o", str(tmp_path / f"export-{name}")],
        ):
            done = run(*args)
            assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
            assert where in done.stderr and f"needlec verify {damaged}" in done.stderr, done.stderr
        assert not (tmp_path / f"report-{name}").exists() and not (tmp_path / f"export-{name}").exists()
    spec = SPECS / "niah.yaml"
    for args in (
        ["score", str(spec), str(responses), "-o", str(tmp_path / "report-spec")],
        ["export", str(spec), "--to", "prompts", "-o", str(tmp_path / "export-spec")],
    ):
        done = run(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"{spec}: a spec, not a dataset" in done.stderr and "needlec compile" in done.stderr, done.stderr
