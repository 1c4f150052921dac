"""Haystack sources on real files, a real local HTTP server and the embedded corpus."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import ValidationError

from needlec.errors import SourceError
from needlec.haystacks.sources import SourceContext, SourceText
from needlec.haystacks.sources.builtin import BuiltinSource, load_builtin
from needlec.haystacks.sources.files import FilesSource, load_files
from needlec.haystacks.sources.url import UrlSource, load_url


def load_from(spec_dir: Path, *paths: str, **options: str) -> SourceText:
    config = FilesSource(type="files", paths=list(paths), **options)
    return load_files(config, SourceContext(spec_dir=spec_dir, cache_dir=spec_dir / "cache"))


# ---------------------------------------------------------------------------------------------
# files


def test_files_reads_txt_md_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Plain text.\r\nSecond line.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("\ufeff# Title\n\nMarkdown body.\n", encoding="utf-8")
    (tmp_path / "c.jsonl").write_text(
        json.dumps({"body": "First record.", "id": 1}) + "\n\n" + json.dumps({"body": "Second record."}) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "ignored.csv").write_text("not,a,haystack\n", encoding="utf-8")

    source = load_from(tmp_path, "*", field="body")

    assert [d.id for d in source.documents] == ["a.txt", "b.md", "c.jsonl:1", "c.jsonl:3"]
    assert [d.text for d in source.documents] == [
        "Plain text.\nSecond line.\n",
        "# Title\n\nMarkdown body.\n",
        "First record.",
        "Second record.",
    ]
    assert source.describe()["documents"] == 4
    assert len(source.sha256) == 64


def test_files_jsonl_default_field_is_text(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"text": "hello"}\n{"text": "world"}\n', encoding="utf-8")
    assert [d.text for d in load_from(tmp_path, "r.jsonl").documents] == ["hello", "world"]


def test_files_are_sorted_whatever_the_glob_order(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ["zeta.txt", "alpha.txt", "mid.md", "sub/beta.txt"]:
        (tmp_path / name).write_text(f"text of {name}", encoding="utf-8")

    one = load_from(tmp_path, "*.txt", "*.md", "sub/*.txt")
    two = load_from(tmp_path, "sub/*.txt", "*.md", "zeta.txt", "alpha.txt")
    three = load_from(tmp_path, "**/*.txt", "*.md", "alpha.txt")  # overlapping patterns

    expected = ["alpha.txt", "mid.md", "sub/beta.txt", "zeta.txt"]
    for source in (one, two, three):
        assert [d.id for d in source.documents] == expected
    assert one.sha256 == two.sha256 == three.sha256


def test_files_non_utf8_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "latin.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))

    with pytest.raises(SourceError) as info:
        load_from(tmp_path, "*.txt")
    message = info.value.render()
    assert "latin.txt" in message
    assert "utf-8" in message

    # The same file reads fine when the spec declares its encoding.
    source = load_from(tmp_path, "latin.txt", encoding="latin-1")
    assert source.documents[0].text == "café crème"


def test_files_unknown_encoding_is_refused_when_the_spec_is_read(tmp_path: Path) -> None:
    """An encoding Python does not know, or a codec that is not a text encoding, is a spec error (validate
    reports it), not a failure of the first file read at compile time."""
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    for codec in ("no-such-codec", "rot13", "base64"):
        with pytest.raises(ValidationError, match="unknown text encoding"):
            load_from(tmp_path, "a.txt", encoding=codec)
    assert load_from(tmp_path, "a.txt", encoding="latin-1").documents[0].text == "x"


def test_files_bad_jsonl_line_gives_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"text": "ok"}\n\n{"text": broken}\n', encoding="utf-8")
    with pytest.raises(SourceError) as info:
        load_from(tmp_path, "data.jsonl")
    assert "data.jsonl:3:" in info.value.render()
    assert "not valid JSON" in info.value.render()


def test_files_jsonl_record_without_field_gives_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"text": "ok"}\n{"body": "no text"}\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"data\.jsonl:2: expected an object with a string 'text'"):
        load_from(tmp_path, "data.jsonl")
    (tmp_path / "list.jsonl").write_text('["text"]\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"list\.jsonl:1:"):
        load_from(tmp_path, "list.jsonl")


def test_files_pattern_matching_nothing_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    (tmp_path / "b.csv").write_text("x", encoding="utf-8")
    with pytest.raises(SourceError, match="matched no"):
        load_from(tmp_path, "a.txt", "missing/*.txt")
    with pytest.raises(SourceError, match="matched no"):
        load_from(tmp_path, "*.csv")


def test_files_sha256_follows_content(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("version one", encoding="utf-8")
    first = load_from(tmp_path, "a.txt").sha256
    assert load_from(tmp_path, "a.txt").sha256 == first

    path.write_text("version two", encoding="utf-8")
    second = load_from(tmp_path, "a.txt").sha256
    assert second != first

    path.write_text("version one", encoding="utf-8")
    assert load_from(tmp_path, "a.txt").sha256 == first

    # Renaming a file changes the hash too: the name is part of what was read.
    path.rename(tmp_path / "b.txt")
    assert load_from(tmp_path, "b.txt").sha256 != first


# ---------------------------------------------------------------------------------------------
# url, against a real HTTP server on 127.0.0.1


@dataclass
class Server:
    """A local HTTP server whose behaviour each test sets: body, failures, delays."""

    base: str = ""
    body: bytes = b""
    fail_first: int = 0  # answer this many requests with `fail_status` before serving the body
    fail_status: int = 500
    delay: float = 0.0  # seconds to wait before answering (longer than a timeout: it times out)
    requests: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/data.txt") -> str:
        return self.base + path


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with state.lock:
                state.requests.append(self.path)
                count = len(state.requests)
            if state.delay and state.stop.wait(state.delay):
                return
            try:
                if self.path == "/missing":
                    self.send_error(404, "Not Found")
                elif count <= state.fail_first:
                    self.send_error(state.fail_status)
                else:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(state.body)))
                    self.end_headers()
                    self.wfile.write(state.body)
            except OSError:  # the client gave up (a timeout test); nothing to answer
                pass

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def url_source(url: str, body: bytes, **options: object) -> UrlSource:
    settings: dict[str, object] = {"timeout": 0.3, "retries": 0, **options}
    return UrlSource(type="url", url=url, sha256=hashlib.sha256(body).hexdigest(), **settings)


def context(tmp_path: Path) -> SourceContext:
    return SourceContext(spec_dir=tmp_path, cache_dir=tmp_path / "cache")


def test_url_downloads_pins_and_caches(server: Server, tmp_path: Path) -> None:
    server.body = b"A downloaded haystack.\r\nWith two lines.\n"
    config = url_source(server.url(), server.body)

    first = load_url(config, context(tmp_path))
    assert len(server.requests) == 1
    assert first.sha256 == hashlib.sha256(server.body).hexdigest()
    assert [d.text for d in first.documents] == ["A downloaded haystack.\nWith two lines.\n"]
    cached = tmp_path / "cache" / "url" / first.sha256
    assert cached.read_bytes() == server.body
    assert not list(cached.parent.glob("*.part"))

    second = load_url(config, context(tmp_path))
    assert len(server.requests) == 1, "a cached file must not be downloaded again"
    assert second == first


def test_url_jsonl_format(server: Server, tmp_path: Path) -> None:
    server.body = b'{"t": "one"}\n{"t": "two"}\n'
    config = url_source(server.url("/data.jsonl"), server.body, format="jsonl", field="t")
    source = load_url(config, context(tmp_path))
    assert [d.text for d in source.documents] == ["one", "two"]
    assert source.documents[1].id == server.url("/data.jsonl") + ":2"


def test_url_corrupt_cache_is_downloaded_again(server: Server, tmp_path: Path) -> None:
    server.body = b"the real text"
    config = url_source(server.url(), server.body)
    cached = tmp_path / "cache" / "url" / config.sha256
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"truncated")

    source = load_url(config, context(tmp_path))
    assert len(server.requests) == 1
    assert source.documents[0].text == "the real text"
    assert cached.read_bytes() == b"the real text"


def test_url_sha256_mismatch(server: Server, tmp_path: Path) -> None:
    server.body = b"what the server has now"
    config = url_source(server.url(), b"what the spec author pinned", retries=2)

    with pytest.raises(SourceError) as info:
        load_url(config, context(tmp_path))
    message = info.value.render()
    assert "sha256 mismatch" in message
    assert config.sha256 in message
    assert hashlib.sha256(server.body).hexdigest() in message
    assert len(server.requests) == 1, "a wrong hash is not retried"
    assert not (tmp_path / "cache" / "url" / config.sha256).exists()
    assert not list((tmp_path / "cache").rglob("*.part"))


def test_url_retries_after_server_errors(server: Server, tmp_path: Path) -> None:
    server.body = b"eventually served"
    server.fail_first = 2
    config = url_source(server.url(), server.body, retries=2)

    started = time.monotonic()
    source = load_url(config, context(tmp_path))
    elapsed = time.monotonic() - started
    assert source.documents[0].text == "eventually served"
    assert len(server.requests) == 3
    assert elapsed >= 0.5 + 1.0 - 0.05, "attempts back off 0.5 s, then 1 s"


def test_url_server_errors_exhaust_retries(server: Server, tmp_path: Path) -> None:
    server.body = b"never served"
    server.fail_first = 10
    config = url_source(server.url(), server.body, retries=1)

    with pytest.raises(SourceError) as info:
        load_url(config, context(tmp_path))
    message = info.value.render()
    assert "after 2 attempt(s)" in message
    assert "HTTP 500" in message
    assert len(server.requests) == 2


def test_url_rate_limit_is_retried(server: Server, tmp_path: Path) -> None:
    server.body = b"after the rate limit"
    server.fail_first = 1
    server.fail_status = 429
    config = url_source(server.url(), server.body, retries=1)
    assert load_url(config, context(tmp_path)).documents[0].text == "after the rate limit"
    assert len(server.requests) == 2


def test_url_404_is_not_retried(server: Server, tmp_path: Path) -> None:
    config = url_source(server.url("/missing"), b"anything", retries=2)

    with pytest.raises(SourceError) as info:
        load_url(config, context(tmp_path))
    message = info.value.render()
    assert "HTTP 404" in message
    assert server.url("/missing") in message
    assert len(server.requests) == 1, "a client error fails at once, without retrying"


def test_url_timeout_is_retried_then_reported(server: Server, tmp_path: Path) -> None:
    server.body = b"too slow"
    server.delay = 5.0  # far longer than the timeout; the fixture cuts the wait short at teardown
    config = url_source(server.url(), server.body, timeout=0.3, retries=1)

    started = time.monotonic()
    with pytest.raises(SourceError) as info:
        load_url(config, context(tmp_path))
    elapsed = time.monotonic() - started
    message = info.value.render()
    assert "after 2 attempt(s)" in message
    assert "timed out" in message
    assert len(server.requests) == 2
    assert 0.3 + 0.5 + 0.3 - 0.05 <= elapsed < 4.0, "each attempt gives up after `timeout` seconds"


def test_url_unreachable_server_is_reported(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = url_source(f"http://127.0.0.1:{port}/x.txt", b"x", retries=0)
    with pytest.raises(SourceError, match=r"download failed after 1 attempt\(s\)"):
        load_url(config, context(tmp_path))


def test_url_non_utf8_names_the_url(server: Server, tmp_path: Path) -> None:
    server.body = "caf\xe9".encode("latin-1")
    config = url_source(server.url("/latin.txt"), server.body)
    with pytest.raises(SourceError) as info:
        load_url(config, context(tmp_path))
    assert server.url("/latin.txt") in info.value.render()
    latin = url_source(server.url("/latin.txt"), server.body, encoding="latin-1")
    assert load_url(latin, context(tmp_path)).documents[0].text == "café"


# ---------------------------------------------------------------------------------------------
# builtin


def builtin(**options: object) -> SourceText:
    config = BuiltinSource(type="builtin", **options)
    return load_builtin(config, SourceContext(spec_dir=Path("."), cache_dir=Path(".")))


def test_builtin_has_66_books_of_clean_prose() -> None:
    source = builtin()
    assert len(source.documents) == 66
    names = [d.id for d in source.documents]
    assert names[0] == "Genesis"
    assert names[-1] == "Revelation"
    assert len(set(names)) == 66
    for document in source.documents:
        assert document.text.strip()
        assert "{" not in document.text and "}" not in document.text, document.id
        assert "[" not in document.text and "]" not in document.text, document.id
        assert "  " not in document.text, document.id
    assert len(source.sha256) == 64
    assert builtin().sha256 == source.sha256
    # The first verse carries a translator footnote in the raw data; it is dropped, not kept.
    assert source.documents[0].text.startswith("In the beginning God created the heavens and the earth.")


def test_builtin_books_filter_keeps_the_given_order() -> None:
    everything = {d.id: d for d in builtin().documents}
    source = builtin(books=["Ruth", "Genesis"])
    assert [d.id for d in source.documents] == ["Ruth", "Genesis"]
    assert source.documents[0] == everything["Ruth"]
    assert source.documents[0].text.startswith("It happened in the days when the judges judged")
    assert "\n\n" in source.documents[0].text  # chapters are paragraphs


def test_builtin_unknown_book_suggests_the_closest() -> None:
    with pytest.raises(SourceError) as info:
        builtin(books=["Genesis", "Genisis"])
    message = info.value.render()
    assert "'Genisis'" in message
    assert "did you mean 'Genesis'?" in message
