"""A minimal runner for needlec datasets: send each request to an OpenAI-compatible server.

needlec never runs a model; this script is an example client. It reads the request file that
`needlec export DATASET --to openai-batch --model NAME -o DIR` writes (one chat completion request per item,
`custom_id` = item id, temperature 0), posts each request body to `BASE_URL/chat/completions` of
any OpenAI-compatible server (llama.cpp's `llama_cpp.server`, vLLM, a hosted API), and writes one
`{"id", "response", "model"}` line per item, which `needlec score` reads directly:

    python examples/openai_compatible_runner.py runs/batch/requests.jsonl \
        --base-url http://127.0.0.1:8080/v1 -o runs/responses.jsonl
    needlec score DATASET runs/responses.jsonl -o reports/my-model

Standard library only. Requests are sent one at a time, in file order; an existing output file is
never overwritten.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def complete(base_url: str, body: dict[str, Any], api_key: str | None, timeout: float) -> str:
    """The text of the first choice of one chat completion request."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer = json.load(response)
    return str(answer["choices"][0]["message"].get("content") or "")


def main(argv: list[str] | None = None) -> int:
    """Answer every request of the file and write the responses; exit 1 on a server error."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("requests", type=Path, help="requests.jsonl from `needlec export --to openai-batch`")
    parser.add_argument("--base-url", required=True, help="the server's API root, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", help="model name sent with each request (default: the one in the file)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    parser.add_argument("--seed", type=int, help="sampling seed sent with each request, for servers that take one")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one answer")
    parser.add_argument("-o", "--output", type=Path, required=True, help="responses JSONL to write (must not exist)")
    args = parser.parse_args(argv)
    if args.output.exists():
        print(f"{args.output}: exists; choose another output file", file=sys.stderr)
        return 2
    api_key = os.environ.get(args.api_key_env)
    lines = []
    with args.requests.open(encoding="utf-8") as fh:
        for row in (json.loads(line) for line in fh if line.strip()):
            body = dict(row["body"])
            if args.model:
                body["model"] = args.model
            if args.seed is not None:
                body["seed"] = args.seed
            try:
                text = complete(args.base_url, body, api_key, args.timeout)
            except (urllib.error.URLError, OSError, KeyError, ValueError) as exc:
                print(f"{row['custom_id']}: request failed: {exc}", file=sys.stderr)
                return 1
            lines.append(json.dumps({"id": row["custom_id"], "response": text, "model": body.get("model")}) + "\n")
    partial = args.output.with_name(args.output.name + ".partial")
    partial.write_text("".join(lines), encoding="utf-8")
    partial.replace(args.output)
    print(f"wrote {len(lines)} responses to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
