"""Scoring speed: 100,000 synthetic responses against 100,000 synthetic items, end to end.

Builds items in the contract shape (single-needle `contains`, multi-needle `contains_all`, passkey
`numeric`, reasoning `final_answer`) over a grid of lengths and depths, writes the dataset and the
responses as JSONL, then times `needlec.scoring.api.score` (reading both files, judging every
response, building the summary) and, separately, writing the report without plots.

    python benchmarks/score_speed.py [--items 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from needlec.scoring.api import score
from needlec.scoring.report import write_report

NAMES = ["Yuki", "Mateo", "Ines", "Dong-hyun", "Amara", "Lars", "Esi", "Noa", "Radu", "Priya"]
FILLER = "The committee met again on Thursday and, after a long discussion about the budget, agreed to wait. "


def build(n: int, folder: Path) -> tuple[Path, Path]:
    rng = random.Random(7)
    data = folder / "ds" / "data" / "bench"
    data.mkdir(parents=True)
    items, responses = [], []
    for i in range(n):
        kind = i % 4
        length = [1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000][i % 8]
        depth = float((i // 8) % 11 * 10)
        if kind == 0:
            answers, scoring = [[rng.choice(NAMES)]], {"metric": "contains", "version": 2}
            text = f"{FILLER}I think it was {answers[0][0] if rng.random() < 0.7 else 'someone else'}."
        elif kind == 1:
            answers, scoring = (
                [["roasted chestnuts"], ["smoked paprika"], ["heather honey"]],
                {"metric": "contains_all", "version": 2},
            )
            text = FILLER + " and ".join(a[0] for a in answers[: rng.randint(0, 3)])
        elif kind == 2:
            code = rng.randint(1_000_000, 9_999_999)
            answers, scoring = [[str(code)]], {"metric": "numeric", "version": 1}
            text = f"The code is {code + rng.choice([0, 0, 1]):,}."
        else:
            name = rng.choice(NAMES)
            answers = [[name]]
            scoring = {"metric": "final_answer", "version": 1, "then": {"metric": "contains", "version": 2}}
            text = f"{FILLER}{rng.choice(NAMES)} appears first.\nAnswer: {name if rng.random() < 0.5 else 'Nobody'}"
        item_id = f"bench/{i}"
        items.append(
            {
                "id": item_id,
                "benchmark": "bench",
                "family": "niah",
                "config": f"c{kind}",
                "task": f"c{kind}",
                "context_length": length,
                "depth_percent": depth,
                "answers": answers,
                "scoring": scoring,
                "needles": [{"role": "target", "depth_percent": depth, "text": "x"}],
            }
        )
        responses.append({"id": item_id, "response": text})
    (data / "cl100k_base.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    resp = folder / "responses.jsonl"
    resp.write_text("".join(json.dumps(x) + "\n" for x in responses))
    return folder / "ds", resp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dataset, responses = build(args.items, Path(tmp))
        start, cpu = time.perf_counter(), time.process_time()
        result = score(dataset, [responses])
        scored, scored_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        write_report(result, Path(tmp) / "report", plots=False)
        written = time.perf_counter() - start
    print(
        f"{args.items:,} responses: scored and summarised in {scored:.2f} s "
        f"wall ({scored_cpu:.2f} s CPU, {args.items / scored_cpu:,.0f} responses per CPU second); "
        f"report written in {written:.2f} s"
    )


if __name__ == "__main__":
    main()
