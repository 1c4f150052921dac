"""The LLM answer-candidate filter against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from filter_helpers import (
    FACTS,
    KEY_QUESTION,
    PLANT_KEY,
    PLANT_TRAM,
    QUESTION,
    filtered,
    plant,
    prose,
    replay,
    write_spec,
)
from openai_stub import StubServer

from needlec.errors import NeedlecError

NEEDLEC = str(Path(sys.executable).parent / "needlec")
URL_ENV, KEY_ENV = "NEEDLEC_TEST_LLM_URL", "NEEDLEC_TEST_LLM_KEY"
SECRET = "sk-needlec-test-3f9c1e7a5b"


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    server = StubServer(FACTS)
    monkeypatch.setenv(URL_ENV, server.base_url)
    monkeypatch.setenv(KEY_ENV, SECRET)
    yield server
    server.close()


def llm_filter(**overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "type": "llm_answer_candidates",
        "model": "stub-model",
        "base_url_env": URL_ENV,
        "api_key_env": KEY_ENV,
        "questions": [KEY_QUESTION],
        "concurrency": 2,
        "timeout": 1.0,
        "retries": 3,
        "backoff": 0.01,
        "max_wait": 5,
    }
    params.update(overrides)
    return params


@pytest.fixture(scope="module")
def haystack() -> str:
    return plant(prose("Ruth"), [PLANT_TRAM, PLANT_KEY])


def successful(server: StubServer) -> Counter[tuple[str, str]]:
    return Counter((r.question, r.passage) for r in server.requests if r.fault is None)


def test_removes_planted_answers_and_nothing_else(tmp_path: Path, stub: StubServer, haystack: str) -> None:
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter()])
    text, stage = filtered(spec, tmp_path / "cache")
    assert PLANT_TRAM not in text and PLANT_KEY not in text
    (run,) = stage.runs.values()
    records = run.audit_records()
    assert replay(haystack, records) == text  # everything outside the audited spans is untouched
    assert sorted(r["removed"].strip() for r in records) == sorted([PLANT_KEY, PLANT_TRAM])
    reasons = {r["reasons"][0]["question"]: r["reasons"][0] for r in records}
    assert reasons[QUESTION]["answer"] == "ride the yellow tram"
    assert reasons[KEY_QUESTION]["why"] == "sentence contains the reply"
    assert run.result.counts["rounds"] == 2  # the text around each cut was asked about again
    assert all(r.authorization == f"Bearer {SECRET}" for r in stub.requests)
    # each (question, chunk) pair is asked once; every chunk of round 1 is at most 1000 characters
    assert max(successful(stub).values()) == 1
    assert max(len(r.passage) for r in stub.requests) <= 1000


def test_chunks_overlap_with_the_configured_stride(tmp_path: Path, stub: StubServer) -> None:
    text = " ".join(f"Sentence number {i} is plain." for i in range(200))
    spec = write_spec(tmp_path / "spec", text, [llm_filter(questions=[], chunk_chars=500, stride=400)])
    filtered(spec, tmp_path / "cache")
    passages = [r.passage for r in stub.requests]
    assert len(passages) == -(-(len(text) - 500) // 400) + 1
    starts = sorted(text.index(p) for p in passages)
    assert starts[:3] == [0, 400, 800]


def test_survives_every_injected_fault(tmp_path: Path, stub: StubServer, haystack: str) -> None:
    injected = ["500", "429", "timeout", "truncated", "nonjson", "badjson", "500"]
    stub.state.faults = [f for fault in injected for f in (fault, None)]  # type: ignore[misc]
    stub.state.faults[-2:] = ["500", "500"]  # and twice in a row for one request
    stub.state.hang = 2.0
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter(concurrency=1)])
    text, _ = filtered(spec, tmp_path / "cache")
    assert PLANT_TRAM not in text and PLANT_KEY not in text
    faults = [r.fault for r in stub.requests if r.fault]
    assert faults == [*injected, "500"]
    assert max(successful(stub).values()) == 1
    # the request after the 429 came no sooner than its Retry-After (1 s), though backoff is 10 ms
    index = next(i for i, r in enumerate(stub.requests) if r.fault == "429")
    assert stub.requests[index + 1].at - stub.requests[index].at >= 0.95


def test_gives_up_after_its_retries_and_keeps_what_it_had(tmp_path: Path, stub: StubServer, haystack: str) -> None:
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter(concurrency=1, retries=2)])
    stub.state.faults = [None] * 3 + ["500"] * 3  # type: ignore[list-item]
    with pytest.raises(NeedlecError) as info:
        filtered(spec, tmp_path / "cache")
    assert "HTTP 500" in str(info.value) and SECRET not in str(info.value)
    lines = next(iter((tmp_path / "cache" / "filters" / "llm").glob("*.jsonl"))).read_text().splitlines()
    answered = sum(successful(stub).values())
    assert len(lines) == answered >= 3  # every verdict that came back before the failure is kept
    before = len(stub.requests)
    filtered(spec, tmp_path / "cache")
    asked_again = successful(stub)
    assert max(asked_again.values()) == 1, "a cached verdict was asked for again"
    assert len(stub.requests) - before == sum(asked_again.values()) - answered


def test_concurrency_is_bounded(tmp_path: Path, stub: StubServer) -> None:
    stub.state.delay = 0.05
    text = " ".join(f"Line {i} of a long and uneventful report." for i in range(150))
    spec = write_spec(tmp_path / "spec", text, [llm_filter(concurrency=3)])
    filtered(spec, tmp_path / "cache")
    assert stub.state.max_in_flight <= 3
    assert stub.state.max_in_flight >= 2  # requests really ran side by side


def test_a_crash_mid_run_loses_no_verdict(tmp_path: Path, stub: StubServer, haystack: str) -> None:
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter(concurrency=1)])
    cache = tmp_path / "cache"
    stub.state.faults = [None] * 6 + ["kill"]  # type: ignore[list-item]
    env = {**os.environ, URL_ENV: stub.base_url, KEY_ENV: SECRET}
    process = subprocess.Popen(
        [NEEDLEC, "filter", str(spec), "--cache-dir", str(cache), "-q"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stub.state.kill_pid = process.pid
    process.wait(timeout=120)
    assert process.returncode == -9
    answered_before = successful(stub)
    assert sum(answered_before.values()) == 6
    verdicts = next(iter((cache / "filters" / "llm").glob("*.jsonl"))).read_text().splitlines()
    assert len(verdicts) == 6
    result = subprocess.run(
        [NEEDLEC, "filter", str(spec), "--cache-dir", str(cache), "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    after = successful(stub)
    assert max(after.values()) == 1, "a chunk whose verdict was cached before the crash was asked again"
    assert "6 cached verdict(s) reused" in result.stdout
    assert SECRET not in result.stdout + result.stderr


def test_a_warm_cache_makes_no_calls_even_without_a_server(
    tmp_path: Path, stub: StubServer, haystack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter()])
    cache = tmp_path / "cache"
    first, _ = filtered(spec, cache)
    calls = len(stub.requests)
    stub.close()
    monkeypatch.delenv(URL_ENV)
    monkeypatch.delenv(KEY_ENV)
    again, stage = filtered(spec, cache)  # the whole run is replayed from its cached result
    assert again == first and stage.activity.model_calls == 0 and stage.activity.cached_runs == 1
    for path in (cache / "filters" / "runs").rglob("*.json"):
        path.unlink()
    third, stage = filtered(spec, cache)  # without the run cache, every verdict comes from disk
    assert third == first and stage.activity.model_calls == 0
    assert stage.activity.cached_verdicts > 0 and len(stub.requests) == calls


def test_review_and_decisions_overrule_the_model(tmp_path: Path, stub: StubServer, haystack: str) -> None:
    import yaml

    spec = write_spec(tmp_path / "spec", haystack, [llm_filter()])
    cache = tmp_path / "cache"
    review = tmp_path / "spec" / "review.yaml"
    env = {**os.environ, URL_ENV: stub.base_url, KEY_ENV: SECRET}
    result = subprocess.run(
        [NEEDLEC, "filter", str(spec), "--cache-dir", str(cache), "--review", str(review), "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    entries = yaml.safe_load(review.read_text())["entries"]
    assert {e["question"] for e in entries} == {QUESTION, KEY_QUESTION}
    assert all(e["decision"] == "remove" and e["kind"] == "chunk" for e in entries)
    for entry in entries:
        if entry["question"] == KEY_QUESTION:
            entry["decision"] = "keep"  # a person decides the key sentence may stay
    review.write_text(yaml.safe_dump({"entries": entries}))
    calls = len(stub.requests)
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter(decisions="review.yaml")])
    text, stage = filtered(spec, cache)
    assert PLANT_KEY in text and PLANT_TRAM not in text
    (run,) = stage.runs.values()
    assert run.result.counts["overruled"] >= 1
    assert len(stub.requests) == calls  # decisions reuse the cached verdicts


def test_missing_server_settings_are_reported(tmp_path: Path, haystack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(URL_ENV, raising=False)
    spec = write_spec(tmp_path / "spec", haystack, [llm_filter()])
    with pytest.raises(NeedlecError, match=URL_ENV):
        filtered(spec, tmp_path / "cache")


# --- the client's pure parts -------------------------------------------------------------------


def test_a_torn_verdict_line_is_skipped_and_closed(tmp_path: Path) -> None:
    from needlec.haystacks.filters.llm_client import VerdictCache

    path = tmp_path / "verdicts.jsonl"
    path.write_bytes(b'{"key": "a", "answer": "N/A"}\n{"key": "b", "ans')  # a crash mid-write
    cache = VerdictCache(path)
    assert "a" in cache and "b" not in cache
    cache.put("b", "Naomi")
    cache.put("c", "N/A")
    reread = VerdictCache(path)
    assert (reread.get("a"), reread.get("b"), reread.get("c")) == ("N/A", "Naomi", "N/A")


def test_retry_after_forms() -> None:
    from email.utils import formatdate

    from needlec.haystacks.filters.llm_client import retry_after

    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 50 < (retry_after({"retry-after": formatdate(time.time() + 60, usegmt=True)}) or 0) <= 61  # noqa: TID251
    assert retry_after({}) is None


@pytest.mark.parametrize(
    ("answer", "na"),
    [
        ("N/A", True),
        ("n/a.", True),
        ("N/A - nothing here", True),
        ("None", True),
        ("", True),
        ("Naomi", False),
        ("ride the yellow tram", False),
        ("Not applicable", True),
    ],
)
def test_what_counts_as_no_answer(answer: str, na: bool) -> None:
    from needlec.haystacks.filters.llm import is_na

    assert is_na(answer) is na


def test_windows_cover_the_text() -> None:
    from needlec.haystacks.filters.llm import windows

    assert windows(2500, 1000, 800) == [(0, 1000), (800, 1800), (1600, 2500)]
    assert windows(900, 1000, 800) == [(0, 900)]
    assert windows(0, 1000, 800) == []
