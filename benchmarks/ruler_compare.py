"""needlec against RULER's own data generator, task by task and length by length (CPU seconds).

For each task and length, RULER's `scripts/data/prepare.py` generates N items with the tiktoken
`cl100k_base` tokenizer (`--tokenizer_type openai`), and `needlec compile specs/ruler.yaml` builds the
same task's N items at the same length (`--jobs 1`). Each side runs in a fresh process; the figure is
its CPU time (user + system of the process and its children), the median over `--runs` paired runs,
and the ratio divides RULER's by needlec's (above 1: needlec is faster). Both include start-up, as a
user running either tool pays it.

    python benchmarks/ruler_compare.py --ruler PATH/TO/RULER [--python PATH/TO/python]
        [--lengths 4096,32768,131072] [--items 10] [--runs 3] [--tasks niah_single_1,vt,cwe,fwe]

`--ruler` is a checkout of NVIDIA/RULER (the folder that holds `scripts/`); it is copied to a
scratch folder first and never written to. `--python` is an interpreter with RULER's generator
dependencies (`wonderwords nltk scipy numpy tiktoken tqdm tenacity pyyaml`); it defaults to this one.
Only tasks that run offline are measured by default: the noise, needle and word-list tasks. RULER's
essay tasks need the Paul Graham essays and nltk's punkt data, and its QA tasks SQuAD and HotpotQA,
all downloads. RULER's CWE reads `json/english_words.json`, a Git LFS object a plain checkout
lacks: when the file is an LFS pointer, a stand-in with as many entries (370,000 made-up words) is
written to the scratch copy, so the load costs about what the real file costs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OFFLINE_TASKS = ["niah_single_1", "niah_multikey_2", "niah_multikey_3", "vt", "cwe", "fwe"]
STAND_IN_WORDS = 370_000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = _children_cpu()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return _children_cpu() - before


def _stand_in_words(path: Path) -> None:
    """A made-up word list shaped like RULER's english_words.json (index -> word)."""
    rng = random.Random(0)
    words: dict[str, str] = {}
    seen: set[str] = set()
    while len(words) < STAND_IN_WORDS:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 11)))
        if word not in seen:
            seen.add(word)
            words[str(len(words))] = word
    path.write_text(json.dumps(words), encoding="utf-8")


def _ruler_copy(source: Path, scratch: Path) -> Path:
    scripts = scratch / "scripts"
    shutil.copytree(source / "scripts", scripts, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    words = scripts / "data" / "synthetic" / "json" / "english_words.json"
    if not words.is_file() or words.read_bytes().startswith(b"version https://git-lfs"):
        _stand_in_words(words)
    return scripts / "data"


def _tiktoken_cache() -> str:
    """A tiktoken cache holding cl100k_base, seeded by needlec's offline loader."""
    from needlec.tokenizer import _seed_tiktoken_cache, _tiktoken_cache_dir

    _seed_tiktoken_cache("cl100k_base")
    return _tiktoken_cache_dir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruler", type=Path, required=True, help="a checkout of NVIDIA/RULER")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs RULER's generator")
    parser.add_argument("--lengths", default="4096,32768,131072")
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", default=",".join(OFFLINE_TASKS))
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    tasks = args.tasks.split(",")
    cache = _tiktoken_cache()
    ruler_bin = str(Path(args.python).parent)
    ruler_env = {**os.environ, "PATH": f"{ruler_bin}{os.pathsep}{os.environ['PATH']}", "TIKTOKEN_CACHE_DIR": cache}
    needlec_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": cache}
    repeats = ",".join(str(r) for r in range(args.items))
    print(
        f"{'task':<16} {'length':>7} {'RULER cpu':>10} {'needlec cpu':>12} {'RULER/needlec':>14}   "
        f"({args.items} items, median of {args.runs} paired runs, cl100k_base)"
    )
    with tempfile.TemporaryDirectory(prefix="ruler-compare-") as tmp:
        scratch = Path(tmp)
        data = _ruler_copy(args.ruler, scratch)
        for task in tasks:
            for length in lengths:
                ruler_cpu, ours = [], []
                for run in range(args.runs):
                    out = scratch / f"ruler-{task}-{length}-{run}"
                    ruler_cpu.append(
                        _timed(
                            [
                                args.python,
                                "prepare.py",
                                "--save_dir",
                                str(out),
                                "--benchmark",
                                "synthetic",
                                "--task",
                                task,
                                "--tokenizer_path",
                                "cl100k_base",
                                "--tokenizer_type",
                                "openai",
                                "--max_seq_length",
                                str(length),
                                "--model_template_type",
                                "base",
                                "--num_samples",
                                str(args.items),
                            ],
                            ruler_env,
                            data,
                        )
                    )
                    written = out / task / "validation.jsonl"
                    if not written.is_file() or len(written.read_text().splitlines()) != args.items:
                        raise SystemExit(f"RULER wrote no {args.items} items for {task} at {length}: {written}")
                    ours.append(
                        _timed(
                            [
                                sys.executable,
                                "-m",
                                "needlec",
                                "compile",
                                "specs/ruler.yaml",
                                "-q",
                                "--jobs",
                                "1",
                                "-o",
                                str(scratch / f"needlec-{task}-{length}-{run}"),
                                "--select",
                                f"config={task}",
                                "--select",
                                f"length={length}",
                                "--select",
                                f"repeat={repeats}",
                            ],
                            needlec_env,
                            ROOT,
                        )
                    )
                a, b = statistics.median(ruler_cpu), statistics.median(ours)
                print(f"{task:<16} {length:>7} {a:>9.2f}s {b:>11.2f}s {a / b:>13.2f}x", flush=True)


if __name__ == "__main__":
    main()
