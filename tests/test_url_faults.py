"""Network faults of `url:` sources, each against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from needlec.errors import SourceError
from needlec.haystacks.sources import SourceContext
from needlec.haystacks.sources.url import UrlSource, load_url
from needlec.util.redact import redact

BODY = b"A plain haystack sentence for the download tests.\n" * 200
SHA = hashlib.sha256(BODY).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    """Behaviour chosen by path: /ok, /drip, /404, /429-once, /truncated."""

    hits: ClassVar[dict[str, int]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        Handler.hits[self.path] = Handler.hits.get(self.path, 0) + 1
        if self.path == "/ok":
            self._send(200, BODY)
        elif self.path == "/404":
            self._send(404, b"no such file")
        elif self.path == "/429-once":
            if Handler.hits[self.path] == 1:
                self._send(429, b"slow down")
            else:
                self._send(200, BODY)
        elif self.path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY[: len(BODY) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            try:
                for i in range(0, len(BODY), 10):  # ten bytes every 0.2 s: each read is quick, the whole is not
                    self.wfile.write(BODY[i : i + 10])
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def server() -> Iterator[str]:
    Handler.hits = {}
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _source(url: str, **options: object) -> UrlSource:
    return UrlSource.model_validate({"type": "url", "url": url, "sha256": SHA, **options})


def _ctx(tmp_path: Path) -> SourceContext:
    return SourceContext(spec_dir=tmp_path, cache_dir=tmp_path / "cache")


def test_a_slow_drip_stops_at_the_total_deadline(server: str, tmp_path: Path) -> None:
    source = _source(f"{server}/drip", timeout=5, deadline=1, retries=0)
    with pytest.raises(SourceError, match="deadline"):
        load_url(source, _ctx(tmp_path))
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


def test_a_404_is_not_retried(server: str, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="HTTP 404") as info:
        load_url(_source(f"{server}/404", retries=3), _ctx(tmp_path))
    assert Handler.hits["/404"] == 1
    assert "attempt" not in str(info.value)


def test_a_429_is_retried(server: str, tmp_path: Path) -> None:
    text = load_url(_source(f"{server}/429-once", retries=2), _ctx(tmp_path))
    assert Handler.hits["/429-once"] == 2
    assert text.documents[0].text == BODY.decode()


def test_a_truncated_body_is_never_cached(server: str, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"cut short|received"):
        load_url(_source(f"{server}/truncated", retries=1), _ctx(tmp_path))
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert cached == []
    assert Handler.hits["/truncated"] == 2


def test_a_non_http_answer_is_a_clean_error(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]

    def answer() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            conn.recv(1024)
            conn.sendall(b"SSH-2.0-OpenSSH_9.0 this is not HTTP\r\n\r\n")
            conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        with pytest.raises(SourceError, match="not a valid HTTP response"):
            load_url(_source(f"http://127.0.0.1:{port}/x", retries=1), _ctx(tmp_path))
    finally:
        listener.close()


def test_a_good_download_is_cached_and_reused(server: str, tmp_path: Path) -> None:
    load_url(_source(f"{server}/ok"), _ctx(tmp_path))
    load_url(_source(f"{server}/ok"), _ctx(tmp_path))
    assert Handler.hits["/ok"] == 1
    assert (tmp_path / "cache" / "url" / SHA).read_bytes() == BODY


LARGE_SCRIPT = r"""
import hashlib, http.server, resource, sys, threading
from pathlib import Path
from typing import ClassVar
from needlec.haystacks.sources.url import UrlSource, _download
SIZE = int(sys.argv[1])
CHUNK = b"x" * (1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", str(SIZE)); self.end_headers()
        for _ in range(SIZE // len(CHUNK)): self.wfile.write(CHUNK)
digest = hashlib.sha256()
for _ in range(SIZE // len(CHUNK)): digest.update(CHUNK)
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
source = UrlSource(type="url", url=f"http://127.0.0.1:{httpd.server_address[1]}/big", sha256=digest.hexdigest())
target = Path(sys.argv[2])
_download(source, target)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(target.stat().st_size, (after - before) * 1024)
"""


def test_a_large_body_streams_to_disk_with_bounded_memory(tmp_path: Path) -> None:
    size = 256 * (1 << 20)
    result = subprocess.run(
        [sys.executable, "-c", LARGE_SCRIPT, str(size), str(tmp_path / "big.bin")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    written, growth = (int(v) for v in result.stdout.split())
    assert written == size
    assert growth < size / 8, f"peak memory grew by {growth:,} bytes for a {size:,}-byte body"


def test_secrets_are_masked_in_messages() -> None:
    env = {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz", "PATH": "/usr/bin"}
    text = "401 for https://user:pa55word@example.org/x?token=s3cr3tvalue&x=1 with hf_abcdefghijklmnopqrstuvwxyz"
    masked = redact(text, env)
    for secret in ("hf_abcdefghijklmnopqrstuvwxyz", "pa55word", "s3cr3tvalue"):
        assert secret not in masked
    assert "x=1" in masked and "example.org" in masked
